"""How a store is written (issue 16): a new store's first collect writes its pages once (16 KiB
pages, a rollback journal), every later one goes through WAL; the promises hold either way: a
second writer is told the store is busy, readers read what was committed, and two collects
started at once on a new store leave what one collect leaves."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from asz_core.collect import collect
from asz_core.errors import StoreError
from asz_core.registry import Registry
from asz_core.store import PAGE_SIZE, Store

from .helpers import ASZ_MAIN, CLAUDE_CORPUS, MATCH, asz_env, db_rows, fingerprint, run_asz

pytestmark = pytest.mark.usefixtures("corpus")


def _mode(db: Path) -> tuple[str, int]:
    con = sqlite3.connect(db)
    try:
        return con.execute("PRAGMA journal_mode").fetchone()[0], con.execute("PRAGMA page_size").fetchone()[0]
    finally:
        con.close()


def test_a_new_store_is_written_once_then_goes_through_wal(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "home")
    assert not store.wal and _mode(store.path) == ("delete", PAGE_SIZE)
    collect([MATCH], store, Registry())
    assert store.wal and _mode(store.path) == ("wal", PAGE_SIZE)
    store.close()
    again = Store.open(tmp_path / "home")
    assert again.wal
    again.close()


def test_a_store_of_an_earlier_asz_keeps_its_pages_and_wal(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    con = sqlite3.connect(home / "asz.db")
    con.execute("PRAGMA journal_mode=WAL")
    con.close()
    store = Store.open(home)
    assert store.wal and _mode(store.path) == ("wal", 4096)
    store.close()


def test_while_a_new_store_is_first_written_a_second_writer_is_told_it_is_busy(tmp_path: Path) -> None:
    one = Store.open(tmp_path)
    with one.writing() as w:
        w.bind_session("s", None, "claudecode")
        with pytest.raises(StoreError, match="is busy .*another asz is writing"):
            two = Store(one.path)
            two.db.execute("PRAGMA busy_timeout = 50")
            with two.writing():
                pass
    reader = Store(one.path)  # what was committed, read
    assert [c.id for c in reader.conversations()] == ["s"]


@pytest.mark.parametrize("reader", [False, True], ids=["in its own process", "each with its reader process"])
def test_two_collects_started_at_once_on_a_new_store(tmp_path: Path, reader: bool) -> None:
    # With reader processes: the whole corpus, enough to read for a collect to fork one (ASZ_PROCESSES=2:
    # whatever the machine's load).
    project = tmp_path / "project"
    shutil.copytree(CLAUDE_CORPUS if reader else MATCH, project)
    reference = tmp_path / "reference"
    ref = Store.open(reference)
    collect([project], ref, Registry())
    ref.close()
    home = tmp_path / "home"
    env = asz_env(home, ASZ_PROCESSES="2") if reader else asz_env(home)
    procs = [subprocess.Popen([sys.executable, "-c", ASZ_MAIN, "collect", str(project), "--json"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [(p.wait(timeout=300), p.stdout.read(), p.stderr.read()) for p in procs]  # type: ignore[union-attr]
    for code, out, err in results:
        assert "Traceback" not in err, err
        assert code == 0 or "is busy" in err, err
    assert any(code == 0 and json.loads(out)["records_published"] > 1000 for code, out, _ in results)
    assert fingerprint(home / "asz.db") == fingerprint(reference / "asz.db")
    assert _mode(home / "asz.db")[0] == "wal"


def test_a_rollback_journal_is_synced_fully_and_wal_normally(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "home")
    assert store.db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    collect([MATCH], store, Registry())
    assert store.db.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL, in WAL


# A first open killed (SIGKILL) just before its Nth SQL statement runs, in a child process.
_KILLED_OPEN = """
import os, signal, sqlite3, sys
from asz_core import store
n, seen = int(sys.argv[2]), [0]
def trace(sql):
    seen[0] += 1
    if seen[0] == n:
        os.kill(os.getpid(), signal.SIGKILL)
def connect(*a, **k):
    con = sqlite3.connect(*a, **k)
    con.set_trace_callback(trace)
    return con
