"""The bundled example's judge run (kit/example's last command) works without a model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from asz_core.judge import runner

ROOT = Path(__file__).resolve().parents[2]


def test_the_example_script_judges_the_bundled_example(store: Any) -> None:
    from asz_core.collect import collect

    collect([ROOT / "examples" / "claude-code"], store)
    res = runner.judge(runner.JudgeOptions("5e1f0c2a", evaluator=f"scripted:{ROOT / 'examples' / 'scripted-5e1f0c2a.yaml'}"),
                       store=store)
    stage = json.loads((res.path / "stages" / "targets.json").read_text())
    assert stage["status"] == "complete", stage["note"]
    assert [(t["id"], t["kind"], t["state"], t["talks"]) for t in stage["targets"]] == [
        ("t1", "change", "closed", ["k1"]), ("t2", "question", "open", ["k2"])]
    assert [c["id"] for c in stage["targets"][1]["criteria"]] == ["t2.c1", "t2.c2", "t2.c3"]
    g = stage["goals"][0]
    assert (g["id"], g["members"], g["main_target"], g["main_basis"]) == ("g1", ["t1", "t2"], None, "undetermined")
    assert stage["run"]["consumed"]["requests"] == 3 and stage["run"]["consumed"]["model_window"] == 200000
    reads = (res.path / "calls/targets/1/1/reads.jsonl").read_text().splitlines()
    assert [json.loads(x)["tool"] for x in reads] == ["talks", "talk"]
