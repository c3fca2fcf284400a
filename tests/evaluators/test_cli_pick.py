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
from .cli_helpers import (CLAUDE, CODEX, _clean_env, answer_for, fake_kiro, needs_claude, needs_codex,  # noqa: F401
                          small_conv)


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
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    with pytest.raises(ConfigError, match=r"  - bedrock: AWS_BEARER_TOKEN_BEDROCK is set, but no AWS region is set: set "
                                          r"AWS_DEFAULT_REGION, or region in evaluators: \{bedrock: \.\.\.\}\n"):
        pick({"bedrock": {"model": "us.deepseek.r1-v1:0"}})
    assert pick({"bedrock": {"model": "us.deepseek.r1-v1:0", "region": "us-east-1"}})[0] == "bedrock"
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-west-2")
    assert pick({"bedrock": {"model": "us.deepseek.r1-v1:0"}})[0] == "bedrock"


def _fake_cli(tmp_path: Path, name: str, version: str | None, login: tuple[int, str] | None = None) -> Path:
    """A fake agent CLI on its own bin folder: ``--version`` says ``version`` (or fails when None);
    ``login status`` exits with ``login``'s code, saying its text on stderr, as codex 0.171 does."""
    exe = tmp_path / f"bin-{name}" / name
    exe.parent.mkdir(parents=True, exist_ok=True)
    body = ["#!/bin/sh", f'[ "$1" = "--version" ] && {{ echo "{version}"; exit 0; }}' if version else
            '[ "$1" = "--version" ] && { echo "error: no such option" >&2; exit 2; }']
    if login is not None:
        body.append(f'[ "$1 $2" = "login status" ] && {{ echo "{login[1]}" >&2; exit {login[0]}; }}')
    body.append("exit 3")
    exe.write_text("\n".join(body) + "\n")
    exe.chmod(0o755)
    return exe


def test_codex_logged_in_is_picked_after_claude_and_the_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    codex = _fake_cli(tmp_path, "codex", "codex-cli 0.171.0", (0, "Logged in using ChatGPT"))
    claude = _fake_claude(tmp_path, True)
    monkeypatch.setenv("PATH", f"{codex.parent}:/usr/bin:/bin")
    spec, why = pick({})
    assert spec == "codex" and why == f"the codex CLI is on the PATH ({codex}, codex-cli 0.171.0) and logged in (ChatGPT)"
    assert pick({"codex": {"model": "gpt-5.5"}})[0] == "codex:gpt-5.5"
    monkeypatch.setenv("PATH", f"{claude.parent}:{codex.parent}:/usr/bin:/bin")
    assert pick({})[0] == "claude"
    monkeypatch.setenv("PATH", f"{codex.parent}:/usr/bin:/bin")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-x")
    assert pick({})[0].startswith("anthropic")


def test_codex_not_logged_in_or_not_running_is_not_picked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = _fake_cli(tmp_path, "codex", "codex-cli 0.171.0", (1, "Not logged in"))
    monkeypatch.setenv("PATH", f"{out.parent}:/usr/bin:/bin")
    with pytest.raises(ConfigError) as e:
        pick({})
    assert f"  - codex: the codex CLI ({out}) is not logged in: run `codex login`" in str(e.value)
    monkeypatch.setenv("CODEX_API_KEY", "sk-x")  # codex exec takes it without a login
    assert pick({}) == ("codex", f"the codex CLI is on the PATH ({out}, codex-cli 0.171.0) and CODEX_API_KEY is set")
    # Logged in, by its word, but it cannot say its version (not codex, or broken): not taken to run.
    broken = _fake_cli(tmp_path / "b", "codex", None, (0, "Logged in using ChatGPT"))
    monkeypatch.setenv("ASZ_CODEX", str(broken))
    with pytest.raises(ConfigError) as e:
        pick({})
    assert f"codex: the codex CLI ({broken}) cannot be run: `{broken} --version` failed (exit code 2)" in str(e.value)
    monkeypatch.setenv("ASZ_CODEX", str(tmp_path / "nowhere" / "codex"))
    with pytest.raises(ConfigError, match=r"codex: the codex CLI \(.*nowhere/codex\) cannot be run: it does not run"):
        pick({})


