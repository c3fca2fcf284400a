"""What the daily commands say where a person would otherwise be left guessing (issue 27): an empty
store says to collect, a span that finds nothing says when the newest activity was, -n below 1 is
an error, help names every choice whole and labels no flag, `asz collect -h` names every folder it
reads, and Claude Code's transcripts under ~/.config/claude/projects are read too."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from asz_core.cli import app
from tests.conftest import CLAUDE_CORPUS, need_corpus

CC = CLAUDE_CORPUS / "d-kimuson__claude-code-viewer/mock-global-claude-dir/projects/sample-project/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"
run = CliRunner()


def _out(*args: str, columns: int = 100) -> tuple[int, str]:
    r = run.invoke(app, list(args), env={"COLUMNS": str(columns)})
    return r.exit_code, r.output


def test_an_empty_store_says_to_collect(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASZ_HOME", str(tmp_path / "empty"))
    for cmd in (("ledger",), ("conversations",), ("ledger", "--by", "day"), ("ledger", "--by", "month"), ("ledger", "--by", "block")):
        code, out = _out(*cmd)
        assert code == 0 and "nothing collected yet: run `asz collect`" in out and "┃" not in out, (cmd, out)
    # a command given a conversation on an empty store says to collect too, in one line (exit 1)
    from tests.core.helpers import run_asz

    for cmd in (("show", "5e1f0c2a"), ("ledger", "5e1f0c2a"), ("judge", "5e1f0c2a", "--evaluator", "scripted")):
        r = run_asz(*cmd, home=tmp_path / "empty-too")
        code, out = r.returncode, r.stdout + r.stderr
        assert code == 1 and "nothing collected yet" in out and "run `asz collect`" in out and "Traceback" not in out, (cmd, out)


def test_a_span_that_finds_nothing_says_when_the_newest_activity_was(corpus_store, monkeypatch: pytest.MonkeyPatch) -> None:
    from asz_core.ledger import summaries

    monkeypatch.setenv("ASZ_HOME", str(corpus_store.path.parent))
    newest = max(s.last_call for s in summaries(store=corpus_store)[0] if s.last_call)
    shown = f"{newest[:10]} {newest[11:16]}"  # in UTC
    for cmd in (("ledger", "--since", "2099-01-01", "--tz", "UTC"), ("conversations", "--since", "2099-01-01", "--tz", "UTC"),
                ("ledger", "--by", "day", "--since", "2099-01-01", "--tz", "UTC"),
                ("ledger", "--by", "block", "--since", "2099-01-01", "--tz", "UTC")):
        code, out = _out(*cmd, columns=200)
        assert code == 0 and "from 2099-01-01 00:00" in out and "┃" not in out, out
        assert re.search(r"the newest activity collected is \d{4}-\d\d-\d\d \d\d:\d\d", out), out
    code, out = _out("ledger", "--since", "2099-01-01", "--tz", "UTC", columns=200)
    assert shown in out, (shown, out)
    for by in ((), ("--by", "block")):
        code, out = _out("ledger", "--project", "no-such-project-anywhere", *by)
        assert "no model call of project 'no-such-project-anywhere' among" in out, (by, out)


def test_n_below_one_is_an_error(corpus_store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASZ_HOME", str(corpus_store.path.parent))
    for n in ("-3", "0"):
        code, out = _out("conversations", "-n", n)
        assert code == 2 and "--last" in out, out
    assert _out("conversations", "-n", "2")[0] == 0


@pytest.mark.parametrize("width", [60, 80, 120])
def test_help_names_every_choice_whole_and_labels_no_flag(width: int) -> None:
    code, out = _out("ledger", "-h", columns=width)
    assert code == 0
    for choice in ("talk", "stream", "model", "day", "month", "block", "project"):
        assert re.search(rf"(^|[\s|]){choice}([\s|]|$)", out, re.M), (choice, out)
    assert "<bool>" not in out and "<str>" not in out and "<list" not in out
    json_line = next(ln for ln in out.splitlines() if "--json" in ln)
    assert "bool" not in json_line.lower()
    for cmd in (("collect", "-h"), ("conversations", "-h"), ("judge", "-h"), ("runs", "-h"), ("show", "-h")):
        code, out = _out(*cmd, columns=width)
        assert code == 0 and "<bool>" not in out, (cmd, out)


def test_collect_help_names_every_default_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from asz_core.collect import default_places

    home = tmp_path / "h"
    (home / ".claude/projects").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    for v in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(v, raising=False)
    places = default_places()
    assert {str(p) for _, p, _ in places} >= {str(home / ".config/claude/projects"), str(home / ".claude/projects"),
                                              str(home / ".codex/sessions")}
    code, out = _out("collect", "-h", columns=300)
    assert code == 0
    for name, p, here in places:
        line = next((ln for ln in out.splitlines() if f"{name}: {p}" in ln), None)
        assert line is not None, (p, out)
        assert ("not on this machine" in line) == (not here), line


def test_claude_code_under_dot_config_is_collected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    need_corpus(CC)
    home = tmp_path / "h"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("ASZ_HOME", str(tmp_path / "asz"))
    for v in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(v, raising=False)
    (home / ".config/claude/projects/sample").mkdir(parents=True)
    shutil.copy(CC, home / ".config/claude/projects/sample" / CC.name)
    r = run.invoke(app, ["collect", "--json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(run.invoke(app, ["conversations", "--json"]).stdout)
    assert [x["id"] for x in rows] == [CC.stem]
    # CLAUDE_CONFIG_DIR, several folders separated by commas, as ccusage reads it
    from asz_adapters_claudecode.adapter import ClaudeCodeAdapter

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", f"{tmp_path}/a, {tmp_path}/b")
    assert ClaudeCodeAdapter().default_paths() == [tmp_path / "a/projects", tmp_path / "b/projects"]
