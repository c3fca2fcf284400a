"""Owners and roll-ups on conversations built from events: loose work, sub-agents started by
sub-agents, streams no single talk started, and unknown and unpriced calls kept apart."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from asz_core.assembly import assemble
from asz_core.assembly import LOOSE, UNATTRIBUTED
from asz_core.ledger import Tally, build, check_owners, load_prices, rows
from asz_core.ledger_report import ledger_json, ledger_text
from asz_core.store import Round, StoredRecord

MODEL = "claude-haiku-4-5-20251001"  # $1 in, $5 out, $0.1 cache read, $1.25 cache write, $2 1h write
TS = "2026-01-10T10:00:00Z"


class Conv:
    """Records of one conversation, written the way an adapter's events say them."""

    def __init__(self) -> None:
        self.recs: list[StoredRecord] = []

    def add(self, stream: str, *events: dict[str, Any], ts: str | None = TS) -> None:
        n = len(self.recs) + 1
        self.recs.append(StoredRecord(n, f"r{n}", 1, 1, stream, "x", "f.jsonl", n, ts, tuple(events)))

    def person(self, text: str, stream: str = "main") -> None:
        self.add(stream, {"e": "input", "source": "person", "text": text, "size": len(text)})

    def call(self, cid: str, stream: str = "main", usage: dict[str, Any] | None = None, model: str | None = MODEL,
             ts: str | None = TS) -> None:
        u = {"input": 10, "output": 100, "cache_read": 1000, "cache_write": 200} if usage is None else usage
        self.add(stream, {"e": "call", "id": cid, "model": model, "usage": u or None, "final": True}, ts=ts)

    def agent(self, cid: str, tool: str, stream_key: str, stream: str = "main") -> None:
        self.add(stream, {"e": "tool_use", "call": cid, "id": tool, "name": "Task", "input": {}})
        self.add(stream, {"e": "tool_result", "id": tool, "error": False, "text": "done", "size": 4, "starts": stream_key})

    def child(self, key: str, prompt: str = "do it", by: tuple[str, ...] = ()) -> None:
        self.add(key, {"e": "stream", "kind": "child", "by": list(by)},
                 {"e": "input", "source": "agent", "text": prompt, "size": len(prompt)})

    def build(self):
        rnd = Round("c1", 1, "", "h" * 64, TS, len(self.recs))
        conv = assemble("c1", "claudecode", rnd, self.recs)
        return conv, build(conv, load_prices())


# each default call: 10 in, 1000 cache read, 200 cache write, 100 out at haiku 4.5 prices
ONE = Decimal("0.00001") + Decimal("0.0001") + Decimal("0.00025") + Decimal("0.0005")


def test_loose_calls_are_owned_by_their_stream_and_add_up() -> None:
    c = Conv()
    c.call("c0")  # before any input: no talk holds it
    c.person("hello")
    c.call("c1")
    conv, led = c.build()
    assert [o.id for o in led.owners] == ["m", "k1"]
    assert led.owners[0].kind == "stream" and led.loose.calls == 1
    assert [r.key for r in rows(led, "talk")] == ["k1", LOOSE]
    assert led.total.money == 2 * ONE
    assert list(check_owners(led)) == []


def test_a_talk_carries_the_sub_agents_it_started_as_deep_as_they_go() -> None:
    c = Conv()
    c.person("first")
    c.call("m1")
    c.agent("m1", "t1", "agent-A")
    c.child("agent-A")
    c.call("a1", "agent-A")
    c.agent("a1", "t2", "agent-B", stream="agent-A")  # a child agent starts its own child
    c.child("agent-B")
    c.call("b1", "agent-B")
    c.call("b2", "agent-B")
    c.person("second")
    c.call("m2")
    conv, led = c.build()
    k1, k2 = led.talks
    assert k1.own.calls == 1 and k1.with_subagents.calls == 4
    assert set(k1.streams) == {"a1", "a2"}
    assert k2.with_subagents.calls == 1 and k2.streams == ()
    assert k1.with_subagents.money == 4 * ONE
    assert led.subagents.calls == 3 and led.subagents.money == 3 * ONE
    by_stream = {s.id: s for s in led.streams}
    assert by_stream["a2"].root == "k1" and by_stream["a2"].tally.calls == 2
    assert list(check_owners(led)) == []
    data = ledger_json(led)
    assert [s["stream"] for s in data["subagent_streams"]] == ["a1", "a2"]
    assert data["subagent_streams"][1]["tally"]["money"] == str(2 * ONE)
    assert data["subagents"]["share"]["money"] == "0.600000"


