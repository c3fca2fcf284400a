"""The ledger: every model call of a conversation counted once, priced on its own, and owned.

Owners. Each call has one owner: the talk that contains it, or, for a call no talk contains
(main-stream work before the first input), its stream. The owners add up to the conversation
exactly, because each call is counted under one of them and nowhere else.

Roll-up. A main talk's cost with its child agents adds the child streams that talk alone
started, followed through the starts relations as deep as they go (a child agent can start
child agents of its own). A child stream no single talk can be shown to have started (no
starting step, several, or a parent that is itself unattributed: ``Stream.unattributed``) is
unattributed; streams started from loose main-stream work roll up to the loose work. So
main talks with their sub-agents + loose + unattributed = the conversation, exactly.

Counts. A count the record does not give is unknown: it is never added as 0, and the ledger says
how many calls have each type unknown. A call with no model, or no price for its model, is
unpriced: its tokens still count, its money is missing, and the ledger counts it apart.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import importlib.util
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
from decimal import Decimal

import attrs
from attrs import define, field, frozen

from .errors import AszError
from .gcpause import no_gc
from .price_file import PriceFile
from .records import PARTS, USAGE_TYPES, Usage
from .textclip import one_line
from .times import day, instant, utc_text

if TYPE_CHECKING:  # assembly only where calls are counted from a record: the ledger of all reads kept summaries
    from .assembly import Calls, Conversation, Step
    from .pricing import CallPrice, Prices  # and pricing only where a call is priced

TOKEN_KEYS = (*USAGE_TYPES, "cache_write_5m", "cache_write_1h")
"""Token sums a tally keeps: the four types, and the part of cache writes the runtime split."""

BY = ("talk", "stream", "model", "day", "month")


@frozen
class CallCost:
    """One model call: where it is, who owns it, what it consumed and what it cost."""

    step: str
    call: str | None
    """The runtime's id of the call (Claude Code: ``message.id:requestId``)."""
    stream: str
    talk: str | None
    owner: str
    """The talk that contains it, or its stream when no talk does."""
    root: str
    """What it rolls up to: a main talk id, ``loose`` or ``unattributed``."""
    model: str | None
    ts: str | None
    usage: Usage
    output_floor: int | None
    price: CallPrice


_ZERO = Decimal(0)


@define
class Tally:
    """A sum of calls. Unknown counts and unpriced calls are kept apart, never folded into 0."""

    calls: int = 0
    tokens: dict[str, int] = field(factory=lambda: dict.fromkeys(TOKEN_KEYS, 0))
    """Sums of the counts that are known."""
    unknown: dict[str, int] = field(factory=lambda: dict.fromkeys(USAGE_TYPES, 0))
    """How many calls have each type unknown."""
    output_floor: int = 0
    """Calls whose output is unknown: the sum of the largest streaming values their fragments
    showed. A lower bound of their output, never added to ``tokens``."""
    money: Decimal = field(factory=lambda: Decimal(0))
    """The money of the priced calls' known counts."""
    parts: dict[str, Decimal] = field(factory=dict)
    unpriced: int = 0
    """Calls with no price (no model, or no price for their model); their tokens are in ``tokens``."""
    unpriced_tokens: dict[str, int] = field(factory=lambda: dict.fromkeys(USAGE_TYPES, 0))
    unpriced_reasons: dict[str, int] = field(factory=dict)
    incomplete: int = 0
    """Priced calls with a count unknown: ``money`` holds their known part only."""
    floor_money: Decimal = field(factory=lambda: Decimal(0))
    """The price of the priced calls' output floors (``CallPrice.floor_money``), apart from ``money``."""

    def add(self, c: CallCost) -> None:
        self.count(c.usage, c.output_floor, c.price)

    def count(self, u: Usage, output_floor: int | None, p: CallPrice) -> None:
        """Add one call: its counts, its streaming floor and its price."""
        self.calls += 1
        tok, unknown = self.tokens, self.unknown
        # The four USAGE_TYPES, written out: this runs for every call of every ledger.
        if u.input is None:
            unknown["input"] += 1
        else:
            tok["input"] += u.input
        if u.output is None:
            unknown["output"] += 1
        else:
            tok["output"] += u.output
        if u.cache_read is None:
            unknown["cache_read"] += 1
        else:
            tok["cache_read"] += u.cache_read
        if u.cache_write is None:
            unknown["cache_write"] += 1
        else:
            tok["cache_write"] += u.cache_write
        if u.output is None and output_floor:
            self.output_floor += output_floor
        if u.cache_write_5m is not None:
            tok["cache_write_5m"] += u.cache_write_5m
        if u.cache_write_1h is not None:
            tok["cache_write_1h"] += u.cache_write_1h
        if p.money is None:
            self.unpriced += 1
            reason = p.unpriced or "unpriced"
            self.unpriced_reasons[reason] = self.unpriced_reasons.get(reason, 0) + 1
            for k in USAGE_TYPES:
                v = getattr(u, k)
                if v is not None:
                    self.unpriced_tokens[k] += v
            return
        self.money += p.money
        if p.floor_money:
            self.floor_money += p.floor_money
        parts = self.parts
        for k, v in p.parts:
            parts[k] = (parts[k] if k in parts else _ZERO) + v
        if not p.complete:
            self.incomplete += 1

    def merge(self, o: Tally) -> Tally:
        if not o.calls:
            return self  # a tally of no call holds nothing to add (a history's sub-agent and helper sums mostly)
        self.calls += o.calls
        self.money += o.money
        if o.floor_money:
            self.floor_money += o.floor_money
        self.unpriced += o.unpriced
        self.incomplete += o.incomplete
        self.output_floor += o.output_floor
        a = self.tokens
        for k, v in o.tokens.items():
            a[k] = a.get(k, 0) + v
        # Most calls have every count known and a price: these are 0 but for the few that do not.
        if o.incomplete or o.output_floor or o.unpriced:
            for a, b in ((self.unknown, o.unknown), (self.unpriced_tokens, o.unpriced_tokens),
                         (self.unpriced_reasons, o.unpriced_reasons)):
                for k, v in b.items():
                    a[k] = a.get(k, 0) + v
        parts = self.parts
        for k, v in o.parts.items():
            parts[k] = parts[k] + v if k in parts else v
        return self

    def copy(self) -> Tally:
        """Another tally of the same calls (its own dicts, in the same order)."""
        return Tally(**{f.name: dict(v) if type(v) is dict else v for f in _TALLY_FIELDS for v in (getattr(self, f.name),)})

    @property
    def money_complete(self) -> bool:
        """Every call of it priced, on all its counts: ``money`` is all of its money."""
        return self.unpriced == 0 and self.incomplete == 0

    @property
    def money_bound(self) -> Decimal:
        """A lower bound of the money: the known counts' money and the priced output floors.
        Equal to ``money`` (and exact) when ``money_complete``."""
        return self.money + self.floor_money

    @property
    def token_sum(self) -> int:
        """The four known types added up (a call's cache writes are not counted twice)."""
        return sum(self.tokens[k] for k in USAGE_TYPES)

    @classmethod
    def of(cls, calls: Iterable[CallCost]) -> Tally:
        t = cls()
        for c in calls:
            t.add(c)
        return t

    @classmethod
    def sum(cls, tallies: Iterable[Tally]) -> Tally:
        t = cls()
        for x in tallies:
            t.merge(x)
        return t


