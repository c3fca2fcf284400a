"""Rendering for people (rich tables and text) and for programs (plain JSON-able data). (collect's
table is collect_report's; the ledger's, ledger_report's.)"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from . import times
from .ledger import Ledger, Tally
from .money import figure
from .ledger_report import BLIND_NOTE, blind, bound_cell, nothing_note, count_cell, money, money_cell, money_pair, tokens_cell, unknown_notes
from .records import USAGE_TYPES
from .tables import Col, FitTable, folder, plural, when, zone_label
from .doc import Line as Text  # every text of a report inert (terminal_text), drawn with or without rich
from .doc import Parts as Group
from .textclip import one_line

if TYPE_CHECKING:  # for annotations only: a table of one command imports what it uses
    from .assembly import Conversation
    from .conversations import Listed, Listing
    from .registry import PluginInfo

CLIP = 200  # bytes of an input or reply shown in a talk row


def clip(text: str, limit: int = CLIP) -> str:
    return one_line(text, limit)


# -- collect: collect_report.py (its progress bar, push's too, and its table) --------------

def push_text(r: Any) -> Text:
    """What ``asz push`` did, in one line."""
    if not r.rounds and not r.already:
        return Text(f"{r.server} holds every round of this store: nothing to push")
    return Text(f"pushed {plural(r.rounds, 'round')} of {plural(r.conversations, 'conversation')} ({plural(r.records, 'record')}, "
                f"{r.bytes / 1e6:.1f} MB) to {r.server} in {r.seconds:.1f} s"
                + (f"; {plural(r.already, 'round')} had landed already" if r.already else "")
                + (f"; {plural(r.retries, 'request')} sent again" if r.retries else ""))


def tokens_table(rows: list[dict[str, Any]]) -> Group:
    cols = {"name": Col("machine"), "ro": Col("read-only"), "made": Col("made"), "revoked": Col("revoked")}
    t = FitTable(cols, (("name", "ro", "made", "revoked"),), title="tokens")
    for r in rows:
        t.add_row({"name": r["name"], "ro": "yes" if r["read_only"] else "", "made": r["created"], "revoked": r["revoked"] or ""})
    return Group(t, Text(plural(len(rows), "token")))


# -- conversations ---------------------------------------------------------------------------

def listed_json(x: Listed) -> dict[str, Any]:
    s = x.summary
    return {
        "id": x.id, "short": x.short, "runtime": x.runtime, "sessions": list(x.sessions),
        "project": s.project, "projects": list(s.projects), "started": s.started, "last_activity": s.last,
        "first_input": s.first_input, "talks": s.talks, "subagents": s.streams, "model_calls": s.total.calls,
        "money": str(s.total.money), "money_complete": s.total.money_complete,
        "money_lower_bound": str(s.total.money_bound),
        "head": f"r{x.head.number}", "head_digest": x.head.head,
    }


def listing_json(lst: Listing) -> list[dict[str, Any]]:
    return [listed_json(x) for x in lst.rows]


def _conv_cols(wide: bool) -> dict[str, Col]:
    """The listing's columns: by default one line a conversation (its project and first input
    cut with "…" where they do not fit); ``wide``, every word of them, wrapped."""
    one = not wide
    return {
        "id": Col("id"), "runtime": Col("runtime"), "started": Col("started"), "last": Col("last activity"),
        "project": Col("project", wrap=True, min=24, one_line=one), "folder": Col("project", wrap=True, min=10, one_line=one),
        "money": Col("cost", right=True), "bound": Col("at least", right=True),
        "talks": Col("talks", right=True), "calls": Col("calls", right=True),
        "input": Col("first input", wrap=True, min=16, one_line=one), "head": Col("head"),
    }


_CONV_LAYOUTS = (
    ("id", "runtime", "started", "last", "project", "money", "bound", "talks", "calls", "input", "head"),
    ("id", "runtime", "last", "folder", "money", "bound", "talks", "calls", "input"),
    ("id", "last", "folder", "money", "bound", "calls", "input"),
    ("id", "last", "folder", "money", "bound", "input"),
    ("id", "last", "money", "bound", "input"),
)


def listing_table(lst: Listing, wide: bool = False) -> FitTable | Text:
    f = lst.filter
    if not lst.rows:
        return Text(nothing_note(lst.total, f, lst.newest, "conversation active" if f.timed else "conversation"))
    shown = f"{len(lst.rows)} of {plural(lst.total, 'conversation')}" if len(lst.rows) != lst.total else plural(lst.total, "conversation")
    notes = [money_note(x.summary.total for x in lst.rows),
             f"times are {zone_label(f.tz)}; newest activity last"]
    if lst.untimed:
        notes.append(f"{lst.untimed} conversations left out: their record gives no time to place them in the span")
    t = FitTable(_conv_cols(wide), _CONV_LAYOUTS, title=shown, notes=notes)
    for x in lst.rows:
        s = x.summary
        t.add_row({"id": x.short, "runtime": x.runtime, "started": when(s.started, f.tz), "last": when(s.last, f.tz),
                   "project": Text(s.project or "—"), "folder": Text(folder(s.project)), "money": money_cell(s.total),
                   "bound": bound_cell(s.total), "talks": s.talks, "calls": s.total.calls,
                   "input": Text(clip(s.first_input or "—", CLIP if wide else 90)),
                   "head": f"r{x.head.number}"})
    return t








def money_note(tallies: Iterable[Tally]) -> str:
    """One line under a table of costs: what is not in them (nothing when all is known)."""
    ts = list(tallies)
    part = sum(1 for t in ts if not blind(t) and not t.money_complete)
    bits = [BLIND_NOTE] if any(blind(t) for t in ts) else []
    if part:
        bits.append(f"{part} of these costs {'is' if part == 1 else 'are'} of what is known only: some of "
                    f"{'its' if part == 1 else 'their'} calls have a count unknown or no price (`asz ledger CONV` says which)")
    return "; ".join(bits)




# -- show -----------------------------------------------------------------------------------

def usage_of(t: Tally, elsewhere: int) -> dict[str, Any]:
    """A ledger tally as ``show --json`` gives it: the known sums of the four types, the calls
    with each one unknown (never 0), the calls counted here, and ``elsewhere``: the calls copied
    from another conversation or replaying one of this one's (``Step.counted_elsewhere``),
    counted where they landed first or as the call they replay."""
    return {"tokens": {k: t.tokens[k] for k in USAGE_TYPES}, "unknown_calls": dict(t.unknown), "model_calls": t.calls,
            "counted_elsewhere": elsewhere}


def show_json(conv: Conversation, led: Ledger) -> dict[str, Any]:
    from .convert import unstructure  # cattrs, for this JSON only (not for the tables)

    money_of, own = _talk_money(led), _own(led)
    rolled = {t.id: t for t in led.talks}
    # the calls counted elsewhere, by talk and by stream: a main talk's with its sub-agents are
    # its own and those of the streams that roll up to it (the ledger's roll-up)
    by_talk: dict[str | None, int] = {}
    by_stream: dict[str, int] = {}
    for c in conv.model_calls():
        if c.counted_elsewhere:
            by_talk[c.talk] = by_talk.get(c.talk, 0) + 1
            by_stream[c.stream] = by_stream.get(c.stream, 0) + 1
    talks = []
    for t in conv.talks:
        row = rolled.get(t.id) if t.stream == "m" else None
        inputs = [conv.step(i) for i in t.inputs]
        m = money_of.get(t.id)
        talks.append({
            "id": t.id, "stream": t.stream, "start": t.start, "end": t.end, "seconds": _seconds(t.start, t.end),
            "inputs": [{"id": i.input, "source": i.source, "text": clip(i.text)} for i in inputs],
            "reply": clip(conv.step(t.reply).text) if t.reply else None,
            "steps": len(t.steps),
            "own": usage_of(own.get(t.id) or Tally(), by_talk.get(t.id, 0)),
            "with_subagents": usage_of(row.with_subagents, by_talk.get(t.id, 0) + sum(by_stream.get(x, 0) for x in row.streams))
            if row is not None else None,
            "money": str(m.money) if m is not None else "0", "money_complete": m is None or m.money_complete,
            "money_lower_bound": str(m.money_bound) if m is not None else "0",
        })
    return {
        "id": conv.id, "runtime": conv.runtime, "round": f"r{conv.round.number}", "head": conv.round.head,
        "project": conv.project,
        "streams": [unstructure(s) for s in conv.streams],
        "talks": talks,
        "totals": usage_of(led.total, sum(led.copies.values()) + led.replays),
        "money": str(led.total.money), "money_lower_bound": str(led.total.money_bound), "prices": led.prices.name,
        "model_calls": [{"step": s.id, "stream": s.stream, "talk": s.talk, "model": s.model, "usage": unstructure(s.usage),
                         "output_floor": s.output_floor, "replay_of": s.replay_of, "copy_of": s.copy_of}
                        for s in conv.model_calls()],
    }


def _talk_money(led: Ledger) -> dict[str, Tally]:
    """A main talk's tally with the sub-agents it started; a sub-agent's talk, its own."""
    return {**_own(led), **{t.id: t.with_subagents for t in led.talks}}


def _own(led: Ledger) -> dict[str, Tally]:
    """Each talk's own calls (a talk with none has no tally)."""
    return {o.id: o.tally for o in led.owners if o.kind == "talk"}


