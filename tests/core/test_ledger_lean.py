"""The ledger's summaries are made from a lean view of the records (``assembly.calls_of``, the
first pass of assembly without the rest) rather than from the assembled conversation: every
summary must be what ``summarize(build(assemble(...)))`` gives, to the byte (the JSON keeps the
order of money parts, so the order calls are added in counts too)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from asz_core.assembly import assemble, calls_of
from asz_core.lean_events import RULE, lean
from asz_core.ledger import _summary_dump, build, load_prices, summarize, summary_of
from asz_core.store import Round, StoredRecord

from .helpers import assert_lean_rows_agree, db_rows, half_then_rest
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
    for r in rows:  # read from the lean events collect kept (not the records' whole events)
        assert_lean_rows_agree(store, r.id, r.head.number)
    differ = [r.id for r in rows if (pair := _both(store, r))[0] != pair[1]]
    assert not differ, f"{len(differ)} summaries differ, e.g. {differ[:3]}"


def test_the_lean_view_of_the_lean_events_is_the_lean_view_of_the_whole_ones(store: Any) -> None:
    """Every figure the lean view gives, not only the summaries': the lean events keep all it reads."""
    rows = [r for r in store.conversations() if r.head is not None]
    for r in rows:
        recs = store.records(r.id, r.head.number)
        copies = store.copied_calls(r.id)
        whole = calls_of(r.id, r.runtime, r.head, [(x.seq, x.key, x.stream, x.ts, x.events) for x in recs], copies)
        kept = calls_of(r.id, r.runtime, r.head, [(x.seq, x.key, x.stream, x.ts, lean(x.events)) for x in recs], copies)
        assert kept == whole, r.id


def test_lean_events_of_odd_shapes_are_read_as_the_whole_ones_would_be() -> None:
    c = Conv()
    c.add("main", {"e": "change", "tool": "t0"}, {"e": "execution", "tool": "t0"})  # captured: opens no stream
    c.add("agent-z", {"e": "change", "tool": "t0"}, {"e": "text", "call": "x", "text": "hi"})  # not only captured
    c.add("agent-z", {"e": "stream", "kind": "helper", "by": ["t9"], "after": "r1", "group": "g"})
    c.add("main", {"e": "input", "source": "person", "text": "go", "size": 2})
    c.add("main", {"e": "tool_use", "call": "c1", "id": "t1", "name": "Task", "input": {"a": "b" * 5000}})
    c.add("main", {"e": "tool_use", "call": "c1", "name": "Task"})  # no id
    c.add("main", {"e": "input", "source": "person", "text": "go", "size": 2}, {"e": ["not", "hashable"]})
    c.call("c1")
    c.add("main", {"e": "tool_result", "id": "t1", "error": True, "text": "x" * 9000, "size": 9000, "starts": "agent-z",
                   "agent_usage": {"input": 1}, "launch": True})
    c.add("main", {"e": "starts", "id": "t1", "stream": "agent-z"}, {"e": "notice", "kind": "hook", "text": "n"},
          {"e": "summary", "text": "s"}, {"e": "thinking", "call": "c1", "text": "t"}, {"e": "turn_end"})
    rnd = Round("c1", 1, "", "h" * 64, TS, len(c.recs))
    whole = calls_of("c1", "claudecode", rnd, [(r.seq, r.key, r.stream, r.ts, r.events) for r in c.recs])
    kept = [lean(r.events) for r in c.recs]
    assert kept[0] == ({"e": "change"},) and kept[1] == () and kept[6] == c.recs[6].events  # odd: kept whole
    assert kept[4] == ({"e": "tool_use", "id": "t1"},) and kept[8] == ({"e": "tool_result", "id": "t1", "starts": "agent-z",
                                                                          "agent_usage": {"input": 1}},)
    assert len(orjson.dumps(kept)) < 1000  # the request and the result's text are not kept
    assert calls_of("c1", "claudecode", rnd, [(r.seq, r.key, r.stream, r.ts, k) for r, k in zip(c.recs, kept)]) == whole
    assert whole.streams == (("main", "main"), ("agent-z", "helper")) and whole.first_input == "go"
    # what the lean view fails on is kept, so it fails on the lean events alike
    assert lean(({"e": "input", "text": "a"}, "not a dict")) == ({"e": "input", "text": "a"}, "not a dict")
    assert lean(({"e": "call", "model": "m"},)) == ({"e": "call", "model": "m"},)


def _tamper(path: Any, sql: str, args: tuple[Any, ...] = ()) -> None:
    import sqlite3

    con = sqlite3.connect(path)
    try:
        con.execute(sql, args)
        con.commit()
    finally:
        con.close()


