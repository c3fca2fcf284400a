"""Cost per target over real conversations: the targets stage run with the scripted evaluator, then
every call cut between its targets. The expectations are computed here from the conversation's
steps and the ledger's calls, independently of asz_core.judge.target_cost's walk."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from asz_core import ledger, window
from asz_core.judge import runner
from asz_core.records import USAGE_TYPES
from asz_core.judge.target_cost import BEFORE, SEVERAL, Portion, for_run, priced_work

from .conftest import inputs_of
from .fixtures import nested_example

ROOT = Path(__file__).resolve().parents[2]
DIRECTING = ("create", "refine", "steer", "correct")


def run_targets(store: Any, tmp_path: Path, cid: str, answer: dict[str, Any], win: str | None = None) -> Path:
    script = tmp_path / f"script-{len(list(tmp_path.glob('script-*')))}.json"
    script.write_text(json.dumps({"calls": [{"stage": "targets", "answer": answer,
                                             "requests": [{"usage": {"input": 10, "output": 1, "cache_read": 0, "cache_write": 0}}]}]}))
    res = runner.judge(runner.JudgeOptions(cid, window=win, evaluator=f"scripted:{script}", stages=("targets",)), store=store)
    return res.path


def target(key: str, n: int, talks: list[str] | None = None) -> dict[str, Any]:
    return {"target": key, "statement": f"outcome {n}", "kind": "change", "criteria": [{"text": f"outcome {n} holds"}],
            "state": "open", **({"talks": talks} if talks else {})}


def plausible_answer(ins: list[Any]) -> dict[str, Any]:
    """A catalogue a careful evaluator could give: every fifth input from the first creates a
    target; the next creates two at once; the next accepts both (its talk claimed by both, through
    their talk lists: a talk is listed only for targets its inputs act on); the next refines; the
    next directs nothing (its talk claimed by none)."""
    ans: dict[str, Any] = {"inputs": [], "targets": [], "goals": []}
    made: dict[str, dict[str, Any]] = {}
    last: list[str] = []

    def new() -> str:
        key = f"new:t{len(made) + 1}"
        made[key] = target(key, len(made) + 1)
        made[key]["talks"] = []
        return key

    for k, s in enumerate(ins):
        rel = ({"relation": "new", "goal": "new:G", "statement": "the work"} if k == 0
               else {"relation": "continue", "goal": "new:G", "follows": ins[k - 1].input})
        m = k % 5
        if m == 0:
            last = [new()]
            acts = [{"target": last[0], "action": "create"}]
        elif m == 1:
            last = [new(), new()]
            acts = [{"target": t, "action": "create"} for t in last]
        elif m == 2:
            acts = [{"target": t, "action": "accept"} for t in last]
            for t in last:
                made[t]["talks"].append(s.talk)
        elif m == 3:
            acts = [{"target": last[-1], "action": "refine"}]
        else:
            acts = [{"action": "none"}]
        ans["inputs"].append({"input": s.input, "actions": acts, "relations": [rel]})
    ans["targets"] = list(made.values())
    return ans


# --- the expectation, computed from the steps ---------------------------------------------------

def expected_targets(w: Any, stage: dict[str, Any]) -> dict[str, tuple[str, ...] | None]:
    """Each priced call's targets (None: unassigned): the main-stream step its chain of starting
    steps ends at, the last input of that step's talk before it that directed work, else the
    talk's targets."""
    conv = w.conv
    directed = {r["step"]: [a["target"] for a in r["actions"] if a["action"] in DIRECTING] for r in stage.get("inputs", [])}
    claims: dict[str, list[str]] = {}
    for t in stage.get("targets", []):
        for k in t["talks"]:
            claims.setdefault(k, []).append(t["id"])
    out: dict[str, tuple[str, ...] | None] = {}
    for s in conv.steps:
        if s.kind != "model_call":
            continue
        a: Any = s
        while a is not None and a.stream != "m":
            st = conv.stream(a.stream)
            a = conv.step(st.started_by[0]) if len(st.started_by) == 1 and st.unattributed is None else None
        if a is None or a.talk is None:
            if w.whole:
                out[s.id] = None  # loose work, or an unattributed stream
            continue
        if a.talk not in w.judged:
            continue  # before the window: not priced
        talk = conv.talk(a.talk)
        mine = list(claims.get(talk.id, []))
        for x in talk.inputs:
            mine += [t for t in directed.get(x, []) if t not in mine]
        prior = [x for x in talk.inputs if int(x[1:]) < int(a.id[1:]) and directed.get(x)]
        to = tuple(dict.fromkeys(directed[prior[-1]])) if prior else tuple(sorted(mine, key=lambda t: int(t[1:])))
        out[s.id] = to or None
    return out