def _seconds(a: str | None, b: str | None) -> float | None:
    x, y = times.instant(a), times.instant(b)
    return (y - x).total_seconds() if x is not None and y is not None else None


SHORT = (("input", "in"), ("output", "out"), ("cache_read", "cache r"), ("cache_write", "cache w"))
"""The four types as a narrow table names them."""


def _four(t: Tally, sep: str = "\n") -> str:
    return sep.join(f"{label} {count_cell(t, k)}" for k, label in SHORT)


_TALK_COLS = {
    "talk": Col("talk"), "start": Col("start"), "start_short": Col("start"), "took": Col("took", right=True),
    "input": Col("input", wrap=True, min=16), "reply": Col("reply", wrap=True, min=16),
    "calls": Col("calls", right=True), "four": Col("tokens"), "tokens": Col("tokens", right=True),
    "money": Col("money", right=True), "bound": Col("at least", right=True),
    "both": Col("money", right=True, note="under it, ≥ the lower bound (the output floors priced)"),
}
_TALK_LAYOUTS = (
    ("talk", "start", "took", "input", "reply", "calls", "four", "money", "bound"),
    ("talk", "start", "took", "input", "calls", "tokens", "money", "bound"),
    ("talk", "start_short", "took", "input", "tokens", "both"),
    ("talk", "start_short", "input", "both"),
    ("talk", "input", "both"),
)
_STREAM_COLS = {"stream": Col("stream"), "kind": Col("kind"), "by": Col("started by", wrap=True, min=10),
                "talks": Col("talks", wrap=True, min=8), "steps": Col("steps", right=True),
                "why": Col("attribution", wrap=True, min=14)}