store.sqlite3 = type(sys)("sqlite3_traced")
store.sqlite3.__dict__.update(sqlite3.__dict__)
store.sqlite3.connect = connect
store.Store(store.Path(sys.argv[1])).close()
"""


def _tables(db: Path) -> set[str]:
    con = sqlite3.connect(db)  # (a first read rolls back what a killed writer left)
    try:
        return {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'index')")}
    finally:
        con.close()


def test_a_new_store_killed_while_it_is_made_is_empty_or_whole_and_then_made_as_new(tmp_path: Path) -> None:
    reference = tmp_path / "reference"
    ref = Store.open(reference)
    whole = _tables(ref.path)
    collect([MATCH], ref, Registry())
    ref.close()
    killed = 0
    for n in range(1, 200):
        home = tmp_path / f"killed-{n}"
        home.mkdir()
        p = subprocess.run([sys.executable, "-c", _KILLED_OPEN, str(home / "asz.db"), str(n)], capture_output=True,
                           text=True, timeout=60)
        if p.returncode == 0:
            break  # the open ran to its end before its Nth statement: every point was passed
        assert p.returncode == -9, p.stderr
        killed += 1
        # One transaction: nothing of the schema, or all of it (never some tables without the others).
        assert _tables(home / "asz.db") in (set(), whole), n
        store = Store.open(home)  # neither refused nor taken for a store an earlier asz made
        assert not store.wal and _mode(store.path) == ("delete", PAGE_SIZE), n
        journals: list[str] = []
        collect([MATCH], store, Registry(),
                progress=lambda *_: journals.append(store.db.execute("PRAGMA journal_mode").fetchone()[0]))
        assert set(journals) == {"delete"}, n  # the first collect's own journal
        assert store.wal
        store.close()
        assert fingerprint(home / "asz.db") == fingerprint(reference / "asz.db"), n
    assert killed >= 5  # the schema's statements, the BEGIN, the COMMIT


@pytest.mark.parametrize("command", [["conversations"], ["conversations", "--json"], ["ledger", "--json"]])
def test_a_read_command_before_the_first_collect_leaves_it_the_first_collect_journal(
        tmp_path: Path, command: list[str]) -> None:
    home = tmp_path / "home"
    r = run_asz(*command, home=home)
    assert r.returncode == 0, r.stderr
    store = Store.open(home)
    assert not store.wal and _mode(store.path) == ("delete", PAGE_SIZE)
    journals: list[str] = []
    collect([MATCH], store, Registry(),
            progress=lambda *_: journals.append(store.db.execute("PRAGMA journal_mode").fetchone()[0]))
    assert journals and set(journals) == {"delete"}
    assert store.wal and _mode(store.path) == ("wal", PAGE_SIZE)  # WAL from then on
    store.close()
    assert Store.open(home).wal


def test_a_collect_that_stores_nothing_leaves_a_new_store_its_first_collect_journal(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "home")
    with store.writing():
        pass
    assert not store.wal and _mode(store.path) == ("delete", PAGE_SIZE)
    store.close()


def test_a_store_an_earlier_asz_was_killed_making_table_by_table_is_completed(tmp_path: Path) -> None:
    # An earlier asz made each table in its own transaction: killed between two, it left some.
    home = tmp_path / "home"
    home.mkdir()
    con = sqlite3.connect(home / "asz.db")
    con.execute(f"PRAGMA page_size={PAGE_SIZE}")
    con.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    con.execute("CREATE TABLE conversations(id TEXT PRIMARY KEY, runtime TEXT NOT NULL, created TEXT NOT NULL)")
    con.commit()
    con.close()
    store = Store.open(home)
    assert not store.wal and _mode(store.path) == ("delete", PAGE_SIZE)
    assert collect([MATCH], store, Registry()).records_published > 0
    store.close()


def test_a_store_an_earlier_asz_made_without_a_later_table_is_completed(tmp_path: Path) -> None:
    # A store of this schema version whose asz had no `leans` table yet (nor, here, one index):
    # its schema row is there, so only a look at every table and index finds what it lacks.
    home = tmp_path / "home"
    store = Store.open(home)
    collect([MATCH], store, Registry())
    store.close()
    con = sqlite3.connect(home / "asz.db")
    con.execute("DROP TABLE leans")
    con.execute("DROP INDEX calls_conversation")
    con.commit()
    con.close()
    store = Store.open(home)
    assert {"leans", "calls_conversation"} <= _tables(store.path)
    store.close()
    r = run_asz("collect", str(CLAUDE_CORPUS), home=home)  # writes lean rows into the table made
    assert r.returncode == 0, r.stderr
    assert run_asz("ledger", "--json", home=home).returncode == 0
    assert db_rows(home / "asz.db", "SELECT count(*) FROM leans")[0][0] > 0


def test_an_open_while_another_asz_makes_the_store_waits_and_finds_it_made(tmp_path: Path) -> None:
    # The other asz has made the tables in its transaction, not committed yet: this open finds
    # nothing, waits for that transaction, then adds nothing and writes no second schema row.
    import threading

    from asz_core import store as store_module

    home = tmp_path / "home"
    home.mkdir()
    other = sqlite3.connect(home / "asz.db", isolation_level=None, check_same_thread=False)
    other.execute(f"PRAGMA page_size={PAGE_SIZE}")
    other.executescript(store_module._MAKE.replace("COMMIT;\n", ""))
    commit = threading.Timer(0.5, lambda: other.execute("COMMIT"))
    commit.start()
    try:
        store = Store.open(home)
    finally:
        commit.join()
        other.close()
    assert db_rows(store.path, "SELECT key, value FROM meta") == [("schema", str(store_module.SCHEMA_VERSION))]
    assert not store.wal and _mode(store.path) == ("delete", PAGE_SIZE)
    assert collect([MATCH], store, Registry()).records_published > 0
    store.close()


@pytest.mark.parametrize("version", ["1", "3", "two"])
def test_a_store_of_another_schema_version_is_refused_as_it_is(tmp_path: Path, version: str) -> None:
    # An earlier (or later) asz's store: a clear error naming its version, and nothing added to
    # it (no table of this version's, no change of journal), so the asz it belongs to reads it as before.
    home = tmp_path / "home"
    home.mkdir()
    con = sqlite3.connect(home / "asz.db")
    con.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    con.execute("CREATE TABLE records(seq INTEGER PRIMARY KEY, conversation TEXT NOT NULL)")
    con.execute("INSERT INTO meta VALUES('schema', ?)", (version,))
    con.execute("INSERT INTO records VALUES(1, 'c')")
    con.commit()
    con.close()
    before = _tables(home / "asz.db")
    with pytest.raises(StoreError, match=f"has store schema {version}; this asz reads 2"):
        Store.open(home)
    assert _tables(home / "asz.db") == before and "leans" not in before
    assert _mode(home / "asz.db")[0] == "delete"
    r = run_asz("conversations", home=home)
    assert r.returncode != 0 and f"has store schema {version}" in r.stderr and "Traceback" not in r.stderr
