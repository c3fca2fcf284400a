"""The rules of the close that turn judgments into scores and costs (spec: "How each target
ended", "The final statement"), each with a case that goes wrong when its rule is broken: on the
corpus conversation fe5e1c67 (two main talks, five sub-agents; k7's calls split between the app,
t1, and CLAUDE.md, t2) and the Codex conversation 019fc8be (two calls unpriced), and small made
ones where the corpus has no case. Expected figures are worked out here from the record (the
ledger's calls and their places), never from the close's own code."""

from __future__ import annotations

import copy
import json
import shutil
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from asz_core.convert import dumps
from asz_core.judge import runner
from asz_core.judge.close import close_file, operation_shares

from tests.conftest import CORPUS
from .conftest import entry
from .test_close import ACHIEVEMENT, SESSION, conv_store, criterion, targets_answer  # noqa: F401 - the fixture

CODEX = CORPUS / "codex/jazzyalex__agent-sessions/Resources/Fixtures/stage0/agents/codex/small.jsonl"


def run_files(store: Any, tmp_path: Path, cid: str, targets: dict[str, Any], **files: dict[str, Any]) -> dict[str, Any]:
    """The targets stage run with ``targets`` as its answer, then the given stage files put in
    place of the skipped ones and the run closed again: its final statement."""
    script = tmp_path / f"script-{len(list(tmp_path.glob('script-*')))}.json"
    script.write_text(json.dumps({"calls": [entry(targets)]}))
    res = runner.judge(runner.JudgeOptions(cid, evaluator=f"scripted:{script}", stages=("targets",)), store=store)
    tf = json.loads((res.path / "stages/targets.json").read_text())
    assert tf["status"] == "complete", tf["note"]
    copy_ = res.path.parent / (res.path.name + "-with")
    shutil.copytree(res.path, copy_)
    for name, body in files.items():
        sf = json.loads((copy_ / "stages" / f"{name}.json").read_text())
        sf.update(status="complete", reason=None, **body)
        (copy_ / "stages" / f"{name}.json").write_text(json.dumps(sf))
    st = json.loads(dumps(close_file(copy_, store)))["statement"]
    for name in files:
        assert st["basis"][name] == "used", st["basis"][name]
    return st  # type: ignore[no-any-return]


def round_(rid: str, trigger: str, end: str, kind: str = "tool", cause: str = "agent_error") -> dict[str, Any]:
    """A round of rework as the achievement stage writes it, from its trigger to its redo's last step."""
    return {"id": rid, "attempt": [trigger], "trigger": kind, "trigger_step": trigger, "redo": [end], "cause": cause,
            "start": trigger, "end": end}


def ach(**changed: dict[str, Any]) -> dict[str, Any]:
    """fe5e1c67's achievement records (test_close's), with some of t1's and t2's fields changed."""
    a = copy.deepcopy(ACHIEVEMENT)
    for t in a["achievement"]:
        t.update(changed.get(t["target"], {}))
    return a


def ledger_calls(store: Any, cid: str) -> tuple[Any, list[Any]]:
    from asz_core import ledger, window

    w = window.build(store, cid)
    return w.conv, ledger.build(w.conv, ledger.load_prices(None)).calls


def calls_between(store: Any, a: str, b: str) -> set[str]:
    """The model calls recorded from step ``a`` to step ``b`` (t1's alone there: k1 and its sub-agents)."""
    conv, calls = ledger_calls(store, SESSION)
    lo, hi = conv.step(a).seq, conv.step(b).seq
    return {c.step for c in calls if lo <= conv.step(c.step).seq <= hi}


# --- scores ------------------------------------------------------------------------------------------

def test_rework_never_lowers_a_score(conv_store: Any, tmp_path: Path) -> None:
    # t2 (CLAUDE.md) achieved, with a round of rework over its own calls in k7: its scores stay 1.
    st = run_files(conv_store, tmp_path, SESSION, targets_answer(), achievement=ach(t2={"rework": [round_("t2.r1", "s438", "s439")]}))
    t2 = st["targets"][1]["outcome"]
    assert [r["id"] for r in t2["rework"]] == ["t2.r1"] and t2["rework_cost"]["calls"] == 1
    assert (t2["record_score"], t2["final_score"], t2["class"], t2["level"]) == ("1", "1", "achieved", "achieved")
    plain = run_files(conv_store, tmp_path, SESSION, targets_answer(), achievement=ach())
    assert st["scores"]["achievement"] == plain["scores"]["achievement"]


