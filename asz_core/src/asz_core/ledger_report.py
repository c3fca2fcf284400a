"""Rendering of ledgers: rich tables for people (the JSON for programs is ledger_data's).

Money is written exactly in JSON (a decimal string, never a float); tables write it in the one
format of :mod:`.money` for reading. Unknown counts and unpriced calls are said once under each table (JSON keeps them
per row), beside the sums they are not in.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from .conversations import AllLedger
from .money import UNKNOWN, bound, figure
from .money import dollars as money  # the one format, by the name the tables here use
from .ledger import Ledger, Row, Tally, rows, share
from .ledger_data import (  # noqa: F401 - the JSON builders, here too for those who import them from here
    _copies, all_count, all_elsewhere, all_json, all_ledger_json, all_sums, all_totals, blocks_json, counted_elsewhere,
    ledger_json, prices_json, row_json, share_json, subagents_json, tally_json, update_json,
)
from .price_file import PriceFile, UpdateResult
from .records import USAGE_TYPES
from .tables import Col, FitTable, folder, plural, short_paths, when, zone_label
from .doc import Line as Text  # every text of a report inert (terminal_text), drawn with or without rich
from .doc import Parts as Group

# --- tables ------------------------------------------------------------------------------------

def _pct(v: Decimal | None) -> str:
    return "—" if v is None else f"{(v * 100).quantize(Decimal('0.1'), ROUND_HALF_EVEN)}%"


def blind(t: Tally) -> bool:
    """No count of any call of it is known (Kiro records none): its money cannot be told."""
    return t.calls > 0 and all(t.unknown[k] == t.calls for k in USAGE_TYPES)


BLIND_NOTE = "money ?: the record gives no token count for any of those calls (Kiro records none), so no money"


def money_cell(t: Tally) -> str:
    """The known counts' money; ``?`` where none is known (never a $0 that says it cost nothing)."""
    if blind(t) or (not t.money and not t.money_complete):
        return UNKNOWN
    return money(t.money)


def bound_cell(t: Tally) -> str:
    """The lower bound beside the exact known figure: the known counts' money with the output
    floors priced, marked ``≥``; the same figure unmarked when the money is whole (then it is exact)."""
    if blind(t):
        return UNKNOWN
    return money(t.money) if t.money_complete else bound(t.money_bound)


def money_pair(t: Tally) -> str:
    """Both figures in one line of prose: ``$193.77 (≥ $204.72)``; one when the money is whole."""
    if blind(t):
        return UNKNOWN
    return figure(t.money, t.money_bound, t.money_complete)


def count_cell(t: Tally, k: str) -> str:
    """A sum of one type's counts. Where some call's count is unknown the sum is a lower bound,
    marked ``≥`` (the output with its streaming floors); where nothing of it is known, ``?``:
    never a 0 that says nothing was consumed."""
    n = t.tokens[k]
    if not t.unknown[k]:
        return f"{n:,}"
    if k == "output":
        n += t.output_floor
    return f"≥ {n:,}" if n else "?"


def tokens_cell(t: Tally) -> str:
    """The four types' known sum; a lower bound (``≥``, with the output floors) when a count is unknown."""
    if not any(t.unknown[k] for k in USAGE_TYPES):
        return f"{t.token_sum:,}"
    n = t.token_sum + (t.output_floor if t.unknown["output"] else 0)
    return f"≥ {n:,}" if n else "?"


def _cache_write(t: Tally) -> str:
    s = count_cell(t, "cache_write")
    if t.tokens["cache_write_1h"]:
        s += f"\n1h {t.tokens['cache_write_1h']:,}"
    return s


_TALLY_COLS = {
    "calls": Col("calls", right=True), "input": Col("input", right=True), "output": Col("output", right=True),
    "cache_read": Col("cache read", right=True), "cache_write": Col("cache write", right=True),
    "tokens": Col("tokens", right=True), "money": Col("money", right=True), "bound": Col("at least", right=True),
}
FULL = ("calls", "input", "output", "cache_read", "cache_write", "money", "bound")
"""The tally columns at full width: the four types apart."""
COMPACT = ("calls", "tokens", "money", "bound")
"""The tally columns where the four do not fit: their known sum."""


def tally_cells(t: Tally) -> dict[str, str]:
    return {"calls": f"{t.calls:,}", "input": count_cell(t, "input"), "output": count_cell(t, "output"),
            "cache_read": count_cell(t, "cache_read"), "cache_write": _cache_write(t), "tokens": tokens_cell(t),
            "money": money_cell(t), "bound": bound_cell(t)}