def exact_sums(led: Any, want: dict[str, tuple[str, ...] | None]) -> tuple[dict[str, dict[str, Fraction]], dict[str, Fraction]]:
    """Per target and for the unassigned part: each usage type's tokens and the money, exactly."""
    per: dict[str, dict[str, Fraction]] = {}
    un: dict[str, Fraction] = {k: Fraction(0) for k in (*USAGE_TYPES, "money", "calls")}
    for c in led.calls:
        if c.step not in want:
            continue
        to = want[c.step]
        parts = [(t, Fraction(1, len(to))) for t in to] if to else [(None, Fraction(1))]
        for t, f in parts:
            acc = un if t is None else per.setdefault(t, {k: Fraction(0) for k in (*USAGE_TYPES, "money", "calls")})
            acc["calls"] += f
            for k in USAGE_TYPES:
                v = getattr(c.usage, k)
                if v is not None:
                    acc[k] += f * v
            if c.price.money is not None:
                acc["money"] += f * Fraction(c.price.money)
    return per, un


def figures(p: Portion) -> dict[str, Fraction]:
    return {**{k: p.tokens[k] for k in USAGE_TYPES}, "money": p.money, "calls": p.calls}


def same_as_tally(p: Portion, t: Any) -> bool:
    return (p.calls == t.calls and all(p.tokens[k] == t.tokens[k] for k in p.tokens)
            and all(p.unknown[k] == t.unknown[k] for k in USAGE_TYPES) and p.money == Fraction(t.money)
            and p.unpriced == t.unpriced and p.incomplete == t.incomplete)


def stage_of(path: Path) -> dict[str, Any]:
    return json.loads((path / "stages" / "targets.json").read_text())


# --- the property -------------------------------------------------------------------------------