def test_streams_no_single_talk_started_are_unattributed() -> None:
    c = Conv()
    c.person("one")
    c.call("m1")
    c.add("main", {"e": "tool_use", "call": "m1", "id": "t1", "name": "Task", "input": {}})
    c.person("two")
    c.call("m2")
    c.add("main", {"e": "tool_use", "call": "m2", "id": "t2", "name": "Task", "input": {}})
    c.child("agent-X", by=("t1", "t2"))  # two talks claim it
    c.call("x1", "agent-X")
    c.agent("x1", "t3", "agent-Y", stream="agent-X")  # started by an unattributed stream
    c.child("agent-Y")
    c.call("y1", "agent-Y")
    c.child("agent-Z")  # no call names it
    c.call("z1", "agent-Z")
    conv, led = c.build()
    reasons = {s.key: s.unattributed for s in conv.streams}
    assert reasons == {"main": None, "agent-X": "several starting steps", "agent-Y": "unattributed parent",
                       "agent-Z": "no starting step"}
    assert led.unattributed.calls == 3 and set(led.unattributed_streams) == {"a1", "a2", "a3"}
    assert [t.with_subagents.calls for t in led.talks if t.id in ("k1", "k2")] == [1, 1]
    keys = [r.key for r in rows(led, "talk")]
    assert keys[-1] == UNATTRIBUTED
    assert list(check_owners(led)) == []


def test_unknown_counts_and_unpriced_calls_are_shown_apart() -> None:
    c = Conv()
    c.person("go")
    c.call("known")
    c.call("no-usage", usage={})  # recorded no usage at all: every type unknown
    c.call("unfinished", usage={"input": 10, "output": None, "cache_read": 1000, "cache_write": 200})
    c.call("negative", usage={"input": -3, "output": 100, "cache_read": 1000, "cache_write": 200})
    c.call("no-model", model=None)
    c.call("other-model", model="some-model-nobody-prices")
    # a response written as two fragments, both with the streaming placeholder: output unknown
    for _ in range(2):
        c.add("main", {"e": "call", "id": "placeholder", "model": MODEL, "final": False,
                       "usage": {"input": 10, "output": 7, "cache_read": 1000, "cache_write": 200}})
    conv, led = c.build()
    t = led.total
    assert t.calls == 7
    assert t.unknown == {"input": 2, "output": 3, "cache_read": 1, "cache_write": 1}
    assert t.output_floor == 7 and t.tokens["output"] == 400  # the placeholder is kept apart, never added
    # tokens of what is known only, unpriced calls' tokens included
    assert t.tokens["input"] == 10 * 5 and t.tokens["output"] == 100 * 4 and t.tokens["cache_read"] == 1000 * 6
    assert t.unpriced == 2 and t.unpriced_reasons == {"no model": 1, "no price for some-model-nobody-prices": 1}
    assert t.unpriced_tokens["output"] == 200
    assert t.incomplete == 4  # priced, with a count unknown
    money_known = ONE + 0 + 2 * (ONE - Decimal("0.0005")) + (ONE - Decimal("0.00001"))
    assert t.money == money_known
    j = ledger_json(led)["total"]
    assert j["money_complete"] is False and j["unpriced_calls"] == 2 and j["unknown_calls"]["output"] == 3
    assert j["unknown_output_floor"] == 7
    assert ledger_text(led) is not None


def test_calls_are_priced_at_their_own_time_and_size() -> None:
    """The same tokens cost more in a call past the 200k tier, and a tier is per call: two calls
    of half the size each pay the base rate (opus 4.6 before 2026-03-13)."""
    big = {"input": 0, "output": 0, "cache_read": 300_000, "cache_write": 0}
    half = {"input": 0, "output": 0, "cache_read": 150_000, "cache_write": 0}
    c = Conv()
    c.person("go")
    c.call("big", usage=big, model="claude-opus-4-6", ts="2026-02-01T00:00:00Z")
    c.call("h1", usage=half, model="claude-opus-4-6", ts="2026-02-01T00:00:00Z")
    c.call("h2", usage=half, model="claude-opus-4-6", ts="2026-02-01T00:00:00Z")
    c.call("later", usage=big, model="claude-opus-4-6", ts="2026-04-01T00:00:00Z")
    conv, led = c.build()
    money = {x.step: x.price.money for x in led.calls}
    s = [x.step for x in led.calls]
    assert money[s[0]] == Decimal("0.3")   # 300k at $1/M (tier price)
    assert money[s[1]] + money[s[2]] == Decimal("0.15")  # 2 x 150k at $0.5/M
    assert money[s[3]] == Decimal("0.15")  # 300k at $0.5/M: no tier from 2026-03-13
    assert Tally.of(led.calls).money == Decimal("0.6")


def test_days_are_utc_days() -> None:
    from asz_core.ledger import day_of

    assert day_of("2026-01-01T23:30:00-02:00") == "2026-01-02"
    assert day_of("2026-01-01T23:30:00Z") == "2026-01-01"
    assert day_of(None) is None and day_of("yesterday") is None
    c = Conv()
    c.person("go")
    c.call("a", ts="2026-01-01T10:00:00Z")
    c.call("b", ts="2026-01-02T10:00:00Z")
    c.call("c", ts=None, model="claude-haiku-4-5-20251001")
    conv, led = c.build()
    assert [(r.key, r.tally.calls) for r in rows(led, "day")] == [("(no time)", 1), ("2026-01-01", 1), ("2026-01-02", 1)]
    assert [(r.key, r.tally.calls) for r in rows(led, "model")] == [("claude-haiku-4-5-20251001", 3)]