def test_a_call_two_rounds_hold_is_counted_once(conv_store: Any, tmp_path: Path) -> None:
    r1, r2 = round_("t1.r1", "s223", "s300"), round_("t1.r2", "s250", "s431")
    st = run_files(conv_store, tmp_path, SESSION, targets_answer(), achievement=ach(t1={"rework": [r1, r2]}))
    o = st["targets"][0]["outcome"]
    first, both = calls_between(conv_store, "s223", "s300"), calls_between(conv_store, "s223", "s431")
    assert len(first) < len(both)  # the rounds overlap from s250 to s300, and the second runs on
    assert [r["cost"]["calls"] for r in o["rework"]] == [len(first), len(both - first)]
    assert o["rework_cost"]["calls"] == len(both)
    _, calls = ledger_calls(conv_store, SESSION)
    tokens = sum(sum(getattr(c.usage, k) or 0 for k in ("input", "output", "cache_read", "cache_write"))
                 for c in calls if c.step in both)
    assert o["rework_cost"]["tokens"] == tokens


def test_the_money_or_tokens_choice_needs_every_call_priced(tmp_path: Path, store: Any) -> None:
    """019fc8be (Codex): five calls, s15 and s34 with no price; k1 (i1) is t1's, k2 (i2) t2's."""
    if not CODEX.is_file():
        pytest.skip(f"corpus not found at {CODEX}")
    from asz_core.collect import collect

    collect([CODEX], store)
    cid = "019fc8be"
    conv, calls = ledger_calls(store, cid)
    priced = [c.step for c in calls if c.price.money is not None]
    assert priced and len(priced) < len(calls)  # some priced, some not
    targets = {"inputs": [
        {"input": "i1", "actions": [{"target": "new:a", "action": "create"}], "relations": [{"relation": "new", "goal": "new:A", "statement": "a"}]},
        {"input": "i2", "actions": [{"target": "new:b", "action": "create"}], "relations": [{"relation": "new", "goal": "new:B", "statement": "b"}]}],
        "targets": [{"target": "new:a", "statement": "a", "kind": "change", "criteria": [{"text": "a"}], "talks": ["k1"]},
                    {"target": "new:b", "statement": "b", "kind": "change", "criteria": [{"text": "b"}], "talks": ["k2"]}],
        "goals": []}
    a = {"achievement": [{"target": "t1", "judged": True, "criteria": [criterion("t1.c1", "met", "s3")]},
                         {"target": "t2", "judged": True, "criteria": [criterion("t2.c1", "not_met", "s23")]}]}
    st = run_files(store, tmp_path, cid, targets, achievement=a, efficiency={"calls": [{"step": c.step, "label": "productive"} for c in calls]})
    sc = st["scores"]
    assert {s["unit"] for s in sc.values()} == {"tokens"}
    # weighed by tokens: k1's known tokens against k2's (none known)
    k1 = sum(sum(getattr(c.usage, k) or 0 for k in ("input", "output", "cache_read", "cache_write"))
             for c in calls if conv.step(c.step).talk == "k1")
    assert k1 > 0 and sc["achievement"]["value"] == "1" and sc["efficiency"]["value"] == "1"


# --- contradictions, undoings, classes --------------------------------------------------------------

def test_met_unknown_and_the_level_from_the_states(conv_store: Any, tmp_path: Path) -> None:
    t1 = {"level": "achieved", "criteria": [criterion("t1.c1", "met", "s432"), criterion("t1.c2", "unknown")],
          "contradictions": []}
    st = run_files(conv_store, tmp_path, SESSION, targets_answer(), achievement=ach(t1=t1))
    o = st["targets"][0]["outcome"]
    # one met, one unknown: unverified (the file's "achieved" is not taken), record 1/2
    assert (o["met"], o["unknown"], o["live"], o["level"], o["record_score"]) == (1, 1, 2, "unverified", "1/2")


