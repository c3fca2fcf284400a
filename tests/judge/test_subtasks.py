"""The sub-task stage driven by the scripted evaluator over real conversations with sub-agents
(inline sidechains: fe5e1c67; agent files: efc5b615; a subagents/ folder: 258c7280, with a helper
stream no step started; Codex's spawned threads: 019dbc02), and the hand-made cases the corpus
lacks (a nested sub-agent, a background launch): answers built to break each rule, with asz's
exact response to each."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from asz_core import window
from asz_core.collect import collect
from asz_core.judge import runner
from asz_core.judge.evidence import Evidence

from .conftest import inputs_of
from .fixtures import background_example, nested_example

USAGE = {"input": 100, "output": 10, "cache_read": 0, "cache_write": 0}


def first_target(ins: list[Any]) -> dict[str, Any]:
    """A targets answer: the first input creates one target; every later input refines it."""
    return {"inputs": [{"input": s.input, "actions": [{"target": "new:a", "action": "create" if k == 0 else "refine"}],
                        "relations": [{"relation": "new", "goal": "new:G", "statement": "x"} if k == 0 else
                                      {"relation": "continue", "goal": "new:G", "follows": ins[k - 1].input}]}
                       for k, s in enumerate(ins)],
            "targets": [{"target": "new:a", "statement": "the work", "kind": "change", "criteria": [{"text": "done"}]}]}


def run(store: Any, tmp_path: Path, cid: str, targets: dict[str, Any], subtasks: Any = None, efficiency: Any = None,
        stages: tuple[str, ...] = ("targets", "subtasks", "efficiency"), settings: dict[str, Any] | None = None,
        extra: list[dict[str, Any]] | None = None) -> tuple[Path, dict[str, dict[str, Any]]]:
    """A run with a script answering each stage (a list: one answer per call, in order)."""
    calls: list[dict[str, Any]] = [{"stage": "targets", "answer": targets, "requests": [{"usage": USAGE}]}]
    for stage, answers in (("subtasks", subtasks), ("efficiency", efficiency)):
        for n, a in enumerate(answers if isinstance(answers, list) else [answers] if answers is not None else [], 1):
            calls.append({"stage": stage, "call": n, "answer": a, "requests": [{"usage": USAGE}]})
    calls += extra or []
    script = tmp_path / f"script-{len(list(tmp_path.glob('script-*')))}.json"
    script.write_text(json.dumps({"calls": calls}))
    res = runner.judge(runner.JudgeOptions(cid, evaluator=f"scripted:{script}", stages=stages, settings=settings or {}),
                       store=store)
    out = {}
    for s in ("targets", "subtasks", "efficiency"):
        p = res.path / "stages" / f"{s}.json"
        out[s] = json.loads(p.read_text())
    return res.path, out


def by_stream(stage: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {j["stream"]: j for j in stage["subtasks"]}


def checks(stage: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(c["kind"], c["where"], c["what"]) for c in stage["checks"]]


def cid_of(store: Any, prefix: str, streams: int | None = None) -> str:
    for r in store.conversations():
        if r.id.startswith(prefix) and (streams is None or len(window.build(store, r.id).conv.streams) == streams):
            return r.id
    pytest.skip(f"no corpus conversation {prefix}")


def own_steps(conv: Any, stream: str, kind: str | None = None) -> list[str]:
    return [s.id for s in conv.steps if s.stream == stream and (kind is None or s.kind == kind)]


def own_results(conv: Any, stream: str) -> list[str]:
    return [s.id for s in conv.steps if s.stream == stream and s.kind in ("tool", "agent_call") and s.status in ("returned", "failed")]


def plausible(conv: Any, streams: list[str]) -> dict[str, Any]:
    """Decisions a careful evaluator could give: each sub-task's outcome and report cite its first
    own tool result (those with none say unknown), used cites the giver's next step, the dispatch
    its starting step, the label its first model call (its input is the task it was given, not its work)."""
    out = []
    for a in streams:
        st = conv.stream(a)
        res = own_results(conv, a)
        start = st.started_by[0] if len(st.started_by) == 1 and st.unattributed is None else None
        later = None
        if start:
            s0 = conv.step(start)
            later = next((s.id for s in conv.steps if s.stream == s0.stream and s.seq > s0.records[-1]
                          and s.kind in ("model_call", "tool", "agent_call", "reply")), None)
        out.append({"subtasks": [a],
                    "outcome": {"value": "completed", "cites": res[:1]} if res else {"value": "unknown", "cites": []},
                    "report": {"value": "accurate", "cites": res[:1]} if res else {"value": "unknown"},
                    "used": {"value": "used", "cites": [later]} if later else {"value": "unknown"},
                    "dispatch": {"value": "right", "cites": [start]} if start else {"value": "unknown"},
                    "misled": None,
                    "label": {"label": "productive", "step": own_steps(conv, a, "model_call")[0], "why": None}})
    return {"decisions": out}


# --- every kind of sub-agent the corpus holds ---------------------------------------------------

@pytest.mark.parametrize("prefix,streams,kinds", [
    ("fe5e1c67", None, "inline sidechains"), ("efc5b615", None, "an agent file"),
    ("258c7280", None, "a subagents/ folder and a helper no step started"), ("019dbc02", 3, "Codex spawned threads")])
def test_every_sub_task_is_judged_once_on_its_own_steps(every_corpus_store: Any, tmp_path: Path, prefix: str,
                                                        streams: int | None, kinds: str) -> None:
    st = every_corpus_store
    cid = cid_of(st, prefix, streams)
    w = window.build(st, cid)
    conv = w.conv
    subs = [s.id for s in conv.streams if s.id != "m"]
    path, stages = run(st, tmp_path, cid, first_target(inputs_of(st, cid)), plausible(conv, subs), stages=("targets", "subtasks"),
                       settings={"judge.mode": "single"})
    sub = stages["subtasks"]
    assert sub["status"] == "complete", sub["note"]
    got = by_stream(sub)
    assert list(got) == subs  # each once, in landing order
    led_calls = {a: own_steps(conv, a, "model_call") for a in subs}
    for a in subs:
        j = got[a]
        res = own_results(conv, a)
        assert j["judged"] is True and j["label"]["label"] == "productive"
        assert j["outcome"]["value"] == ("completed" if res else "unknown")
        s0 = conv.stream(a)
        if s0.unattributed:
            assert (j["giver"], j["used"]["value"], j["dispatch"]["value"], j["targets"]) == (None, "unknown", "unknown", [])
        else:
            assert j["giver"] == "m" and j["dispatch"] == {"value": "right", "cites": list(s0.started_by), "reason": None,
                                                          "given": None}
            assert j["targets"] == ["t1"]
        assert j["calls"] == len(led_calls[a])
    # every sub-task's calls carry its label, and nothing else does
    assert sorted(r["step"] for r in sub["calls"]) == sorted(c for a in subs for c in led_calls[a])
    assert sub["header"]["subtasks"] == len(subs) and sub["header"]["decided"] == len(subs)
    # the navigation's sub-task rows carry the decisions now
    from asz_core.navigation import Navigator

    nav = Navigator(w, st, run_dir=path)
    rows = json.loads(nav.call("subtasks"))["subtasks"]
    assert [r["decision"]["label"] for r in rows] == ["productive"] * len(subs)
    assert rows[0]["decision"]["dispatch"] == got[subs[0]]["dispatch"]["value"]


# --- the example (a sub-agent a1 started at s20; it ran a Grep s29 and replied s31) ----------------

EXAMPLE_TARGETS = {
    "inputs": [
        {"input": "i1", "actions": [{"target": "new:r", "action": "create"}], "relations": [{"relation": "new", "goal": "new:G"}]},
        {"input": "i2", "actions": [{"target": "new:q", "action": "create"}],
         "relations": [{"relation": "continue", "goal": "new:G", "follows": "i1"}]},
        {"input": "i3", "actions": [{"target": "new:q", "action": "refine"}],
         "relations": [{"relation": "continue", "goal": "new:G", "follows": "i2"}]}],
    "targets": [{"target": "new:r", "statement": "r", "kind": "change", "criteria": [{"text": "r"}]},
                {"target": "new:q", "statement": "q", "kind": "question", "criteria": [{"text": "q"}]}]}


@pytest.fixture
def example(store: Any) -> Any:
    from .fixtures import EXAMPLE

    collect([EXAMPLE], store)
    return store


def decision(**kw: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"subtasks": ["a1"], "outcome": {"value": "completed", "cites": ["s29"]},
                         "report": {"value": "accurate", "cites": ["s29"]}, "used": {"value": "used", "cites": ["s26"]},
                         "dispatch": {"value": "right", "cites": ["s20"]}, "misled": None,
                         "label": {"label": "productive", "step": "s29", "why": None}}
    d.update(kw)
    return d


def one(example: Any, tmp_path: Path, d: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    _, stages = run(example, tmp_path, "5e1f0c2a", EXAMPLE_TARGETS, {"decisions": [d]}, stages=("targets", "subtasks"))
    return stages["subtasks"], by_stream(stages["subtasks"])["a1"]


def test_a_careful_answer_is_kept_whole(example: Any, tmp_path: Path) -> None:
    sub, a1 = one(example, tmp_path, decision())
    assert sub["status"] == "complete" and sub["checks"] == []
    assert (a1["outcome"]["value"], a1["report"]["value"], a1["used"]["value"], a1["dispatch"]["value"]) == (
        "completed", "accurate", "used", "right")
    assert (a1["report_step"], a1["report_back"], a1["started_by"], a1["targets"]) == ("s31", "s20", "s20", ["t2"])
    assert [r["step"] for r in sub["calls"]] == ["s28", "s30"] and {r["label"] for r in sub["calls"]} == {"productive"}


def test_an_outcome_or_report_resting_on_claims_falls_back_to_unknown(example: Any, tmp_path: Path) -> None:
    sub, a1 = one(example, tmp_path, decision(outcome={"value": "completed", "cites": ["s31", "s20"]},
                                              report={"value": "accurate", "cites": ["s24", "k3"]}))
    assert a1["outcome"]["value"] == "unknown" and a1["outcome"]["given"] == "completed"
    assert a1["outcome"]["reason"] == ("outcome completed needs a result of a1's own steps; nothing it cites shows it: "
                                       "s31: a reply of the sub-agent a1; s20: the Task call returned a sub-agent's report back")
    assert a1["report"]["value"] == "unknown" and "s24: the Grep call returned" in a1["report"]["reason"]
    assert sub["status"] == "partial" and len(sub["checks"]) == 2


def test_used_rests_on_a_later_step_of_the_giver(example: Any, tmp_path: Path) -> None:
    # the person's input typed mid-work, and the sub-agent's own reply, show nothing of use
    _, a1 = one(example, tmp_path, decision(used={"value": "used", "cites": ["s21", "s31", "s19"]}))
    assert a1["used"]["value"] == "unknown" and a1["used"]["given"] == "used"
    assert "a later step of m after s20" in a1["used"]["reason"]
    _, a1 = one(example, tmp_path, decision(used={"value": "unused", "cites": ["s21", "s23"]}))
    assert a1["used"] == {"value": "unused", "cites": ["s23"], "reason": None, "given": None}


def test_a_misdirected_dispatch_cites_the_giving_step_and_evidence_beyond_words(example: Any, tmp_path: Path) -> None:
    # i3 (s21), the person's words asking for the CSV export the task left out, shows it wrong
    sub, a1 = one(example, tmp_path, decision(dispatch={"value": "misdirected", "cites": ["s20", "s21"]}))
    assert a1["dispatch"] == {"value": "misdirected", "cites": ["s20", "s21"], "reason": None, "given": None}
    # it did what it was told: its work is the giver's misdirected delegation, charged to the main agent
    assert (a1["label"]["label"], a1["label"]["given"], a1["label"]["why"], a1["label"]["cause"]) == (
        "misdirected_delegation", "productive", "s20", "main_agent")
    assert ("changed", "a1", "its task was misdirected when given, and it did what it was told: its work is "
                             "misdirected_delegation, not productive") in checks(sub)
    assert {(r["label"], r["cause"]) for r in sub["calls"]} == {("misdirected_delegation", "main_agent")}
    # the agent's own words show nothing; nor does a citation without the giving step
    _, a1 = one(example, tmp_path, decision(dispatch={"value": "misdirected", "cites": ["s20", "s23"]}))
    assert a1["dispatch"]["value"] == "unknown" and "s23: a reply of the agent" in a1["dispatch"]["reason"]
    assert a1["label"]["label"] == "productive"
    _, a1 = one(example, tmp_path, decision(dispatch={"value": "redundant", "cites": ["s24"]}))
    assert a1["dispatch"]["value"] == "unknown" and "the step that gave the task (s20)" in a1["dispatch"]["reason"]
    # a delegation label with no such dispatch is left out: not reviewed
    sub, a1 = one(example, tmp_path, decision(label={"label": "redundant_delegation", "step": "s29", "why": "s24"}))
    assert a1["label"]["label"] == "not_reviewed" and a1["label"]["given"] == "redundant_delegation"
    assert sub["calls"] == []


def test_misled_needs_an_inaccurate_report_and_a_later_step_after_it_came_back(example: Any, tmp_path: Path) -> None:
    inaccurate = {"value": "inaccurate", "cites": ["s29"]}
    _, a1 = one(example, tmp_path, decision(report=inaccurate, misled="s26"))
    assert (a1["misled"], a1["charge"]) == ("s26", "subtask")
    _, a1 = one(example, tmp_path, decision(report=inaccurate, misled="s26", dispatch={"value": "misdirected", "cites": ["s20", "s21"]}))
    assert (a1["misled"], a1["charge"]) == ("s26", "giver")
    _, a1 = one(example, tmp_path, decision(report=inaccurate, misled="s26", dispatch={"value": "unknown"}))
    assert (a1["misled"], a1["charge"]) == ("s26", "unknown")
    # an accurate report misleads nobody; nor does one checked against nothing of its own
    _, a1 = one(example, tmp_path, decision(misled="s26"))
    assert (a1["misled"], a1["misled_given"]) == (None, "s26") and "the report is accurate" in a1["misled_reason"]
    _, a1 = one(example, tmp_path, decision(report={"value": "inaccurate", "cites": ["s31"]}, misled="s26"))
    assert a1["misled"] is None and a1["report"]["value"] == "unknown"
    # the input typed mid-work and a step before the report came back acted on nothing
    for step in ("s21", "s19", "s30"):
        _, a1 = one(example, tmp_path, decision(report=inaccurate, misled=step))
        assert a1["misled"] is None and a1["charge"] is None, step


def test_a_background_report_comes_back_with_its_notification(store: Any, tmp_path: Path) -> None:
    collect([background_example(tmp_path)], store)
    c = window.build(store, "5e1f0c2a").conv
    note = next(s for s in c.steps if s.ended == "a1")
    grep = next(s.id for s in c.steps if s.name == "Grep" and s.stream == "m")
    last = c.talk("k2").reply
    inacc = {"value": "inaccurate", "cites": [next(s.id for s in c.steps if s.stream == "a1" and s.name == "Grep")]}
    d = {"subtasks": ["a1"], "report": inacc, "dispatch": {"value": "right", "cites": list(c.stream("a1").started_by)}}
    for step, kept in ((grep, False), (last, True)):
        _, stages = run(store, tmp_path, "5e1f0c2a", EXAMPLE_TARGETS, {"decisions": [{**d, "misled": step}]},
                        stages=("targets", "subtasks"))
        a1 = by_stream(stages["subtasks"])["a1"]
        assert a1["report_back"] == note.id
        assert (a1["misled"] == step) is kept, (step, a1["misled_reason"])


def test_a_shared_decision_is_checked_for_each_sub_task_on_its_own(corpus_store: Any, tmp_path: Path) -> None:
    """fe5e1c67's five inline sub-agents, one decision for all, citing only a2's tool result."""
    cid = "fe5e1c67-53e7-4862-81ae-d0e013e3270b"
    conv = window.build(corpus_store, cid).conv
    r2 = own_results(conv, "a2")[0]
    shared = {"subtasks": ["a1", "a2", "a3", "a4", "a5"], "outcome": {"value": "completed", "cites": [r2]},
              "report": {"value": "accurate", "cites": [r2]}, "used": {"value": "unknown"},
              "dispatch": {"value": "unknown"}, "misled": None,
              "label": {"label": "productive", "step": own_steps(conv, "a2", "model_call")[0], "why": None}}
    _, stages = run(corpus_store, tmp_path, cid, first_target(inputs_of(corpus_store, cid)), {"decisions": [shared]},
                    stages=("targets", "subtasks"), settings={"judge.mode": "single"})
    got = by_stream(stages["subtasks"])
    assert got["a2"]["outcome"]["value"] == "completed" and got["a2"]["label"]["label"] == "productive"
    for a in ("a1", "a3", "a4", "a5"):
        assert got[a]["judged"] and got[a]["outcome"]["value"] == "unknown" and got[a]["report"]["value"] == "unknown"
        assert got[a]["label"]["label"] == "not_reviewed"  # its step is a2's, not its own
        assert sorted(got[a]["decided_with"]) == sorted({"a1", "a2", "a3", "a4", "a5"} - {a})
    assert {r["step"] for r in stages["subtasks"]["calls"]} == set(own_steps(conv, "a2", "model_call"))


def test_a_nested_sub_task_is_never_covered_by_its_parents_decision(store: Any, tmp_path: Path) -> None:
    """a1 (started at s20) started a2 at s33; a2's Grep s38 found nothing and its report s40 named a
    float anyway; a1 then replied on it at s35."""
    collect([nested_example(tmp_path)], store)
    c = window.build(store, "5e1f0c2a").conv
    assert c.stream("a2").started_by == ("s33",) and c.step("s33").stream == "a1"
    d1 = decision(outcome={"value": "completed", "cites": ["s29", "s38"]}, report={"value": "accurate", "cites": ["s38"]})
    _, stages = run(store, tmp_path, "5e1f0c2a", EXAMPLE_TARGETS, {"decisions": [d1]}, stages=("targets", "subtasks"))
    got = by_stream(stages["subtasks"])
    # a2's Grep is no result of a1's: a1's outcome keeps s29 only, its report (s35) checked by nothing of its own
    assert got["a1"]["outcome"]["cites"] == ["s29"] and got["a1"]["report"]["value"] == "unknown"
    assert got["a1"]["report_step"] == "s35"
    assert (got["a2"]["judged"], got["a2"]["label"]["label"], got["a2"]["giver"]) == (False, "not_reviewed", "a1")
    assert ("filled_in", "a2", "no decision covers it: every decision unknown, its work not reviewed") in checks(stages["subtasks"])
    # a2 judged on its own, and misleading a1: a1's work from s35 is misled_by_subtask, charged by a2's dispatch
    d2 = {"subtasks": ["a2"], "outcome": {"value": "failed", "cites": ["s38"]}, "report": {"value": "inaccurate", "cites": ["s38"]},
          "used": {"value": "used", "cites": ["s35"]}, "dispatch": {"value": "right", "cites": ["s33"]}, "misled": "s35",
          "label": {"label": "avoidable_error", "step": "s39", "why": "s38"}}
    d1 = decision(report={"value": "inaccurate", "cites": ["s29"]},
                  label={"label": "misled_by_subtask", "step": "s34", "why": "s35"})
    _, stages = run(store, tmp_path, "5e1f0c2a", EXAMPLE_TARGETS, {"decisions": [d1, d2]}, stages=("targets", "subtasks"))
    got = by_stream(stages["subtasks"])
    assert (got["a2"]["used"]["value"], got["a2"]["misled"], got["a2"]["charge"]) == ("used", "s35", "subtask")
    assert (got["a2"]["label"]["label"], got["a2"]["label"]["cause"]) == ("avoidable_error", "subtask")
    assert (got["a1"]["label"]["label"], got["a1"]["label"]["cause"]) == ("misled_by_subtask", "subtask")
    # a main-agent step acted on nothing a2 reported to it
    d2["misled"] = "s26"
    _, stages = run(store, tmp_path, "5e1f0c2a", EXAMPLE_TARGETS, {"decisions": [d1, d2]}, stages=("targets", "subtasks"))
    got = by_stream(stages["subtasks"])
    assert got["a2"]["misled"] is None and got["a1"]["label"]["label"] == "not_reviewed"


def test_an_unattributed_stream_is_judged_apart(corpus_store: Any, tmp_path: Path) -> None:
    """258c7280's a2 (a compaction helper no step started) is read and judged on its own; it has
    no giver, so used, its dispatch and misled claim nothing; its cost is no target's."""
    cid = "258c7280-ae70-4798-800f-63464d01a85d"
    conv = window.build(corpus_store, cid).conv
    d = {"subtasks": ["a2"], "outcome": {"value": "completed", "cites": ["s448"]}, "report": {"value": "accurate", "cites": []},
         "used": {"value": "used", "cites": ["s2"]}, "dispatch": {"value": "right", "cites": ["s2"]}, "misled": "s2",
         "label": {"label": "productive", "step": "s447", "why": None}}
    _, stages = run(corpus_store, tmp_path, cid, first_target(inputs_of(corpus_store, cid)), {"decisions": [d]},
                    stages=("targets", "subtasks"))
    a2 = by_stream(stages["subtasks"])["a2"]
    assert (a2["unattributed"], a2["root"], a2["giver"], a2["targets"]) == ("no starting step", "unattributed", None, [])
    assert a2["outcome"]["value"] == "unknown"  # its reply is its own words
    assert a2["used"]["reason"] == "no single step can be shown to have started a2: no agent gave it a task"
    assert a2["dispatch"]["value"] == "unknown" and a2["misled"] is None
    assert a2["label"]["label"] == "productive"
    assert [r["step"] for r in stages["subtasks"]["calls"]] == own_steps(conv, "a2", "model_call")
    # a1 had no decision: not reviewed
    assert by_stream(stages["subtasks"])["a1"]["judged"] is False