def show_text(conv: Conversation, led: Ledger, tz: Any = None) -> Group:
    money_of = _talk_money(led)
    head = Text.assemble((f"conversation {conv.id}", "bold"), f"  {conv.runtime}  round r{conv.round.number} ",
                         (conv.round.head[:12], "dim"), f"  {conv.project}" if conv.project else "")
    sub = next((t for t in conv.talks if t.stream != "m"), None)  # named as the table shows it
    notes = ["a main talk's calls, tokens and money hold those of the sub-agents it started; a sub-agent's own "
             f"talk ({sub.id} ({sub.stream}) here) is listed too, with its own"] if sub else []
    notes += unknown_notes(led.total) + [f"times are {zone_label(tz)}"]
    quiet = [k for k in conv.talks if not (money_of.get(k.id) or Tally()).calls and not k.reply]
    if quiet:
        notes.append(f"{plural(len(quiet), 'talk')} with no model call (commands such as /clear, /context) "
                     "folded into one row each run of them")
    t = FitTable(_TALK_COLS, _TALK_LAYOUTS, title="talks", notes=notes, lines=True)
    held: list[Any] = []

    def fold() -> None:
        # a run of talks no model call answered (a /clear, a /context): one row, not four each
        if not held:
            return
        ids = held[0].id if len(held) == 1 else f"{held[0].id}–{held[-1].id}"
        said = ", ".join(dict.fromkeys(clip(conv.step(i).text, 40) for k in held for i in k.inputs)) or "—"
        t.add_row({"talk": ids, "start": when(held[0].start, tz, "%Y-%m-%d %H:%M:%S"),
                   "start_short": when(held[0].start, tz, "%m-%d %H:%M"), "took": "—",
                   "input": Text(f"{said} (no model call)"), "reply": "—", "calls": 0, "four": "—", "tokens": "—",
                   "money": "—", "bound": "—", "both": "—"})
        held.clear()

    quiet_ids = {k.id for k in quiet}
    for k in conv.talks:
        if k.id in quiet_ids:
            held.append(k)
            continue
        fold()
        m = money_of.get(k.id) or Tally()
        ins = "\n".join(f"{i.input} {clip(i.text, 160)}" + ("" if i.source in ("person", "agent") else f" ({i.source})")
                        for i in (conv.step(x) for x in k.inputs)) or "—"
        t.add_row({"talk": k.id if k.stream == "m" else f"{k.id} ({k.stream})", "start": when(k.start, tz, "%Y-%m-%d %H:%M:%S"),
                   "start_short": when(k.start, tz, "%m-%d %H:%M"), "took": times.span_text(_seconds(k.start, k.end)),
                   "input": Text(ins), "reply": Text(clip(conv.step(k.reply).text, 160) if k.reply else "—"),
                   "calls": m.calls, "four": _four(m), "tokens": tokens_cell(m), "money": money_cell(m), "bound": bound_cell(m),
                   "both": money_cell(m) if bound_cell(m) == money_cell(m) else f"{money_cell(m)}\n{bound_cell(m)}"})
    fold()
    streams = FitTable(_STREAM_COLS, (("stream", "kind", "by", "talks", "steps", "why"), ("stream", "kind", "by", "why")),
                       title="streams")
    for st in conv.streams:
        streams.add_row({"stream": st.id, "kind": st.kind, "by": ", ".join(st.started_by) or "—",
                         "talks": ", ".join(st.talks) or "—", "steps": st.steps,
                         "why": st.unattributed or ("—" if st.kind == "main" else f"from {st.parent}")})
    tot = led.total
    line = Text(f"total: {plural(tot.calls, 'model call')}; {_four(tot, ' · ')}; {money_pair(tot)}")
    return Group(head, t, streams, line)


