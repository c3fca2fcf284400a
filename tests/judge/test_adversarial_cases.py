"""Named rule breaks in evaluator answers over 258c7280, each with what a reader of the spec keeps,
written out as literal data: the states and the citations that show them, the basis, the events,
claims, contradictions, rounds of rework, findings and a question's account kept, what asz left
out, filled in or changed of the answer (the kind, where, and the words of the record's fact its
reason names), and the close's class and final score; for a sub-task decision, each value kept
with its citations; for an efficiency finding, the findings kept and those left out. Nothing
expected here is computed by asz_core (no evidence predicate, no stage function): weakening a rule
of evidence or a stage's check turns a case red. Each one-line weakening of evidence.py and of the
stages' checks tried for issue 25 (an agent's reply, a sub-agent's reply or report back, a summary
or a runtime notice counted as observed; a report back counted as a tool result; the input that
set a target, one before it, one from no person or a sub-agent's task counted as the person's
later input; a step of another target's talk admitted as its work; ...) fails at least one case.

The answers are test_adversarial_answers.py's plain ones (BASE), one target's (or one decision's,
or one efficiency call's findings) changed per case; a change may touch the targets stage's answer.
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
           "rework": [("s106", ["s100"], ["s108"])], "findings": ["s100"], "question": None, "dropped": [],
           "close": ("achieved", "1")}
"""t1 as the plain answer gives it: every criterion shown by a tool result."""
T2_SAYS = {"level": "unverified", "basis": ("observed_result", ["s136"]),
           "criteria": {"t2.c1": ("unknown", []), "t2.c2": ("met", ["s136"])},
           "events": [("delivered", "remote_change", "s136")], "claims": [], "contradictions": [],
           "rework": [("s134", ["s134"], ["s136"])], "findings": [], "question": None, "dropped": [],
           "close": ("unverified", "1/2")}
T3_SAYS = {"level": "achieved", "basis": ("delivered_answer", ["s434"]), "criteria": {"t3.c1": ("met", ["s434"])},
           "events": [("delivered", "answer", "s434")], "claims": [("s434", "supported")], "contradictions": [],
           "rework": [], "findings": [], "question": (["s432"], [["s136"]], [], ["s434"]), "dropped": [],
           "close": ("achieved", "1")}
"""t3's question: asked at i4 (s432), checked by the push s136, answered by the reply s434."""


def _c1(**kw: Any) -> dict[str, Any]:
    return {"criteria": {"t1.c1": ("met", ["s117", "s131"]), "t1.c2": ("met", ["s117"]), "t1.c3": ("met", ["s131"]), **kw}}