def test_labels_left_out(example: Any, tmp_path: Path) -> None:
    for label, why in (({"label": "productive", "step": "k3", "why": None}, "cites 'k3', which is no step of the work it labels"),
                       ({"label": "productive", "step": "s24", "why": None}, "cites 's24', which is no step of the work"),
                       ({"label": "productive", "why": None}, "cites no step"),
                       ({"label": "repeated_failure", "step": "s29", "why": None}, "gives no step that shows why"),
                       ({"label": "repeated_failure", "step": "s29", "why": "k2"}, "gives 'k2' for why"),
                       ({"label": "genius", "step": "s29"}, "'genius' is no label")):
        sub, a1 = one(example, tmp_path, decision(label=label))
        assert a1["label"]["label"] == "not_reviewed", label
        assert why in a1["label"]["reason"], (label, a1["label"]["reason"])
        assert sub["calls"] == [] and sub["status"] == "partial"
    _, a1 = one(example, tmp_path, decision(label={"label": "not_reviewed"}))
    assert a1["label"]["label"] == "not_reviewed" and a1["label"]["given"] is None


def test_ids_the_call_does_not_own_are_left_out_and_a_failed_call_judges_nothing(example: Any, tmp_path: Path) -> None:
    sub, _ = one(example, tmp_path, decision(subtasks=["a1", "a9"]))
    assert ("left_out", "a9", "an answer for a9: no such sub-task") in checks(sub)
    _, stages = run(example, tmp_path, "5e1f0c2a", EXAMPLE_TARGETS, None, stages=("targets", "subtasks"))
    sub = stages["subtasks"]
    assert sub["status"] == "failed" and "1 sub-tasks never judged" in sub["reason"]
    assert by_stream(sub)["a1"]["judged"] is False and sub["run"]["attempts"] == 2


