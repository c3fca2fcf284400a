"""Shared fixtures. The corpus is read from ../shared/corpus, never copied into the project."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("ASZ_CORPUS") or ROOT.parent / "shared" / "corpus")
CLAUDE_CORPUS = CORPUS / "claude-code"


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

    if not CLAUDE_CORPUS.is_dir():
        pytest.skip(f"corpus not found at {CLAUDE_CORPUS}")
    s = Store.open(tmp_path_factory.mktemp("corpus-home"))
    collect([CLAUDE_CORPUS], s)
    yield s
    s.close()
