"""A plausible judging of 258c7280 (marot/spotter, Claude Code 2.1), for the achievement tests.

k1 holds three inputs: i1 "Implement spotter-gqc" (s1), i2 "check again" (s106, typed after an
interrupt at s104) and i3 "new beads for the epic were added. tackle them" (s132, typed while the
agent worked); k2 is i4 "did you push?" (s432), answered by the reply s434. Along k1: the test
run s117 and credo s118 returned, the reply s116 says "All 43 tests pass", the commit s131
returned, the push s134 failed (no upstream) and s136 pushed, the reply s138 says "Pushed.", a
sub-agent started at s343 (its WebFetch s438, its reply s443). The targets: t1 (i1, steered by
i2) "implement spotter-gqc", t2 (i3) "tackle the new beads", t3 (i4) "say whether it was pushed".
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from asz_core.judge import runner

CID = "258c7280"

TARGETS = {
    "inputs": [
        {"input": "i1", "actions": [{"target": "new:gqc", "action": "create"}],
         "relations": [{"relation": "new", "goal": "new:g", "statement": "spotter-gqc implemented"}]},
        {"input": "i2", "actions": [{"target": "new:gqc", "action": "steer"}],
         "relations": [{"relation": "continue", "goal": "new:g", "follows": "i1"}]},
        {"input": "i3", "actions": [{"target": "new:beads", "action": "create"}],
         "relations": [{"relation": "adjust", "goal": "new:g", "follows": "i2", "statement": "spotter-gqc and the new beads"}]},
        {"input": "i4", "actions": [{"target": "new:push", "action": "create"}],
         "relations": [{"relation": "continue", "goal": "new:g", "follows": "i3"}]},
    ],
    "targets": [
        {"target": "new:gqc", "statement": "Implement spotter-gqc", "kind": "change", "talks": ["k1"], "state": "open",
         "criteria": [{"text": "the spotter-gqc tasks are implemented"}, {"text": "the test suite passes"},
                      {"text": "the work is committed"}, {"text": "a changelog entry", "dropped_by": "i2"}]},
        {"target": "new:beads", "statement": "Tackle the new beads of the epic", "kind": "change", "talks": ["k1"],
         "state": "open", "criteria": [{"text": "the new beads are implemented"}, {"text": "the branch is pushed"}]},
        {"target": "new:push", "statement": "Say whether the work was pushed", "kind": "question", "talks": ["k2"],
         "state": "closed", "criteria": [{"text": "a correct answer whether the work is pushed"}]},
    ],
    "goals": [{"goal": "new:g", "main_target": None, "main_cited": None}],
}

T1 = {
    "target": "t1",
    "criteria": [
        {"id": "t1.c1", "state": "met", "cites": ["s117", "s131"], "reason": "the suite passes and the work was committed"},
        {"id": "t1.c2", "state": "met", "cites": ["s117"], "reason": "65 tests, 0 failures",
         "observations": [{"step": "s117", "excerpt": "14 doctests, 65 tests, 0 failures", "reading": "the suite passes"}]},
        {"id": "t1.c3", "state": "met", "cites": ["s131"], "reason": "the commit 99b497c"},
    ],
    "basis": "observed_result", "basis_cites": ["s117"],
    "claims": [{"claim": "All 43 tests pass", "said": "s116", "check": "supported", "cites": ["s113"], "criteria": ["t1.c2"]}],
    "events": [{"key": "e1", "event": "delivered", "concerns": "revision", "cites": ["s131"], "what": "commit 99b497c"}],
    "contradictions": [],
    "rework": [{"attempt": ["s100"], "trigger": "person", "trigger_step": "i2", "redo": ["s108"], "cause": "unknown",
                "what": "the person asked to check again after the agent waited on a test run"}],
    "findings": [{"anchor": "s100", "what": "waited on a test run that timed out", "why": "first compilation of the test env",
                  "avoid": "run the tests in the foreground", "cites": ["s100"]}],
    "account": {"files": [{"area": "lib/spotter", "category": "code", "changed": "annotations with message references",
                           "operations": [f"o{n}" for n in range(1, 16)]}]},
}

T2 = {
    "target": "t2",
    "criteria": [
        {"id": "t2.c1", "state": "unknown", "cites": [], "reason": "not read far enough"},
        {"id": "t2.c2", "state": "met", "cites": ["s136"], "reason": "the push went through"},
    ],
    "basis": "observed_result", "basis_cites": ["s136"],
    "events": [{"key": "e1", "event": "delivered", "concerns": "remote_change", "cites": ["s136"], "what": "pushed"}],
    "rework": [{"attempt": ["s134"], "trigger": "tool", "trigger_step": "s134", "redo": ["s136"], "cause": "agent_error",
                "what": "the first push had no upstream"}],
    "account": {"files": [{"area": "lib/spotter", "category": "code", "changed": "the new beads",
                           "operations": [f"o{n}" for n in range(16, 49)]}]},
}

T3 = {
    "target": "t3",
    "criteria": [{"id": "t3.c1", "state": "met", "cites": ["s434"], "reason": "the reply says it was pushed"}],
    "basis": "delivered_answer", "basis_cites": ["s434"],
    "claims": [{"claim": "everything is pushed", "said": "s434", "check": "supported", "cites": ["s136"], "criteria": ["t3.c1"]}],
    "events": [{"key": "e1", "event": "delivered", "concerns": "answer", "cites": ["s434"]}],
    "account": {"question": {"asked": {"text": "did you push?", "cites": ["i4"]},
                             "checks": [{"what": "git push", "found": "the branch was pushed", "holds": "as of s136",
                                         "cites": ["s136"]}],
                             "answer": {"text": "yes, pushed and clean", "cites": ["s434"]}}},
}


def answers() -> dict[str, dict[str, Any]]:
    """The three plausible answers, fresh copies (a test changes one and keeps the others)."""
    return {"t1": copy.deepcopy(T1), "t2": copy.deepcopy(T2), "t3": copy.deepcopy(T3)}


def usage(i: int = 4000, o: int = 300) -> dict[str, int]:
    return {"input": i, "output": o, "cache_read": 0, "cache_write": 0}


def script(targets: dict[str, Any], per_call: list[Any], reads: list[list[dict[str, Any]]] | None = None) -> dict[str, Any]:
    """A script: the targets call, then one achievement call per entry of ``per_call`` (an answer
    holding the targets given, or None for a call the script does not answer)."""
    calls = [{"stage": "targets", "call": 1, "requests": [{"reads": [{"tool": "talks"}], "usage": usage()}],
              "answer": targets}]
    for n, a in enumerate(per_call, 1):
        if a is None:
            continue
        calls.append({"stage": "achievement", "call": n, "model": "scripted-test",
                      "requests": [{"reads": (reads or [[]] * len(per_call))[n - 1], "usage": usage(5000 + n, 400)}],
                      "answer": a if isinstance(a, dict) and "targets" in a else {"targets": [a]}})
    return {"calls": calls}


def run(store: Any, tmp_path: Path, per_call: list[Any], targets: dict[str, Any] | None = None, cid: str = CID,
        **kw: Any) -> tuple[runner.RunResult, dict[str, Any]]:
    """Judge ``cid`` with the targets and achievement stages; the result and the achievement stage file."""
    path = tmp_path / f"script-{len(list(tmp_path.glob('script-*')))}.json"
    path.write_text(json.dumps(script(targets or TARGETS, per_call, kw.pop("reads", None))))
    opts = runner.JudgeOptions(cid, evaluator=f"scripted:{path}", stages=("targets", "achievement"), **kw)
    res = runner.judge(opts, store=store)
    return res, json.loads((res.path / "stages" / "achievement.json").read_text())


def story(store: Any, tmp_path: Path, **changed: Any) -> tuple[runner.RunResult, dict[str, Any]]:
    """The three targets of 258c7280 judged, one call each, with some answers replaced."""
    a = answers()
    a.update(changed)
    return run(store, tmp_path, [a["t1"], a["t2"], a["t3"]])


def target(stage: dict[str, Any], tid: str) -> dict[str, Any]:
    return next(r for r in stage["achievement"] if r["target"] == tid)


def crit(stage: dict[str, Any], cid: str) -> dict[str, Any]:
    return next(c for c in target(stage, cid.split(".")[0])["criteria"] if c["id"] == cid)


def checks(stage: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(c["kind"], c["where"], c["what"]) for c in stage["checks"]]