E1 = {"key": "e1", "event": "delivered", "concerns": "revision", "cites": ["s131"]}
TARGETS_STAGE = "the targets stage's answer"
"""A change's path starting with this changes the targets stage's answer, not the target's."""
NO_DELIVERY = ("noted", "t1", "criteria met and no delivery kept")
ADVERSARIAL: list[tuple[str, str, list[tuple[tuple[Any, ...], Any]], dict[str, Any]]] = [
    # (case, target, changes to its plain answer (path -> value), what the spec gives where it differs,
    #  "dropped" being what asz left out or changed, where, and words its reason holds)
    ("a reply cited as a test's result", "t1", [(("criteria", 1, "cites"), ["s116"]), (("criteria", 1, "observations"), [])],
     {"level": "unverified", **_c1(**{"t1.c2": ("unknown", [])}), "close": ("unverified", "2/3"),
      "dropped": [("changed", "t1.c2", "s116: a reply of the agent")]}),
    ("a sub-agent's reply cited", "t1", [(("criteria", 0, "cites"), ["s443"])],
     {"level": "unverified", **_c1(**{"t1.c1": ("unknown", [])}), "close": ("unverified", "2/3"),
      "dropped": [("changed", "t1.c1", "s443: a reply of the sub-agent a1")]}),
    ("a sub-agent's report back cited", "t1", [(("criteria", 0, "cites"), ["s343"])],
     {"level": "unverified", **_c1(**{"t1.c1": ("unknown", [])}), "close": ("unverified", "2/3"),
      "dropped": [("changed", "t1.c1", "s343: the Task call returned a sub-agent's report back")]}),
    ("a sub-agent's tool result cited", "t1", [(("criteria", 0, "cites"), ["s438"])], _c1(**{"t1.c1": ("met", ["s438"])})),
    ("the task given a sub-agent cited", "t1", [(("criteria", 0, "cites"), ["s435"])],
     {"level": "unverified", **_c1(**{"t1.c1": ("unknown", [])}), "close": ("unverified", "2/3"),
      "dropped": [("changed", "t1.c1", "s435: a task an agent gave a sub-agent")]}),
    ("a compaction summary cited", "t1", [(("criteria", 0, "cites"), ["s291"])],
     {"level": "unverified", **_c1(**{"t1.c1": ("unknown", [])}), "close": ("unverified", "2/3"),
      "dropped": [("changed", "t1.c1", "s291: a compaction summary")]}),
    ("a runtime notice cited as evidence", "t1", [(("criteria", 2, "cites"), ["s53"])],
     {"level": "unverified", **_c1(**{"t1.c3": ("unknown", [])}), "close": ("unverified", "2/3"),
      "dropped": [("changed", "t1.c3", "s53: a runtime notice (task_notification)")]}),
    ("a runtime notice cited as the person's acceptance", "t1", [(("basis",), "person_accepted"), (("basis_cites",), ["s105"])],
     {"basis": ("no_evidence", ["s105"]), "dropped": [("changed", "t1 basis", "person_accepted weakened to no_evidence")]}),
    ("the input that steered the target cited", "t1",
     [(("criteria", 1, "cites"), ["s106"]), (("criteria", 1, "observations"), [])],
     {"level": "unverified", **_c1(**{"t1.c2": ("unknown", [])}), "close": ("unverified", "2/3"),
      "dropped": [("changed", "t1.c2", "s106: the person's input i2, which set t1: what was asked, never that it was done")]}),
    ("an interrupt shows a criterion not met", "t1",
     [(("criteria", 1, "state"), "not_met"), (("criteria", 1, "cites"), ["s104"]), (("criteria", 1, "observations"), [])],
     {"level": "partial", **_c1(**{"t1.c2": ("not_met", ["s104"])}), "close": ("partial", "2/3")}),
    ("the person's later input shows a criterion not met", "t1",
     [(("criteria", 1, "state"), "not_met"), (("criteria", 1, "cites"), ["s432"]), (("criteria", 1, "observations"), [])],
     {"level": "partial", **_c1(**{"t1.c2": ("not_met", ["s432"])}), "close": ("partial", "2/3")}),
    ("the person's later input as acceptance", "t1", [(("basis",), "person_accepted"), (("basis_cites",), ["s432"])],
     {"basis": ("person_accepted", ["s432"])}),
    ("a change resting on a reply", "t1", [(("basis",), "delivered_answer"), (("basis_cites",), ["s138"])],
     {"basis": ("agent_claim_only", ["s138"]),
      "dropped": [("changed", "t1 basis", "delivered_answer weakened to agent_claim_only: t1 is a change")]}),
    ("a revision delivered at a reply", "t1", [(("events",), [{**E1, "cites": ["s116"]}])],
     {"events": [], "dropped": [("left_out", "t1 event e1", "s116: a reply of the agent"), NO_DELIVERY]}),
    ("a push delivered at the push that failed", "t2",
     [(("events",), [{"key": "e1", "event": "delivered", "concerns": "remote_change", "cites": ["s134"]}])],
     {"events": [], "dropped": [("left_out", "t2 event e1", "s134: the Bash call failed"),
                                ("noted", "t2", "criteria met and no delivery kept")]}),
    ("a claim the test run contradicts", "t1",
     [(("claims",), [{"claim": "All 43 tests pass", "said": "s116", "check": "contradicted", "cites": ["s117"],
                      "criteria": ["t1.c2"]}])],
     {"level": "partial", **_c1(**{"t1.c2": ("not_met", ["s117"])}), "claims": [("s116", "contradicted")],
      "close": ("partial", "2/3"), "dropped": [("changed", "t1.c2", "the claim 'All 43 tests pass' (s116) is contradicted by s117")]}),
    ("a claim said by the person", "t1", [(("claims",), [{"claim": "x", "said": "s1", "check": "supported", "cites": ["s117"]}])],
     {"claims": [], "dropped": [("left_out", "t1 claim 1", "s1: the person's input i1, which is no words of the agent")]}),
    ("a contradiction resting on a reply", "t1",
     [(("contradictions",), [{"delivery": "e1", "disproves": "conclusion", "cites": ["s138"]}])],
     {"dropped": [("left_out", "t1 contradiction 1", "s138: a reply of the agent")]}),
    ("a contradiction resting on a runtime notice", "t1",
     [(("contradictions",), [{"delivery": "e1", "disproves": "conclusion", "cites": ["s114"]}])],
     {"dropped": [("left_out", "t1 contradiction 1", "s114: a runtime notice (task_notification)")]}),
    ("a contradiction by the person's later input", "t1",
     [(("contradictions",), [{"delivery": "e1", "disproves": "criteria", "criteria": ["t1.c2"], "cites": ["s432"]}])],
     {"contradictions": ["t1.e1"], "close": ("contradicted", "2/3")}),
    ("a contradiction naming an undoing", "t1",
     [(("events",), [E1, {"key": "e2", "event": "undone", "concerns": "file", "cites": ["s136"], "deliveries": ["e1"]}]),
      (("contradictions",), [{"delivery": "e2", "disproves": "conclusion", "cites": ["s432"]}])],
     {"events": [("delivered", "revision", "s131"), ("undone", "file", "s136")], "close": ("reverted", "0"),
      "dropped": [("left_out", "t1 contradiction 1", "a contradiction of t1.e2, an undoing")]}),
    ("a closing summary given as a delivery again", "t1",
     [(("events",), [E1, {"key": "e2", "event": "delivered_again", "concerns": "answer", "cites": ["s138"], "corrects": ["e1"]}])],
     {"dropped": [("left_out", "t1 event e2", "a reply that only repeats a delivered result is no event")]}),
    ("a rework round triggered by a runtime notice", "t1", [(("rework", 0, "trigger_step"), "s105")],
     {"rework": [], "dropped": [("left_out", "t1 rework 1", "s105: a runtime notice (task_notification): it must be an "
                                                            "input of the person")]}),
    ("a redo before its trigger", "t1", [(("rework", 0, "redo"), ["s100"])],
     {"rework": [], "dropped": [("left_out", "t1 rework 1", "no step of the agent's work for the target after the trigger")]}),
    ("a redo in work another target received", "t1", [(("rework", 0, "redo"), ["s136"])],
     {"rework": [], "dropped": [("left_out", "t1 rework 1", "no step of the agent's work for the target after the trigger")]}),
    ("a criterion not met resting on the reply that delivered the answer", "t3", [(("criteria", 0, "state"), "not_met")],
     {"level": "unverified", "criteria": {"t3.c1": ("unknown", [])}, "close": ("unverified", "0"),
      "dropped": [("changed", "t3.c1", "s434: a reply of the agent")]}),
    ("a contradicted claim over undecided criteria, naming another target's criterion", "t2",
     [(("criteria", 1), {"id": "t2.c2", "state": "unknown", "cites": [], "reason": "not read"}),
      (("claims",), [{"claim": "Pushed.", "said": "s138", "check": "contradicted", "cites": ["s134"], "criteria": ["t1.c1"]}])],
     {"level": "not_achieved", "criteria": {"t2.c1": ("not_met", ["s134"]), "t2.c2": ("not_met", ["s134"])},
      "claims": [("s138", "contradicted")], "close": ("not_achieved", "0"),
      "dropped": [("left_out", "t2 claim 1", "criterion 't1.c1'"), ("noted", "t2 claim 1", "none of them the target's"),
                  ("changed", "t2.c1", "the claim 'Pushed.' (s138) is contradicted by s134"),
                  ("changed", "t2.c2", "the claim 'Pushed.' (s138) is contradicted by s134")]}),
    ("a question answered by a sub-agent's reply", "t3", [(("basis_cites",), ["s443"]), (("criteria", 0, "cites"), ["s443"])],
     {"level": "unverified", "basis": ("agent_claim_only", ["s443"]), "criteria": {"t3.c1": ("unknown", [])},
      "close": ("unverified", "0"),
      "dropped": [("changed", "t3 basis", "delivered_answer weakened to agent_claim_only: it cites no reply of the agent "
                                          "after the target was set"),
                  ("changed", "t3.c1", "s443: a reply of the sub-agent a1")]}),
    # what the cases above left uncovered (issue 25 part 3: each a one-line weakening of evidence.py or a
    # stage's check that passed every case above)
    ("a sub-agent's report back cited as the observed result", "t1", [(("basis_cites",), ["s343"])],
     {"basis": ("agent_claim_only", ["s343"]),
      "dropped": [("changed", "t1 basis", "observed_result weakened to agent_claim_only: it cites no tool step whose "
                                          "result came back")]}),
    ("a reply cited as the observed result", "t1", [(("basis_cites",), ["s116"])],
     {"basis": ("agent_claim_only", ["s116"]),
      "dropped": [("changed", "t1 basis", "observed_result weakened to agent_claim_only: it cites no tool step whose "
                                          "result came back")]}),
    ("the person's acceptance at the input that steered the target", "t1",
     [(("basis",), "person_accepted"), (("basis_cites",), ["s106"])],
     {"basis": ("no_evidence", ["s106"]), "dropped": [("changed", "t1 basis", "person_accepted weakened to no_evidence")]}),
    ("a contradiction resting on the input that steered the target", "t1",
     [(("contradictions",), [{"delivery": "e1", "disproves": "conclusion", "cites": ["s106"]}])],
     {"dropped": [("left_out", "t1 contradiction 1", "s106: the person's input i2, which set t1")]}),
    ("an earlier target's input cited for a later target's criterion", "t2",
     [(("criteria", 0, "state"), "not_met"), (("criteria", 0, "cites"), ["s106"])],
     {"dropped": [("changed", "t2.c1", "s106: the person's input i2, before t2 was set")]}),
    ("an answer delivered before the question was asked", "t3",
     [(("basis_cites",), ["s138"]), (("criteria", 0, "cites"), ["s138"]),
      (("events",), [{"key": "e1", "event": "delivered", "concerns": "answer", "cites": ["s138"]}])],
     {"level": "unverified", "basis": ("agent_claim_only", ["s138"]), "criteria": {"t3.c1": ("unknown", [])},
      "events": [], "close": ("unverified", "0"),
      "dropped": [("changed", "t3 basis", "delivered_answer weakened to agent_claim_only: it cites no reply of the agent "
                                          "after the target was set"),
                  ("changed", "t3.c1", "s138: a reply of the agent"),
                  ("left_out", "t3 event e1", "s138: a reply of the agent")]}),
    ("a claim checked against the agent's own later reply", "t1", [(("claims", 0, "cites"), ["s120"])],
     {"claims": [("s116", "no_evidence")],
      "dropped": [("changed", "t1 claim 1", "a claim only the agent's words support or contradict is no_evidence: "
                                            "nothing it cites shows it: s120: a reply of the agent")]}),
    ("a claim checked against the sub-agent's report back", "t3", [(("claims", 0, "cites"), ["s343"])],
     {"claims": [("s434", "no_evidence")],
      "dropped": [("changed", "t3 claim 1", "s343: the Task call returned a sub-agent's report back")]}),
    ("a finding anchored in another target's talk", "t3",
     [(("findings",), [{"anchor": "s100", "what": "waited on a test run", "cites": ["s100"]}])],
     {"dropped": [("left_out", "t3 finding 1", "anchored at s100: the TaskOutput call")]}),
    ("a finding anchored in the sub-task its talk started", "t1", [(("findings", 0, "anchor"), "s438")],
     {"findings": ["s438"]}),
    ("a question's check resting on the answer's own reply", "t3", [(("account", "question", "checks", 0, "cites"), ["s434"])],
     {"question": (["s432"], [], [], ["s434"]),
      "dropped": [("left_out", "t3 account check 1", "it needs a tool step that shows what it found")]}),
    ("a question's check resting on the sub-agent's report back", "t3",
     [(("account", "question", "checks", 0, "cites"), ["s343"])],
     {"question": (["s432"], [], [], ["s434"]),
      "dropped": [("left_out", "t3 account check 1", "it needs a tool step that shows what it found")]}),
    ("a question asked at the agent's reply", "t3", [(("account", "question", "asked", "cites"), ["s434"])],
     {"question": (None, [["s136"]], [], ["s434"]),
      "dropped": [("left_out", "t3 account asked", "it needs the person's input")]}),
    ("an input the targets stage found came from no person", "t1",
     [((TARGETS_STAGE, "inputs", 1), {"input": "i2", "actions": [{"target": None, "action": "not_from_person"}],
                                      "relations": [{"relation": "not_from_person"}]}),
      ((TARGETS_STAGE, "targets", 0, "criteria", 3), {"text": "a changelog entry"})],
     {"level": "unverified", "criteria": {**_c1()["criteria"], "t1.c4": ("unknown", [])}, "rework": [],
      "close": ("unverified", "3/4"),
      "dropped": [("filled_in", "t1.c4", "left out by the answer: unknown"),
                  ("left_out", "t1 rework 1", "s106: input i2, which the targets stage found came from no person")]}),
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
    # what the cases above left uncovered (issue 25 part 3)
    ("used, shown by the giver's reply before the task was given", {"used": {"value": "used", "cites": ["s342"]}},
     ("completed", ["s438"], "inaccurate", ["s441"], "unknown", "right", "s346", "productive", "s438")),
    ("an outcome resting on the task it was given", {"outcome": {"value": "completed", "cites": ["s435"]}},
     ("unknown", [], "inaccurate", ["s441"], "used", "right", "s346", "productive", "s438")),
    ("a report checked against its report back", {"report": {"value": "inaccurate", "cites": ["s343"]}},
     ("completed", ["s438"], "unknown", [], "used", "right", None, "productive", "s438")),
    ("a report checked against the giver's tool result", {"report": {"value": "inaccurate", "cites": ["s346"]}},
     ("completed", ["s438"], "unknown", [], "used", "right", None, "productive", "s438")),
    ("a label citing its own reply", {"label": {"label": "productive", "step": "s443", "why": None}},
     ("completed", ["s438"], "inaccurate", ["s441"], "used", "right", "s346", "productive", "s443")),
    ("a label citing a step of the giver", {"label": {"label": "productive", "step": "s344", "why": None}},
     ("completed", ["s438"], "inaccurate", ["s441"], "used", "right", "s346", "not_reviewed", "s344")),
]

