"""The efficiency stage driven by the scripted evaluator over real conversations: how a talk is cut
into parts, what a label covers with and without a sub-task stage, the labels and findings asz
leaves out, and the exact cost of what was labelled avoidable, per target and per cause, on a
talk with inputs typed while the agent worked and a sub-agent that misled it."""

from __future__ import annotations

import json
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from asz_core import ledger, window
from asz_core.judge.stages.efficiency import part_calls
from asz_core.judge.target_cost import decimal_of, for_run

from .conftest import inputs_of
from .test_subtasks import by_stream, checks, first_target, own_steps, run

TODO = "fe5e1c67-53e7-4862-81ae-d0e013e3270b"
"""k1: s10 asked for three Tasks at once (s12 starts a2, s13 a3, s14 a1); then s223 on, with
two more Tasks (s227 a4, s228 a5)."""
SPOTTER = "258c7280-ae70-4798-800f-63464d01a85d"


def main_calls(conv: Any, talk: str, lo: int = 0, hi: int = 10**9) -> list[str]:
    return [s for s in conv.talk(talk).steps if conv.step(s).kind == "model_call" and lo <= int(s[1:]) < hi]


def labels(stage: dict[str, Any]) -> dict[str, tuple[str, str | None]]:
    return {r["step"]: (r["label"], r["cause"]) for r in stage["calls"]}


def parts(stage: dict[str, Any], talk: str) -> list[tuple[str, str, str | None, list[str]]]:
    t = next(x for x in stage["talks"] if x["talk"] == talk)
    return [(p["start"], p["label"]["label"], p["label"]["cause"], p["calls"]) for p in t["parts"]]


TODO_PARTS = {"talks": [{"talk": "k1", "parts": [
    {"from": "s1", "label": "productive", "step": "s3", "why": None},
    {"from": "s12", "label": "productive", "step": "s12", "why": None},
    {"from": "s13", "label": "necessary_exploration", "step": "s13", "why": None},
    {"from": "s224", "label": "redundant_work", "step": "s224", "why": "s9"}]},
    {"talk": "k7", "parts": [{"from": "s435", "label": "productive", "step": "s436"}]}]}


def test_a_part_takes_the_call_that_asked_for_its_first_step(corpus_store: Any, tmp_path: Path) -> None:
    """Without a sub-task stage, each sub-agent's calls take the label of the part its starting step is in."""
    conv = window.build(corpus_store, TODO).conv
    _, st = run(corpus_store, tmp_path, TODO, first_target(inputs_of(corpus_store, TODO)), efficiency=TODO_PARTS,
                stages=("targets", "efficiency"))
    eff = st["efficiency"]
    assert eff["status"] == "complete", eff["note"]
    later = main_calls(conv, "k1", 223)
    # s10 asked for the first steps of the parts from s12 and s13: it belongs to the first of them
    assert parts(eff, "k1") == [("s1", "productive", None, ["s3", "s7"]), ("s12", "productive", None, ["s10"]),
                                ("s13", "necessary_exploration", None, []), ("s224", "redundant_work", "main_agent", later)]
    lab = labels(eff)
    for a, want in (("a2", "productive"), ("a3", "necessary_exploration"), ("a1", "necessary_exploration"),
                    ("a4", "redundant_work"), ("a5", "redundant_work")):
        assert {lab[c][0] for c in own_steps(conv, a, "model_call")} == {want}, a
    assert set(lab) == {s.id for s in conv.steps if s.kind == "model_call"}  # k1 and k7: every call labelled


def test_part_calls_on_its_own() -> None:
    from asz_core.assembly import Step

    kinds = ["input", "model_call", "tool", "tool", "model_call", "reply", "input", "model_call"]
    steps = [Step(f"s{i}", k, "m", "k1", i, (i,), None, None) for i, k in enumerate(kinds, 1)]
    # parts from s3 (a tool asked by s2) and s4 (asked by s2 too) and s7 (an input: no call asked for it)
    before, per = part_calls(steps, [2, 3, 6])
    assert before == [] and per == [["s2"], ["s5"], ["s8"]]
    before, per = part_calls(steps, [5])  # from the reply s6: it takes in s5, which asked for it
    assert before == ["s2"] and per == [["s5", "s8"]]