def test_calls_run_side_by_side_cut_by_the_outlines_of_their_sub_tasks(corpus_store: Any, tmp_path: Path) -> None:
    """fe5e1c67's five sub-tasks with a reading budget whose three quarters hold about two outlines."""
    from asz_core.navigation import Navigator

    cid = "fe5e1c67-53e7-4862-81ae-d0e013e3270b"
    w = window.build(corpus_store, cid)
    nav = Navigator(w, corpus_store)
    outline = {a: nav.outline_bytes(w.conv.stream(a).talks[0]) for a in ("a1", "a2", "a3", "a4", "a5")}
    budget = (outline["a2"] + outline["a3"] + 10) * 4 // 3
    # plan as asz will: fill each call in order while the outlines fit
    limit, want, cur, used = budget * 3 // 4, [], [], 0
    for a in ("a1", "a2", "a3", "a4", "a5"):
        if cur and used + outline[a] > limit:
            want.append(cur)
            cur, used = [], 0
        cur.append(a)
        used += outline[a]
    want.append(cur)
    assert len(want) >= 3
    answers = [{"decisions": [decision(subtasks=[a], outcome={"value": "unknown"}, report={"value": "unknown"},
                                       used={"value": "unknown"}, dispatch={"value": "unknown"},
                                       label={"label": "productive", "step": own_steps(w.conv, a, "model_call")[0]}) for a in grp]}
               for grp in want]
    path, stages = run(corpus_store, tmp_path, cid, first_target(inputs_of(corpus_store, cid)), answers,
                       stages=("targets", "subtasks"), settings={"judge.read_bytes": budget, "judge.mode": "stream"})
    sub = stages["subtasks"]
    assert sub["status"] == "complete", sub["note"]
    assert sub["run"]["calls"] == len(want) and [j["call"] for j in sub["subtasks"]] == [
        n for n, grp in enumerate(want, 1) for _ in grp]
    for n, grp in enumerate(want, 1):
        prompt = (path / f"calls/subtasks/{n}/1/prompt.md").read_text()
        for a in ("a1", "a2", "a3", "a4", "a5"):
            assert (f'{{"id":"{a}"' in prompt) is (a in grp)


