"""``asz runs --team``: the team's runs and the team view, as tables, JSON and one HTML page."""

from __future__ import annotations

import datetime as dt
import html
import os
import tempfile
from decimal import Decimal
from pathlib import Path
from typing import Any

from rich.console import Group as RichGroup
from ..tables import InertText as Text  # every text of a report inert (terminal_text)

from ..money import dollars
from ..tables import Col, FitTable, plural, when, zone_label
from .view import Group


def _money(v: Decimal, unit: str) -> str:
    if unit == "tokens":
        return f"{int(v):,} tok"
    return dollars(v)


def _share(v: Decimal | None) -> str:
    return "—" if v is None else f"{float(v):.2f}"


_RUN_COLS = {
    "job": Col("job", right=True), "conv": Col("conversation"), "project": Col("project", wrap=True, min=10),
    "head": Col("head"), "evaluator": Col("evaluator", wrap=True, min=10), "status": Col("status"),
    "attempts": Col("tries", right=True), "host": Col("host", wrap=True, min=8), "ended": Col("ended"),
    "cost": Col("targets' cost", right=True), "scores": Col("scores", wrap=True, min=14),
}
_RUN_LAYOUTS = (
    ("job", "conv", "project", "head", "evaluator", "status", "attempts", "host", "ended", "cost", "scores"),
    ("job", "conv", "project", "head", "status", "attempts", "cost", "scores"),
    ("job", "conv", "status", "cost", "scores"),
    ("job", "conv", "status"),
)


def runs_text(rows: list[dict[str, Any]], tz: dt.tzinfo | None = None) -> Any:
    if not rows:
        return Text("no team runs yet: `asz judge --all --evaluator NAME` queues them, `asz worker` runs them", style="dim")
    t = FitTable(_RUN_COLS, _RUN_LAYOUTS, title=f"{plural(len(rows), 'team run')}, newest queued first",
                 notes=[f"times are {zone_label(tz)}; queued: waiting for a worker (or for another try); "
                        "tries: attempts so far; a run is listed once, by its job, however often it was tried",
                        *(f"job {r['job_id']}: {(r.get('summary') or {}).get('error')}" for r in rows
                          if isinstance(r.get("summary"), dict) and (r.get("summary") or {}).get("error"))])
    for r in rows:
        s = r.get("summary") if isinstance(r.get("summary"), dict) else {}
        total = ((s.get("cost") or {}).get("total") or {}) if s else {}
        unit = "money" if not int(total.get("unpriced") or 0) else "tokens"
        t.add_row({"job": r["job_id"], "conv": r["conversation"][:8], "project": r.get("project") or "—",
                   "head": r["head"], "evaluator": r["evaluator"], "status": r["status"], "attempts": r["attempts"],
                   "host": r.get("host") or "—", "ended": when(r.get("ended"), tz) if r.get("ended") else "—",
                   "cost": _money(Decimal(str(total.get("money") or 0)) if unit == "money" else Decimal(int(total.get("tokens") or 0)), unit)
                   if total else "—",
                   "scores": ", ".join(f"{k} {_share(Decimal(v))}" for k, v in (s.get("scores") or {}).items() if v is not None)
                   if s else "—"})
    return RichGroup(t)


def queued_json(done: Any) -> dict[str, Any]:
    return {"filter": done.filter, "conversations": done.conversations,
            "queued": [{"job": q.job, "conversation": q.conversation, "head": q.head, "project": q.project,
                        "skipped": q.skipped} for q in done.queued]}


def queued_text(done: Any) -> Any:
    queued = done.queued
    if not queued:
        return Text("no conversation matches: nothing queued (`asz conversations` with the same filters lists them)",
                    style="dim")
    t = FitTable({"job": Col("job", right=True), "conv": Col("conversation"), "head": Col("head"),
                  "project": Col("project", wrap=True, min=10), "what": Col("queued", wrap=True, min=10)},
                 (("job", "conv", "head", "project", "what"), ("job", "conv", "head", "what")),
                 title=f"{plural(sum(q.job is not None for q in queued), 'run')} queued of "
                       f"{plural(len(queued), 'conversation')}",
                 notes=["`asz worker` runs them; `asz runs --team` lists them as they close"])
    for q in queued:
        t.add_row({"job": q.job if q.job is not None else "—", "conv": q.conversation[:8], "head": q.head,
                   "project": q.project or "—", "what": "queued" if q.job is not None else f"not queued: {q.skipped}"})
    return RichGroup(t)


_VIEW_COLS = {
    "key": Col("group"), "convs": Col("conv.", right=True), "closed": Col("closed", right=True),
    "failed": Col("failed", right=True), "waiting": Col("waiting", right=True), "cost": Col("targets' cost", right=True),
    "avoidable": Col("avoidable", right=True), "share": Col("avoidable share", right=True),
    "achievement": Col("achievement", right=True), "delivered": Col("delivered", right=True),
}
_VIEW_LAYOUTS = (
    ("key", "convs", "closed", "failed", "waiting", "cost", "avoidable", "share", "achievement", "delivered"),
    ("key", "convs", "closed", "cost", "avoidable", "share", "achievement"),
    ("key", "cost", "share", "achievement"),
)