def test_with_a_sub_task_stage_a_label_covers_only_the_talks_own_stream(corpus_store: Any, tmp_path: Path) -> None:
    conv = window.build(corpus_store, TODO).conv
    sub = {"decisions": [{"subtasks": ["a2"], "label": {"label": "productive", "step": own_steps(conv, "a2", "model_call")[0]}}]}
    path, st = run(corpus_store, tmp_path, TODO, first_target(inputs_of(corpus_store, TODO)), sub, TODO_PARTS,
                   settings={"judge.mode": "single"})
    eff_rows, sub_rows = labels(st["efficiency"]), labels(st["subtasks"])
    assert set(eff_rows) == {s.id for s in conv.steps if s.kind == "model_call" and s.stream == "m"}
    assert set(sub_rows) == set(own_steps(conv, "a2", "model_call"))
    # the sub-tasks no decision covers are not reviewed: in close, what no row labels
    close = json.loads((path / "close.json").read_text())["statement"]
    nr = close["targets"][0]["cost"]["not_reviewed"]
    assert nr["calls"] == sum(len(own_steps(conv, a, "model_call")) for a in ("a1", "a3", "a4", "a5"))
    # a sub-task stage that failed: every sub-task not reviewed, and the stage says so
    _, st = run(corpus_store, tmp_path, TODO, first_target(inputs_of(corpus_store, TODO)), None, TODO_PARTS)
    assert st["subtasks"]["status"] == "failed"
    assert set(labels(st["efficiency"])) == {s.id for s in conv.steps if s.kind == "model_call" and s.stream == "m"}
    assert "the sub-task stage failed: every sub-task's work is not reviewed" in st["efficiency"]["note"]


def test_labels_asz_leaves_out(corpus_store: Any, tmp_path: Path) -> None:
    conv = window.build(corpus_store, TODO).conv
    a2_step = own_steps(conv, "a2")[1]
    ans = {"talks": [
        {"talk": "k1", "parts": [
            {"from": "s3", "label": "productive", "step": "s3"},                     # leaves s1, s2 uncovered
            {"from": a2_step, "label": "productive", "step": "s3"},                  # a sub-agent's step: no part
            {"from": "s12", "label": "productive", "step": a2_step},                 # its step is not the talk's
            {"from": "s13", "label": "repeated_failure", "step": "s13"},             # avoidable, no why
            {"from": "s224", "label": "misled_by_subtask", "step": "s224", "why": "s224"},  # no misled sub-task
            {"from": "s227", "label": "unrequested_work", "step": "k1", "why": "s227"}]},   # a talk id is no step
        {"talk": "k9", "parts": []},
        {"talk": "k7", "parts": [{"from": "s435", "label": "productive", "step": "s436"}]}]}
    _, st = run(corpus_store, tmp_path, TODO, first_target(inputs_of(corpus_store, TODO)), efficiency=ans,
                stages=("targets", "efficiency"))
    eff = st["efficiency"]
    assert eff["status"] == "partial"
    got = parts(eff, "k1")
    assert [(p[0], p[1]) for p in got] == [("s1", "not_reviewed"), ("s3", "productive"), ("s12", "not_reviewed"),
                                           ("s13", "not_reviewed"), ("s224", "not_reviewed"), ("s227", "not_reviewed")]
    c = checks(eff)
    assert ("left_out", "k1", f"a part from '{a2_step}', which is no step of k1: its label is not kept") in c
    assert ("filled_in", "k1", "no part covers s1 to s2: not reviewed") in c
    assert ("left_out", "k1 from s12", f"label productive cites '{a2_step}', which is no step of the work it labels: "
                                       "its cost is not reviewed") in c
    assert ("left_out", "k1 from s13", "repeated_failure gives no step that shows why: its cost is not reviewed") in c
    assert any(w == "k1 from s224" and "misled_by_subtask needs the sub-task stage's decisions" in x for _, w, x in c)
    assert ("left_out", "k1 from s227", "label unrequested_work cites 'k1', which is no step of the work it labels: its "
                                        "cost is not reviewed") in c
    assert ("left_out", "k9", "an answer for k9: no such talk") in c
    assert eff["header"]["parts_left_out"] == 5
    # only the part kept is priced as labelled; the rest counts as not reviewed
    lab = labels(eff)
    assert set(lab) == {"s3", "s7", "s436", "s439"} and lab["s7"] == ("productive", None)