def ledger_table(title: str, first: dict[str, Col], layouts: Sequence[Sequence[str]], data: Sequence[tuple[dict[str, Any], Tally]],
                 total: Tally | None = None, notes: Sequence[str] = (), total_cells: dict[str, Any] | None = None) -> FitTable:
    """A table of tallies: the ``first`` columns (each layout names those it keeps), then the
    four types and money at full width, or calls, known tokens and money where they do not fit."""
    cols = {**first, **_TALLY_COLS}
    lays = [(*lay, *tail) for lay in layouts for tail in (FULL, COMPACT)]
    if any(blind(tally) for _, tally in data):
        notes = [*notes, BLIND_NOTE]
    t = FitTable(cols, lays, title=title, notes=notes)
    for names, tally in data:
        t.add_row({**tally_cells(tally), **names})  # a row's own cells first (a gap's "—")
    if total is not None:
        said = {lay[0]: "total" for lay in layouts}  # in whichever first column the layout drawn keeps
        t.add_row({**said, **(total_cells or {}), **tally_cells(total)}, style="bold")
    return t


def _prices_line(f: PriceFile) -> Text:
    return Text(f"prices: {f.name} sha256 {f.sha256[:16]}…" + (f" ({f.source}, taken {f.taken})" if f.source else ""), style="dim")


def unknown_notes(total: Tally) -> list[str]:
    """What the sums above do not hold, said once under the table: a sum marked ``≥`` holds a
    count that is unknown, and what it is short of is said here."""
    lines = []
    parts = []
    for k in ("output", "input", "cache_read", "cache_write"):
        if total.unknown[k]:
            p = f"{k.replace('_', ' ')} of {plural(total.unknown[k], 'call')}"
            if k == "output" and total.output_floor:
                p += f" (the final usage was never written; their streaming values reached {total.output_floor:,} tokens, a lower bound)"
            parts.append(p)
    if parts:
        lines.append("unknown (sums marked ≥): " + "; ".join(parts))
    if not total.money_complete and not blind(total):
        floors = f", {money(total.floor_money)} of it the output floors priced" if total.floor_money else ""
        some = f" ({plural(total.incomplete, 'priced call')} with a count unknown)" if total.incomplete else ""
        lines.append(f"money: the exact price of the known counts{some}; at least: with what is known to have been output "
                     f"(a lower bound{floors}): compare this one with ccusage")
    elif total.incomplete:  # said in the line above where it is drawn: once
        lines.append(f"money is of the known counts only for {plural(total.incomplete, 'priced call')}")
    if total.unpriced:
        reasons = ", ".join(f"{n} {r}" for r, n in sorted(total.unpriced_reasons.items()))
        lines.append(f"{plural(total.unpriced, 'call')} unpriced ({reasons}): their tokens are counted, their money is not")
    return lines




def _notes(total: Tally, sub: Tally, helpers: Tally, copies: dict[str, int] | int = 0, replays: int = 0) -> Text:
    part = share(sub, total)
    lines = [f"sub-agents: {money_pair(sub)} of {money_pair(total)} ({_pct(part['money'])} of money, "
             f"{_pct(part['tokens'])} of known tokens), {plural(sub.calls, 'call')}" if sub.calls else "sub-agents: none"]
    if helpers.calls:
        lines.append(f"helpers (compaction, warm-up): {money_pair(helpers)}, {plural(helpers.calls, 'call')}")
    if isinstance(copies, dict):
        for conv, n in copies.items():
            lines.append(f"{plural(n, 'call')} {'is a copy' if n == 1 else 'are copies'} of calls conversation {conv[:8]} landed first: counted there, not here")
    elif copies:
        lines.append(f"{copies} calls held by two conversations are counted once, in the one that landed them first")
    if replays:
        lines.append(f"{replays} calls replay this conversation's own calls (a /btw side question re-sends its parent's): "
                     "counted once, as the calls they replay")
    return Text("\n".join(lines))


_TALK_FIRST = {"talk": Col("talk"), "own": Col("own money", right=True), "streams": Col("sub-agents", wrap=True, min=10),
               "n_streams": Col("sub-agents", right=True)}
_TALK_LAYOUTS = (("talk", "own", "streams"), ("talk", "n_streams"), ("talk",))


