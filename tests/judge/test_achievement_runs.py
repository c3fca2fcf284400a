"""Whole runs of the targets and achievement stages over corpus conversations, with plausible
scripted answers, checked end to end (258c7280 is in test_achievement.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from asz_core import window
from asz_core.operations import of_conversation

from .achievement_story import crit, run, target


def rel(i: str, kind: str, goal: str, follows: str | None = None, statement: str | None = None) -> dict[str, Any]:
    return {"relation": kind, "goal": goal, "follows": follows, "statement": statement}


def ops_of(store: Any, cid: str, talk: str) -> list[str]:
    """The file operations of one talk's calls (the talk serves one target), from the operations list."""
    return [o.id for o in of_conversation(window.build(store, cid).conv) if o.talk == talk]


def test_e720dd6e_a_refactor_a_question_a_fix_and_a_commit(corpus_store: Any, tmp_path: Path) -> None:
    """/clear; a refactor (k2) refined mid-work by "fix all the issues" (i3); a question (k3) "what
    is best practice, fix the schema or the component"; "fix the component" (k4); "commit" (k5)."""
    cid = "e720dd6e"
    targets = {
        "inputs": [
            {"input": "i1", "actions": [{"target": None, "action": "none"}], "relations": [{"relation": "unclear"}]},
            {"input": "i2", "actions": [{"target": "new:p1", "action": "create"}], "relations": [rel("i2", "new", "new:g", statement="phase 1")]},
            {"input": "i3", "actions": [{"target": "new:p1", "action": "refine"}], "relations": [rel("i3", "continue", "new:g", "i2")]},
            {"input": "i4", "actions": [{"target": "new:q", "action": "create"}], "relations": [rel("i4", "continue", "new:g", "i3")]},
            {"input": "i5", "actions": [{"target": "new:fix", "action": "create"}], "relations": [rel("i5", "continue", "new:g", "i4")]},
            {"input": "i6", "actions": [{"target": "new:commit", "action": "create"}], "relations": [rel("i6", "continue", "new:g", "i5")]},
        ],
        "targets": [
            {"target": "new:p1", "statement": "Complete phase 1 of the refactor, fixing all the issues", "kind": "change",
             "talks": ["k2"], "criteria": [{"text": "phase 1 is done"}, {"text": "the build passes"}]},
            {"target": "new:q", "statement": "Say whether to fix the schema or the component", "kind": "question",
             "talks": ["k3"], "criteria": [{"text": "a reasoned answer"}]},
            {"target": "new:fix", "statement": "Fix the component", "kind": "change", "talks": ["k4"],
             "criteria": [{"text": "the component compiles against the schema"}, {"text": "the build passes"}]},
            {"target": "new:commit", "statement": "Commit", "kind": "change", "talks": ["k5"], "state": "closed",
             "criteria": [{"text": "the work is committed"}]},
        ],
        "goals": [],
    }
    t1 = {"target": "t1", "criteria": [
        {"id": "t1.c1", "state": "unknown", "cites": [], "reason": "the plan's phase 1 was not read whole"},
        {"id": "t1.c2", "state": "not_met", "cites": ["s284"], "reason": "the last build failed to compile",
         "observations": [{"step": "s284", "excerpt": "Failed to compile.", "reading": "the build fails"}]}],
        "basis": "observed_result", "basis_cites": ["s284"],
        "claims": [{"claim": "The Zod 4 compatibility fixes are complete", "said": "s167", "check": "no_evidence", "cites": []}],
        "events": [{"key": "e1", "event": "delivered", "concerns": "file", "cites": ["s21"]}],
        "rework": [{"attempt": ["s171"], "trigger": "person", "trigger_step": "i3", "redo": ["s177", "s178"],
                    "cause": "requirement_change"}],
        "account": {"files": [{"area": "src", "category": "code", "changed": "zod 4", "operations": ops_of(corpus_store, cid, "k2")}]}}
    t2 = {"target": "t2", "criteria": [{"id": "t2.c1", "state": "met", "cites": ["s289"], "reason": "the reply answers it"}],
          "basis": "delivered_answer", "basis_cites": ["s289"],
          "events": [{"key": "e1", "event": "delivered", "concerns": "answer", "cites": ["s289"]}],
          "account": {"question": {"asked": {"text": "fix the schema or the component?", "cites": ["i4"]},
                                   "answer": {"text": "fix the component", "cites": ["s289"]}}}}
    t3 = {"target": "t3", "criteria": [
        {"id": "t3.c1", "state": "met", "cites": ["s300"], "reason": "the build compiled after the edit"},
        {"id": "t3.c2", "state": "not_met", "cites": ["s361"], "reason": "a later build failed in another component"}],
        "basis": "observed_result", "basis_cites": ["s300", "s361"],
        "events": [{"key": "e1", "event": "delivered", "concerns": "file", "cites": ["s297"]}],
        "findings": [{"anchor": "s361", "what": "pre-existing strict-mode errors surfaced", "cites": ["s361", "s367"]}],
        "account": {"files": [{"area": "src/components", "category": "code", "changed": "the form matches the schema",
                               "operations": ops_of(corpus_store, cid, "k4")}]}}
    t4 = {"target": "t4", "criteria": [{"id": "t4.c1", "state": "met", "cites": ["s374"], "reason": "commit 3da2257"}],
          "basis": "observed_result", "basis_cites": ["s374"],
          "claims": [{"claim": "Phase 1 is now committed", "said": "s379", "check": "supported", "cites": ["s374"]}],
          "events": [{"key": "e1", "event": "delivered", "concerns": "revision", "cites": ["s374"]}]}
    res, st = run(corpus_store, tmp_path, [t1, t2, t3, t4], targets=targets, cid=cid)
    assert st["status"] == "complete", st["note"]
    assert [(t["target"], t["level"], t["basis"], t["met"], t["live"]) for t in st["achievement"]] == [
        ("t1", "not_achieved", "observed_result", 0, 2), ("t2", "achieved", "delivered_answer", 1, 1),
        ("t3", "partial", "observed_result", 1, 2), ("t4", "achieved", "observed_result", 1, 1)]
    assert st["header"] == {"targets": 4, "judged": 4, "levels": {"not_achieved": 1, "achieved": 2, "partial": 1},
                            "not_judged": {}}
    r = target(st, "t1")["rework"][0]
    assert (r["id"], r["trigger_step"], r["cause"], r["start"], r["end"]) == ("t1.r1", "s174", "requirement_change", "s174", "s178")
    assert [f["id"] for f in target(st, "t3")["findings"]] == ["f1"]
    assert [(e["id"], e["at"]) for t in st["achievement"] for e in t["events"]] == [
        ("t1.e1", "s21"), ("t2.e1", "s289"), ("t3.e1", "s297"), ("t4.e1", "s374")]
    assert target(st, "t1")["account"]["own_operations"] == ops_of(corpus_store, cid, "k2")
    assert crit(st, "t1.c2")["observations"][0]["fact"] == "s284: the Bash call returned"
    assert json.loads((res.path / "close.json").read_text())["stages"] == {
        "targets": "complete", "achievement": "complete", "subtasks": "skipped", "efficiency": "skipped",
        "reference": "skipped", "divergence": "skipped"}