def test_a_sub_task_that_never_replied_gave_no_report(corpus_store: Any, tmp_path: Path) -> None:
    """b277cc60's a3 (agent-8d7ee089, an agent file): its task failed with an API error (s277), its
    only step after its prompt; it never replied, though its parent's Task result says completed."""
    cid = "b277cc60-6558-433f-92b8-95dd61c280e1"
    d = {"subtasks": ["a3"], "outcome": {"value": "failed", "cites": ["s277"]}, "report": {"value": "accurate", "cites": ["s277"]}}
    _, stages = run(corpus_store, tmp_path, cid, first_target(inputs_of(corpus_store, cid)), {"decisions": [d]},
                    stages=("targets", "subtasks"), settings={"judge.mode": "single"})
    a3 = by_stream(stages["subtasks"])["a3"]
    assert a3["outcome"] == {"value": "failed", "cites": ["s277"], "reason": None, "given": None}  # an API error of its own
    assert (a3["report_step"], a3["report"]["value"], a3["report"]["reason"]) == (
        None, "unknown", "a3 has no reply of its own: it gave no report to check")


def test_a_second_decision_for_one_sub_task_is_left_out(example: Any, tmp_path: Path) -> None:
    _, stages = run(example, tmp_path, "5e1f0c2a", EXAMPLE_TARGETS,
                    {"decisions": [decision(), decision(outcome={"value": "failed", "cites": ["s29"]})]},
                    stages=("targets", "subtasks"))
    sub = stages["subtasks"]
    assert by_stream(sub)["a1"]["outcome"]["value"] == "completed"
    assert ("left_out", "a1", "a second answer for the same sub-task") in checks(sub)


