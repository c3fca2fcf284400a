"""A store's first collect (no record stored yet) builds the records' indexes once, after its
records are in, and answers what it asks of the records (a resume's copies) from what it wrote:
the same answers an indexed store gives, and every committed store has the indexes. It has the
system write its pages to disk as it goes (through SQLite's own descriptor: the store stays
locked against a second writer)."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from asz_core import store as store_module
from asz_core import writeback
from asz_core.collect import collect
from asz_core.errors import StoreError
from asz_core.records import Entry
from asz_core.registry import Registry
from asz_core.store import Store
from asz_core.writeback import Writeback

from .helpers import MATCH, ORIGIN, RESUMED, fingerprint

INDEXES = {"records_key", "records_round", "calls_conversation"}


def _indexes(db: Path) -> set[str]:
    con = sqlite3.connect(db)
    try:
        return {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")}
    finally:
        con.close()


def _entry(key: str, session: str, line: int) -> Entry:
    return Entry(key=key, session=session, stream="main", kind="k", file=f"/x/{session}", line=line,
                 raw=f'{{"id": "{key}", "s": "{session}"}}'.encode())


def _answers(store: Store) -> tuple[dict[str, str], ...]:
    """One key held by conversations of two runtimes (x's first), another by x's only."""
    with store.writing() as w:
        x = w.bind_session("x", None, "a")
        w.add(x, _entry("k", "x", 1))
        y = w.bind_session("y", None, "b")
        w.add(y, _entry("k", "y", 1))
        w.add(x, _entry("k2", "x", 2))
        return tuple(w.conversations_of_keys(["k", "k2", "none"], rt) for rt in ("b", "a", None))


def test_a_first_collect_answers_key_lookups_as_an_indexed_store_does(tmp_path: Path) -> None:
    first = Store.open(tmp_path / "first")
    assert first.db.execute("SELECT 1 FROM records").fetchone() is None
    indexed = Store.open(tmp_path / "indexed")
    with indexed.writing() as w:  # a store holding a record already: its lookups go to the index
        w.add(w.bind_session("s0", None, "a"), _entry("z", "s0", 1))
    expected = ({"k": "y"}, {"k": "x", "k2": "x"}, {"k": "x", "k2": "x"})
    assert _answers(indexed) == expected
    assert _answers(first) == expected


@pytest.mark.usefixtures("corpus")
def test_a_first_collect_leaves_the_indexes_built(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "home")
    collect([MATCH], store, Registry())
    store.close()
    assert INDEXES <= _indexes(tmp_path / "home" / "asz.db")
    con = sqlite3.connect(tmp_path / "home" / "asz.db")
    plan = " ".join(str(r) for r in con.execute(
        "EXPLAIN QUERY PLAN SELECT version FROM records WHERE key = ? AND conversation = ?", ("k", "c")))
    con.close()
    assert "records_key" in plan


@pytest.mark.usefixtures("corpus")
def test_a_resume_in_the_same_first_collect_joins_its_conversation(tmp_path: Path) -> None:
    # The resume's session is decided while its origin's records are still only in this collect.
    project = tmp_path / "project"
    project.mkdir()
    for f in (ORIGIN, RESUMED):
        (project / f.name).write_bytes(f.read_bytes())
    store = Store.open(tmp_path / "home")
    (rnd,) = collect([project], store, Registry()).rounds
    assert (rnd.conversation, rnd.records) == (ORIGIN.stem, 473)
    assert store.resolve(RESUMED.stem) == ORIGIN.stem
    assert INDEXES <= _indexes(store.path)


def _store_fds(path: Path) -> set[int]:
    """The descriptors this process has open on ``path`` (SQLite's)."""
    st = os.stat(path)
    out = set()
    for n in os.listdir("/proc/self/fd"):
        try:
            got = os.fstat(int(n))
        except OSError:
            continue
        if (got.st_dev, got.st_ino) == (st.st_dev, st.st_ino):
            out.add(int(n))
    return out


@pytest.mark.usefixtures("corpus")
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="sync_file_range is Linux's")
def test_a_first_collect_has_its_pages_written_as_it_goes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pushed: list[tuple[int, int]] = []
    real = writeback._sync_file_range()

    def record(fd: int, offset: int, size: int, flags: int) -> Any:
        st = os.fstat(fd)
        pushed.append((st.st_dev, st.st_ino))
        return real(fd, offset, size, flags)

    monkeypatch.setattr(writeback, "_call", record)
    monkeypatch.setattr(store_module, "_WRITEBACK_BYTES", 1 << 16)
    store = Store.open(tmp_path / "home")
    collect([MATCH], store, Registry())
    st = os.stat(store.path)
    assert len(pushed) > 3 and set(pushed) == {(st.st_dev, st.st_ino)}  # the store file, through an open descriptor
    store.close()


# Another process (in this one SQLite shares its locks between connections, whatever the descriptors).
_SECOND_WRITER = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=0.05, isolation_level=None)
try:
    db.execute("BEGIN IMMEDIATE")