def test_targets_and_unassigned_add_up_to_the_ledger_over_every_corpus_conversation(every_corpus_store: Any,
                                                                                     tmp_path: Path) -> None:
    st = every_corpus_store
    seen = {"conversations": 0, "runtimes": set(), SEVERAL: 0, BEFORE: 0, "unassigned talks": 0, "sub-task calls": 0,
            "unattributed": 0, "loose": 0, "sub-task steps claimed": 0}
    for row in st.conversations():
        if row.head is None:
            continue
        ins = inputs_of(st, row.id)
        path = run_targets(st, tmp_path, row.id, plausible_answer(ins))
        stage = stage_of(path)
        assert stage["status"] == "complete", (row.id, stage["note"])
        costing = for_run(path, st)
        rec = costing.record
        w = window.build(st, row.id)
        led = ledger.build(w.conv, ledger.load_prices(None))
        # to the token and to the cent: the targets and the unassigned part are the ledger
        assert Portion.sum([*(t.cost for t in rec.targets), rec.unassigned_total]) == rec.total
        assert same_as_tally(rec.total, priced_work(w, led)) and same_as_tally(rec.total, led.total), row.id
        # each call went where the steps say, in exact shares
        want = expected_targets(w, stage)
        assert {k: (v or ()) for k, v in costing.of_call.items()} == {k: (v or ()) for k, v in want.items()}, row.id
        per, un = exact_sums(led, want)
        got = {t.target: figures(t.cost) for t in rec.targets if t.cost.calls}
        assert got == per, row.id
        assert figures(rec.unassigned_total) == un, row.id
        for sh in rec.shared:
            assert sh.fraction == Fraction(1, len(sh.among)) and want[sh.call] == sh.among
            seen[sh.why] += 1
        # where a step no model call asked for would go: the targets claiming its talk, a child
        # stream's step walked up to the main talk that began its chain (the close and the
        # achievement stage both ask Costing.talk_targets)
        claims = {t["id"]: set(t["talks"]) for t in stage["targets"]}
        for s in w.conv.steps:
            k = talk_by_hand(w.conv, s)
            assert costing.talk_targets(w.roots, s) == tuple(t for t, ks in claims.items() if k in ks), (row.id, s.id)
            seen["sub-task steps claimed"] += 1 if s.stream != "m" and k in set().union(*claims.values()) else 0
        seen["unassigned talks"] += sum(1 for u in rec.unassigned if u.kind == "talk")
        seen["unattributed"] += sum(1 for u in rec.unassigned if u.kind == "unattributed")
        seen["loose"] += sum(1 for u in rec.unassigned if u.kind == "loose")
        seen["sub-task calls"] += sum(1 for c in led.calls if c.stream != "m" and want.get(c.step))
        seen["conversations"] += 1
        seen["runtimes"].add(w.conv.runtime)  # type: ignore[attr-defined]
    # the catalogue exercised every branch of the cut
    assert seen["conversations"] >= 40 and len(seen["runtimes"]) == 4  # type: ignore[arg-type]
    assert all(seen[k] > 0 for k in (SEVERAL, BEFORE, "unassigned talks", "sub-task calls", "unattributed", "loose",
                                     "sub-task steps claimed")), seen


def talk_by_hand(conv: Any, s: Any) -> str | None:
    """The main talk a step is in, or for a child stream's step the talk of the main-stream step
    its chain of starting steps leads up to; None where no single step started a stream."""
    streams = {x.id: x for x in conv.streams}
    seen: set[str] = set()
    while s.stream != "m":
        st = streams[s.stream]
        if st.unattributed is not None or len(st.started_by) != 1 or st.id in seen:
            return None
        seen.add(st.id)
        s = conv.step(st.started_by[0])
    return s.talk  # type: ignore[no-any-return]


# --- exact shares on one talk ------------------------------------------------------------------

SPOTTER = "258c7280"
"""k1 holds three inputs: i1 at s1, i2 (queued, "check again") at s106 and i3 (queued, "new beads
... tackle them") at s132; its sub-agent a1 starts at s343, after i3. a2 is a helper stream no step
started. k2 is a second talk."""


def spotter_answer(i3_actions: list[dict[str, Any]], k2: list[dict[str, Any]] | None = None,
                   k2_talks: bool = False) -> dict[str, Any]:
    rel0 = {"relation": "new", "goal": "new:G", "statement": "the epic"}
    ans = {"inputs": [
        {"input": "i1", "actions": [{"target": "new:gqc", "action": "create"}], "relations": [rel0]},
        {"input": "i2", "actions": [{"target": "new:gqc", "action": "steer"}],
         "relations": [{"relation": "continue", "goal": "new:G", "follows": "i1"}]},
        {"input": "i3", "actions": i3_actions, "relations": [{"relation": "continue", "goal": "new:G", "follows": "i2"}]},
    ], "targets": [target("new:gqc", 1, ["k2"] if k2_talks else None), target("new:beads", 2, ["k2"] if k2_talks else None)]}
    if k2 is not None:
        ans["inputs"].append({"input": "i4", "actions": k2, "relations": [{"relation": "continue", "goal": "new:G", "follows": "i3"}]})
    return ans