def test_findings_are_kept_only_at_a_step_of_their_targets_work(corpus_store: Any, tmp_path: Path) -> None:
    conv = window.build(corpus_store, TODO).conv
    a5_step = own_steps(conv, "a5", "tool")[0]
    # k1 from s1 productive; from s224 avoidable (a5, started at s228, goes with it: no sub-task stage)
    ans = {"talks": [{"talk": "k1", "parts": [{"from": "s1", "label": "productive", "step": "s3"},
                                              {"from": "s224", "label": "redundant_work", "step": "s224", "why": "s9"}]}],
           "findings": [
               {"target": "t1", "at": a5_step, "what": "a sub-agent's detour", "why": "w", "avoid": "a", "cites": [a5_step, "s99999"]},
               {"target": "t1", "at": "s225", "what": "a main step", "cites": ["s225"]},
               {"target": "t1", "at": "s226", "what": "citing nothing"},
               {"target": "t1", "at": "s9", "what": "in productive work", "cites": ["s9"]},
               {"target": "t2", "at": "s9", "what": "no such target"},
               {"target": "t1", "at": "k1", "what": "a talk id"},
               {"target": "t1", "at": "s10", "what": " "}]}
    _, st = run(corpus_store, tmp_path, TODO, first_target(inputs_of(corpus_store, TODO)), efficiency=ans,
                stages=("targets", "efficiency"))
    eff = st["efficiency"]
    assert [(f["id"], f["target"], f["anchor"], f["cites"]) for f in eff["findings"]] == [
        ("f1", "t1", a5_step, [a5_step]), ("f2", "t1", "s225", ["s225"])]
    c = checks(eff)
    assert ("left_out", "finding at s226", "it cites no step of the window: nothing shows it") in c
    assert ("left_out", "finding at s9", "it sits in work labelled productive: the stage's findings concern work it "
            "labelled avoidable") in c
    assert ("left_out", "finding at s9", "it names 't2', which is no target of the talks this call labels") in c
    assert any(w == "finding at k1" and "its anchor is no step of t1's talks" in x for _, w, x in c)
    assert ("left_out", "finding at s10", "it says nothing of what went wrong") in c


def test_talks_are_labelled_side_by_side_cut_by_their_outlines(corpus_store: Any, tmp_path: Path) -> None:
    from asz_core.navigation import Navigator

    w = window.build(corpus_store, SPOTTER)
    nav = Navigator(w, corpus_store)
    budget = (nav.outline_bytes("k1") + 10) * 4 // 3  # k1 alone fills three quarters: k2 goes to a call of its own
    tg = spotter_targets([{"target": "new:b", "action": "create"}], k2=True)
    ans = [{"talks": [{"talk": "k1", "parts": [{"from": "s1", "label": "productive", "step": "s2"}]}]},
           {"talks": [{"talk": "k2", "parts": [{"from": "s432", "label": "productive", "step": "s432"}]}]}]
    path, st = run(corpus_store, tmp_path, SPOTTER, tg, efficiency=ans, stages=("targets", "efficiency"),
                   settings={"judge.read_bytes": budget})
    eff = st["efficiency"]
    assert eff["status"] == "complete", eff["note"]
    assert eff["run"]["calls"] == 2 and [(t["talk"], t["call"]) for t in eff["talks"]] == [("k1", 1), ("k2", 2)]
    assert '"id":"k2"' not in (path / "calls/efficiency/1/1/prompt.md").read_text()


# --- exact shares: inputs typed mid-work, a sub-agent that misled the agent -------------------------

def spotter_targets(i3: list[dict[str, Any]], k2: bool = False) -> dict[str, Any]:
    """i1 (s1) creates t1, i2 (s106, typed mid-work: "check again") steers it, i3 (s132, typed
    mid-work: "new beads ... tackle them") acts as given; k2 (i4, accepting t2) serves t2 when asked."""
    rel = lambda f: [{"relation": "continue", "goal": "new:G", "follows": f}]  # noqa: E731
    return {"inputs": [
        {"input": "i1", "actions": [{"target": "new:a", "action": "create"}], "relations": [{"relation": "new", "goal": "new:G"}]},
        {"input": "i2", "actions": [{"target": "new:a", "action": "steer"}], "relations": rel("i1")},
        {"input": "i3", "actions": i3, "relations": rel("i2")},
        {"input": "i4", "actions": [{"target": "new:b", "action": "accept"}] if k2 else [{"action": "none"}],
         "relations": rel("i3")}],
        "targets": [{"target": "new:a", "statement": "gqc", "kind": "change", "criteria": [{"text": "done"}]},
                    {"target": "new:b", "statement": "beads", "kind": "change", "criteria": [{"text": "done"}],
                     **({"talks": ["k2"]} if k2 else {})}]}