def test_contradicted_comes_before_reverted_for_a_target_and_a_goal(conv_store: Any, tmp_path: Path) -> None:
    # t2 delivered CLAUDE.md at s438 and the reply s440 withdrew it: reverted; t1 is contradicted.
    undo = {"id": "t2.e2", "event": "undone", "concerns": "file", "at": "s440", "what": None, "cites": ["s440"]}
    t2 = {"events": [ACHIEVEMENT["achievement"][1]["events"][0], undo]}
    st = run_files(conv_store, tmp_path, SESSION, targets_answer(), achievement=ach(t2=t2))
    assert [t["outcome"]["class"] for t in st["targets"]] == ["contradicted", "reverted"]
    assert st["goals"][0]["class"] == "contradicted"
    assert st["targets"][1]["outcome"]["final_score"] == "0"  # an undoing of the whole result
    # the other way round: t1 reverted, t2 contradicted: still contradicted first
    t1 = {"events": [ACHIEVEMENT["achievement"][0]["events"][0],
                     {"id": "t1.e2", "event": "undone", "concerns": "file", "at": "s436", "what": None, "cites": ["s436"]}],
          "contradictions": []}
    t2 = {"contradictions": [{"delivery": "t2.e1", "disproves": "conclusion", "criteria": [], "cites": ["s439"], "what": None,
                              "applies": True}]}
    st = run_files(conv_store, tmp_path, SESSION, targets_answer(), achievement=ach(t1=t1, t2=t2))
    assert [t["outcome"]["class"] for t in st["targets"]] == ["reverted", "contradicted"]
    assert st["goals"][0]["class"] == "contradicted"


def test_a_contradiction_is_applied_once_however_often_it_is_named(conv_store: Any, tmp_path: Path) -> None:
    twice = [{"delivery": "t1.e1", "disproves": "criteria", "criteria": ["t1.c1", "t1.c1"], "cites": ["s438"], "what": None,
              "applies": True},
             {"delivery": "t1.e1", "disproves": "criteria", "criteria": ["t1.c1"], "cites": ["s224"], "what": None, "applies": True}]
    t1 = {"criteria": [criterion("t1.c1", "met", "s432"), criterion("t1.c2", "met", "s432")], "contradictions": twice}
    st = run_files(conv_store, tmp_path, SESSION, targets_answer(), achievement=ach(t1=t1))
    o = st["targets"][0]["outcome"]
    assert (o["record_score"], o["final_score"], o["class"]) == ("1", "1/2", "contradicted")
    assert [c["final"] for c in st["targets"][0]["criteria"]] == ["not_met", "met"]


# --- findings ------------------------------------------------------------------------------------------

def test_a_correction_that_began_a_round_is_no_finding_of_its_own(conv_store: Any, tmp_path: Path) -> None:
    # i7 (s435) corrects t1: a finding at s435, unless a round of rework began there.
    st = run_files(conv_store, tmp_path, SESSION, targets_answer(), achievement=ach(t1={"rework": []}))
    assert [(f["kind"], f["anchor"]) for f in st["findings"] if f["target"] == "t1" and f["kind"] in ("correction", "rework")] == [
        ("correction", "s435")]
    r = round_("t1.r1", "s435", "s439", "person", "requirement_change")
    st = run_files(conv_store, tmp_path, SESSION, targets_answer(), achievement=ach(t1={"rework": [r]}))
    assert [(f["kind"], f["anchor"]) for f in st["findings"] if f["target"] == "t1" and f["kind"] in ("correction", "rework")] == [
        ("rework", "s435")]
    assert st["targets"][0]["corrections"] == ["i7"]  # still listed as a correction


# --- goals -------------------------------------------------------------------------------------------

def test_a_goals_main_target_gives_its_own_final_score_not_the_mean(conv_store: Any, tmp_path: Path) -> None:
    tg = targets_answer()
    tg["targets"][1]["state"] = "cancelled"  # one member still wanted: it is the main target
    tg["goals"] = [{"goal": "new:A", "main_target": "new:app", "main_cited": "i1"}]
    st = run_files(conv_store, tmp_path, SESSION, tg, achievement=ach())
    [g] = st["goals"]
    assert g["main_target"] == "t1" and g["main_final_score"] == "0" and g["mean_final_score"] == "0"
    from asz_core.judge.goal_outcome import goal_statement

    # made: main t1 final 0, t2 final 1: the main's 0, the mean 1/2
    g = goal_statement("g1", ["t1", "t2"], "t1", {"t1": "open", "t2": "open"}, {"t1": "contradicted", "t2": "achieved"},
                       {"t1": Fraction(0), "t2": Fraction(1)}, {}, True)
    assert (g.main_final_score, g.mean_final_score, g.class_) == ("0", "1/2", "contradicted")


