"""Helpers of the CLI evaluators' tests: the pinned CLIs (installed by kit/setup), a small
collected conversation, and a targets stage run through a CLI evaluator."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from asz_core.judge import runner

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("ASZ_CORPUS") or ROOT.parent / "shared" / "corpus")
SMALL = CORPUS / "claude-code" / "marot__spotter" / "test" / "fixtures" / "transcripts" / "short.jsonl"

CLAUDE_PINNED = "2.1.332"
CLAUDE = Path(os.environ.get("ASZ_TEST_CLAUDE") or ROOT / ".venv" / "claude-cli" / "node_modules" / ".bin" / "claude")
CODEX_PINNED = "0.171.0"
CODEX = Path(os.environ.get("ASZ_TEST_CODEX") or ROOT / ".venv" / "codex-cli" / "node_modules" / ".bin" / "codex")


def fake_kiro(folder: Path) -> Path:
    """``folder/kiro-cli``: the fake kiro-cli of cli_fake_kiro.py (``whoami`` logged in with a
    Builder ID unless FAKE_KIRO_LOGIN is ``none``)."""
    import sys

    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / "kiro-cli"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{Path(__file__).with_name("cli_fake_kiro.py")}" "$@"\n')
    exe.chmod(0o755)
    return exe


def _version(exe: Path, field: int) -> str | None:
    if not exe.exists():
        return None
    try:
        out = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=60).stdout.split()
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out[field] if len(out) > field else None


needs_claude = pytest.mark.skipif(
    _version(CLAUDE, 0) != CLAUDE_PINNED,
    reason=f"the claude CLI {CLAUDE_PINNED} is not installed at {CLAUDE} (kit/install-claude-cli installs it from npm; "
           "npm or the registry was not reachable)")
needs_codex = pytest.mark.skipif(
    _version(CODEX, 1) != CODEX_PINNED,
    reason=f"the codex CLI {CODEX_PINNED} is not installed at {CODEX} (kit/install-codex-cli installs it from npm; "
           "npm or the registry was not reachable)")


@pytest.fixture(scope="module")
def small_conv(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A store holding one small corpus conversation (two inputs): (store, id, inputs)."""
    from asz_core.collect import collect
    from asz_core.store import Store

    from tests.judge.conftest import inputs_of

    if not SMALL.is_file():
        pytest.skip(f"corpus file not found at {SMALL}")
    s = Store.open(tmp_path_factory.mktemp("cli-home"))
    collect([SMALL], s)
    [row] = list(s.conversations())
    yield s, row.id, inputs_of(s, row.id)
    s.close()


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No asz.yaml, Claude Code or Codex configuration of the machine's is read."""
    monkeypatch.setenv("ASZ_HOME", str(tmp_path / "asz-home"))
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    for k in list(os.environ):
        if k.startswith(("ANTHROPIC_", "CLAUDE_", "OPENAI_", "CODEX_", "ASZ_CLAUDE", "ASZ_CODEX", "ASZ_KIRO", "KIRO_", "AWS_BEARER_TOKEN_BEDROCK")) or k in (
                "ASZ_DISABLE_PLUGINS", "ASZ_DISABLE_PLUGIN_AUTOLOAD", "ASZ_KIT"):
            monkeypatch.delenv(k, raising=False)


def answer_for(inputs: list[Any]) -> dict[str, Any]:
    from tests.judge.conftest import plain_answer

    return plain_answer(inputs)


def run_targets(store: Any, cid: str, tmp_path: Path, evaluator: str, options: dict[str, Any],
                read_bytes: int | None = None) -> tuple[runner.RunResult, dict[str, Any]]:
    """The targets stage of ``cid`` through ``evaluator`` (NAME:MODEL) with its asz.yaml section."""
    name = evaluator.split(":")[0]
    cfg: dict[str, Any] = {"evaluators": {name: options}}
    if read_bytes is not None:
        cfg["judge"] = {"read_bytes": read_bytes}
    f = tmp_path / f"asz-{len(list(tmp_path.glob('asz-*.yaml')))}.yaml"
    f.write_text(json.dumps(cfg))
    res = runner.judge(runner.JudgeOptions(cid, evaluator=evaluator, config=f, stages=("targets",)), store=store)
    stage = json.loads((res.path / "stages" / "targets.json").read_text())
    return res, stage


def attempt_dir(res: runner.RunResult, call: int = 1, attempt: int = 1) -> Path:
    return res.path / "calls" / "targets" / str(call) / str(attempt)


def requests_of(d: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (d / "requests.jsonl").read_text().splitlines() if x.strip()]


def reads_of(d: Path) -> list[dict[str, Any]]:
    p = d / "reads.jsonl"
    return [json.loads(x) for x in p.read_text().splitlines() if x.strip()] if p.is_file() else []