def test_a_label_citing_the_task_given_or_a_notice_is_left_out(example: Any, tmp_path: Path) -> None:
    """a1's stream holds its task (its input) before its work: a label citing it cites no step of
    its work, so its cost is not reviewed (spec: "Its work label cites a step of its own work")."""
    conv = window.build(example, "5e1f0c2a").conv
    task = next(s.id for s in conv.steps if s.stream == "a1" and s.kind == "input")
    sub, a1 = one(example, tmp_path, decision(label={"label": "productive", "step": task, "why": None}))
    assert (a1["label"]["label"], a1["label"]["given"]) == ("not_reviewed", "productive")
    assert sub["calls"] == []
    assert ("left_out", "a1", f"label productive cites {task!r}, which is no step of the work it labels: its cost is "
            "not reviewed") in checks(sub)


def test_a_foreground_sub_task_that_never_answered_gave_no_report_back(corpus_store: Any, tmp_path: Path) -> None:
    """b277cc60: the model call s5 started a3 (Task s7) and a4 (Task s8). a3's only step after its
    task is an API error of its own (s277): it never answered, and what s7 returned is the runtime's
    error text ("API Error: 400 ..."), though Claude Code marks the call returned. So no report of
    a3 came back, and no work is misled by it; a4 answered (its last reply), and its report came
    back with s8's result."""
    cid = "b277cc60-6558-433f-92b8-95dd61c280e1"
    conv = window.build(corpus_store, cid).conv
    assert (conv.step("s7").status, conv.step("s7").text[:15]) == ("returned", "API Error: 400 ")
    a4_last = [s.id for s in conv.steps if s.stream == "a4" and s.kind == "reply"][-1]
    ds = [{"subtasks": ["a3"], "outcome": {"value": "failed", "cites": ["s277"]}, "report": {"value": "unknown"},
           "misled": "s9"},
          {"subtasks": ["a4"], "outcome": {"value": "completed", "cites": ["s281"]},
           "report": {"value": "inaccurate", "cites": ["s281"]}, "misled": "s9"}]
    _, stages = run(corpus_store, tmp_path, cid, first_target(inputs_of(corpus_store, cid)), {"decisions": ds},
                    stages=("targets", "subtasks"), settings={"judge.mode": "single"})
    got = by_stream(stages["subtasks"])
    a3, a4 = got["a3"], got["a4"]
    assert (a3["report_step"], a3["report_back"], a3["misled"]) == (None, None, None)
    assert (a4["report_step"], a4["report_back"], a4["misled"], a4["charge"]) == (a4_last, "s8", "s9", "unknown")
    ev = Evidence(window.build(corpus_store, cid))
    assert ev.report_back("a3") is None and not ev.after_report(ev.cite("s9"), "a3")
    assert ev.after_report(ev.cite("s9"), "a4")