F_T1 = {"target": "t1", "at": "s100", "what": "waited on a test run", "why": "slow", "avoid": "foreground",
        "cites": ["s100", "s104"]}
"""EFF_K1's finding: t1's wait on the test run s100, in the part k1 labels avoidable_error from s100."""
EFFICIENCY_CASES: list[tuple[str, int, list[dict[str, Any]], tuple[list[tuple[str, str]], list[tuple[str, str, str]]]]] = [
    # (case, which efficiency call's findings (0: k1, 1: k2), its findings, what the spec keeps: the findings
    #  (target, anchor) and what is left out (kind, where, words of its reason))
    ("the plain answer", 0, [F_T1], ([("t1", "s100")], [])),
    ("a finding of t3 anchored in t1's talk", 1, [{**F_T1, "target": "t3"}],
     ([("t1", "s100")], [("left_out", "finding at s100", "its anchor is no step of t3's talks or of their sub-tasks")])),
    ("a finding naming a target of another talk", 0, [F_T1, {**F_T1, "target": "t3"}],
     ([("t1", "s100")], [("left_out", "finding at s100", "it names 't3', which is no target of the talks this call labels")])),
    ("a finding in work labelled productive", 0, [F_T1, {**F_T1, "at": "s2", "cites": ["s2"]}],
     ([("t1", "s100")], [("left_out", "finding at s2", "it sits in work labelled productive")])),
    ("a finding that cites nothing", 0, [{**F_T1, "cites": []}],
     ([], [("left_out", "finding at s100", "it cites no step of the window")])),
    ("a finding in the sub-task misled work followed", 0, [{**F_T1, "at": "s438", "cites": ["s441"]}],
     ([], [("left_out", "finding at s438", "it sits in work labelled productive")])),
]
"""Efficiency findings: each concerns work the stage labelled avoidable, in its target's talks, and cites a step."""