_TALLY_FIELDS = attrs.fields(Tally)


def in_order(t: Tally) -> Tally:
    """``t`` with its money parts in :data:`PARTS` order and its unpriced reasons by name (in
    place): a sum of many tallies says them in the same order however it was added up (the ledger
    of all's rows and totals, from the summaries or from :mod:`.ledger_rollup`)."""
    if len(t.parts) > 1:
        t.parts = {k: t.parts[k] for k in sorted(t.parts, key=_part_place)}
    if len(t.unpriced_reasons) > 1:
        t.unpriced_reasons = {k: t.unpriced_reasons[k] for k in sorted(t.unpriced_reasons)}
    return t


def _part_place(k: str) -> tuple[int, str]:
    return (PARTS.index(k), "") if k in PARTS else (len(PARTS), k)


@frozen
class StreamRow:
    id: str
    key: str
    kind: str
    """main, child or helper."""
    root: str
    """The main talk it rolls up to, ``loose``, ``unattributed`` (or ``m`` for the main stream)."""
    started_by: tuple[str, ...]
    parent: str | None
    unattributed: str | None
    """Why no single talk can be shown to have started it (assembly's reason)."""
    models: tuple[str, ...]
    tally: Tally


@frozen
class TalkRow:
    """A main talk: its own calls, and with the child streams it alone started."""

    id: str
    start: str | None
    end: str | None
    own: Tally
    with_subagents: Tally
    streams: tuple[str, ...]
    """The child streams rolled into it, as deep as they go."""


@frozen
class OwnerRow:
    id: str
    kind: str
    """``talk`` or ``stream`` (the calls of a stream no talk contains)."""
    stream: str
    tally: Tally