@pytest.fixture
def spotter(corpus_store: Any) -> Any:
    w = window.build(corpus_store, SPOTTER)
    c = w.conv
    k1 = c.talk("k1")
    assert [c.step(x).input for x in k1.inputs if c.step(x).source != "agent"] == ["i1", "i2", "i3"]
    assert [c.step(x).id for x in k1.inputs] == ["s1", "s106", "s132"]
    assert c.stream("a1").started_by == ("s343",) and c.stream("a2").unattributed == "no starting step"
    assert [c.step(x).input for x in c.talk("k2").inputs] == ["i4"]
    return w


def usage_sum(conv: Any, steps: list[str]) -> dict[str, int]:
    out = dict.fromkeys(USAGE_TYPES, 0)
    for sid in steps:
        u = conv.step(sid).usage
        for k in USAGE_TYPES:
            out[k] += getattr(u, k) or 0
    return out


def calls_in(conv: Any, stream: str, after: int = 0, before: int = 10**9, talk: str | None = None) -> list[str]:
    return [s.id for s in conv.steps if s.kind == "model_call" and s.stream == stream and after < int(s.id[1:]) < before
            and (talk is None or s.talk == talk)]


def test_an_input_typed_mid_work_cuts_its_talk_and_the_sub_agent_goes_with_its_starting_step(
        corpus_store: Any, spotter: Any, tmp_path: Path) -> None:
    c = spotter.conv
    path = run_targets(corpus_store, tmp_path, SPOTTER, spotter_answer([{"target": "new:beads", "action": "create"}]))
    rec = for_run(path, corpus_store).record
    t1, t2 = rec.targets
    before_i3 = calls_in(c, "m", 0, 132, "k1")
    after_i3 = calls_in(c, "m", 132, talk="k1")
    child = calls_in(c, "a1")
    assert len(before_i3) == 40 and len(after_i3) > 0 and len(child) == 3
    assert (t1.target, t1.talks, t1.calls, t1.shared) == ("t1", ("k1",), len(before_i3), 0)
    assert (t2.target, t2.talks, t2.calls, t2.shared) == ("t2", ("k1",), len(after_i3) + 3, 0)
    assert t1.cost.tokens_rounded == {**usage_sum(c, before_i3), "cache_write_5m": t1.cost.tokens_rounded["cache_write_5m"],
                                      "cache_write_1h": t1.cost.tokens_rounded["cache_write_1h"]}
    assert {k: t2.cost.tokens[k] for k in USAGE_TYPES} == usage_sum(c, after_i3 + child)
    assert rec.shared == ()
    # i2 ("check again") steers what i1 asked: the calls after it stay t1's, as before it
    assert any(106 < int(s[1:]) < 132 for s in before_i3)
    # k2 is claimed by no target; a2, a stream no step started, is unassigned with its reason
    assert [(u.what, u.kind, u.reason) for u in rec.unassigned] == [
        ("k2", "talk", "no target claims it"), ("a2", "unattributed", "no starting step")]


