"""Ids as file names, and paths that stay inside ASZ_HOME.

An id read from a transcript (a session id), from a run.json or from an option is data: a
session id ``../../x``, ``/abs/path`` or ``a/b`` must never become a path as it is, or a run is
written outside ASZ_HOME and the cache's upkeep deletes a user's files. Every id that becomes a
path part goes through :func:`encode`, a reversible encoding to one safe file name, and every
path asz makes from ASZ_HOME and an id is checked by :func:`inside` before it is read or
written.

The encoding keeps ``[A-Za-z0-9_-]`` and ``.`` (not first) as they are, so the ids runtimes
write (UUIDs, ``rollout-...``) are their own file names; every other byte of the id's UTF-8 is
``%XX`` (``%`` itself too). A name longer than :data:`LONGEST` keeps its encoded beginning and
ends ``~`` and a digest of the whole id (``~`` is never kept as it is, so such a name cannot
be another id's encoding); it no longer decodes (:func:`decode` gives None), and whoever needs
the id reads it from the file it names (run.json holds its conversation).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from .errors import AszError

_KEEP = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.")
LONGEST = 200
"""The longest name :func:`encode` gives whole (file systems take 255 bytes)."""


def encode(ident: str) -> str:
    """``ident`` as one file name: no ``/``, no NUL, never ``.``, ``..`` or empty, no leading dot."""
    raw = str(ident).encode("utf-8", "surrogatepass")
    out = []
    for i, b in enumerate(raw):
        out.append(chr(b) if b in _KEEP and not (i == 0 and b == 0x2E) else f"%{b:02X}")
    name = "".join(out) or "%"  # the empty id: "%" alone, which no other id encodes to
    if len(name) > LONGEST:
        name = name[:LONGEST - 33] + "~" + hashlib.sha256(raw).hexdigest()[:32]
    return name


def decode(name: str) -> str | None:
    """The id :func:`encode` made ``name`` of; None for a name it cannot have made (a long id's
    digested name, or any other file)."""
    if name == "%":
        return ""
    out = bytearray()
    i = 0
    while i < len(name):
        c = name[i]
        if c == "%":
            h = name[i + 1:i + 3]
            if len(h) != 2 or any(x not in "0123456789ABCDEF" for x in h):
                return None
            out.append(int(h, 16))
            i += 3
        elif ord(c) < 128 and ord(c) in _KEEP and not (i == 0 and c == "."):
            out.append(ord(c))
            i += 1
        else:
            return None
    try:
        ident = out.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return None
    return ident if encode(ident) == name else None


class OutsideHome(AszError):
    """A path asz would read or write under ASZ_HOME leads outside it."""


def inside(home: str | os.PathLike[str], path: str | os.PathLike[str]) -> Path:
    """``path`` when it stays inside ``home`` once every link and ``..`` is resolved; else
    :class:`OutsideHome`, naming both. For a path to be made, the part that exists is resolved."""
    base = os.path.realpath(home)
    real = os.path.realpath(path)
    if real != base and os.path.commonpath([base, real]) != base:
        raise OutsideHome(f"refused: {os.fspath(path)!r} leads to {real!r}, outside the asz home {base!r} "
                          "(an id or a link under it points out of it)")
    return Path(path)


def child(home: str | os.PathLike[str], *parts: str, ids: tuple[str, ...] = ()) -> Path:
    """``home / parts... / encode(id)...``, checked :func:`inside` ``home``. ``parts`` are asz's
    own names (``runs``, ``cache``); each of ``ids`` is encoded."""
    return inside(home, Path(home).joinpath(*parts, *(encode(i) for i in ids)))