@frozen
class Ledger:
    conversation: str
    runtime: str
    round: int
    head: str
    prices: PriceFile
    calls: tuple[CallCost, ...]
    owners: tuple[OwnerRow, ...]
    talks: tuple[TalkRow, ...]
    streams: tuple[StreamRow, ...]
    loose: Tally
    """Calls no talk contains, with the streams that loose work started."""
    loose_streams: tuple[str, ...]
    unattributed: Tally
    """Child streams no single talk can be shown to have started."""
    unattributed_streams: tuple[str, ...]
    total: Tally
    copies: dict[str, int] = field(factory=dict)
    """Calls this conversation holds that another conversation landed first (a branched or copied
    session): that conversation -> how many. Counted there, in none of the tallies here."""
    replays: int = 0
    """Calls that replay another call of this conversation (a /btw side question re-sending its
    parent's messages): counted once, as the call they replay."""

    @property
    def subagents(self) -> Tally:
        """Calls of child streams (sub-agents), wherever they roll up."""
        return Tally.sum(s.tally for s in self.streams if s.kind == "child")

    @property
    def helpers(self) -> Tally:
        """Calls of helper streams (compaction, warm-up), apart from sub-agents."""
        return Tally.sum(s.tally for s in self.streams if s.kind == "helper")

    @property
    def by_model(self) -> dict[str, Tally]:
        return {r.key: r.tally for r in group_calls(self.calls, model_key)}

    @property
    def by_day(self) -> dict[str, Tally]:
        return {r.key: r.tally for r in group_calls(self.calls, day_key)}


def build(conv: Conversation, prices: Prices, keep: Callable[[Step], bool] | None = None) -> Ledger:
    """The ledger of one assembled conversation, priced with ``prices``; with ``keep``, of the
    model calls it keeps only (``--since``/``--until``: the calls made in a span of time)."""
    from .assembly import LOOSE, UNATTRIBUTED, stream_roots

    roots = stream_roots(conv)
    calls: list[CallCost] = []
    by_owner: dict[str, Tally] = {}
    owner_of: dict[str, tuple[str, str]] = {}  # owner -> (stream, root)
    models: dict[str, set[str]] = {}
    copies: dict[str, int] = {}
    replays = 0
    price = prices.price
    for s in conv.steps:
        if s.kind != "model_call" or (keep is not None and not keep(s)):
            continue
        if s.copy_of is not None:
            copies[s.copy_of] = copies.get(s.copy_of, 0) + 1
            continue
        if s.replay_of is not None:
            replays += 1
            continue
        owner = s.talk or s.stream
        o = owner_of.get(owner)
        if o is None:
            root = s.talk if (s.stream == "m" and s.talk) else (LOOSE if s.stream == "m" else roots[s.stream])
            o = owner_of[owner] = (s.stream, root)
            by_owner[owner] = Tally()
        c = CallCost(s.id, s.call, s.stream, s.talk, owner, o[1], s.model, s.ts, s.usage or _NO_USAGE, s.output_floor,
                     price(s.model, s.usage, s.ts, s.output_floor))
        calls.append(c)
        by_owner[owner].add(c)
        if s.model:
            models.setdefault(s.stream, set()).add(s.model)

    # Each owner lies in one stream and rolls up to one root, so everything else is a sum of owners.
    by_stream: dict[str, Tally] = {st.id: Tally() for st in conv.streams}
    by_root: dict[str, Tally] = {}
    for owner, t in by_owner.items():
        stream, root = owner_of[owner]
        by_stream.setdefault(stream, Tally()).merge(t)
        by_root.setdefault(root, Tally()).merge(t)
    owners = tuple(OwnerRow(o, "talk" if o.startswith("k") else "stream", owner_of[o][0], t) for o, t in by_owner.items())
    rolled: dict[str, list[str]] = {}
    for sid, r in roots.items():
        rolled.setdefault(r, []).append(sid)
    talks = tuple(
        TalkRow(t.id, t.start, t.end, by_owner.get(t.id) or Tally(), by_root.get(t.id) or Tally(), tuple(rolled.get(t.id, ())))
        for t in conv.main_talks
    )
    streams = tuple(
        StreamRow(st.id, st.key, st.kind, "m" if st.id == "m" else roots[st.id], st.started_by, st.parent, st.unattributed,
                  tuple(sorted(models.get(st.id, ()))), by_stream[st.id])
        for st in conv.streams
    )
    return Ledger(
        conversation=conv.id, runtime=conv.runtime, round=conv.round.number, head=conv.round.head, prices=prices.file,
        calls=tuple(calls), owners=owners, talks=talks, streams=streams,
        loose=by_root.get(LOOSE) or Tally(), loose_streams=tuple(rolled.get(LOOSE, ())),
        unattributed=by_root.get(UNATTRIBUTED) or Tally(), unattributed_streams=tuple(rolled.get(UNATTRIBUTED, ())),
        total=Tally.sum(by_owner.values()), copies=dict(sorted(copies.items())), replays=replays,
    )


_NO_USAGE = Usage()


# --- groupings ---------------------------------------------------------------------------------

@frozen
class Row:
    key: str
    tally: Tally
    detail: dict[str, object] = field(factory=dict)


