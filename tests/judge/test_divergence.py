"""The divergence stage: the bundled example against its incident note (examples/INC-88.md), each
check broken once by a scripted answer with its exact expected result (spec: "Judging against a
source"; decisions.md section 11). In the example, t1 (the rounding fix, set by i1) was delivered
at s12 (t1.e1) and t2 (the float audit, created by i2 and refined by i3) at s26 (t2.e1); both
stand at the end."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .source_runs import INCIDENT, entry, judge_with

STAGES = ("targets", "achievement", "subtasks", "reference", "divergence")


def k(cid: str, inputs: list[str], lines: list[Any], statement: str = "a conclusion") -> dict[str, Any]:
    return {"id": cid, "source": "src1", "statement": statement, "kind": "final", "role": "required",
            "support": "saved", "lines": lines, "inputs": inputs}


REFERENCE = entry("reference", {"conclusions": [
    k("fix", ["i1"], ["8-12"], "the rounding fix is right: totals sum in Decimal and round once"),
    k("audit", ["i2", "i3"], ["16-20"], "the audit missed invoicer/refunds.py:9: money is added as floats in four places"),
    k("c3", ["i2"], [16]), k("c4", ["i1", "i2"], [16]), k("c5", ["i2", "i3"], [16]), k("c6", ["i2"], [16]),
    k("c7", ["i2"], [16]), k("c8", ["i2"], [16]), k("c9", [], [16]), k("c10", ["i2"], [16]), k("c11", ["i1"], [10]),
    k("c12", ["i2"], [17]), k("c13", ["i2"], [17]), k("c14", ["i2"], [17]),
]}, [{"tool": "sources", "args": {"id": "src1"}}])


def v(conclusion: str, verdict: str, **kw: Any) -> dict[str, Any]:
    return {"conclusion": conclusion, "verdict": verdict, **kw}


AUDIT = dict(target="t2", input="i2", delivery="t2.e1", cites=["s26", "s24"])


def test_every_check_broken_once(store: Any, tmp_path: Path) -> None:
    answer = {"verdicts": [
        v("src1.k1", "consistent", target="t1", cites=["s14"]),
        v("src1.k2", "contradicted", disproves="criteria", criteria=["t2.c1", "t2.c9"], **AUDIT,
          why="refunds.py:9 was not named"),
        v("src1.k2", "consistent", target="t2"),
        v("src1.k99", "consistent"),
        v("src1.k3", "contradicted", disproves="conclusion", cites=["s26"], input="i2", delivery="t2.e1"),
        v("src1.k4", "contradicted", disproves="conclusion", target="t2", input="i1", delivery="t2.e1", cites=["s26"]),
        v("src1.k5", "contradicted", disproves="conclusion", target="t2", input="i3", delivery="t2.e1", cites=["s26"]),
        v("src1.k6", "contradicted", disproves="conclusion", target="t2", input="i2", delivery="t2.e7", cites=["s26"]),
        v("src1.k7", "contradicted", disproves="conclusion", target="t2", input="i2", delivery="t2.e1", cites=["s24"]),
        v("src1.k8", "contradicted", disproves="everything", **AUDIT),
        v("src1.k9", "contradicted", disproves="conclusion", **AUDIT),
        v("src1.k10", "contradicted", disproves="criteria", criteria=["t1.c1"], **AUDIT),
        v("src1.k11", "rolled_back", target="t1", input="i1", delivery="t1.e1", cites=["s12"]),
        v("src1.k12", "not_observed", target="t9"),
        v("src1.k13", "maybe"),
        v("src1.k14", "contradicted", disproves="conclusion", target="t2", input="i3", delivery="t2.e1", cites=["s26"]),
    ], "causes": [
        {"conclusion": "src1.k2", "cause": "result_misread", "at": "s26", "cites": ["s24", "s29"]},
        {"conclusion": "src1.k2", "cause": "untrue_subtask_report", "at": "s26", "subtask": "a1", "cites": ["s20"]},
        {"conclusion": "src1.k2", "cause": "misleading_tool_result", "at": "s26", "cites": ["s23"]},
        {"conclusion": "src1.k2", "cause": "context_missing", "at": "s26", "cites": ["s24"]},
        {"conclusion": "src1.k2", "cause": "premise_unchecked", "at": "s26"},
        {"conclusion": "src1.k2", "cause": "context_unused", "at": "s14", "cites": ["s4"]},
        {"conclusion": "src1.k2", "cause": "a hunch", "at": "s26"},
        {"conclusion": "src1.k1", "cause": "result_misread", "at": "s14", "cites": ["s14"]},
    ]}
    run, files = judge_with(store, tmp_path, [str(INCIDENT)], REFERENCE, entry("divergence", answer), stages=STAGES)
    assert files["reference"]["status"] == "complete", files["reference"]["note"]
    sf = files["divergence"]
    assert sf["status"] == "partial"
    got = {x["conclusion"]: x for x in sf["verdicts"]}
    assert [x["conclusion"] for x in sf["verdicts"]] == [f"src1.k{n}" for n in range(1, 15)]
    assert {c: x["verdict"] for c, x in got.items()} == {
        "src1.k1": "consistent", "src1.k2": "contradicted", "src1.k3": "unknown", "src1.k4": "unknown",
        "src1.k5": "contradicted", "src1.k6": "unknown", "src1.k7": "unknown", "src1.k8": "unknown",
        "src1.k9": "unknown", "src1.k10": "unknown", "src1.k11": "rolled_back", "src1.k12": "not_observed",
        "src1.k13": "unknown", "src1.k14": "unknown"}
    k2 = got["src1.k2"]
    assert (k2["target"], k2["input"], k2["delivery"], k2["disproves"], k2["criteria"], k2["cites"], k2["judgment"]) == (
        "t2", "i2", "t2.e1", "criteria", ["t2.c1"], ["s26", "s24"], False)
    assert got["src1.k5"]["input"] == "i3"  # i3 refined t2: an input that changed it
    assert (got["src1.k11"]["delivery"], got["src1.k11"]["criteria"], got["src1.k11"]["disproves"]) == ("t1.e1", [], None)
    assert got["src1.k12"]["judgment"] is True and got["src1.k12"]["target"] is None
    assert got["src1.k4"]["given"] == "contradicted"
    assert sf["checks"] == [
        {"kind": "left_out", "where": "src1.k2", "what": "a second verdict for the same conclusion: the first is kept"},
        {"kind": "left_out", "where": "src1.k99", "what": "a verdict for no conclusion the reference stage kept"},
        {"kind": "changed", "where": "src1.k3", "what": "contradicted: it names no target: unknown"},
        {"kind": "changed", "where": "src1.k4", "what": "contradicted: i1 did not set or change t2 (the targets stage gives "
                                                         "it no create, refine, steer or correct of it): unknown"},
        {"kind": "changed", "where": "src1.k6", "what": "contradicted: 't2.e7' is no delivery event of t2: unknown"},
        {"kind": "changed", "where": "src1.k7", "what": "contradicted: it cites no step that shows the delivery t2.e1 "
                                                         "(s26): unknown"},
        {"kind": "changed", "where": "src1.k8", "what": "contradicted: disproves 'everything': it must be the delivered "
                                                         "conclusion or criteria: unknown"},
        {"kind": "changed", "where": "src1.k9", "what": "contradicted: the conclusion is about no input of the "
                                                         "conversation: unknown"},
        {"kind": "changed", "where": "src1.k10", "what": "contradicted: it names no live criterion of t2 (t1.c1): unknown"},
        {"kind": "left_out", "where": "src1.k12", "what": "target 't9', which is no target of the targets stage"},
        {"kind": "changed", "where": "src1.k13", "what": "verdict 'maybe', which is none of consistent, contradicted, "
                                                          "rolled_back, not_observed, unknown: unknown"},
        {"kind": "changed", "where": "src1.k14", "what": "contradicted: input 'i3' is not of the conclusion's scope (i2): unknown"},
        {"kind": "changed", "where": "src1.k2", "what": "cause untrue_subtask_report: sub-task 'a1' is none the sub-task "
                                                         "stage found misled the agent: unavailable"},
        {"kind": "changed", "where": "src1.k2", "what": "cause misleading_tool_result: it needs a tool result at or before "
                                                         "its step; nothing it cites shows it: s23: a reply of the agent: unavailable"},
        {"kind": "changed", "where": "src1.k2", "what": "cause context_missing: it needs evidence of what failed to arrive "
                                                         "(a failed or unanswered tool step, an error) at or before its step; "
                                                         "nothing it cites shows it: s24: the Grep call returned: unavailable"},
        {"kind": "changed", "where": "src1.k2", "what": "cause context_unused: it is at 's14', which is no step of t2's "
                                                         "work: unavailable"},
        {"kind": "changed", "where": "src1.k2", "what": "cause 'a hunch': 'a hunch' is none of the causes: unavailable"},
        {"kind": "left_out", "where": "src1.k1", "what": "a cause for no conclusion kept as contradicted or rolled back"},
    ]
    causes = [(c["conclusion"], c["cause"], c["at"], c["cites"], c["judgment"]) for c in sf["causes"]]
    assert causes == [
        ("src1.k2", "result_misread", "s26", ["s24"], False),  # s29 landed after s26: not what misled it
        ("src1.k2", "unavailable", "s26", ["s20"], False),
        ("src1.k2", "unavailable", "s26", ["s23"], False),
        ("src1.k2", "unavailable", "s26", ["s24"], False),
        ("src1.k2", "premise_unchecked", "s26", [], True),
        ("src1.k2", "unavailable", "s14", ["s4"], False),
        ("src1.k2", "unavailable", "s26", [], False),
        ("src1.k5", "unavailable", None, [], False),  # contradicted, no cause given
        ("src1.k11", "unavailable", None, [], False),
    ]
    assert sf["header"] == {"conclusions_compared": 14, "unavailable_sources": 0, "verdicts": {
        "consistent": 1, "contradicted": 2, "unknown": 9, "rolled_back": 1, "not_observed": 1}}
    prompt = (run / "calls" / "divergence" / "1" / "1" / "prompt.md").read_text()
    assert '"standing_at_end":["t2.e1"]' in prompt and '"set_or_changed_by":["i2","i3"]' in prompt


def test_no_conclusion_skips_the_stage(store: Any, tmp_path: Path) -> None:
    _, files = judge_with(store, tmp_path, [str(INCIDENT)], entry("reference", {"conclusions": []}),
                          stages=("targets", "reference", "divergence"))
    assert files["divergence"]["status"] == "skipped"
    assert files["divergence"]["reason"] == "no conclusion to compare: the reference stage kept none"


def test_an_untrue_subtask_report_needs_one_the_subtask_stage_found_misleading_started_before(store: Any, tmp_path: Path) -> None:
    """The sub-task stage finds a1's report inaccurate and the agent misled at s22; a1 was started
    at s20. A cause at s26 citing s20 holds; one at s19, before a1 started, does not."""
    subtasks = entry("subtasks", {"decisions": [{
        "subtasks": ["a1"], "outcome": {"value": "completed", "cites": ["s29"]},
        "report": {"value": "inaccurate", "cites": ["s29"]}, "used": {"value": "used", "cites": ["s22"]},
        "dispatch": {"value": "right", "cites": ["s20"]}, "misled": "s22",
        "label": {"label": "productive", "step": "s29"}}]})
    answer = {"verdicts": [v("src1.k2", "contradicted", disproves="conclusion", **AUDIT),
                           v("src1.k5", "contradicted", disproves="conclusion", **AUDIT)],
              "causes": [{"conclusion": "src1.k2", "cause": "untrue_subtask_report", "at": "s26", "subtask": "a1", "cites": ["s20"]},
                         {"conclusion": "src1.k5", "cause": "untrue_subtask_report", "at": "s19", "subtask": "a1", "cites": ["s20"]},
                         {"conclusion": "src1.k5", "cause": "untrue_subtask_report", "at": "s26", "subtask": "a1", "cites": ["s24"]}]}
    _, files = judge_with(store, tmp_path, [str(INCIDENT)], REFERENCE, subtasks, entry("divergence", answer), stages=STAGES)
    assert files["subtasks"]["subtasks"][0]["misled"] == "s22"
    sf = files["divergence"]
    assert [(c["conclusion"], c["cause"], c["at"], c["subtask"], c["cites"]) for c in sf["causes"]] == [
        ("src1.k2", "untrue_subtask_report", "s26", "a1", ["s20"]),
        ("src1.k5", "unavailable", "s19", None, ["s20"]),
        ("src1.k5", "unavailable", "s26", None, ["s24"])]
    assert [c["what"] for c in sf["checks"] if c["where"] == "src1.k5"] == [
        "cause untrue_subtask_report: a1 was not started in t2's work before s19: unavailable",
        "cause untrue_subtask_report: it needs a step of a1 or the step that started it (s20); nothing it cites shows it: "
        "s24: the Grep call returned: unavailable"]