def _question(acc: dict[str, Any] | None) -> Any:
    q = (acc or {}).get("question")
    if q is None:
        return None
    return ((q["asked"] or {}).get("cites"), [c["cites"] for c in q["checks"]], [r["cites"] for r in q["ruled_out"]],
            (q["answer"] or {}).get("cites"))


def _mine(where: str, tid: str) -> bool:
    return where == tid or where.startswith((f"{tid}.", f"{tid} "))


def _kept(path: Path, tid: str) -> dict[str, Any]:
    """What the achievement stage and the close kept of ``tid``, in the tables' words, and what the
    stage left out, filled in or changed of its answer (kind, where, its reason)."""
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
            "findings": [f["anchor"] for f in r["findings"]], "question": _question(r["account"]),
            "dropped": [(c["kind"], c["where"], c["what"]) for c in a["checks"] if _mine(c["where"], tid)],
            "close": (o["class"], o["final_score"])}


def _same(got: dict[str, Any], says: dict[str, Any]) -> bool:
    """``got`` is what ``says``: each value equal, and each check dropped where said with the words
    said in its reason (asz's sentence around them is its own)."""
    g, d = dict(got), list(got["dropped"])
    want = says["dropped"]
    g["dropped"] = [(k, w, next((x for x in (f for kk, ww, f in want if (kk, ww) == (k, w)) if x in what), what))
                    for k, w, what in d]
    return g == says


