"""Collect's look at the files it is given, at the cost of what changed.

To tell whose a file is and in which order files are read, every adapter looks into each one
(Claude Code: its first 4 KiB and its last timestamp; Codex and Kiro: its first line; LangSmith:
its head), every collect, whether or not anything changed: 4,600 opens for 1,216 files, a third
of a second. Such a look depends on the file's bytes alone, so a collect keeps it with the file's
identity (device, inode, size, mtime and ctime: a file written since, replaced, or restored with
an old mtime has another) in the store's ``cache/looks.json`` and gives it again while the file
is that file. A collect with nothing new opens no transcript; one after a conversation grew
looks into that file only. What a look found is the same either way, so which adapter reads a
file, and in which order, is what looking again would give.

Within one collect a folder is listed once and each file stat'ed once, whichever adapters ask
(four adapters each walking the same tree cost more than the stats). Across collects a folder's
listing is kept too (``cache/listings.json``), with the folder's identity: a name added, removed
or renamed in it changes its mtime and ctime, so while every folder is as it was (one stat each),
the listing is what listing again would give (a day's growth on 1,850 files: 10 ms of walking
become 2). And so is each folder's plan, which adapter reads which file in which order
(``cache/routes.json``, :meth:`Looks.routed`): while every folder is as it was and every file it
lists has its identity (and mode), with the adapters' code the same, it is what routing again
would give, and no adapter is asked (a 1 GB history's collect with nothing new: four adapters
over 1,216 files were most of it). A day's growth changes a file: its folder is routed again.
Outside a collect (an
adapter's ``files`` called by a tool or a test) nothing is kept: every look is made.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import stat as stat_mod
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import orjson

from . import signed

T = TypeVar("T")
VERSION = 1
"""Of looks.json's shape."""

Walked = tuple[str, list[str], list[str]]


class _Kept:
    """An iterator's items, made as far as someone asked and kept: a second reader (another
    adapter) is given what the first made, then makes the rest."""

    def __init__(self, it: Iterator[Any]) -> None:
        self.items: list[Any] = []
        self._it = it

    def __iter__(self) -> Iterator[Any]:
        i = 0
        while True:
            if i == len(self.items):
                item = next(self._it, _END)
                if item is _END:
                    return
                self.items.append(item)
            yield self.items[i]
            i += 1


_END = object()


def _walk(root: str) -> Iterator[Walked]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()  # in place: the walk descends in this order
        yield dirpath, list(dirnames), sorted(filenames)


RACY_NS = 2_000_000_000
"""A folder changed this shortly before it was listed is listed again at the next collect: a
folder's time is kept coarsely by some file systems (to the second, or to the clock's tick), so
a name added later in the same tick would leave its time as it was."""

Listed = list[Any]
"""One folder of a kept listing: [path, its identity (dev, ino, mtime_ns, ctime_ns) or None
(listed again every time), its folders, its files], in walk order."""


def _text(*names: str | list[str]) -> bool:
    """Whether every name can be kept as JSON text (a name that is no UTF-8 holds lone surrogates)."""
    try:
        for n in names:
            for s in (n,) if isinstance(n, str) else n:
                s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _dir_ident(st: os.stat_result) -> list[int]:
    return [st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns]


def _walk_kept(root: str) -> tuple[list[Walked], list[Listed]]:
    """``_walk(root)``, and what to keep of it: each folder's identity taken before it is listed
    (a name added meanwhile changes it after: listed again next time), none for a folder too
    recently changed, one that holds a symbolic link (whether it leads to a folder may change
    with nothing in this folder changing), or one that could not be listed."""
    out: list[Walked] = []
    kept: list[Listed] = []
    now = None
    stack = [root]
    while stack:
        top = stack.pop()
        try:
            st = os.stat(top)
            entries = list(os.scandir(top))
        except OSError:
            if top == root:
                return [], []  # (os.walk gives nothing for a root it cannot list)
            kept.append([top, None, [], []])  # (os.walk passes it by) never trusted: listed again
            continue
        dirs: list[str] = []
        files: list[str] = []
        links: set[str] = set()
        for e in entries:
            try:
                is_dir = e.is_dir()
            except OSError:
                is_dir = False
            if e.is_symlink():
                links.add(e.name)  # a folder it leads to is listed, not walked into (as os.walk)
            (dirs if is_dir else files).append(e.name)
        dirs.sort()
        files.sort()
        if now is None:
            now = time.time_ns()
        trusted = not links and st.st_mtime_ns < now - RACY_NS and st.st_ctime_ns < now - RACY_NS
        out.append((top, list(dirs), files))
        kept.append([top, _dir_ident(st) if trusted else None, list(dirs), files])
        stack.extend(os.path.join(top, d) for d in reversed(dirs) if d not in links)
    return out, kept