def rows(led: Ledger, by: str, tz: dt.tzinfo | None = dt.UTC) -> list[Row]:
    """The ledger cut one way. ``talk``: main talks with their sub-agents, then the loose work and
    the unattributed streams, which together make the conversation. ``stream``: each stream
    (each sub-agent apart). ``model``, ``day`` and ``month``: the calls grouped by model and by
    the day or month of ``tz`` (None: the system's local time) they were made in."""
    if by == "talk":
        from .assembly import LOOSE, UNATTRIBUTED

        out = [Row(t.id, t.with_subagents, {"start": t.start, "end": t.end, "own": t.own, "streams": list(t.streams)})
               for t in led.talks]
        if led.loose.calls or led.loose_streams:
            out.append(Row(LOOSE, led.loose, {"streams": list(led.loose_streams)}))
        if led.unattributed.calls or led.unattributed_streams:
            out.append(Row(UNATTRIBUTED, led.unattributed, {"streams": list(led.unattributed_streams)}))
        return out
    if by == "stream":
        return [Row(s.id, s.tally, {"key": s.key, "kind": s.kind, "root": s.root, "started_by": list(s.started_by),
                                    "unattributed": s.unattributed, "models": list(s.models)}) for s in led.streams]
    if by == "model":
        return group_calls(led.calls, model_key)
    if by == "day":
        return group_calls(led.calls, lambda c: day_of(c.ts, tz) or NO_TIME)
    if by == "month":
        return group_calls(led.calls, lambda c: month_of(day_of(c.ts, tz) or NO_TIME))
    raise ValueError(f"--by must be one of {', '.join(BY)}, not {by!r}")


def group_calls(calls: Iterable[CallCost], key: Callable[[CallCost], str]) -> list[Row]:
    groups: dict[str, Tally] = {}
    for c in calls:
        groups.setdefault(key(c), Tally()).add(c)
    return [Row(k, groups[k]) for k in sorted(groups)]


NO_MODEL = "(no model)"
"""The model of calls the record names none for."""


def grouped(pairs: Iterable[tuple[str, Tally]]) -> list[Row]:
    """Tallies added up by key, one row a key in key order (the ledger of all by model, day, project)."""
    groups: dict[str, Tally] = {}
    for k, t in pairs:
        groups.setdefault(k, Tally()).merge(t)
    return [Row(k, groups[k]) for k in sorted(groups)]


def model_key(c: CallCost) -> str:
    return c.model or NO_MODEL


NO_TIME = "(no time)"
"""The day of calls the record gives no time for."""


def day_key(c: CallCost) -> str:
    return day_of(c.ts) or NO_TIME


def month_of(day: str) -> str:
    """The month of a day key (``2025-01-31`` -> ``2025-01``); ``NO_TIME`` as itself."""
    return NO_TIME if day == NO_TIME else day[:7]


def day_of(ts: str | None, tz: dt.tzinfo | None = dt.UTC) -> str | None:
    """The date of a runtime's timestamp in ``tz`` (None: the system's local time); UTC by default."""
    t = instant(ts)
    return None if t is None else day(t, tz)


def share(part: Tally, whole: Tally) -> dict[str, Decimal | None]:
    """What part of the whole's money and known tokens ``part`` holds (None when the whole is 0)."""
    return {
        "money": (part.money / whole.money) if whole.money else None,
        "tokens": (Decimal(part.token_sum) / Decimal(whole.token_sum)) if whole.token_sum else None,
    }


def check_owners(led: Ledger) -> Iterator[str]:
    """What does not add up (nothing, when the ledger is right): owners and roll-ups against
    the conversation's total."""
    tot = led.total
    for name, parts in (("owners", [o.tally for o in led.owners]),
                        ("roll-up", [t.with_subagents for t in led.talks] + [led.loose, led.unattributed]),
                        ("streams", [s.tally for s in led.streams])):
        s = Tally.sum(parts)
        if (s.calls, s.tokens, s.unknown, s.money, s.unpriced) != (tot.calls, tot.tokens, tot.unknown, tot.money, tot.unpriced):
            yield f"{name} add up to {s.calls} calls / {s.money}, the conversation holds {tot.calls} / {tot.money}"




# --- entry points ------------------------------------------------------------------------------

def for_conversation(name: str, head: str | int | None = None, *, prices: Prices | str | None = None,
                     store: object | None = None) -> Ledger:
    """The ledger of one collected conversation (id, unique prefix or session id) at a round."""
    from .api import load
    from .store import Store

    st = store if isinstance(store, Store) else Store.open()
    p = _prices(prices)
    with no_gc():
        return build(load(name, head, store=st), p)


def for_all(*, prices: Prices | str | None = None, store: object | None = None) -> list[Ledger]:
    """The ledgers of every collected conversation, each at its newest round."""
    from .api import conversations, load
    from .store import Store

    st = store if isinstance(store, Store) else Store.open()
    p = _prices(prices)
    with no_gc():
        return [build(load(row.id, store=st), p) for row in conversations(st) if row.head is not None]


def _prices(prices: Prices | str | None) -> Prices:
    return load_prices(prices) if prices is None or isinstance(prices, str) else prices


_loaded: dict[str, Prices] = {}