def ledger_text(led: Ledger, by: str | None = None, tz: Any = None) -> Group:
    by = by or "talk"
    head = Text.assemble((f"ledger {led.conversation}", "bold"), f"  {led.runtime}  round r{led.round} ", (led.head[:12], "dim"))
    rs = rows(led, by, tz)
    notes = unknown_notes(led.total)
    if by == "talk":
        data = [(_talk_cells(r), r.tally) for r in rs]
        owns = [r.detail["own"] for r in rs if isinstance(r.detail.get("own"), Tally)]
        main = ledger_table("main talks, each with the sub-agents it started (money: the talk with them; own: without)",
                            _TALK_FIRST, _TALK_LAYOUTS, data, led.total, notes,
                            {"own": money_cell(Tally.sum(owns))})
    elif by == "stream":
        first = {"stream": Col("stream"), "kind": Col("kind"), "root": Col("rolls up to")}
        data = [({"stream": r.key, "kind": str(r.detail.get("kind")), "root": str(r.detail.get("root"))}, r.tally) for r in rs]
        main = ledger_table("streams", first, (("stream", "kind", "root"), ("stream", "root")), data, led.total, notes)
    else:
        label = f"{by} ({zone_label(tz)})" if by in ("day", "month") else by
        main = ledger_table(f"by {label}", {by: Col(by)}, ((by,),), [({by: r.key}, r.tally) for r in rs], led.total, notes)
    parts: list[Any] = [head, _prices_line(led.prices), main]
    if by != "stream":
        subs = [s for s in led.streams if s.kind != "main"]
        if subs:
            first = {"stream": Col("sub-agent"), "kind": Col("kind"), "root": Col("rolls up to"),
                     "model": Col("model", wrap=True, min=26), "family": Col("model", wrap=True, min=17)}
            parts.append(ledger_table("per sub-agent", first,
                                      (("stream", "kind", "root", "model"), ("stream", "root", "family"), ("stream", "root")),
                                      [({"stream": s.id, "kind": s.kind, "root": s.root, "model": ", ".join(s.models) or "—",
                                         "family": ", ".join(dict.fromkeys(_family(m) for m in s.models)) or "—"}, s.tally)
                                       for s in subs]))
    parts.append(_notes(led.total, led.subagents, led.helpers, led.copies, led.replays))
    return Group(*parts)


def _family(model: str) -> str:
    """A model id without its date (``claude-sonnet-4-5-20250929`` -> ``claude-sonnet-4-5``), for narrow tables."""
    return re.sub(r"-(20\d{6}|\d{4}-\d{2}-\d{2})$", "", model)




def _talk_cells(r: Row) -> dict[str, Any]:
    streams = list(r.detail.get("streams") or [])
    own = r.detail.get("own")
    return {"talk": r.key, "own": money_cell(own) if isinstance(own, Tally) else "—",
            "streams": ", ".join(streams) or "—", "n_streams": str(len(streams)) if streams else "—"}


def nothing_note(collected: int, f: Any, newest: str | None, what: str) -> str:
    """What a table that found nothing says instead of an empty table: collect first, or that the
    span holds nothing and when the newest activity was, or that the filter matched nothing."""
    if not collected:
        return "nothing collected yet: run `asz collect` (with no path it reads each runtime's own folders; `asz collect -h` names them)"
    if f.timed:
        span = " ".join(x for x in (f"from {when(f.since, f.tz)}" if f.since else "",
                                    f"before {when(f.until, f.tz)}" if f.until else "") if x)
        last = f"; the newest activity collected is {when(newest, f.tz)} ({zone_label(f.tz)})" if newest else ""
        return f"no {what} {span}{last}"
    return f"no {what} of {'project ' + ', '.join(map(repr, f.projects)) if f.projects else ''}" \
           f"{' ' if f.projects and f.runtimes else ''}{'runtime ' + ', '.join(f.runtimes) if f.runtimes else ''} " \
           f"among {plural(collected, 'collected conversation')}"


def all_text(al: AllLedger) -> Group:
    if not al.rows:
        return Group(Text(nothing_note(al.collected, al.filter, al.newest, "model call")))
    by = al.by
    total, sub, helpers = all_totals(al)
    notes = unknown_notes(total) + filter_notes(al)
    short = al.shorts
    title = plural(all_count(al), "conversation")
    if by in ("model", "day", "month", "project"):
        label = f"{by} ({zone_label(al.filter.tz)})" if by in ("day", "month") else by
        # a project is its path whole, or where that does not fit, the fewest last folders that tell it apart
        tails = short_paths([r.key for _, r in al.rows]) if by == "project" else {}
        first = {by: Col(by), "tail": Col(f"{by} (last folders)")}
        t = ledger_table(f"{title} by {label}", first, ((by,), ("tail",)) if tails else ((by,),),
                         [({by: r.key, "tail": tails.get(r.key, r.key)}, r.tally) for _, r in al.rows], total, notes)
    elif by in ("talk", "stream"):
        first = {"conversation": Col("conversation"), by: Col(by)}
        t = ledger_table(f"{title} by {by}", first, (("conversation", by),),
                         [({"conversation": short.get(c or "", (c or "")[:8]), by: r.key}, r.tally) for c, r in al.rows], total, notes)
    else:
        # a folder name cut with "…" where it does not fit, never folded mid-word: one line a conversation
        first = {"conversation": Col("conversation"), "runtime": Col("runtime"),
                 "project": Col("project", wrap=True, min=10, one_line=True), "sub": Col("sub-agents", right=True)}
        data = [({"conversation": short.get(r.key, r.key[:8]), "runtime": str(r.detail.get("runtime")),
                  "project": Text(folder(r.detail.get("project"))),
                  "sub": _sub_money(r.detail.get("subagents"))}, r.tally)
                for _, r in al.rows]
        t = ledger_table(title, first, (("conversation", "runtime", "project", "sub"), ("conversation", "project"), ("conversation",)),
                         data, total, notes)
    return Group(_prices_line(al.prices), t, _notes(total, sub, helpers, *all_elsewhere(al)))