class Looks:
    """One collect's stats, listings and kept looks (:func:`looking`)."""

    def __init__(self, cache: Path | None) -> None:
        self.cache = cache
        self.stats: dict[str, os.stat_result] = {}
        self.shared: dict[Any, _Kept] = {}
        self.roots: set[str] = set()  # the folders walked
        self.kept: dict[str, list[Any]] = {}
        """path -> [dev, ino, size, mtime_ns, ctime_ns, {kind: what the look found}]"""
        self.codes: dict[str, str] = {}
        """kind -> a digest of the code that looks (a look made by other code is made again)."""
        self.fresh: set[str] = set()  # kinds whose code was checked in this process
        self.same: dict[str, dict[str, Any]] = {}
        """path -> what was found in it, once its identity was compared in this collect."""
        self.dirty = False
        self.listings: dict[str, list[Listed]] = {}
        """root -> its listing as kept (:func:`_walk_kept`): given again while every folder in it
        has the identity it had."""
        self.listed = False  # a listing made in this collect, to keep
        self.routes: dict[str, list[Any]] = {}
        """folder -> [signature of the adapters, [[adapter, file], ...] (collect's plan of it), the
        identity of every file its kept listing names, in the listing's order] (:meth:`routed`)."""
        self.routed_anew = False
        # Kept in the store's cache, signed (:mod:`.signed`): only what a collect of this home wrote
        # is given again; one planted, or too large, or not a regular file, is as if none were kept
        # (every folder listed again, every folder's files routed again, every look made again).
        if cache is not None:
            try:
                self.listings = dict(_kept(cache.with_name(LISTINGS))["roots"])
            except (ValueError, KeyError, TypeError):
                pass
            try:
                self.routes = dict(_kept(cache.with_name(ROUTES))["folders"])
            except (ValueError, KeyError, TypeError):
                pass
            try:
                data = _kept(cache)
                self.kept, self.codes = dict(data["files"]), dict(data["codes"])
            except (ValueError, KeyError, TypeError):
                pass

    def stat(self, p: str | os.PathLike[str]) -> os.stat_result:
        key = os.fspath(p)
        st = self.stats.get(key)
        if st is None:
            st = self.stats[key] = os.stat(key)  # (an OSError is not kept: asked again, it is raised again)
        return st

    def look(self, kind: str, p: str | os.PathLike[str], fn: Callable[[Path], T]) -> T:
        key = os.fspath(p)
        found = self.same.get(key)
        if found is not None and kind in found and kind in self.fresh:
            return found[kind]  # type: ignore[no-any-return]  # (every adapter looks at every file: the first one pays)
        if not _text(key):
            return fn(Path(key))  # a name that is no UTF-8: looked at, never kept (JSON cannot hold it)
        if kind not in self.fresh:
            self._check_code(kind, fn)
        found = self.same.get(key)
        if found is None:
            try:
                st = self.stat(key)
            except OSError:
                return fn(Path(key))  # it says what it makes of a file it cannot open
            if not stat_mod.S_ISREG(st.st_mode):
                return fn(Path(key))
            ident = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
            entry = self.kept.get(key)
            if entry is None or entry[:5] != ident:
                entry = self.kept[key] = [*ident, {}]
                self.dirty = True
            found = self.same[key] = entry[5]
        if kind in found:
            return found[kind]  # type: ignore[no-any-return]
        value = found[kind] = fn(Path(key))
        self.dirty = True
        return value

    def _check_code(self, kind: str, fn: Callable[..., Any]) -> None:
        self.fresh.add(kind)
        code = _code_of(fn)
        if self.codes.get(kind) != code:
            self.codes[kind] = code
            for entry in self.kept.values():
                entry[5].pop(kind, None)
            self.dirty = True

    def walk(self, root: str) -> Iterator[Walked]:
        """``_walk(root)`` as kept, if every folder of it is as it was (one stat each), else walked."""
        kept = self.listings.get(root)
        if kept is not None and _still(kept):
            return iter([(d, list(dirs), list(files)) for d, _, dirs, files in kept])
        walked, kept = _walk_kept(root)
        if all(_text(d, dirs, files) for d, _, dirs, files in kept):
            self.listings[root] = kept
        elif _text(root):  # a name that is no UTF-8 cannot be kept as JSON: this root is listed again each time
            self.listings[root] = [[root, None, [], []]]
        self.listed = True
        return iter(walked)

    def routed(self, root: str, sig: str) -> list[list[str]] | None:
        """The plan kept of folder ``root`` (which adapter reads which file, in order) by adapters
        of signature ``sig``, while every folder under it and every file it lists is as it was
        then (one stat each, the stats collect takes anyway): what routing again would give."""
        got = self.routes.get(root)
        kept = self.listings.get(root)
        if not (isinstance(got, list) and len(got) == 3 and got[0] == sig and kept is not None and _still(kept)):
            return None
        idents = got[2]
        i = 0
        same: list[str] = []
        try:
            for d, _, _, files in kept:
                for f in files:
                    path = os.path.join(d, f)
                    st = self.stat(path)
                    if idents[i] != _identity(st):
                        return None
                    same.append(path)
                    i += 1
        except (OSError, IndexError, TypeError):
            return None
        if i != len(idents):
            return None
        for path in same:  # their looks are still theirs: kept (:meth:`save` drops those no one met)
            entry = self.kept.get(path)
            if entry is not None and path not in self.same:
                self.same[path] = entry[5]
        return got[1]  # type: ignore[no-any-return]

    def route(self, root: str, sig: str, plan: list[list[str]]) -> None:
        """Keep the plan made of folder ``root`` (:meth:`routed`), when its listing is kept and
        every file of it could be stat'ed."""
        kept = self.listings.get(root)
        if kept is None or any(ident is None for _, ident, _, _ in kept):
            self.routes.pop(root, None)
            return
        idents = []
        try:
            for d, _, _, files in kept:
                for f in files:
                    st = self.stat(os.path.join(d, f))
                    idents.append(_identity(st))
        except OSError:
            self.routes.pop(root, None)
            return
        self.routes[root] = [sig, plan, idents]
        self.routed_anew = True

    def kept_iter(self, key: Any, make: Callable[[], Iterator[Any]]) -> Iterator[Any]:
        got = self.shared.get(key)
        if got is None:
            got = self.shared[key] = _Kept(make())
        return iter(got)

    def save(self) -> None:
        """Write the looks kept, once, atomically, when this collect made or dropped one. A look
        kept of a file under a folder this collect walked that it did not meet again (removed,
        renamed) is dropped; those of files elsewhere are kept as they were."""
        roots = tuple(k.rstrip(os.sep) + os.sep for k in self.roots)
        gone = [k for k in self.kept if k not in self.same and (k.startswith(roots) or k in self.stats)]
        for k in gone:
            del self.kept[k]
        if self.cache is None:
            return
        if self.listed:
            _write(self.cache.with_name(LISTINGS), {"v": VERSION, "roots": self.listings})
        if self.routed_anew:
            _write(self.cache.with_name(ROUTES), {"v": VERSION, "folders": self.routes})
        if self.dirty or gone:
            _write(self.cache, {"v": VERSION, "codes": self.codes, "files": self.kept})