def load_prices(path: str | None = None) -> Prices:
    """A price file loaded once per process (by path)."""
    key = path or ""
    if key not in _loaded:
        from .pricing import Prices

        _loaded[key] = Prices.load(path)
    return _loaded[key]


# --- summaries, kept between runs ----------------------------------------------------------------

@frozen
class Summary:
    """What the ledger of all conversations shows of one: its totals, sub-agents and helpers,
    and its calls by model and by day. Kept in ASZ_HOME/cache/ledger.json by conversation, head,
    price file (SHA-256) and the code that computes it: the same head and the same price file
    always give the same numbers, so a kept summary is the ledger's, computed again."""

    conversation: str
    runtime: str
    round: int
    head: str
    total: Tally
    subagents: Tally
    helpers: Tally
    by_model: dict[str, Tally]
    by_day: dict[str, Tally]
    """By UTC day (``NO_TIME`` for calls with no time)."""
    copies: int = 0
    """Calls counted in the conversation that landed them first (``Ledger.copies``, added up)."""
    replays: int = 0
    projects: tuple[str, ...] = ()
    """The working directories the record names (``Conversation.projects``); the first is its project."""
    started: str | None = None
    """The first and last time any of its records names (``Conversation.span``)."""
    last: str | None = None
    first_call: str | None = None
    """The first and last time a model call of it names: a span of time that holds all of them
    (no filter needs its calls one by one when the span lies wholly inside or outside)."""
    last_call: str | None = None
    talks: int = 0
    """Main talks."""
    streams: int = 0
    """Sub-agent and helper streams."""
    first_input: str | None = None
    """The person's first real input (``Conversation.first_input``), its first 200 bytes."""
    by_quarter: Mapping[str, Tally] = attrs.field(factory=dict, eq=False, repr=False)
    """The timed calls by UTC quarter hour (``2025-01-31T23:45``), when they fall in more than
    one: every zone's midnight falls on a quarter hour, so a zone's days and months are these
    added up, without the conversation's calls one by one. Read back from the cache only when
    asked for (:class:`KeptTallies`)."""

    @property
    def project(self) -> str | None:
        return self.projects[0] if self.projects else None


def summarize(led: Ledger, conv: Conversation | None = None) -> Summary:
    """What the ledger of all shows of one conversation; with ``conv`` (the one ``led`` was built
    from) also when and where it happened and how it began."""
    s = Summary(led.conversation, led.runtime, led.round, led.head, led.total, led.subagents, led.helpers,
                led.by_model, led.by_day, sum(led.copies.values()), led.replays)
    if conv is None:
        return s
    calls = []
    quarters: dict[str, Tally] = {}
    for c in led.calls:
        if (t := instant(c.ts)) is not None:
            calls.append(t)
            quarters.setdefault(_quarter(t), Tally()).add(c)
    first = conv.first_input()
    return attrs.evolve(
        s, projects=conv.projects, started=conv.span[0], last=conv.span[1],
        first_call=utc_text(min(calls)) if calls else None, last_call=utc_text(max(calls)) if calls else None,
        talks=len(conv.main_talks), streams=len(conv.streams) - 1,
        first_input=one_line(first.text) if first is not None else None,
        by_quarter={k: quarters[k] for k in sorted(quarters)} if len(quarters) > 1 else {})


