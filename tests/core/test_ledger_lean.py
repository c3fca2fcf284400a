"""The ledger's summaries are made from a lean view of the records (``assembly.calls_of``, the
first pass of assembly without the rest) rather than from the assembled conversation: every
summary must be what ``summarize(build(assemble(...)))`` gives, to the byte (the JSON keeps the
order of money parts, so the order calls are added in counts too)."""

from __future__ import annotations

from typing import Any

import orjson

from asz_core.assembly import assemble, calls_of
from asz_core.ledger import _summary_dump, build, load_prices, summarize, summary_of
from asz_core.store import Round

from .test_ledger_figures import store  # noqa: F401 - the corpus of all four runtimes, collected (a fixture)
from .test_ledger_owners import MODEL, TS, Conv


def _both(store: Any, row: Any) -> tuple[bytes, bytes]:
    book = load_prices()
    conv = assemble(row.id, row.runtime, row.head, store.records(row.id, row.head.number), store.copied_calls(row.id))
    full = orjson.dumps(_summary_dump(summarize(build(conv, book), conv)))
    view = calls_of(row.id, row.runtime, row.head, store.records(row.id, row.head.number, lean=True),
                    store.copied_calls(row.id))
    return full, orjson.dumps(_summary_dump(summary_of(view, book)))


def test_every_corpus_summary_made_lean_is_the_assembled_one_to_the_byte(store: Any) -> None:
    rows = [r for r in store.conversations() if r.head is not None]
    assert len(rows) > 20
    differ = [r.id for r in rows if (pair := _both(store, r))[0] != pair[1]]
    assert not differ, f"{len(differ)} summaries differ, e.g. {differ[:3]}"


def _lean_and_full(c: Conv, copies: dict[str, str] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    rnd = Round("c1", 1, "", "h" * 64, TS, len(c.recs))
    conv = assemble("c1", "claudecode", rnd, c.recs, copies)
    full = _summary_dump(summarize(build(conv, load_prices()), conv))
    rows = [(r.seq, r.key, r.stream, r.ts, r.events) for r in c.recs]
    lean = _summary_dump(summary_of(calls_of("c1", "claudecode", rnd, rows, copies), load_prices()))
    return full, lean


def test_owners_talks_replays_copies_and_inputs_are_counted_as_assembly_counts_them() -> None:
    c = Conv()
    c.add("main", {"e": "input", "source": "queued", "text": "typed early", "size": 11})  # opens a talk: none open
    c.call("c0", usage={"input": 10, "output": 5})  # no cache: its parts are input and output only
    c.person("/clear")
    c.add("main", {"e": "input", "source": "command", "text": "/clear", "size": 6})  # echoed: one input
    c.add("main", {"e": "input", "source": "queued", "text": "while it works", "size": 14})  # joins the talk
    c.agent("c1", "t1", "agent-x")
    c.child("agent-x", by=("t1",))
    c.call("c2", stream="agent-x", usage={"input": 10, "output": 1, "cache_read": 5, "cache_write": 7,
                                          "cache_write_1h": 7})  # the 1-hour part first seen in a child
    c.add("agent-x", {"e": "call", "id": "c3", "model": MODEL, "response": "r1",
                      "usage": {"input": 1, "output": 2, "cache_read": 3, "cache_write": 0}})  # output unknown
    c.add("main", {"e": "call", "id": "c4", "model": MODEL, "response": "r1", "final": True,
                   "usage": {"input": 1, "output": 2, "cache_read": 3, "cache_write": 0}})  # c3 replays it
    c.call("c5", model="no-such-model-anywhere")
    c.call("c6", ts=None)
    c.call("c7")  # another conversation landed it first
    c.add("helper-1", {"e": "stream", "kind": "helper"})
    c.call("c8", stream="helper-1")
    c.add("agent-y", {"e": "stream", "kind": "child", "by": []})  # started by nothing: unattributed
    c.call("c9", stream="agent-y", ts="2026-01-11T23:59:59+05:00")
    full, lean = _lean_and_full(c, {"c7": "other"})
    assert full["copies"] == 1 and full["replays"] == 1 and full["talks"] == 2 and full["streams"] == 3
    assert full["first_input"] == "typed early"
    assert orjson.dumps(lean) == orjson.dumps(full)


def test_a_sub_agents_last_output_from_its_parent_and_loose_work_are_counted_alike() -> None:
    c = Conv()
    c.call("c0")  # loose: before any input
    c.add("main", {"e": "tool_use", "call": "c1", "id": "t1", "name": "Task", "input": {}})
    c.child("agent-x", by=("t1",))
    c.add("agent-x", {"e": "call", "id": "c2", "model": MODEL, "usage": {"input": 4, "output": 1, "cache_read": 9,
                                                                       "cache_write": 0}})
    c.add("main", {"e": "tool_result", "id": "t1", "error": False, "text": "", "size": 0, "starts": "agent-x",
                   "agent_usage": {"input": 4, "output": 77, "cache_read": 9, "cache_write": 0}})
    c.add("main", {"e": "input", "source": "command", "text": "/review the parser", "size": 18})
    c.call("c3")
    full, lean = _lean_and_full(c)
    assert full["total"]["tokens"]["output"] == 100 + 77 + 100 and full["first_input"] == "/review the parser"
    assert orjson.dumps(lean) == orjson.dumps(full)


def test_no_records_at_all() -> None:
    full, lean = _lean_and_full(Conv())
    assert orjson.dumps(lean) == orjson.dumps(full)
