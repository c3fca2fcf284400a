"""Named rule breaks in evaluator answers over 258c7280, each with what a reader of the spec keeps,
written out as literal data: the states and the citations that show them, the basis, the events,
claims, contradictions and rounds of rework kept, and the close's class and final score; for a
sub-task decision, each value kept with its citations. Nothing expected here is computed by
asz_core (no evidence predicate, no stage function): weakening a rule of evidence turns a case red.

The answers are test_adversarial_answers.py's plain ones (BASE), one target's changed per case.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from .test_adversarial_answers import BASE, judge, put


# --- named rule breaks, each with what a reader of the spec gives, written out ---------------------
# Over 258c7280 as the module docstring of achievement_story.py reads it: s116 and s138 are the
# agent's replies ("All 43 tests pass", "Pushed."), s117 the test run that returned, s131 the
# commit, s134 the push that failed, s136 the push; s104 an interrupt, s53, s105, s114 and s427
# runtime notices (task notifications), s291 a compaction summary; s1 (i1) created t1, s106 (i2)
# steered it, s132 (i3) created t2, s432 (i4) created t3; the sub-task a1 (started by the Task
# call s343, its report back) was given its task s435, ran the WebFetch calls s438 and s441 and
# replied s443. Nothing below is computed: each expected value is the spec's rule applied by hand.

T1_SAYS = {"level": "achieved", "basis": ("observed_result", ["s117"]),
           "criteria": {"t1.c1": ("met", ["s117", "s131"]), "t1.c2": ("met", ["s117"]), "t1.c3": ("met", ["s131"])},
           "events": [("delivered", "revision", "s131")], "claims": [("s116", "supported")], "contradictions": [],
           "rework": [("s106", ["s100"], ["s108"])], "close": ("achieved", "1")}
"""t1 as the plain answer gives it: every criterion shown by a tool result."""
T2_SAYS = {"level": "unverified", "basis": ("observed_result", ["s136"]),
           "criteria": {"t2.c1": ("unknown", []), "t2.c2": ("met", ["s136"])},
           "events": [("delivered", "remote_change", "s136")], "claims": [], "contradictions": [],
           "rework": [("s134", ["s134"], ["s136"])], "close": ("unverified", "1/2")}
T3_SAYS = {"level": "achieved", "basis": ("delivered_answer", ["s434"]), "criteria": {"t3.c1": ("met", ["s434"])},
           "events": [("delivered", "answer", "s434")], "claims": [("s434", "supported")], "contradictions": [],
           "rework": [], "close": ("achieved", "1")}


def _c1(**kw: Any) -> dict[str, Any]:
    return {"criteria": {"t1.c1": ("met", ["s117", "s131"]), "t1.c2": ("met", ["s117"]), "t1.c3": ("met", ["s131"]), **kw}}


E1 = {"key": "e1", "event": "delivered", "concerns": "revision", "cites": ["s131"]}
ADVERSARIAL: list[tuple[str, str, list[tuple[tuple[Any, ...], Any]], dict[str, Any]]] = [
    # (case, target, changes to its plain answer (path -> value), what the spec gives where it differs)
    ("a reply cited as a test's result", "t1", [(("criteria", 1, "cites"), ["s116"]), (("criteria", 1, "observations"), [])],
     {"level": "unverified", **_c1(**{"t1.c2": ("unknown", [])}), "close": ("unverified", "2/3")}),
    ("a sub-agent's reply cited", "t1", [(("criteria", 0, "cites"), ["s443"])],
     {"level": "unverified", **_c1(**{"t1.c1": ("unknown", [])}), "close": ("unverified", "2/3")}),
    ("a sub-agent's report back cited", "t1", [(("criteria", 0, "cites"), ["s343"])],
     {"level": "unverified", **_c1(**{"t1.c1": ("unknown", [])}), "close": ("unverified", "2/3")}),
    ("a sub-agent's tool result cited", "t1", [(("criteria", 0, "cites"), ["s438"])], _c1(**{"t1.c1": ("met", ["s438"])})),
    ("the task given a sub-agent cited", "t1", [(("criteria", 0, "cites"), ["s435"])],
     {"level": "unverified", **_c1(**{"t1.c1": ("unknown", [])}), "close": ("unverified", "2/3")}),
    ("a compaction summary cited", "t1", [(("criteria", 0, "cites"), ["s291"])],
     {"level": "unverified", **_c1(**{"t1.c1": ("unknown", [])}), "close": ("unverified", "2/3")}),
    ("a runtime notice cited as evidence", "t1", [(("criteria", 2, "cites"), ["s53"])],
     {"level": "unverified", **_c1(**{"t1.c3": ("unknown", [])}), "close": ("unverified", "2/3")}),
    ("a runtime notice cited as the person's acceptance", "t1", [(("basis",), "person_accepted"), (("basis_cites",), ["s105"])],
     {"basis": ("no_evidence", ["s105"])}),
    ("the input that steered the target cited", "t1",
     [(("criteria", 1, "cites"), ["s106"]), (("criteria", 1, "observations"), [])],
     {"level": "unverified", **_c1(**{"t1.c2": ("unknown", [])}), "close": ("unverified", "2/3")}),
    ("an interrupt shows a criterion not met", "t1",
     [(("criteria", 1, "state"), "not_met"), (("criteria", 1, "cites"), ["s104"]), (("criteria", 1, "observations"), [])],
     {"level": "partial", **_c1(**{"t1.c2": ("not_met", ["s104"])}), "close": ("partial", "2/3")}),
    ("the person's later input shows a criterion not met", "t1",
     [(("criteria", 1, "state"), "not_met"), (("criteria", 1, "cites"), ["s432"]), (("criteria", 1, "observations"), [])],
     {"level": "partial", **_c1(**{"t1.c2": ("not_met", ["s432"])}), "close": ("partial", "2/3")}),
    ("the person's later input as acceptance", "t1", [(("basis",), "person_accepted"), (("basis_cites",), ["s432"])],
     {"basis": ("person_accepted", ["s432"])}),
    ("a change resting on a reply", "t1", [(("basis",), "delivered_answer"), (("basis_cites",), ["s138"])],
     {"basis": ("agent_claim_only", ["s138"])}),
    ("a revision delivered at a reply", "t1", [(("events",), [{**E1, "cites": ["s116"]}])], {"events": []}),
    ("a push delivered at the push that failed", "t2",
     [(("events",), [{"key": "e1", "event": "delivered", "concerns": "remote_change", "cites": ["s134"]}])], {"events": []}),
    ("a claim the test run contradicts", "t1",
     [(("claims",), [{"claim": "All 43 tests pass", "said": "s116", "check": "contradicted", "cites": ["s117"],
                      "criteria": ["t1.c2"]}])],
     {"level": "partial", **_c1(**{"t1.c2": ("not_met", ["s117"])}), "claims": [("s116", "contradicted")],
      "close": ("partial", "2/3")}),
    ("a claim said by the person", "t1", [(("claims",), [{"claim": "x", "said": "s1", "check": "supported", "cites": ["s117"]}])],
     {"claims": []}),
    ("a contradiction resting on a reply", "t1",
     [(("contradictions",), [{"delivery": "e1", "disproves": "conclusion", "cites": ["s138"]}])], {}),
    ("a contradiction resting on a runtime notice", "t1",
     [(("contradictions",), [{"delivery": "e1", "disproves": "conclusion", "cites": ["s114"]}])], {}),
    ("a contradiction by the person's later input", "t1",
     [(("contradictions",), [{"delivery": "e1", "disproves": "criteria", "criteria": ["t1.c2"], "cites": ["s432"]}])],
     {"contradictions": ["t1.e1"], "close": ("contradicted", "2/3")}),
    ("a contradiction naming an undoing", "t1",
     [(("events",), [E1, {"key": "e2", "event": "undone", "concerns": "file", "cites": ["s136"], "deliveries": ["e1"]}]),
      (("contradictions",), [{"delivery": "e2", "disproves": "conclusion", "cites": ["s432"]}])],
     {"events": [("delivered", "revision", "s131"), ("undone", "file", "s136")], "close": ("reverted", "0")}),
    ("a closing summary given as a delivery again", "t1",
     [(("events",), [E1, {"key": "e2", "event": "delivered_again", "concerns": "answer", "cites": ["s138"], "corrects": ["e1"]}])],
     {}),
    ("a rework round triggered by a runtime notice", "t1", [(("rework", 0, "trigger_step"), "s105")], {"rework": []}),
    ("a redo before its trigger", "t1", [(("rework", 0, "redo"), ["s100"])], {"rework": []}),
    ("a redo in work another target received", "t1", [(("rework", 0, "redo"), ["s136"])], {"rework": []}),
    ("a criterion not met resting on the reply that delivered the answer", "t3", [(("criteria", 0, "state"), "not_met")],
     {"level": "unverified", "criteria": {"t3.c1": ("unknown", [])}, "close": ("unverified", "0")}),
    ("a contradicted claim over undecided criteria, naming another target's criterion", "t2",
     [(("criteria", 1), {"id": "t2.c2", "state": "unknown", "cites": [], "reason": "not read"}),
      (("claims",), [{"claim": "Pushed.", "said": "s138", "check": "contradicted", "cites": ["s134"], "criteria": ["t1.c1"]}])],
     {"level": "not_achieved", "criteria": {"t2.c1": ("not_met", ["s134"]), "t2.c2": ("not_met", ["s134"])},
      "claims": [("s138", "contradicted")], "close": ("not_achieved", "0")}),
    ("a question answered by a sub-agent's reply", "t3", [(("basis_cites",), ["s443"]), (("criteria", 0, "cites"), ["s443"])],
     {"level": "unverified", "basis": ("agent_claim_only", ["s443"]), "criteria": {"t3.c1": ("unknown", [])},
      "close": ("unverified", "0")}),
]
"""Each case: one rule broken in one target's plain answer, and what the spec keeps."""