# -- one talk's outline -----------------------------------------------------------------------------

def outline_json(conv: Conversation, head: dict[str, Any], steps: list[dict[str, Any]], led: Ledger) -> dict[str, Any]:
    price = {c.step: c.price for c in led.calls}
    rows = [{**r, "money": str(price[r["id"]]) if price.get(r["id"]) is not None else None} if r["kind"] == "model_call" else r
            for r in steps]
    return {"conversation": conv.id, "round": f"r{conv.round.number}", "head": conv.round.head, "talk": head, "steps": rows}


_STEP_COLS = {"step": Col("step"), "time": Col("time"), "kind": Col("kind"), "what": Col("what", wrap=True, min=24),
              "status": Col("status"), "result": Col("result", wrap=True, min=16), "money": Col("money", right=True)}


def outline_text(conv: Conversation, head: dict[str, Any], steps: list[dict[str, Any]], led: Ledger, tz: Any = None) -> Group:
    title = Text.assemble((f"talk {head['id']}", "bold"), f" of conversation {conv.id}  round r{conv.round.number}",
                          f"  stream {head['stream']}" if head.get("stream") else "",
                          f"  {when(head.get('start'), tz, '%Y-%m-%d %H:%M:%S')}" if head.get("start") else "",
                          f" ({times.span_text(_seconds(head.get('start'), head.get('end')))})" if head.get("start") else "")
    price = {c.step: c.price for c in led.calls}
    talks_of = {st.id: st.talks for st in conv.streams}
    t = FitTable(_STEP_COLS, (("step", "time", "kind", "what", "status", "result", "money"),
                              ("step", "time", "what", "status", "money"), ("step", "what", "status", "money")),
                 notes=[f"{plural(len(steps), 'step')}; `asz show {conv.id[:8]} --talk kN` for a sub-agent's talk; "
                        f"times are {zone_label(tz)}"])
    for r in steps:
        p = price.get(r["id"])
        m = None if p is None or p.money is None else figure(p.money, p.at_least, p.complete)
        t.add_row({"step": r["id"], "time": when(r.get("ts"), tz, "%H:%M:%S"), "kind": r["kind"], "what": Text(_what(r, talks_of)),
                   "status": _status(r), "result": Text(r.get("result") or ""),
                   "money": m if m is not None else ("" if r["kind"] != "model_call" else
                                                             "elsewhere" if conv.step(r["id"]).counted_elsewhere else "unpriced")})
    return Group(title, t)