@pytest.mark.parametrize("case,tid,changes,says", ADVERSARIAL, ids=[c[0] for c in ADVERSARIAL])
def test_a_rule_broken_in_an_answer_is_kept_as_the_spec_says(corpus_store: Any, tmp_path: Path, case: str, tid: str,
                                                              changes: list[tuple[tuple[Any, ...], Any]],
                                                              says: dict[str, Any]) -> None:
    answers = copy.deepcopy(BASE)
    n = {"t1": 0, "t2": 1, "t3": 2}[tid]
    mine = answers["achievement"][n]["targets"][0]
    for path, value in changes:
        if path[0] == TARGETS_STAGE:
            put(answers["targets"][0], path[1:], copy.deepcopy(value))
        else:
            put(mine, path, copy.deepcopy(value))
    got = _kept(judge(corpus_store, tmp_path, answers), tid)
    want = {**{"t1": T1_SAYS, "t2": T2_SAYS, "t3": T3_SAYS}[tid], **says}
    assert _same(got, want), (case, got)


def test_the_plain_answers_are_kept_as_the_spec_says(corpus_store: Any, tmp_path: Path) -> None:
    path = judge(corpus_store, tmp_path, BASE)
    assert [_kept(path, t) for t in ("t1", "t2", "t3")] == [T1_SAYS, T2_SAYS, T3_SAYS]