def summary_of(view: Calls, prices: Prices) -> Summary:
    """``summarize(build(conv, prices), conv)`` of the conversation ``view`` was made from, from
    the lean view (``assembly.calls_of``): each call priced and counted as :func:`build` counts
    it (under its owner, then the owners summed, by stream and in all), in the same order, so
    every figure and every sum is the same."""
    price = prices.price
    by_owner: dict[str | int, Tally] = {}
    stream_of: dict[str | int, str] = {}
    by_model: dict[str, Tally] = {}
    by_day: dict[str, Tally] = {}
    by_quarter: dict[str, Tally] = {}
    stamps: list[dt.datetime] = []
    copies = replays = 0
    first: tuple[str, str] | None = None  # the model and day of the first call counted
    both: Tally | None = None  # by_model[first model], while it is by_day[first day] too
    for c in view.calls:
        if c.copy_of is not None:
            copies += 1
            continue
        if c.replay:
            replays += 1
            continue
        t = by_owner.get(c.owner)
        if t is None:
            t = by_owner[c.owner] = Tally()
            stream_of[c.owner] = c.stream
        p = price(c.model, c.usage, c.ts, c.output_floor)
        t.count(c.usage, c.output_floor, p)
        m = c.model or NO_MODEL
        when = instant(c.ts)  # UTC: its day is day(when, dt.UTC)
        d = NO_TIME if when is None else when.date().isoformat()
        if when is not None:
            stamps.append(when)
            q = _quarter(when)
            (by_quarter.get(q) or by_quarter.setdefault(q, Tally())).count(c.usage, c.output_floor, p)
        # While every call so far has the first one's model and day, its model's tally and its
        # day's are the same calls counted in the same order: counted once, the day's copied
        # from it when a call of another model or day comes (most conversations: never).
        if both is not None:
            if m == first[0] and d == first[1]:
                both.count(c.usage, c.output_floor, p)
                continue
            by_day[first[1]] = both.copy()
            both = None
        elif first is None:
            first = (m, d)
            both = by_model[m] = Tally()
            both.count(c.usage, c.output_floor, p)
            continue
        (by_model.get(m) or by_model.setdefault(m, Tally())).count(c.usage, c.output_floor, p)
        (by_day.get(d) or by_day.setdefault(d, Tally())).count(c.usage, c.output_floor, p)
    if both is not None:
        by_day[first[1]] = both.copy()  # type: ignore[index]
    by_stream = {key: Tally() for key, _ in view.streams}
    for owner, t in by_owner.items():
        by_stream.setdefault(stream_of[owner], Tally()).merge(t)
    kinds = dict(view.streams)
    return Summary(
        view.id, view.runtime, view.round.number, view.round.head, Tally.sum(by_owner.values()),
        Tally.sum(t for k, t in by_stream.items() if kinds.get(k) == "child"),
        Tally.sum(t for k, t in by_stream.items() if kinds.get(k) == "helper"),
        {k: by_model[k] for k in sorted(by_model)}, {k: by_day[k] for k in sorted(by_day)}, copies, replays,
        view.projects, view.span[0], view.span[1],
        utc_text(min(stamps)) if stamps else None, utc_text(max(stamps)) if stamps else None,
        view.main_talks, len(view.streams) - 1,
        one_line(view.first_input) if view.first_input is not None else None,
        {k: by_quarter[k] for k in sorted(by_quarter)} if len(by_quarter) > 1 else {})


def _quarter(t: dt.datetime) -> str:
    """The UTC quarter hour an instant falls in, as :attr:`Summary.by_quarter` keys it."""
    return f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute // 15 * 15:02d}"


def quarter_start(key: str) -> dt.datetime:
    """The instant a :attr:`Summary.by_quarter` key begins."""
    return dt.datetime.fromisoformat(key).replace(tzinfo=dt.UTC)


QUARTER = dt.timedelta(minutes=15)


DAMAGED = ("a summary kept in ASZ_HOME/cache/ledger is damaged (written by something other than asz); "
           "remove that folder and asz computes the summaries again")


class KeptTallies(Mapping[str, Tally]):
    """Tallies as the cache keeps them (a JSON text, or its object), made into :class:`Tally` the
    first time any is asked for: most ledgers never look at a summary's models or quarter hours,
    and reading them all would cost every ledger the time of the few that do."""

    __slots__ = ("_dumps", "_made")

    def __init__(self, dumps: dict[str, Any] | str) -> None:
        self._dumps = dumps
        self._made: dict[str, Tally] | None = None

    def _all(self) -> dict[str, Tally]:
        if self._made is None:
            try:
                self._made = {k: _tally_unkeep(v) for k, v in self._raw().items()}
            except (KeyError, TypeError, ValueError, ArithmeticError, AttributeError):
                raise AszError(DAMAGED) from None
        return self._made

    def _raw(self) -> dict[str, Any]:
        if isinstance(self._dumps, str):
            try:
                got = orjson.loads(self._dumps)
            except ValueError:
                got = None
            if not isinstance(got, dict):
                raise AszError(DAMAGED)
            self._dumps = got
        return self._dumps

    def __getitem__(self, key: str) -> Tally:
        return self._all()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())

    def kept(self) -> dict[str, Any] | str:
        """What the cache keeps of them, as it was read."""
        return self._dumps


CACHE_VERSION = 5

PARALLEL_RECORDS = 20_000
"""Records to assemble past which the ledger's summaries are split with a forked child."""


