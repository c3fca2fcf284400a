"""A round of rework's attempt, trigger and redo, and the calls it holds, in the order the work
happened (spec: "Rework", "How each target ended"; docs/rule-readings.md "The order a round of
rework runs in"): a sub-task's steps lie where the step that started it lies in its giver's talk,
though Claude Code keeps each sub-agent in a file of its own, landed after the whole main file.

On 258c7280 (achievement_story): k1's calls after i3 (s132) are t2's; k1's Task s343 (asked for by
the model call s341, its result back before the next call s344) started the sub-agent a1, whose
steps s435-s443 landed after all of the main stream (s1-s434): its model calls s436, s439 and
s442, its WebFetch s438 (asked for by s436) and s441 (by s439). Expected figures are read here
from the transcript, never from the close's or the stage's code."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from asz_core import ledger, window
from asz_core.assembly import work_order

from .achievement_story import CID, T2, checks, story, target

ORDER = "attempt, trigger and redo do not come in that order, each shown: "


def close_t2(res: Any) -> dict[str, Any]:
    close = json.loads((res.path / "close.json").read_text())["statement"]
    return next(x for x in close["targets"] if x["id"] == "t2")["outcome"]  # type: ignore[no-any-return]


def tokens_of(store: Any, steps: set[str]) -> int:
    """The four token counts of the calls at ``steps``, summed from the ledger."""
    w = window.build(store, CID)
    calls = [c for c in ledger.build(w.conv, ledger.load_prices(None)).calls if c.step in steps]
    assert {c.step for c in calls} == steps  # each is a call of the ledger
    return sum(sum(getattr(c.usage, k) or 0 for k in ("input", "output", "cache_read", "cache_write")) for c in calls)


def main_calls(store: Any, first: int, last: int) -> set[str]:
    """The main stream's model calls from step s<first> to s<last> (their kind read from the record)."""
    conv = window.build(store, CID).conv
    return {f"s{n}" for n in range(first, last + 1) if conv.step(f"s{n}").kind == "model_call"}


def test_a_sub_agents_steps_happen_where_its_starting_step_is(corpus_store: Any) -> None:
    conv = window.build(corpus_store, CID).conv
    assert [conv.step(s).stream for s in ("s343", "s344", "s434", "s435", "s443")] == ["m", "m", "m", "a1", "a1"]
    assert conv.step("s438").seq > conv.step("s434").seq  # landed after the whole main file
    at = work_order(conv)
    assert at("s341") < at("s343") < at("s436") < at("s438") < at("s443") < at("s344") < at("s434")
    # a2, the compaction helper no step started: landing order alone
    assert at("s447") == (conv.step("s447").seq,)


def test_a_round_whose_redo_ends_in_a_sub_agent_holds_the_calls_up_to_where_it_ran(corpus_store: Any,
                                                                                   tmp_path: Path) -> None:
    """t2's round: the push s134 failed (no upstream), s136 pushed, and a1's WebFetch s438 (made)
    redoes too. It runs from s134 to s438, which happened inside k1's Task s343: it holds k1's calls
    s133 (which asked for s134) to s341 (which asked for s343), 78 of them, and a1's s436, which
    asked for s438: 79. Not a1's s439 and s442 after s438, nor k1's 33 calls s344-s430 after a1 ran
    (in landing order, which puts s438 after them all, the round held 112)."""
    t2 = copy.deepcopy(T2)
    t2["rework"] = [{"attempt": ["s134"], "trigger": "tool", "trigger_step": "s134", "redo": ["s136", "s438"],
                     "cause": "agent_error"}]
    res, st = story(corpus_store, tmp_path, t2=t2)
    assert [(r["start"], r["end"]) for r in target(st, "t2")["rework"]] == [("s134", "s438")]
    held = main_calls(corpus_store, 133, 341) | {"s436"}
    assert len(held) == 79
    o = close_t2(res)
    assert [(r["id"], r["trigger"], r["last_step"], r["cost"]["calls"]) for r in o["rework"]] == [
        ("t2.r1", "s134", "s438", 79)]
    assert o["rework_cost"]["calls"] == 79 and o["rework_cost"]["tokens"] == tokens_of(corpus_store, held)


def test_a_redos_last_step_is_the_last_the_work_did(corpus_store: Any, tmp_path: Path) -> None:
    """A redo of s136, a1's s438 and k1's Write s346 (the token store, after a1 answered) ends at
    s346, the last to happen, though s438 landed last: the round holds k1's calls s133-s344 (79:
    s344 asked for s346) and all of a1's three (s436, s439, s442), 82."""
    t2 = copy.deepcopy(T2)
    t2["rework"] = [{"attempt": ["s134"], "trigger": "tool", "trigger_step": "s134", "redo": ["s438", "s136", "s346"],
                     "cause": "agent_error"}]
    res, st = story(corpus_store, tmp_path, t2=t2)
    [r] = target(st, "t2")["rework"]
    assert (r["redo"], r["start"], r["end"]) == (["s136", "s438", "s346"], "s134", "s346")
    held = main_calls(corpus_store, 133, 344) | {"s436", "s439", "s442"}
    assert len(held) == 82
    o = close_t2(res)
    assert [(x["last_step"], x["cost"]["calls"]) for x in o["rework"]] == [("s346", 82)]
    assert o["rework_cost"]["tokens"] == tokens_of(corpus_store, held)


