"""Rendering for people (rich tables and text) and for programs (plain JSON-able data)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console, Group
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn
from rich.table import Table
from rich.text import Text

from . import times
from .assembly import Conversation, Step
from .collect import CollectResult
from .conversations import Listed, Listing
from .convert import unstructure
from .ledger import Tally
from .ledger_report import BLIND_NOTE, blind, money, money_cell
from .records import USAGE_TYPES
from .registry import PluginInfo
from .tables import Col, FitTable
from .textclip import one_line

CLIP = 200  # bytes of an input or reply shown in a talk row


def clip(text: str, limit: int = CLIP) -> str:
    return one_line(text, limit)


# -- collect -------------------------------------------------------------------------------

@contextmanager
def progress_bar(console: Console, enabled: bool = True) -> Iterator[Any]:
    if not enabled or not console.is_terminal:
        yield None
        return
    with Progress(TextColumn("collect"), BarColumn(), DownloadColumn(), TransferSpeedColumn(), TimeRemainingColumn(),
                  console=console, transient=True) as p:
        task = p.add_task("collect", total=None)

        def update(done: int, total: int, _file: str) -> None:
            p.update(task, completed=done, total=total)

        yield update


def collect_json(r: CollectResult) -> dict[str, Any]:
    return {
        "files_read": r.files_read, "files_unchanged": r.files_unchanged, "bytes_read": r.bytes_read,
        "records_seen": r.records_seen, "records_published": r.records_published,
        "rounds": [unstructure(x) for x in r.rounds], "warnings": [str(p) for p in r.problems],
    }


def collect_table(r: CollectResult) -> Group:
    t = Table("conversation", "round", "records", "head", title="published")
    for x in r.rounds:
        t.add_row(x.conversation[:8], f"r{x.number}", str(x.records), x.head[:12])
    summary = Text(
        f"{r.files_read} files read, {r.files_unchanged} unchanged; {r.records_published} new records "
        f"in {len(r.rounds)} conversations" + (f"; {len(r.problems)} warnings" if r.problems else "")
    )
    return Group(t, summary) if r.rounds else Group(summary)


# -- conversations ---------------------------------------------------------------------------

def listed_json(x: Listed) -> dict[str, Any]:
    s = x.summary
    return {
        "id": x.id, "short": x.short, "runtime": x.runtime, "sessions": list(x.sessions),
        "project": s.project, "projects": list(s.projects), "started": s.started, "last_activity": s.last,
        "first_input": s.first_input, "talks": s.talks, "subagents": s.streams, "model_calls": s.total.calls,
        "money": str(s.total.money), "money_complete": s.total.unpriced == 0 and s.total.incomplete == 0,
        "head": f"r{x.head.number}", "head_digest": x.head.head,
    }


def listing_json(lst: Listing) -> list[dict[str, Any]]:
    return [listed_json(x) for x in lst.rows]


_CONV_COLS = {
    "id": Col("id"), "runtime": Col("runtime"), "started": Col("started"), "last": Col("last activity"),
    "project": Col("project", wrap=True, min=24), "folder": Col("project", wrap=True, min=10), "money": Col("cost", right=True),
    "talks": Col("talks", right=True), "calls": Col("calls", right=True), "input": Col("first input", wrap=True, min=16),
    "head": Col("head"),
}
_CONV_LAYOUTS = (
    ("id", "runtime", "started", "last", "project", "money", "talks", "calls", "input", "head"),
    ("id", "runtime", "last", "folder", "money", "talks", "calls", "input"),
    ("id", "last", "folder", "money", "calls", "input"),
    ("id", "last", "folder", "money", "input"),
    ("id", "last", "money", "input"),
)


def listing_table(lst: Listing) -> FitTable:
    f = lst.filter
    shown = f"{len(lst.rows)} of {lst.total} conversations" if len(lst.rows) != lst.total else f"{lst.total} conversations"
    notes = [money_note(x.summary.total for x in lst.rows),
             f"times are {zone_label(f.tz)}; newest activity last"]
    if lst.untimed:
        notes.append(f"{lst.untimed} conversations left out: their record gives no time to place them in the span")
    t = FitTable(_CONV_COLS, _CONV_LAYOUTS, title=shown, notes=notes)
    for x in lst.rows:
        s = x.summary
        t.add_row({"id": x.short, "runtime": x.runtime, "started": when(s.started, f.tz), "last": when(s.last, f.tz),
                   "project": Text(s.project or "—"), "folder": Text(folder(s.project)), "money": money_cell(s.total),
                   "talks": s.talks, "calls": s.total.calls, "input": Text(clip(s.first_input or "—", 90)),
                   "head": f"r{x.head.number}"})
    return t


def folder(path: str | None) -> str:
    """A project's last folder name (``/home/me/src/asz`` -> ``asz``), for narrow tables."""
    if not path:
        return "—"
    parts = [p for p in path.replace("\\", "/").split("/") if p]
    return parts[-1] if parts else path


