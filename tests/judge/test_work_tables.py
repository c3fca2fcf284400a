"""The sub-task, efficiency and final statement tables of ``asz judge -show`` at 80 and 160
columns, on real runs (the scripted evaluator over corpus conversations): nothing wider than the
terminal, ids (targets, sub-tasks, steps, parts) and money whole and never cut with …, every
column at 160 and a compact layout at 80, each note said once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len

from asz_core import window
from asz_core.judge import report as judge_report
from asz_core.judge.runner import read_run
from asz_core.judge.statement_text import amount, frac
from asz_core.tables import render

from .conftest import inputs_of
from .test_example import judge_example
from .test_efficiency import TODO, TODO_PARTS, misled_run
from .test_subtasks import first_target, plausible, run

WIDTHS = (80, 160)


@pytest.fixture(scope="module")
def runs(corpus_store: Any, tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """Three real runs: fe5e1c67 (five sub-tasks judged, a part labelled redundant), 258c7280 (a
    sub-agent whose inaccurate report misled the agent, its dispatch misdirected, two targets) and
    kit/example's (every stage, scores and rework)."""
    tmp = tmp_path_factory.mktemp("work-tables")
    conv = window.build(corpus_store, TODO).conv
    subs = [s.id for s in conv.streams if s.kind != "main"]
    todo, _ = run(corpus_store, tmp, TODO, first_target(inputs_of(corpus_store, TODO)), plausible(conv, subs), TODO_PARTS)
    spotter, _ = misled_run(corpus_store, tmp, {"value": "misdirected", "cites": ["s343", "s132"]},
                            [{"target": "new:b", "action": "create"}, {"target": "new:a", "action": "refine"}])
    from asz_core.store import Store

    own = Store.open(tmp / "example-home")  # the bundled example, every stage answered (achievement's scores too)
    try:
        example = judge_example(own).path
    finally:
        own.close()
    return [read_run(todo), read_run(spotter), read_run(example)]


def _fits(out: str, width: int) -> None:
    wide = [x for x in out.splitlines() if cell_len(x) > width]
    assert not wide, wide[:3]
    cut = [x for x in out.replace("[said …]", "").replace(" …", "").splitlines() if "…" in x]
    assert not cut, cut[:3]  # a cell cut short


def _whole(out: str, pieces: list[str]) -> None:
    """Each piece stands whole in a cell of some line (bounded by the table's edges or spaces)."""
    lines = out.splitlines()
    missing = [p for p in pieces if not any(f" {p} " in f" {x.replace('│', ' ')} " for x in lines)]
    assert not missing, missing[:5]


@pytest.mark.parametrize("width", WIDTHS)
def test_sub_tasks_and_labels(runs: list[dict[str, Any]], width: int) -> None:
    for d in runs:
        out = render(judge_report.run_text(d), width)
        _fits(out, width)
        sub, eff = d["stages"]["subtasks"], d["stages"]["efficiency"]
        assert sub["subtasks"] and eff["talks"]
        sub_out = out[out.index("sub-tasks: "):out.index("labels: ")]
        eff_out = out[out.index("labels: "):]
        _whole(sub_out, [j["stream"] for j in sub["subtasks"]] + [j["started_by"] for j in sub["subtasks"] if j["started_by"]])
        _whole(eff_out, [p["start"] if p["start"] == p["end"] else f"{p['start']}–{p['end']}"  # a part of one step: its id
                         for t in eff["talks"] for p in t["parts"]])
        for j in sub["subtasks"]:  # each decision's value is on the sub-task's rows
            for k in ("outcome", "report", "used", "dispatch"):
                assert j[k]["value"] in sub_out
        for p in (p for t in eff["talks"] for p in t["parts"]):
            assert p["label"]["label"] in eff_out.replace("\n│", "")
        if width == 160:  # every column
            assert all(h in sub_out for h in ("talks → main", "targets", "outcome", "report", "used", "dispatch", "misled",
                                              "evaluator's"))
            assert all(h in eff_out for h in ("read at", "shown by", "why / note"))
        else:  # the decisions share a column
            assert "decisions" in sub_out and "talks → main" not in sub_out
        assert sub_out.count("outcome: whether its work got done") == 1 and eff_out.count("the part's model calls") == 1  # the note once, under the table


def test_a_misled_sub_task_names_the_step_and_who_pays(runs: list[dict[str, Any]]) -> None:
    a1 = next(j for j in runs[1]["stages"]["subtasks"]["subtasks"] if j["stream"] == "a1")
    assert (a1["misled"], a1["charge"]) == ("s346", "giver")
    for width in WIDTHS:
        out = render(judge_report.run_text(runs[1]), width)
        lines = out[out.index("sub-tasks: "):out.index("labels: ")].splitlines()
        a1 = lines[next(i for i, x in enumerate(lines) if x.startswith("│ a1 ")):]
        a1 = " ".join(" ".join(a1[:next(i for i, x in enumerate(a1) if x.startswith(("├", "└")))]).replace("│", " ").split())
        assert all(w in a1 for w in ("at s346,", "charged", "giver", "misdirected_delegation", "(main", "agent)")), (width, a1)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_final_statement(runs: list[dict[str, Any]], width: int) -> None:
    for d in runs:
        out = render(judge_report.run_text(d), width)
        _fits(out, width)
        st = d["close"]["statement"]
        unit = st["scores"]["achievement"]["unit"]
        rows = {t["id"]: next(x for x in out.splitlines() if x.startswith(f"│ {t['id']} ")) for t in st["targets"]}
        for t in st["targets"]:  # on the target's own row: its class, its cost and avoidable part, its time
            row = rows[t["id"]]
            assert t["outcome"]["class"] in row and amount(t["cost"]["total"], unit) in row, row
            reviewed = t["cost"]["by_label"].keys() - {"not_reviewed"}
            assert (amount(t["cost"]["avoidable"], unit) if reviewed else "not reviewed") in row, row
        if width == 160:
            assert all(h in out for h in ("level · basis", "score", "by sub-agents", "avoidable time", "rework"))
            for t in st["targets"]:
                o = t["outcome"]
                judged = o.get("record_score") is not None or o.get("final_score") is not None
                sc = f"{frac(o.get('record_score'))}→{frac(o.get('final_score'))}" if judged else " — "
                assert sc in rows[t["id"]]
        assert out.count("score: criteria met of those live") == 1
    assert any(t["cost"]["avoidable"]["calls"] for t in runs[1]["close"]["statement"]["targets"])
    assert any(t["outcome"].get("rework") for t in runs[2]["close"]["statement"]["targets"])

