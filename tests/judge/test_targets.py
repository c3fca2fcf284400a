"""The targets stage driven by the scripted evaluator over corpus conversations: full runs, and
answers built to break each rule, with asz's exact response to each."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import cid_with, entry, inputs_of, judge, plain_answer


def checks(stage: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(c["kind"], c["where"], c["what"]) for c in stage["checks"]]


def test_full_run_over_every_corpus_conversation(corpus_store: Any, tmp_path: Path) -> None:
    ran = 0
    for row in corpus_store.conversations():
        ins = inputs_of(corpus_store, row.id)
        if not ins:
            continue
        res, stage = judge(corpus_store, tmp_path, row.id, [entry(plain_answer(ins))], stages=("targets",))
        ran += 1
        assert stage["status"] == "complete", stage["note"]
        assert stage["header"] == {"inputs": len(ins), "answered": len(ins), "goals": 1, "targets": 1,
                                   "targets_in_no_goal": 0, "never_read": 0}
        t = stage["targets"][0]
        assert t["id"] == "t1" and t["goal"] == "g1" and t["criteria"][0]["id"] == "t1.c1"
        assert t["inputs"] == [s.input for s in ins]
        assert stage["goals"][0]["main_target"] == "t1" and stage["goals"][0]["main_basis"] == "only_member"
        assert [r["input"] for r in stage["inputs"]] == [s.input for s in ins]
        assert stage["run"]["mode"] == "single" and stage["run"]["calls"] == 1
        assert stage["run"]["consumed"]["requests"] == 1 and stage["run"]["consumed"]["input"] == 1000
        assert stage["kit"]["digest"] and stage["kit"]["prompt_template"] and stage["evaluator"]["name"] == "scripted"
        assert res.stages == {"targets": "complete", "achievement": "skipped", "subtasks": "skipped",
                              "efficiency": "skipped", "reference": "skipped", "divergence": "skipped"}
        run = json.loads((res.path / "run.json").read_text())
        assert run["head"] == stage["head"] and run["kit"] == stage["kit"]["digest"]
        assert len(run["prices"]["sha256"]) == 64 and run["evaluators"]["targets"]["name"] == "scripted"
        prompt = (res.path / "calls/targets/1/1/prompt.md").read_text()
        assert f"{131072:,} bytes" in prompt and '"conversation":"' + row.id in prompt
        for s in ins:
            assert f'"input":"{s.input}"' in prompt
        assert (res.path / "calls/targets/1/1/reads.jsonl").read_text().count('"tool":"talks"') == 1
    assert ran >= 10


def test_a_hallucinated_input_id_is_left_out(corpus_store: Any, tmp_path: Path) -> None:
    cid = cid_with(corpus_store, 2)
    ins = inputs_of(corpus_store, cid)
    ans = plain_answer(ins)
    ans["inputs"].append({"input": "i999", "actions": [{"target": "new:a", "action": "accept"}],
                          "relations": [{"relation": "continue", "goal": "new:A", "follows": ins[0].input}]})
    _, stage = judge(corpus_store, tmp_path, cid, [entry(ans)])
    assert stage["status"] == "partial"
    assert checks(stage) == [("left_out", "i999", "an answer for i999: no such input")]
    assert stage["note"] == ["left out: i999: an answer for i999: no such input"]
    assert "i999" not in stage["targets"][0]["inputs"]


def test_an_unanswered_input_is_unknown(corpus_store: Any, tmp_path: Path) -> None:
    cid = cid_with(corpus_store, 3)
    ins = inputs_of(corpus_store, cid)
    ans = plain_answer(ins)
    del ans["inputs"][1]
    ans["inputs"][1]["relations"][0]["follows"] = ins[0].input
    _, stage = judge(corpus_store, tmp_path, cid, [entry(ans)])
    row = stage["inputs"][1]
    assert row["answered"] is False
    assert row["actions"] == [{"target": None, "action": "unknown", "note": None}]
    assert row["relations"] == [{"relation": "unclear", "goal": None, "follows": None, "statement": None}]
    assert ("filled_in", ins[1].input, "left unanswered: its action is unknown and its relation unclear") in checks(stage)
    assert stage["status"] == "partial" and stage["header"]["answered"] == len(ins) - 1


def test_a_continue_that_follows_nothing_becomes_unclear(corpus_store: Any, tmp_path: Path) -> None:
    cid = cid_with(corpus_store, 3)
    ins = inputs_of(corpus_store, cid)
    ans = plain_answer(ins)
    ans["inputs"][1]["relations"] = [{"relation": "continue", "goal": "new:A", "follows": None}]
    ans["inputs"][2]["relations"] = [{"relation": "continue", "goal": "g7", "follows": ins[0].input}]
    _, stage = judge(corpus_store, tmp_path, cid, [entry(ans)])
    i1, i2 = ins[1].input, ins[2].input
    assert stage["inputs"][1]["relations"] == [{"relation": "unclear", "goal": None, "follows": None, "statement": None}]
    assert stage["inputs"][2]["relations"][0]["relation"] == "unclear"
    assert checks(stage)[:2] == [
        ("changed", i1, "continue of g1 follows None, which is no earlier input of g1: unclear"),
        ("changed", i2, "continue names 'g7', a goal no earlier input started: unclear"),
    ]
    assert i1 not in stage["goals"][0]["inputs"] and i2 not in stage["goals"][0]["inputs"]


def test_a_continue_may_not_follow_a_later_input_or_one_of_another_goal(corpus_store: Any, tmp_path: Path) -> None:
    cid = cid_with(corpus_store, 4)
    ins = [s.input for s in inputs_of(corpus_store, cid)]
    ans = plain_answer(inputs_of(corpus_store, cid))
    ans["inputs"][1] = {"input": ins[1], "actions": [{"target": "new:b", "action": "create"}],
                        "relations": [{"relation": "new", "goal": "new:B", "statement": "do b"}]}
    ans["targets"].append({"target": "new:b", "statement": "the outcome b", "criteria": [{"text": "b works"}]})
    ans["inputs"][2]["relations"] = [{"relation": "continue", "goal": "new:A", "follows": ins[1]}]   # i of goal B
    ans["inputs"][3]["relations"] = [{"relation": "continue", "goal": "new:A", "follows": ins[3]}]   # itself
    _, stage = judge(corpus_store, tmp_path, cid, [entry(ans)])
    assert [r["relations"][0]["relation"] for r in stage["inputs"][:4]] == ["new", "new", "unclear", "unclear"]
    assert ("changed", ins[2], f"continue of g1 follows '{ins[1]}', which is no earlier input of g1: unclear") in checks(stage)


def test_new_goals_take_the_next_id_in_order_of_their_first_input(corpus_store: Any, tmp_path: Path) -> None:
    """A goal skipping an id: the evaluator names goals g3 and g1 (and targets t5, t2); asz numbers
    them g1, g2 and t1, t2 in the order their first inputs came."""
    cid = cid_with(corpus_store, 2)
    ins = [s.input for s in inputs_of(corpus_store, cid)]
    ans = {"inputs": [
        {"input": ins[0], "actions": [{"target": "t5", "action": "create"}], "relations": [{"relation": "new", "goal": "g3", "statement": "x"}]},
        {"input": ins[1], "actions": [{"target": "t2", "action": "create"}], "relations": [{"relation": "new", "goal": "g1", "statement": "y"}]},
    ], "targets": [{"target": "t2", "statement": "second"}, {"target": "t5", "statement": "first"}], "goals": []}
    _, stage = judge(corpus_store, tmp_path, cid, [entry(ans)])
    assert [(g["id"], g["members"], g["evolution"][0]["statement"]) for g in stage["goals"]] == [("g1", ["t1"], "x"), ("g2", ["t2"], "y")]
    assert [(t["id"], t["statement"], t["created_by"]) for t in stage["targets"]] == [("t1", "first", ins[0]), ("t2", "second", ins[1])]
    assert stage["inputs"][1]["relations"][0] == {"relation": "new", "goal": "g2", "follows": None, "statement": "y"}


def test_a_new_that_names_a_started_goal_is_unclear(corpus_store: Any, tmp_path: Path) -> None:
    cid = cid_with(corpus_store, 2)
    ins = inputs_of(corpus_store, cid)
    ans = plain_answer(ins)
    ans["inputs"][1]["relations"] = [{"relation": "new", "goal": "new:A", "statement": "again"}]
    _, stage = judge(corpus_store, tmp_path, cid, [entry(ans)])
    assert stage["inputs"][1]["relations"][0]["relation"] == "unclear"
    assert ("changed", ins[1].input, f"new names new:A, which {ins[0].input} started already: unclear") in checks(stage)


def test_a_return_right_after_its_goal_is_a_continue(corpus_store: Any, tmp_path: Path) -> None:
    cid = cid_with(corpus_store, 4)
    ins = [s.input for s in inputs_of(corpus_store, cid)]
    ans = plain_answer(inputs_of(corpus_store, cid))
    ans["inputs"][1] = {"input": ins[1], "actions": [{"target": "new:b", "action": "create"}],
                        "relations": [{"relation": "new", "goal": "new:B", "statement": "b"}]}
    ans["targets"].append({"target": "new:b", "statement": "b"})
    ans["inputs"][2]["relations"] = [{"relation": "return", "goal": "new:A", "follows": ins[0]}]  # a real return
    ans["inputs"][3]["relations"] = [{"relation": "return", "goal": "new:A", "follows": ins[2]}]  # right after A
    _, stage = judge(corpus_store, tmp_path, cid, [entry(ans)])
    assert [r["relations"][0]["relation"] for r in stage["inputs"][:4]] == ["new", "new", "return", "continue"]
    assert ("changed", ins[3], f"return to g1 right after {ins[2]}, an input of g1: continue") in checks(stage)
    assert stage["goals"][0]["inputs"][:3] == [ins[0], ins[2], ins[3]]


def test_not_from_person_must_agree_with_its_actions(corpus_store: Any, tmp_path: Path) -> None:
    cid = cid_with(corpus_store, 3)
    ins = inputs_of(corpus_store, cid)
    ans = plain_answer(ins)
    ans["inputs"][1] = {"input": ins[1].input, "actions": [{"action": "not_from_person"}], "relations": [{"relation": "not_from_person"}]}
    ans["inputs"][2]["actions"] = [{"target": "new:a", "action": "refine"}]
    ans["inputs"][2]["relations"] = [{"relation": "not_from_person"}]
    _, stage = judge(corpus_store, tmp_path, cid, [entry(ans)])
    assert stage["inputs"][1]["relations"][0]["relation"] == "not_from_person"
    assert stage["inputs"][2]["relations"][0]["relation"] == "unclear"
    assert ("changed", ins[2].input, "not_from_person, though its actions say the person wrote it: unclear") in checks(stage)


def test_a_main_target_with_no_citation_is_undetermined(corpus_store: Any, tmp_path: Path) -> None:
    cid = cid_with(corpus_store, 3)
    ins = [s.input for s in inputs_of(corpus_store, cid)]
    ans = plain_answer(inputs_of(corpus_store, cid))
    ans["inputs"][1]["actions"] = [{"target": "new:b", "action": "create"}]
    ans["inputs"][1]["relations"] = [{"relation": "adjust", "goal": "new:A", "follows": ins[0], "statement": "a and b"}]
    ans["targets"].append({"target": "new:b", "statement": "b", "criteria": [{"text": "b works"}]})
    ans["goals"] = [{"goal": "new:A", "main_target": "new:b", "main_cited": None}]
    _, stage = judge(corpus_store, tmp_path, cid, [entry(ans)])
    g = stage["goals"][0]
    assert g["members"] == ["t1", "t2"] and g["main_target"] is None and g["main_basis"] == "undetermined"
    assert ("changed", "g1", "main target t2 cites no input of the person (None): undetermined") in checks(stage)
    assert [e["statement"] for e in g["evolution"]] == ["do a", "a and b"]
    # cited by the person's input: main
    ans["goals"] = [{"goal": "new:A", "main_target": "new:b", "main_cited": ins[1]}]
    _, stage = judge(corpus_store, tmp_path, cid, [entry(ans)])
    g = stage["goals"][0]
    assert (g["main_target"], g["main_basis"], g["main_cited"]) == ("t2", "cited", ins[1])
    # an unknown id as the main target is left out
    ans["goals"] = [{"goal": "new:A", "main_target": "t9", "main_cited": ins[1]}]
    _, stage = judge(corpus_store, tmp_path, cid, [entry(ans)])
    assert stage["goals"][0]["main_target"] is None
    assert ("left_out", "g1", "main target 't9': no such target") in checks(stage)


def test_unknown_ids_in_actions_talks_and_criteria_are_left_out(corpus_store: Any, tmp_path: Path) -> None:
    cid = cid_with(corpus_store, 2)
    ins = [s.input for s in inputs_of(corpus_store, cid)]
    ans = plain_answer(inputs_of(corpus_store, cid))
    ans["inputs"][1]["actions"] = [{"target": "t9", "action": "refine"}, {"target": "new:a", "action": "launch"}]
    ans["targets"][0]["talks"] = ["k999", "a1"]
    ans["targets"][0]["criteria"].append({"id": "t1.c7", "text": "x", "dropped_by": ins[1]})
    ans["targets"].append({"target": "new:ghost", "statement": "nobody asked"})
    _, stage = judge(corpus_store, tmp_path, cid, [entry(ans)])
    got = checks(stage)
    assert ("left_out", ins[1], "refine on t9, a target no input before it created") in got
    assert ("left_out", ins[1], "action 'launch', which is no action") in got
    assert ("filled_in", ins[1], "no action of its answer was kept: its action is unknown") in got
    assert ("left_out", "t1", "talk 'k999': not a judged main talk") in got
    assert ("left_out", "t1", "talk 'a1': not a judged main talk") in got
    assert ("left_out", "t1", "criterion 't1.c7': t1 has no such criterion") in got
    assert ("left_out", "new:ghost", "a target new:ghost that no input creates") in got
    assert len(stage["targets"]) == 1 and stage["inputs"][1]["actions"][0]["action"] == "unknown"


def test_a_chunked_scan_changes_an_earlier_target(corpus_store: Any, tmp_path: Path) -> None:
    cid = cid_with(corpus_store, 6)
    steps = inputs_of(corpus_store, cid)
    ins = [s.input for s in steps]
    settings = {"judge.mode": "stream", "judge.chunk_bytes": 1}  # every talk is a call of its own
    # the calls: one per main talk with inputs
    from asz_core import window

    w = window.build(corpus_store, cid)
    talks = [k for k in w.judged if any(w.conv.step(s).input in ins for s in w.conv.talk(k).inputs)]
    own = [[s.input for s in steps if s.talk == k] for k in talks]
    first = plain_answer(steps[: len(own[0])])
    first["targets"][0]["criteria"] = [{"text": "a works"}, {"text": "a is fast"}]
    calls = [entry(first, call=1)]
    second = {"inputs": [{"input": i, "actions": [{"target": "t1", "action": "steer"}],
                          "relations": [{"relation": "adjust", "goal": "g1", "follows": own[0][-1], "statement": "a, slower"}]}
                         for i in own[1][:1]] +
                        [{"input": i, "actions": [{"action": "none"}], "relations": [{"relation": "unclear"}]} for i in own[1][1:]],
              "targets": [{"target": "t1", "statement": "the outcome a, changed",
                           "criteria": [{"id": "t1.c2", "dropped_by": own[1][0]}, {"text": "a is correct"}, {"text": "a works"}]}],
              "goals": []}
    calls.append(entry(second, call=2))
    for n, o in enumerate(own[2:], 3):
        calls.append(entry({"inputs": [{"input": i, "actions": [{"target": "t1", "action": "accept"}],
                                         "relations": [{"relation": "continue", "goal": "g1", "follows": own[0][0]}]} for i in o],
                            "targets": [], "goals": []}, call=n))
    res, stage = judge(corpus_store, tmp_path, cid, calls, settings=settings)
    assert stage["status"] == "complete", stage["note"]
    assert stage["run"]["mode"] == "stream" and stage["run"]["calls"] == len(talks)
    t = stage["targets"][0]
    assert t["statement"] == "the outcome a, changed"
    assert t["criteria"] == [
        {"id": "t1.c1", "text": "a works", "dropped": False, "dropped_by": None},
        {"id": "t1.c2", "text": "a is fast", "dropped": True, "dropped_by": own[1][0]},
        {"id": "t1.c3", "text": "a is correct", "dropped": False, "dropped_by": None},
    ]
    assert [e["input"] for e in stage["goals"][0]["evolution"]] == [ins[0], own[1][0]]
    # call 2 was given the catalogue call 1 left, and the goal with its last input
    p2 = (res.path / "calls/targets/2/1/prompt.md").read_text()
    assert '"id":"t1"' in p2 and '"statement":"the outcome a"' in p2
    assert f'"last_input":"{own[0][-1]}"' in p2 and f"call 2 of {len(talks)}" in p2
    # and the targets tool of call 2 served that catalogue
    state = json.loads((res.path / "calls/targets/2/state/stages/targets.json").read_text())
    assert state["targets"][0]["statement"] == "the outcome a"
    # a call is told which rows are context
    assert own[0][-1] in p2.split("### Context")[1].split("### Targets")[0]


def test_an_unreadable_answer_is_tried_again_and_both_attempts_count(corpus_store: Any, tmp_path: Path) -> None:
    cid = cid_with(corpus_store, 2)
    ins = inputs_of(corpus_store, cid)
    calls = [{**entry(), "attempt": 1, "raw": "I could not decide.", "requests": [{"usage": {"input": 7, "output": 3, "cache_read": 0, "cache_write": 0}}, {"usage": None}]},
             {**entry(plain_answer(ins)), "attempt": 2}]
    res, stage = judge(corpus_store, tmp_path, cid, calls)
    assert stage["status"] == "complete"
    r = stage["run"]
    assert (r["calls"], r["attempts"]) == (1, 2)
    assert r["consumed"]["requests"] == 2 and r["consumed"]["unknown_requests"] == 1
    assert r["consumed"]["input"] == 1007 and r["consumed"]["output"] == 103
    assert r["consumed"]["largest_input_side"] == 1050
    log = r["attempt_log"]
    assert [(a["attempt"], a["status"], a["error"]) for a in log] == [(1, "unreadable", "the answer holds no JSON object"), (2, "ok", None)]
    assert (res.path / "calls/targets/1/1/answer.txt").read_text() == "I could not decide."
    assert len((res.path / "calls/targets/1/1/requests.jsonl").read_text().splitlines()) == 2
    assert (res.path / "calls/targets/1/2/prompt.md").is_file()


def test_a_call_failing_twice_fails_the_stage_and_counts_what_was_never_read(corpus_store: Any, tmp_path: Path) -> None:
    cid = cid_with(corpus_store, 6)
    steps = inputs_of(corpus_store, cid)
    settings = {"judge.mode": "stream", "judge.chunk_bytes": 1}
    from asz_core import window

    w = window.build(corpus_store, cid)
    own = [[s.input for s in steps if s.talk == k] for k in w.judged]
    own = [o for o in own if o]
    first = plain_answer(steps[: len(own[0])])
    res, stage = judge(corpus_store, tmp_path, cid, [entry(first, call=1), {**entry(call=2), "raw": "{not json"}], settings=settings)
    assert stage["status"] == "failed"
    never = sum(len(o) for o in own[1:])
    assert stage["reason"] == (f"call 2 gave nothing readable twice (the answer holds no JSON object); {never} of "
                               f"{len(steps)} inputs were never read")
    assert stage["header"]["never_read"] == never and stage["targets"] == []
    assert stage["run"]["attempts"] == 3 and stage["run"]["calls"] == 2
    assert res.stages["targets"] == "failed" and (res.path / "close.json").is_file()
    assert not (res.path / "calls/targets/3").exists()


def test_a_call_with_no_answer_in_the_script_fails(corpus_store: Any, tmp_path: Path) -> None:
    cid = cid_with(corpus_store, 1)
    _, stage = judge(corpus_store, tmp_path, cid, [])
    assert stage["status"] == "failed"
    assert "has no answer for targets call 1 (attempt 2)" in stage["run"]["attempt_log"][1]["error"]


def test_a_disallowed_end_state_and_replacement(corpus_store: Any, tmp_path: Path) -> None:
    cid = cid_with(corpus_store, 2)
    ins = [s.input for s in inputs_of(corpus_store, cid)]
    ans = plain_answer(inputs_of(corpus_store, cid))
    ans["inputs"][1]["actions"] = [{"target": "new:b", "action": "create"}, {"target": "new:a", "action": "cancel"}]
    ans["targets"][0].update(state="replaced", replaced_by="new:b")
    ans["targets"].append({"target": "new:b", "statement": "b instead", "state": "finished"})
    _, stage = judge(corpus_store, tmp_path, cid, [entry(ans)])
    t1, t2 = stage["targets"]
    assert (t1["state"], t1["replaced_by"]) == ("replaced", "t2")
    assert t2["state"] == "open" and t2["goal"] == "g1"
    assert ("left_out", "t2", "end state 'finished', which is no end state") in checks(stage)
    assert stage["inputs"][1]["actions"] == [{"target": "t2", "action": "create", "note": None},
                                             {"target": "t1", "action": "cancel", "note": None}]
    assert ins[1] in t1["inputs"]


def test_an_input_for_two_goals_and_the_goal_of_its_targets(corpus_store: Any, tmp_path: Path) -> None:
    cid = cid_with(corpus_store, 2)
    ins = [s.input for s in inputs_of(corpus_store, cid)]
    ans = plain_answer(inputs_of(corpus_store, cid))
    ans["inputs"][1] = {"input": ins[1], "actions": [{"target": "new:b", "action": "create"}, {"target": "new:c", "action": "create"}],
                        "relations": [{"relation": "continue", "goal": "new:A", "follows": ins[0]},
                                      {"relation": "new", "goal": "new:C", "statement": "c"}]}
    ans["targets"] += [{"target": "new:b", "statement": "b", "goal": "new:A"}, {"target": "new:c", "statement": "c"}]
    _, stage = judge(corpus_store, tmp_path, cid, [entry(ans)])
    goals = {t["id"]: t["goal"] for t in stage["targets"]}
    assert goals == {"t1": "g1", "t2": "g1", "t3": None}
    assert stage["header"]["targets_in_no_goal"] == 1
    assert ("changed", "t3", f"created by {ins[1]}, which relates to g1, g2, and the answer does not say which goal it "
            "serves: it stays in no goal") in checks(stage)


def test_a_talk_larger_than_a_chunk_names_its_inputs_past_the_limit(corpus_store: Any, tmp_path: Path) -> None:
    from asz_core import window

    for row in corpus_store.conversations():
        steps = inputs_of(corpus_store, row.id)
        w = window.build(corpus_store, row.id)
        big = [k for k in w.judged if sum(1 for s in steps if s.talk == k) >= 2]
        if big:
            break
    else:
        pytest.skip("no talk with two inputs")
    cid, k = row.id, big[0]
    talks = [t for t in w.judged if any(s.talk == t for s in steps)]
    calls = []
    for n, t in enumerate(talks, 1):
        own = [s for s in steps if s.talk == t]
        ans = {"inputs": [{"input": s.input, "actions": [{"action": "none"}], "relations": [{"relation": "unclear"}]} for s in own],
               "targets": [], "goals": []}
        calls.append(entry(ans, call=n))
    res, stage = judge(corpus_store, tmp_path, cid, calls, settings={"judge.mode": "stream", "judge.chunk_bytes": 1})
    assert stage["status"] == "complete", stage["note"]
    n = talks.index(k) + 1
    own = [s.input for s in steps if s.talk == k]
    prompt = (res.path / f"calls/targets/{n}/1/prompt.md").read_text()
    assert (f"Talk {k} holds more inputs than fit one call: {len(own) - 1} of its inputs ({own[1]} to {own[-1]}) are past "
            "this call's limit and not listed below.") in prompt
    assert f'"input":"{own[0]}"' in prompt and f'"input":"{own[1]}"' not in prompt.split("### Your inputs")[1].split("### Context")[0]
    assert all(r["answered"] for r in stage["inputs"])


def test_a_window_gives_the_talks_before_it_as_context(corpus_store: Any, tmp_path: Path) -> None:
    from asz_core import window

    cid = cid_with(corpus_store, 6)
    w = window.build(corpus_store, cid)
    first, last = w.judged[2], w.judged[3]
    steps = inputs_of(corpus_store, cid)
    before = [s.input for s in steps if s.talk in w.judged[:2]]
    own = [s for s in steps if s.talk in (first, last)]
    ans = plain_answer(own)
    ans["inputs"].append({"input": before[0], "actions": [{"action": "none"}], "relations": [{"relation": "unclear"}]})
    res, stage = judge(corpus_store, tmp_path, cid, [entry(ans)], window=f"{first}..{last}")
    assert stage["window"] == f"{first}..{last}" and stage["header"]["inputs"] == len(own)
    assert [r["input"] for r in stage["inputs"]] == [s.input for s in own]
    assert checks(stage) == [("left_out", before[0], f"an answer for {before[0]}: it is not one of this call's inputs")]
    prompt = (res.path / "calls/targets/1/1/prompt.md").read_text()
    context = prompt.split("### Context: inputs before yours")[1].split("### Targets found so far")[0]
    assert all(f'"input":"{i}"' in context for i in before)
    ours = prompt.split("### Your inputs")[1].split("### Context")[0]
    assert not any(f'"input":"{i}"' in ours for i in before)
    run = json.loads((res.path / "run.json").read_text())
    assert run["window"] == f"{first}..{last}" and run["window_detail"]["before"]["count"] == 2


# --- answers that broke a rule the record sets (each was kept before asz checked it) ---------------

def _in(iid: str, acts: list[dict[str, Any]], *rels: dict[str, Any]) -> dict[str, Any]:
    return {"input": iid, "actions": acts, "relations": list(rels)}


def _a(target: str | None, action: str) -> dict[str, Any]:
    return {"target": target, "action": action}


def _r(relation: str, goal: str | None = None, follows: str | None = None, statement: str | None = None) -> dict[str, Any]:
    return {"relation": relation, "goal": goal, "follows": follows, "statement": statement}


def _talks_with_inputs(store: Any, n: int) -> tuple[str, list[Any], list[str]]:
    """A corpus conversation whose inputs lie in at least ``n`` judged talks: its id, input steps and
    those talks in order."""
    for row in store.conversations():
        ins = inputs_of(store, row.id)
        talks = list(dict.fromkeys(s.talk for s in ins))
        if len(talks) >= n:
            return row.id, ins, talks
    pytest.skip(f"no corpus conversation with inputs in {n} talks")


def _rest(ins: list[Any], done: int, goal: str) -> list[dict[str, Any]]:
    """The inputs after the first ``done``: no action, continuing ``goal`` after the one before."""
    return [_in(s.input, [_a(None, "none")], _r("continue", goal, ins[k - 1].input)) for k, s in enumerate(ins) if k >= done]


def test_a_talk_is_listed_for_a_target_only_when_one_of_its_inputs_acts_on_it(corpus_store: Any, tmp_path: Path) -> None:
    """t1 lists the talk whose only input created t2: left out; it lists the talk whose input
    accepted t1: kept (accept directs nothing, so only the list puts it there)."""
    cid, ins, talks = _talks_with_inputs(corpus_store, 3)
    first = [next(s for s in ins if s.talk == k) for k in talks[:3]]
    i0, i1, i2 = (s.input for s in first)
    idx = [ins.index(s) for s in first]
    ans = {"inputs": [], "targets": [
        {"target": "new:a", "statement": "a", "criteria": [{"text": "a works"}], "talks": [talks[1], talks[2]]},
        {"target": "new:b", "statement": "b", "criteria": [{"text": "b works"}]}], "goals": []}
    for k, s in enumerate(ins):
        if k == idx[0]:
            ans["inputs"].append(_in(i0, [_a("new:a", "create")], _r("new", "new:A", statement="a")))
        elif k == idx[1]:
            ans["inputs"].append(_in(i1, [_a("new:b", "create")], _r("adjust", "new:A", ins[k - 1].input, "a and b")))
        elif k == idx[2]:
            ans["inputs"].append(_in(i2, [_a("new:a", "accept")], _r("continue", "new:A", ins[k - 1].input)))
        else:
            ans["inputs"].append(_in(s.input, [_a(None, "none")], _r("continue", "new:A", ins[k - 1].input)))
    _, stage = judge(corpus_store, tmp_path, cid, [entry(ans)])
    t1, t2 = stage["targets"]
    assert t1["talks"] == [talks[0], talks[2]] and t2["talks"] == [talks[1]]
    assert checks(stage) == [("left_out", "t1", f"talk {talks[1]}: none of its inputs acts on t1")]


def test_a_criterion_is_dropped_only_by_an_input_after_it_that_acts_on_its_target(corpus_store: Any, tmp_path: Path) -> None:
    """A scan of one call per talk: drops by an input before the target existed, before the
    criterion was set, by the target's creator, by one that only accepts, and by no input read,
    each kept live; the one drop that holds is kept."""
    cid, ins, talks = _talks_with_inputs(corpus_store, 4)
    own = [[s.input for s in ins if s.talk == k] for k in talks]
    a, b, c, d = (o[0] for o in own[:4])

    def call(n: int, first: dict[str, Any], targets: list[dict[str, Any]]) -> dict[str, Any]:
        rest = [_in(i, [_a(None, "none")], _r("continue", "g1", first["input"])) for i in own[n - 1][1:]]
        return entry({"inputs": [first, *rest], "targets": targets, "goals": []}, call=n)

    calls = [
        call(1, _in(a, [_a("new:a", "create")], _r("new", "new:A", statement="a")),
             [{"target": "new:a", "statement": "a", "criteria": [{"text": "a works"}, {"text": "a is fast"}]}]),
        call(2, _in(b, [_a("new:b", "create"), _a("t1", "refine")], _r("adjust", "g1", own[0][-1], "a and b")),
             [{"target": "t1", "criteria": [{"id": "t1.c2", "dropped_by": b}]},                # holds
              {"target": "new:b", "statement": "b", "criteria": [{"text": "b works", "dropped_by": a}]}]),
        call(3, _in(c, [_a("t1", "refine")], _r("adjust", "g1", own[1][-1], "a, small")),
             [{"target": "t1", "criteria": [{"text": "a is small", "dropped_by": b}]}]),
        call(4, _in(d, [_a("t1", "accept")], _r("continue", "g1", own[2][-1])),
             [{"target": "t1", "criteria": [{"id": "t1.c1", "dropped_by": d}, {"id": "t1.c1", "dropped_by": a},
                                            {"id": "t1.c1", "dropped_by": "i9999"}]}]),
    ]
    for n in range(5, len(talks) + 1):
        calls.append(call(n, _in(own[n - 1][0], [_a(None, "none")], _r("continue", "g1", own[n - 2][-1])), []))
    _, stage = judge(corpus_store, tmp_path, cid, calls, settings={"judge.mode": "stream", "judge.chunk_bytes": 1})
    assert stage["run"]["calls"] == len(talks)
    t1, t2 = stage["targets"]
    assert [(x["id"], x["text"], x["dropped"], x["dropped_by"]) for x in t1["criteria"]] == [
        ("t1.c1", "a works", False, None), ("t1.c2", "a is fast", True, b), ("t1.c3", "a is small", False, None)]
    assert t2["criteria"] == [{"id": "t2.c1", "text": "b works", "dropped": False, "dropped_by": None}]
    assert checks(stage) == [
        ("left_out", "t2", f"a criterion dropped by {a}, which came before t2 existed ({b} created it): kept live"),
        ("left_out", "t1", f"a criterion dropped by {b}, which came before t1.c3 was set: kept live"),
        ("left_out", "t1", f"a criterion dropped by {d}, which refines, steers, corrects or cancels nothing of t1: kept live"),
        ("left_out", "t1", f"a criterion dropped by {a}, which created t1: kept live"),
        ("left_out", "t1", "a criterion dropped by 'i9999', which is no person's input read so far: kept live"),
    ]


def _two_goals(store: Any) -> tuple[str, list[str], dict[str, Any]]:
    """A conversation, its inputs and an answer: i0 creates a (goal A); i1 adds b to A; i2 starts
    goal B with c; i3 cancels b, returning to A; the others continue A."""
    cid = cid_with(store, 4)
    steps = inputs_of(store, cid)
    ins = [s.input for s in steps]
    return cid, ins, {"inputs": [
        _in(ins[0], [_a("new:a", "create")], _r("new", "new:A", statement="a")),
        _in(ins[1], [_a("new:b", "create")], _r("adjust", "new:A", ins[0], "a and b")),
        _in(ins[2], [_a("new:c", "create")], _r("new", "new:B", statement="c")),
        _in(ins[3], [_a("new:b", "cancel")], _r("return", "new:A", ins[1])),
        *_rest(steps, 4, "new:A"),
    ], "targets": [{"target": "new:a", "statement": "a"}, {"target": "new:b", "statement": "b"},
                   {"target": "new:c", "statement": "c"}], "goals": []}


@pytest.mark.parametrize(("main", "cited", "why"), [
    ("new:b", 2, "main target t2 cites {i2}, which is no input of g1: undetermined"),
    ("new:b", 3, "main target t2 cites {i3}, whose actions do not point to t2: undetermined"),
    ("new:a", 1, "main target t1 cites {i1}, whose actions do not point to t1: undetermined"),
])
def test_a_main_target_is_cited_by_an_input_of_its_goal_that_points_to_it(
        corpus_store: Any, tmp_path: Path, main: str, cited: int, why: str) -> None:
    cid, ins, ans = _two_goals(corpus_store)
    ans["goals"] = [{"goal": "new:A", "main_target": main, "main_cited": ins[cited]}]
    _, stage = judge(corpus_store, tmp_path, cid, [entry(ans)])
    g1 = stage["goals"][0]
    assert g1["members"] == ["t1", "t2"]
    assert (g1["main_target"], g1["main_basis"], g1["main_cited"]) == (None, "undetermined", None)
    assert ("changed", "g1", why.format(i1=ins[1], i2=ins[2], i3=ins[3])) in checks(stage)


def test_a_main_target_the_same_call_cancelled_is_not_main_and_one_that_holds_is(corpus_store: Any, tmp_path: Path) -> None:
    cid, ins, ans = _two_goals(corpus_store)
    ans["targets"][1]["state"] = "cancelled"
    ans["goals"] = [{"goal": "new:A", "main_target": "new:b", "main_cited": ins[1]}]
    _, stage = judge(corpus_store, tmp_path, cid, [entry(ans)])
    assert stage["goals"][0]["main_target"] is None
    assert ("changed", "g1", f"main target t2 cites {ins[1]}, but t2 was cancelled: undetermined") in checks(stage)
    ans["goals"] = [{"goal": "new:A", "main_target": "new:a", "main_cited": ins[0]}]
    _, stage = judge(corpus_store, tmp_path, cid, [entry(ans)])
    g1 = stage["goals"][0]
    assert (g1["main_target"], g1["main_basis"], g1["main_cited"]) == ("t1", "cited", ins[0])
    assert not [c for c in checks(stage) if c[1] == "g1"]


def test_a_main_target_of_another_goal_is_left_out(corpus_store: Any, tmp_path: Path) -> None:
    cid, ins, ans = _two_goals(corpus_store)
    ans["goals"] = [{"goal": "new:A", "main_target": "new:c", "main_cited": ins[2]}]
    _, stage = judge(corpus_store, tmp_path, cid, [entry(ans)])
    g1, g2 = stage["goals"]
    assert g1["main_target"] is None and g2["members"] == ["t3"] and g2["main_target"] == "t3"
    assert ("left_out", "g1", "main target t3, which is not a member of g1") in checks(stage)


def test_an_adjust_that_changes_no_target_of_its_goal_is_a_continue(corpus_store: Any, tmp_path: Path) -> None:
    """i1 only accepts t1; i3 refines c (goal B) while adjusting A: both are continues, and neither
    statement is a step of A's evolution; i4 refines t1: a real adjust."""
    cid = cid_with(corpus_store, 5)
    steps = inputs_of(corpus_store, cid)
    ins = [s.input for s in steps]
    ans = {"inputs": [
        _in(ins[0], [_a("new:a", "create")], _r("new", "new:A", statement="a")),
        _in(ins[1], [_a("new:a", "accept")], _r("adjust", "new:A", ins[0], "a, accepted")),
        _in(ins[2], [_a("new:c", "create")], _r("new", "new:B", statement="c")),
        _in(ins[3], [_a("new:c", "refine")], _r("adjust", "new:A", ins[1], "a, by c")),
        _in(ins[4], [_a("new:a", "refine")], _r("adjust", "new:A", ins[3], "a, sharper")),
        *_rest(steps, 5, "new:A"),
    ], "targets": [{"target": "new:a", "statement": "a"}, {"target": "new:c", "statement": "c"}], "goals": []}
    _, stage = judge(corpus_store, tmp_path, cid, [entry(ans)])
    rel = {r["input"]: r["relations"][0] for r in stage["inputs"]}
    assert rel[ins[1]] == {"relation": "continue", "goal": "g1", "follows": ins[0], "statement": None}
    assert rel[ins[3]] == {"relation": "continue", "goal": "g1", "follows": ins[1], "statement": None}
    assert rel[ins[4]] == {"relation": "adjust", "goal": "g1", "follows": ins[3], "statement": "a, sharper"}
    assert [(e["input"], e["relation"], e["statement"]) for e in stage["goals"][0]["evolution"]] == [
        (ins[0], "new", "a"), (ins[4], "adjust", "a, sharper")]
    why = "though it refines, steers, corrects, adds or cancels no target of g1: continue"
    assert ("changed", ins[1], f"adjust of g1, {why}") in checks(stage)
    assert ("changed", ins[3], f"adjust of g1, {why}") in checks(stage)
    assert not [c for c in checks(stage) if c[1] == ins[4]]