def test_one_input_directing_two_targets_splits_the_calls_after_it_equally(corpus_store: Any, spotter: Any,
                                                                             tmp_path: Path) -> None:
    c = spotter.conv
    path = run_targets(corpus_store, tmp_path, SPOTTER, spotter_answer(
        [{"target": "new:beads", "action": "create"}, {"target": "new:gqc", "action": "refine"}]))
    rec = for_run(path, corpus_store).record
    t1, t2 = rec.targets
    before_i3 = calls_in(c, "m", 0, 132, "k1")
    after = calls_in(c, "m", 132, talk="k1") + calls_in(c, "a1")
    assert (t1.calls, t1.shared, t2.calls, t2.shared) == (len(before_i3), len(after), 0, len(after))
    half = {k: Fraction(v, 2) for k, v in usage_sum(c, after).items()}
    assert {k: t2.cost.tokens[k] for k in USAGE_TYPES} == half
    assert {k: t1.cost.tokens[k] for k in USAGE_TYPES} == {k: usage_sum(c, before_i3)[k] + half[k] for k in USAGE_TYPES}
    assert t2.cost.calls == Fraction(len(after), 2)
    assert sorted(sh.call for sh in rec.shared) == sorted(after)
    assert {(sh.talk, sh.among, sh.fraction, sh.why, sh.input) for sh in rec.shared} == {
        ("k1", ("t2", "t1"), Fraction(1, 2), SEVERAL, "i3")}
    # money: each half exactly; the two halves make the calls' money to the last digit
    led = ledger.build(c, ledger.load_prices(None))
    money = sum((Fraction(x.price.money) for x in led.calls if x.step in after), Fraction(0))
    assert t2.cost.money == money / 2 and (t1.cost.money + t2.cost.money) == sum(
        (Fraction(x.price.money) for x in led.calls if x.step in before_i3 + after), Fraction(0))


def test_accepting_and_thanks_direct_nothing(corpus_store: Any, spotter: Any, tmp_path: Path) -> None:
    """i3 only accepts: the work after it goes on for what i1 and i2 directed (t1), and t2 (made by
    i3 too, through its statement only) gets nothing of k1."""
    c = spotter.conv
    path = run_targets(corpus_store, tmp_path, SPOTTER, spotter_answer(
        [{"target": "new:gqc", "action": "accept"}, {"action": "none"}]))
    stage = stage_of(path)
    assert [t["id"] for t in stage["targets"]] == ["t1"]  # new:beads was never created: left out
    rec = for_run(path, corpus_store).record
    (t1,) = rec.targets
    assert t1.calls == len(calls_in(c, "m", talk="k1")) + 3 and t1.shared == 0


def test_calls_before_any_directing_input_are_split_among_the_talks_targets(corpus_store: Any, spotter: Any,
                                                                              tmp_path: Path) -> None:
    """k2's only input accepts t1 and t2 (directs nothing); both targets list k2 among their talks:
    every call of k2 is split between them, each share written as before any directing input."""
    c = spotter.conv
    path = run_targets(corpus_store, tmp_path, SPOTTER, spotter_answer(
        [{"target": "new:beads", "action": "create"}],
        k2=[{"target": "new:gqc", "action": "accept"}, {"target": "new:beads", "action": "accept"}], k2_talks=True))
    rec = for_run(path, corpus_store).record
    k2 = calls_in(c, "m", talk="k2")
    assert len(k2) > 0
    assert sorted(sh.call for sh in rec.shared) == sorted(k2)
    assert {(sh.talk, sh.among, sh.why, sh.input) for sh in rec.shared} == {("k2", ("t1", "t2"), BEFORE, None)}
    t1, t2 = rec.targets
    assert t1.talks == ("k1", "k2") and t2.talks == ("k1", "k2")
    assert t1.shared == t2.shared == len(k2)
    assert [u.what for u in rec.unassigned] == ["a2"]


def test_a_window_prices_only_its_talks_and_their_sub_tasks(corpus_store: Any, tmp_path: Path) -> None:
    cid = "adcd3a4d"  # k5 started a2 and a3; the talks before k5 are context
    w = window.build(corpus_store, cid, None, "k5..k5")
    ins = [s for s in inputs_of(corpus_store, cid) if s.talk == "k5"]
    ans = {"inputs": [{"input": ins[0].input, "actions": [{"target": "new:a", "action": "create"}],
                       "relations": [{"relation": "new", "goal": "new:G", "statement": "x"}]}],
           "targets": [target("new:a", 1)]}
    path = run_targets(corpus_store, tmp_path, cid, ans, "k5..k5")
    costing = for_run(path, corpus_store)
    led = ledger.build(w.conv, ledger.load_prices(None))
    (t1,) = costing.record.targets
    k5 = next(t for t in led.talks if t.id == "k5")
    assert k5.streams == ("a2", "a3") and k5.with_subagents.calls > k5.own.calls
    assert same_as_tally(t1.cost, k5.with_subagents) and same_as_tally(costing.record.total, k5.with_subagents)
    assert costing.record.unassigned == ()
    assert all(led.calls[i].root == "k5" for i, c in enumerate(led.calls) if c.step in costing.of_call)


