"""The entry points of one group, found as ``importlib.metadata.entry_points(group=...)`` finds
them, without importing ``importlib.metadata``: its import (email's parser, zipfile, csv) is about
17 ms of every asz command, more than the look itself, and a third of what `asz collect` does
before it starts reading. A distribution's metadata is read (through ``importlib.metadata``) only
when something asks for it: a message naming the distribution, `asz plugins`.

The same distributions in the same order: each folder on ``sys.path`` in turn, its
``*.dist-info`` and ``*.egg-info`` entries as listed, a distribution found again in the folder or
later on the path (by its normalized name) skipped (importlib.metadata groups a folder's entries
by name, which orders nothing once only a name's first counts). Where that search
would need what only importlib.metadata does (a zip file on ``sys.path``, another finder that
lists distributions or no ``PathFinder``, an entry whose name does not say its distribution, an
unpacked egg, an entry-points file it would parse differently), it is asked instead, so the answer never differs
(``tests/core/test_entrypoints.py`` compares the two).
"""

from __future__ import annotations

import functools
import os
import re
import sys
from importlib import import_module
from typing import Any

_PATTERN = re.compile(r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$")
"""importlib.metadata.EntryPoint.pattern: what an entry point's value may be."""


class EntryPoint:
    """What asz reads of an ``importlib.metadata.EntryPoint``: name, value, group, module, load()
    and the distribution it came from (``dist``, made when first asked for)."""

    __slots__ = ("name", "value", "group", "_path", "_dist")

    def __init__(self, name: str, value: str, group: str, path: str) -> None:
        self.name, self.value, self.group, self._path, self._dist = name, value, group, path, None

    @property
    def module(self) -> str:
        match = _PATTERN.match(self.value)
        assert match is not None  # (checked when read)
        return match.group("module")

    @property
    def dist(self) -> Any:
        if self._dist is None:
            import pathlib
            from importlib.metadata import PathDistribution

            self._dist = PathDistribution(pathlib.Path(self._path))
        return self._dist

    def load(self) -> Any:
        match = _PATTERN.match(self.value)
        assert match is not None
        module = import_module(match.group("module"))
        return functools.reduce(getattr, filter(None, (match.group("attr") or "").split(".")), module)

    def __repr__(self) -> str:
        return f"EntryPoint(name={self.name!r}, value={self.value!r}, group={self.group!r})"


def entry_points(group: str) -> list[Any]:
    """The entry points of ``group`` of the distributions on ``sys.path``, first found first."""
    try:
        found = _scan(group)
    except Exception:  # noqa: BLE001 - whatever importlib.metadata would make of it, it says
        found = None
    if found is None:
        from importlib.metadata import entry_points as from_metadata

        return list(from_metadata(group=group))
    return found


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")


class _Unsure(Exception):
    """Something only importlib.metadata decides."""


def _scan(group: str) -> list[EntryPoint] | None:
    from importlib.machinery import PathFinder

    if [f for f in sys.meta_path if getattr(f, "find_distributions", None) is not None] != [PathFinder]:
        return None  # another finder lists distributions of its own, or the path's is gone
    seen: set[str] = set()
    out: list[EntryPoint] = []
    try:
        for root in sys.path:
            for path in _dists(root):
                # The distribution's name from its folder's (importlib.metadata's _name_from_stem).
                stem, ext = os.path.splitext(os.path.basename(path))
                name = _normalize(stem.partition("-")[0])
                if ext not in (".dist-info", ".egg-info") or not name:
                    raise _Unsure  # named only in its metadata ("-1.0.dist-info" too: its stem names nothing)
                if name in seen:
                    continue
                seen.add(name)
                out.extend(_read(path, group))
    except _Unsure:
        return None
    return out


def _dists(root: str) -> list[str]:
    """The distribution entries of one ``sys.path`` folder, as listed. importlib.metadata groups
    them by name first, but of each name only the first listed counts (:func:`_scan` skips the
    rest), so the order they count in is the same."""
    try:
        children = os.listdir(root or ".")
    except NotADirectoryError:
        raise _Unsure from None  # a zip file: importlib.metadata looks inside
    except OSError:
        return []  # not there (python3X.zip usually is not), or not readable: nothing, as for it
    base = os.path.basename(root).lower()
    out = []
    for child in children:
        low = child.lower()
        if low.endswith((".dist-info", ".egg-info")):
            out.append(os.path.join(root, child))
        elif base.endswith(".egg") and low == "egg-info":
            raise _Unsure  # an unpacked egg's own metadata
    return out


def _read(path: str, group: str) -> list[EntryPoint]:
    try:
        with open(os.path.join(path, "entry_points.txt"), encoding="utf-8") as f:
            text = f.read()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
        return []
    out = []
    section = None
    for line in map(str.strip, text.splitlines()):
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line.strip("[]")
            continue
        if section is None:
            continue
        name, eq, value = line.partition("=")
        if not eq:
            raise _Unsure  # importlib.metadata fails on it: let it say so
        if section == group:
            value = value.strip()
            if not _PATTERN.match(value):
                raise _Unsure
            out.append(EntryPoint(name.strip(), value, group, path))
    return out