def test_a_dispatch_is_shown_wrong_by_an_agent_call_given_after_it_never_by_a_sibling(corpus_store: Any,
                                                                                      tmp_path: Path) -> None:
    """7273a00d: the model call s5 gave a1 its task (Task s7); s93 later gave a3, a4, a5 and a2 theirs at
    once (s94, s95, s96, s97); s195 then gave a6 its task (s196). a3's dispatch called misdirected
    citing a sibling given with it (s95) or before it (s7) shows nothing: unknown; citing s196, an
    agent call of the main agent after it, it holds."""
    cid = "7273a00d-405b-4bb9-8c9a-933b15b38e44"
    conv = window.build(corpus_store, cid).conv
    assert [conv.step(s).starts for s in ("s7", "s94", "s95", "s196")] == [("a1",), ("a3",), ("a4",), ("a6",)]
    a3_call = own_steps(conv, "a3", "model_call")[0]
    ds = [{"subtasks": ["a3"], "dispatch": {"value": "misdirected", "cites": ["s94", "s95", "s7"]},
           "label": {"label": "productive", "step": a3_call}},
          {"subtasks": ["a4"], "dispatch": {"value": "redundant", "cites": ["s95", "s196"]},
           "label": {"label": "productive", "step": own_steps(conv, "a4", "model_call")[0]}}]
    _, stages = run(corpus_store, tmp_path, cid, first_target(inputs_of(corpus_store, cid)), {"decisions": ds},
                    stages=("targets", "subtasks"), settings={"judge.mode": "single"})
    got = by_stream(stages["subtasks"])
    a3, a4 = got["a3"], got["a4"]
    assert (a3["dispatch"]["value"], a3["dispatch"]["given"], a3["label"]["label"]) == ("unknown", "misdirected", "productive")
    assert a3["dispatch"]["reason"] == (
        "dispatch misdirected needs what shows the task wrong besides the agent's words (a tool result, an error, the "
        "person's words, another agent call of m given after s94, not with it); nothing it cites shows it: s95: the Task call returned a sub-agent's "
        "report back; s7: the Task call returned a sub-agent's report back")
    assert (a4["dispatch"]["value"], a4["dispatch"]["cites"]) == ("redundant", ["s95", "s196"])
    assert (a4["label"]["label"], a4["label"]["cause"]) == ("redundant_delegation", "main_agent")