def misled_run(store: Any, tmp_path: Path, dispatch: dict[str, Any], i3: list[dict[str, Any]]) -> tuple[Path, dict[str, Any]]:
    """a1 (started by s343, after i3) reported on Claude Code's hooks; its WebFetch s441 is checked
    against its report and found it inaccurate; the main agent acted on it from s346 (a Write
    asked for by s344) until s389 (asked for by s388)."""
    sub = {"decisions": [{"subtasks": ["a1"], "outcome": {"value": "completed", "cites": ["s438"]},
                          "report": {"value": "inaccurate", "cites": ["s441"]}, "used": {"value": "used", "cites": ["s344"]},
                          "dispatch": dispatch, "misled": "s346", "label": {"label": "productive", "step": "s438"}},
                         {"subtasks": ["a2"], "label": {"label": "productive", "step": "s447"}}]}
    eff = {"talks": [{"talk": "k1", "parts": [
        {"from": "s1", "label": "productive", "step": "s2"},
        {"from": "s346", "label": "misled_by_subtask", "step": "s346", "why": "s346"},
        {"from": "s389", "label": "productive", "step": "s389"}]}]}
    return run(store, tmp_path, SPOTTER, spotter_targets(i3), sub, eff)


@pytest.mark.parametrize("dispatch,charge,cause", [
    ({"value": "right", "cites": ["s343"]}, "subtask", "subtask"),
    ({"value": "misdirected", "cites": ["s343", "s132"]}, "giver", "main_agent"),
    ({"value": "unknown"}, "unknown", "unknown")])
@pytest.mark.parametrize("split", [False, True])
def test_misled_work_is_charged_by_the_dispatch_in_exact_shares(corpus_store: Any, tmp_path: Path, dispatch: dict[str, Any],
                                                               charge: str, cause: str, split: bool) -> None:
    i3 = [{"target": "new:b", "action": "create"}, *([{"target": "new:a", "action": "refine"}] if split else [])]
    path, st = misled_run(corpus_store, tmp_path, dispatch, i3)
    a1 = by_stream(st["subtasks"])["a1"]
    assert (a1["misled"], a1["charge"], a1["report_back"]) == ("s346", charge, "s343")
    conv = window.build(corpus_store, SPOTTER).conv
    misled = main_calls(conv, "k1", 344, 388)
    assert misled[0] == "s344" and len(misled) == 16
    assert parts(st["efficiency"], "k1")[1] == ("s346", "misled_by_subtask", cause, misled)
    # the exact share of each target, from the ledger's calls, computed here
    led = ledger.build(conv, ledger.load_prices(None))
    money = {c.step: Fraction(c.price.money) for c in led.calls}
    tokens = {c.step: sum(getattr(c.usage, k) or 0 for k in ("input", "output", "cache_read", "cache_write")) for c in led.calls}
    share = Fraction(1, 2) if split else Fraction(1)
    # a misdirected task: a1 did what it was told, so its own work is the main agent's misdirected delegation too
    avoidable = misled + (own_steps(conv, "a1", "model_call") if charge == "giver" else [])
    want_money = {"t1": sum((money[s] for s in avoidable), Fraction(0)) * (share if split else 0),
                  "t2": sum((money[s] for s in avoidable), Fraction(0)) * share}
    costing = for_run(path, corpus_store)
    for t in ("t1", "t2"):
        got = costing.portion(t, avoidable)
        assert got.money == want_money[t], t
        assert got.token_sum == sum((tokens[s] for s in avoidable), 0) * (share if (split or t == "t2") else 0)
    # close prices the same rows: the avoidable part per target and cause, rounded once
    close = json.loads((path / "close.json").read_text())["statement"]
    for tgt in close["targets"]:
        av = tgt["cost"]["avoidable_by_cause"]
        assert Decimal(av[cause]["money"]) == decimal_of(want_money[tgt["id"]]), (tgt["id"], av)
        assert all(av[c]["calls"] == 0 for c in av if c != cause)
    # every call of each target is labelled or not reviewed, and the parts add up to its cost exactly
    rows = {**labels(st["subtasks"]), **labels(st["efficiency"])}
    for r in costing.record.targets:
        mine = [s for s, to in costing.of_call.items() if r.target in to]
        by: dict[str, list[str]] = {}
        for s in mine:
            by.setdefault(rows.get(s, ("not_reviewed", None))[0], []).append(s)
        assert sum((costing.portion(r.target, v).money for v in by.values()), Fraction(0)) == r.cost.money
        assert sum((costing.portion(r.target, v).calls for v in by.values()), Fraction(0)) == r.cost.calls
    # a1's own calls carry its own work's label, never the misled part's
    own = {rows[s] for s in own_steps(conv, "a1", "model_call")}
    assert own == ({("misdirected_delegation", "main_agent")} if charge == "giver" else {("productive", None)})