def test_lean_events_kept_by_another_rule_are_never_read(corpus_store_copy: Any) -> None:
    st = corpus_store_copy
    row = max((r for r in st.conversations() if r.head is not None), key=lambda r: r.head.records)
    want = _both(st, row)[0]
    # another rule's lean events (of other figures, here made up) beside this one's: never read
    _tamper(st.path, "UPDATE leans SET rule = 'another', rows = '[]' WHERE conversation = ?", (row.id,))
    got = st.records(row.id, row.head.number, lean=True)
    assert [g[0] for g in got] == [r.seq for r in st.records(row.id, row.head.number)]  # from the records themselves
    assert _both(st, row) == (want, want)


def test_a_round_written_without_lean_events_is_read_from_the_records(tmp_path: Any) -> None:
    """A round some other asz wrote (no lean events): the view is read from the records, all of it."""
    from asz_core.collect import collect
    from asz_core.store import Store

    f, rest = half_then_rest(tmp_path / "p")
    st = Store.open(tmp_path / "home")
    (r1,) = collect([f], st).rounds
    with f.open("ab") as out:
        out.write(rest)
    (r2,) = collect([f], st).rounds
    assert (r1.number, r2.number) == (1, 2)
    row = next(r for r in st.conversations() if r.id == r2.conversation)
    want = _both(st, row)
    assert want[0] == want[1]
    assert_lean_rows_agree(st, row.id, 2)
    # round 2 as an asz without lean events wrote it; round 1's lean events made up: not read alone
    _tamper(st.path, "DELETE FROM leans WHERE conversation = ? AND round = 2", (row.id,))
    _tamper(st.path, "UPDATE leans SET rows = '[]' WHERE conversation = ?", (row.id,))
    assert [g[0] for g in st.records(row.id, 2, lean=True)] == [r.seq for r in st.records(row.id, 2)]
    assert _both(st, row) == want
    assert db_rows(st.path, "SELECT count(*) FROM leans WHERE conversation = ? AND rule = ?", (row.id, RULE))[0][0] >= 1
    st.close()


@pytest.mark.parametrize("stamps, want", [
    # text order is not time order once offsets differ: 10:00+02:00 is 08:00 UTC
    (["2025-01-01T09:00:00.000Z", "2025-01-01T10:00:00+02:00", "2025-01-01T08:30:00Z"],
     ("2025-01-01T08:00:00.000000Z", "2025-01-01T09:00:00.000000Z")),
    # a time without an offset is UTC, beside times with one
    (["2025-01-01T09:00:00Z", "2025-01-01T07:00:00", "2025-01-01T23:00:00-05:00"],
     ("2025-01-01T07:00:00.000000Z", "2025-01-02T04:00:00.000000Z")),
    (["2025-03-01T00:00:00", "2025-02-01T12:00:00"], ("2025-02-01T12:00:00.000000Z", "2025-03-01T00:00:00.000000Z")),
    # what is no time is left out: not ISO-8601, not text, empty
    (["yesterday", 5, "", None, True, "2025-05-05T05:05:05.5Z", "2025-13-01T00:00:00Z"],
     ("2025-05-05T05:05:05.500000Z", "2025-05-05T05:05:05.500000Z")),
    (["soon", None, 7], (None, None)),
    # an offset that takes a time past year 1 or 9999 in UTC is no instant (not a crash)
    (["0001-01-01T00:00:00+01:00", "2025-01-01T10:00:00Z", "9999-12-31T23:59:59-01:00"],
     ("2025-01-01T10:00:00.000000Z", "2025-01-01T10:00:00.000000Z")),
    # within a day of the calendar's ends in UTC (parsed fine, but some zone has no day for it)
    (["9999-12-31T23:30:00Z", "2025-01-01T10:00:00Z", "0001-01-01T12:00:00Z"],
     ("2025-01-01T10:00:00.000000Z", "2025-01-01T10:00:00.000000Z")),
    ([None], (None, None)),
])
def test_a_conversations_span_is_its_earliest_and_latest_instant(stamps: list[Any], want: tuple[Any, Any],
                                                                  monkeypatch: Any) -> None:
    # Its first and last activity, the listing's and the --since/--until shortcut's: by instant,
    # whatever the times' offsets, in the lean view as in the assembled conversation. On a
    # machine west of UTC, so a time without an offset read as local would show.
    import time

    rows = [(i, f"r{i}", "main", ts, ({"e": "input", "source": "person", "text": f"hi {i}"},)) for i, ts in enumerate(stamps, 1)]
    rnd = Round("c1", 1, "", "h" * 64, TS, len(rows))
    recs = [StoredRecord(seq, key, 1, 1, stream, "line", "f", seq, ts, events) for seq, key, stream, ts, events in rows]
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        assert calls_of("c1", "rt", rnd, rows).span == want
        assert assemble("c1", "rt", rnd, recs).span == want
    finally:
        monkeypatch.undo()
        time.tzset()