def when(ts: str | None, tz: Any, seconds: bool = False) -> str:
    """A time as a person reads it: local (or --timezone) wall clock, minutes (or seconds)."""
    t = times.instant(ts)
    if t is None:
        return "—"
    return times.local(t, tz).strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")


def zone_label(tz: Any) -> str:
    if tz is None:
        import datetime as dt

        return f"local time ({dt.datetime.now().astimezone().tzname()})"
    return f"in {getattr(tz, 'key', None) or tz}"


def money_note(tallies: Iterable[Tally]) -> str:
    """One line under a table of costs: what is not in them (nothing when all is known)."""
    ts = list(tallies)
    part = sum(1 for t in ts if not blind(t) and (t.incomplete or t.unpriced))
    bits = [BLIND_NOTE] if any(blind(t) for t in ts) else []
    if part:
        bits.append(f"{plural(part, 'cost')} of what is known only: some of its calls have a count unknown or no price "
                    "(`asz ledger CONV` says which)")
    return "; ".join(bits)


def plural(n: int, what: str) -> str:
    return f"{n:,} {what}" + ("" if n == 1 else "s")


# -- show -----------------------------------------------------------------------------------

def usage_totals(steps: list[Step]) -> dict[str, Any]:
    """Sum of the four types over model calls, with unknowns counted apart (never as 0). A replay
    or a copy of a call counted elsewhere (``Step.counted_elsewhere``) is counted apart, not summed."""
    tot: dict[str, Any] = {k: 0 for k in USAGE_TYPES}
    unknown = {k: 0 for k in USAGE_TYPES}
    for s in steps:
        if s.kind != "model_call" or s.usage is None or s.counted_elsewhere:
            continue
        for k in USAGE_TYPES:
            v = getattr(s.usage, k)
            if v is None:
                unknown[k] += 1
            else:
                tot[k] += v
    calls = [s for s in steps if s.kind == "model_call"]
    return {"tokens": tot, "unknown_calls": unknown, "model_calls": sum(1 for s in calls if not s.counted_elsewhere),
            "counted_elsewhere": sum(1 for s in calls if s.counted_elsewhere)}


def _talk_steps(conv: Conversation, talk_id: str, with_children: bool) -> list[Step]:
    talk = conv.talk(talk_id)
    steps = [conv.step(s) for s in talk.steps]
    if with_children:
        for s in list(steps):
            for a in s.starts:
                st = conv.stream(a)
                if st.unattributed is None:
                    for k in st.talks:
                        steps.extend(_talk_steps(conv, k, True))
    return steps


def show_json(conv: Conversation) -> dict[str, Any]:
    talks = []
    for t in conv.talks:
        inputs = [conv.step(i) for i in t.inputs]
        talks.append({
            "id": t.id, "stream": t.stream, "start": t.start, "end": t.end,
            "inputs": [{"id": i.input, "source": i.source, "text": clip(i.text)} for i in inputs],
            "reply": clip(conv.step(t.reply).text) if t.reply else None,
            "steps": len(t.steps),
            "own": usage_totals([conv.step(s) for s in t.steps]),
            "with_subagents": usage_totals(_talk_steps(conv, t.id, True)) if t.stream == "m" else None,
        })
    return {
        "id": conv.id, "runtime": conv.runtime, "round": f"r{conv.round.number}", "head": conv.round.head,
        "streams": [unstructure(s) for s in conv.streams],
        "talks": talks,
        "totals": usage_totals(list(conv.steps)),
        "model_calls": [{"step": s.id, "stream": s.stream, "talk": s.talk, "model": s.model, "usage": unstructure(s.usage),
                         "output_floor": s.output_floor, "replay_of": s.replay_of, "copy_of": s.copy_of}
                        for s in conv.model_calls()],
    }


