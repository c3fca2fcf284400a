"""Runs of the bundled example judged against sources, with the example's script for the first four
stages and the given answers for the reference and divergence stages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from asz_core.judge import runner

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_SCRIPT = ROOT / "examples" / "scripted-5e1f0c2a.yaml"
INCIDENT = ROOT / "examples" / "INC-88.md"


def example_calls() -> list[dict[str, Any]]:
    from ruamel.yaml import YAML

    return [c for c in YAML(typ="safe", pure=True).load(EXAMPLE_SCRIPT.read_text())["calls"]
            if c["stage"] not in ("reference", "divergence")]


def entry(stage: str, answer: Any, reads: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"stage": stage, "call": 1, "requests": [{"reads": reads or [], "usage": {"input": 900, "output": 300}}],
            "answer": answer}


def judge_with(store: Any, tmp_path: Path, sources: list[str], *extra: dict[str, Any],
               stages: tuple[str, ...] | None = None) -> tuple[Path, dict[str, Any]]:
    """A run of the example with ``sources``; returns its directory and its stage files by name."""
    from asz_core.collect import collect

    collect([ROOT / "examples" / "claude-code"], store)
    script = tmp_path / f"script-{len(list(tmp_path.glob('script-*')))}.json"
    mine = {e["stage"] for e in extra}  # an answer given here takes the place of the example's for its stage
    script.write_text(json.dumps({"calls": [*(c for c in example_calls() if c["stage"] not in mine), *extra]}))
    res = runner.judge(runner.JudgeOptions("5e1f0c2a", evaluator=f"scripted:{script}", sources=tuple(sources),
                                           stages=stages), store=store)
    files = {p.stem: json.loads(p.read_text()) for p in (res.path / "stages").glob("*.json")}
    return res.path, files


def other_source(tmp_path: Path) -> Path:
    p = tmp_path / "postmortem.md"
    p.write_text("Post-mortem\nThe rounding was fixed in totals.py.\nUpdate: the fix shipped in 2.3.1.\n")
    return p