# --- file operations -----------------------------------------------------------------------------------

def test_each_targets_file_operations_with_its_share(conv_store: Any, tmp_path: Path) -> None:
    # The 43 edits of k1's sub-agents (o1-o43) are t1's; o44, CLAUDE.md written at s438, was asked for
    # by s436, a call i7 directed to both targets: each holds it at 1/2.
    st = run_files(conv_store, tmp_path, SESSION, targets_answer())
    t1, t2 = st["targets"]
    assert [(o["id"], o["share"]) for o in t1["operations"]] == [(f"o{n}", "1") for n in range(1, 44)] + [("o44", "1/2")]
    assert [(o["id"], o["step"], o["share"]) for o in t2["operations"]] == [("o44", "s438", "1/2")]
    assert st["unassigned_operations"] == []
    # With i1 directing nothing, k1 is claimed by no target: its calls and their 43 operations are no target's.
    tg = targets_answer()
    tg["inputs"][0] = {"input": "i1", "actions": [{"target": None, "action": "none"}], "relations": [{"relation": "unclear"}]}
    tg["inputs"][1]["actions"][1]["action"] = "create"
    tg["inputs"][1]["relations"] = [{"relation": "new", "goal": "new:A", "statement": "a TODO app, with CLAUDE.md"}]
    tg["targets"][0]["talks"] = ["k7"]
    st = run_files(conv_store, tmp_path, SESSION, tg)
    assert st["unassigned_operations"] == [f"o{n}" for n in range(1, 44)]
    assert [o["id"] for o in st["targets"][0]["operations"]] == ["o44"]


def test_a_step_no_model_call_asked_for_belongs_to_the_targets_of_its_talk() -> None:
    """The corpus has no such operation (every one was asked for by a call): made ones."""

    class Op:
        def __init__(self, oid: str, step: str, talk: str) -> None:
            self.id, self.step, self.talk = oid, step, talk

    ops = [Op("o1", "s3", "k1"), Op("o2", "s9", "k2"), Op("o3", "s12", "k2"), Op("o4", "s20", "k3")]
    asked = {"s3": "s2", "s9": None, "s12": "s11", "s20": None}
    shares = {"s2": {"t1": Fraction(1)}, "s11": {"t1": Fraction(1, 2), "t2": Fraction(1, 2)}}
    claims = {"k1": ["t1"], "k2": ["t1", "t2", "t3"], "k3": []}
    got = operation_shares(ops, asked, shares, lambda o: claims[o.talk])
    assert got == {"o1": {"t1": 1}, "o2": {"t1": Fraction(1, 3), "t2": Fraction(1, 3), "t3": Fraction(1, 3)},
                   "o3": {"t1": Fraction(1, 2), "t2": Fraction(1, 2)}}  # o4: no target claims k3


def test_met_and_unknown_count_the_states_read_not_captured_among_the_unknown(conv_store: Any, tmp_path: Path) -> None:
    # t1 with five live criteria: c1 met (and contradicted), c2 not captured, c3 unknown, c4 met,
    # c5 not met. A reader of the spec: met counts the states the stage gave (2: c1 and c4, the
    # contradiction changes the final score, not the record), unknown the unknown and not captured
    # ones (2, not the 3 that are not met), the level partial (met and not met both there), the
    # record 2/5 and the final 1/5 (c1 counted not met once contradicted).
    tg = targets_answer()
    tg["targets"][0]["criteria"] = [{"text": f"criterion {n}"} for n in range(1, 6)]
    t1 = {"level": "achieved", "contradictions": [{"delivery": "t1.e1", "disproves": "criteria", "criteria": ["t1.c1"],
                                                   "cites": ["s438"], "what": None, "applies": True}],
          "criteria": [criterion("t1.c1", "met", "s432"), criterion("t1.c2", "not_captured"), criterion("t1.c3", "unknown"),
                       criterion("t1.c4", "met", "s432"), criterion("t1.c5", "not_met", "s224")]}
    st = run_files(conv_store, tmp_path, SESSION, tg, achievement=ach(t1=t1))
    o = st["targets"][0]["outcome"]
    assert (o["met"], o["unknown"], o["live"], o["level"], o["record_score"], o["final_score"], o["class"]) == (
        2, 2, 5, "partial", "2/5", "1/5", "contradicted")
    # met and not captured only: not every criterion met, none not met: unverified, never achieved
    t1 = {"level": "achieved", "contradictions": [],
          "criteria": [criterion("t1.c1", "met", "s432"), criterion("t1.c2", "not_captured")]}
    st = run_files(conv_store, tmp_path, SESSION, targets_answer(), achievement=ach(t1=t1))
    o = st["targets"][0]["outcome"]
    assert (o["met"], o["unknown"], o["level"], o["record_score"], o["class"]) == (1, 1, "unverified", "1/2", "unverified")


