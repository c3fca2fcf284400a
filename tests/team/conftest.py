"""The team database for these tests: a PostgreSQL database of their own on the machine's server
(127.0.0.1:5432, or $ASZ_TEST_PG), made per test and dropped after it. Without a server the tests
skip saying why, unless $ASZ_REQUIRE_POSTGRES is set (as .ci/run sets it): then they fail."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import pytest

SERVER = os.environ.get("ASZ_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")


def _admin():
    try:
        import psycopg
    except ImportError as exc:
        return None, f"psycopg is not installed ({exc}): kit/setup installs asz-core[team]"
    try:
        return psycopg.connect(SERVER, autocommit=True, connect_timeout=5), None
    except psycopg.Error as exc:
        return None, f"no PostgreSQL at {SERVER}: {str(exc).strip().splitlines()[0]}"


@pytest.fixture
def team_db(monkeypatch: pytest.MonkeyPatch) -> str:
    admin, why = _admin()
    if admin is None:
        if os.environ.get("ASZ_REQUIRE_POSTGRES"):
            pytest.fail(f"ASZ_REQUIRE_POSTGRES is set and {why}")
        pytest.skip(why)
    name = "asz_team_" + secrets.token_hex(6)
    admin.execute(f'CREATE DATABASE "{name}"')
    url = SERVER.rsplit("/", 1)[0] + "/" + name
    monkeypatch.setenv("ASZ_JOBS", url)
    try:
        yield url
    finally:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "claude-code"
SCRIPT = ROOT / "examples" / "scripted-5e1f0c2a.yaml"
EXAMPLE_ID = "5e1f0c2a-7b3d-4c8e-9a61-0d2f4b8c9e13"
