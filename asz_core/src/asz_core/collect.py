"""`asz collect`: runtime files -> one new round per conversation that gained records.

One bad file never stops a collect: a file that cannot be opened (a dangling symlink, a symlink
loop, no permission, not a regular file) is skipped with a warning naming it, and an error while
reading one ends that file with a warning naming file and line. What it yielded before the
error is kept and its read position is not moved, so the next collect reads it again from where
it last stopped (records already stored are not stored twice) and nothing is lost.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import attrs
import orjson

from .errors import AszError, StoreError
from .gcpause import no_gc
from .collect_reader import Item, Reader, as_problem, error_text, prepared, read_items, worth_forking
from .interfaces import RuntimeAdapter
from .records import Cursor, Entry, Problem
from .registry import Registry
from .regular import not_regular, open_regular, shown_name, why_not_regular
from .looks import Looks, code_of, looking, stat
from .looks import active as active_looks
from .store import LIVE_INDEX_MAX_BYTES, FileStats, Prepared, Round, Store, Writer, tail_before
from .workers import cpus_idle

# A session whose first entries are copies of another conversation's records continues that
# conversation (a resumed Claude Code session). The copies come first, so a few suffice.
RESUME_LOOKAHEAD = 200
# Records written twice in one file with other content, warned about one by one per file, then counted.
REWRITES_NAMED = 5
LOOKUP_BATCH = 256
"""Entries of a file added at a time (:meth:`_Binder.add_many`): the store asked once for their keys."""


@attrs.frozen
class CollectResult:
    files_read: int
    files_unchanged: int
    bytes_read: int
    """The bytes read from the files read, from where each was last read to its end (a grown
    file's new bytes, a new or rewritten file whole): what this collect had to parse."""
    records_seen: int
    records_published: int
    rounds: tuple[Round, ...]
    problems: tuple[Problem, ...]
    bytes_looked_at: int = 0
    """The size of every file looked at, read or found unchanged (unchanged files are only
    stat'ed, or their last 4 KiB before the read position compared): what the progress bar counts."""

    @property
    def conversations(self) -> int:
        return len(self.rounds)

    @property
    def read_nothing(self) -> bool:
        """Nothing it was given could be read (the warnings say why): ``asz collect`` exits 1."""
        return self.records_seen == 0 and self.files_unchanged == 0


def collect_json(r: CollectResult) -> dict[str, Any]:
    """What ``asz collect --json`` prints."""
    return {
        "files_read": r.files_read, "files_unchanged": r.files_unchanged, "bytes_looked_at": r.bytes_looked_at,
        "bytes_read": r.bytes_read,
        "records_seen": r.records_seen, "records_published": r.records_published,
        "rounds": [attrs.asdict(x) for x in r.rounds], "warnings": [shown_name(str(p)) for p in r.problems],
    }


Progress = Callable[[int, int, str], None]
"""progress(bytes_done, bytes_total, file): called as files are read."""


STOPPED = ("collect stopped (interrupted) before it published: nothing of it is in the store, which is as it "
           "was; `asz collect` again reads it all")
"""What a collect interrupted (Ctrl-C) says: it writes in one transaction, so nothing was published."""


def default_places(registry: Registry | None = None) -> list[tuple[str, Path, bool]]:
    """Every folder (or file) an installed runtime keeps its transcripts in by default: (runtime,
    path, whether it is on this machine), for ``asz collect -h``."""
    registry = registry or Registry()
    out: list[tuple[str, Path, bool]] = []
    for adapter in registry.runtimes():
        for p in adapter.default_paths():
            p = Path(p).expanduser()
            out.append((adapter.name, p, p.exists()))
    return out


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


@attrs.define
class _Counts:
    read: int = 0
    unchanged: int = 0
    done: int = 0
    """Bytes looked at: each file's size once it is taken, read or unchanged (the progress bar's count)."""
    read_bytes: int = 0
    """Bytes read: from each read file's cursor to its end."""
    seen: int = 0
    published: int = 0


def collect(paths: Iterable[Path], store: Store, registry: Registry | None = None, *,
            runtime: str | None = None, progress: Progress | None = None) -> CollectResult:
    """Read ``paths`` and publish what is new, as one round per conversation, in one transaction."""
    registry = registry or Registry()
    with looking(store.path.parent / "cache" / "looks.json") as lk:
        return _collect(paths, store, registry, runtime, progress, lk)


def _collect(paths: Iterable[Path], store: Store, registry: Registry, runtime: str | None, progress: Progress | None,
             lk: Looks) -> CollectResult:
    problems: list[Problem] = []
    plan = plan_files(paths, registry, runtime, problems)
    if not plan:
        raise AszError("nothing to read: " + "; ".join(str(p) for p in problems) if problems else "nothing to read")

    total = sum(_size(f) for _, f in plan)
    n = _Counts()
    with no_gc(), store.writing() as w:  # many small objects, no cycles: the cycle collector only costs time
        binder = _Binder(w, problems)
        # Where each file is read from, decided first (reading needs nothing the writing changes:
        # each file's cursor is its own), so a forked reader can be handed the whole list. The
        # files' states read at once: most are unchanged, decided from the stat alone.
        known = store.file_stats()
        steps = [_step(adapter, f, store, problems, known) for adapter, f in plan]
        lk.save()
        jobs = [(s.adapter, s.file, s.cursor) for s in steps if s.cursor is not None]
        todo = sum(max(0, s.st.st_size - s.cursor.offset) for s in steps if s.cursor is not None and s.st is not None)
        with contextlib.ExitStack() as stack:
            forking = worth_forking(todo)
            if forking and todo <= LIVE_INDEX_MAX_BYTES and cpus_idle(2):
                # Two CPUs free for this process and its reader: this one, waiting on the reader
                # about a third of the time, keeps the indexes up meanwhile (else, or when the
                # indexes would outgrow the page cache: at the end).
                w.index_as_it_goes()
            reader = stack.enter_context(Reader(jobs)) if forking else None
            # Listed while the reader reads its first frame (this process would only wait): their
            # adapters' look (Claude Code's imports its recorder) is not left to the serial end.
            planned = {str(f) for _, f in plan}
            listing: list[Problem] = []
            companions = _companion_files(registry, planned, listing)
            index = 0
            for s in steps:
                problems.extend(s.problems)
                if s.cursor is not None:
                    items = reader.items(index) if reader else read_items(s.adapter, s.file, s.cursor)
                    index += 1
                    _take(s, items, store, w, binder, problems, n)
                elif s.st is not None:  # unchanged
                    n.unchanged += 1
                    n.done += s.st.st_size
                if progress:
                    progress(n.done, total, str(s.file))
        problems.extend(listing)
        for adapter, f, st, cursor, items in _companions(companions, store, problems, known):
            entries = [i for i in items if isinstance(i, Entry)]
            convs = [w.conversation_of_session(e.session) for e in entries]
            if any(c is None for c in convs):
                continue  # a session not collected yet: the whole file waits for a later collect
            n.read += 1
            n.read_bytes += max(0, st.st_size - cursor.offset)
            problems.extend(i for i in items if isinstance(i, Problem))
            for conv, e in zip(convs, entries):
                n.seen += 1
                got = prepared(e)
                if type(got) is tuple:
                    n.published += binder.put(conv, got)  # type: ignore[arg-type]
                else:
                    problems.append(Problem(str(e.file), e.line if type(e.line) is int else 0, got))
            try:
                w.save_file(str(f), adapter.name, st.st_size, st.st_mtime_ns, cursor)
            except OSError as exc:
                problems.append(Problem(str(f), 0, f"{_unopenable(f, exc)}; read again at the next collect"))
        problems.extend(_rewrite_notes(w, None))
        rounds = w.close_rounds()
    return CollectResult(n.read, n.unchanged, n.read_bytes, n.seen, n.published, tuple(rounds), tuple(problems), n.done)


@attrs.define
class _Step:
    """One planned file: read from ``cursor``, or (None) not read: unchanged, or skipped with ``problems``."""

    adapter: RuntimeAdapter
    file: Path
    st: os.stat_result | None = None
    cursor: Cursor | None = None
    problems: list[Problem] = attrs.Factory(list)


def _step(adapter: RuntimeAdapter, f: Path, store: Store, problems: list[Problem], known: FileStats) -> _Step:
    """Where ``f`` is read from; any failure of this file is a warning, and the others go on."""
    st, cursor, problem = _where(f, store, adapter.name, known)
    return _Step(adapter, f, st, cursor, [problem] if problem else [])


def _where(f: Path, store: Store, runtime: str, known: FileStats) -> tuple[os.stat_result | None, Cursor | None, Problem | None]:
    """``f``'s stat and where to read it from (cursor None: unchanged), or (None, None, why it is
    skipped): not a regular file, or it cannot be opened (probed before any adapter opens it), or
    its name is no UTF-8 (a record names its file as text: one such name would fail the whole
    collect's writing)."""
    if shown_name(f) != os.fspath(f):
        return None, None, Problem(shown_name(f), 0, "its name is not UTF-8 (asz keeps a file's name as text); "
                                                     "skipped: rename it to read it")
    try:
        st = stat(f)  # (the stat the adapters' look at it took, if they took one)
        why = why_not_regular(st.st_mode)
        if why:
            return None, None, Problem(str(f), 0, f"{why}; skipped")
        cursor = _cursor_for(store, f, st, runtime, known)
        if cursor is not None:
            _probe(f)
        return st, cursor, None
    except OSError as exc:
        return None, None, Problem(str(f), 0, f"{_unopenable(f, exc)}; skipped")


def _take(s: _Step, items: Iterator[Item], store: Store, w: Writer, binder: _Binder, problems: list[Problem],
          n: _Counts) -> None:
    """Publish what reading one file gave (:func:`read_items`, here or in the reader process); its
    read position is saved once the file was read to its end."""
    assert s.st is not None and s.cursor is not None
    n.read += 1
    f, st, runtime = s.file, s.st, s.adapter.name
    start, last = s.cursor.offset, s.cursor.line
    # Entries are added a batch at a time, so that what the store holds of their keys is asked
    # once per batch (Writer.know), not once per entry; anything else an item says comes after
    # the entries before it are added, in the order read.
    batch: list[Prepared] = []
    adding = False
    try:
        for item in items:
            if len(item) == 13:  # an entry: the usual item, kept short
                if item[5] > last:
                    last = item[5]
                n.seen += 1
                batch.append(item)  # type: ignore[arg-type]
                if len(batch) >= LOOKUP_BATCH:
                    adding = True
                    n.published += binder.add_many(batch, runtime)
                    adding = False
                continue
            if batch:
                adding = True
                n.published += binder.add_many(batch, runtime)
                adding = False
            if item[0] == "p":
                problems.append(as_problem(item))
            elif item[0] == "end":
                n.published += binder.flush()
                w.save_file(str(f), runtime, st.st_size, st.st_mtime_ns, Cursor(item[1], item[2], orjson.loads(item[3])))
            else:  # "err": what came before is published, the read position is not moved
                n.published += binder.flush()
                problems.append(Problem(str(f), item[1], item[2]))
    except store.Error as exc:  # the store itself failed (disk full, ...): the collect stops, nothing half done
        raise StoreError(f"{store.label}: {exc}") from exc
        if batch:  # (items that ended without their end: none from read_items)
            n.published += binder.add_many(batch, runtime)
    except Exception as exc:  # noqa: BLE001 - one bad file never stops a collect
        # What came before is published (a session still undecided starts its own conversation,
        # as at the end of a file: a resume's copies come first). The read position stays where
        # it was, so the next collect reads the file again from there and stores nothing twice.
        for _ in items:
            pass  # the rest of this file's items (from the reader process) are not taken
        if batch and not adding:  # read before the error, not added yet (one whose adding failed is not tried again)
            n.published += binder.add_many(batch, runtime)
        n.published += binder.flush()
        problems.append(Problem(str(f), last + 1, f"reading stopped ({error_text(exc)}); what came before is kept, "
                                                  "the rest is read again at the next collect"))
    problems.extend(_rewrite_notes(w, str(f)))
    n.done += st.st_size
    n.read_bytes += max(0, st.st_size - start)


# --- which adapter reads which file -------------------------------------------------------

def plan_files(paths: Iterable[Path], registry: Registry, runtime: str | None,
               problems: list[Problem]) -> list[tuple[RuntimeAdapter, Path]]:
    """Each file to read under ``paths`` with the adapter that reads it, in reading order.

    A folder may hold several runtimes' files side by side: each file goes to the adapter that
    recognises it (``detect``), so a mixed folder gives what each runtime's own folder gives.
    ``runtime`` forces one adapter for everything."""
    forced = registry.runtime(runtime) if runtime else None
    adapters = sorted(registry.runtimes(), key=lambda a: a.name) if forced is None else [forced]
    plan: list[tuple[RuntimeAdapter, Path]] = []
    taken: set[Path] = set()
    for path in paths:
        # Absolute, so a file is one file whatever folder asz runs from (its read state and the
        # records' file names are kept by path).
        path = Path(os.path.abspath(Path(path).expanduser()))
        if not path.exists():
            why = f"a symbolic link to {os.readlink(path)}, which cannot be opened" if path.is_symlink() else "no such file or folder"
            problems.append(Problem(shown_name(path), 0, why))
            continue
        why = None if path.is_dir() else not_regular(path)
        if why:
            problems.append(Problem(shown_name(path), 0, f"{why}; skipped"))
            continue
        if forced is not None:
            found = [(forced, f) for f in _files(forced, path, problems)]
            if not found:
                problems.append(Problem(str(path), 0, f"no {forced.name} files here"))
        elif path.is_dir():
            found = _route(adapters, path, problems)
        else:
            adapter = next((a for a in adapters if _detects(a, path)), None)
            found = [(adapter, path)] if adapter else []
        if not found and forced is None:
            problems.append(Problem(str(path), 0, "no installed runtime adapter reads this (asz plugins lists them; --runtime forces one)"))
        for a, f in found:
            if f not in taken:  # a file under two given paths is read once
                taken.add(f)
                plan.append((a, f))
    return plan


def _route(adapters: list[RuntimeAdapter], folder: Path, problems: list[Problem]) -> list[tuple[RuntimeAdapter, Path]]:
    """A folder's files, each with one adapter. Every adapter lists the files it would read
    there (a folder may hold several runtimes' files side by side, and an adapter's look at a
    folder samples only a few); a file listed by several goes to the first (by name) that
    recognises the file itself. A file no adapter recognises is read by one that recognised the
    folder (it warns what is wrong with it), else left alone. Each adapter's files keep its order.

    In a collect, the plan is kept (``cache/routes.json``, :meth:`.looks.Looks.routed`) and given
    again while every folder under it and every file it lists is as it was, and the adapters'
    code the same: a collect with nothing new asks no adapter (four adapters each looking at
    each of a 1 GB history's 1,216 files was most of its time)."""
    lk = active_looks()
    root = os.fspath(folder)
    sig = _signature(adapters) if lk is not None else None
    if lk is not None and sig is not None:
        kept = lk.routed(root, sig)
        if kept is not None:
            by_name = {a.name: a for a in adapters}
            return [(by_name[a], Path(f)) for a, f in kept]
    said = len(problems)
    made = _routed(adapters, folder, problems)
    if lk is not None and sig is not None and len(problems) == said:  # (a plan an adapter warned of is made again)
        lk.route(root, sig, [[a.name, os.fspath(f)] for a, f in made])
    return made


def _signature(adapters: list[RuntimeAdapter]) -> str | None:
    """The adapters a folder's kept plan was made by (names and code), and the code that routes;
    None when one's code cannot be told (its plan is never kept)."""
    try:
        return "|".join([code_of(_routed), *(f"{a.name}:{code_of(type(a).files)}:{code_of(type(a).detect)}" for a in adapters)])
    except (AttributeError, TypeError):
        return None


def _routed(adapters: list[RuntimeAdapter], folder: Path, problems: list[Problem]) -> list[tuple[RuntimeAdapter, Path]]:
    """:func:`_route`, made."""
    at_home = [_detects(a, folder) for a in adapters]
    if not any(at_home):
        return []
    lists = [_files(a, folder, problems) for a in adapters]
    listers: dict[Path, list[int]] = {}
    for i, files in enumerate(lists):
        for f in files:
            listers.setdefault(f, []).append(i)
    owner: dict[Path, int | None] = {}
    for f, idx in listers.items():
        if len(idx) == 1 and at_home[idx[0]]:
            owner[f] = idx[0]  # the usual case: one runtime's own folder
            continue
        owner[f] = next((i for i in idx if _detects(adapters[i], f)), None)
        if owner[f] is None:
            owner[f] = next((i for i in idx if at_home[i]), None)
    return [(adapters[i], f) for i, files in enumerate(lists) for f in files if owner[f] == i]


def _files(adapter: RuntimeAdapter, path: Path, problems: list[Problem]) -> list[Path]:
    try:
        return [_absolute(f) for f in adapter.files(path)]
    except Exception as exc:  # noqa: BLE001 - an adapter's fault on one folder is a warning
        problems.append(Problem(str(path), 0, f"{adapter.name} could not list its files here ({error_text(exc)})"))
        return []


def _absolute(f: Path | str) -> Path:
    """``f`` absolute and normal (a file is one file whatever folder asz runs from), parsed again
    only when it was not (most are found under a folder that was made so)."""
    name = os.fspath(f)
    got = os.path.abspath(name)
    return f if got == name and isinstance(f, Path) else Path(got)


def _detects(adapter: RuntimeAdapter, path: Path) -> bool:
    try:
        return bool(adapter.detect(path))
    except Exception:  # noqa: BLE001 - an adapter that cannot tell does not read it
        return False


# --- files --------------------------------------------------------------------------------

def _probe(f: Path) -> None:
    """Open ``f`` for reading and close it: an unreadable file is skipped before any adapter
    opens it. Never blocks (a named pipe swapped in since the stat is refused, not waited on)."""
    open_regular(f).close()


def _unopenable(f: Path, exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "a symbolic link that loops (it leads back to itself)"
    if isinstance(exc, FileNotFoundError) and f.is_symlink():
        try:
            return f"a symbolic link to {os.readlink(f)}, which does not exist"
        except OSError:
            pass
    return f"cannot be opened ({exc.strerror or exc})"



def _companion_files(registry: Registry, planned: set[str], problems: list[Problem]) -> list[tuple[RuntimeAdapter, Path]]:
    """Every installed runtime's companion files (a recorder's spool), but those collect was given."""
    out = []
    for adapter in registry.runtimes():
        try:
            files = adapter.companions()
        except Exception as exc:  # noqa: BLE001 - a plugin's fault is a warning, not a failed collect
            problems.append(Problem(adapter.name, 0, f"could not list its companion files: {exc}"))
            continue
        for f in files:
            f = Path(os.path.abspath(f))
            if str(f) not in planned:
                out.append((adapter, f))
    return out


def _companions(companions: list[tuple[RuntimeAdapter, Path]], store: Store, problems: list[Problem],
                known: FileStats) -> Iterable[tuple[RuntimeAdapter, Path, os.stat_result, Cursor, list[Entry | Problem]]]:
    """The companion files (:func:`_companion_files`) with what is new in them, read after the
    files collect was given, so their records land after the steps they describe."""
    for adapter, f in companions:
        st, cursor, problem = _where(f, store, adapter.name, known)
        if problem is not None:
            problems.append(problem)
        if st is None or cursor is None:
            continue  # skipped, or unchanged
        try:
            items = list(adapter.read(f, cursor))
        except OSError as exc:
            problems.append(Problem(str(f), 0, f"{_unopenable(f, exc)}; skipped"))
            continue
        except Exception as exc:  # noqa: BLE001 - one bad file never stops a collect
            problems.append(Problem(str(f), cursor.line + 1, f"reading stopped ({error_text(exc)}); read again at the next collect"))
            continue
        yield adapter, f, st, cursor, items


def _rewrite_notes(w: Writer, file: str | None) -> list[Problem]:
    """The writer's notes on records written twice (each names file and both lines): the first
    few of a file one by one, the rest of it as one count."""
    notes, w.notes = w.notes, []
    if len(notes) <= REWRITES_NAMED:
        return notes
    rest = len(notes) - REWRITES_NAMED
    where = file or notes[REWRITES_NAMED].file
    return notes[:REWRITES_NAMED] + [Problem(where, 0, f"{rest} more records are written twice in this file with other "
                                                        "content; each newer copy that reads was kept")]


def _size(f: Path) -> int:
    try:
        return stat(f).st_size
    except OSError:
        return 0


def _cursor_for(store: Store, f: Path, st: os.stat_result, runtime: str, stats: FileStats) -> Cursor | None:
    """Where to read ``f`` from: None when it has not changed, else a cursor (fresh if rewritten,
    or if another runtime's adapter read it before). ``stats``: every file's state but its tail
    and cursor state (:meth:`Store.file_stats`), which decide most files alone."""
    quick = stats.get(str(f))
    if quick is None:
        return Cursor()  # never read
    if quick[0] == runtime and st.st_size == quick[1] and st.st_mtime_ns == quick[2] and quick[3] == st.st_size:
        return None  # (as below, without reading its tail and state)
    known = store.file_state(str(f))
    if known is None or known.runtime != runtime:
        return Cursor()
    if st.st_size == known.size and st.st_mtime_ns == known.mtime_ns and known.cursor.offset == st.st_size:
        return None
    if st.st_size >= known.cursor.offset and tail_before(f, known.cursor.offset) == known.tail:
        if st.st_size == known.cursor.offset:
            return None
        return known.cursor
    return Cursor()  # rewritten or shrunk: read it all again; stored records are not stored twice


class _Binder:
    """Finds the conversation of each session, holding a new session's first entries until it
    knows whether they are copies of a stored conversation (a resume). Entries come prepared
    (:data:`~asz_core.store.Prepared`: ``[0]`` is the key, ``[1]`` the session)."""

    def __init__(self, w: Writer, problems: list[Problem]) -> None:
        self.w = w
        self.problems = problems
        self.held: dict[str, list[Prepared]] = {}
        self.runtime: dict[str, str] = {}
        self.bound: dict[str, str] = {}  # session -> conversation, once known

    def add(self, e: Prepared, runtime: str) -> int:
        session = e[1]
        conv = self.bound.get(session)
        if conv is not None:
            return self.w.add_prepared(conv, e)  # a bool: 1 when stored
        held = self.held.get(session)
        if held is None:
            conv = self.w.conversation_of_session(session)
            if conv is not None:
                self.bound[session] = conv
                return self.put(conv, e)
            held = self.held[session] = []
            self.runtime[session] = runtime
        held.append(e)
        if len(held) < RESUME_LOOKAHEAD:
            return 0
        return self._decide(session)

    def add_many(self, batch: list[Prepared], runtime: str) -> int:
        """:meth:`add` for each entry of ``batch``, in order, having asked the store once per
        conversation for the keys it holds of them; ``batch`` is emptied of those added."""
        keys: dict[str, list[str]] = {}
        unbound: set[str] = set()  # sessions the store holds no conversation of: asked once
        for e in batch:
            session = e[1]
            conv = self.bound.get(session)
            if conv is None and session not in self.held and session not in unbound:
                # (what add asks at the session's first entry, asked first: nothing of this
                # batch but that session's own entries could bind it)
                conv = self.w.conversation_of_session(session)
                if conv is not None:
                    self.bound[session] = conv
                else:  # held from its first entry on, as add would (asking nothing again)
                    unbound.add(session)
                    self.held[session] = []
                    self.runtime[session] = runtime
            if conv is not None:
                keys.setdefault(conv, []).append(e[0])
        for conv, ks in keys.items():
            self.w.know(conv, ks)
        n = done = 0
        add = self.add
        try:
            for e in batch:
                n += add(e, runtime)
                done += 1
        finally:
            del batch[:done]
        return n

    def flush(self) -> int:
        # End of a file: a session still undecided is decided on what it holds.
        n = 0
        for session in list(self.held):
            n += self._decide(session)
        return n

    def _decide(self, session: str) -> int:
        """The conversation of the first held entry whose key is stored in a conversation of the
        same runtime (a resume copies records of its own runtime), else a conversation of its
        own. Asked once for all the entries held (one look-up, not one per entry)."""
        runtime = self.runtime[session]
        found = self.w.conversations_of_keys([e[0] for e in self.held[session]], runtime)
        conv = next((found[e[0]] for e in self.held[session] if e[0] in found), None)
        return self._release(session, conv, runtime)

    def _release(self, session: str, conv: str | None, runtime: str) -> int:
        conv = self.bound[session] = self.w.bind_session(session, conv, runtime)
        return sum(self.put(conv, e) for e in self.held.pop(session))

    def put(self, conv: str, e: Prepared) -> int:
        return int(self.w.add_prepared(conv, e))
