"""Window rules (spec "A run", second paragraph) on corpus conversations and on a small session
whose window end cuts a sub-agent mid-way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from asz_core import ledger as L
from asz_core import window as W
from asz_core.api import load

from . import winhelp


def _talk_end(conv: Any, kid: str) -> int:
    return max(conv.step(s).records[-1] for s in conv.talk(kid).steps)


def _check_ids_stable(full: Any, w: W.Window) -> None:
    """Every step of the window's view is the step of the same id at the head, with the records
    it had landed by the cut."""
    for s in w.conv.steps:
        f = full.step(s.id)
        assert (f.kind, f.stream, f.talk, f.seq) == (s.kind, s.stream, s.talk, s.seq)
        assert s.records == tuple(r for r in f.records if r <= w.cut)
    assert all(r <= w.cut for s in w.conv.steps for r in s.records)


def test_whole_conversation(corpus_store: Any) -> None:
    for cid in ("258c7280", "fa812bfe"):
        full = load(cid, store=corpus_store)
        w = W.build(corpus_store, cid)
        assert w.whole and w.before == () and w.judged == tuple(t.id for t in full.main_talks)
        assert w.steps == {s.id for s in full.steps}
        assert w.streams == {st.id for st in full.streams}  # unattributed helpers too
        assert w.cut == max(r.seq for r in corpus_store.records(full.id, full.round.number))


def test_talk_window_with_subtasks_fa812bfe(corpus_store: Any) -> None:
    full = load("fa812bfe", store=corpus_store)
    w = W.build(corpus_store, "fa812bfe", None, "k2")
    assert (w.judged, w.before) == (("k2",), ("k1",))
    rts = W.roots(full)
    subs = {sid for sid, r in rts.items() if r == "k2"}
    assert subs and subs <= w.streams
    # the end is the last record of the selected work: the talk and every sub-task it started
    ends = [_talk_end(full, "k2")] + [s.records[-1] for s in full.steps if s.stream in subs]
    assert w.cut == max(ends)
    # the earlier talk's sub-task is context (before); the unattributed helper is not shown
    assert {sid for sid, r in rts.items() if r == "k1"} <= w.streams
    assert not any(rts[s] == "unattributed" for s in w.streams if s != "m")
    for t in w.shown_talks():
        assert w.mark(t.id) in ("judged", "before")
    assert w.mark("k1") == "before" and w.mark("k2") == "judged"
    _check_ids_stable(full, w)
    # cost of the judged talk: the same as at the head (its work all landed by the cut)
    p = L.load_prices(None)
    a = {t.id: t.with_subagents for t in L.build(full, p).talks}["k2"]
    b = {t.id: t.with_subagents for t in L.build(w.conv, p).talks}["k2"]
    assert (a.calls, a.tokens, a.money) == (b.calls, b.tokens, b.money)


def test_first_talk_window_258c7280(corpus_store: Any) -> None:
    full = load("258c7280", store=corpus_store)
    w = W.build(corpus_store, "258c7280", None, "k1..k1")
    assert (w.judged, w.before) == (("k1",), ())
    assert "k2" not in w.talks
    assert not any(full.step(s).talk == "k2" for s in w.steps)
    assert all(W.roots(w.conv).get(s) == "k1" for s in w.streams if s != "m")
    _check_ids_stable(full, w)


def test_inline_sub_agents_adcd3a4d(corpus_store: Any) -> None:
    """A 2.0 session whose sub-agents are inline sidechain blocks in the main file."""
    full = load("adcd3a4d", store=corpus_store)
    mains = [t.id for t in full.main_talks]
    a, b = mains[3], mains[4]  # k5..k8: k5 started two inline sub-agents
    w = W.build(corpus_store, "adcd3a4d", None, f"{a}..{b}")
    assert w.judged == (a, b) and w.before == tuple(mains[:3])
    rts = W.roots(full)
    assert {s for s, r in rts.items() if r in (a, b)} <= w.streams
    later = {s for s, r in rts.items() if r in mains[5:]}
    assert later and not (later & w.streams)
    assert w.cut == max([_talk_end(full, k) for k in (a, b)] + [s.records[-1] for s in full.steps if rts.get(s.stream) in (a, b)])
    assert not w.conv.loose or not (set(w.conv.loose) & w.steps)  # loose work only in whole runs
    _check_ids_stable(full, w)


def test_time_range_selects_whole_talks(corpus_store: Any) -> None:
    full = load("adcd3a4d", store=corpus_store)
    mains = full.main_talks
    w = W.build(corpus_store, "adcd3a4d", None, f"{mains[3].start}..{mains[5].start}")
    assert w.judged == (mains[3].id, mains[4].id)
    w2 = W.build(corpus_store, "adcd3a4d", None, f"{mains[9].start}..")
    assert w2.judged == tuple(t.id for t in mains[9:])


@pytest.mark.parametrize("spec", ["k999", "k5..k2", "1999-01-01..1999-01-02", "k3 to k5", "2026-13-45..", "k3..k3"])
def test_bad_windows(corpus_store: Any, spec: str) -> None:
    # adcd3a4d has no main talk k3 (its third talk is a sub-agent's): a child talk is no window
    with pytest.raises(W.WindowError):
        W.build(corpus_store, "adcd3a4d", None, spec)


def test_window_end_cuts_a_sub_agent(tmp_path: Path, store: Any) -> None:
    """k1 starts a background agent; the person asks k2 while it runs. The window k2 ends with
    k2's reply: the agent (k1's, context) keeps only what it had written by then."""
    cid = winhelp.straddle(tmp_path, store)
    full = load(cid, store=store)
    whole = W.build(store, cid)
    w = W.build(store, cid, None, "k2")
    assert (w.judged, w.before) == (("k2",), ("k1",))
    assert w.cut == _talk_end(full, "k2") and w.cut_records == 3
    agent_full = [s for s in full.steps if s.stream == "a1"]
    agent_win = [s for s in w.conv.steps if s.stream == "a1"]
    assert "a1" in w.streams and w.mark("k3") == "before"
    assert len(agent_win) < len(agent_full)
    tool_full = next(s for s in agent_full if s.kind == "tool")
    tool_win = next(s for s in agent_win if s.kind == "tool")
    assert (tool_full.status, tool_win.status) == ("returned", "no_result")  # its result came later
    assert tool_win.text == "" and tool_win.size == 0
    call_full = next(s for s in agent_full if s.kind == "model_call")
    call_win = next(s for s in agent_win if s.kind == "model_call")
    assert call_full.usage.output == 50 and call_win.usage.output is None  # still running: output unknown
    assert call_win.usage.input == call_full.usage.input  # what it had read counts
    assert not any("LATE" in s.text for s in w.conv.steps)
    _check_ids_stable(full, w)
    # the whole conversation shows it all
    assert whole.cut == max(s.records[-1] for s in full.steps)
    # an earlier head: exactly the first round
    early = W.build(store, cid, "r1")
    assert early.round.number == 1 and early.cut == 8
    # at r1, k2 is still running: a talk that ran past the end ends there
    w1 = W.build(store, cid, "r1", "k2")
    t = w1.conv.step(w1.conv.talk("k2").steps[-1])
    assert t.kind == "tool" and t.status == "no_result"


def test_window_spec_parse() -> None:
    assert W.WindowSpec.parse(None).kind == "all"
    assert W.WindowSpec.parse("k3-k7") == W.WindowSpec("talks", "k3", "k7")
    assert W.WindowSpec.parse("k4") == W.WindowSpec("talks", "k4", "k4")
    assert W.WindowSpec.parse("2026-01-01T00:00:00Z..") == W.WindowSpec("time", "2026-01-01T00:00:00Z", None)
    with pytest.raises(W.WindowError):
        W.WindowSpec.parse("yesterday")


def test_records_at_a_cut(corpus_store: Any) -> None:
    """The view at a cut is the head's records up to it (no record here has a second version)."""
    full = load("fa812bfe", store=corpus_store)
    recs = corpus_store.records(full.id, full.round.number)
    cut = recs[len(recs) // 2].seq
    assert W.records_at(corpus_store, full.id, full.round.number, cut) == [r for r in recs if r.seq <= cut]
    assert W.raw_at(corpus_store, full.id, cut, full.round.number, cut) == corpus_store.raw(full.id, cut)
    with pytest.raises(W.WindowError):
        W.raw_at(corpus_store, full.id, cut + 1, full.round.number, cut)