def test_a_work_label_citing_a_sub_tasks_task_or_a_runtime_notice_is_left_out(corpus_store: Any, tmp_path: Path) -> None:
    """258c7280: a1's stream opens with its task (the input s435, the Task s343's prompt), then its
    work (the model call s436, ...); the compaction helper a2's stream holds two hook notices (s444,
    s445) and its task (s446) before its work (s447, s448). A label citing the task or a notice cites
    no step of the sub-task's work: left out, its cost not reviewed; one citing its model call holds."""
    cid = "258c7280-ae70-4798-800f-63464d01a85d"
    conv = window.build(corpus_store, cid).conv
    assert [(conv.step(s).stream, conv.step(s).kind) for s in ("s435", "s436", "s444", "s446", "s447")] == [
        ("a1", "input"), ("a1", "model_call"), ("a2", "notice"), ("a2", "input"), ("a2", "model_call")]
    tgt = first_target(inputs_of(corpus_store, cid))
    for a1_step, a2_step in (("s435", "s444"), ("s436", "s446")):
        ds = [{"subtasks": ["a1"], "label": {"label": "productive", "step": a1_step}},
              {"subtasks": ["a2"], "label": {"label": "redundant_work", "step": a2_step, "why": "s448"}}]
        _, stages = run(corpus_store, tmp_path, cid, tgt, {"decisions": ds}, stages=("targets", "subtasks"),
                        settings={"judge.mode": "single"})
        sub = stages["subtasks"]
        got = {a: (j["label"]["label"], j["label"]["given"]) for a, j in by_stream(sub).items()}
        if a1_step == "s435":  # the task and a hook notice: both left out, nothing priced
            assert got == {"a1": ("not_reviewed", "productive"), "a2": ("not_reviewed", "redundant_work")}
            assert sub["calls"] == []
            assert ("left_out", "a2", "label redundant_work cites 's444', which is no step of the work it labels: its "
                    "cost is not reviewed") in checks(sub)
        else:  # a1's model call holds; a2's task is left out
            assert got == {"a1": ("productive", None), "a2": ("not_reviewed", "redundant_work")}
            assert {r["step"] for r in sub["calls"]} == set(own_steps(conv, "a1", "model_call"))
            assert ("left_out", "a2", "label redundant_work cites 's446', which is no step of the work it labels: its "
                    "cost is not reviewed") in checks(sub)


