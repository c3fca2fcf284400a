"""The PostgreSQL store (docs/store.md, "Backends"): chosen by ASZ_STORE or asz.yaml's ``store:``;
every command that reads a store says on it what it says on the SQLite file; its schema is
versioned and migrated forward in code; a store of a later version is refused as it is. (The
store's own behaviour runs on both backends in test_store.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from asz_core.collect import collect
from asz_core.errors import StoreError
from asz_core.store import Store
from tests.conftest import CLAUDE_CORPUS, pg_schema_url

from .helpers import db_rows, fingerprint

ASZ = Path(sys.executable).parent / "asz"
ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "claude-code"
SCRIPT = ROOT / "examples" / "scripted-5e1f0c2a.yaml"


def _asz(*args: str, home: Path, store: str | None = None, cwd: Path | None = None,
         token: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("ASZ_STORE", "ASZ_TOKEN")}
    env["ASZ_HOME"] = str(home)
    if token:
        env["ASZ_TOKEN"] = token
    if store:
        env["ASZ_STORE"] = store
    return subprocess.run([str(ASZ), *args], env=env, capture_output=True, text=True, timeout=300, cwd=cwd)


@pytest.fixture(scope="module")
def both(pg_database: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The Claude Code corpus and the bundled example collected by `asz collect` into a SQLite store
    and into a PostgreSQL store."""
    if not CLAUDE_CORPUS.exists():
        pytest.skip(f"corpus not found: {CLAUDE_CORPUS}")
    lite, pg = tmp_path_factory.mktemp("lite"), tmp_path_factory.mktemp("pg")
    url = pg_schema_url(pg_database)
    for home, store in ((lite, None), (pg, url)):
        for what in (CLAUDE_CORPUS, EXAMPLE):
            r = _asz("collect", str(what), "--json", home=home, store=store)
            assert r.returncode == 0, r.stderr
    return {"lite": lite, "pg": pg, "url": url}


@pytest.mark.parametrize("command", [
    ("conversations", "--json"),
    ("conversations",),
    ("ledger", "--json"),
    ("ledger", "--by", "model"),
    ("ledger", "fa812bfe", "--json", "--by", "talk"),
    ("show", "fa812bfe", "--json"),
    ("show", "b277cc60", "--talk", "k2", "--json"),
    ("show", "9fdc1632", "--head", "r1"),
    ("show", "5e1f0c2a", "--operations", "--json"),
    ("runs",),
], ids=lambda c: " ".join(c))
def test_every_reading_command_says_on_postgresql_what_it_says_on_sqlite(both: dict[str, Any], command: tuple[str, ...]) -> None:
    a = _asz(*command, home=both["lite"])
    b = _asz(*command, home=both["pg"], store=both["url"])
    assert a.returncode == b.returncode == 0, (a.stderr, b.stderr)
    assert len(a.stdout) > 20 and b.stdout == a.stdout
    assert b.stderr == a.stderr


def judged_example(home: Path, store: str | None, *extra: str, token: str | None = None) -> dict[str, Any]:
    """``asz judge`` of the bundled example by its script: the run's files, without what names the run."""
    r = _asz("judge", "5e1f0c2a", "--evaluator", f"scripted:{SCRIPT}", "--json", *extra, home=home, store=store, token=token)
    assert r.returncode == 0, r.stderr
    run = Path(json.loads(r.stdout)["path"])
    assert run.parent.parent == home / "runs"  # runs are written under ASZ_HOME, whichever the store
    return {f.name: without_run_names(json.loads(f.read_text()))
            for f in sorted([run / "close.json", *(run / "stages").glob("*.json")])}