def summaries(*, prices: str | None = None, store: object | None = None, cache: bool = True,
              rows: Sequence[Any] | None = None, kept: Any = None) -> tuple[list[Summary], PriceFile]:
    """Every collected conversation's summary at its newest round, and the price file. A summary
    kept for the same conversation head, price file and code is read back; the others are built
    (and kept, when ASZ_HOME can be written: :mod:`.summary_keep`). ``rows``: the store's
    ``conversations()``, when the caller has read them already; ``kept``: the kept files
    (:class:`.summary_keep.Kept` of this store and code), when the caller has read some already."""
    from .store import Store
    from .summary_keep import Kept

    st = store if isinstance(store, Store) else Store.open()
    path, sha = price_sha(prices)
    if kept is None or not (cache and sha):
        kept = Kept(st.path.parent / "cache" / "ledger", _code_digest(), read=bool(cache and sha))
    book: Prices | None = None
    rows = [row for row in (st.conversations() if rows is None else rows) if row.head is not None]
    found: dict[str, Summary] = {}
    for row in rows:
        got = kept.get(sha, row.id, row.head.head)  # type: ignore[union-attr]
        if got is not None and (s := _summary_unkeep(got)) is not None:
            found[row.id] = s
    todo = [row for row in rows if row.id not in found]
    if todo:
        from .assembly import calls_of
        from .workers import in_two

        book = load_prices(prices)

        def job(row: Any, on: Any = st) -> dict[str, Any]:
            view = calls_of(row.id, row.runtime, row.head, on.records(row.id, row.head.number, lean=True),
                            on.copied_calls(row.id))
            return _summary_keep(summary_of(view, book))

        def in_child() -> Callable[[Any], dict[str, Any]]:
            on = st.reader()
            return lambda row: job(row, on)

        # Each conversation on its own, so the work splits: half of it in a forked child when
        # there is enough of it (a summary is a few KiB of figures to send back).
        with no_gc():
            if sum(r.head.records for r in todo) < PARALLEL_RECORDS:
                dumps = [job(row) for row in todo]
            else:
                dumps = in_two(todo, lambda r: r.head.records, job, in_child)
        for row, d in zip(todo, dumps):
            kept.put(sha, row.id, row.head.head, d)
            found[row.id] = _summary_unkeep(d)  # type: ignore[assignment]  # what is read back, to the byte
    out: list[Summary] = [found[row.id] for row in rows]
    meta = kept.price_meta(sha)
    if book is None and meta is None:
        book = load_prices(prices)
    if book is not None:
        file = book.file
        kept.put_price_meta(sha, {"source": file.source, "taken": file.taken})
    else:
        file = price_file_of(path, sha, meta)
    if cache and sha:
        kept.write()
    return out, file


def price_sha(prices: str | None) -> tuple[Path, str]:
    """The price file a ledger prices with and its SHA-256 ("" when it cannot be read: then
    ``Prices.load`` says what is wrong with it), what kept figures are kept by."""
    from .price_file import default_price_file
    from .regular import read_regular

    path = Path(prices) if prices else default_price_file()
    try:
        return path, hashlib.sha256(read_regular(path)).hexdigest()  # (a FIFO is refused, not waited on)
    except OSError:
        return path, ""


def price_file_of(path: Path, sha: str, meta: dict[str, Any]) -> PriceFile:
    """The price file ``path`` of SHA-256 ``sha``, from what was kept of it (its source and date)."""
    from .price_file import default_price_file

    return PriceFile(str(path), sha, meta.get("source"), meta.get("taken"), path.resolve().parent == default_price_file().parent)


def _code_digest() -> str:
    """The code a summary depends on: how records are read and assembled, the ledger, the
    pricing, and genai-prices' own (its arithmetic; its data is the price file's). Once a process
    (the kept sum of all and the summaries both ask)."""
    global _digest
    if _digest is None:
        _digest = _code_digest_made()
    return _digest


_digest: str | None = None


def _code_digest_made() -> str:
    h = hashlib.sha256(f"v{CACHE_VERSION}".encode())
    here = Path(__file__).resolve().parent
    files = [here / f"{m}.py" for m in ("records", "store", "lean_events", "assembly", "ledger", "ledger_rollup", "pricing", "model_ids",
                                           "times", "textclip")]
    spec = importlib.util.find_spec("genai_prices")
    if spec and spec.submodule_search_locations:
        gp = Path(next(iter(spec.submodule_search_locations)))
        files += [gp / "types.py", gp / "decompose.py", gp / "units.py", gp / "data_units.py"]
    for f in files:
        try:
            h.update(f.read_bytes())
        except OSError:
            h.update(b"-")
    return h.hexdigest()


def _tally_dump(t: Tally) -> dict[str, Any]:
    return {"calls": t.calls, "tokens": t.tokens, "unknown": t.unknown, "output_floor": t.output_floor,
            "money": str(t.money), "parts": {k: str(v) for k, v in t.parts.items()}, "unpriced": t.unpriced,
            "unpriced_tokens": t.unpriced_tokens, "unpriced_reasons": t.unpriced_reasons, "incomplete": t.incomplete,
            "floor_money": str(t.floor_money)}


def _tally_load(d: dict[str, Any]) -> Tally:
    return Tally(calls=d["calls"], tokens=dict(d["tokens"]), unknown=dict(d["unknown"]), output_floor=d["output_floor"],
                 money=Decimal(d["money"]), parts={k: Decimal(v) for k, v in d["parts"].items()}, unpriced=d["unpriced"],
                 unpriced_tokens=dict(d["unpriced_tokens"]), unpriced_reasons=dict(d["unpriced_reasons"]),
                 incomplete=d["incomplete"], floor_money=Decimal(d["floor_money"]))


