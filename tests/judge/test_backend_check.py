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
