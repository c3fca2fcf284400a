"""Usage blocks: the 5-hour windows a subscription's limits are counted in (``asz ledger --by
block``), as ccusage's ``blocks`` cuts them, over every model call of every collected
conversation, each counted once.

A block starts at the hour (UTC) of the first call after the last block; it holds every call
until one comes more than five hours after the block's start or after the call before it. A
stretch of more than five hours with no call between two blocks is a gap. The block still open
now (its five hours not over and its last call less than five hours ago) is active: its burn
rate is its tokens and money per minute between its first and last call, and its projection
what it reaches at that rate by its end. Tokens are the known counts (with the output floors
where the output is unknown, as the lower bound of money is), money both figures of the
ledger ([the ledger](../../../docs/ledger.md)).

No typer or rich: a lean command path can use it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator
from decimal import Decimal
from typing import Any

from attrs import define, field, frozen

from .ledger import Tally
from .records import Usage
from .times import instant

HOURS = 5
DURATION = dt.timedelta(hours=HOURS)


@frozen
class TimedCall:
    """One model call, when it was made, what it consumed and cost."""

    at: dt.datetime
    model: str | None
    usage: Usage
    output_floor: int | None
    price: Any
    """Its :class:`~asz_core.pricing.CallPrice`."""


@define
class Block:
    start: dt.datetime
    end: dt.datetime
    """``start`` and five hours (a gap: when the next block starts)."""
    gap: bool = False
    first: dt.datetime | None = None
    last: dt.datetime | None = None
    """The first and the last call in it."""
    tally: Tally = field(factory=Tally)
    models: list[str] = field(factory=list)
    active: bool = False

    def tokens(self) -> int:
        """The tokens it consumed that are known, with the output floors (a lower bound)."""
        return self.tally.token_sum + (self.tally.output_floor if self.tally.unknown["output"] else 0)

    def minutes(self) -> float:
        """Minutes between its first and last call."""
        return (self.last - self.first).total_seconds() / 60 if self.first and self.last else 0.0


@frozen
class Burn:
    """An active block's rate between its first and last call, and where it leads by its end."""

    tokens_per_minute: float
    money_per_hour: Decimal
    bound_per_hour: Decimal
    remaining_minutes: int
    projected_tokens: int
    projected_money: Decimal
    projected_bound: Decimal


def blocks(calls: Iterable[TimedCall], now: dt.datetime) -> list[Block]:
    """The blocks of ``calls`` (any order), oldest first, gaps between them; the one open at
    ``now`` active."""
    out: list[Block] = []
    cur: Block | None = None
    for c in sorted(calls, key=lambda c: c.at):
        if cur is not None and (c.at - cur.start > DURATION or c.at - cur.last > DURATION):  # type: ignore[operator]
            out.append(cur)
            if c.at - cur.last > DURATION:  # type: ignore[operator]
                out.append(Block(cur.last + DURATION, c.at, gap=True))  # type: ignore[operator]
            cur = None
        if cur is None:
            start = c.at.astimezone(dt.UTC).replace(minute=0, second=0, microsecond=0)
            cur = Block(start, start + DURATION, first=c.at)
        cur.last = c.at
        cur.tally.count(c.usage, c.output_floor, c.price)
        if c.model and c.model not in cur.models:
            cur.models.append(c.model)
    if cur is not None:
        out.append(cur)
    for b in out:
        b.active = not b.gap and b.last is not None and now - b.last < DURATION and now < b.end
    return out


def burn(b: Block, now: dt.datetime) -> Burn | None:
    """The active block's burn rate and projection (None for another block, or one whose calls
    all came at one instant: no rate)."""
    mins = b.minutes()
    if not b.active or mins <= 0:
        return None
    per_min = b.tokens() / mins
    money_h = b.tally.money / Decimal(str(mins)) * 60
    bound_h = b.tally.money_bound / Decimal(str(mins)) * 60
    left = max(0, round((b.end - now).total_seconds() / 60))
    return Burn(per_min, money_h, bound_h, left, round(b.tokens() + per_min * left),
                b.tally.money + money_h / 60 * left, b.tally.money_bound + bound_h / 60 * left)


def timed_calls(f: Any = None, *, prices: str | None = None, store: Any = None) -> Iterator[TimedCall]:
    """Every model call of every collected conversation (at its newest round) the filter ``f``
    keeps (project, runtime; a span of time call by call), counted once: a copy of a call
    another conversation landed first, or a replay, is not counted again. A call with no time
    is in no block."""
    from .assembly import calls_of
    from .ledger import load_prices
    from .store import Store

    st = store or Store.open()
    book = load_prices(prices)
    for row in st.conversations():
        if row.head is None:
            continue
        view = calls_of(row.id, row.runtime, row.head, st.records(row.id, row.head.number, lean=True), st.copied_calls(row.id))
        if f is not None and not f.place(view.runtime, view.projects):
            continue
        for c in view.calls:
            if c.copy_of is not None or c.replay:
                continue
            at = instant(c.ts)
            if at is None or (f is not None and f.timed and not f.holds(c.ts)):
                continue
            yield TimedCall(at, c.model, c.usage, c.output_floor, book.price(c.model, c.usage, c.ts, c.output_floor))


@frozen
class BlockLedger:
    """The ledger of all conversations cut into usage blocks."""

    blocks: tuple[Block, ...]
    now: dt.datetime
    prices: Any
    """The :class:`~asz_core.pricing.PriceFile`."""
    filter: Any
    collected: int = 1
    """Conversations collected (before the filter): none, and the table says to collect."""
    newest: str | None = None
    """The last model call collected (before the filter), asked for only when no block was found:
    what a span that finds nothing says."""


def ledger_blocks(f: Any = None, *, prices: str | None = None, store: Any = None, now: dt.datetime | None = None) -> BlockLedger:
    """``asz ledger --by block``: the blocks of every call the filter keeps, oldest first."""
    from .conversations import Filter
    from .ledger import load_prices

    f = f or Filter()
    now = now or dt.datetime.now(dt.UTC)
    found = list(timed_calls(f, prices=prices, store=store))
    collected, newest = 1, None
    if not found:  # said as the other tables say it: collect first, or when the newest activity was
        from .ledger import summaries
        from .store import Store

        sums = summaries(prices=prices, store=store or Store.open())[0]
        collected = len(sums)
        newest = max((x.last_call for x in sums if x.last_call), key=lambda t: instant(t) or dt.datetime.min.replace(tzinfo=dt.UTC),
                     default=None)
    return BlockLedger(tuple(blocks(found, now)), now, load_prices(prices).file, f, collected, newest)
