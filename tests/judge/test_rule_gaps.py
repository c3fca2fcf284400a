"""Rules of the spec the stages and the close did not hold, each with a case on the corpus that
fails when the rule's check is removed (issue 25, part 5). Expected results are written out from
the record as a reader of the spec gives them, not derived from the modules under test."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from asz_core import window
from asz_core.judge.evidence import Evidence

from .achievement_story import T1, T2, T3, checks, crit, story, target

FE5 = "fe5e1c67"


# --- a contradiction names a delivery, never an undoing ---------------------------------------------

def test_a_contradiction_of_an_undoing_is_left_out(corpus_store: Any, tmp_path: Path) -> None:
    # 258c7280 t2: the push s136 delivered, then (made) undone at the tool step s139
    t2 = copy.deepcopy(T2)
    t2["events"] = [{"key": "e1", "event": "delivered", "concerns": "remote_change", "cites": ["s136"]},
                    {"key": "e2", "event": "undone", "concerns": "remote_change", "cites": ["s139"]}]
    t2["contradictions"] = [{"delivery": "e2", "disproves": "conclusion", "cites": ["s134"]},
                            {"delivery": "e1", "disproves": "conclusion", "cites": ["s134"]}]
    _, st = story(corpus_store, tmp_path, t2=t2)
    t = target(st, "t2")
    assert [(e["id"], e["event"]) for e in t["events"]] == [("t2.e1", "delivered"), ("t2.e2", "undone")]
    assert [x["delivery"] for x in t["contradictions"]] == ["t2.e1"]
    assert ("left_out", "t2 contradiction 1", "a contradiction of t2.e2, an undoing: a contradiction names a delivery "
            "(delivered or delivered again), never an undoing") in checks(st)


# --- a contradicted claim stays its target's whatever criterion it names -------------------------------

def test_a_contradicted_claim_naming_another_targets_criterion_still_makes_its_target_not_achieved(
        corpus_store: Any, tmp_path: Path) -> None:
    # t1 (every live criterion met) claims "All 43 tests pass" at s116; the failed push s134 is
    # (made) its contradiction, and the claim names t2's criterion.
    t1 = copy.deepcopy(T1)
    t1["claims"] = [{"claim": "All 43 tests pass", "said": "s116", "check": "contradicted", "cites": ["s134"],
                     "criteria": ["t2.c1"]}]
    _, st = story(corpus_store, tmp_path, t1=t1)
    t = target(st, "t1")
    assert [(c["claim"], c["check"], c["criteria"]) for c in t["claims"]] == [("All 43 tests pass", "contradicted", [])]
    assert [c["state"] for c in t["criteria"]] == ["not_met", "not_met", "not_met"] and t["level"] == "not_achieved"
    assert crit(st, "t1.c1")["evaluator_state"] == "met"
    # naming none: the same
    t1["claims"][0]["criteria"] = []
    _, st = story(corpus_store, tmp_path, t1=t1)
    assert target(st, "t1")["level"] == "not_achieved"


# --- asz's finding for a criterion not met: at its first evidence that shows it -----------------------

def test_a_criterion_not_met_is_anchored_at_the_evidence_that_shows_it(corpus_store: Any, tmp_path: Path) -> None:
    # t2.c2 "the branch is pushed" not met: the answer lists the reply s138 ("Pushed.", which shows
    # nothing) first, then the failed push s134.
    t2 = copy.deepcopy(T2)
    t2["criteria"][1] = {"id": "t2.c2", "state": "not_met", "cites": ["s138", "s134"], "reason": "the push failed"}
    res, st = story(corpus_store, tmp_path, t2=t2)
    assert crit(st, "t2.c2")["state"] == "not_met" and crit(st, "t2.c2")["shown_by"] == ["s134"]
    close = json.loads((res.path / "close.json").read_text())["statement"]
    [f] = [f for f in close["findings"] if f["kind"] == "criterion_not_met" and f["about"] == "t2.c2"]
    assert f["anchor"] == "s134"


# --- an achievement call is given its own target whole, the others shortened ---------------------------

def test_an_achievement_call_gets_the_other_targets_shortened(corpus_store: Any, tmp_path: Path) -> None:
    res, _ = story(corpus_store, tmp_path)
    prompt = (res.path / "calls/achievement/1/1/prompt.md").read_text()
    assert '"the spotter-gqc tasks are implemented"' in prompt  # t1, its own, whole with its criteria
    # t2 and t3 as context: shortened, their criteria counted, never listed
    assert "the new beads are implemented" not in prompt and "a correct answer whether the work is pushed" not in prompt
    assert prompt.count('"shortened":true') == 2


# --- another agent call shows a task wrong only after the task was given ------------------------------

def test_a_sibling_launched_with_a_task_shows_nothing_of_it(corpus_store: Any) -> None:
    """fe5e1c67: s10 launched a2 (s12), a3 (s13) and a1 (s14) at once; s225 later launched a4 (s227)
    and a5 (s228)."""
    w = window.build(corpus_store, FE5)
    ev = Evidence(w)
    wrong = {(stream, step) for stream in ("a1", "a2", "a4") for step in ("s12", "s13", "s14", "s227", "s228")
             if ev.shows_task_wrong(ev.cite(step), stream)}
    # a task is shown wrong only by a later agent call of another model call: a4's and a5's for a1 and a2
    assert wrong == {("a1", "s227"), ("a1", "s228"), ("a2", "s227"), ("a2", "s228")}


def test_a_failed_sibling_shows_nothing_of_a_task_given_with_it(store: Any, tmp_path: Path) -> None:
    """fe5e1c67 with (made) a3's Task s13, launched with a2's s12 by s10, failed: its error is its own
    task's, and it was given with a2's, so it shows a2's task wrong no more than when it returned;
    a later agent call (s227, asked by s225) still does."""
    from asz_core.collect import collect

    from .fixtures import failed_sibling

    collect([failed_sibling(tmp_path)], store)
    ev = Evidence(window.build(store, FE5))
    assert [(ev.conv.step(s).status, ev.asked.get(s)) for s in ("s12", "s13", "s227")] == [
        ("returned", "s10"), ("failed", "s10"), ("returned", "s225")]
    assert not ev.shows_task_wrong(ev.cite("s13"), "a2") and not ev.shows_task_wrong(ev.cite("s13"), "a1")
    assert ev.shows_task_wrong(ev.cite("s227"), "a2")
    assert ev.cite("s13").shows == "failure" and not ev.shows_task_wrong(ev.cite("s13"), "a4")  # given before a4's


# --- a foreground sub-task whose starting call was interrupted gave no report back ----------------------

def test_an_interrupted_foreground_sub_task_gave_no_report(store: Any, tmp_path: Path) -> None:
    """The bundled example's a1, started by the Task s20, whose result is (made) the runtime's
    interruption text: nothing shows a report came back, so no later step acted on it."""
    from asz_core.collect import collect

    from .fixtures import interrupted_example

    collect([interrupted_example(tmp_path)], store)
    ev = Evidence(window.build(store, "5e1f0c2a"))
    assert ev.starting_step("a1").id == "s20" and ev.conv.step("s20").status == "failed"  # type: ignore[union-attr]
    assert ev.report_back("a1") is None
    assert not ev.after_report(ev.cite("s22"), "a1") and not ev.after_report(ev.cite("s26"), "a1")


def test_a_sub_task_cut_off_after_its_last_reply_gave_no_report(store: Any, tmp_path: Path) -> None:
    """The bundled example's a1 with (made) an API error of its own after its last reply s29, its Task
    s20 still marked returned (the corpus holds this only with no reply before the error:
    test_subtasks' b277cc60 a3): it never answered, so s20 brought no report back."""
    from asz_core.collect import collect

    from .fixtures import cut_off_example

    collect([cut_off_example(tmp_path)], store)
    ev = Evidence(window.build(store, "5e1f0c2a"))
    a1 = [s for s in ev.conv.steps if s.stream == "a1"]
    assert [(s.kind, s.notice) for s in a1[-2:]] == [("reply", None), ("notice", "api_error")]
    assert ev.conv.step("s20").status == "returned"
    assert ev.answer("a1") is None and ev.report_back("a1") is None
    assert not ev.after_report(ev.cite("s26"), "a1")


# --- a round of rework holds the work the target received, not any step of its talks -------------------

def test_a_round_of_rework_holds_only_work_its_target_received(corpus_store: Any, tmp_path: Path) -> None:
    """258c7280's k1 serves t1 (i1, steered by i2) and t2 (i3 at s132, typed while the agent
    worked): the calls after i3 went to t2 alone, those before it to t1. So t1 cannot redo at the
    push s136, and t2's attempt cannot be t1's test run s117."""
    t1, t2 = copy.deepcopy(T1), copy.deepcopy(T2)
    t1["rework"] = [{"attempt": ["s100"], "trigger": "verification", "trigger_step": "s117", "redo": ["s136"], "cause": "unknown"},
                    {"attempt": ["s100"], "trigger": "verification", "trigger_step": "s117", "redo": ["s131"], "cause": "unknown"}]
    t2["rework"] = [{"attempt": ["s117"], "trigger": "tool", "trigger_step": "s134", "redo": ["s136"], "cause": "agent_error"},
                    {"attempt": ["s134"], "trigger": "tool", "trigger_step": "s134", "redo": ["s136"], "cause": "agent_error"}]
    _, st = story(corpus_store, tmp_path, t1=t1, t2=t2)
    assert [(r["attempt"], r["trigger_step"], r["redo"]) for r in target(st, "t1")["rework"]] == [(["s100"], "s117", ["s131"])]
    assert [(r["attempt"], r["trigger_step"], r["redo"]) for r in target(st, "t2")["rework"]] == [(["s134"], "s134", ["s136"])]
    c = checks(st)
    assert ("left_out", "t1 rework 1", "attempt, trigger and redo do not come in that order, each shown: no step of the "
            "agent's work for the target after the trigger") in c
    assert ("left_out", "t2 rework 1", "attempt, trigger and redo do not come in that order, each shown: no step of the "
            "agent's work for the target (or before the window) at or before the trigger") in c


def test_a_sub_task_of_a_shared_talk_is_redo_only_for_the_target_that_received_it(corpus_store: Any,
                                                                                  tmp_path: Path) -> None:
    """258c7280's k1 serves t1 and t2; the sub-agent a1 was started at s343, after i3 (s132) turned
    the talk to t2: its calls, and so its WebFetch s438, are t2's work as cost per target cuts it
    (a sub-task's calls where its starting step is), though a1 is a sub-task of k1, a talk of t1.
    So s438 redoes nothing for t1, and is t2's redo (a sub-task it started included)."""
    t1, t2 = copy.deepcopy(T1), copy.deepcopy(T2)
    t1["rework"] = [{"attempt": ["s100"], "trigger": "verification", "trigger_step": "s117", "redo": ["s438"], "cause": "unknown"}]
    t2["rework"] = [{"attempt": ["s134"], "trigger": "tool", "trigger_step": "s134", "redo": ["s136", "s438"],
                     "cause": "agent_error"}]
    _, st = story(corpus_store, tmp_path, t1=t1, t2=t2)
    assert target(st, "t1")["rework"] == []
    assert ("left_out", "t1 rework 1", "attempt, trigger and redo do not come in that order, each shown: no step of the "
            "agent's work for the target after the trigger") in checks(st)
    assert [(r["id"], r["attempt"], r["trigger_step"], r["redo"]) for r in target(st, "t2")["rework"]] == [
        ("t2.r1", ["s134"], "s134", ["s136", "s438"])]


# --- a reply that only repeats a delivered result is no event -----------------------------------------

def test_a_closing_summary_after_reads_is_no_delivery_again(corpus_store: Any, tmp_path: Path) -> None:
    """258c7280 t2: the push s136 delivered; then the reply s138, the beads read (s139, s141, s142:
    Bash steps that change nothing for t2) and the reply s144. A delivery again at s144 citing the
    reply alone rests on no redone work: left out, so the push still stands (and a contradiction of
    it still applies). Citing the read's result it reports, it is kept."""
    t2 = copy.deepcopy(T2)
    t2["events"] = [{"key": "e1", "event": "delivered", "concerns": "remote_change", "cites": ["s136"]},
                    {"key": "e2", "event": "delivered_again", "concerns": "answer", "cites": ["s144"]}]
    t2["contradictions"] = [{"delivery": "e1", "disproves": "criteria", "criteria": ["t2.c2"], "cites": ["s134"]}]
    res, st = story(corpus_store, tmp_path, t2=t2)
    t = target(st, "t2")
    assert [e["id"] for e in t["events"]] == ["t2.e1"] and t["standing"] == ["t2.e1"]
    assert any(w == "t2 event e2" and x.startswith("a reply that only repeats a delivered result is no event: no work was "
                                                   "redone between t2.e1 (s136) and s144") for _, w, x in checks(st))
    close = json.loads((res.path / "close.json").read_text())["statement"]
    assert next(x for x in close["targets"] if x["id"] == "t2")["outcome"]["class"] == "contradicted"
    t2["events"][1]["cites"] = ["s144", "s141"]
    _, st = story(corpus_store, tmp_path, t2=t2)
    assert [e["id"] for e in target(st, "t2")["events"]] == ["t2.e1", "t2.e2"] and target(st, "t2")["standing"] == ["t2.e2"]


def test_a_delivery_again_rests_on_work_redone_after_the_delivery_it_replaces(corpus_store: Any, tmp_path: Path) -> None:
    """258c7280 t1: its own file operations o1 to o15 are the Edits and Writes s30 to s89; the reply
    s116 ("All 43 tests pass") follows with none of them between. e1 delivers the Edit s30, e2 the
    Write s89 (another part), e3 the reply s116 as a delivery again. Naming e1, the work redone
    after e1 (o2 to o14) is what it rests on, whatever delivery came between: kept. Naming none,
    it replaces e2 too, after which nothing was redone: left out, e1 and e2 stand."""
    t1 = copy.deepcopy(T1)
    t1["events"] = [{"key": "e1", "event": "delivered", "concerns": "file", "cites": ["s30"]},
                    {"key": "e2", "event": "delivered", "concerns": "file", "cites": ["s89"]},
                    {"key": "e3", "event": "delivered_again", "concerns": "answer", "cites": ["s116"], "corrects": ["e1"]}]
    _, st = story(corpus_store, tmp_path, t1=t1)
    t = target(st, "t1")
    assert [(e["id"], e["event"], e["at"], e["corrects"]) for e in t["events"]] == [
        ("t1.e1", "delivered", "s30", []), ("t1.e2", "delivered", "s89", []), ("t1.e3", "delivered_again", "s116", ["t1.e1"])]
    assert t["standing"] == ["t1.e2", "t1.e3"]
    t1["events"][2]["corrects"] = []
    _, st = story(corpus_store, tmp_path, t1=t1)
    t = target(st, "t1")
    assert [e["id"] for e in t["events"]] == ["t1.e1", "t1.e2"] and t["standing"] == ["t1.e1", "t1.e2"]
    assert ("left_out", "t1 event e3", "a reply that only repeats a delivered result is no event: no work was redone "
            "between t1.e2 (s89) and s116 (a file operation of t1, a check's result it cites, an undoing, a "
            "contradiction or the person's correction)") in checks(st)


def test_a_reply_delivering_another_part_is_no_repeat(corpus_store: Any, tmp_path: Path) -> None:
    """258c7280 t1: the Write s89 delivered, then the reply s116 delivers the suite's result, a part
    of its own (a delivery, not a delivery again: it replaces nothing, so nothing asks it to rest
    on redone work)."""
    t1 = copy.deepcopy(T1)
    t1["events"] = [{"key": "e1", "event": "delivered", "concerns": "file", "cites": ["s89"]},
                    {"key": "e2", "event": "delivered", "concerns": "answer", "cites": ["s116"]}]
    _, st = story(corpus_store, tmp_path, t1=t1)
    t = target(st, "t1")
    assert [(e["id"], e["event"], e["at"]) for e in t["events"]] == [("t1.e1", "delivered", "s89"),
                                                                    ("t1.e2", "delivered", "s116")]
    assert t["standing"] == ["t1.e1", "t1.e2"]


def test_a_delivery_again_after_an_undoing_rests_on_it(corpus_store: Any, tmp_path: Path) -> None:
    """258c7280 t2: the push s136 delivered, (made) undone at s139, then the reply s144 as a
    delivery again: the undoing between is what it rests on (no file operation of t2 is between)."""
    t2 = copy.deepcopy(T2)
    t2["events"] = [{"key": "e1", "event": "delivered", "concerns": "remote_change", "cites": ["s136"]},
                    {"key": "e2", "event": "undone", "concerns": "remote_change", "cites": ["s139"]},
                    {"key": "e3", "event": "delivered_again", "concerns": "answer", "cites": ["s144"]}]
    _, st = story(corpus_store, tmp_path, t2=t2)
    t = target(st, "t2")
    assert [(e["id"], e["event"], e["at"]) for e in t["events"]] == [
        ("t2.e1", "delivered", "s136"), ("t2.e2", "undone", "s139"), ("t2.e3", "delivered_again", "s144")]
    assert t["standing"] == ["t2.e3"]


def test_a_delivery_again_rests_only_on_a_contradiction_of_what_it_replaces(corpus_store: Any, tmp_path: Path) -> None:
    """258c7280 t2: the push s136 delivered, (made) undone at s139, delivered again at the Bash
    s141 (returned), then the reply s144 as a delivery again of e3. The answer's contradiction,
    citing s142 (a tool result between s141 and s144), names the undoing e2: it is no
    contradiction (left out) and shows no work redone for e3, so the reply is left out and e3
    stands. Naming e3, the delivery the reply replaces, it does."""
    t2 = copy.deepcopy(T2)
    t2["events"] = [{"key": "e1", "event": "delivered", "concerns": "remote_change", "cites": ["s136"]},
                    {"key": "e2", "event": "undone", "concerns": "remote_change", "cites": ["s139"]},
                    {"key": "e3", "event": "delivered_again", "concerns": "remote_change", "cites": ["s141"]},
                    {"key": "e4", "event": "delivered_again", "concerns": "answer", "cites": ["s144"], "corrects": ["e3"]}]
    t2["contradictions"] = [{"delivery": "e2", "disproves": "conclusion", "cites": ["s142"]}]
    _, st = story(corpus_store, tmp_path, t2=t2)
    t = target(st, "t2")
    assert [(e["id"], e["event"], e["at"]) for e in t["events"]] == [
        ("t2.e1", "delivered", "s136"), ("t2.e2", "undone", "s139"), ("t2.e3", "delivered_again", "s141")]
    assert t["standing"] == ["t2.e3"] and t["contradictions"] == []
    assert ("left_out", "t2 event e4", "a reply that only repeats a delivered result is no event: no work was redone "
            "between t2.e3 (s141) and s144 (a file operation of t2, a check's result it cites, an undoing, a "
            "contradiction or the person's correction)") in checks(st)
    t2["contradictions"][0]["delivery"] = "e3"
    _, st = story(corpus_store, tmp_path, t2=t2)
    t = target(st, "t2")
    assert [e["id"] for e in t["events"]] == ["t2.e1", "t2.e2", "t2.e3", "t2.e4"] and t["standing"] == ["t2.e4"]
    assert [(x["delivery"], x["applies"]) for x in t["contradictions"]] == [("t2.e3", False)]


def test_a_reply_never_shows_a_criterion_not_met_nor_anchors_its_finding(corpus_store: Any, tmp_path: Path) -> None:
    """258c7280 t3 (a question, basis delivered_answer): t3.c1 not met citing the reply s434 that
    delivered the answer, then the sub-agent's WebFetch s438 (returned). The reply shows the
    answer delivered, never that it is not met: the state rests on s438, and asz's finding is
    anchored there. Citing the reply alone, the criterion is unknown and no finding is made."""
    t3 = copy.deepcopy(T3)
    t3["criteria"] = [{"id": "t3.c1", "state": "not_met", "delivered": True, "cites": ["s434", "s438"], "reason": "wrong"}]
    t3["claims"] = []
    res, st = story(corpus_store, tmp_path, t3=t3)
    assert (crit(st, "t3.c1")["state"], crit(st, "t3.c1")["shown_by"]) == ("not_met", ["s438"])
    close = json.loads((res.path / "close.json").read_text())["statement"]
    assert [(f["about"], f["anchor"]) for f in close["findings"] if f["kind"] == "criterion_not_met"] == [("t3.c1", "s438")]
    t3["criteria"][0]["cites"] = ["s434"]
    res, st = story(corpus_store, tmp_path, t3=t3)
    c = crit(st, "t3.c1")
    assert (c["state"], c["evaluator_state"], c["shown_by"]) == ("unknown", "not_met", [])
    assert c["reason"] == ("nothing it cites shows it: s434: a reply of the agent; a reply shows only an answer "
                           "delivered, never that a criterion is not met")
    close = json.loads((res.path / "close.json").read_text())["statement"]
    assert [f for f in close["findings"] if f["kind"] == "criterion_not_met"] == []


def test_a_contradicted_claim_makes_its_target_not_achieved_whatever_its_criteria_say(
        corpus_store: Any, tmp_path: Path) -> None:
    """258c7280 t2, neither criterion decided (the evaluator ran short): its claim "Pushed." (s138)
    is contradicted by the failed push s134 and names t1.c1, another target's criterion. It is
    still t2's claim, bearing on the whole of t2: both criteria not met, t2 not achieved (was
    unverified, only a met criterion was turned). Naming t2.c1 with t2.c2 met: t2.c1 not met."""
    t2 = copy.deepcopy(T2)
    t2["criteria"] = [{"id": "t2.c1", "state": "unknown", "cites": [], "reason": "not read far enough"},
                      {"id": "t2.c2", "state": "unknown", "cites": [], "reason": "not read far enough"}]
    t2["claims"] = [{"claim": "Pushed.", "said": "s138", "check": "contradicted", "cites": ["s134"], "criteria": ["t1.c1"]}]
    res, st = story(corpus_store, tmp_path, t2=t2)
    t = target(st, "t2")
    assert [(c["id"], c["state"], c["evaluator_state"], c["shown_by"]) for c in t["criteria"]] == [
        ("t2.c1", "not_met", "unknown", ["s134"]), ("t2.c2", "not_met", "unknown", ["s134"])]
    assert (t["level"], t["met"], t["unknown"]) == ("not_achieved", 0, 0)
    close = json.loads((res.path / "close.json").read_text())["statement"]
    assert next(x for x in close["targets"] if x["id"] == "t2")["outcome"]["class"] == "not_achieved"
    t2["criteria"][1] = {"id": "t2.c2", "state": "met", "cites": ["s136"], "reason": "the push went through"}
    t2["claims"][0]["criteria"] = ["t2.c1"]
    _, st = story(corpus_store, tmp_path, t2=t2)
    t = target(st, "t2")
    assert [(c["id"], c["state"]) for c in t["criteria"]] == [("t2.c1", "not_met"), ("t2.c2", "met")]
    assert t["level"] == "partial"


def test_a_delivery_again_after_the_persons_correction_rests_on_it(corpus_store: Any, tmp_path: Path) -> None:
    """258c7280 t1, with i2 "check again" (s106, typed after an interrupt) read as the person's
    correction of it: the Write s89 delivered, then the reply s116 as a delivery again. No file
    operation of t1 and no check it cites is between (o15 at s89 is its last): the correction
    between is what it rests on. Read as a steer, as the plain targets answer has it, it is a
    repeat."""
    from .achievement_story import TARGETS, answers, run

    a = answers()
    a["t1"]["events"] = [{"key": "e1", "event": "delivered", "concerns": "file", "cites": ["s89"]},
                         {"key": "e2", "event": "delivered_again", "concerns": "answer", "cites": ["s116"]}]
    corrected = copy.deepcopy(TARGETS)
    corrected["inputs"][1]["actions"] = [{"target": "new:gqc", "action": "correct"}]
    _, st = run(corpus_store, tmp_path, [a["t1"], a["t2"], a["t3"]], targets=corrected)
    t = target(st, "t1")
    assert [(e["id"], e["event"], e["at"]) for e in t["events"]] == [("t1.e1", "delivered", "s89"),
                                                                    ("t1.e2", "delivered_again", "s116")]
    assert t["standing"] == ["t1.e2"]
    _, st = run(corpus_store, tmp_path, [a["t1"], a["t2"], a["t3"]])
    t = target(st, "t1")
    assert [e["id"] for e in t["events"]] == ["t1.e1"] and t["standing"] == ["t1.e1"]


def test_a_closing_summary_after_a_to_do_list_update_is_no_delivery_again(corpus_store: Any, tmp_path: Path) -> None:
    """5c0375b4 (claude-code-viewer's sample): i1 asks to bring CLAUDE.md up to date; the Edit s44
    failed ("File has not been read yet"), the MultiEdit s48 returned, the TodoWrite s50 updated
    the to-do list, and the reply s52 sums up. The summary given as a delivery again rests on no
    redone work (a to-do list update changes nothing for the target): left out, so the MultiEdit
    stands and a contradiction of it (citing the failed Edit s44, as a made case) still applies."""
    from .achievement_story import run

    targets = {
        "inputs": [{"input": "i1", "actions": [{"target": "new:doc", "action": "create"}],
                    "relations": [{"relation": "new", "goal": "new:g", "statement": "CLAUDE.md up to date"}]}],
        "targets": [{"target": "new:doc", "statement": "Bring CLAUDE.md up to date", "kind": "change", "talks": ["k1"],
                     "state": "open", "criteria": [{"text": "CLAUDE.md describes the current project"}]}],
        "goals": [{"goal": "new:g", "main_target": "new:doc", "main_cited": "i1"}],
    }
    t1 = {"target": "t1", "criteria": [{"id": "t1.c1", "state": "met", "cites": ["s48"], "reason": "the edits applied"}],
          "basis": "observed_result", "basis_cites": ["s48"],
          "events": [{"key": "e1", "event": "delivered", "concerns": "file", "cites": ["s48"]},
                     {"key": "e2", "event": "delivered_again", "concerns": "answer", "cites": ["s52"]}],
          "contradictions": [{"delivery": "e1", "disproves": "conclusion", "cites": ["s44"]}]}
    res, st = run(corpus_store, tmp_path, [t1], targets=targets, cid="5c0375b4")
    t = target(st, "t1")
    assert [(e["id"], e["event"], e["at"]) for e in t["events"]] == [("t1.e1", "delivered", "s48")]
    assert t["standing"] == ["t1.e1"]
    assert ("left_out", "t1 event e2", "a reply that only repeats a delivered result is no event: no work was redone "
            "between t1.e1 (s48) and s52 (a file operation of t1, a check's result it cites, an undoing, a "
            "contradiction or the person's correction)") in checks(st)
    close = json.loads((res.path / "close.json").read_text())["statement"]
    out = next(x for x in close["targets"] if x["id"] == "t1")["outcome"]
    assert (out["class"], out["final_score"]) == ("contradicted", "0")


def test_a_contradiction_naming_a_key_two_events_share_names_neither(corpus_store: Any, tmp_path: Path) -> None:
    """258c7280 t2: the push s136 delivered (e1), (made) undone at s139 and delivered again at
    s141, the answer giving both the key e2. A contradiction naming e2 cannot be shown to name a
    delivery rather than the undoing: left out, and the delivery again stands uncontradicted (it
    was read as a contradiction of t2.e3, the key's last event, and made t2 contradicted)."""
    t2 = copy.deepcopy(T2)
    t2["events"] = [{"key": "e1", "event": "delivered", "concerns": "remote_change", "cites": ["s136"]},
                    {"key": "e2", "event": "undone", "concerns": "remote_change", "cites": ["s139"]},
                    {"key": "e2", "event": "delivered_again", "concerns": "remote_change", "cites": ["s141"]}]
    t2["contradictions"] = [{"delivery": "e2", "disproves": "conclusion", "cites": ["s142"]}]
    res, st = story(corpus_store, tmp_path, t2=t2)
    t = target(st, "t2")
    assert [(e["id"], e["event"], e["at"]) for e in t["events"]] == [
        ("t2.e1", "delivered", "s136"), ("t2.e2", "undone", "s139"), ("t2.e3", "delivered_again", "s141")]
    assert t["standing"] == ["t2.e3"] and t["contradictions"] == []
    c = checks(st)
    assert ("noted", "t2 events", "the key 'e2' is given to 2 events: what names it names none of them") in c
    assert ("left_out", "t2 contradiction 1", "a contradiction of 'e2': a key given to several events, which names "
            "none of them") in c
    close = json.loads((res.path / "close.json").read_text())["statement"]
    assert next(x for x in close["targets"] if x["id"] == "t2")["outcome"]["class"] == "unverified"
