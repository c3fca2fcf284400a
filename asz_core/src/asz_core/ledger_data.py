"""The ledger as plain JSON-able data, for programs (``asz ledger --json``). Money is a decimal
string, never a float. No rich here: the hot path of ``asz ledger --json`` imports only this."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from decimal import ROUND_HALF_EVEN, Decimal
from typing import TYPE_CHECKING, Any

from .ledger import Ledger, Row, Summary, Tally, in_order, rows, share
from .price_file import PriceFile, UpdateResult

if TYPE_CHECKING:
    from .conversations import AllLedger

_SHARE = Decimal("0.000001")


def tally_json(t: Tally) -> dict[str, Any]:
    return {
        "calls": t.calls,
        "tokens": dict(t.tokens),
        "unknown_calls": dict(t.unknown),
        "unknown_output_floor": t.output_floor,
        "money": str(t.money),
        "money_parts": {k: str(v) for k, v in t.parts.items()},
        "money_complete": t.money_complete,
        "money_lower_bound": str(t.money_bound),
        "unknown_output_floor_money": str(t.floor_money),
        "unpriced_calls": t.unpriced,
        "unpriced_reasons": dict(t.unpriced_reasons),
        "unpriced_tokens": dict(t.unpriced_tokens),
        "incomplete_calls": t.incomplete,
    }


def prices_json(f: PriceFile) -> dict[str, Any]:
    return {"file": f.path, "sha256": f.sha256, "source": f.source, "taken": f.taken, "shipped": f.shipped}


def share_json(part: Tally, whole: Tally) -> dict[str, str | None]:
    return {k: (str(v.quantize(_SHARE, ROUND_HALF_EVEN)) if v is not None else None) for k, v in share(part, whole).items()}


def row_json(r: Row, conversation: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"key": r.key}
    if conversation:
        out["conversation"] = conversation
    for k, v in r.detail.items():
        out[k] = tally_json(v) if isinstance(v, Tally) else v
    out["tally"] = tally_json(r.tally)
    return out


def subagents_json(led: Ledger) -> list[dict[str, Any]]:
    """The per sub-agent breakdown: every child and helper stream with its money."""
    return [{
        "stream": s.id, "key": s.key, "kind": s.kind, "rolls_up_to": s.root, "started_by": list(s.started_by),
        "unattributed": s.unattributed, "models": list(s.models), "share": share_json(s.tally, led.total),
        "tally": tally_json(s.tally),
    } for s in led.streams if s.kind != "main"]


def ledger_json(led: Ledger, by: str | None = None, tz: Any = dt.UTC) -> dict[str, Any]:
    by = by or "talk"
    sub, helpers = led.subagents, led.helpers
    return {
        "conversation": led.conversation, "runtime": led.runtime, "round": f"r{led.round}", "head": led.head,
        "prices": prices_json(led.prices),
        "by": by,
        "total": tally_json(led.total),
        "subagents": {"share": share_json(sub, led.total), "tally": tally_json(sub)},
        "helpers": {"share": share_json(helpers, led.total), "tally": tally_json(helpers)},
        "rows": [row_json(r) for r in rows(led, by, tz)],
        "subagent_streams": subagents_json(led),
        "loose": {"streams": list(led.loose_streams), "tally": tally_json(led.loose)},
        "unattributed": {"streams": list(led.unattributed_streams), "tally": tally_json(led.unattributed)},
        "counted_elsewhere": {"copies": dict(led.copies), "replays": led.replays},
    }


def all_json(items: Sequence[Ledger | Summary], prices: PriceFile, by: str | None = None,
             rows_: Sequence[tuple[str | None, Row]] | None = None, al: AllLedger | None = None) -> dict[str, Any]:
    if rows_ is None:  # the rows made where the ledger of all makes them
        from .conversations import all_rows

        rows_ = all_rows(items, by)
    total, sub, helpers = all_totals(al) if al is not None else all_sums(items)
    copies, replays = all_elsewhere(al) if al is not None else counted_elsewhere(items)
    return {
        "conversations": len(items) if al is None or al.conversations is None else al.conversations,
        "prices": prices_json(prices),
        "by": by or "conversation",
        "total": tally_json(total),
        "subagents": {"share": share_json(sub, total), "tally": tally_json(sub)},
        "helpers": {"share": share_json(helpers, total), "tally": tally_json(helpers)},
        "counted_elsewhere": {"copies": copies, "replays": replays},
        "rows": [row_json(r, conv) for conv, r in rows_],
    }


def all_sums(items: Sequence[Ledger | Summary]) -> tuple[Tally, Tally, Tally]:
    """The conversations' total, sub-agents and helpers, added up (the JSON's and the table's),
    their parts in one order (as the kept sum of all says them: :mod:`.ledger_rollup`)."""
    return (in_order(Tally.sum(x.total for x in items)), in_order(Tally.sum(x.subagents for x in items)),
            in_order(Tally.sum(x.helpers for x in items)))


def counted_elsewhere(items: Sequence[Ledger | Summary]) -> tuple[int, int]:
    """The calls the conversations count elsewhere: copies (counted once, where they landed
    first) and replays (counted as the call they replay)."""
    return sum(_copies(x) for x in items), sum(x.replays for x in items)


def _copies(x: Ledger | Summary) -> int:
    return sum(x.copies.values()) if isinstance(x, Ledger) else x.copies


def all_totals(al: AllLedger) -> tuple[Tally, Tally, Tally]:
    """The ledger of all's total, sub-agents and helpers: as it was made, or its items added up."""
    return al.totals if al.totals is not None else all_sums(al.items)


def all_elsewhere(al: AllLedger) -> tuple[int, int]:
    return al.counted_elsewhere if al.counted_elsewhere is not None else counted_elsewhere(al.items)


def all_count(al: AllLedger) -> int:
    """How many conversations the ledger of all holds."""
    return al.conversations if al.conversations is not None else len(al.items)


def all_ledger_json(al: AllLedger) -> dict[str, Any]:
    d = all_json(list(al.items), al.prices, al.by, list(al.rows), al)
    d["filter"] = al.filter.to_json()
    d["untimed_calls_left_out"] = al.untimed_calls
    return d


def update_json(r: UpdateResult) -> dict[str, Any]:
    return {"changed": r.changed, "removed": list(r.removed), **prices_json(r.file)}


def blocks_json(bl: Any) -> dict[str, Any]:
    """``asz ledger --by block --json``: each block (and gap) with its tally, the active one's burn."""
    from .blocks import burn
    from .times import utc_text

    def one(b: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"start": utc_text(b.start), "end": utc_text(b.end), "gap": b.gap, "active": b.active}
        if not b.gap:
            r = burn(b, bl.now)
            out |= {"first_call": utc_text(b.first), "last_call": utc_text(b.last), "models": list(b.models),
                    "tokens": b.tokens(), "tally": tally_json(b.tally),
                    "burn": None if r is None else {
                        "tokens_per_minute": round(r.tokens_per_minute, 3), "money_per_hour": str(r.money_per_hour),
                        "money_lower_bound_per_hour": str(r.bound_per_hour), "remaining_minutes": r.remaining_minutes,
                        "projected_tokens": r.projected_tokens, "projected_money": str(r.projected_money),
                        "projected_money_lower_bound": str(r.projected_bound)}}
        return out

    return {"prices": prices_json(bl.prices), "filter": bl.filter.to_json(), "now": utc_text(bl.now),
            "hours": 5, "blocks": [one(b) for b in bl.blocks]}