def _tokens(u: dict[str, Any]) -> str:
    tok, unk = u["tokens"], u["unknown_calls"]
    parts = []
    for k, label in (("input", "in"), ("output", "out"), ("cache_read", "cache r"), ("cache_write", "cache w")):
        s = f"{label} {tok[k]:,}"
        if unk[k]:
            s += f" (+{unk[k]} unknown)"
        parts.append(s)
    return " · ".join(parts)


def show_text(conv: Conversation) -> Group:
    data = show_json(conv)
    head = Text.assemble((f"conversation {conv.id}", "bold"), f"  {conv.runtime}  round r{conv.round.number} ",
                         (conv.round.head[:12], "dim"))
    t = Table("talk", "stream", "input", "reply", "calls", "tokens (with sub-agents)", show_lines=True)
    for k in data["talks"]:
        ins = "\n".join(f"{i['id']} [{i['source']}] {i['text']}" for i in k["inputs"]) or "—"
        u = k["with_subagents"] or k["own"]
        t.add_row(k["id"], k["stream"], ins, k["reply"] or "—", str(u["model_calls"]), _tokens(u))
    streams = Table("stream", "kind", "started by", "talks", "steps", "attribution", title="streams")
    for s in conv.streams:
        streams.add_row(s.id, s.kind, ",".join(s.started_by) or "—", ",".join(s.talks) or "—", str(s.steps),
                        s.unattributed or ("—" if s.kind == "main" else f"from {s.parent}"))
    tot = Text(f"total: {data['totals']['model_calls']} model calls; {_tokens(data['totals'])}")
    return Group(head, t, streams, tot)


# -- operations ---------------------------------------------------------------------------------

def operations_json(conv: Conversation, ops: list[Any]) -> dict[str, Any]:
    captured = any(s.changes for s in conv.steps) or bool(conv.unattached)
    return {"id": conv.id, "round": f"r{conv.round.number}", "head": conv.round.head, "captured": captured,
            "operations": [o.to_json() for o in ops]}


def operations_text(conv: Conversation, ops: list[Any]) -> Group:
    head = Text.assemble((f"conversation {conv.id}", "bold"), f"  round r{conv.round.number} ", (conv.round.head[:12], "dim"))
    t = Table("op", "step", "talk", "tool", "status", "shows", "change", "file", title=f"{len(ops)} file operations")
    for o in ops:
        if o.shows == "unlisted":
            what, path = "unlisted", f"{o.count if o.count is not None else '?'} files, not named"
        else:
            what = o.kind or "—"
            path = o.path or "—"
            shown = [f for f in o.flags if f != "diff"]  # binary, ignored (never inlined), oversized, diff_cut
            if shown:
                path += f"  [{', '.join(shown)}]"
        t.add_row(o.id, o.step or "—", o.talk or "—", Text(o.tool or "—"), o.status or "—", o.shows, what, Text(path))
    captured = any(s.changes for s in conv.steps) or bool(conv.unattached)
    note = Text("" if captured else "no change records are captured for this conversation: what changed is not_captured; "
                "operations above are only what editing requests named", style="dim")
    return Group(head, t, note) if not captured else Group(head, t)


# -- plugins --------------------------------------------------------------------------------

def plugins_json(rows: list[PluginInfo]) -> list[dict[str, Any]]:
    return [unstructure(r) for r in rows]


def plugins_table(rows: list[PluginInfo]) -> Table:
    t = Table("kind", "name", "distribution", "version", "class", title="installed asz plugins")
    for r in rows:
        t.add_row(r.kind, r.name, r.distribution, r.version, r.cls)
    return t
