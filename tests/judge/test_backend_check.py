"""A backend that cannot work fails before the run starts, saying what to set up; no run is made."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from asz_core.judge import runner
from asz_core.errors import AszError

from .conftest import cid_with


@pytest.mark.parametrize(("spec", "says"), [
    ("claude", "needs the claude CLI"),
    ("codex", "needs the codex CLI"),
    ("kiro-cli", "needs the kiro-cli CLI"),
    ("anthropic", "needs a model"),
    ("openai", "needs a model"),
])
def test_a_backend_that_cannot_work_fails_before_the_run(spec: str, says: str, corpus_store: Any, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))  # no CLI anywhere
    for var in ("ASZ_CLAUDE", "ASZ_CODEX", "ASZ_KIRO_CLI"):
        monkeypatch.delenv(var, raising=False)
    cid = cid_with(corpus_store, 2)
    runs = Path(corpus_store.path).parent / "runs" / cid
    before = sorted(runs.iterdir()) if runs.exists() else []
    with pytest.raises(AszError, match=says):
        runner.judge(runner.JudgeOptions(cid, evaluator=spec), store=corpus_store)
    assert (sorted(runs.iterdir()) if runs.exists() else []) == before  # no run directory was made


@pytest.mark.parametrize(("script", "says"), [
    (None, "needs a script"),
    ("missing.yaml", "cannot read the script"),
    ("broken.yaml", "must hold a mapping with a list of calls"),
])
def test_a_scripted_evaluator_without_a_usable_script_fails_before_the_run(
        script: str | None, says: str, corpus_store: Any, tmp_path: Path) -> None:
    (tmp_path / "broken.yaml").write_text("just words\n")
    cid = cid_with(corpus_store, 2)
    runs = Path(corpus_store.path).parent / "runs" / cid
    before = sorted(runs.iterdir()) if runs.exists() else []
    spec = "scripted" if script is None else f"scripted:{tmp_path / script}"
    with pytest.raises(AszError, match=says):
        runner.judge(runner.JudgeOptions(cid, evaluator=spec), store=corpus_store)
    assert (sorted(runs.iterdir()) if runs.exists() else []) == before  # no run directory was made


def _not_logged_in_claude(tmp_path: Path) -> tuple[Path, Path]:
    """A claude CLI on the PATH that is not logged in; it logs every way it is run."""
    log = tmp_path / "claude-calls.log"
    exe = tmp_path / "bin" / "claude"
    exe.parent.mkdir(parents=True, exist_ok=True)
    exe.write_text(f"#!/bin/sh\necho \"$@\" >> {log}\n"
                   "[ \"$1 $2\" = 'auth status' ] && { echo '{\"loggedIn\": false, \"authMethod\": \"none\"}'; exit 1; }\n"
                   "echo 'Not logged in · Please run /login'; exit 1\n")
    exe.chmod(0o755)
    return exe, log


def test_a_named_evaluator_that_is_not_logged_in_fails_at_once(corpus_store: Any, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    exe, log = _not_logged_in_claude(tmp_path)
    monkeypatch.setenv("PATH", f"{exe.parent}:/usr/bin:/bin")
    for var in ("ASZ_CLAUDE", "ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    cid = cid_with(corpus_store, 2)
    runs = Path(corpus_store.path).parent / "runs" / cid
    before = sorted(runs.iterdir()) if runs.exists() else []
    with pytest.raises(AszError, match=r"^the claude evaluator cannot run here: .*not logged in: run `claude auth login`"):
        runner.judge(runner.JudgeOptions(cid, evaluator="claude"), store=corpus_store)
    assert (sorted(runs.iterdir()) if runs.exists() else []) == before  # no run directory was made
    assert log.read_text().splitlines() == ["auth status"]  # asked once whether it is logged in; no model call


def test_the_command_says_it_in_one_line(corpus_store: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from asz_core import cli

    exe, _ = _not_logged_in_claude(tmp_path)
    monkeypatch.setenv("PATH", f"{exe.parent}:/usr/bin:/bin")
    monkeypatch.setenv("ASZ_HOME", str(Path(corpus_store.path).parent))
    for var in ("ASZ_CLAUDE", "ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    cid = cid_with(corpus_store, 2)
    lines: list[str] = []
    monkeypatch.setattr(cli.err, "print", lambda *a, **k: lines.append(" ".join(str(x) for x in a)))
    with pytest.raises(SystemExit) as ex:
        monkeypatch.setattr("sys.argv", ["asz", "judge", cid[:8], "--evaluator", "claude"])
        cli.main()
    assert ex.value.code == 1
    assert len(lines) == 1 and "claude auth login" in lines[0] and "\n" not in lines[0], lines


# --- every backend a person can name: refused before the run, in one line, when it cannot run ---

AUTH_ENV = ("ANTHROPIC_", "CLAUDE_", "OPENAI_", "CODEX_", "KIRO_", "AWS_", "ASZ_CLAUDE", "ASZ_CODEX", "ASZ_KIRO", "FAKE_KIRO")


def _logging(tmp_path: Path, name: str, real: Path) -> tuple[Path, Path]:
    """``bin/<name>``: ``real`` asked its version or its login as it is, each way it is run logged
    (one line of arguments); anything else (a model call, were the check gone) fails at once."""
    log = tmp_path / f"{name}-calls.log"
    exe = tmp_path / "bin" / name
    exe.parent.mkdir(parents=True, exist_ok=True)
    exe.write_text(f'#!/bin/sh\necho "$@" >> "{log}"\ncase "$1" in --version|login|whoami) exec "{real}" "$@";; esac\n'
                   'echo "this test runs no model call" >&2\nexit 3\n')
    exe.chmod(0o755)
    return exe, log


def _codex_logged_out(tmp_path: Path, env: dict[str, str]) -> tuple[Path, list[str]]:
    """The real codex CLI (0.171.0, kit/install-codex-cli) with an empty CODEX_HOME: `codex login
    status` says "Not logged in" (exit code 1), as on a machine where nobody ran `codex login`."""
    from tests.evaluators.cli_helpers import CODEX, CODEX_PINNED, _version

    if _version(CODEX, 1) != CODEX_PINNED:
        pytest.skip(f"the codex CLI {CODEX_PINNED} is not installed at {CODEX}")
    (tmp_path / "codex-home").mkdir()
    env["CODEX_HOME"] = str(tmp_path / "codex-home")
    return _logging(tmp_path, "codex", CODEX)[1], ["--version", "login status"]


def _kiro_logged_out(tmp_path: Path, env: dict[str, str]) -> tuple[Path, list[str]]:
    """The fake kiro-cli (tests/evaluators/cli_fake_kiro.py): `kiro-cli whoami` says "Not logged in"."""
    from tests.evaluators.cli_helpers import fake_kiro

    env["FAKE_KIRO_LOGIN"] = "none"
    env["FAKE_KIRO_LOG"] = str(tmp_path / "kiro-chats.jsonl")  # where a `kiro-cli chat` would say it ran
    return _logging(tmp_path, "kiro-cli", fake_kiro(tmp_path / "kiro"))[1], ["--version", "whoami"]


def _claude_logged_out(tmp_path: Path, env: dict[str, str]) -> tuple[Path, list[str]]:
    return _not_logged_in_claude(tmp_path)[1], ["auth status"]


def _no_aws(tmp_path: Path, env: dict[str, str]) -> tuple[None, list[str]]:
    env.update(AWS_CONFIG_FILE=str(tmp_path / "no-aws-config"), AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "no-aws-creds"),
               AWS_EC2_METADATA_DISABLED="true")
    return None, []


def _aws_keys_no_region(tmp_path: Path, env: dict[str, str]) -> tuple[None, list[str]]:
    _no_aws(tmp_path, env)
    env.update(AWS_ACCESS_KEY_ID="AKIAFAKE", AWS_SECRET_ACCESS_KEY="fake-secret")
    return None, []


def _nothing(tmp_path: Path, env: dict[str, str]) -> tuple[None, list[str]]:
    return None, []


REFUSED = [
    # (spec, environment set, what is faked, the one line; written from each CLI's and SDK's words)
    ("claude", {}, _claude_logged_out,
     "the claude evaluator cannot run here: the claude CLI ({bin}/claude) is not logged in: run `claude auth login` "
     "(or set ANTHROPIC_API_KEY)"),
    ("codex", {}, _codex_logged_out,
     "the codex evaluator cannot run here: the codex CLI ({bin}/codex) is not logged in: run `codex login` "
     "(or set CODEX_API_KEY)"),
    ("kiro-cli", {}, _kiro_logged_out,
     "the kiro-cli evaluator cannot run here: kiro-cli ({bin}/kiro-cli) is not logged in: run `kiro-cli login` "
     "(or set KIRO_API_KEY)"),
    ("anthropic:claude-sonnet-4-5", {}, _nothing,
     "the anthropic evaluator cannot run here: set ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN"),  # its SDK is installed
    ("openai:gpt-5.5", {}, _nothing,
     "the openai evaluator cannot run here: set OPENAI_API_KEY"),
    ("openai:gpt-5.5", {"OPENAI_API_KEY": "sk-x", "OPENAI_BASE_URL": "localhost:8080/v1"}, _nothing,
     "the openai evaluator cannot run here: OPENAI_API_KEY is set, but OPENAI_BASE_URL ('localhost:8080/v1') is no "
     "http:// or https:// URL with a host"),
    ("anthropic:claude-sonnet-4-5", {"ANTHROPIC_API_KEY": "sk-x", "ANTHROPIC_BASE_URL": "http://127.0.0.1:99999"}, _nothing,
     "the anthropic evaluator cannot run here: ANTHROPIC_API_KEY is set, but ANTHROPIC_BASE_URL ('http://127.0.0.1:99999') "
     "is no URL: Port out of range 0-65535"),
    ("bedrock:us.deepseek.r1-v1:0", {}, _no_aws,
     "the bedrock evaluator cannot run here: set AWS_BEARER_TOKEN_BEDROCK or AWS credentials (AWS_ACCESS_KEY_ID and "
     "AWS_SECRET_ACCESS_KEY, a profile, a role)"),
    ("bedrock:us.deepseek.r1-v1:0", {}, _aws_keys_no_region,
     "the bedrock evaluator cannot run here: AWS credentials are found (env), but no AWS region is set: set AWS_DEFAULT_REGION, "
     "or region in evaluators: {bedrock: ...}"),
]


def _refusing_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extra: dict[str, str], fake: Any) -> tuple[dict[str, str], Any, list[str]]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith(AUTH_ENV)}
    env.update(PATH=f"{tmp_path / 'bin'}:/usr/bin:/bin", HOME=str(tmp_path / "home"), **extra)
    (tmp_path / "home").mkdir(exist_ok=True)
    log, asked = fake(tmp_path, env)
    for k in list(os.environ):
        if k not in env:
            monkeypatch.delenv(k)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return env, log, asked


@pytest.mark.parametrize(("spec", "extra", "fake", "line"), REFUSED, ids=[f"{r[0]}-{r[2].__name__}-{len(r[1])}" for r in REFUSED])
def test_a_named_evaluator_that_cannot_run_is_refused_before_the_run(
        spec: str, extra: dict[str, str], fake: Any, line: str, corpus_store: Any, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    _, log, asked = _refusing_env(tmp_path, monkeypatch, extra, fake)
    cid = cid_with(corpus_store, 2)
    runs = Path(corpus_store.path).parent / "runs" / cid
    before = sorted(runs.iterdir()) if runs.exists() else []
    t0 = time.monotonic()
    with pytest.raises(AszError) as e:
        runner.judge(runner.JudgeOptions(cid, evaluator=spec), store=corpus_store)
    took = time.monotonic() - t0
    assert str(e.value) == line.replace("{bin}", str(tmp_path / "bin"))
    assert (sorted(runs.iterdir()) if runs.exists() else []) == before  # no run directory was made
    if log is not None:  # the CLI was asked whether it runs and is logged in, and nothing more: no call
        assert log.read_text().splitlines() == asked
    assert not (tmp_path / "kiro-chats.jsonl").exists()
    assert took < 15, f"refused after {took:.1f} s"  # (was: 20 s of calls and retries for claude)


@pytest.mark.parametrize(("spec", "extra", "fake", "line"), REFUSED, ids=[f"{r[0]}-{r[2].__name__}-{len(r[1])}" for r in REFUSED])
def test_the_command_says_it_in_one_line_and_exits_1(spec: str, extra: dict[str, str], fake: Any, line: str,
                                                     corpus_store: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess
    import sys

    env, _, _ = _refusing_env(tmp_path, monkeypatch, extra, fake)
    home = Path(corpus_store.path).parent
    env.update(ASZ_HOME=str(home), COLUMNS="400", NO_COLOR="1")
    cid = cid_with(corpus_store, 2)
    runs = home / "runs" / cid
    before = sorted(runs.iterdir()) if runs.exists() else []
    r = subprocess.run([sys.executable, "-c", "import sys; from asz_core.main import main; sys.argv[0] = 'asz'; main()",
                        "judge", cid[:12], "--evaluator", spec], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == "error: " + line.replace("{bin}", str(tmp_path / "bin")) + "\n"  # one line; no traceback
    assert (sorted(runs.iterdir()) if runs.exists() else []) == before