A1_SAYS = ("completed", ["s438"], "inaccurate", ["s441"], "used", "right", "s346", "productive", "s438")
SUBTASK_CASES: list[tuple[str, dict[str, Any], tuple[Any, ...]]] = [
    # (case, a1's decision changed, what the spec keeps of a1: outcome, its cites, report, its cites,
    #  used, dispatch, misled, label, the label's step)
    ("the plain answer", {}, A1_SAYS),
    ("a report checked against the sub-agent's own reply", {"report": {"value": "inaccurate", "cites": ["s443"]}},
     ("completed", ["s438"], "unknown", [], "used", "right", None, "productive", "s438")),
    ("an outcome resting on the report back", {"outcome": {"value": "completed", "cites": ["s343"]}},
     ("unknown", [], "inaccurate", ["s441"], "used", "right", "s346", "productive", "s438")),
    ("an outcome resting on a tool result of the main stream", {"outcome": {"value": "completed", "cites": ["s117"]}},
     ("unknown", [], "inaccurate", ["s441"], "used", "right", "s346", "productive", "s438")),
    ("used, shown by the person's input", {"used": {"value": "used", "cites": ["s432"]}},
     ("completed", ["s438"], "inaccurate", ["s441"], "unknown", "right", "s346", "productive", "s438")),
    ("used, shown by a runtime notice", {"used": {"value": "used", "cites": ["s427"]}},
     ("completed", ["s438"], "inaccurate", ["s441"], "unknown", "right", "s346", "productive", "s438")),
    ("misled before the report came back", {"misled": "s342"},
     ("completed", ["s438"], "inaccurate", ["s441"], "used", "right", None, "productive", "s438")),
    ("a label citing the task it was given", {"label": {"label": "productive", "step": "s435", "why": None}},
     ("completed", ["s438"], "inaccurate", ["s441"], "used", "right", "s346", "not_reviewed", "s435")),
    ("a task shown wrong by the agent's reply", {"dispatch": {"value": "misdirected", "cites": ["s343", "s345"]}},
     ("completed", ["s438"], "inaccurate", ["s441"], "used", "unknown", "s346", "productive", "s438")),
    ("a task shown wrong by the person", {"dispatch": {"value": "misdirected", "cites": ["s343", "s432"]}},
     ("completed", ["s438"], "inaccurate", ["s441"], "used", "misdirected", "s346", "misdirected_delegation", "s438")),
]