def _sub_money(t: Any) -> str:
    return money_cell(t) if isinstance(t, Tally) and t.calls else "—"




def filter_notes(al: AllLedger) -> list[str]:
    return filter_notes_of(al.filter, al.untimed_calls)


def filter_notes_of(f: Any, untimed_calls: int) -> list[str]:
    out = []
    if f.timed:
        span = " ".join(x for x in (f"from {when(f.since, f.tz)}" if f.since else "",
                                    f"before {when(f.until, f.tz)}" if f.until else "") if x)
        out.append(f"calls made {span} ({zone_label(f.tz)})")
        if untimed_calls:
            out.append(f"{plural(untimed_calls, 'call')} left out: the record gives no time to place them in the span")
    if f.projects:
        out.append("projects holding " + ", ".join(repr(p) for p in f.projects))
    if f.runtimes:
        out.append("runtimes " + ", ".join(f.runtimes))
    return out


def blocks_text(bl: Any, tz: Any = None) -> Group | Text:
    """``asz ledger --by block``: one row a 5-hour block (gaps said in one row), the active one's
    burn rate and projection under the table."""
    from . import times
    from .blocks import HOURS, burn

    if not bl.blocks:
        f = bl.filter
        if bl.collected and not (f.timed or f.projects or f.runtimes):  # calls collected, none of them timed
            return Text("no model call with a time to place in a block", style="dim")
        # nothing collected, or a span or a project that finds nothing: as every other table says it
        return Text(nothing_note(bl.collected, f, bl.newest, "model call"))
    first = {"start": Col("block start"), "status": Col("status", wrap=True, min=12), "models": Col("models", wrap=True, min=14),
             "family": Col("models", wrap=True, min=12), "when": Col("block start")}
    nothing = dict.fromkeys(("calls", "input", "output", "cache_read", "cache_write", "tokens", "money", "bound"), "—")
    data = []
    for b in bl.blocks:
        start = when(b.start, tz)
        if b.gap:
            status = f"gap, {times.span_text((b.end - b.start).total_seconds())}"
        elif b.active:
            status = (f"ACTIVE, {times.span_text((bl.now - b.start).total_seconds())} in, "
                      f"{times.span_text((b.end - bl.now).total_seconds())} left")
        else:
            status = times.span_text((b.last - b.start).total_seconds())
        data.append(({"start": start, "status": status, "when": f"{start}\n{status}", "models": ", ".join(b.models) or "—",
                      "family": ", ".join(dict.fromkeys(_family(m) for m in b.models)) or "—",
                      **(nothing if b.gap else {})}, b.tally))
    total = Tally.sum(b.tally for b in bl.blocks if not b.gap)
    notes = unknown_notes(total) + filter_notes_of(bl.filter, 0)
    notes.append(f"a block: {HOURS} hours from the hour of its first call; a call more than {HOURS} hours after "
                 f"its start or the call before it opens the next; times are {zone_label(tz)}")
    t = ledger_table(f"{plural(sum(1 for b in bl.blocks if not b.gap), 'block')} of {HOURS} hours", first,
                     (("start", "status", "models"), ("start", "status", "family"), ("start", "status"), ("when",)),
                     data, total, notes)
    parts: list[Any] = [_prices_line(bl.prices), t]
    for b in bl.blocks:
        r = burn(b, bl.now)
        if r is not None:
            parts.append(Text(
                f"active block: {r.tokens_per_minute:,.0f} tokens a minute, {money(r.money_per_hour)} an hour "
                f"(≥ {money(r.bound_per_hour)}); at that rate by its end ({when(b.end, tz, '%H:%M')}, "
                f"{r.remaining_minutes} min left): {r.projected_tokens:,} tokens, {money(r.projected_money)} "
                f"(≥ {money(r.projected_bound)})"))
        elif b.active:
            parts.append(Text("active block: its calls came at one instant, so no rate yet", style="dim"))
    return Group(*parts)


def update_text(r: UpdateResult) -> Text:
    what = "wrote" if r.changed else "unchanged:"
    gone = f"; removed {', '.join(r.removed)}" if r.removed else ""
    return Text(f"{what} {r.file.path} ({r.file.source}) sha256 {r.file.sha256}{gone}")
