"""`asz judge` with no evaluator: the first available (claude on the PATH and logged in, else an
API key in the environment), said; with none, what to set up. `--evaluator NAME:MODEL` names one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from asz_core.errors import ConfigError
from asz_core.judge import pick as picking
from asz_core.registry import Registry

from .cli_fakes import FakeAnthropic
from .cli_helpers import CLAUDE, _clean_env, answer_for, needs_claude, small_conv  # noqa: F401


def pick(evaluators: dict[str, Any]) -> tuple[str, str]:
    """The pick over the installed backends (asz-evaluators's): what `asz judge` with none given does."""
    return picking.pick(Registry(), evaluators)


def _fake_claude(tmp_path: Path, logged_in: bool) -> Path:
    exe = tmp_path / "bin" / "claude"
    exe.parent.mkdir(exist_ok=True)
    status = {"loggedIn": logged_in, "authMethod": "claude.ai" if logged_in else "none"}
    exe.write_text(f"#!/bin/sh\n[ \"$1 $2\" = 'auth status' ] && echo '{json.dumps(status)}'\nexit 0\n")
    exe.chmod(0o755)
    return exe


def test_claude_logged_in_comes_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    exe = _fake_claude(tmp_path, True)
    monkeypatch.setenv("PATH", f"{exe.parent}:/usr/bin:/bin")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-x")
    spec, why = pick({})
    assert spec == "claude" and str(exe) in why and "logged in (claude.ai)" in why


def test_then_an_api_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    exe = _fake_claude(tmp_path, False)  # on the PATH, not logged in
    monkeypatch.setenv("PATH", f"{exe.parent}:/usr/bin:/bin")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    assert pick({}) == ("openai:gpt-5.5", "OPENAI_API_KEY is set; model gpt-5.5 (give --evaluator openai:MODEL for another)")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-y")
    assert pick({"anthropic": {"model": "claude-opus-4-1"}}) == ("anthropic", "ANTHROPIC_API_KEY is set")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "t")
    with pytest.raises(ConfigError, match=r"bedrock evaluator needs a model"):
        pick({})
    assert pick({"bedrock": {"model": "us.deepseek.r1-v1:0"}})[0] == "bedrock"


def test_none_says_what_to_set_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    with pytest.raises(ConfigError) as e:
        pick({})
    msg = str(e.value)
    assert "claude auth login" in msg and "ANTHROPIC_API_KEY" in msg and "--evaluator NAME[:MODEL]" in msg


def test_the_cli_says_what_to_set_up(small_conv: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from asz_core import cli

    store, cid, inputs = small_conv
    monkeypatch.setenv("ASZ_HOME", str(Path(store.path).parent))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    r = CliRunner().invoke(cli.app, ["judge", cid[:8], "--stages", "targets"])
    assert isinstance(r.exception, ConfigError)  # the CLI prints it and exits 1
    assert "none is available here" in str(r.exception) and "claude auth login" in str(r.exception)


@needs_claude
def test_the_cli_picks_claude_and_runs_it(small_conv: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """claude, logged in by an API key, is picked; the run goes through it (against the fake server)."""
    from asz_core import cli

    store, cid, inputs = small_conv
    monkeypatch.setenv("ASZ_HOME", str(Path(store.path).parent))
    monkeypatch.setenv("ASZ_CLAUDE", str(CLAUDE))
    fake = FakeAnthropic([{"answer": answer_for(inputs)}]).start()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-fake")
    try:
        r = CliRunner().invoke(cli.app, ["judge", cid[:8], "--stages", "targets", "--json"])
    finally:
        fake.stop()
    assert r.exit_code == 0, r.output
    assert "evaluator: claude, the first available (the claude CLI is on the PATH" in r.output
    assert "logged in (ANTHROPIC_API_KEY)" in r.output
    data = json.loads(r.output[r.output.index("{"):])
    assert data["run"]["evaluators"]["targets"]["name"] == "claude"
    assert data["stages"]["targets"]["status"] == "complete"
    assert len(fake.sent) == 1