def view_text(gs: list[Group], by: str) -> Any:
    if not gs:
        return Text("no team runs yet: `asz judge --all --evaluator NAME` queues them, `asz worker` runs them", style="dim")
    cols = dict(_VIEW_COLS)
    cols["key"] = Col(by)
    t = FitTable(cols, _VIEW_LAYOUTS, title=f"the team's judged conversations by {by}",
                 notes=["each conversation counts once, by its newest closed run; cost is the targets'; the avoidable "
                        "share is avoidable / reviewed; achievement and delivered weigh each run's score by its targets' "
                        "cost; tok: tokens where a call of the targets is unpriced"])
    for g in gs:
        t.add_row({"key": g.key, "convs": g.conversations, "closed": g.closed, "failed": g.failed, "waiting": g.waiting,
                   "cost": _money(g.cost, g.unit), "avoidable": _money(g.avoidable, g.unit),
                   "share": _share(g.avoidable_share), "achievement": _share(g.achievement),
                   "delivered": _share(g.delivered)})
    return RichGroup(t)


# --- one HTML page ---------------------------------------------------------------------------------

_CSS = """
body{font:15px/1.45 system-ui,sans-serif;margin:1.2rem auto;max-width:1100px;padding:0 .8rem;color:#1d2330}
h1{font-size:1.35rem}h2{font-size:1.1rem;margin-top:1.6rem}
.scroll{overflow-x:auto}table{border-collapse:collapse;min-width:100%}
th,td{padding:.3rem .5rem;border-bottom:1px solid #dde;text-align:right;white-space:nowrap}
th:first-child,td:first-child{text-align:left}svg{max-width:100%;height:auto}
.note{color:#5a6170;font-size:.9rem}
"""


def _bars_svg(items: list[tuple[str, float, float]], title: str, fmt: Any, scale: float | None = None) -> str:
    """Horizontal bars, one per item: the whole (light) and a part of it (dark), to one scale
    (``scale``, else the largest whole)."""
    if not items:
        return "<p class=note>nothing to draw yet</p>"
    top = scale or max((w for _, w, _ in items), default=0) or 1.0
    h, label_w, bar_w = 26, 180, 520
    out = [f'<svg role="img" aria-label="{html.escape(title)}" viewBox="0 0 {label_w + bar_w + 120} {h * len(items) + 6}">']
    for i, (label, whole, part) in enumerate(items):
        y = i * h + 3
        ww = bar_w * whole / top
        pw = bar_w * part / top
        out.append(f'<text x="0" y="{y + 16}" font-size="13">{html.escape(label[:28])}</text>'
                   f'<rect x="{label_w}" y="{y}" width="{ww:.1f}" height="18" fill="#b9cbe8"/>'
                   f'<rect x="{label_w}" y="{y}" width="{pw:.1f}" height="18" fill="#c0392b"/>'
                   f'<text x="{label_w + ww + 6:.1f}" y="{y + 14}" font-size="12">{html.escape(fmt(whole, part))}</text>')
    out.append("</svg>")
    return "".join(out)


def write_page(path: Path, text: str) -> None:
    """Write the page atomically (a temp file beside it, then a rename), replacing an earlier one."""
    fd, tmp = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".", prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode("utf-8"))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def page(by_project: list[Group], by_week: list[Group], rows: list[dict[str, Any]]) -> str:
    """The team view as one self-contained page: cost over time, avoidable share per project, both tables."""
    def table(gs: list[Group], by: str) -> str:
        head = "".join(f"<th>{html.escape(h)}</th>" for h in (by, "conversations", "closed", "failed", "waiting",
                                                              "targets' cost", "avoidable", "avoidable share",
                                                              "achievement", "delivered"))
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in (
                g.key, g.conversations, g.closed, g.failed, g.waiting, _money(g.cost, g.unit), _money(g.avoidable, g.unit),
                _share(g.avoidable_share), _share(g.achievement), _share(g.delivered))) + "</tr>" for g in gs)
        return f"<div class=scroll><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"

    weeks = [(g.key, float(g.cost), float(g.avoidable)) for g in by_week]
    projects = [(g.key, float(g.avoidable_share or 0), float(g.avoidable_share or 0)) for g in by_project]
    unit = "money" if all(g.unit == "money" for g in by_week) else "tokens"

    def cost_label(whole: float, part: float) -> str:
        return f"{_money(Decimal(str(whole)), unit)}, avoidable {_money(Decimal(str(part)), unit)}"

    waiting = sum(r["status"] in ("queued", "running") for r in rows)
    failed = sum(r["status"] == "failed" for r in rows)
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width,initial-scale=1"><title>asz: the team\'s runs</title>'
        f"<style>{_CSS}</style></head><body><h1>What the team's agents delivered and wasted</h1>"
        f"<p class=note>{len(rows)} team runs: {sum(r['status'] == 'closed' for r in rows)} closed, {failed} failed, "
        f"{waiting} waiting. Each conversation counts once, by its newest closed run.</p>"
        "<h2>Cost over time (targets' cost per week; red: avoidable)</h2>"
        + _bars_svg(weeks, "cost per week", cost_label)
        + "<h2>Avoidable share per project (avoidable / reviewed)</h2>"
        + _bars_svg(projects, "avoidable share per project", lambda w, p: f"{w:.2f}", scale=1.0)
        + "<h2>By project</h2>" + table(by_project, "project")
        + "<h2>By week</h2>" + table(by_week, "week")
        + "</body></html>\n")
