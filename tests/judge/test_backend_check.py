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
