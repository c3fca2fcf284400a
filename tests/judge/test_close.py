"""close.json over scripted runs of a real corpus conversation (fe5e1c67: two main talks, five
sub-agents, three of them running at once), with the figures checked by hand against the record.

The corpus holds no sub-agent that outlived its talk, so one copy of the transcript has the last
record of sub-agent a5 written 27 s after its talk ended and 5 s into the next talk (its
timestamp only: the order of the records, and so every id, is the corpus's)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from asz_core.judge import runner
from asz_core.judge.close import close_file
from asz_core.convert import dumps

from tests.conftest import CLAUDE_CORPUS
from .conftest import entry

SESSION = "fe5e1c67-53e7-4862-81ae-d0e013e3270b"
FILE = CLAUDE_CORPUS / "d-kimuson__claude-code-viewer/mock-global-claude-dir/projects/sample-project" / f"{SESSION}.jsonl"
A5_END, A5_LATER = "2025-09-03T01:01:09.970Z", "2025-09-03T01:01:50.000Z"


def targets_answer() -> dict[str, Any]:
    """i1 (the /orchestrator command) creates the app; i7 ("Thanks! Please update CLAUDE.md")
    creates the CLAUDE.md target and corrects the app, so k7's calls are split between both."""
    return {
        "inputs": [
            {"input": "i1", "actions": [{"target": "new:app", "action": "create"}],
             "relations": [{"relation": "new", "goal": "new:A", "statement": "a TODO app in Next.js"}]},
            {"input": "i7", "actions": [{"target": "new:doc", "action": "create"}, {"target": "new:app", "action": "correct"}],
             "relations": [{"relation": "adjust", "goal": "new:A", "follows": "i1",
                            "statement": "a TODO app in Next.js, with CLAUDE.md describing it"}]},
        ],
        "targets": [
            {"target": "new:app", "statement": "a TODO app in Next.js", "kind": "change",
             "criteria": [{"text": "the app builds"}, {"text": "todos persist"}], "talks": ["k1", "k7"], "state": "closed"},
            {"target": "new:doc", "statement": "CLAUDE.md describes the change", "kind": "change",
             "criteria": [{"text": "CLAUDE.md updated"}], "talks": ["k7"], "state": "closed"},
        ],
        "goals": [{"goal": "new:A", "main_target": None, "main_cited": None}],
    }


def criterion(cid: str, state: str, *cites: str) -> dict[str, Any]:
    return {"id": cid, "text": "", "state": state, "reason": None, "by": "evaluator", "cites": list(cites),
            "shown_by": list(cites)}


# The achievement stage's records (judgment.py's TargetAchievement), as that stage writes them.
ACHIEVEMENT = {"achievement": [
    {"target": "t1", "judged": True, "level": "partial", "basis": "observed_result", "live": 2, "met": 1, "unknown": 0,
     "criteria": [criterion("t1.c1", "met", "s432"), criterion("t1.c2", "not_met", "s224")],
     "events": [{"id": "t1.e1", "event": "delivered", "concerns": "file", "at": "s434", "what": None, "cites": ["s434"]}],
     "standing": ["t1.e1"],
     "contradictions": [{"delivery": "t1.e1", "disproves": "criteria", "criteria": ["t1.c1"], "cites": ["s438"],
                         "what": None, "applies": True}],
     "rework": [{"id": "t1.r1", "attempt": ["s10"], "trigger": "tool", "trigger_step": "s223", "redo": ["s225", "s431"],
                 "cause": "agent_error", "start": "s223", "end": "s431"}],
     "findings": [{"id": "f1", "target": "t1", "anchor": "s224", "what": "the build failed", "why": None, "avoid": None,
                   "cites": ["s224"]}]},
    {"target": "t2", "judged": True, "level": "achieved", "basis": "observed_result", "live": 1, "met": 1, "unknown": 0,
     "criteria": [criterion("t2.c1", "met", "s438")],
     "events": [{"id": "t2.e1", "event": "delivered", "concerns": "file", "at": "s438", "what": None, "cites": ["s438"]}],
     "standing": ["t2.e1"]},
]}
EFFICIENCY = {"calls": [{"step": "s3", "label": "productive"},
                        {"step": "s7", "label": "repeated_failure", "cause": "main_agent"},
                        {"step": "s10", "label": "repeated_failure", "cause": "main_agent"}]}


