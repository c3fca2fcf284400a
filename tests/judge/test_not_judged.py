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


def _two_goals() -> dict[str, Any]:
    """258c7280's targets with i4's question a goal of its own (new:h): g holds t1 and t2, h t3."""
    import copy

    from .achievement_story import TARGETS

    t = copy.deepcopy(TARGETS)
    t["inputs"][3]["relations"] = [{"relation": "new", "goal": "new:h", "statement": "know whether it is pushed"}]
    t["goals"] = [{"goal": "new:g", "main_target": None, "main_cited": None},
                  {"goal": "new:h", "main_target": None, "main_cited": None}]
    return t


def test_an_unjudged_target_has_its_own_class_and_no_part_in_its_goals(corpus_store: Any, tmp_path: Path) -> None:
    # 258c7280: t1 judged achieved; t2's call (2) and t3's call (3) give nothing twice. A reader
    # of the spec: t2 and t3 are not judged (no level of theirs to class them by); g (t1, t2)
    # takes its class from t1 alone, t2 said beside it; h (t3 alone) is not judged itself.
    res, st = run(corpus_store, tmp_path, [T1, None, None], targets=_two_goals())
    assert [(t["target"], t["judged"]) for t in st["achievement"]] == [("t1", True), ("t2", False), ("t3", False)]
    close = json.loads((res.path / "close.json").read_text())["statement"]
    assert {t["id"]: t["outcome"]["class"] for t in close["targets"]} == {
        "t1": "achieved", "t2": "not_judged", "t3": "not_judged"}
    goals = {g["id"]: (g["members"], g["class"], g["not_judged"]) for g in close["goals"]}
    assert goals == {"g1": (["t1", "t2"], "achieved", ["t2"]), "g2": (["t3"], "not_judged", ["t3"])}
    out = _show(res.path)
    lines = out.splitlines()
    assert any(x.startswith("g1  achieved (not judged: t2)  main") for x in lines), out
    assert any(x.startswith("g2  not judged  main") for x in lines), out
    for tid in ("t2", "t3"):
        row = next(x for x in lines if x.startswith(f"│ {tid} "))
        assert "not judged" in row and "unverified" not in row, row
    html = (res.path / "report.html").read_text()
    assert 'class <span class="badge" style="background:#1e8449">achieved</span> (not judged: t2) · main' in html
    assert 'class <span class="badge" style="background:#777">not judged</span> · main' in html
    for tid in ("t2", "t3"):
        assert f'data-target="{tid}"><h3>{tid} <span class="badge" style="background:#777">not judged</span>' in html
        assert f'<td class="mono">{tid}</td><td><span class="badge" style="background:#777">not judged</span>' in html


def test_compare_leaves_a_pair_one_run_did_not_judge_out_of_the_agreement(corpus_store: Any, tmp_path: Path) -> None:
    # Two runs of 258c7280: every target judged, and t2's call failing twice. t1 and t3 agree on
    # everything; t2 | t2 is matched but says nothing of agreement (one side has no judgment).
    from asz_core.judge import compare
    from asz_core.judge.compare_report import compare_text

    from .achievement_story import T2

    full, _ = run(corpus_store, tmp_path, [T1, T2, T3])
    part, _ = run(corpus_store, tmp_path, [T1, None, T3])
    d = compare.compare([full.path, part.path])
    [p] = d["pairs"]
    tg = p["targets"]
    assert [(m["a"], m["b"], m["judged"]) for m in tg["matched"]] == [("t1", "t1", True), ("t2", "t2", False),
                                                                       ("t3", "t3", True)]
    assert tg["not_judged"] == [["t2", "t2"]]
    assert tg["agreement"]["class"] == {"agree": 2, "of": 2} and tg["agreement"]["level"] == {"agree": 2, "of": 2}
    c = Console(width=200, record=True, color_system=None)
    c.print(compare_text(d))
    out = c.export_text()
    row = next(x for x in out.splitlines() if x.startswith("│ t2 "))
    assert "unverified | not judged" in row, row
    assert "not judged by one run, left out of the agreement: t2 | t2" in out


def test_the_run_scores_weigh_the_judged_targets_alone(corpus_store: Any, tmp_path: Path) -> None:
    # 258c7280: t1 judged with t1.c2 not met (final 2/3), t2's call (2) gives nothing twice, t3
    # judged met (final 1). A reader of the spec weighs the judged targets by what each cost: t1
    # is k1's work before i3 (s132) with the sub-agents started there, t3 is k2's; the run's
    # achievement is (m1 * 2/3 + m3) / (m1 + m3), with t2 nowhere in it, and the part the scores
    # cover (m1 + m3) / (m1 + m2 + m3), t2 being the rest of k1.
    from fractions import Fraction

    from asz_core import ledger, window

    t1 = {**T1, "criteria": [T1["criteria"][0], {"id": "t1.c2", "state": "not_met", "cites": ["s117"],
                                                   "reason": "a failure in the suite"}, T1["criteria"][2]],
          "claims": []}
    res, st = run(corpus_store, tmp_path, [t1, None, T3])
    assert [(t["target"], t["judged"]) for t in st["achievement"]] == [("t1", True), ("t2", False), ("t3", True)]
    w = window.build(corpus_store, next(r.id for r in corpus_store.conversations() if r.id.startswith("258c7280")))
    conv = w.conv
    calls = ledger.build(conv, ledger.load_prices(None)).calls
    started = {s.id: s.started_by for s in conv.streams}

    def place(c: Any) -> Any:  # where a call sits: its own step, or the main-stream step that started its stream
        if c.stream == "m":
            return conv.step(c.step)
        if not started[c.stream]:
            return None  # a2: no step started it, no target's (unassigned)
        [by] = started[c.stream]
        assert conv.step(by).stream == "m", c.step  # one level deep in this conversation
        return conv.step(by)

    i3 = conv.step("s132").seq
    money: dict[str, Fraction] = {"t1": Fraction(0), "t2": Fraction(0), "t3": Fraction(0)}
    for c in calls:
        if (p := place(c)) is None:
            continue
        tid = "t3" if p.talk == "k2" else "t1" if p.seq < i3 else "t2"
        assert c.price.money is not None
        money[tid] += Fraction(c.price.money)
    assert all(money.values())
    close = json.loads((res.path / "close.json").read_text())["statement"]
    sc = close["scores"]
    want = (money["t1"] * Fraction(2, 3) + money["t3"]) / (money["t1"] + money["t3"])
    assert sc["achievement"]["unit"] == "money" and sc["achievement"]["value"] == f"{want.numerator}/{want.denominator}"
    assert want != (money["t1"] * Fraction(2, 3) + money["t3"]) / sum(money.values())  # t2 weighed as a 0
    part = (money["t1"] + money["t3"]) / sum(money.values())
    assert sc["judged"]["value"] == f"{part.numerator}/{part.denominator}"
    assert sc["delivered"]["value"] == str(money["t3"] / (money["t1"] + money["t3"]))  # t3 alone achieved