def _what(r: dict[str, Any], talks_of: dict[str, tuple[str, ...]]) -> str:
    k = r["kind"]
    if k == "input":
        return f"{r.get('input')} [{r.get('source')}] {r.get('text') or ''}"
    if k == "model_call":
        u = r.get("usage")
        if not u:
            return f"{r.get('model') or 'model ?'}: usage not recorded"
        return f"{r.get('model') or 'model ?'}: " + " · ".join(
            f"{label} {u[key]:,}" if isinstance(u[key], int) else f"{label} ?"
            for key, label in SHORT)
    if k in ("tool", "agent_call"):
        s = f"{r.get('name') or '?'} {r.get('request') or ''}".strip()
        if r.get("starts"):
            s += "  → starts " + ", ".join(f"{a} (talk {', '.join(talks_of.get(a, ())) or '—'})" for a in r["starts"])
        return s
    if k == "notice":
        return f"[{r.get('notice')}] {r.get('text') or ''}"
    return r.get("text") or ""


def _status(r: dict[str, Any]) -> str:
    s = r.get("status") or ""
    if r.get("repeats"):
        s += f" (same as {r['repeats']})"
    return s


# -- operations ---------------------------------------------------------------------------------

def _captured(conv: Conversation) -> bool:
    """Whether change records were captured for the conversation (else what changed is not_captured)."""
    return any(s.changes for s in conv.steps) or bool(conv.unattached)


def operations_json(conv: Conversation, ops: list[Any]) -> dict[str, Any]:
    return {"id": conv.id, "round": f"r{conv.round.number}", "head": conv.round.head, "captured": _captured(conv),
            "operations": [o.to_json() for o in ops]}


def operations_text(conv: Conversation, ops: list[Any]) -> Group:
    head = Text.assemble((f"conversation {conv.id}", "bold"), f"  round r{conv.round.number} ", (conv.round.head[:12], "dim"))
    cols = {"op": Col("op"), "step": Col("step"), "talk": Col("talk"), "tool": Col("tool"), "status": Col("status"),
            "shows": Col("shows"), "change": Col("change"), "file": Col("file", wrap=True, min=20),
            "rel": Col("file", wrap=True, min=20, note=f"named from the project, {conv.project}, when in it" if conv.project else None)}
    t = FitTable(cols, (("op", "step", "talk", "tool", "status", "shows", "change", "file"),
                        ("op", "step", "status", "shows", "change", "rel"), ("op", "shows", "change", "rel")),
                 title=plural(len(ops), "file operation"))
    under = conv.project.rstrip("/\\") + "/" if conv.project else None
    for o in ops:
        if o.shows == "unlisted":
            what, path = "unlisted", f"{o.count if o.count is not None else '?'} files, not named"
        else:
            what = o.kind or "—"
            path = o.path or "—"
            shown = [f for f in o.flags if f != "diff"]  # binary, ignored (never inlined), oversized, diff_cut
            if shown:
                path += f"  [{', '.join(shown)}]"
        rel = path[len(under):] if under and path.startswith(under) else path
        t.add_row({"op": o.id, "step": o.step or "—", "talk": o.talk or "—", "tool": Text(o.tool or "—"),
                   "status": o.status or "—", "shows": o.shows, "change": what, "file": Text(path), "rel": Text(rel)})
    captured = _captured(conv)
    note = Text("" if captured else "no change records are captured for this conversation: what changed is not_captured; "
                "operations above are only what editing requests named", style="dim")
    return Group(head, t, note) if not captured else Group(head, t)


# -- plugins --------------------------------------------------------------------------------

def plugins_json(rows: list[PluginInfo]) -> list[dict[str, Any]]:
    from .convert import unstructure

    return [unstructure(r) for r in rows]


def plugins_table(rows: list[PluginInfo]) -> FitTable:
    cols = {"kind": Col("kind"), "name": Col("name"), "dist": Col("distribution"), "version": Col("version"),
            "cls": Col("class", wrap=True, min=20)}
    t = FitTable(cols, (("kind", "name", "dist", "version", "cls"), ("kind", "name", "dist", "version"), ("kind", "name", "version")),
                 title="installed asz plugins")
    for r in rows:
        t.add_row({"kind": r.kind, "name": r.name, "dist": r.distribution, "version": r.version, "cls": r.cls})
    return t


def versions_text(v: dict[str, Any]) -> str:
    lines = [f"asz {v['asz']} (asz-core {v['asz_core']}, Python {v['python']})"]
    for d in v["plugins"]:
        lines.append(f"  {d['distribution']} {d['version']}: {', '.join(d['provides'])}")
    return "\n".join(lines)
