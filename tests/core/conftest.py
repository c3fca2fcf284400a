"""Fixtures of the core tests: a clean plugin environment, the fake plugin distribution installed
(on a sys.path folder for in-process tests, and in a throwaway venv for `asz` run as a command)."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import need_corpus

from .helpers import CLAUDE_CORPUS, CORPUS, FAKE_PLUGIN, PLUGIN_ENV

CODEX_SESSIONS = CORPUS / "codex" / "langchain-ai__langsmith-codex-plugins" / "plugins" / "tracing" / "test" / "sessions"


@pytest.fixture(autouse=True)
def _clean_plugin_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PLUGIN_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The Claude Code corpus, or the test is skipped. Session-scoped, so it is set up (and skips)
    before any module fixture that copies corpus files."""
    need_corpus(CLAUDE_CORPUS)
    return CLAUDE_CORPUS


@pytest.fixture(scope="session")
def mixed(tmp_path_factory: pytest.TempPathFactory):
    """The Claude Code corpus and the Codex sessions (two ids start 019dbc02) in one store, read only."""
    from asz_core.collect import collect
    from asz_core.store import Store

    need_corpus(CLAUDE_CORPUS, CODEX_SESSIONS)
    s = Store.open(tmp_path_factory.mktemp("mixed"))
    collect([CLAUDE_CORPUS, CODEX_SESSIONS], s)
    yield s
    s.close()


def _pip_install(python: str, *args: str) -> None:
    # --isolated: no user or site pip configuration; --no-index: nothing is downloaded.
    subprocess.run([python, "-m", "pip", "install", "--isolated", "--no-index", "--no-deps", "--no-build-isolation",
                    "--quiet", *args, str(FAKE_PLUGIN)], check=True, capture_output=True, timeout=300)


@pytest.fixture(scope="session")
def fake_plugin_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the installed fake plugin (package + dist-info), built by pip from tests/fake_plugin."""
    site = tmp_path_factory.mktemp("fake-plugin-site")
    _pip_install(sys.executable, "--target", str(site))
    assert (site / "asz_fake_plugin-0.3.1.dist-info" / "entry_points.txt").is_file()
    return site


def _forget_fake_modules() -> None:
    for name in [m for m in sys.modules if m == "asz_fake_plugin" or m.startswith("asz_fake_plugin.")]:
        del sys.modules[name]


@pytest.fixture
def fake_plugin(fake_plugin_site: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The fake plugin distribution visible to this process (its folder on sys.path) for one test."""
    _forget_fake_modules()
    monkeypatch.syspath_prepend(str(fake_plugin_site))
    yield fake_plugin_site
    _forget_fake_modules()


@pytest.fixture(scope="session")
def plugin_venv(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A throwaway venv that sees this project's environment (asz and its first-party plugins) and
    has the fake plugin pip-installed into it. Returns its python."""
    venv = tmp_path_factory.mktemp("plugin-venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    purelib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    # `venv --system-site-packages` would expose the base interpreter, not this project's venv:
    # add this environment's site-packages (with its .pth files: the editable installs) instead.
    ours = sysconfig.get_paths()["purelib"]
    Path(purelib, "asz_test_parent_env.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    _pip_install(python)
    return python