def test_an_attempt_in_a_sub_agent_comes_before_a_later_main_trigger(corpus_store: Any, tmp_path: Path) -> None:
    """t2's (made) round: a1's WebFetch s441 (the hooks page) the attempt, the Bash s368 (after the
    hook script s366 was written) the trigger, the Edit of hooks.json s371 the redo. a1 ran at s343,
    before s368: the round is kept. A redo in a1 after the trigger s368 is none: a1 had answered."""
    t2 = copy.deepcopy(T2)
    t2["rework"] = [{"attempt": ["s441"], "trigger": "tool", "trigger_step": "s368", "redo": ["s371"],
                     "cause": "agent_error"},
                    {"attempt": ["s366"], "trigger": "tool", "trigger_step": "s368", "redo": ["s441"],
                     "cause": "agent_error"}]
    res, st = story(corpus_store, tmp_path, t2=t2)
    assert [(r["id"], r["attempt"], r["trigger_step"], r["redo"]) for r in target(st, "t2")["rework"]] == [
        ("t2.r1", ["s441"], "s368", ["s371"])]
    assert ("left_out", "t2 rework 2", ORDER + "no step of the agent's work for the target after the trigger") in checks(st)
    # the round runs from s368 to s371: k1's calls s367 (which asked for s368) and s369 (for s371)
    assert [(r["trigger"], r["last_step"], r["cost"]["calls"]) for r in close_t2(res)["rework"]] == [("s368", "s371", 2)]



def between_by_hand(conv: Any) -> tuple[int, int]:
    """Check, walking by hand, that each step of a sub-task that one step started (its starter's
    stream one that one step started, up to the main stream) lies after each starting step of its
    chain and before the next step of the stream that starting step is in. (steps checked, of
    them in a sub-task's sub-task)"""
    at = work_order(conv)
    streams = {st.id: st for st in conv.streams}
    of_stream: dict[str, list[str]] = {}
    for s in conv.steps:
        of_stream.setdefault(s.stream, []).append(s.id)

    def chain(sid: str) -> list[str] | None:
        """The starting steps from ``sid`` up to the main stream; None when one is not single."""
        out: list[str] = []
        while sid != "m":
            st = streams[sid]
            if st.unattributed is not None or len(st.started_by) != 1 or st.started_by[0] in out:
                return None
            out.append(st.started_by[0])
            sid = conv.step(st.started_by[0]).stream
        return out

    seen = nested = 0
    for sid, steps in of_stream.items():
        up = chain(sid) if sid != "m" else None
        if not up:
            continue
        for x in steps:
            seen += 1
            nested += len(up) > 1
            for starter in up:
                giver = of_stream[conv.step(starter).stream]
                nxt = giver.index(starter) + 1
                assert at(starter) < at(x), (conv.id, x, starter)
                if nxt < len(giver):
                    assert at(x) < at(giver[nxt]), (conv.id, x, giver[nxt])
    return seen, nested


def test_every_sub_tasks_steps_lie_between_its_starting_step_and_the_givers_next(every_corpus_store: Any) -> None:
    seen = 0
    for r in every_corpus_store.conversations():
        seen += between_by_hand(window.build(every_corpus_store, r.id).conv)[0]
    assert seen > 1000


def test_a_sub_tasks_sub_task_lies_where_its_chain_began(store: Any, tmp_path: Path) -> None:
    """The corpus holds no sub-agent's sub-agent: the bundled example with a1 (started at s20)
    starting a2 at s33, a1's next step the call s34 (test_subtasks' nested example). a2's steps
    (s36-s40) landed after a1's whole file; they happened between s33 and s34, so between s20 and
    the main stream's next step s21."""
    from asz_core.collect import collect

    from .fixtures import nested_example

    collect([nested_example(tmp_path)], store)
    conv = window.build(store, "5e1f0c2a").conv
    a2 = [s.id for s in conv.steps if s.stream == "a2"]
    assert conv.stream("a2").started_by == ("s33",) and conv.stream("a1").started_by == ("s20",)
    assert a2 == ["s36", "s37", "s38", "s39", "s40"] and conv.step("s36").seq > conv.step("s35").seq  # after a1's file
    seen, nested = between_by_hand(conv)
    assert nested == len(a2) > 0
    at = work_order(conv)
    assert at("s20") < at("s33") < at("s36") < at("s40") < at("s34") < at("s21")