def _kept(path: Path) -> dict[str, Any]:
    """The JSON kept at ``path`` by a collect of this home, of this version (KeyError: none such)."""
    data = orjson.loads(signed.read(_home(path), path, KEPT_BYTES) or b"null")
    if not (isinstance(data, dict) and data.get("v") == VERSION):
        raise KeyError(path.name)
    return data


def _identity(st: os.stat_result) -> list[int]:
    """What a kept plan holds of a file, changed by any write, rename or replacement of it."""
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode]


def _home(cache: Path) -> Path:
    """The asz home of a cache file (``ASZ_HOME/cache/looks.json``)."""
    return cache.parent.parent


KEPT_BYTES = 256 << 20
"""The most a kept looks or listings file is read of (a 1,850-file history keeps well under a
megabyte); a larger one is not read, and collect looks again."""


LISTINGS = "listings.json"
"""Beside looks.json: the folders' listings, written only when a folder was listed anew (a day's
growth lists none, and rewrites only looks.json)."""


ROUTES = "routes.json"
"""Beside looks.json: each folder's plan (:meth:`Looks.routed`), written only when one was made
anew (a collect with nothing new writes none; a day's growth, whose file changed, makes its
folder's plan again and rewrites it)."""


def _still(kept: list[Listed]) -> bool:
    """Whether every folder of a kept listing has the identity it had: same names in each."""
    for d, ident, _, _ in kept:
        if ident is None:
            return False
        try:
            st = os.stat(d)
        except OSError:
            return False
        if _dir_ident(st) != ident:
            return False
    return True