def test_a_sub_task_cut_off_after_its_last_reply_gave_no_report_to_check(corpus_store: Any, tmp_path: Path) -> None:
    """42f9655b (three sub-agent files exported without their parent): a1 replied (s39), ran a tool
    (s40) and was then cut off by an API error of its own (s41, "Limit reached ..."): it never
    answered, so its last reply is no report, and a report found inaccurate claims nothing."""
    cid = "42f9655b-5d81-497b-989e-e4dee62b1b95"
    conv = window.build(corpus_store, cid).conv
    assert [(s.id, s.kind, s.notice) for s in conv.steps if s.stream == "a1"][-3:] == [
        ("s39", "reply", None), ("s40", "tool", None), ("s41", "notice", "api_error")]
    d = {"subtasks": ["a1"], "outcome": {"value": "failed", "cites": ["s41"]}, "report": {"value": "inaccurate", "cites": ["s40"]},
         "label": {"label": "productive", "step": "s38"}}
    _, stages = run(corpus_store, tmp_path, cid, {"inputs": [], "targets": []}, {"decisions": [d]},
                    stages=("targets", "subtasks"), settings={"judge.mode": "single"})
    a1 = by_stream(stages["subtasks"])["a1"]
    assert a1["report_step"] is None and a1["outcome"]["value"] == "failed"
    assert a1["report"] == {"value": "unknown", "cites": [], "given": "inaccurate", "reason":
                            "a1 was cut off after its last reply (an interruption or API error of its own): it never "
                            "answered, and gave no report to check"}