def test_an_operation_at_a_step_no_model_call_asked_for_goes_to_its_talks_targets(tmp_path: Path, store: Any,
                                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """019fc8be (Codex): s27, a summary at k2's start, is a step no model call asked for (none of
    k2 came before it). No corpus operation sits on such a step, so one is made there, beside the
    conversation's own (none). i2 creates two targets in k2: the made operation is each one's at 1/2
    (the targets of its talk, split equally), and no target's of k1; none is left unassigned."""
    if not CODEX.is_file():
        pytest.skip(f"corpus not found at {CODEX}")
    from asz_core import operations, window
    from asz_core.collect import collect
    from asz_core.judge.evidence import asking_calls

    collect([CODEX], store)
    cid = "019fc8be"
    conv = window.build(store, cid).conv
    s27 = conv.step("s27")
    assert (s27.kind, s27.talk) == ("summary", "k2") and asking_calls(conv.steps)["s27"] is None
    assert not [s for s in conv.talk("k2").steps if conv.step(s).kind == "model_call" and conv.step(s).seq < s27.seq]

    real = operations.of_conversation
    assert list(real(conv, None)) == []  # the conversation's own operations: none

    class Op:  # a file written at s27, as an operation of the record says it
        id, step, talk, stream, seq = "o1", "s27", "k2", "m", s27.seq
        shows, status, path, tool = "request", "returned", "notes.md", "apply_patch"

    monkeypatch.setattr(operations, "of_conversation", lambda c, r=None: [Op()] if c.id.startswith(cid) else real(c, r))
    targets = {"inputs": [
        {"input": "i1", "actions": [{"target": "new:a", "action": "create"}], "relations": [{"relation": "new", "goal": "new:A", "statement": "a"}]},
        {"input": "i2", "actions": [{"target": "new:b", "action": "create"}, {"target": "new:c", "action": "create"}],
         "relations": [{"relation": "new", "goal": "new:B", "statement": "b and c"}]}],
        "targets": [{"target": "new:a", "statement": "a", "kind": "change", "criteria": [{"text": "a"}], "talks": ["k1"]},
                    {"target": "new:b", "statement": "b", "kind": "change", "criteria": [{"text": "b"}], "talks": ["k2"]},
                    {"target": "new:c", "statement": "c", "kind": "change", "criteria": [{"text": "c"}], "talks": ["k2"]}],
        "goals": []}
    st = run_files(store, tmp_path, cid, targets)
    ops = {t["id"]: [(o["id"], o["step"], o["share"]) for o in t["operations"]] for t in st["targets"]}
    assert ops == {"t1": [], "t2": [("o1", "s27", "1/2")], "t3": [("o1", "s27", "1/2")]}
    assert st["unassigned_operations"] == []
    # The achievement stage reads the same: s27 is in the work each of k2's targets received (where
    # a target's own operations and its rounds of rework are looked for), none of k1's.
    from types import SimpleNamespace

    from asz_core import ledger
    from asz_core.judge.run_files import run_json
    from asz_core.judge.stage_files import Pin, read
    from asz_core.judge.stages.achievement import received_work

    path = next(p for p in sorted((store.path.parent / "runs").rglob("run.json")) if "-with" not in str(p)).parent
    rec = read(path, "targets", Pin.of_json(run_json(path))).record
    got = received_work(SimpleNamespace(window=window.build(store, cid), prices=ledger.load_prices(None)),
                        rec.targets, rec.inputs)
    assert {t: "s27" in steps for t, steps in got.items()} == {"t1": False, "t2": True, "t3": True}