# --- a nested sub-agent (the corpus has none): the bundled example with a grandchild -------------

def test_a_nested_sub_agents_calls_take_the_place_of_the_main_step_that_began_its_chain(store: Any, tmp_path: Path) -> None:
    from asz_core.collect import collect

    collect([nested_example(tmp_path / "nested")], store)
    w = window.build(store, "5e1f0c2a")
    c = w.conv
    grand = next(st for st in c.streams if st.key == "agent-b7e0d14")
    assert grand.parent == "a1" and c.step(grand.started_by[0]).stream == "a1"
    # i2 creates t2 at s17; i3 (s21, typed mid-work after the Task at s20) creates t3
    ans = {"inputs": [
        {"input": "i1", "actions": [{"target": "new:r", "action": "create"}], "relations": [{"relation": "new", "goal": "new:G"}]},
        {"input": "i2", "actions": [{"target": "new:q", "action": "create"}],
         "relations": [{"relation": "continue", "goal": "new:G", "follows": "i1"}]},
        {"input": "i3", "actions": [{"target": "new:csv", "action": "create"}],
         "relations": [{"relation": "continue", "goal": "new:G", "follows": "i2"}]},
    ], "targets": [target("new:r", 1), target("new:q", 2), target("new:csv", 3)]}
    path = run_targets(store, tmp_path, "5e1f0c2a", ans)
    rec = for_run(path, store).record
    t1, t2, t3 = rec.targets
    k2_before = calls_in(c, "m", talk="k2", before=21)
    k2_after = calls_in(c, "m", talk="k2", after=21)
    sub = calls_in(c, "a1") + calls_in(c, grand.id)
    assert len(calls_in(c, grand.id)) == 2 and len(calls_in(c, "a1")) == 4
    assert (t2.calls, t3.calls) == (len(k2_before) + len(sub), len(k2_after))
    assert {k: t2.cost.tokens[k] for k in USAGE_TYPES} == usage_sum(c, k2_before + sub)
    assert {k: t3.cost.tokens[k] for k in USAGE_TYPES} == usage_sum(c, k2_after)
    led = ledger.build(c, ledger.load_prices(None))
    assert same_as_tally(rec.total, led.total) and rec.unassigned == ()


def test_a_failed_targets_stage_leaves_every_talk_unassigned(corpus_store: Any, tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"calls": [{"stage": "targets", "raw": "no json here"}]}))
    res = runner.judge(runner.JudgeOptions(SPOTTER, evaluator=f"scripted:{script}", stages=("targets",)), store=corpus_store)
    assert res.stages["targets"] == "failed"
    rec = for_run(res.path, corpus_store).record
    led = ledger.build(window.build(corpus_store, SPOTTER).conv, ledger.load_prices(None))
    assert rec.targets == () and [u.what for u in rec.unassigned] == ["k1", "k2", "a2"]
    assert same_as_tally(rec.unassigned_total, led.total)


def test_exact_amounts_are_written_and_read_back_exactly() -> None:
    from asz_core.convert import structure, unstructure
    from asz_core.ledger import Tally

    t = Tally()
    t.calls, t.tokens["input"], t.money = 1, 1000, __import__("decimal").Decimal("0.0123")
    p = Portion.of({3: t})
    d = unstructure(p)
    assert d["tokens"]["input"] == "1000/3" and d["calls"] == "1/3" and d["money"] == "0.0041"
    assert d["tokens_rounded"]["input"] == 333 and d["money_rounded"] == "0.004100"
    assert structure(d, Portion) == p