def test_judge_and_its_navigation_server_read_the_postgresql_store(both: dict[str, Any]) -> None:
    judged = [judged_example(both["lite"], None), judged_example(both["pg"], both["url"])]
    assert judged[0] == judged[1] and len(judged[0]) >= 6
    assert judged[1]["close.json"]["statement"]["targets"]
    listed = _asz("runs", "5e1f0c2a", "--json", home=both["pg"], store=both["url"])
    assert listed.returncode == 0 and len(json.loads(listed.stdout)) == 1, listed.stderr

    async def card(s: Any) -> Any:
        got = await s.call_tool("card", {})
        return json.loads(got.content[0].text)

    from mcp import ClientSession, StdioServerParameters, stdio_client

    async def session(env: dict[str, str]) -> Any:
        params = StdioServerParameters(command=str(ASZ), args=["judge", "mcp", "fa812bfe", "--window", "k2"], env=env)
        with anyio.fail_after(120):
            async with stdio_client(params) as (r, w):
                async with ClientSession(r, w) as s:
                    await s.initialize()
                    return await card(s)

    base = {k: v for k, v in os.environ.items() if k != "ASZ_STORE"}
    lite = anyio.run(session, {**base, "ASZ_HOME": str(both["lite"])})
    pg = anyio.run(session, {**base, "ASZ_HOME": str(both["pg"]), "ASZ_STORE": both["url"]})
    assert without_run_names(pg) == without_run_names(lite) and pg["window"]["judged"]["first"] == "k2"


def without_run_names(run: Any) -> Any:
    """A run's JSON without what names this run or its moment (its id, folders, times)."""
    if isinstance(run, dict):
        return {k: without_run_names(v) for k, v in run.items()
                if not (k == "per_minute" or "seconds" in k or isinstance(v, (str, int, float)) and k in (
                    "run", "path", "kit_path", "started", "ended", "finished", "wall", "landed", "closed", "at", "ms"))}
    if isinstance(run, list):
        return [without_run_names(v) for v in run]
    return run


# -- which store --------------------------------------------------------------------------------------

