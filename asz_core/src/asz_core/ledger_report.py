"""Rendering of ledgers: rich tables for people, plain JSON-able data for programs.

Money is written exactly in JSON (a decimal string, never a float); tables round it to 4 places
for reading. Unknown counts and unpriced calls are always shown beside the sums they are not in.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from .ledger import Ledger, Row, Summary, Tally, rows, share
from .pricing import PriceFile, UpdateResult

_SHARE = Decimal("0.000001")


# --- JSON --------------------------------------------------------------------------------------

def tally_json(t: Tally) -> dict[str, Any]:
    return {
        "calls": t.calls,
        "tokens": dict(t.tokens),
        "unknown_calls": dict(t.unknown),
        "unknown_output_floor": t.output_floor,
        "money": str(t.money),
        "money_parts": {k: str(v) for k, v in t.parts.items()},
        "money_complete": t.unpriced == 0 and t.incomplete == 0,
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


def ledger_json(led: Ledger, by: str | None = None) -> dict[str, Any]:
    by = by or "talk"
    sub, helpers = led.subagents, led.helpers
    return {
        "conversation": led.conversation, "runtime": led.runtime, "round": f"r{led.round}", "head": led.head,
        "prices": prices_json(led.prices),
        "by": by,
        "total": tally_json(led.total),
        "subagents": {"share": share_json(sub, led.total), "tally": tally_json(sub)},
        "helpers": {"share": share_json(helpers, led.total), "tally": tally_json(helpers)},
        "rows": [row_json(r) for r in rows(led, by)],
        "subagent_streams": subagents_json(led),
        "loose": {"streams": list(led.loose_streams), "tally": tally_json(led.loose)},
        "unattributed": {"streams": list(led.unattributed_streams), "tally": tally_json(led.unattributed)},
        "counted_elsewhere": {"copies": dict(led.copies), "replays": led.replays},
    }


def all_rows(items: Sequence[Ledger | Summary], by: str | None) -> list[tuple[str | None, Row]]:
    """Rows across conversations: one per conversation by default; per talk or stream of each
    conversation (ledgers only); or the calls of all of them grouped by model or day."""
    if by in ("model", "day"):
        groups: dict[str, Tally] = {}
        for x in items:
            for k, t in (x.by_model if by == "model" else x.by_day).items():
                groups.setdefault(k, Tally()).merge(t)
        return [(None, Row(k, groups[k])) for k in sorted(groups)]
    if by in ("talk", "stream"):
        return [(x.conversation, r) for x in items if isinstance(x, Ledger) for r in rows(x, by)]
    return [(None, Row(x.conversation, x.total, {"runtime": x.runtime, "round": f"r{x.round}", "subagents": x.subagents}))
            for x in items]


def all_json(items: Sequence[Ledger | Summary], prices: PriceFile, by: str | None = None) -> dict[str, Any]:
    total = Tally.sum(x.total for x in items)
    sub = Tally.sum(x.subagents for x in items)
    helpers = Tally.sum(x.helpers for x in items)
    return {
        "conversations": len(items),
        "prices": prices_json(prices),
        "by": by or "conversation",
        "total": tally_json(total),
        "subagents": {"share": share_json(sub, total), "tally": tally_json(sub)},
        "helpers": {"share": share_json(helpers, total), "tally": tally_json(helpers)},
        "counted_elsewhere": {"copies": sum(_copies(x) for x in items), "replays": sum(x.replays for x in items)},
        "rows": [row_json(r, conv) for conv, r in all_rows(items, by)],
    }


def _copies(x: Ledger | Summary) -> int:
    return sum(x.copies.values()) if isinstance(x, Ledger) else x.copies


# --- tables ------------------------------------------------------------------------------------

def money(v: Decimal) -> str:
    return f"${v.quantize(Decimal('0.0001'), ROUND_HALF_EVEN):,}"


def _pct(v: Decimal | None) -> str:
    return "—" if v is None else f"{(v * 100).quantize(Decimal('0.1'), ROUND_HALF_EVEN)}%"


def _count(t: Tally, k: str) -> str:
    s = f"{t.tokens[k]:,}"
    return s + f" +{t.unknown[k]}?" if t.unknown[k] else s


def _cache_write(t: Tally) -> str:
    s = _count(t, "cache_write")
    if t.tokens["cache_write_1h"]:
        s += f"\n1h {t.tokens['cache_write_1h']:,}"
    return s


def _money_cell(t: Tally) -> str:
    s = money(t.money)
    if t.incomplete:
        s += "*"
    if t.unpriced:
        s += f" +{t.unpriced}$?"
    return s


_LEGEND = ("+N?: N calls with that count unknown (not in the sum).  *: money of the known counts only.  "
           "+N$?: N calls unpriced (tokens counted, no money).")
_COLUMNS = ("calls", "input", "output", "cache read", "cache write", "money")


def _cells(t: Tally) -> list[str]:
    return [str(t.calls), _count(t, "input"), _count(t, "output"), _count(t, "cache_read"), _cache_write(t), _money_cell(t)]


def _table(title: str, first: Sequence[str], data: Sequence[tuple[Sequence[str], Tally]], total: Tally | None = None) -> Table:
    t = Table(title=title, show_lines=False, caption=_LEGEND, caption_justify="left")
    for name in first:
        t.add_column(name, no_wrap=True)
    for name in _COLUMNS:
        t.add_column(name, justify="right")
    for names, tally in data:
        t.add_row(*names, *_cells(tally))
    if total is not None:
        t.add_row(*(["total"] + [""] * (len(first) - 1)), *_cells(total), style="bold")
    return t


def _prices_line(f: PriceFile) -> Text:
    return Text(f"prices: {f.name} sha256 {f.sha256[:16]}…" + (f" ({f.source}, taken {f.taken})" if f.source else ""), style="dim")


def _notes(total: Tally, sub: Tally, helpers: Tally, copies: dict[str, int] | int = 0, replays: int = 0) -> Text:
    lines = [f"sub-agents: {money(sub.money)} of {money(total.money)} ({_pct(share(sub, total)['money'])} of money, "
             f"{_pct(share(sub, total)['tokens'])} of known tokens), {sub.calls} calls"]
    if helpers.calls:
        lines.append(f"helpers (compaction, warm-up): {money(helpers.money)}, {helpers.calls} calls")
    if total.unknown["output"]:
        lines.append(f"{total.unknown['output']} calls have an unknown output (the final usage was never written): "
                     f"their output is in neither the tokens nor the money; their streaming values reached "
                     f"{total.output_floor:,} tokens, a lower bound")
    for k in ("input", "cache_read", "cache_write"):
        if total.unknown[k]:
            lines.append(f"{total.unknown[k]} calls have an unknown {k.replace('_', ' ')}")
    if total.unpriced:
        reasons = ", ".join(f"{n} {r}" for r, n in sorted(total.unpriced_reasons.items()))
        lines.append(f"{total.unpriced} calls unpriced ({reasons}); their tokens are counted, their money is not")
    if isinstance(copies, dict):
        for conv, n in copies.items():
            lines.append(f"{n} calls are copies of calls conversation {conv[:8]} landed first: counted there, not here")
    elif copies:
        lines.append(f"{copies} calls held by two conversations are counted once, in the one that landed them first")
    if replays:
        lines.append(f"{replays} calls replay this conversation's own calls (a /btw side question re-sends its parent's): "
                     "counted once, as the calls they replay")
    return Text("\n".join(lines))


def ledger_text(led: Ledger, by: str | None = None) -> Group:
    by = by or "talk"
    head = Text.assemble((f"ledger {led.conversation}", "bold"), f"  {led.runtime}  round r{led.round} ", (led.head[:12], "dim"))
    rs = rows(led, by)
    if by == "talk":
        data = [([r.key, _talk_label(r)], r.tally) for r in rs]
        main = _table("main talks with the sub-agents each started", ["talk", "sub-agents"], data, led.total)
    elif by == "stream":
        data = [([r.key, str(r.detail.get("kind")), str(r.detail.get("root"))], r.tally) for r in rs]
        main = _table("streams", ["stream", "kind", "rolls up to"], data, led.total)
    else:
        main = _table(f"by {by}", [by], [([r.key], r.tally) for r in rs], led.total)
    parts: list[Any] = [head, _prices_line(led.prices), main]
    if by != "stream":
        subs = [s for s in led.streams if s.kind != "main"]
        if subs:
            parts.append(_table("per sub-agent", ["stream", "kind", "rolls up to", "model"],
                                [([s.id, s.kind, s.root, ", ".join(s.models) or "—"], s.tally) for s in subs]))
    parts.append(_notes(led.total, led.subagents, led.helpers, led.copies, led.replays))
    return Group(*parts)


def _talk_label(r: Row) -> str:
    streams = r.detail.get("streams") or []
    own = r.detail.get("own")
    if not streams:
        return "—"
    if isinstance(own, Tally):
        return f"{', '.join(streams)} (own {money(own.money)})"
    return ", ".join(streams)


def all_text(ledgers: Sequence[Ledger | Summary], prices: PriceFile, by: str | None = None) -> Group:
    total = Tally.sum(led.total for led in ledgers)
    sub = Tally.sum(led.subagents for led in ledgers)
    helpers = Tally.sum(led.helpers for led in ledgers)
    rs = all_rows(ledgers, by)
    if by in ("model", "day"):
        t = _table(f"{len(ledgers)} conversations by {by}", [by], [([r.key], r.tally) for _, r in rs], total)
    elif by in ("talk", "stream"):
        t = _table(f"{len(ledgers)} conversations by {by}", ["conversation", by],
                   [([(c or "")[:8], r.key], r.tally) for c, r in rs], total)
    else:
        t = _table(f"{len(ledgers)} conversations", ["conversation", "sub-agents"],
                   [([r.key[:8], money(led.subagents.money)], r.tally) for (_, r), led in zip(rs, ledgers, strict=True)],
                   total)
    return Group(_prices_line(prices), t, _notes(total, sub, helpers, sum(_copies(x) for x in ledgers),
                                                 sum(x.replays for x in ledgers)))


def update_json(r: UpdateResult) -> dict[str, Any]:
    return {"changed": r.changed, "removed": list(r.removed), **prices_json(r.file)}


def update_text(r: UpdateResult) -> Text:
    what = "wrote" if r.changed else "unchanged:"
    gone = f"; removed {', '.join(r.removed)}" if r.removed else ""
    return Text(f"{what} {r.file.path} ({r.file.source}) sha256 {r.file.sha256}{gone}")