def test_kiro_cli_is_picked_last_when_logged_in_or_given_its_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kiro = fake_kiro(tmp_path / "bin-kiro")
    monkeypatch.setenv("PATH", f"{kiro.parent}:/usr/bin:/bin")
    monkeypatch.setenv("FAKE_KIRO_LOGIN", "none")  # `kiro-cli whoami`: "Not logged in", exit code 1
    with pytest.raises(ConfigError) as e:
        pick({})
    assert f"  - kiro-cli: kiro-cli ({kiro}) is not logged in: run `kiro-cli login` (or set KIRO_API_KEY)\n" in str(e.value)
    monkeypatch.setenv("KIRO_API_KEY", "k")
    assert pick({}) == ("kiro-cli", f"kiro-cli is on the PATH ({kiro}, kiro-cli 0.0.0-fake) and KIRO_API_KEY is set")
    monkeypatch.delenv("KIRO_API_KEY")
    monkeypatch.delenv("FAKE_KIRO_LOGIN")  # "Logged in with Builder ID", exit code 0
    assert pick({}) == ("kiro-cli", f"kiro-cli is on the PATH ({kiro}, kiro-cli 0.0.0-fake) and logged in (Builder ID)")
    codex = _fake_cli(tmp_path, "codex", "codex-cli 0.171.0", (0, "API key configured - sk-***1"))
    monkeypatch.setenv("PATH", f"{kiro.parent}:{codex.parent}:/usr/bin:/bin")
    assert pick({}) == ("codex", f"the codex CLI is on the PATH ({codex}, codex-cli 0.171.0) and logged in (an API key)")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    with pytest.raises(ConfigError, match=r"install kiro-cli, run `kiro-cli login` \(or set KIRO_API_KEY\)"):
        pick({})


def test_codex_with_a_model_provider_of_asz_yaml_needs_its_key_not_a_login(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    out = _fake_cli(tmp_path, "codex", "codex-cli 0.171.0", (1, "Not logged in"))
    monkeypatch.setenv("PATH", f"{out.parent}:/usr/bin:/bin")
    own = {"config": {"model_provider": "local", "model_providers.local.env_key": "LOCAL_KEY"}}
    with pytest.raises(ConfigError) as e:
        pick({"codex": own})
    assert ("  - codex: the codex CLI's model provider local (asz.yaml) reads its key from LOCAL_KEY, which is not set\n"
            in str(e.value))
    monkeypatch.setenv("LOCAL_KEY", "k")
    assert pick({"codex": own}) == ("codex", f"the codex CLI is on the PATH ({out}, codex-cli 0.171.0) with the model "
                                             "provider local of asz.yaml (LOCAL_KEY is set)")
    nested = {"config": {"model_provider": "ollama", "model_providers": {"ollama": {"base_url": "http://127.0.0.1:1/v1"}}}}
    assert pick({"codex": nested})[1].endswith("with the model provider ollama of asz.yaml")  # one that needs no key
    with pytest.raises(ConfigError, match="is not logged in"):  # OpenAI's own provider: the login, as before
        pick({"codex": {"config": {"model_provider": "openai"}}})


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


@needs_codex
def test_the_real_codex_says_whether_it_is_logged_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """codex 0.171 itself: not logged in with an empty CODEX_HOME; logged in once a key is saved
    (`codex login --with-api-key` only writes it: the key is checked when a request is sent)."""
    import subprocess

    from asz_evaluators.codex import CodexEvaluator

    home = tmp_path / "codex-home"
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    a = CodexEvaluator.available({"command": str(CODEX)})
    assert not a.ok and "is not logged in" in a.why
    subprocess.run([str(CODEX), "login", "--with-api-key"], input="sk-test-0000000000", text=True, check=True,
                   capture_output=True, timeout=60)
    a = CodexEvaluator.available({"command": str(CODEX)})
    assert a.ok and a.why.endswith("and logged in (an API key)") and "codex-cli 0.171.0" in a.why