def test_fed8ce56_a_push_the_person_rejected_then_continued(corpus_store: Any, tmp_path: Path) -> None:
    """"push to github": the person rejected two commands (s9, s10) and interrupted (s11), then
    typed "continue" (i2): the commit s14 and the push s15 returned."""
    cid = "fed8ce56"
    targets = {"inputs": [
        {"input": "i1", "actions": [{"target": "new:push", "action": "create"}], "relations": [rel("i1", "new", "new:g", statement="pushed")]},
        {"input": "i2", "actions": [{"target": "new:push", "action": "steer"}], "relations": [rel("i2", "continue", "new:g", "i1")]}],
        "targets": [{"target": "new:push", "statement": "Commit and push to GitHub", "kind": "change", "talks": ["k1", "k2"],
                     "criteria": [{"text": "the changes are committed"}, {"text": "the branch is pushed to github"}]}],
        "goals": []}
    t1 = {"target": "t1", "criteria": [
        {"id": "t1.c1", "state": "met", "cites": ["s14"], "reason": "commit 5c1b231"},
        {"id": "t1.c2", "state": "met", "cites": ["s15"], "reason": "main -> main",
         "observations": [{"step": "s15", "excerpt": "6eea407..5c1b231  main -> main", "reading": "pushed"}]}],
        "basis": "observed_result", "basis_cites": ["s15"],
        "claims": [{"claim": "Successfully pushed to GitHub", "said": "s17", "check": "supported", "cites": ["s15"]}],
        "events": [{"key": "e1", "event": "delivered", "concerns": "revision", "cites": ["s14"]},
                   {"key": "e2", "event": "delivered", "concerns": "remote_change", "cites": ["s15"]}],
        "rework": [{"attempt": ["s9"], "trigger": "person", "trigger_step": "i2", "redo": ["s14", "s15"], "cause": "unknown"}],
        "findings": [{"anchor": "s9", "what": "ran a command the person did not want", "cites": ["s9", "s11"]}],
        "account": {"operations": [{"system": "github", "operation": "push", "request": {"text": "git push", "cites": ["s15"]},
                                    "response": {"text": "main -> main", "cites": ["s15"]}}]}}
    _, st = run(corpus_store, tmp_path, [t1], targets=targets, cid=cid)
    assert st["status"] == "complete", st["note"]
    t = target(st, "t1")
    assert (t["level"], t["basis"], t["standing"]) == ("achieved", "observed_result", ["t1.e1", "t1.e2"])
    assert [(r["attempt"], r["trigger_step"], r["redo"]) for r in t["rework"]] == [(["s9"], "s12", ["s14", "s15"])]
    op = t["account"]["operations"][0]
    assert (op["tool"], op["request"]["cites"], op["confirmation"]) == ("Bash", ["s15"], None)
    assert t["cited"] == ["s9", "s11", "s12", "s14", "s15", "s17"]
