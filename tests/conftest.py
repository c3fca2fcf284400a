"""Shared fixtures. The corpus is read from ../shared/corpus, never copied into the project."""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("ASZ_CORPUS") or ROOT.parent / "shared" / "corpus")
CLAUDE_CORPUS = CORPUS / "claude-code"


def without_corpus(*paths: Path) -> str | None:
    """Why a test that reads these corpus paths cannot run here (the first one missing), or None.
    A clone without ../shared beside it runs every other test and skips these, saying why."""
    missing = next((p for p in paths or (CORPUS,) if not p.exists()), None)
    if missing is None:
        return None
    return f"corpus not found: {missing} (tests read ../shared/corpus beside the repository, or $ASZ_CORPUS)"


def skip_without_corpus(*paths: Path) -> pytest.MarkDecorator:
    """A mark that skips a test (or a module, as ``pytestmark``) when a corpus path it reads is missing."""
    why = without_corpus(*paths)
    return pytest.mark.skipif(why is not None, reason=why or "")


def need_corpus(*paths: Path) -> None:
    """In a fixture or a test: skip it, saying why, when a corpus path it reads is missing."""
    why = without_corpus(*paths)
    if why:
        pytest.skip(why)


@pytest.fixture
def asz_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh ASZ_HOME per test."""
    home = tmp_path / "asz-home"
    monkeypatch.setenv("ASZ_HOME", str(home))
    return home


@pytest.fixture
def store(asz_home: Path):
    from asz_core.store import Store

    s = Store.open(asz_home)
    yield s
    s.close()


@pytest.fixture(scope="session")
def corpus_store(tmp_path_factory: pytest.TempPathFactory):
    """The whole Claude Code corpus collected once into a store shared by read-only tests."""
    from asz_core.collect import collect
    from asz_core.store import Store

    need_corpus(CLAUDE_CORPUS)
    s = Store.open(tmp_path_factory.mktemp("corpus-home"))
    collect([CLAUDE_CORPUS], s)
    yield s
    s.close()


@pytest.fixture
def corpus_store_copy(corpus_store, tmp_path: Path):
    """A store of its own holding the corpus store's records (a copy of its file): its caches and
    runs start empty and are this test's alone."""
    import shutil

    from asz_core.store import Store

    d = tmp_path / "home-copy"
    d.mkdir()
    shutil.copyfile(corpus_store.path, d / "asz.db")
    s = Store.open(d)
    yield s
    s.close()


# --- PostgreSQL -------------------------------------------------------------------------------------

PG_ADMIN = os.environ.get("ASZ_TEST_POSTGRES") or "postgresql://postgres@127.0.0.1:5432/postgres"
"""The machine's PostgreSQL, where each test session makes a database of its own (and drops it)."""


def _no_postgres(why: str) -> None:
    """Skip, saying why; but fail where the PostgreSQL tests must run (.ci/run sets ASZ_REQUIRE_POSTGRES=1)."""
    if os.environ.get("ASZ_REQUIRE_POSTGRES"):
        pytest.fail(f"{why}, and ASZ_REQUIRE_POSTGRES is set: the PostgreSQL tests must run here", pytrace=False)
    pytest.skip(why)


@pytest.fixture(scope="session")
def pg_database() -> Iterator[str]:
    """A database of this test session's own on the machine's PostgreSQL (``ASZ_TEST_POSTGRES``,
    default postgres@127.0.0.1:5432), dropped at the end: its URL."""
    try:
        import psycopg
    except ImportError as exc:
        _no_postgres(f"psycopg is not installed ({exc}); run kit/setup")
    try:
        admin = psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=5)
    except psycopg.Error as exc:
        _no_postgres(f"no PostgreSQL at {PG_ADMIN} ({str(exc).strip().splitlines()[0] if str(exc).strip() else exc!r})")
    name = f"asz_test_{os.getpid()}_{secrets.token_hex(4)}"
    admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield PG_ADMIN.split("?")[0].rsplit("/", 1)[0] + "/" + name
    finally:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


def pg_schema_url(database: str) -> str:
    """A new, empty schema of the session's database, as a store URL (its search_path)."""
    import psycopg

    schema = f"s_{secrets.token_hex(6)}"
    with psycopg.connect(database, autocommit=True) as c:
        c.execute(f'CREATE SCHEMA "{schema}"')
    return f"{database}?options=-csearch_path%3D{schema}"


@pytest.fixture
def pg_url(pg_database: str) -> str:
    """A PostgreSQL store's URL of this test's own (an empty schema of the session's database)."""
    return pg_schema_url(pg_database)


OpenStore = Callable[[Path], Any]
"""``open_store(home)``: the store of that ASZ_HOME, on the backend the test runs with."""


@pytest.fixture(params=["sqlite", "postgresql"])
def open_store(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenStore]:
    """The store tests run on both backends: ``open_store(home)`` gives the SQLite store under
    ``home``, or a PostgreSQL store of its own for each ``home`` (its caches under ``home``)."""
    from asz_core.store import Store

    urls: dict[Path, str] = {}
    opened: list[Any] = []

    def open_(home: Path) -> Any:
        if request.param == "sqlite":
            st = Store.open(home)
        else:
            from asz_core.store_pg import PgStore

            if home not in urls:
                urls[home] = pg_schema_url(request.getfixturevalue("pg_database"))
            monkeypatch.setenv("ASZ_HOME", str(home))
            st = PgStore(urls[home])
        opened.append(st)
        return st

    yield open_
    for st in opened:
        st.close()