def _write(path: Path, value: Any) -> None:
    """``value`` as JSON into ``path``, signed and atomically (:mod:`.signed`); a home that cannot
    be written (or a look JSON cannot hold) keeps nothing: the next collect looks (or lists) again."""
    try:
        data = orjson.dumps(value)
    except TypeError:
        return
    signed.write(_home(path), path, data)


_codes: dict[str, str] = {}


def _code_of(fn: Callable[..., Any]) -> str:
    """A digest of the module that defines ``fn`` (its helpers are there too), else of ``fn``'s own code."""
    name = fn.__code__.co_filename
    got = _codes.get(name)
    if got is None:
        try:
            with open(name, "rb") as f:
                got = hashlib.sha256(f.read()).hexdigest()
        except OSError:
            got = hashlib.sha256(marshal.dumps(fn.__code__)).hexdigest()
        _codes[name] = got
    return got


_active: Looks | None = None


@contextlib.contextmanager
def looking(cache: Path | None) -> Iterator[Looks]:
    """One collect's look at its files: looks kept in ``cache`` (None: only for this collect)
    are given again, and those made are kept there when it ends."""
    global _active
    before, _active = _active, Looks(cache)
    try:
        yield _active
    finally:
        _active = before


def look(kind: str, p: str | os.PathLike[str], fn: Callable[[Path], T]) -> T:
    """``fn(p)``: a look into file ``p`` that depends on its bytes alone, returning JSON (None,
    bools, numbers, text, lists). In a collect, kept by ``kind`` with the file's identity and given
    again while it is that file; elsewhere, made."""
    if _active is None:
        return fn(p if isinstance(p, Path) else Path(p))
    return _active.look(kind, p, fn)


def stat(p: str | os.PathLike[str]) -> os.stat_result:
    """``os.stat(p)``, once per collect."""
    return os.stat(p) if _active is None else _active.stat(p)


def is_regular(p: str | os.PathLike[str]) -> bool:
    """Whether ``p`` (followed through symlinks) is a regular file (``regular.is_regular``, stat'ed once per collect)."""
    try:
        return stat_mod.S_ISREG(stat(p).st_mode)
    except OSError:
        return False


def walk(root: str | os.PathLike[str]) -> Iterator[Walked]:
    """``os.walk(root)``, folders and names sorted (each folder's files in name order, its
    folders walked in name order), listed once per collect."""
    key = os.fspath(root)
    if _active is None:
        return _walk(key)
    lk = _active
    lk.roots.add(key)
    return lk.kept_iter(("walk", key), lambda: lk.walk(key))


def active() -> Looks | None:
    """The collect's looks, or None outside a collect."""
    return _active


def code_of(fn: Callable[..., Any]) -> str:
    """A digest of the code of ``fn``'s module (what a kept look or plan was made by)."""
    return _code_of(fn)


def shared(key: Any, make: Callable[[], Iterator[T]]) -> Iterator[T]:
    """``make()``'s items, made once per collect (as far as asked) for every caller with ``key``."""
    return make() if _active is None else _active.kept_iter(key, make)
