"""Ids as file names, and paths that stay inside ASZ_HOME.

An id read from a transcript (a session id), from a run.json or from an option is data: a
session id ``../../x``, ``/abs/path`` or ``a/b`` must never become a path as it is, or a run is
written outside ASZ_HOME and the cache's upkeep deletes a user's files. Every id that becomes a
path part goes through :func:`encode`, a reversible encoding to one safe file name, and every
path asz makes from ASZ_HOME and an id is checked by :func:`inside` before it is read or
written.

The encoding keeps ``[a-z0-9_-]`` and ``.`` (not first) as they are, so the ids runtimes
write (UUIDs, ``rollout-...``) are their own file names; every other byte of the id's UTF-8 is
``%XX`` (``%`` itself too), capital letters included: on a file system that does not tell case
apart (macOS's, Windows'), ids ``A`` and ``a`` would otherwise share one folder, and one
conversation's runs would be listed as the other's. No two names it gives differ only in case. An encoding longer than :data:`LONGEST` bytes becomes a chain of
folders, each name within the bound: the encoding cut in pieces of :data:`PIECE`, the first
piece ending ``~``, every later one beginning ``~`` and every one but the last ending ``~``
(``a…~/~b…~/~c…``). ``~`` is never kept as it is, so a chain's names are no short id's name, a
name beginning ``~`` is never a chain's first, and the pieces read back in order decode to the
id: every name :func:`encode` gives decodes (:func:`decode`), with no side file. A folder
holding an id's files is found by :func:`id_folders`, which follows chains down.

Before this scheme a long id's name was its encoded beginning, ``~`` and a digest (no ``~``
at either end of it), and capital letters were kept as they are: such a folder is still listed
by :func:`id_folders` and does not decode (None), so a run there is still read (its run.json
names its conversation); an assembly-cache folder of that kind is no longer looked in, and the
conversation is assembled again once.
An id past a few thousand bytes makes a path past the system's own limit (4,096 bytes on
Linux): making it fails with an error naming it, and nothing outside ASZ_HOME is touched.
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import AszError

_KEEP = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789_-.")
LONGEST = 200
"""The longest name :func:`encode` gives (file systems take 255 bytes)."""
PIECE = LONGEST - 2
"""The encoding's characters a chain's name holds, beside its one or two ``~``."""


def _text(ident: str) -> str:
    raw = str(ident).encode("utf-8", "surrogatepass")
    out = []
    for i, b in enumerate(raw):
        out.append(chr(b) if b in _KEEP and not (i == 0 and b == 0x2E) else f"%{b:02X}")
    return "".join(out) or "%"  # the empty id: "%" alone, which no other id encodes to


def names(ident: str) -> tuple[str, ...]:
    """``ident`` as one file name, or a chain of them when it is long: no ``/``, no NUL, never
    ``.``, ``..`` or empty, no leading dot, each at most :data:`LONGEST` bytes."""
    text = _text(ident)
    if len(text) <= LONGEST:
        return (text,)
    pieces = [text[i:i + PIECE] for i in range(0, len(text), PIECE)]
    last = len(pieces) - 1
    return tuple(("~" if k else "") + p + ("~" if k < last else "") for k, p in enumerate(pieces))


def encode(ident: str) -> str:
    """``ident`` as a relative path: its :func:`names` joined with ``/`` (one name for most ids)."""
    return "/".join(names(ident))


def _unchain(name: str) -> str | None:
    parts = name.split("/")
    if len(parts) == 1:
        return parts[0]
    last = len(parts) - 1
    text = []
    for k, p in enumerate(parts):
        if (p.startswith("~") != bool(k)) or (p.endswith("~") != (k < last)):
            return None
        text.append(p[1 if k else 0:len(p) - (1 if k < last else 0)])
    return "".join(text)


def decode(name: str) -> str | None:
    """The id :func:`encode` made ``name`` of (a name, or a chain's names joined with ``/``);
    None for a name it cannot have made (an old long id's digested name, or any other file)."""
    text = _unchain(name)
    if text is None:
        return None
    if text == "%":
        return ""
    out = bytearray()
    i = 0
    while i < len(text):
        c = text[i]
        if c == "%":
            h = text[i + 1:i + 3]
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


def id_folders(base: Path) -> list[tuple[Path, str]]:
    """Each folder under ``base`` that holds an id's files, with its path relative to ``base``
    (``/``-joined, what :func:`decode` reads): a chain's names (ending ``~``) are followed down
    to its last; a link is never followed."""
    found: list[tuple[Path, str]] = []
    todo = [(d, d.name) for d in sorted(base.iterdir()) if not d.name.startswith("~")] if base.is_dir() else []
    while todo:
        d, rel = todo.pop()
        if d.is_symlink() or not d.is_dir():
            continue
        if d.name.endswith("~"):
            todo.extend((c, f"{rel}/{c.name}") for c in sorted(d.iterdir()) if c.name.startswith("~"))
        else:
            found.append((d, rel))
    return sorted(found)


def decode_folder(base: Path, folder: Path) -> str | None:
    """The id of ``folder``, one of :func:`id_folders` of ``base``; None when it does not decode."""
    try:
        return decode(Path(folder).relative_to(base).as_posix())
    except ValueError:
        return None


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
    """``home / parts... / names(id)...``, checked :func:`inside` ``home``. ``parts`` are asz's
    own names (``runs``, ``cache``); each of ``ids`` is encoded."""
    return inside(home, Path(home).joinpath(*parts, *(n for i in ids for n in names(i))))