def _kept(path: Path, tid: str) -> dict[str, Any]:
    """What the achievement stage and the close kept of ``tid``, in the tables' words."""
    a = json.loads((path / "stages" / "achievement.json").read_text())
    r = next(x for x in a["achievement"] if x["target"] == tid)
    st = json.loads((path / "close.json").read_text())["statement"]
    o = next(x for x in st["targets"] if x["id"] == tid)["outcome"]
    return {"level": r["level"], "basis": (r["basis"], r["basis_cites"]),
            "criteria": {c["id"]: (c["state"], c["shown_by"]) for c in r["criteria"]},
            "events": [(e["event"], e["concerns"], e["at"]) for e in r["events"]],
            "claims": [(c["said"], c["check"]) for c in r["claims"]],
            "contradictions": [x["delivery"] for x in r["contradictions"]],
            "rework": [(w["trigger_step"], w["attempt"], w["redo"]) for w in r["rework"]],
            "close": (o["class"], o["final_score"])}


@pytest.mark.parametrize("case,tid,changes,says", ADVERSARIAL, ids=[c[0] for c in ADVERSARIAL])
def test_a_rule_broken_in_an_answer_is_kept_as_the_spec_says(corpus_store: Any, tmp_path: Path, case: str, tid: str,
                                                              changes: list[tuple[tuple[Any, ...], Any]],
                                                              says: dict[str, Any]) -> None:
    answers = copy.deepcopy(BASE)
    n = {"t1": 0, "t2": 1, "t3": 2}[tid]
    mine = answers["achievement"][n]["targets"][0]
    for path, value in changes:
        put(mine, path, copy.deepcopy(value))
    got = _kept(judge(corpus_store, tmp_path, answers), tid)
    assert got == {**{"t1": T1_SAYS, "t2": T2_SAYS, "t3": T3_SAYS}[tid], **says}, case


def test_the_plain_answers_are_kept_as_the_spec_says(corpus_store: Any, tmp_path: Path) -> None:
    path = judge(corpus_store, tmp_path, BASE)
    assert [_kept(path, t) for t in ("t1", "t2", "t3")] == [T1_SAYS, T2_SAYS, T3_SAYS]


def test_a_sub_task_decision_broken_is_kept_as_the_spec_says(corpus_store: Any, tmp_path: Path) -> None:
    for case, changed, says in SUBTASK_CASES:
        answers = copy.deepcopy(BASE)
        answers["subtasks"][0]["decisions"][0].update(copy.deepcopy(changed))
        path = judge(corpus_store, tmp_path, answers)
        j = json.loads((path / "stages" / "subtasks.json").read_text())["subtasks"][0]
        got = (j["outcome"]["value"], j["outcome"]["cites"], j["report"]["value"], j["report"]["cites"], j["used"]["value"],
               j["dispatch"]["value"], j["misled"], j["label"]["label"], j["label"]["step"])
        assert (j["stream"], got) == ("a1", says), case
