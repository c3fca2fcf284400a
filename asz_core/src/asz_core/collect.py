"""`asz collect`: runtime files -> one new round per conversation that gained records."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

import attrs

from .errors import AszError
from .interfaces import RuntimeAdapter
from .records import Cursor, Entry, Problem
from .registry import Registry
from .store import TAIL_BYTES, Round, Store, Writer

# A session whose first entries are copies of another conversation's records continues that
# conversation (a resumed Claude Code session). The copies come first, so a few suffice.
RESUME_LOOKAHEAD = 200


@attrs.frozen
class CollectResult:
    files_read: int
    files_unchanged: int
    bytes_read: int
    records_seen: int
    records_published: int
    rounds: tuple[Round, ...]
    problems: tuple[Problem, ...]

    @property
    def conversations(self) -> int:
        return len(self.rounds)


Progress = Callable[[int, int, str], None]
"""progress(bytes_done, bytes_total, file): called as files are read."""


def default_paths(registry: Registry | None = None) -> list[Path]:
    """Every installed runtime's own transcript folders that exist on this machine."""
    registry = registry or Registry()
    found: list[Path] = []
    for adapter in registry.runtimes():
        for p in adapter.default_paths():
            p = Path(p).expanduser()
            if p.exists() and p not in found:
                found.append(p)
    return found


def collect(paths: Iterable[Path], store: Store, registry: Registry | None = None, *,
            runtime: str | None = None, progress: Progress | None = None) -> CollectResult:
    """Read ``paths`` and publish what is new, as one round per conversation, in one transaction."""
    registry = registry or Registry()
    plan: list[tuple[RuntimeAdapter, Path]] = []
    problems: list[Problem] = []
    for path in paths:
        # Absolute, so a file is one file whatever folder asz runs from (its read state and the
        # records' file names are kept by path).
        path = Path(os.path.abspath(Path(path).expanduser()))
        if not path.exists():
            problems.append(Problem(str(path), 0, "no such file or folder"))
            continue
        adapter = registry.runtime(runtime) if runtime else registry.detect_runtime(path)
        if adapter is None:
            problems.append(Problem(str(path), 0, "no installed runtime adapter reads this (asz plugins lists them; --runtime forces one)"))
            continue
        files = adapter.files(path)
        if not files:
            problems.append(Problem(str(path), 0, f"no {adapter.name} files here"))
        plan.extend((adapter, f) for f in files)
    if not plan:
        raise AszError("nothing to read: " + "; ".join(str(p) for p in problems) if problems else "nothing to read")

    total = sum(_size(f) for _, f in plan)
    done = read = unchanged = seen = published = 0
    with store.writing() as w:
        binder = _Binder(w)
        for adapter, f in plan:
            st = os.stat(f)
            cursor = _cursor_for(store, f, st)
            if cursor is None:
                unchanged += 1
                done += st.st_size
                if progress:
                    progress(done, total, str(f))
                continue
            read += 1
            start = cursor.offset
            for item in adapter.read(f, cursor):
                if isinstance(item, Problem):
                    problems.append(item)
                    continue
                seen += 1
                published += binder.add(item, adapter.name)
            published += binder.flush()
            done += st.st_size - start
            w.save_file(str(f), adapter.name, st.st_size, st.st_mtime_ns, cursor)
            if progress:
                progress(done, total, str(f))
        planned = {str(f) for _, f in plan}
        for adapter, f, st, cursor, items in _companions(registry, store, planned, problems):
            entries = [i for i in items if isinstance(i, Entry)]
            convs = [w.conversation_of_session(e.session) for e in entries]
            if any(c is None for c in convs):
                continue  # a session not collected yet: the whole file waits for a later collect
            read += 1
            problems.extend(i for i in items if isinstance(i, Problem))
            for conv, e in zip(convs, entries):
                seen += 1
                published += int(w.add(conv, e))  # type: ignore[arg-type]
            w.save_file(str(f), adapter.name, st.st_size, st.st_mtime_ns, cursor)
        rounds = w.close_rounds()
    return CollectResult(read, unchanged, done, seen, published, tuple(rounds), tuple(problems))


def _companions(registry: Registry, store: Store, planned: set[str], problems: list[Problem]
                ) -> Iterable[tuple[RuntimeAdapter, Path, os.stat_result, Cursor, list[Entry | Problem]]]:
    """Every installed runtime's companion files (a recorder's spool) with what is new in them,
    read after the files collect was given, so their records land after the steps they describe."""
    for adapter in registry.runtimes():
        try:
            files = adapter.companions()
        except Exception as exc:  # noqa: BLE001 - a plugin's fault is a warning, not a failed collect
            problems.append(Problem(adapter.name, 0, f"could not list its companion files: {exc}"))
            continue
        for f in files:
            f = Path(os.path.abspath(f))
            if str(f) in planned:
                continue
            try:
                st = os.stat(f)
            except OSError:
                continue
            cursor = _cursor_for(store, f, st)
            if cursor is None:
                continue
            yield adapter, f, st, cursor, list(adapter.read(f, cursor))


def _size(f: Path) -> int:
    try:
        return f.stat().st_size
    except OSError:
        return 0


def _cursor_for(store: Store, f: Path, st: os.stat_result) -> Cursor | None:
    """Where to read ``f`` from: None when it has not changed, else a cursor (fresh if rewritten)."""
    known = store.file_state(str(f))
    if known is None:
        return Cursor()
    if st.st_size == known.size and st.st_mtime_ns == known.mtime_ns and known.cursor.offset == st.st_size:
        return None
    if st.st_size >= known.cursor.offset and _tail_matches(f, known.cursor.offset, known.tail):
        if st.st_size == known.cursor.offset:
            return None
        return known.cursor
    return Cursor()  # rewritten or shrunk: read it all again; stored records are not stored twice


def _tail_matches(f: Path, offset: int, tail: bytes) -> bool:
    with open(f, "rb") as fh:
        fh.seek(max(0, offset - TAIL_BYTES))
        return fh.read(min(offset, TAIL_BYTES)) == tail


class _Binder:
    """Finds the conversation of each session, holding a new session's first entries until it
    knows whether they are copies of a stored conversation (a resume)."""

    def __init__(self, w: Writer) -> None:
        self.w = w
        self.held: dict[str, list[Entry]] = {}
        self.runtime: dict[str, str] = {}

    def add(self, e: Entry, runtime: str) -> int:
        conv = self.w.conversation_of_session(e.session)
        if conv is not None:
            return int(self.w.add(conv, e))
        held = self.held.setdefault(e.session, [])
        self.runtime[e.session] = runtime
        held.append(e)
        # A resume copies records of the same runtime: a key is looked up among its conversations only.
        found = self.w.conversation_of_key(e.key, runtime)
        if found is None and len(held) < RESUME_LOOKAHEAD:
            return 0
        return self._release(e.session, found, runtime)

    def flush(self) -> int:
        # End of a file: a session still undecided starts a conversation of its own.
        n = 0
        for session in list(self.held):
            n += self._release(session, None, self.runtime[session])
        return n

    def _release(self, session: str, conv: str | None, runtime: str) -> int:
        conv = self.w.bind_session(session, conv, runtime)
        return sum(self.w.add(conv, e) for e in self.held.pop(session))