@pytest.fixture
def conv_store(store: Any, tmp_path: Path) -> Any:
    if not FILE.is_file():
        pytest.skip(f"corpus not found at {FILE}")
    from asz_core.collect import collect

    text = FILE.read_text()
    assert text.count(A5_END) == 1
    d = tmp_path / "projects" / "sample-project"
    d.mkdir(parents=True)
    (d / FILE.name).write_text(text.replace(A5_END, A5_LATER))
    collect([d], store)
    return store


def run_with(store: Any, tmp_path: Path, **files: dict[str, Any]) -> Path:
    """A run of the targets stage, then a copy of it with the given stage files in place of the
    skipped ones (the shapes close reads), closed again."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"calls": [entry(targets_answer())]}))
    res = runner.judge(runner.JudgeOptions(SESSION, evaluator=f"scripted:{script}", stages=("targets",)), store=store)
    assert json.loads((res.path / "stages/targets.json").read_text())["status"] == "complete"
    copy = res.path.parent / (res.path.name + "-with")
    shutil.copytree(res.path, copy)
    (copy / "close.json").unlink()
    (copy / "report.html").unlink()
    for name, body in files.items():
        sf = json.loads((copy / "stages" / f"{name}.json").read_text())
        sf.update(status="complete", reason=None, **body)
        (copy / "stages" / f"{name}.json").write_text(json.dumps(sf))
    (copy / "close.json").write_bytes(dumps(close_file(copy, store), indent=True) + b"\n")
    return copy


def test_shares_and_times_with_only_the_targets_stage(conv_store: Any, tmp_path: Path) -> None:
    res = runner.judge(runner.JudgeOptions(SESSION, evaluator=f"scripted:{_script(tmp_path)}", stages=("targets",)), store=conv_store)
    st = json.loads((res.path / "close.json").read_text())["statement"]
    # What the runner wrote is what close computes again from the run's files.
    assert (res.path / "close.json").read_bytes() == dumps(close_file(res.path, conv_store), indent=True) + b"\n"
    t1, t2 = st["targets"]
    # k1 with its sub-agents: 168 calls, 3,747,643 tokens, $1.64303055; k7: 2 calls, 43,073 tokens,
    # $0.03220965, split half and half (i7 directed both targets).
    # Output unknown on 158 calls of k1 and 1 of k7 (streamed fragments with no final one): counted apart.
    assert t1["cost"]["total"] == {"calls": 170, "tokens": 3769180, "money": "1.659135", "unpriced": 0, "unknown": 159,
                                   "at_least": "2.377035"}  # the floors priced too (the ledger's bound)
    assert t2["cost"]["total"] == {"calls": 2, "tokens": 21536, "money": "0.016105", "unpriced": 0, "unknown": 1, "at_least": "0.016180"}
    assert t1["cost"]["total"]["tokens"] + t2["cost"]["total"]["tokens"] == 3790716  # the conversation's, to the token
    assert [(s["step"], s["targets"], s["share"], s["why"]) for s in t1["shares"]] == [
        ("s436", ["t1", "t2"], "1/2", "one input directed several targets"),
        ("s439", ["t1", "t2"], "1/2", "one input directed several targets")]
    assert t1["cost"]["subagents"]["calls"] == 161
    # Observed time: k1 from 00:52:31.217; a5 now ends at 01:01:50.000, past k1's end (01:01:22.846)
    # and into k7 (01:01:44.806 to 01:02:03.665), so t1's spans make one: 572.448 s. The three
    # sub-agents that ran at once (a1, a2, a3 from 00:52:54.163) count once.
    assert t1["times"]["observed_seconds"] == 572.448
    assert t1["times"]["observed"] == [{"start": "2025-09-03T00:52:31.217Z", "end": "2025-09-03T01:02:03.665Z"}]
    assert t2["times"]["observed_seconds"] == 18.859
    # Nothing reviewed and no achievement: levels unverified, scores unmeasured, never 0.
    assert (t1["outcome"]["class"], t1["outcome"]["level"], t1["outcome"]["record_score"]) == ("unverified", "unverified", None)
    assert st["scores"]["achievement"]["value"] is None and st["scores"]["efficiency"]["value"] is None
    assert st["scores"]["coverage"]["value"] == "0" and st["scores"]["achievement"]["unit"] == "money"
    assert t1["times"]["avoidable_seconds"] is None and t1["cost"]["not_reviewed"] == t1["cost"]["total"]
    assert st["basis"]["achievement"].startswith("skipped") and "unverified" in st["basis"]["achievement"]
    assert t1["corrections"] == ["i7"]
    assert [(f["id"], f["kind"], f["anchor"]) for f in st["findings"]] == [("f1", "correction", "s435")]
    assert st["unassigned"]["calls"] == 0


def _script(tmp_path: Path) -> Path:
    script = tmp_path / "script-only.json"
    script.write_text(json.dumps({"calls": [entry(targets_answer())]}))
    return script


def test_classes_scores_rework_and_findings(conv_store: Any, tmp_path: Path) -> None:
    path = run_with(conv_store, tmp_path, achievement=ACHIEVEMENT, efficiency=EFFICIENCY)
    st = json.loads((path / "close.json").read_text())["statement"]
    t1, t2 = st["targets"]
    o1, o2 = t1["outcome"], t2["outcome"]
    # t1: c1 met, c2 not met: partial, record 1/2; the standing delivery t1.e1 is contradicted on
    # c1, so c1 counts as not met: final 0, class contradicted.
    assert (o1["level"], o1["record_score"], o1["final_score"], o1["class"], o1["applied"]) == (
        "partial", "1/2", "0", "contradicted", ["t1.e1.x1"])
    assert [(c["id"], c["state"], c["final"]) for c in t1["criteria"]] == [("t1.c1", "met", "not_met"), ("t1.c2", "not_met", "not_met")]
    assert (o2["level"], o2["final_score"], o2["class"]) == ("achieved", "1", "achieved")
    # The run's scores, by money (every call priced), from exact shares:
    # w1 = 1.64303055 + 0.03220965/2, w2 = 0.03220965/2; achievement = (0*w1 + 1*w2)/(w1 + w2).
    w1 = Fraction(Decimal("1.64303055")) + Fraction(Decimal("0.03220965")) / 2
    w2 = Fraction(Decimal("0.03220965")) / 2
    ach = w2 / (w1 + w2)
    assert st["scores"]["achievement"]["value"] == f"{ach.numerator}/{ach.denominator}"
    assert st["scores"]["achievement"]["rounded"] == "0.0096" and st["scores"]["delivered"]["value"] == st["scores"]["achievement"]["value"]
    # Efficiency: s3 productive ($0.01204245), s7 and s10 repeated failures ($0.00576375 + $0.015060).
    reviewed = Fraction(Decimal("0.01204245")) + Fraction(Decimal("0.00576375")) + Fraction(Decimal("0.015060"))
    eff = 1 - (Fraction(Decimal("0.00576375")) + Fraction(Decimal("0.015060"))) / reviewed
    assert st["scores"]["efficiency"]["value"] == f"{eff.numerator}/{eff.denominator}"
    assert st["scores"]["coverage"]["value"] == str(reviewed / Fraction(Decimal("1.67524020"))).replace(" ", "")
    c1 = t1["cost"]
    assert c1["avoidable"] == {"calls": 2, "tokens": 33795, "money": "0.020824", "unpriced": 0, "unknown": 1, "at_least": "0.020839"}
    assert c1["avoidable_by_cause"]["main_agent"] == c1["avoidable"] and c1["avoidable_by_cause"]["subtask"]["calls"] == 0
    assert c1["by_label"]["productive"]["tokens"] == 16380
    # Avoidable time: the run s7, s10 lasts from s7 (00:52:38.373) to the talk's next call s223 (00:56:28.996).
    assert t1["times"]["avoidable_seconds"] == 230.623
    assert t2["times"]["avoidable_seconds"] == 0.0
    # Rework t1.r1: t1's calls from s223 to s431 in landing order, each once.
    [r] = o1["rework"]
    assert (r["id"], r["trigger"], r["cause"]) == ("t1.r1", "s223", "agent_error")
    assert r["cost"]["calls"] == _calls_between(conv_store, "s223", "s431") and r["cost"] == o1["rework_cost"]
    # Findings in recorded order: the criterion at its first citation and the rework at its trigger
    # (s223's model call and the tool step s224 it asked for land in one record), the contradiction
    # at its delivery, the correction at the person's input.
    assert [(f["id"], f["kind"], f["anchor"], f["about"]) for f in st["findings"]] == [
        ("f1", "criterion_not_met", "s224", "t1.c2"), ("f2", "rework", "s223", "t1.r1"),
        ("f3", "contradiction", "s434", "t1.e1.x1"), ("f4", "correction", "s435", "i7")]
    assert t1["findings"] == ["f1", "f2", "f3", "f4"] and t2["findings"] == []
    [g] = st["goals"]
    assert (g["id"], g["main_target"], g["class"], g["first_finding"], g["mean_final_score"]) == ("g1", None, "contradicted", "f1", "1/2")
    assert [f["kind"] for f in st["findings"] if f["id"] in t1["findings"]] == ["criterion_not_met", "rework", "contradiction", "correction"]


def _calls_between(store: Any, a: str, b: str) -> int:
    from asz_core import ledger, window

    w = window.build(store, SESSION)
    lo, hi = w.conv.step(a).seq, w.conv.step(b).seq
    return sum(1 for c in ledger.build(w.conv, ledger.load_prices(None)).calls if lo <= w.conv.step(c.step).seq <= hi)


def test_a_cancelled_target_keeps_only_its_rework_and_corrections(conv_store: Any, tmp_path: Path) -> None:
    ans = targets_answer()
    ans["targets"][0]["state"] = "cancelled"
    script = tmp_path / "cancel.json"
    script.write_text(json.dumps({"calls": [entry(ans)]}))
    res = runner.judge(runner.JudgeOptions(SESSION, evaluator=f"scripted:{script}", stages=("targets",)), store=conv_store)
    copy = res.path.parent / (res.path.name + "-with")
    shutil.copytree(res.path, copy)
    (copy / "close.json").unlink()
    sf = json.loads((copy / "stages/achievement.json").read_text())
    sf.update(status="complete", reason=None, **ACHIEVEMENT)
    (copy / "stages/achievement.json").write_text(json.dumps(sf))
    st = json.loads(dumps(close_file(copy, conv_store)))["statement"]
    t1 = st["targets"][0]
    assert t1["outcome"]["class"] == "cancelled"
    assert [st["findings"][int(f[1:]) - 1]["kind"] for f in t1["findings"]] == ["rework", "correction"]
    # Still wanted: t2 alone, so the run's achievement is t2's final score.
    assert st["scores"]["achievement"]["value"] == "1"
    assert st["goals"][0]["main_target"] is None and st["goals"][0]["mean_final_score"] == "1"


def test_the_same_inputs_give_the_same_close_json_in_another_process(conv_store: Any, tmp_path: Path) -> None:
    path = run_with(conv_store, tmp_path, achievement=ACHIEVEMENT, efficiency=EFFICIENCY)
    first = (path / "close.json").read_bytes()
    code = ("import sys; from pathlib import Path; from asz_core.store import Store; from asz_core.judge.close import close_file; "
            "from asz_core.convert import dumps; p = Path(sys.argv[1]); "
            "sys.stdout.buffer.write(dumps(close_file(p, Store.open(Path(sys.argv[2]))), indent=True) + b'\\n')")
    got = subprocess.run([sys.executable, "-c", code, str(path), str(Path(conv_store.path).parent)], capture_output=True,
                         env={**os.environ, "PYTHONHASHSEED": "random"}, timeout=300)
    assert got.returncode == 0, got.stderr.decode()[-2000:]
    assert got.stdout == first
    assert json.loads(first)["statement"]["targets"][0]["outcome"]["class"] == "contradicted"


def test_a_changed_price_file_is_refused(conv_store: Any, tmp_path: Path) -> None:
    from asz_core.pricing import default_price_file

    prices = tmp_path / "prices.json"
    prices.write_bytes(default_price_file().read_bytes())
    script = _script(tmp_path)
    res = runner.judge(runner.JudgeOptions(SESSION, evaluator=f"scripted:{script}", stages=("targets",), prices=str(prices)), store=conv_store)
    assert json.loads((res.path / "close.json").read_text())["statement"] is not None
    prices.write_bytes(prices.read_bytes().replace(b'"input_mtok"', b'"input_mtok" ', 1))
    from asz_core import ledger

    ledger._loaded.clear()
    cf = close_file(res.path, conv_store)
    assert cf.statement is None and "changed since the run" in (cf.error or "")


def test_what_judging_consumed_is_priced_beside_the_conversation(conv_store: Any, tmp_path: Path) -> None:
    def judging(lost: bool) -> dict[str, Any]:
        e = entry(targets_answer(), model="claude-sonnet-4-5")
        if lost:
            e["requests"].append({"usage": None})  # a request whose usage was never said
        script = tmp_path / f"priced-{lost}.json"
        script.write_text(json.dumps({"calls": [e]}))
        res = runner.judge(runner.JudgeOptions(SESSION, evaluator=f"scripted:{script}", stages=("targets",)), store=conv_store)
        return json.loads((res.path / "close.json").read_text())["statement"]["judging"]

    j = judging(False)
    # 1,000 input at $3/MTok, 100 output at $15/MTok, 50 cache reads at $0.30/MTok.
    assert j["stages"]["targets"] == {"calls": 1, "tokens": 1150, "money": "0.004515", "unpriced": 0, "unknown": 0, "at_least": None}
    assert j["total"] == j["stages"]["targets"]
    assert j["conversation"]["tokens"] == 3790716 and j["conversation"]["money"] == "1.675240"
    j = judging(True)  # never taken for zero: the money is not known, the request counted apart
    assert j["stages"]["targets"] == {"calls": 2, "tokens": 1150, "money": None, "unpriced": 1, "unknown": 1,
                                      "at_least": "0.004515"}  # at least the request priced


def test_a_subtasks_own_label_comes_first_and_its_cause_is_kept(conv_store: Any, tmp_path: Path) -> None:
    from asz_core import ledger, window

    w = window.build(conv_store, SESSION)
    led = ledger.build(w.conv, ledger.load_prices(None))
    child = next(c for c in led.calls if c.stream == "a1")  # a call of the sub-agent s14 started
    both = {"calls": [{"step": child.step, "label": "productive"}]}
    own = {"calls": [{"step": child.step, "label": "misled_by_subtask", "cause": "subtask"}]}
    st = json.loads((run_with(conv_store, tmp_path, efficiency=both, subtasks=own) / "close.json").read_text())["statement"]
    c = st["targets"][0]["cost"]
    tokens = sum(getattr(child.usage, k) or 0 for k in ("input", "output", "cache_read", "cache_write"))
    assert c["avoidable_by_cause"]["subtask"]["calls"] == 1 and c["avoidable_by_cause"]["subtask"]["tokens"] == tokens
    assert "productive" not in c["by_label"] and c["by_label"]["misled_by_subtask"]["tokens"] == tokens
    # Sub-agents' work runs beside the main stream: it adds cost, never avoidable time.
    assert st["targets"][0]["times"]["avoidable_seconds"] == 0.0