# The cache's own form of a tally: what is nothing (most counts of most tallies are 0) left out,
# so a history's kept summaries are half the bytes to read. Token and unknown counts go back in
# their fixed order; money is left out only where it is written "0", so it reads back the same.
_ZERO_TOKENS = dict.fromkeys(TOKEN_KEYS, 0)
_ZERO_TYPES = dict.fromkeys(USAGE_TYPES, 0)
_COUNTS = ("output_floor", "unpriced", "incomplete")


def _tally_keep(t: Tally) -> dict[str, Any]:
    d: dict[str, Any] = {"calls": t.calls}
    for name, counts in (("tokens", t.tokens), ("unknown", t.unknown), ("unpriced_tokens", t.unpriced_tokens)):
        some = {k: v for k, v in counts.items() if v}
        if some:
            d[name] = some
    for name in _COUNTS:
        if v := getattr(t, name):
            d[name] = v
    for name in ("money", "floor_money"):
        if (text := str(getattr(t, name))) != "0":
            d[name] = text
    if t.parts:
        d["parts"] = {k: str(v) for k, v in t.parts.items()}
    if t.unpriced_reasons:
        d["unpriced_reasons"] = t.unpriced_reasons
    return d


def _tally_unkeep(d: dict[str, Any]) -> Tally:
    g = d.get
    tokens, unknown, unpriced = g("tokens"), g("unknown"), g("unpriced_tokens")
    parts, reasons = g("parts"), g("unpriced_reasons")
    for x in (tokens, unknown, unpriced, parts, reasons):
        if x is not None and type(x) is not dict:
            raise TypeError("a kept tally of another shape")
    return Tally(int(d["calls"]), {**_ZERO_TOKENS, **tokens} if tokens else dict(_ZERO_TOKENS),
                 {**_ZERO_TYPES, **unknown} if unknown else dict(_ZERO_TYPES), int(g("output_floor", 0)),
                 Decimal(g("money", "0")), {k: Decimal(v) for k, v in parts.items()} if parts else {},
                 int(g("unpriced", 0)), {**_ZERO_TYPES, **unpriced} if unpriced else dict(_ZERO_TYPES),
                 dict(reasons) if reasons else {}, int(g("incomplete", 0)), Decimal(g("floor_money", "0")))


def _summary_dump(s: Summary) -> dict[str, Any]:
    return {"conversation": s.conversation, "runtime": s.runtime, "round": s.round, "head": s.head,
            "total": _tally_dump(s.total), "subagents": _tally_dump(s.subagents), "helpers": _tally_dump(s.helpers),
            "by_model": {k: _tally_dump(v) for k, v in s.by_model.items()},
            "by_day": {k: _tally_dump(v) for k, v in s.by_day.items()}, "copies": s.copies, "replays": s.replays,
            "projects": list(s.projects), "started": s.started, "last": s.last, "first_call": s.first_call,
            "last_call": s.last_call, "talks": s.talks, "streams": s.streams, "first_input": s.first_input,
            "by_quarter": {k: _tally_dump(v) for k, v in s.by_quarter.items()}}


def _summary_keep(s: Summary) -> dict[str, Any]:
    """A summary as the cache keeps it: its tallies in the cache's form, those by model and by
    quarter hour as JSON texts (read only when a ledger asks for them: :class:`KeptTallies`)."""
    return {"conversation": s.conversation, "runtime": s.runtime, "round": s.round, "head": s.head,
            "total": _tally_keep(s.total), "subagents": _tally_keep(s.subagents), "helpers": _tally_keep(s.helpers),
            "by_model": orjson.dumps({k: _tally_keep(v) for k, v in s.by_model.items()}).decode(),
            "by_day": {k: _tally_keep(v) for k, v in s.by_day.items()}, "copies": s.copies, "replays": s.replays,
            "projects": list(s.projects), "started": s.started, "last": s.last, "first_call": s.first_call,
            "last_call": s.last_call, "talks": s.talks, "streams": s.streams, "first_input": s.first_input,
            "by_quarter": orjson.dumps({k: _tally_keep(v) for k, v in s.by_quarter.items()}).decode()}


def _summary_unkeep(d: Any) -> Summary | None:
    try:
        return Summary(d["conversation"], d["runtime"], d["round"], d["head"], _tally_unkeep(d["total"]),
                       _tally_unkeep(d["subagents"]), _tally_unkeep(d["helpers"]), KeptTallies(_text(d["by_model"])),
                       {k: _tally_unkeep(v) for k, v in d["by_day"].items()}, int(d["copies"]), int(d["replays"]),
                       tuple(d["projects"]), d["started"], d["last"], d["first_call"], d["last_call"], d["talks"],
                       d["streams"], d["first_input"], KeptTallies(_text(d["by_quarter"])))
    except (KeyError, TypeError, ValueError, ArithmeticError, AttributeError):
        return None  # a kept summary of another shape: built again


def _text(x: Any) -> str:
    if type(x) is not str:
        raise TypeError("kept tallies are not a JSON text")
    return x
