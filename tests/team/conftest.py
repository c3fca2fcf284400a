"""The team database for these tests: a schema of each test's own in the session's PostgreSQL
database (made and dropped by tests/conftest.py: without PostgreSQL they skip saying why, or fail
where $ASZ_REQUIRE_POSTGRES is set, as .ci/run sets it)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def team_db(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The team database of one test (a schema of its own in the session's PostgreSQL database,
    tests/conftest.py's pg_url), as $ASZ_JOBS."""
    monkeypatch.setenv("ASZ_JOBS", pg_url)
    monkeypatch.delenv("ASZ_STORE", raising=False)
    return pg_url


ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "claude-code"
SCRIPT = ROOT / "examples" / "scripted-5e1f0c2a.yaml"
EXAMPLE_ID = "5e1f0c2a-7b3d-4c8e-9a61-0d2f4b8c9e13"