def test_misled_work_begins_at_the_step_that_acted_on_the_report(corpus_store: Any, tmp_path: Path) -> None:
    sub = {"decisions": [{"subtasks": ["a1"], "report": {"value": "inaccurate", "cites": ["s441"]},
                          "dispatch": {"value": "right", "cites": ["s343"]}, "misled": "s346"}]}
    eff = {"talks": [{"talk": "k1", "parts": [
        {"from": "s1", "label": "productive", "step": "s2"},
        {"from": "s344", "label": "misled_by_subtask", "step": "s346", "why": "s346"},  # begins before the acting step
        {"from": "s389", "label": "misled_by_subtask", "step": "s389", "why": "s389"}]}]}  # no step that acted on a report
    _, st = run(corpus_store, tmp_path, SPOTTER, spotter_targets([{"target": "new:b", "action": "create"}]), sub, eff)
    got = parts(st["efficiency"], "k1")
    assert [(p[0], p[1]) for p in got] == [("s1", "productive"), ("s344", "not_reviewed"), ("s389", "not_reviewed")]
    c = checks(st["efficiency"])
    assert ("left_out", "k1 from s344", "misled work begins at the step that acted on the report (s346), after s344 where "
                                        "this part begins: its cost is not reviewed") in c
    assert any(w == "k1 from s389" and "which is no step of this talk that acted on" in x for _, w, x in c)


def test_a_finding_outside_its_targets_work_is_left_out(corpus_store: Any, tmp_path: Path) -> None:
    """258c7280: t1's work is k1 and the sub-agent a1 it started (s438 is a1's WebFetch); k2 is
    no target's; a2 is a helper no step started."""
    eff = {"talks": [{"talk": "k1", "parts": [{"from": "s1", "label": "repeated_failure", "step": "s2", "why": "s134"}]}],
           "findings": [{"target": "t1", "at": "s438", "what": "in a1", "cites": ["s438"]},
                        {"target": "t1", "at": "s433", "what": "in k2", "cites": ["s433"]},
                        {"target": "t1", "at": "s447", "what": "in a2", "cites": ["s447"]}]}
    _, st = run(corpus_store, tmp_path, SPOTTER, spotter_targets([{"target": "new:a", "action": "refine"}]), None, eff,
                stages=("targets", "efficiency"))
    e = st["efficiency"]
    assert [(f["target"], f["anchor"]) for f in e["findings"]] == [("t1", "s438")]
    c = checks(e)
    assert any(w == "finding at s433" and "its anchor is no step of t1's talks or of their sub-tasks" in x for _, w, x in c)
    assert any(w == "finding at s447" and "its anchor is no step of t1's talks" in x for _, w, x in c)