def test_asz_yaml_or_asz_store_chooses_the_postgresql_store(pg_url: str, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from asz_core.store_pg import PgStore

    home = tmp_path / "home"
    monkeypatch.setenv("ASZ_HOME", str(home))
    monkeypatch.delenv("ASZ_STORE", raising=False)
    monkeypatch.chdir(tmp_path)
    st = Store.open()
    assert type(st) is Store and st.path == home / "asz.db"  # nothing set: the SQLite file, as ever
    st.close()
    (tmp_path / "asz.yaml").write_text(f"judge:\n  mode: auto\nstore: {pg_url}\n")
    from asz_core.config_trust import UntrustedConfig, trust

    with pytest.raises(UntrustedConfig):  # a folder's store: only once trusted (it could take every conversation)
        Store.open()
    trust()
    st = Store.open()
    assert isinstance(st, PgStore) and st.url == pg_url
    st.close()
    (tmp_path / "asz.yaml").unlink()
    home.mkdir(parents=True, exist_ok=True)
    (home / "asz.yaml").write_text(f"store: '{pg_url}'\n")
    st = Store.open()
    assert isinstance(st, PgStore)
    st.close()
    (home / "asz.yaml").unlink()
    monkeypatch.setenv("ASZ_STORE", pg_url)
    st = Store.open()
    assert isinstance(st, PgStore)
    st.close()
    assert type(Store.open(tmp_path / "given")) is Store  # a home given: its SQLite file
    for bad in ("mysql://x/y", "/tmp/asz.db"):
        monkeypatch.setenv("ASZ_STORE", bad)
        with pytest.raises(StoreError, match="is not a postgresql:// or http"):
            Store.open()


def test_an_unreachable_or_missing_database_is_a_clear_error(tmp_path: Path, pg_database: str) -> None:
    for url, says in (("postgresql://postgres:secret@127.0.0.1:1/nothing", "cannot reach the store postgresql://postgres:\\*\\*\\*@"),
                      (pg_database.rsplit("/", 1)[0] + "/asz_no_such_database", "cannot reach the store .*does not exist")):
        r = _asz("conversations", home=tmp_path, store=url)
        assert r.returncode == 1 and "Traceback" not in r.stderr and "secret" not in r.stderr
        assert __import__("re").search(says, r.stderr), r.stderr
    r = _asz("server", "token", "add", "laptop", home=tmp_path)  # the SQLite store: no server
    assert r.returncode == 1 and "asz server serves a PostgreSQL store" in r.stderr and "Traceback" not in r.stderr


# -- the schema ---------------------------------------------------------------------------------------

def test_a_store_of_an_earlier_schema_is_migrated_forward_keeping_what_it_holds(pg_url: str, tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from asz_core.store_pg import SCHEMA_VERSION, PgStore

    monkeypatch.setenv("ASZ_HOME", str(tmp_path))
    old = PgStore(pg_url, migrate_to=1)  # what an asz before `asz server` made
    collect([EXAMPLE], old)
    assert db_rows(old, "SELECT value FROM meta WHERE key = 'schema'") == [("1",)]
    assert db_rows(old, "SELECT to_regclass('tokens')::text") == [(None,)]
    held = fingerprint(old)
    old.close()
    new = PgStore(pg_url)
    assert db_rows(new, "SELECT value FROM meta WHERE key = 'schema'") == [(str(SCHEMA_VERSION),)]
    assert fingerprint(new) == held and held["records"]
    assert db_rows(new, "SELECT count(*) FROM tokens") == [(0,)]
    assert db_rows(new, "SELECT DISTINCT machine FROM conversations") == [(None,)]  # collected here, not pushed
    assert [c.id for c in new.conversations()] == [c for (c,) in db_rows(new, "SELECT id FROM conversations ORDER BY rowid")]
    collect([EXAMPLE], new)  # and it goes on being written
    new.close()
    again = PgStore(pg_url)  # opened again: nothing to do
    assert fingerprint(again) == held
    again.close()


def test_a_store_of_a_later_schema_is_refused_and_left_as_it_is(pg_url: str, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import psycopg

    from asz_core.store_pg import SCHEMA_VERSION, PgStore

    monkeypatch.setenv("ASZ_HOME", str(tmp_path))
    st = PgStore(pg_url)
    collect([EXAMPLE], st)
    st.close()
    with psycopg.connect(pg_url, autocommit=True) as c:
        c.execute("UPDATE meta SET value = '99' WHERE key = 'schema'")
        c.execute("ALTER TABLE records RENAME COLUMN events TO events_v99")
        tables = c.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1").fetchall()
    with pytest.raises(StoreError, match=f"has store schema 99; this asz reads up to {SCHEMA_VERSION} "):
        PgStore(pg_url)
    with psycopg.connect(pg_url, autocommit=True) as c:
        assert c.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1").fetchall() == tables
        assert c.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == ("99",)
    r = _asz("conversations", home=tmp_path, store=pg_url)
    assert r.returncode == 1 and "has store schema 99" in r.stderr and "Traceback" not in r.stderr


def test_two_asz_making_a_new_store_at_once_make_it_once(pg_url: str, tmp_path: Path) -> None:
    procs = [subprocess.Popen([str(ASZ), "conversations", "--json"], env={**os.environ, "ASZ_HOME": str(tmp_path / str(i)),
                                                                          "ASZ_STORE": pg_url},
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(4)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, [o[1] for o in outs]
    from asz_core.store_pg import SCHEMA_VERSION

    assert db_rows(type("S", (), {"url": pg_url})(), "SELECT key, value FROM meta") == [("schema", str(SCHEMA_VERSION))]


def test_a_record_postgresql_cannot_hold_is_skipped_with_a_warning_and_the_rest_lands(pg_url: str, tmp_path: Path,
                                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from asz_core.store_pg import PgStore

    monkeypatch.setenv("ASZ_HOME", str(tmp_path))
    f = tmp_path / "nul" / "1f0e2d3c-0000-4000-8000-0000000000aa.jsonl"
    f.parent.mkdir()
    good = {"type": "user", "uuid": "u-1", "sessionId": f.stem, "timestamp": "2025-01-01T00:00:00Z",
            "message": {"role": "user", "content": "hello"}}
    bad = dict(good, uuid="u-\u0000-2", timestamp="2025-01-01T00:00:01Z")
    after = dict(good, uuid="u-3", timestamp="2025-01-01T00:00:02Z")
    f.write_text("".join(json.dumps(x) + "\n" for x in (good, bad, after)))
    st = PgStore(pg_url)
    r = collect([f], st)
    assert any("NUL" in p.message for p in r.problems), r.problems
    assert [k for (k,) in db_rows(st, "SELECT key FROM records ORDER BY seq")] == ["u-1", "u-3"]
    assert collect([f], st).rounds == ()  # read to its end: not read again
    st.close()