@pytest.mark.parametrize("case,changed,says", SUBTASK_CASES, ids=[c[0] for c in SUBTASK_CASES])
def test_a_sub_task_decision_broken_is_kept_as_the_spec_says(corpus_store: Any, tmp_path: Path, case: str,
                                                             changed: dict[str, Any], says: tuple[Any, ...]) -> None:
    answers = copy.deepcopy(BASE)
    answers["subtasks"][0]["decisions"][0].update(copy.deepcopy(changed))
    path = judge(corpus_store, tmp_path, answers)
    j = json.loads((path / "stages" / "subtasks.json").read_text())["subtasks"][0]
    got = (j["outcome"]["value"], j["outcome"]["cites"], j["report"]["value"], j["report"]["cites"], j["used"]["value"],
           j["dispatch"]["value"], j["misled"], j["label"]["label"], j["label"]["step"])
    assert (j["stream"], got) == ("a1", says), case


@pytest.mark.parametrize("case,call,findings,says", EFFICIENCY_CASES, ids=[c[0] for c in EFFICIENCY_CASES])
def test_an_efficiency_finding_broken_is_kept_as_the_spec_says(corpus_store: Any, tmp_path: Path, case: str, call: int,
                                                               findings: list[dict[str, Any]],
                                                               says: tuple[list[tuple[str, str]], list[tuple[str, str, str]]]
                                                               ) -> None:
    answers = copy.deepcopy(BASE)
    answers["efficiency"][call]["findings"] = copy.deepcopy(findings)
    path = judge(corpus_store, tmp_path, answers)
    e = json.loads((path / "stages" / "efficiency.json").read_text())
    kept = [(f["target"], f["anchor"]) for f in e["findings"]]
    dropped = [(c["kind"], c["where"], c["what"]) for c in e["checks"]]
    assert kept == says[0], case
    assert [(k, w) for k, w, _ in dropped] == [(k, w) for k, w, _ in says[1]], (case, dropped)
    assert all(words in what for (_, _, what), (_, _, words) in zip(dropped, says[1])), (case, dropped)
