"""The achievement stage over 258c7280 (tests/judge/achievement_story.py): the plausible run,
then for each rule an answer that breaks it, with asz's exact response (state, level, basis,
what was left out, the note)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from asz_core.judge.stages.achievement_check import level_of

from .achievement_story import T1, T2, T3, answers, checks, crit, run, story, target

SUB = "s343: the Task call returned a sub-agent's report back"


def with_(base: dict[str, Any], **kw: Any) -> dict[str, Any]:
    return {**json.loads(json.dumps(base)), **kw}


def criteria(*states: tuple[str, str, list[str]], **extra: Any) -> list[dict[str, Any]]:
    return [{"id": cid, "state": st, "cites": cites, "reason": f"evaluator: {cid}", **extra.get(cid, {})}
            for cid, st, cites in states]


# --- the plausible run ----------------------------------------------------------------------------

def test_the_plausible_run(corpus_store: Any, tmp_path: Path) -> None:
    res, st = story(corpus_store, tmp_path)
    assert st["status"] == "complete", st["note"]
    assert res.stages["achievement"] == "complete" and st["note"] == [] and st["checks"] == []
    assert st["header"] == {"targets": 3, "judged": 3, "levels": {"achieved": 2, "unverified": 1}, "not_judged": {}}
    assert st["run"]["mode"] == "stream" and st["run"]["calls"] == 3 and st["run"]["consumed"]["requests"] == 3
    t1, t2, t3 = (target(st, t) for t in ("t1", "t2", "t3"))
    assert [(t["target"], t["level"], t["basis"], t["met"], t["live"], t["unknown"]) for t in (t1, t2, t3)] == [
        ("t1", "achieved", "observed_result", 3, 3, 0), ("t2", "unverified", "observed_result", 1, 2, 1),
        ("t3", "achieved", "delivered_answer", 1, 1, 0)]
    assert [c["id"] for c in t1["criteria"]] == ["t1.c1", "t1.c2", "t1.c3"]  # t1.c4 was dropped: never judged
    assert crit(st, "t1.c2")["shown_by"] == ["s117"] and crit(st, "t1.c2")["by"] == "evaluator"
    assert crit(st, "t1.c2")["observations"] == [{"step": "s117", "excerpt": "14 doctests, 65 tests, 0 failures",
                                                  "fact": "s117: the Bash call returned", "reading": "the suite passes"}]
    assert t1["events"] == [{"id": "t1.e1", "event": "delivered", "concerns": "revision", "at": "s131", "what": "commit 99b497c",
                             "cites": ["s131"], "corrects": [], "criteria": [], "deliveries": [], "applies": None}]
    assert t1["standing"] == ["t1.e1"] and t2["standing"] == ["t2.e1"] and t3["standing"] == ["t3.e1"]
    assert t1["rework"] == [{"id": "t1.r1", "attempt": ["s100"], "trigger": "person", "trigger_step": "s106", "redo": ["s108"],
                             "cause": "unknown", "start": "s106", "end": "s108",
                             "what": "the person asked to check again after the agent waited on a test run",
                             "evaluator_cause": None}]
    assert [(r["id"], r["trigger_step"], r["cause"]) for r in t2["rework"]] == [("t2.r1", "s134", "agent_error")]
    assert [(f["id"], f["target"], f["anchor"]) for f in t1["findings"]] == [("f1", "t1", "s100")]
    assert t1["claims"][0]["check"] == "supported" and t1["claims"][0]["cites"] == ["s113"]
    # the target's own file operations: the calls before i3 (s132) are t1's, those after t2's
    assert t1["account"]["own_operations"] == [f"o{n}" for n in range(1, 16)]
    assert t2["account"]["own_operations"] == [f"o{n}" for n in range(16, 49)] and t3["account"]["own_operations"] == []
    q = t3["account"]["question"]
    assert q["asked"] == {"text": "did you push?", "cites": ["s432"]} and q["answer"]["cites"] == ["s434"]
    from asz_core import window
    from asz_core.operations import of_conversation

    op_steps = {o.step for o in of_conversation(window.build(corpus_store, "258c7280").conv) if int(o.id[1:]) < 16}
    assert set(t1["cited"]) == {"s100", "s106", "s108", "s113", "s116", "s117", "s131"} | op_steps
    assert t1["cited"] == sorted(t1["cited"], key=lambda s: int(s[1:]))
    assert set(t3["cited"]) == {"s432", "s434", "s136"}
    # each call was given its own target whole, its talks and its operations; the others as context
    p1 = (res.path / "calls/achievement/1/1/prompt.md").read_text()
    own = p1.split("### Your target", 1)[1].split("### The other targets", 1)[0]
    assert '"id":"t1","statement":"Implement spotter-gqc"' in own and '"id":"k1","mark":"judged"' in own
    assert '"id":"o15"' in own and '"id":"o16"' not in own and '"id":"t2"' not in own
    ctx = p1.split("### The other targets", 1)[1]
    assert '"id":"t2"' in ctx and '"id":"t3"' in ctx and '"id":"t1"' not in ctx
    assert "This call judges t1 alone" in p1 and f"{131072:,} bytes" in p1


def test_the_navigation_gives_later_stages_the_steps_cited(corpus_store: Any, tmp_path: Path) -> None:
    from asz_core import window
    from asz_core.judge.labelling import cited_by_achievement
    from asz_core.navigation import Navigator

    res, st = story(corpus_store, tmp_path)
    nav = Navigator(window.build(corpus_store, "258c7280"), corpus_store, run_dir=res.path)
    whole = json.loads(json.loads(nav.call("targets", {"id": "t3"}))["text"])
    assert whole["achievement"] == {"level": "achieved", "basis": "delivered_answer", "cited": target(st, "t3")["cited"]}
    rows = json.loads(nav.call("targets"))["targets"]
    assert [(r["id"], r["level"]) for r in rows] == [("t1", "achieved"), ("t2", "unverified"), ("t3", "achieved")]
    from types import SimpleNamespace

    later = SimpleNamespace(path=res.path, window=window.build(corpus_store, "258c7280"), window_text="all")
    assert cited_by_achievement(later) == {t: target(st, t)["cited"] for t in ("t1", "t2", "t3")}  # what later stages read


def test_level_is_derived_from_the_states() -> None:
    assert level_of(["met", "met"]) == "achieved"
    assert level_of(["met", "not_met", "unknown"]) == "partial"
    assert level_of(["not_met", "unknown"]) == "not_achieved"
    assert level_of(["met", "unknown"]) == "unverified"
    assert level_of(["not_captured"]) == "unverified"
    assert level_of([]) == "unverified"


# --- criteria: what shows a met or a not_met ---------------------------------------------------

def test_a_reply_the_setting_input_a_report_and_a_talk_id_show_nothing(corpus_store: Any, tmp_path: Path) -> None:
    t1 = with_(T1, criteria=criteria(("t1.c1", "met", ["s116"]), ("t1.c2", "met", ["i1", "i2", "s115", "s343", "s443", "k1"]),
                                     ("t1.c3", "not_met", ["i4"])), level="achieved")
    _, st = story(corpus_store, tmp_path, t1=t1)
    c1, c2, c3 = (crit(st, f"t1.c{n}") for n in (1, 2, 3))
    why1 = ("nothing it cites shows it: s116: a reply of the agent; a reply shows only an answer delivered: the criterion "
            "is not marked delivered and the basis is not delivered_answer")
    assert (c1["state"], c1["by"], c1["reason"], c1["evaluator_state"], c1["evaluator_reason"]) == (
        "unknown", "asz", why1, "met", "evaluator: t1.c1")
    why2 = ("nothing it cites shows it: s1: the person's input i1, which set t1: what was asked, never that it was done; "
            "s106: the person's input i2, which set t1: what was asked, never that it was done; s115: a model call; "
            f"{SUB}; s443: a reply of the sub-agent a1")
    assert (c2["state"], c2["reason"], c2["cites"], c2["shown_by"]) == ("unknown", why2, ["s1", "s106", "s115", "s343", "s443"], [])
    # the person's own later input shows (not the evaluator's level: asz's, from the states)
    assert (c3["state"], c3["by"], c3["shown_by"]) == ("not_met", "evaluator", ["s432"])
    assert target(st, "t1")["level"] == "not_achieved" and target(st, "t1")["met"] == 0
    assert st["status"] == "partial"
    assert [n for n in st["note"] if n.startswith(("changed: t1.c", "left out: t1.c"))] == [
        f"changed: t1.c1: met: {why1}: unknown",
        "left out: t1.c2: cited k1: a talk id, which cites nothing in particular",
        f"changed: t1.c2: met: {why2}: unknown"]


def test_observed_steps_show_a_state(corpus_store: Any, tmp_path: Path) -> None:
    """A failed tool step, an interrupt and a sub-agent's own tool step show; an id the window
    does not hold is left out."""
    t1 = with_(T1, criteria=criteria(("t1.c1", "not_met", ["s134"]), ("t1.c2", "not_met", ["s104", "s99999"]),
                                     ("t1.c3", "met", ["s438"])))
    _, st = story(corpus_store, tmp_path, t1=t1)
    assert [(c["state"], c["by"], c["shown_by"]) for c in target(st, "t1")["criteria"]] == [
        ("not_met", "evaluator", ["s134"]), ("not_met", "evaluator", ["s104"]), ("met", "evaluator", ["s438"])]
    assert target(st, "t1")["level"] == "partial"
    assert ("left_out", "t1.c2", "cited s99999: no such step in this window") in checks(st)


def test_a_tool_call_whose_result_never_came_shows_nothing(corpus_store: Any, tmp_path: Path) -> None:
    """d3ad4cdc (chiphuyen/sniffly): one tool step never returned."""
    from asz_core import window

    w = window.build(corpus_store, "d3ad4cdc")
    nr = next(s for s in w.conv.steps if s.status == "no_result")
    returned = next(s for s in w.conv.steps if s.status == "returned" and s.talk == nr.talk and s.seq > w.conv.step(
        w.conv.talk(nr.talk).inputs[0]).seq)
    ins = [w.conv.step(s) for k in w.judged for s in w.conv.talk(k).inputs]
    targets = {"inputs": [{"input": s.input, "actions": [{"target": "new:a", "action": "create" if n == 0 else "refine"}],
                           "relations": [{"relation": "new", "goal": "new:g", "statement": "x"} if n == 0 else
                                         {"relation": "continue", "goal": "new:g", "follows": ins[n - 1].input}]}
                          for n, s in enumerate(ins)],
               "targets": [{"target": "new:a", "statement": "the work", "kind": "change", "talks": list(w.judged),
                            "criteria": [{"text": "one"}, {"text": "two"}]}], "goals": []}
    ans = {"target": "t1", "criteria": criteria(("t1.c1", "met", [nr.id]), ("t1.c2", "met", [returned.id])),
           "basis": "observed_result", "basis_cites": [nr.id],
           "events": [{"key": "e1", "event": "delivered", "concerns": "file", "cites": [returned.id]}]}
    _, st = run(corpus_store, tmp_path, [ans], targets=targets, cid="d3ad4cdc")
    why = f"nothing it cites shows it: {nr.id}: the {nr.name} call's result never came (no_result)"
    assert (crit(st, "t1.c1")["state"], crit(st, "t1.c1")["reason"]) == ("unknown", why)
    assert crit(st, "t1.c2")["state"] == "met"
    t = target(st, "t1")
    assert (t["level"], t["basis"], t["evaluator_basis"]) == ("unverified", "no_evidence", "observed_result")
    assert t["basis_reason"] == "observed_result weakened: it cites no tool step whose result came back"


def test_a_criterion_left_out_is_unknown_and_one_not_the_targets_is_left_out(corpus_store: Any, tmp_path: Path) -> None:
    t1 = with_(T1, criteria=[T1["criteria"][0], {"id": "t1.c4", "state": "met", "cites": ["s117"], "reason": "x"},
                             {"id": "t2.c1", "state": "met", "cites": ["s117"], "reason": "x"},
                             {"id": "t1.c1", "state": "not_met", "cites": ["s117"], "reason": "again"},
                             {"id": "t1.c3", "state": "done", "cites": ["s131"], "reason": "x"}])
    _, st = story(corpus_store, tmp_path, t1=t1)
    assert [(c["id"], c["state"], c["by"], c["reason"]) for c in target(st, "t1")["criteria"]] == [
        ("t1.c1", "met", "evaluator", "the suite passes and the work was committed"),
        ("t1.c2", "unknown", "asz", "the answer left it out"),
        ("t1.c3", "unknown", "asz", "the answer's state 'done' is no state")]
    assert [c for c in checks(st) if c[1].startswith("t1")][:5] == [
        ("left_out", "t1.c4", "a state for a criterion the person dropped: never judged"),
        ("left_out", "t1", "a state for 't2.c1': no criterion of t1"),
        ("left_out", "t1.c1", "a second state for the same criterion"),
        ("filled_in", "t1.c2", "left out by the answer: unknown"),
        ("changed", "t1.c3", "state 'done', which is no state: unknown")]
    assert target(st, "t1")["level"] == "unverified"


def test_a_delivered_answer_shows_a_criterion_marked_delivered_or_the_whole_target(corpus_store: Any, tmp_path: Path) -> None:
    """A reply shows a criterion the evaluator marks delivered (an explanation within a change),
    and every criterion of a target whose basis delivered_answer holds; never a reply before the
    target was set."""
    t1 = with_(T1, criteria=criteria(("t1.c1", "met", ["s116"]), ("t1.c2", "met", ["s120"]), ("t1.c3", "met", ["s131"]),
                                     **{"t1.c1": {"delivered": True}}))
    t2 = with_(T2, criteria=criteria(("t2.c1", "met", ["s116"]), ("t2.c2", "met", ["s136"]), **{"t2.c1": {"delivered": True}}))
    t3 = with_(T3, criteria=criteria(("t3.c1", "met", ["s434"])))
    _, st = story(corpus_store, tmp_path, t1=t1, t2=t2, t3=t3)
    assert (crit(st, "t1.c1")["state"], crit(st, "t1.c1")["shown_by"], crit(st, "t1.c1")["delivered"]) == ("met", ["s116"], True)
    assert crit(st, "t1.c2")["state"] == "unknown"                       # not marked delivered, basis observed_result
    assert crit(st, "t3.c1")["state"] == "met"                            # basis delivered_answer holds for the target
    c = crit(st, "t2.c1")                                                 # s116 came before t2 was set (i3, s132)
    assert c["state"] == "unknown" and c["reason"] == "nothing it cites shows it: s116: a reply of the agent"


# --- the basis ------------------------------------------------------------------------------------

def test_a_basis_its_citations_do_not_show_is_weakened(corpus_store: Any, tmp_path: Path) -> None:
    t1 = with_(T1, basis="delivered_answer", basis_cites=["s120"])
    t2 = with_(T2, basis="person_accepted", basis_cites=["i3", "s138"])
    t3 = with_(T3, basis="delivered_answer", basis_cites=["s116"])
    _, st = story(corpus_store, tmp_path, t1=t1, t2=t2, t3=t3)
    got = [(target(st, t)["basis"], target(st, t)["evaluator_basis"], target(st, t)["basis_reason"]) for t in ("t1", "t2", "t3")]
    assert got == [
        ("agent_claim_only", "delivered_answer",
         "delivered_answer weakened: t1 is a change, and a file, a document or a change is never shown by a reply"),
        ("agent_claim_only", "person_accepted",
         "person_accepted weakened: it cites no input of the person after every input that set the target"),
        ("agent_claim_only", "delivered_answer",
         "delivered_answer weakened: it cites no reply of the agent after the target was set"),
    ]
    assert ("changed", "t2 basis", "person_accepted weakened to agent_claim_only: it cites no input of the person after "
                                   "every input that set the target") in checks(st)
    # with the basis weakened, the reply no longer shows t3.c1: unknown, and the level follows
    assert crit(st, "t3.c1")["state"] == "unknown" and target(st, "t3")["level"] == "unverified"


def test_a_basis_shown_by_what_it_cites_holds(corpus_store: Any, tmp_path: Path) -> None:
    t1 = with_(T1, basis="person_accepted", basis_cites=["i4"])       # after i1 and i2, which set t1
    t2 = with_(T2, basis="observed_result", basis_cites=["s134"])     # a failed tool step is one
    t3 = with_(T3, basis="nonsense", basis_cites=["s434"])
    _, st = story(corpus_store, tmp_path, t1=t1, t2=t2, t3=t3)
    assert [target(st, t)["basis"] for t in ("t1", "t2", "t3")] == ["person_accepted", "observed_result", "agent_claim_only"]
    assert ("changed", "t3 basis", "basis 'nonsense', which is no basis: agent_claim_only") in checks(st)
    t1b = with_(T1, basis="person_accepted", basis_cites=["i2"])      # i2 set t1 itself
    _, st = story(corpus_store, tmp_path, t1=t1b)
    assert (target(st, "t1")["basis"], target(st, "t1")["evaluator_basis"]) == ("no_evidence", "person_accepted")


# --- claims -------------------------------------------------------------------------------------------

def test_claims_are_checked_against_tool_results(corpus_store: Any, tmp_path: Path) -> None:
    t1 = with_(T1, claims=[
        {"claim": "All 43 tests pass", "said": "s116", "check": "supported", "cites": ["s116", "s120"]},
        {"claim": "credo is clean", "said": "s120", "check": "contradicted", "cites": ["s443"]},
        {"claim": "the tests pass", "said": "s117", "check": "supported", "cites": ["s117"]},
        {"claim": "pushed", "said": "s138", "check": "supported", "cites": ["s136"], "criteria": ["t9.c1"]},
        {"claim": "committed", "said": "s120", "check": "maybe", "cites": ["s131"]},
        {"claim": "compiles", "said": "s112", "check": "not_captured", "cites": []}])
    _, st = story(corpus_store, tmp_path, t1=t1)
    got = [(c["claim"], c["check"], c["by"], c["evaluator_check"]) for c in target(st, "t1")["claims"]]
    # a claim naming another target's criterion is still its target's (spec: "a target with a
    # contradicted claim is not achieved, whatever its criteria say")
    assert got == [("All 43 tests pass", "no_evidence", "asz", "supported"), ("credo is clean", "no_evidence", "asz", "contradicted"),
                   ("pushed", "supported", "evaluator", None),
                   ("committed", "no_evidence", "asz", "maybe"), ("compiles", "not_captured", "evaluator", None)]
    assert target(st, "t1")["claims"][0]["reason"] == ("a claim only the agent's words support or contradict is no_evidence: "
                                                      "nothing it cites shows it: s116: a reply of the agent; s120: a reply of the agent")
    assert ("left_out", "t1 claim 3", "a claim said at s117: the Bash call returned, which is no words of the agent") in checks(st)
    assert ("noted", "t1 claim 4", "a claim that names criteria, none of them the target's: it bears on the whole target") in checks(st)
    # no contradiction held: the criteria stand
    assert target(st, "t1")["level"] == "achieved"


def test_a_contradicted_claim_makes_the_target_not_achieved(corpus_store: Any, tmp_path: Path) -> None:
    t2 = with_(T2, claims=[{"claim": "the branch is pushed", "said": "s138", "check": "contradicted", "cites": ["s134"],
                            "criteria": ["t2.c2"]}])
    t3 = with_(T3, claims=[{"claim": "everything is pushed and clean", "said": "s434", "check": "contradicted",
                            "cites": ["s134"]}])
    t1 = with_(T1, claims=[{"claim": "the output is fetched", "said": "s102", "check": "contradicted", "cites": ["s103"],
                            "criteria": ["t1.c2"]}])
    _, st = story(corpus_store, tmp_path, t1=t1, t2=t2, t3=t3)
    # naming t1.c2, it bears on t1.c2 alone
    assert [c["state"] for c in target(st, "t1")["criteria"]] == ["met", "not_met", "met"]
    assert target(st, "t1")["level"] == "partial"
    c = crit(st, "t2.c2")
    why = "the claim 'the branch is pushed' (s138) is contradicted by s134"
    assert (c["state"], c["by"], c["reason"], c["evaluator_state"], c["evaluator_reason"], c["shown_by"]) == (
        "not_met", "asz", why, "met", "the push went through", ["s134"])
    assert target(st, "t2")["level"] == "not_achieved"
    # naming no criterion, it bears on every criterion met: t3 was achieved, now not
    assert crit(st, "t3.c1")["state"] == "not_met" and target(st, "t3")["level"] == "not_achieved"
    assert ("changed", "t2.c2", f"met: {why}: not_met") in checks(st)


# --- observations ---------------------------------------------------------------------------------------

def test_an_excerpt_must_stand_in_its_step(corpus_store: Any, tmp_path: Path) -> None:
    from asz_core import window

    w = window.build(corpus_store, "258c7280")
    long = w.conv.step("s113").text.encode()[:318].decode("utf-8", "ignore")
    assert len(long.encode()) == 318
    obs = [{"step": "s117", "excerpt": "65 tests, 12 failures", "reading": "made up"},
           {"step": "s113", "excerpt": long, "reading": "the run"},
           {"step": "s117", "excerpt": "Finished in 1.5 seconds\\n   (0.9s async,\n0.5s sync)", "reading": "folded"},
           {"step": "s131", "excerpt": "99b497c", "reading": "not cited by this criterion"},
           {"step": "s117", "excerpt": "  ", "reading": "empty"}]
    t1 = with_(T1, criteria=criteria(("t1.c1", "met", ["s117", "s131"]), ("t1.c2", "met", ["s117", "s113"]), ("t1.c3", "met", ["s131"]),
                                     **{"t1.c2": {"observations": obs}}))
    _, st = story(corpus_store, tmp_path, t1=t1)
    got = crit(st, "t1.c2")["observations"]
    assert [o["excerpt"] for o in got] == [long.encode()[:300].decode(), "Finished in 1.5 seconds\\n   (0.9s async,\n0.5s sync)"]
    assert [o["fact"] for o in got] == ["s113: the TaskOutput call returned", "s117: the Bash call returned"]
    assert [c for c in checks(st) if c[1] == "t1.c2"] == [
        ("left_out", "t1.c2", "an observation of s117: its excerpt is not in the step word for word"),
        ("changed", "t1.c2", "the excerpt of s113 (318 bytes) cut to its first 300 bytes"),
        ("left_out", "t1.c2", "an observation of 's131', which the criterion does not cite"),
        ("left_out", "t1.c2", "an observation of s117 with no excerpt")]
    assert crit(st, "t1.c2")["state"] == "met"  # an observation left out changes no state


def test_an_excerpt_past_the_kept_text_is_read_from_the_record_and_the_fact_is_asz(corpus_store: Any, tmp_path: Path) -> None:
    from asz_core import window

    w = window.build(corpus_store, "258c7280")
    raw = corpus_store.raw(w.conv.id, w.conv.step("s441").records[-1]).decode()
    part = json.loads(raw)["message"]["content"][0]["content"]
    whole = part if isinstance(part, str) else "\n".join(x.get("text", "") for x in part)
    deep = " ".join(whole[50000:50600].split()[1:30])
    assert deep and deep not in w.conv.step("s441").text
    t1 = with_(T1, criteria=criteria(("t1.c1", "met", ["s438", "s441", "s134"]), ("t1.c2", "met", ["s117"]),
                                     ("t1.c3", "met", ["s131"]),
                                     **{"t1.c1": {"observations": [{"step": "s441", "excerpt": deep, "reading": "docs"},
                                                                   {"step": "s134", "excerpt": "Exit code 128",
                                                                    "reading": "the push went through"}]}}))
    _, st = story(corpus_store, tmp_path, t1=t1)
    got = crit(st, "t1.c1")["observations"]
    assert [(o["step"], o["fact"], o["reading"]) for o in got] == [
        ("s441", "s441: the WebFetch call returned", "docs"), ("s134", "s134: the Bash call failed", "the push went through")]


# --- events, the deliveries standing, contradictions --------------------------------------------------

def test_events_are_kept_only_when_what_they_cite_shows_them(corpus_store: Any, tmp_path: Path) -> None:
    t2 = with_(T2, events=[
        {"key": "e0", "event": "delivered", "concerns": "revision", "cites": ["s131"]},            # before t2 was set
        {"key": "e1", "event": "delivered", "concerns": "remote_change", "cites": ["s139", "s136", "s134"]},
        {"key": "e2", "event": "delivered_again", "concerns": "answer", "cites": ["s138"]},       # "Pushed." repeats it
        {"key": "e3", "event": "delivered", "concerns": "file", "cites": ["s138"]},               # a reply is no file
        {"key": "e4", "event": "undone", "concerns": "file", "cites": ["s134"]},                  # a failed request
        {"key": "e5", "event": "removed", "concerns": "file", "cites": ["s346"]},
    ])
    _, st = story(corpus_store, tmp_path, t2=t2)
    t = target(st, "t2")
    assert [(e["id"], e["event"], e["at"], e["cites"]) for e in t["events"]] == [("t2.e1", "delivered", "s136", ["s139", "s136"])]
    assert t["standing"] == ["t2.e1"]
    got = [c for c in checks(st) if c[1].startswith("t2 event")]
    assert got == [
        ("left_out", "t2 event e0", "delivered of revision: it cites no tool step that returned after the target was set "
                                    "(a request is not the thing done); nothing it cites shows it: s131: the Bash call returned"),
        ("left_out", "t2 event e2", "a reply that only repeats a delivered result is no event: no work was redone between "
                                    "t2.e1 (s136) and s138 (a file operation of t2, a check's result it cites, an undoing, a "
                                    "contradiction or the person's correction)"),
        ("left_out", "t2 event e3", "delivered of file: it cites no tool step that returned after the target was set (a "
                                    "request is not the thing done); nothing it cites shows it: s138: a reply of the agent"),
        ("left_out", "t2 event e4", "undone of file: it cites no tool step that returned after the target was set (a "
                                    "request is not the thing done); nothing it cites shows it: s134: the Bash call failed"),
        ("left_out", "t2 event e5", "'removed' concerning 'file': no such event or concern"),
    ]


def test_an_answer_is_delivered_by_a_reply_after_the_target_was_set(corpus_store: Any, tmp_path: Path) -> None:
    t3 = with_(T3, events=[{"key": "e1", "event": "delivered", "concerns": "answer", "cites": ["s136", "s138"]},
                           {"key": "e2", "event": "delivered", "concerns": "answer", "cites": ["s434"]}])
    _, st = story(corpus_store, tmp_path, t3=t3)
    assert [(e["id"], e["at"]) for e in target(st, "t3")["events"]] == [("t3.e1", "s434")]
    assert ("left_out", "t3 event e1", "delivered of answer: it cites no reply of the agent after the target was set; "
                                       "nothing it cites shows it: s136: the Bash call returned; s138: a reply of the agent"
            ) in checks(st)


def test_a_delivery_again_naming_nothing_replaces_every_delivery_standing(corpus_store: Any, tmp_path: Path) -> None:
    t1 = with_(T1, events=[
        {"key": "a", "event": "delivered", "concerns": "file", "cites": ["s47"]},
        {"key": "b", "event": "delivered", "concerns": "revision", "cites": ["s131"]},
        {"key": "c", "event": "delivered_again", "concerns": "file", "cites": ["s346"]},
        {"key": "d", "event": "undone", "concerns": "file", "cites": ["s399"]}])
    _, st = story(corpus_store, tmp_path, t1=t1)
    t = target(st, "t1")
    assert t["standing"] == ["t1.e3"]
    assert [(e["id"], e["deliveries"], e["applies"]) for e in t["events"]][3] == ("t1.e4", [], True)


def test_events_come_in_order(corpus_store: Any, tmp_path: Path) -> None:
    t2 = with_(T2, events=[
        {"key": "u", "event": "undone", "concerns": "file", "cites": ["s346"]},                   # before any delivery
        {"key": "a", "event": "delivered", "concerns": "file", "cites": ["s346"]},
        {"key": "b", "event": "delivered", "concerns": "remote_change", "cites": ["s136"]},       # recorded before a
        {"key": "c", "event": "undone", "concerns": "file", "cites": ["s399"], "deliveries": ["a"]},
        {"key": "d", "event": "delivered", "concerns": "file", "cites": ["s402"]},                # after an undoing
    ])
    _, st = story(corpus_store, tmp_path, t2=t2)
    t = target(st, "t2")
    assert [(e["id"], e["event"], e["at"]) for e in t["events"]] == [("t2.e1", "delivered", "s346"), ("t2.e2", "undone", "s399")]
    assert [c[2] for c in checks(st) if c[1].startswith("t2 event")] == [
        "undone before any delivery", "delivered at s136, not recorded after t2.e1 (s346)",
        "a delivery after an undoing: after an undoing comes a delivery again"]


def test_the_deliveries_standing_at_the_end(corpus_store: Any, tmp_path: Path) -> None:
    """Two deliveries; a delivery again corrects the first; an undoing of that first one no longer
    applies, an undoing of a criterion while the others stand does; contradictions stay tied."""
    t1 = with_(T1, events=[
        {"key": "a", "event": "delivered", "concerns": "file", "cites": ["s47"]},
        {"key": "b", "event": "delivered", "concerns": "revision", "cites": ["s131"]},
        {"key": "c", "event": "delivered_again", "concerns": "file", "cites": ["s346"], "corrects": ["a", "zz"]},
        {"key": "d", "event": "undone", "concerns": "file", "cites": ["s399"], "deliveries": ["a"]},
        {"key": "e", "event": "undone", "concerns": "file", "cites": ["s402"], "criteria": ["t1.c3"]},
        {"key": "f", "event": "undone", "concerns": "file", "cites": ["s405"], "criteria": ["t2.c1"]},
        {"key": "g", "event": "undone", "concerns": "file", "cites": ["s405"], "deliveries": ["zz"]},
        {"key": "h", "event": "delivered_again", "concerns": "file", "cites": ["s405"], "corrects": ["zz", "d"]},
    ], contradictions=[
        {"delivery": "a", "disproves": "conclusion", "cites": ["s134"], "what": "old"},
        {"delivery": "b", "disproves": "criteria", "criteria": ["t1.c2", "t3.c1"], "cites": ["i3"]},
        {"delivery": "b", "disproves": "criteria", "criteria": ["t3.c1"], "cites": ["s134"]},
        {"delivery": "zz", "disproves": "conclusion", "cites": ["s134"]},
        {"delivery": "b", "disproves": "conclusion", "cites": ["s120", "i2"]},
        {"delivery": "b", "disproves": "everything", "cites": ["s134"]},
    ])
    _, st = story(corpus_store, tmp_path, t1=t1)
    t = target(st, "t1")
    assert [(e["id"], e["event"], e["corrects"], e["criteria"], e["deliveries"], e["applies"]) for e in t["events"]] == [
        ("t1.e1", "delivered", [], [], [], None), ("t1.e2", "delivered", [], [], [], None),
        ("t1.e3", "delivered_again", ["t1.e1"], [], [], None), ("t1.e4", "undone", [], [], ["t1.e1"], False),
        ("t1.e5", "undone", [], ["t1.c3"], [], True)]
    assert t["standing"] == ["t1.e2", "t1.e3"]
    assert [(c["delivery"], c["disproves"], c["criteria"], c["cites"], c["applies"]) for c in t["contradictions"]] == [
        ("t1.e1", "conclusion", [], ["s134"], False), ("t1.e2", "criteria", ["t1.c2"], ["s132"], True)]
    got = [c[1:] for c in checks(st) if c[1].startswith(("t1 event", "t1 contradiction"))]
    assert got == [
        ("t1 event c", "of what it corrects, ['zz']: no earlier delivery"),
        ("t1 event f", "criterion 't2.c1': no live criterion of t1"),
        ("t1 event f", "an undoing that names criteria, none of them the target's"),
        ("t1 event g", "an undoing that names deliveries, none of them earlier deliveries (['zz'])"),
        ("t1 event h", "a delivery again that names only what is no earlier delivery (['zz', 'd'])"),
        ("t1 contradiction 2", "criterion 't3.c1': no live criterion of t1"),
        ("t1 contradiction 3", "criterion 't3.c1': no live criterion of t1"),
        ("t1 contradiction 3", "a contradiction of criteria that names none of the target's"),
        ("t1 contradiction 4", "a contradiction of 'zz': no delivery kept"),
        ("t1 contradiction 5", "it cites no evidence beyond the agent's words (a tool result, an error, the person's input "
                               "after the inputs that set the target); nothing it cites shows it: s120: a reply of the agent; "
                               "s106: the person's input i2, which set t1: what was asked, never that it was done"),
        ("t1 contradiction 6", "disproves 'everything': neither the conclusion nor criteria"),
    ]
    # the level is still derived from the criteria
    assert t["level"] == "achieved"


def test_criteria_met_and_no_delivery_kept_leaves_the_stage_partial(corpus_store: Any, tmp_path: Path) -> None:
    t1 = with_(T1, events=[{"key": "e1", "event": "delivered", "concerns": "revision", "cites": ["s120"]}])
    _, st = story(corpus_store, tmp_path, t1=t1)
    assert target(st, "t1")["events"] == [] and target(st, "t1")["level"] == "achieved"
    assert st["status"] == "partial"
    assert "noted: t1: criteria met and no delivery kept: nothing a source reports of it could reach its score" in st["note"]


# --- rework -------------------------------------------------------------------------------------------

def test_rounds_of_rework_need_attempt_trigger_and_redo_in_order(corpus_store: Any, tmp_path: Path) -> None:
    t2 = with_(T2, rework=[
        {"attempt": ["s134"], "trigger": "tool", "trigger_step": "s134", "redo": ["s138", "s136"], "cause": "requirement_change"},
        {"attempt": ["s136"], "trigger": "tool", "trigger_step": "s134", "redo": ["s136"], "cause": "agent_error"},
        {"attempt": ["s134"], "trigger": "verification", "trigger_step": "s136", "redo": ["s134"], "cause": "agent_error"},
        {"attempt": ["s134"], "trigger": "person", "trigger_step": "s134", "redo": ["s136"], "cause": "agent_error"},
        {"attempt": ["s134"], "trigger": "verification", "trigger_step": "s138", "redo": ["s139"], "cause": "agent_error"},
        {"attempt": ["s131"], "trigger": "person", "trigger_step": "i3", "redo": ["s434"], "cause": "requirement_change"},
        {"attempt": ["s131"], "trigger": "person", "trigger_step": "i3", "redo": ["s136"], "cause": "requirement_change"},
        {"attempt": ["s1"], "trigger": "tool", "trigger_step": "s134", "redo": ["s136"], "cause": "whatever"},
    ])
    _, st = story(corpus_store, tmp_path, t2=t2)
    got = [(r["id"], r["attempt"], r["trigger_step"], r["redo"], r["cause"], r["evaluator_cause"], r["start"], r["end"])
           for r in target(st, "t2")["rework"]]
    assert got == [("t2.r1", ["s134"], "s134", ["s136", "s138"], "unknown", "requirement_change", "s134", "s138")]
    order = "attempt, trigger and redo do not come in that order, each shown: "
    assert [c[1:] for c in checks(st) if c[1].startswith("t2 rework")] == [
        ("t2 rework 1", "requirement_change with a tool trigger: only the person can change a requirement: unknown"),
        ("t2 rework 2", order + "no step of the agent's work for the target (or before the window) at or before the trigger"),
        ("t2 rework 3", order + "no step of the agent's work for the target after the trigger"),
        ("t2 rework 4", "a person trigger at s134: the Bash call failed: it must be an input of the person"),
        ("t2 rework 5", "a verification trigger at s138: a reply of the agent: it must be a tool step that returned"),
        # the commit s131 came before i3 set t2: t1's work, which t2 did not receive (test_rule_gaps.py);
        # and s434 is t3's talk
        ("t2 rework 6", order + "no step of the agent's work for the target (or before the window) at or before the trigger"),
        ("t2 rework 7", order + "no step of the agent's work for the target (or before the window) at or before the trigger"),
        ("t2 rework 8", order + "no step of the agent's work for the target (or before the window) at or before the trigger"),
    ]


def test_an_attempt_and_a_finding_may_sit_before_the_window(corpus_store: Any, tmp_path: Path) -> None:
    """A window of k2 alone: k1 is context. A finding anchored there, and a round whose attempt is
    the push of k1, are kept; a finding anchored at a talk id, or citing nothing, is not."""
    targets = {"inputs": [{"input": "i4", "actions": [{"target": "new:push", "action": "create"}],
                           "relations": [{"relation": "new", "goal": "new:g", "statement": "x"}]}],
               "targets": [{"target": "new:push", "statement": "say whether it was pushed", "kind": "question",
                            "talks": ["k2"], "criteria": [{"text": "a correct answer"}]}], "goals": []}
    ans = {"target": "t1", "criteria": criteria(("t1.c1", "met", ["s434"])), "basis": "delivered_answer", "basis_cites": ["s434"],
           "events": [{"key": "e1", "event": "delivered", "concerns": "answer", "cites": ["s434"]}],
           "rework": [{"attempt": ["s136"], "trigger": "person", "trigger_step": "i4", "redo": ["s434"], "cause": "unknown"}],
           "findings": [{"anchor": "s134", "what": "pushed with no upstream", "cites": ["s134"]},
                        {"anchor": "k1", "what": "a talk", "cites": ["s134"]},
                        {"anchor": "s434", "what": "cites nothing", "cites": ["k2"]}]}
    _, st = run(corpus_store, tmp_path, [ans], targets=targets, window="k2")
    t = target(st, "t1")
    assert [(r["attempt"], r["trigger_step"], r["redo"]) for r in t["rework"]] == [(["s136"], "s432", ["s434"])]
    assert [(f["id"], f["anchor"]) for f in t["findings"]] == [("f1", "s134")]
    assert [c[1:] for c in checks(st) if "finding" in c[1]] == [
        ("t1 finding 2", "anchored at k1: a talk id, which cites nothing in particular: no step of the target's work or "
                         "before the window"),
        ("t1 finding 3", "cited k2: a talk id, which cites nothing in particular"),
        ("t1 finding 3", "a finding that cites no step")]


# --- findings never change anything else ------------------------------------------------------------

def test_findings_change_no_state_level_or_basis(corpus_store: Any, tmp_path: Path) -> None:
    _, with_f = story(corpus_store, tmp_path)
    t1 = with_(T1, findings=[])
    _, without = story(corpus_store, tmp_path, t1=t1)
    a, b = target(with_f, "t1"), target(without, "t1")
    keep = ("level", "basis", "criteria", "claims", "events", "standing", "contradictions", "rework", "account", "met", "unknown")
    assert {k: a[k] for k in keep} == {k: b[k] for k in keep} and a["findings"] and not b["findings"]
    t1 = with_(T1, findings=[{"anchor": "s438", "what": "the sub-agent read the docs", "cites": ["s438"]},
                             {"anchor": "s434", "what": "in another target's talk", "cites": ["s434"]}])
    _, st = story(corpus_store, tmp_path, t1=t1)
    assert [f["anchor"] for f in target(st, "t1")["findings"]] == ["s438"]   # a sub-task of t1's talk is t1's work
    assert ("left_out", "t1 finding 2", "anchored at s434: a reply of the agent: no step of the target's work or before "
                                        "the window") in checks(st)


# --- accounts ------------------------------------------------------------------------------------------

def test_a_question_account_keeps_only_the_parts_shown(corpus_store: Any, tmp_path: Path) -> None:
    t3 = with_(T3, account={"question": {
        "asked": {"text": "did you push?", "cites": ["s434"]},
        "checks": [{"what": "git push", "found": "pushed", "holds": "then", "cites": ["s136"]},
                   {"what": "the agent's word", "found": "pushed", "cites": ["s138"]}],
        "ruled_out": [{"text": "a missing upstream", "cites": ["s136"]}, {"text": "nothing", "cites": ["k2"]}],
        "answer": {"text": "yes", "cites": ["s136"]}}})
    _, st = story(corpus_store, tmp_path, t3=t3)
    q = target(st, "t3")["account"]["question"]
    assert q["asked"] is None and q["answer"] is None
    assert q["checks"] == [{"what": "git push", "found": "pushed", "holds": "then", "cites": ["s136"]}]
    assert q["ruled_out"] == [{"text": "a missing upstream", "cites": ["s136"]}]
    assert [c[1:] for c in checks(st) if "account" in c[1]] == [
        ("t3 account check 2", "nothing it cites shows it: it needs a tool step that shows what it found"),
        ("t3 account ruled out 2", "cited k2: a talk id, which cites nothing in particular"),
        ("t3 account ruled out 2", "nothing it cites shows it: it needs a tool step that shows it"),
        ("t3 account asked", "nothing it cites shows it: it needs the person's input"),
        ("t3 account answer", "nothing it cites shows it: it needs a reply of the agent")]


def test_an_account_of_a_change_to_another_system(corpus_store: Any, tmp_path: Path) -> None:
    t2 = with_(T2, account={"operations": [
        {"system": "github", "operation": "push", "request": {"text": "git push", "cites": ["s136"]},
         "response": {"text": "the branch was created", "cites": ["s136"]},
         "confirmation": {"text": "the person asked, and was told", "cites": ["i4"]}},
        {"system": "github", "operation": "push", "request": {"text": "git push", "cites": ["s134"]},
         "response": {"text": "no upstream", "cites": ["s131"]},
         "confirmation": {"text": "the same call", "cites": ["s134"]}},
        {"system": "github", "operation": "push", "request": {"text": "said", "cites": ["s138"]}},
    ], "files": T2["account"]["files"]})
    _, st = story(corpus_store, tmp_path, t2=t2)
    ops = target(st, "t2")["account"]["operations"]
    assert ops[0] == {"system": "github", "operation": "push", "tool": "Bash",
                      "request": {"text": "git push", "cites": ["s136"]},
                      "response": {"text": "the branch was created", "cites": ["s136"]},
                      "confirmation": {"text": "the person asked, and was told", "cites": ["s432"]}}
    assert (ops[1]["request"]["cites"], ops[1]["response"], ops[1]["confirmation"]) == (["s134"], None, None)
    assert len(ops) == 2
    assert [c[1:] for c in checks(st) if "account" in c[1]] == [
        ("t2 account operation 2 response", "nothing it cites shows it: it needs a step that returned, at or after the request"),
        ("t2 account operation 2 confirmation", "nothing it cites shows it: it needs a later step that shows it happened, or "
                                                "the person's input after the inputs that set the target"),
        ("t2 account operation 3 request", "nothing it cites shows it: it needs the tool step that sent it"),
        ("t2 account operation 3", "an operation with no request shown")]


def test_file_groups_hold_the_targets_own_operations_each_once(corpus_store: Any, tmp_path: Path) -> None:
    t1 = with_(T1, account={"files": [
        {"area": "lib", "category": "code", "changed": "a", "operations": ["o1", "o2", "o16", "o999"]},
        {"area": "test", "category": "tests", "changed": "b", "operations": ["o2", "o3"]},
        {"area": "x", "category": "docs", "changed": "c", "operations": ["o17"]}]})
    _, st = story(corpus_store, tmp_path, t1=t1)
    acc = target(st, "t1")["account"]
    assert [(g["area"], g["operations"]) for g in acc["files"]] == [("lib", ["o1", "o2"]), ("test", ["o3"])]
    assert acc["ungrouped"] == [f"o{n}" for n in range(4, 16)]
    assert [c[1:] for c in checks(st) if "account" in c[1]] == [
        ("t1 account files 1", "operation 'o16': not one of the target's own"),
        ("t1 account files 1", "operation 'o999': no operation the record shows"),
        ("t1 account files 2", "operation o2: in another group already (each is in one)"),
        ("t1 account files 3", "operation 'o17': not one of the target's own"),
        ("t1 account files 3", "a group of files that names none of the target's own operations"),
        ("t1 account files", "its own operations " + ", ".join(f"o{n}" for n in range(4, 16)) + " are in no group: listed ungrouped")]


# --- calls ------------------------------------------------------------------------------------------------

def test_an_answer_for_another_target_is_left_out_and_a_missing_one_filled_in(corpus_store: Any, tmp_path: Path) -> None:
    _, st = run(corpus_store, tmp_path, [{"targets": [T2]}, {"targets": [T2, T2, {"target": "t7"}, {"target": 5}, "t2"]}, T3])
    t1 = target(st, "t1")
    assert [(c["state"], c["by"]) for c in t1["criteria"]] == [("unknown", "asz")] * 3
    assert (t1["level"], t1["basis"]) == ("unverified", "no_evidence")
    assert target(st, "t2")["level"] == "unverified" and target(st, "t2")["criteria"][1]["state"] == "met"
    got = checks(st)
    assert got[:2] == [("left_out", "t2", "an answer for t2: it is not one of this call's targets"),
                       ("filled_in", "t1", "the answer gave nothing for it: every criterion is unknown and its basis no_evidence")]
    assert ("left_out", "t2", "a second answer for the same target") in got
    assert ("left_out", "t7", "an answer for t7: no such target") in got
    # an entry naming no target (a number, no object at all): left out, at its call, in every stage's words
    assert got.count(("left_out", "call 2", "an answer entry that names no target")) == 2


def test_a_call_that_fails_twice_leaves_its_target_unjudged(corpus_store: Any, tmp_path: Path) -> None:
    res, st = run(corpus_store, tmp_path, [T1, None, T3])
    t2 = target(st, "t2")
    assert t2["judged"] is False and t2["level"] is None and t2["call"] == 2
    assert t2["why"].startswith("its call (2) gave nothing readable twice")
    assert st["status"] == "partial" and st["header"]["not_judged"] == {"call failed": 1} and st["header"]["judged"] == 2
    assert st["run"]["attempts"] == 4 and (res.path / "calls/achievement/2/2").is_dir()
    res, st = run(corpus_store, tmp_path, [None, None, None])
    assert st["status"] == "failed" and st["reason"] == "every call gave nothing readable twice (3 calls): no target was judged"
    assert [t["judged"] for t in st["achievement"]] == [False, False, False]
    assert json.loads((res.path / "close.json").read_text())["stages"]["achievement"] == "failed"


def test_single_mode_is_one_call_for_every_target(corpus_store: Any, tmp_path: Path) -> None:
    res, st = run(corpus_store, tmp_path, [{"targets": [T1, T2, T3]}], settings={"judge.mode": "single"})
    assert st["run"]["mode"] == "single" and st["run"]["calls"] == 1 and st["status"] == "complete"
    assert [target(st, t)["level"] for t in ("t1", "t2", "t3")] == ["achieved", "unverified", "achieved"]
    prompt = (res.path / "calls/achievement/1/1/prompt.md").read_text()
    assert "This is the only call of this stage: judge every target listed below (t1, t2, t3)." in prompt
    assert "(no other target)" in prompt


def test_a_cancelled_or_replaced_target_is_not_judged(corpus_store: Any, tmp_path: Path) -> None:
    from .achievement_story import TARGETS

    targets = json.loads(json.dumps(TARGETS))
    targets["targets"][1]["state"] = "cancelled"
    targets["targets"][0]["state"] = "replaced"
    targets["targets"][0]["replaced_by"] = "new:beads"
    _, st = run(corpus_store, tmp_path, [T3], targets=targets)
    assert [(t["target"], t["judged"], t["why"]) for t in st["achievement"]] == [
        ("t1", False, "not judged: replaced by the person (replaced by t2)"), ("t2", False, "not judged: cancelled by the person"),
        ("t3", True, None)]
    assert st["header"]["not_judged"] == {"replaced": 1, "cancelled": 1} and st["status"] == "complete"


def test_no_targets_stage_no_achievement(corpus_store: Any, tmp_path: Path) -> None:
    from asz_core.judge import runner

    path = tmp_path / "s.json"
    path.write_text(json.dumps({"calls": []}))
    res = runner.judge(runner.JudgeOptions("258c7280", evaluator=f"scripted:{path}", stages=("targets", "achievement")),
                       store=corpus_store)
    st = json.loads((res.path / "stages/achievement.json").read_text())
    assert res.stages["targets"] == "failed" and st["status"] == "skipped"
    assert st["reason"].startswith("no target to judge: the targets stage is failed (") and st["note"] == []


__all__ = ["T1", "T2", "T3", "answers"]


def test_a_target_larger_than_a_chunk_names_its_rows_past_the_limit(corpus_store: Any, tmp_path: Path) -> None:
    """t2 holds 33 file operations: with judge.chunk_bytes 4096 its rows past the limit are named
    by count (they are its own all the same), and the catalogue is bounded by judge.state_bytes."""
    res, st = run(corpus_store, tmp_path, [T1, T2, T3], settings={"judge.chunk_bytes": 4096, "judge.state_bytes": 200})
    assert st["status"] == "complete", st["note"]
    p2 = (res.path / "calls/achievement/2/1/prompt.md").read_text()
    own = p2.split("### Your target", 1)[1].split("### The other targets", 1)[0]
    m = __import__("re").search(r"Target t2 has more rows than fit one call: (\d+) of them \((o\d+) to (o48)\)", p2)
    assert m and f'"id":"{m.group(2)}"' not in own and '"id":"o16"' in own
    assert int(m.group(1)) == 48 - int(m.group(2)[1:]) + 1
    ctx = p2.split("### The other targets", 1)[1].split("```", 2)[1]
    assert len(ctx.strip().encode()) <= 200 and "statement" not in ctx and '"id":"t3"' in ctx
    assert target(st, "t2")["account"]["own_operations"] == [f"o{n}" for n in range(16, 49)]
