"""Shared fixtures. The corpus is read from ../shared/corpus, never copied into the project."""

from __future__ import annotations

import os
from pathlib import Path

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