def test_a_return_right_after_an_input_that_acted_on_its_goal_is_a_continue(corpus_store: Any, tmp_path: Path) -> None:
    """i1 starts goal B but also accepts t1 of goal A: the return to A at i2 comes right after an
    input that acted on A, so it is a continue."""
    cid = cid_with(corpus_store, 3)
    steps = inputs_of(corpus_store, cid)
    ins = [s.input for s in steps]
    ans = {"inputs": [
        _in(ins[0], [_a("new:a", "create")], _r("new", "new:A", statement="a")),
        _in(ins[1], [_a("new:c", "create"), _a("new:a", "accept")], _r("new", "new:B", statement="c")),
        _in(ins[2], [_a("new:a", "refine")], _r("return", "new:A", ins[0])),
        *_rest(steps, 3, "new:A"),
    ], "targets": [{"target": "new:a", "statement": "a"}, {"target": "new:c", "statement": "c"}], "goals": []}
    _, stage = judge(corpus_store, tmp_path, cid, [entry(ans)])
    assert stage["inputs"][2]["relations"][0] == {"relation": "continue", "goal": "g1", "follows": ins[0], "statement": None}
    assert ("changed", ins[2], f"return to g1 right after {ins[1]}, which acted on t1 of g1: continue") in checks(stage)


def test_a_target_replaced_by_none_named_is_noted_as_an_unknown_replacement(corpus_store: Any, tmp_path: Path) -> None:
    cid = cid_with(corpus_store, 2)
    ans = plain_answer(inputs_of(corpus_store, cid))
    ans["targets"][0]["state"] = "replaced"
    _, stage = judge(corpus_store, tmp_path, cid, [entry(ans)])
    t1 = stage["targets"][0]
    assert (t1["state"], t1["replaced_by"]) == ("replaced", None)
    assert checks(stage) == [("unknown", "t1", "replaced, by a target the answer does not name: what replaced it is unknown")]
    assert stage["note"] == ["unknown: t1: replaced, by a target the answer does not name: what replaced it is unknown"]
    assert stage["status"] == "partial"