def test_hostile_answers_leave_work_not_reviewed_and_never_crash(corpus_store: Any, tmp_path: Path) -> None:
    junk: list[Any] = [None, 5, "s1", [], {"label": {"label": "productive"}}, {"from": 7, "label": []},
                       {"from": "s1", "label": "productive", "step": {"id": "s3"}, "why": ["s9"]}]
    sub = {"decisions": [None, 3, "a1", {"subtasks": "a1"}, {"subtasks": [1, None, "a1"], "outcome": "completed",
           "report": {"value": "inaccurate", "cites": "s441"}, "used": {"value": "used", "cites": [{"s": 1}]},
           "dispatch": {"value": ["right"]}, "misled": {"step": "s346"}, "label": "productive", "note": 5}]}
    eff = {"talks": [None, "k1", {"talk": ["k1"]}, {"talk": "k1", "parts": 12}, {"talk": "k2", "parts": junk}],
           "findings": "none"}
    _, st = run(corpus_store, tmp_path, SPOTTER, spotter_targets([{"target": "new:b", "action": "create"}], k2=True), sub, eff)
    for s in ("subtasks", "efficiency"):
        assert st[s]["status"] == "partial", st[s]["reason"]
    a1 = by_stream(st["subtasks"])["a1"]
    assert (a1["outcome"]["value"], a1["report"]["value"], a1["used"]["value"], a1["dispatch"]["value"], a1["misled"],
            a1["label"]["label"]) == ("unknown", "unknown", "unknown", "unknown", None, "not_reviewed")
    assert st["subtasks"]["calls"] == [] and st["efficiency"]["calls"] == [] and st["efficiency"]["findings"] == []


def test_with_a_sub_task_stage_a_finding_in_a_sub_tasks_work_follows_its_own_label(corpus_store: Any, tmp_path: Path) -> None:
    """fe5e1c67 with a sub-task stage: a2's own work labelled redundant, a3's productive, while k1's
    part that started both is productive: a finding in a2's work is kept, one in a3's left out."""
    conv = window.build(corpus_store, TODO).conv
    a2, a3 = own_steps(conv, "a2", "model_call")[0], own_steps(conv, "a3", "model_call")[0]
    sub = {"decisions": [{"subtasks": ["a2"], "label": {"label": "redundant_work", "step": a2, "why": "s9"}},
                         {"subtasks": ["a3"], "label": {"label": "productive", "step": a3}}]}
    eff = {"talks": [{"talk": "k1", "parts": [{"from": "s1", "label": "productive", "step": "s3"}]}],
           "findings": [{"target": "t1", "at": a2, "what": "done already", "cites": [a2]},
                        {"target": "t1", "at": a3, "what": "not avoidable", "cites": [a3]}]}
    _, st = run(corpus_store, tmp_path, TODO, first_target(inputs_of(corpus_store, TODO)), sub, eff,
                settings={"judge.mode": "single"})
    assert by_stream(st["subtasks"])["a2"]["label"]["label"] == "redundant_work"
    assert [f["anchor"] for f in st["efficiency"]["findings"]] == [a2]
    assert any(w == f"finding at {a3}" and "it sits in work labelled productive" in x for _, w, x in checks(st["efficiency"]))


def test_a_finding_in_a_sub_tasks_work_nobody_labelled_is_left_out(corpus_store: Any, tmp_path: Path) -> None:
    """fe5e1c67: k1's part from s224 is labelled redundant_work, and a5 was started in it (s228). With
    a sub-task stage, a5's work is labelled by that stage alone: when the stage failed, or judged a2
    only, a5's work is not reviewed, so a finding in it concerns no work labelled avoidable and is
    left out; one at the main step s225, in the avoidable part, is kept."""
    conv = window.build(corpus_store, TODO).conv
    a5 = own_steps(conv, "a5", "tool")[0]
    eff = {**TODO_PARTS, "findings": [{"target": "t1", "at": a5, "what": "a5 redid the work", "cites": [a5]},
                                      {"target": "t1", "at": "s225", "what": "gave the work again", "cites": ["s225", "s9"]}]}
    only_a2 = {"decisions": [{"subtasks": ["a2"], "label": {"label": "productive", "step": own_steps(conv, "a2", "model_call")[0]}}]}
    for sub, status in ((None, "failed"), (only_a2, "partial")):
        _, st = run(corpus_store, tmp_path, TODO, first_target(inputs_of(corpus_store, TODO)), sub, eff,
                    settings={"judge.mode": "single"})
        assert st["subtasks"]["status"] == status
        assert [(f["id"], f["anchor"], f["cites"]) for f in st["efficiency"]["findings"]] == [("f1", "s225", ["s225", "s9"])]
        assert ("left_out", f"finding at {a5}", "it sits in work labelled not_reviewed: the stage's findings concern work "
                "it labelled avoidable") in checks(st["efficiency"])