except sqlite3.OperationalError as exc:
    print("refused:", exc)
else:
    print("got the lock")
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="sync_file_range is Linux's")
def test_a_writeback_push_opens_nothing_and_keeps_the_store_locked(tmp_path: Path) -> None:
    one = Store.open(tmp_path)
    with one.writing() as w:
        w.add(w.bind_session("s", None, "a"), _entry("k", "s", 1))
        w._flush()
        sqlites = _store_fds(one.path)
        push = Writeback(one.path)
        push.push()
        assert push.fd in sqlites and _store_fds(one.path) == sqlites
        second = subprocess.run([sys.executable, "-c", _SECOND_WRITER, str(one.path)], capture_output=True, text=True,
                                timeout=60)
        assert second.stdout.startswith("refused: database is locked"), second.stdout + second.stderr


@pytest.mark.usefixtures("corpus")
def test_a_store_that_fills_up_while_its_indexes_are_built_is_a_clear_error_and_left_as_it_was(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store.open(tmp_path / "home")
    before = fingerprint(store.path)
    real = store_module.Writer.finish

    def full(self: store_module.Writer) -> None:
        # The store may not grow past what it holds now: building the indexes needs pages (a full disk).
        self._flush()
        pages = self.db.execute("PRAGMA page_count").fetchone()[0]
        self.db.execute(f"PRAGMA max_page_count={pages}")
        real(self)

    monkeypatch.setattr(store_module.Writer, "finish", full)
    with pytest.raises(StoreError, match=r"asz\.db: .*full"):
        collect([MATCH], store, Registry())
    store.db.execute("PRAGMA max_page_count=4294967294")
    assert fingerprint(store.path) == before
    assert INDEXES <= _indexes(store.path)  # dropped for the collect, back with its rollback
    monkeypatch.setattr(store_module.Writer, "finish", real)
    assert collect([MATCH], store, Registry()).records_published > 0  # the next collect completes
    assert INDEXES <= _indexes(store.path)


@pytest.mark.usefixtures("corpus")
@pytest.mark.parametrize(("reader", "idle"), [(False, True), (True, True), (True, False)],
                         ids=["read here", "read by a reader process, two CPUs free", "read by a reader process, a busy CPU"])
def test_a_first_collect_read_by_a_reader_keeps_its_indexes_up_as_it_goes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reader: bool, idle: bool) -> None:
    # Waiting on a reader process while a CPU is free, collect keeps the indexes up row by row (no
    # build at the end); reading itself, or on a busy machine, it builds them once at the end.
    # Either way the committed store has them.
    from asz_core import collect as collect_module
    from asz_core import collect_reader, workers

    if reader and not workers.can_fork():
        pytest.skip("no fork here (or one CPU): collect reads in its own process")
    monkeypatch.setattr(collect_reader, "MIN_BYTES", 0)
    monkeypatch.setenv("ASZ_PROCESSES", "2" if reader else "1")
    monkeypatch.setattr(collect_module, "cpus_idle", lambda wanted: idle)
    forks = {"n": 0}
    enter = collect_reader.Reader.__enter__

    def counted(self: collect_reader.Reader) -> collect_reader.Reader:
        forks["n"] += 1
        return enter(self)

    monkeypatch.setattr(collect_reader.Reader, "__enter__", counted)
    project = tmp_path / "project"
    project.mkdir()
    for f in (ORIGIN, RESUMED):
        (project / f.name).write_bytes(f.read_bytes())
    store = Store.open(tmp_path / "home")
    during: list[set[str]] = []

    def look(done: int, total: int, file: str) -> None:
        during.append({r[0] for r in store.db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")} & INDEXES)

    cache = store.db.execute("PRAGMA cache_size").fetchone()[0]
    (rnd,) = collect([project], store, Registry(), progress=look).rounds
    assert store.db.execute("PRAGMA cache_size").fetchone()[0] == cache  # (larger only while the indexes were kept up)
    assert forks["n"] == int(reader)
    assert (rnd.conversation, rnd.records) == (ORIGIN.stem, 473)  # the resume found from memory, as before
    assert during and all(d == (INDEXES if reader and idle else set()) for d in during)
    store.close()
    assert INDEXES <= _indexes(tmp_path / "home" / "asz.db")


def test_cpus_idle_counts_what_runs_now(monkeypatch: pytest.MonkeyPatch) -> None:
    from asz_core import workers

    monkeypatch.setattr(workers, "cpus", lambda: 2)
    real_open = open

    def loadavg(running: int) -> Any:
        def fake(path: Any, *a: Any, **k: Any) -> Any:
            if str(path) == "/proc/loadavg":
                import io

                return io.BytesIO(f"0.50 0.40 0.30 {running}/321 4567\n".encode())
            return real_open(path, *a, **k)
        return fake

    for running, free in ((1, True), (2, False), (5, False)):  # this process counted among the running
        monkeypatch.setattr("builtins.open", loadavg(running))
        assert workers.cpus_idle(2) is free
        assert workers.cpus_idle(1) is (running <= 2)
    monkeypatch.setattr("builtins.open", real_open)
    monkeypatch.setattr(workers, "cpus", lambda: 1)
    assert workers.cpus_idle(2) is False


@pytest.mark.parametrize("text", [None, b"", b"0.50 0.40 0.30\n", b"0.50 0.40 0.30 many/321 4567\n",
                                  b"0.00 0.00 0.00 0/0 0\n", b"0.50 0.40 0.30 -3/321 4567\n", b"0.50 0.40 0.30 /321 4567\n"],
                         ids=["missing", "empty", "short", "not a number", "a sandbox's 0/0", "negative", "no count"])
def test_cpus_idle_is_false_where_it_cannot_tell(monkeypatch: pytest.MonkeyPatch, text: bytes | None) -> None:
    # Collect then builds the indexes at the end, as on a busy machine: never an error, never a guess.
    import io

    from asz_core import workers

    monkeypatch.setattr(workers, "cpus", lambda: 64)
    real_open = open

    def fake(path: Any, *a: Any, **k: Any) -> Any:
        if str(path) != "/proc/loadavg":
            return real_open(path, *a, **k)
        if text is None:
            raise FileNotFoundError(2, "No such file or directory", path)
        return io.BytesIO(text)

    monkeypatch.setattr("builtins.open", fake)
    assert workers.cpus_idle(2) is False


@pytest.mark.usefixtures("corpus")
def test_indexes_kept_up_as_it_goes_leave_the_rows_a_build_at_the_end_leaves(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from asz_core import collect as collect_module
    from asz_core import workers

    from .helpers import CLAUDE_CORPUS
    from .test_collect_reader import TABLES, _all

    if not workers.can_fork():
        pytest.skip("no fork here (or one CPU): collect reads in its own process")
    monkeypatch.setenv("ASZ_PROCESSES", "2")
    rows = {}
    for idle in (True, False):
        monkeypatch.setattr(collect_module, "cpus_idle", lambda wanted, idle=idle: idle)
        store = Store.open(tmp_path / str(idle))
        collect([CLAUDE_CORPUS], store, Registry())
        store.close()
        rows[idle] = _all(tmp_path / str(idle) / "asz.db")
    assert len(rows[True]["records"]) > 10_000
    for name in TABLES:
        assert rows[True][name] == rows[False][name], name


@pytest.mark.usefixtures("corpus")
@pytest.mark.parametrize("bound", [10**12, 1_000_000], ids=["fits", "outgrows"])
def test_a_first_collect_too_large_for_the_page_cache_builds_its_indexes_at_the_end(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bound: int) -> None:
    # Kept up row by row, indexes larger than the 4 MiB cache put each row's entries on pages read
    # back from disk (on 1 GB: 4 s more system time): past LIVE_INDEX_MAX_BYTES to read, the
    # first collect leaves them to one build at the end, even with CPUs free.
    from asz_core import collect as collect_module
    from asz_core import workers

    from .helpers import CLAUDE_CORPUS

    if not workers.can_fork():
        pytest.skip("no fork here (or one CPU): collect reads in its own process")
    monkeypatch.setenv("ASZ_PROCESSES", "2")
    monkeypatch.setattr(collect_module, "cpus_idle", lambda wanted: True)
    monkeypatch.setattr(collect_module, "LIVE_INDEX_MAX_BYTES", bound)
    live = []
    real = store_module.Writer.index_as_it_goes
    monkeypatch.setattr(store_module.Writer, "index_as_it_goes", lambda w: (live.append(1), real(w))[1])
    store = Store.open(tmp_path / "home")
    got = collect([CLAUDE_CORPUS], store, Registry())
    store.close()
    assert got.bytes_read > 1_000_000  # the corpus is read: more than the smaller bound
    assert live == ([1] if bound > got.bytes_read else [])
    assert _indexes(tmp_path / "home" / "asz.db") >= set(store_module._LATE_INDEXES)


@pytest.mark.parametrize("fails", [False, True], ids=["lands", "fails"])
def test_the_page_cache_is_as_before_after_a_collect_that_kept_its_indexes_up(tmp_path: Path, fails: bool) -> None:
    # The 4 MiB cache is the first collect's; the connection (a library user's, kept open) gets
    # its own setting back whether the collect landed or was stopped.
    store = Store.open(tmp_path / "home")
    store.db.execute("PRAGMA cache_size=-1234")
    with pytest.raises(KeyboardInterrupt) if fails else contextlib.nullcontext():
        with store.writing() as w:
            w.index_as_it_goes()
            assert store.db.execute("PRAGMA cache_size").fetchone()[0] == store_module._LIVE_CACHE_KIB
            if fails:
                raise KeyboardInterrupt
    assert store.db.execute("PRAGMA cache_size").fetchone()[0] == -1234
    store.close()


def test_a_later_collect_keeps_the_page_cache_it_had(tmp_path: Path) -> None:
    # Only a first collect (its indexes dropped) keeps them up with a larger cache; a store that
    # holds records has its indexes, and its cache stays the connection's own.
    store = Store.open(tmp_path / "home")
    with store.writing() as w:
        w.add(w.bind_session("s1", None, "a"), _entry("k1", "s1", 1))
        w.close_rounds()
    store.db.execute("PRAGMA cache_size=-1234")
    with store.writing() as w:
        w.index_as_it_goes()
        assert store.db.execute("PRAGMA cache_size").fetchone()[0] == -1234
    assert _indexes(tmp_path / "home" / "asz.db") >= set(store_module._LATE_INDEXES)
    store.close()
