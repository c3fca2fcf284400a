"""`asz collect` with no path reads every installed runtime's own folders."""

from __future__ import annotations

import shutil

from typer.testing import CliRunner

from asz_core.cli import app
from tests.conftest import CORPUS, skip_without_corpus

CC = CORPUS / "claude-code/d-kimuson__claude-code-viewer/mock-global-claude-dir/projects/sample-project/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"
CODEX = next((CORPUS / "codex").rglob("rollout-*.jsonl"), None)


@skip_without_corpus(CC)
def test_no_path_reads_each_runtime_home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.setenv("ASZ_HOME", str(tmp_path / "asz"))
    (home / ".claude/projects/sample").mkdir(parents=True)
    shutil.copy(CC, home / ".claude/projects/sample" / CC.name)
    runtimes = {"claudecode"}
    if CODEX is not None:
        (home / ".codex/sessions/2025/01/01").mkdir(parents=True)
        shutil.copy(CODEX, home / ".codex/sessions/2025/01/01" / CODEX.name)
        runtimes.add("codex")
    res = CliRunner().invoke(app, ["collect", "--json"])
    assert res.exit_code == 0, res.output
    rows = CliRunner().invoke(app, ["conversations", "--json"])
    import json

    got = {r["runtime"] for r in json.loads(rows.stdout)}
    assert got == runtimes


def test_no_path_and_no_transcripts_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "empty"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.setenv("ASZ_HOME", str(tmp_path / "asz"))
    from asz_core.api import collect_paths
    from asz_core.errors import AszError

    try:
        collect_paths(None)
    except AszError as exc:
        assert "name a path" in str(exc)
    else:
        raise AssertionError("collect with nothing anywhere must fail")
