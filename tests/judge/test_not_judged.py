"""A target whose achievement call failed twice is not judged: no score (null, never 0), left out
of the run's scores with the part of the cost it holds said beside them, and shown "not judged"
by -show and report.html (spec: "One call or several": what a call that failed twice was to judge
stays in the stage's coverage, not judged)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

from rich.console import Console

from asz_core.judge.report import run_text
from asz_core.judge.runner import read_run

from .achievement_story import T1, T3, run


def _show(path: Path) -> str:
    c = Console(width=160, record=True, color_system=None)
    c.print(run_text(read_run(path)))
    return c.export_text()


def test_a_target_whose_call_failed_is_left_out_of_the_scores(corpus_store: Any, tmp_path: Path) -> None:
    # 258c7280: t1 and t3 judged with every live criterion met; t2's call (2) gives nothing twice.
    res, st = run(corpus_store, tmp_path, [T1, None, T3])
    assert [(t["target"], t["judged"]) for t in st["achievement"]] == [("t1", True), ("t2", False), ("t3", True)]
    close = json.loads((res.path / "close.json").read_text())["statement"]
    by = {t["id"]: t for t in close["targets"]}
    o2 = by["t2"]["outcome"]
    assert (o2["judged"], o2["record_score"], o2["final_score"]) == (False, None, None)
    assert [(by[t]["outcome"]["judged"], by[t]["outcome"]["final_score"]) for t in ("t1", "t3")] == [(True, "1"), (True, "1")]
    sc = close["scores"]
    # Both targets judged were achieved whole: the run's achievement is 1, t2 weighed as nothing
    # (weighed as a 0 it would be t1 and t3's share of the cost, well below 1).
    assert sc["achievement"]["value"] == "1" and sc["delivered"]["value"] == "1"
    # What t2 holds is said beside the scores: its cost, and the part of the cost the scores cover.
    assert close["not_judged"] == by["t2"]["cost"]["total"] and close["not_judged"]["calls"] > 0
    money = {t: Decimal(by[t]["cost"]["total"]["money"]) for t in by}
    part = (money["t1"] + money["t3"]) / sum(money.values())
    assert abs(Decimal(sc["judged"]["rounded"]) - part) < Decimal("0.0002") and Decimal(sc["judged"]["rounded"]) < 1
    [g] = close["goals"]
    assert g["mean_final_score"] == "1"
    # -show and report.html say it.
    out = _show(res.path)
    row = next(x for x in out.splitlines() if x.startswith("│ t2 "))
    assert "not judged" in row and "→" not in row, row
    assert "not judged: t2" in out.replace("\n", " ")
    html = (res.path / "report.html").read_text()
    assert 'data-target="t2"><h3>t2 <span class="badge" style="background:#777">not judged</span>' in html
    assert "not judged: t2" in html


def test_every_target_judged_covers_the_whole_cost(corpus_store: Any, tmp_path: Path) -> None:
    from .achievement_story import T2

    res, _ = run(corpus_store, tmp_path, [T1, T2, T3])
    close = json.loads((res.path / "close.json").read_text())["statement"]
    assert close["scores"]["judged"]["value"] == "1" and close["not_judged"]["calls"] == 0
    assert all(t["outcome"]["judged"] for t in close["targets"])
    assert "not judged" not in _show(res.path)
