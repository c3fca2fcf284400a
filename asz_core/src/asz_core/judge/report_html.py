"""report.html: one self-contained page of a closed run (docs/close.md).

Rendered from close.json, the stage files and the run's view of the conversation (the cited
steps' text is embedded), with inline CSS, inline SVG and a few lines of inline script: nothing
is fetched when it is viewed. Every figure it shows carries ``data-figure`` (what it is in
close.json) so a test in a real browser can check it against close.json. The page reads without
its script: citations are plain anchors to the steps' text (``:target`` shows them); the script
only opens a cited step beside the report and marks the page ``data-ready``.
"""

from __future__ import annotations

from functools import partial
from html import escape
from pathlib import Path
from typing import Any

from ..digits import id_number
from ..money import dollars, of_amount
from ..records import USAGE_TYPES
from .close import parse_time as _t
from .context import failed_stage_line
from .outcomes import class_words, not_judged
from .statement import NOT_JUDGED

LABEL_COLOURS = {
    "productive": "#3b8a4f", "necessary_exploration": "#7fb27f", "changed_requirement": "#9aa7c7",
    "repeated_failure": "#c0392b", "avoidable_error": "#e25b45", "redundant_work": "#e8873a",
    "unrequested_work": "#d9a13b", "misdirected_delegation": "#a44d8c", "redundant_delegation": "#c27bb0",
    "misled_by_subtask": "#7d3c98", "not_reviewed": "#b8b8b8",
}
CLASS_COLOURS = {"contradicted": "#8e1b1b", "reverted": "#b03a2e", "not_achieved": "#c0392b", "partial": "#d68910",
                 "unverified": "#7f8c8d", "achieved": "#1e8449", "cancelled": "#5d6d7e", "replaced": "#5d6d7e",
                 "not judged": "#777"}

CSS = """
:root{--fg:#1d232a;--dim:#66707a;--line:#dde1e5;--bg:#fbfbfc}
*{box-sizing:border-box}body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;color:var(--fg);background:var(--bg);margin:0}
main{max-width:1100px;margin:0 auto;padding:24px}h1{font-size:20px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
h3{font-size:15px;margin:0}.dim{color:var(--dim)}.mono{font-family:ui-monospace,Menlo,monospace;font-size:12.5px}
.cards{display:flex;gap:12px;flex-wrap:wrap;margin:16px 0}.card{background:#fff;border:1px solid var(--line);border-radius:8px;padding:12px 16px;min-width:170px}
.card .big{font-size:26px;font-weight:600}.badge{display:inline-block;border-radius:10px;padding:1px 9px;color:#fff;font-size:12px;font-weight:600}
.target{background:#fff;border:1px solid var(--line);border-radius:8px;padding:14px 16px;margin:10px 0}
table{border-collapse:collapse;width:100%;margin:6px 0}td,th{border-bottom:1px solid var(--line);padding:3px 6px;text-align:left;vertical-align:top}
th{font-weight:600;color:var(--dim);font-size:12px}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
a.cite{font-family:ui-monospace,Menlo,monospace;font-size:12px;background:#eef3fb;border-radius:4px;padding:0 4px;text-decoration:none}
.legend span{display:inline-block;margin-right:10px;font-size:12px}.legend i{display:inline-block;width:10px;height:10px;margin-right:4px;border-radius:2px}
.step{display:none;background:#fff;border:1px solid var(--line);border-left:4px solid #4a78c2;border-radius:6px;padding:10px 12px;margin:8px 0}
.step:target,.step.open{display:block}.step pre{white-space:pre-wrap;word-break:break-word;margin:6px 0 0;max-height:420px;overflow:auto}
.note{color:#8a5a00}svg text{font:11px system-ui,sans-serif;fill:#333}
.scroll{overflow-x:auto;max-width:100%}.pic{width:100%;height:auto;display:block}
.narrow-pic{display:none}table.manifest td{word-break:break-all}
.failed{background:#fdecea;border:1px solid #e8b4ae;border-radius:8px;padding:10px 14px;margin:12px 0;color:#7a1c12}
details>summary{cursor:pointer;color:var(--dim);margin:6px 0}td.wrap{word-break:break-word}
@media (max-width:640px){.wide-pic{display:none}.narrow-pic{display:block}main{padding:12px}.cards{gap:8px}.card{min-width:0;flex:1 1 140px;padding:8px 10px}
.card .big{font-size:20px}h1{font-size:17px;word-break:break-all}td,th{padding:3px 4px}
table.summary tr:first-child{display:none}table.summary tr{display:flex;flex-wrap:wrap;align-items:baseline;column-gap:10px;
border-bottom:1px solid var(--line);padding:4px 0}table.summary td{border:0;padding:1px 0}table.summary td.num{text-align:left}
table.summary td[data-label]::before{content:attr(data-label) " ";color:var(--dim);font-size:12px}}
"""

SCRIPT = """
(function(){
  function show(id){
    document.querySelectorAll('.step.open').forEach(function(e){e.classList.remove('open')});
    var e=document.getElementById(id); if(e&&e.classList.contains('step')){e.classList.add('open');
      for(var p=e.parentElement;p;p=p.parentElement){if(p.tagName==='DETAILS'){p.open=true;}}}
  }
  document.addEventListener('click',function(ev){
    var a=ev.target.closest&&ev.target.closest('a.cite'); if(a){show(a.getAttribute('href').slice(1));}
  });
  if(location.hash){show(location.hash.slice(1));}
  function fits(){var d=document.documentElement;document.body.dataset.scrollWidth=d.scrollWidth;
    document.body.dataset.viewWidth=d.clientWidth;}
  fits();window.addEventListener('resize',fits);
  document.body.dataset.ready='1';
})();
"""


def _e(x: Any) -> str:
    return escape("" if x is None else str(x), quote=True)


def _money(a: dict[str, Any], fig: str) -> str:
    """An amount's money as a span, in the one format (:mod:`asz_core.money`): the exact figure in
    ``data-exact`` (as close.json writes it), the lower bound in ``data-at-least`` where it is not whole."""
    m, b = a.get("money"), a.get("at_least")
    low = f' data-at-least="{_e(b)}"' if b is not None else ""
    return (f'<span data-figure="{_e(fig)}" data-exact="{_e(m)}"{low} title="${_e(m if m is not None else b)}">'
            f'{_e(of_amount(a))}</span>')


def amount(a: dict[str, Any] | None, fig: str) -> str:
    """A cost as shown: money (exact as close.json writes it) when priced, and tokens."""
    if not a:
        return "—"
    m = a.get("money")
    s = (_money(a, f"{fig}.money") + " · " if m is not None else
         f'<span class="dim">unpriced ({a.get("unpriced", 0)} calls)</span>'
         + (f' {_money(a, f"{fig}.money")}' if _value({"money": a.get("at_least")}, "money") > 0 else "") + " · ")  # a bound of nothing says nothing
    return s + f'<span data-figure="{_e(fig)}.tokens">{a.get("tokens", 0):,}</span> tokens'


def cite(step: str | None, steps: dict[str, Any]) -> str:
    if not step:
        return '<span class="dim">—</span>'
    if step in steps:
        return f'<a class="cite" href="#{_e(step)}">{_e(step)}</a>'
    return f'<span class="mono">{_e(step)}</span>'


def bar(by_label: dict[str, dict[str, Any]], unit: str, width: int = 520) -> str:
    """The target's cost stacked by label, as inline SVG."""
    key = "money" if unit == "money" else "tokens"
    vals = [(k, float(v.get(key) or 0)) for k, v in by_label.items()]
    total = sum(v for _, v in vals)
    if total <= 0:
        return '<span class="dim">no cost</span>'
    x, parts = 0.0, []
    for k, v in vals:
        w = width * v / total
        parts.append(f'<rect x="{x:.2f}" y="0" width="{w:.2f}" height="16" fill="{LABEL_COLOURS.get(k, "#999")}">'
                     f'<title>{_e(k)}: {v:g}</title></rect>')
        x += w
    return (f'<svg class="pic" viewBox="0 0 {width} 16" preserveAspectRatio="none" style="height:16px;max-width:{width}px" '
            f'role="img" aria-label="cost by label">{"".join(parts)}</svg>')


def timeline(rows: list[dict[str, Any]], width: int = 1040) -> str:
    """Main talks as bars on one time axis, each with the targets it served, and the sub-agents
    it started below it (a sub-agent that outlived its talk shows past it)."""
    pts = [t for r in rows for t in [_t(r["start"]), _t(r["end"])] + [x for s in r["subagents"] for x in (_t(s["start"]), _t(s["end"]))] if t]
    if not pts:
        return '<p class="dim">no talk has a recorded time</p>'
    lo, hi = min(pts), max(pts)
    span = max((hi - lo).total_seconds(), 1.0)
    left, usable = 150, width - 160

    def X(ts: str | None) -> float | None:
        t = _t(ts)
        return None if t is None else left + usable * (t - lo).total_seconds() / span

    y, out = 4, []
    for r in rows:
        a, b = X(r["start"]), X(r["end"])
        label = f'{r["talk"]} → {", ".join(r["targets"]) or "unassigned"}'
        out.append(f'<text x="4" y="{y + 12}">{_e(label)}</text>')
        if a is not None and b is not None:
            out.append(f'<rect class="talk" data-talk="{_e(r["talk"])}" x="{a:.1f}" y="{y}" width="{max(b - a, 2):.1f}" height="16" '
                       f'fill="#4a78c2"><title>{_e(r["talk"])}: {_e(r["start"])} – {_e(r["end"])}</title></rect>')
        y += 20
        for s in r["subagents"]:
            a, b = X(s["start"]), X(s["end"])
            out.append(f'<text x="16" y="{y + 10}" class="dim">{_e(s["stream"])}</text>')
            if a is not None and b is not None:
                out.append(f'<rect class="sub" x="{a:.1f}" y="{y}" width="{max(b - a, 2):.1f}" height="11" fill="#9bb7e0">'
                           f'<title>{_e(s["stream"])} ({_e(s["key"])}): {_e(s["start"])} – {_e(s["end"])}</title></rect>')
            y += 14
        y += 4
    out += _axis(lo, hi, left, usable, y + 4)
    return f'<svg width="{width}" height="{y + 40}" role="img" aria-label="timeline" data-picture="timeline">{"".join(out)}</svg>'


# --- the summary and the pictures ------------------------------------------------------------------

CAUSE_COLOURS = {"main_agent": "#e25b45", "subtask": "#a44d8c", "unknown": "#d9a13b"}
CAUSES = (("main_agent", "main agent"), ("subtask", "sub-task"), ("unknown", "cause unknown"))


def _value(a: dict[str, Any] | None, unit: str) -> float:
    """A cost's size in the run's unit (money, or tokens where a call is unpriced)."""
    if not a:
        return 0.0
    v = a.get("money") if unit == "money" else a.get("tokens")
    try:
        return float(v or 0)
    except (TypeError, ValueError):
        return 0.0


def _short(a: dict[str, Any] | None, unit: str, fig: str) -> str:
    """A cost in one figure: its money (tokens where it is unpriced)."""
    if not a:
        return "—"
    if unit == "money" and a.get("money") is not None:
        return _money(a, fig)
    return f'<span data-figure="{_e(fig)}" data-exact="{_e(a.get("tokens", 0))}">{a.get("tokens", 0):,} tokens</span>'


def summary(st: dict[str, Any], unit: str) -> str:
    """One row per target: how it ended, what it cost, the avoidable part, its time and rework."""
    ts = st.get("targets", [])
    if not ts:
        return '<p class="dim">no target</p>'
    rows = []
    for t in ts:
        o, c, f = t["outcome"], t["cost"], f"summary.{t['id']}"
        rw = o.get("rework") or []
        rows.append(
            f'<tr data-summary="{_e(t["id"])}"><td class="mono">{_e(t["id"])}</td><td>{_badge(class_words(o.get("class")))}</td>'
            f'<td data-label="level">{"—" if o.get("class") == NOT_JUDGED else _e(o.get("level"))}</td>'
            f'<td class="num" data-label="cost">{_short(c["total"], unit, f + ".cost")}</td>'
            f'<td class="num" data-label="avoidable">{_short(c["avoidable"], unit, f + ".avoidable") if reviewed(c) else NOT_REVIEWED}</td>'
            f'<td class="num" data-label="time"><span data-figure="{f}.time">{_secs(t["times"].get("observed_seconds"))}</span></td>'
            f'<td class="num" data-label="rework"><span data-figure="{f}.rework">{len(rw)}</span>'
            + (f' · {_short(o.get("rework_cost"), unit, f + ".rework_cost")}' if rw else "") + "</td></tr>")
    return ('<div class="scroll"><table class="summary"><tr><th>target</th><th>class</th><th>level</th><th>cost</th>'
            '<th>avoidable</th><th>time</th><th>rework</th></tr>' + "".join(rows) + "</table></div>")


NOT_REVIEWED = '<span class="dim" data-not-reviewed="1">not reviewed</span>'
"""What an avoidable part is where no call of the target was labelled: not $0, which says none was
avoidable (the terminal says the same: statement_text)."""


def reviewed(c: dict[str, Any]) -> bool:
    """Some call of a target's cost was labelled (its ``by_label`` holds more than ``not_reviewed``)."""
    return bool(set(c.get("by_label") or {}) - {"not_reviewed"})


def cost_bars(st: dict[str, Any], unit: str, width: int = 1000) -> str:
    """Each target's cost as a bar, all to one scale, split by label."""
    ts = st.get("targets", [])
    top = max((_value(t["cost"]["total"], unit) for t in ts), default=0.0)
    if top <= 0:
        return '<p class="dim">no cost to draw</p>'
    left = 60 if width >= WIDE else 30
    shown = {t["id"]: of_amount(t["cost"]["total"]) if unit == "money" else f'{t["cost"]["total"].get("tokens", 0):,}' for t in ts}
    room = 12 + 7 * max(len(x) for x in shown.values())  # the widest figure beside its bar, at 11 px (< 7 units a letter)
    usable, out, y = width - left - room, [], 0
    for t in ts:
        total = _value(t["cost"]["total"], unit)
        x = float(left)
        out.append(f'<text x="0" y="{y + 14}">{_e(t["id"])}</text>')
        for k, v in t["cost"].get("by_label", {}).items():
            w = usable * _value(v, unit) / top
            if w <= 0:
                continue
            out.append(f'<rect data-target="{_e(t["id"])}" data-label="{_e(k)}" x="{x:.2f}" y="{y}" width="{w:.2f}" height="18" '
                       f'fill="{LABEL_COLOURS.get(k, "#999")}"><title>{_e(t["id"])} {_e(k)}: '
                       f'{_e(dollars(v.get("money")) if unit == "money" else v.get("tokens"))}</title></rect>')
            x += w
        out.append(f'<text x="{left + usable * total / top + 6:.1f}" y="{y + 14}">{_e(shown[t["id"]])}</text>')
        y += 26
    return (f'<svg class="pic" viewBox="0 0 {width} {y}" role="img" aria-label="cost of each target by label, one scale" '
            f'data-picture="cost-bars">{"".join(out)}</svg>')


WIDE = 600
"""A picture drawn this many units wide or more is the desk's; narrower, the phone's."""
NARROW = 360
"""The phone's drawing: about as many units as a 390 px screen has pixels, so its words are drawn
at the page's size, not a third of it."""


def pictures(draw: Any, st: dict[str, Any], unit: str) -> str:
    """A picture drawn twice, for a desk (1000 units) and for a phone (:data:`NARROW` units, fewer
    ticks), the page showing the one that fits its width (the CSS's ``.wide-pic``/``.narrow-pic``):
    an SVG scaled down to a phone's width would draw its 11 px words at 4 px."""
    return (f'<div class="wide-pic">{draw(st, unit, width=1000)}</div>'
            f'<div class="narrow-pic">{draw(st, unit, width=NARROW)}</div>')


def _ticks(lo: Any, hi: Any, most: int = 6) -> list[Any]:
    """Round instants between ``lo`` and ``hi`` for a time axis, at most ``most``."""
    import datetime as dt

    span = (hi - lo).total_seconds()
    for step in (1, 5, 10, 30, 60, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 604800):
        if span / step <= most:
            break
    first = dt.datetime.fromtimestamp((int(lo.timestamp()) // step + 1) * step, tz=dt.UTC)
    out, t = [], first
    while t <= hi and len(out) < most + 1:
        out.append(t)
        t += dt.timedelta(seconds=step)
    return out


def _axis(lo: Any, hi: Any, x0: float, usable: float, y: float, most: int = 6) -> list[str]:
    """A time axis under a picture: a line and round instants labelled (UTC), at most ``most``."""
    span = max((hi - lo).total_seconds(), 1.0)
    fmt = "%m-%d %H:%M" if span > 86400 else "%H:%M:%S" if span < 300 else "%H:%M"
    out = [f'<line x1="{x0}" y1="{y}" x2="{x0 + usable}" y2="{y}" stroke="#999"/>']
    for t in _ticks(lo, hi, most):
        x = x0 + usable * (t - lo).total_seconds() / span
        out.append(f'<line x1="{x:.1f}" y1="{y}" x2="{x:.1f}" y2="{y + 4}" stroke="#999"/>'
                   f'<text class="tick" x="{x:.1f}" y="{y + 16}" text-anchor="middle">{t.strftime(fmt)}</text>')
    out.append(f'<text x="{x0 + usable}" y="{y + 30}" text-anchor="end">time (UTC)</text>')
    return out


def spend_over_time(spend: list[dict[str, Any]], st: dict[str, Any], unit: str, width: int = 1000) -> str:
    """What the conversation had cost so far, across its talks (each talk's cost spread over its
    span), with each target's observed spans as bands under it."""
    pts = [t for r in spend for t in (_t(r["start"]), _t(r["end"])) if t]
    ts = st.get("targets", [])
    pts += [t for x in ts for sp in x["times"].get("observed") or [] for t in (_t(sp.get("start")), _t(sp.get("end"))) if t]
    total = sum(_value(r, unit) for r in spend)
    if not pts or total <= 0:
        return '<p class="dim">no cost with a recorded time to draw</p>'
    lo, hi = min(pts), max(pts)
    span = max((hi - lo).total_seconds(), 1.0)
    wide = width >= WIDE
    left, usable, height = (60, width - 80, 160) if wide else (36, width - 60, 120)

    def X(t: Any) -> float:
        return left + usable * (t - lo).total_seconds() / span

    def Y(v: float) -> float:
        return 8 + height * (1 - v / total)

    line, cum = [f"{left:.1f},{Y(0):.1f}"], 0.0
    for r in sorted(spend, key=lambda r: r["start"] or ""):
        a, b = _t(r["start"]), _t(r["end"])
        if a is None or b is None:
            continue
        line.append(f"{X(a):.1f},{Y(cum):.1f}")
        cum += _value(r, unit)
        line.append(f"{X(b):.1f},{Y(cum):.1f}")
    line.append(f"{left + usable:.1f},{Y(cum):.1f}")
    top_label = dollars(f"{total:.6f}") if unit == "money" else f"{int(total):,} tokens"
    out = [f'<text x="0" y="14">{_e(top_label)}</text><text x="0" y="{Y(0):.0f}">0</text>',
           f'<polyline points="{" ".join(line)}" fill="none" stroke="#4a78c2" stroke-width="2"/>']
    y = height + 20
    for x in ts:
        out.append(f'<text x="0" y="{y + 10}">{_e(x["id"])}</text>')
        for sp in x["times"].get("observed") or []:
            a, b = _t(sp.get("start")), _t(sp.get("end"))
            if a is not None and b is not None:
                out.append(f'<rect data-span="{_e(x["id"])}" x="{X(a):.1f}" y="{y}" width="{max(X(b) - X(a), 2):.1f}" height="12" '
                           f'fill="{CLASS_COLOURS.get(x["outcome"].get("class") or "", "#777")}"><title>{_e(x["id"])}: '
                           f'{_e(sp.get("start"))} – {_e(sp.get("end"))}</title></rect>')
        y += 18
    out += _axis(lo, hi, left, usable, y + 4, 6 if wide else 4)
    return (f'<svg class="pic" viewBox="0 0 {width} {y + 40}" role="img" aria-label="cost over time with the targets\' spans" '
            f'data-picture="spend">{"".join(out)}</svg>')


def avoidable_share(st: dict[str, Any], unit: str, width: int = 1000) -> str:
    """The avoidable part of the targets' cost by who caused it, as one bar of the whole."""
    ts = st.get("targets", [])
    total = sum(_value(t["cost"]["total"], unit) for t in ts)
    if total <= 0:
        return '<p class="dim">no cost to share</p>'
    parts = [(k, label, sum(_value(t["cost"]["avoidable_by_cause"].get(k), unit) for t in ts)) for k, label in CAUSES]
    x, out, legend = 0.0, [], []
    for k, label, v in parts:
        w = width * v / total
        if w > 0:
            out.append(f'<rect data-cause="{k}" x="{x:.2f}" y="0" width="{w:.2f}" height="22" fill="{CAUSE_COLOURS[k]}"/>')
        x += w
        shown = dollars(f"{v:.6f}") if unit == "money" else f"{int(v):,} tokens"
        legend.append(f'<span><i style="background:{CAUSE_COLOURS[k]}"></i>{_e(label)} '
                      f'<b data-figure="avoidable.{k}">{v / total:.1%}</b> ({_e(shown)})</span>')
    # what no stage labelled is not "not avoidable": said apart, so a failed efficiency stage reads as unknown
    unseen = sum(_value(t["cost"]["by_label"].get("not_reviewed"), unit) for t in ts)
    if unseen > 0:
        w = width * unseen / total
        out.append(f'<rect data-cause="not_reviewed" x="{x:.2f}" y="0" width="{w:.2f}" height="22" fill="{LABEL_COLOURS["not_reviewed"]}"/>')
        x += w
        legend.append(f'<span><i style="background:{LABEL_COLOURS["not_reviewed"]}"></i>not reviewed '
                      f'<b data-figure="avoidable.not_reviewed">{unseen / total:.1%}</b></span>')
    out.append(f'<rect x="{x:.2f}" y="0" width="{max(width - x, 0):.2f}" height="22" fill="#dfe6df"/>')
    legend.append('<span><i style="background:#dfe6df"></i>not avoidable</span>')
    return (f'<svg class="pic" viewBox="0 0 {width} 22" preserveAspectRatio="none" style="height:22px" role="img" '
            f'aria-label="avoidable share by cause" data-picture="avoidable">{"".join(out)}</svg>'
            f'<div class="legend">{"".join(legend)}</div>')


def _relative(path: str | None, project: str | None) -> str | None:
    """A file's path from the workspace (the project the runtime recorded) when it is inside it."""
    if not path or not project:
        return path
    root = project.rstrip("/\\") + "/"
    return path[len(root):] if path.startswith(root) else path


def render(m: dict[str, Any]) -> str:
    """The page of a report model (see :func:`model`)."""
    run, close = m["run"], m["close"] or {}
    st = close.get("statement") or {}
    steps = m["steps"]
    sc = st.get("scores") or {}
    h: list[str] = []
    h.append(f'<h1>asz judge · {_e(str(run.get("conversation"))[:8])} at {_e(run.get("head"))}</h1>')
    h.append(f'<div class="dim">run {_e(run.get("run"))} · {_e(run.get("runtime"))} · window {_e(run.get("window"))} · '
             f'prices {_e(run.get("prices", {}).get("name"))} · kit {_e(str(run.get("kit"))[:12])}</div>')
    failed = [n for n, sf in (m.get("stages") or {}).items() if (sf or {}).get("status") == "failed"]
    for n in failed:  # said once, here, with what to do
        h.append(f'<div class="failed" data-failed="{_e(n)}">{_e(failed_stage_line(n, m["stages"][n].get("reason"), Path(m["path"])))}</div>')
    if close.get("error"):
        h.append(f'<p class="failed">No final statement: {_e(close["error"])}</p>')
    h.append('<div class="cards">')
    for k, title in (("achievement", "achievement"), ("efficiency", "efficiency"), ("coverage", "coverage"),
                     ("delivered", "delivered")):
        s = sc.get(k) or {}
        v = s.get("rounded")
        h.append(f'<div class="card"><div class="dim">{title}</div><div class="big" data-figure="scores.{k}">'
                 f'{_e(v) if v is not None else "—"}</div><div class="dim">by {_e(s.get("unit", ""))}</div></div>')
    j = st.get("judging") or {}
    h.append(f'<div class="card"><div class="dim">the conversation cost</div><div>{amount(j.get("conversation"), "judging.conversation")}</div>'
             f'<div class="dim" style="margin-top:6px">judging it cost</div><div>{amount(j.get("total"), "judging.total")}</div></div>')
    h.append("</div>")
    unit = (sc.get("achievement") or {}).get("unit", "tokens")
    if st.get("targets"):
        h.append("<h2>summary</h2>" + summary(st, unit))
        h.append("<h2>cost of each target, by label</h2>" + pictures(cost_bars, st, unit))
        drawn = {k for t in st["targets"] for k, v in t["cost"].get("by_label", {}).items() if _value(v, unit) > 0}
        h.append('<div class="legend">' + "".join(f'<span data-legend="{_e(k)}"><i style="background:{c}"></i>{_e(k)}</span>'
                                                  for k, c in LABEL_COLOURS.items() if k in drawn) + "</div>")  # the labels drawn
        h.append("<h2>cost over time</h2>" + pictures(partial(spend_over_time, m.get("spend", [])), st, unit))
        h.append("<h2>avoidable, by cause</h2>" + avoidable_share(st, unit))
    # what a failed stage leaves unknown is said in its line above, not again here
    notes = [f"{k}: {v}" for k, v in (st.get("basis") or {}).items() if not str(v).startswith("used") and k not in failed] \
        + [n for n in st.get("notes") or [] if not any(f"{x} stage failed" in n or f"{x} stage" in n and "failed" in n for x in failed)]
    unjudged = [t["id"] for t in st.get("targets", []) if not_judged(t, st)]
    if unjudged:
        nj = st.get("not_judged") or {}
        notes.append(f"not judged: {', '.join(unjudged)} (their achievement call failed): {nj.get('tokens', 0):,} tokens, "
                     f"left out of the scores, which cover {(sc.get('judged') or {}).get('rounded', '—')} of the wanted "
                     "targets' cost")
    if notes:
        h.append('<ul class="note">' + "".join(f"<li>{_e(n)}</li>" for n in notes) + "</ul>")
    from .regroup_html import section

    h.append(section(m.get("regroup"), m.get("targets_stage", [])))  # the person's goals beside the judge's
    targets = {t["id"]: t for t in st.get("targets", [])}
    groups = [(g, [targets[x] for x in g["members"] if x in targets]) for g in st.get("goals", [])]
    grouped = {x for g, _ in groups for x in g["members"]}
    rest = [t for t in targets.values() if t["id"] not in grouped]
    if rest:
        groups.append(({"id": None}, rest))
    statements = m.get("goal_statements", {})
    for g, members in groups:
        if g.get("id"):
            main = g.get("main_target") or "undetermined"
            h.append(f'<h2 data-goal="{_e(g["id"])}">{_e(g["id"])}: {_e(statements.get(g["id"], ""))}</h2>'
                     f'<div class="dim">main target {_e(main)} · class {_badge(class_words(g.get("class")))}{_beside(g)} · main final score '
                     f'{_e(g.get("main_final_score") or "—")} · mean final score {_e(g.get("mean_final_score") or "—")} · '
                     f'first finding {_e(g.get("first_finding") or "—")}</div>')
        else:
            h.append("<h2>in no goal</h2>")
        for t in members:
            h.append(_target(t, steps, unit, m.get("target_inputs", {}).get(t["id"], []), not_judged(t, st), m.get("project")))
    from .sources_report import sources_html

    h.append(sources_html(st, _e))  # each source: its manifest, conclusions, verdicts, what they changed
    h.append("<h2>sub-agents</h2>")
    subs = m.get("subagents", [])
    if subs:
        h.append('<div class="scroll"><table><tr><th>stream</th><th>key</th><th>started in</th><th>calls</th><th>cost</th></tr>' + "".join(
            f'<tr><td class="mono">{_e(s["stream"])}</td><td class="mono">{_e(s["key"])}</td><td>{_e(s["root"])}</td>'
            f'<td class="num">{s["calls"]}</td><td class="num">{amount(s, "subagents." + s["stream"])}</td></tr>' for s in subs)
            + "</table></div>")
    else:
        h.append('<p class="dim">no sub-agent ran in the window</p>')
    h.append('<h2>timeline</h2><div class="scroll">' + timeline(m.get("timeline", [])) + "</div>")
    h.append("<h2>findings</h2>")
    fs = st.get("findings", [])
    if fs:
        h.append('<div class="scroll"><table><tr><th>id</th><th>target</th><th>kind</th><th>where</th><th>what</th></tr>' + "".join(
            f'<tr data-finding="{_e(f["id"])}"><td>{_e(f["id"])}</td><td>{_e(f["target"])}</td><td>{_e(f["kind"])}</td>'
            f'<td>{cite(f.get("anchor"), steps)}</td><td class="wrap">{_e(f["what"])}</td></tr>' for f in fs) + "</table></div>")
    else:
        h.append('<p class="dim">asz recorded no finding</p>')
    for name, fl in m.get("stage_findings", []):
        h.append(f"<h3>{_e(name)}'s findings</h3><ul>" + "".join(
            f'<li>{cite(f.get("anchor"), steps)} {_e(f.get("what") or f.get("problem") or "")}</li>' for f in fl) + "</ul>")
    h.append(f'<h2>cited steps</h2><details id="cited-steps"><summary>{len(steps)} cited steps (each citation above opens '
             'its own)</summary><section id="steps">')
    for sid, s in steps.items():
        h.append(f'<div class="step" id="{_e(sid)}"><b>{_e(sid)}</b> <span class="dim">{_e(s.get("kind"))} · '
                 f'{_e(s.get("talk"))} · {_e(s.get("stream"))} · {_e(s.get("ts"))}'
                 + (f' · {_e(s.get("name"))} {_e(s.get("status"))}' if s.get("name") else "")
                 + f'</span><pre>{_e(s.get("text"))}</pre>'
                 + (f'<div class="dim">{s["size"]:,} bytes recorded; the first {len(s["text"].encode()):,} shown</div>'
                    if s.get("size", 0) > len((s.get("text") or "").encode()) else "") + "</div>")
    h.append("</section></details>")
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>asz judge {_e(str(run.get('conversation'))[:8])} {_e(run.get('run'))}</title>"
            f"<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><style>{CSS}</style></head>"
            f"<body><main>{''.join(h)}</main><script>{SCRIPT}</script></body></html>\n")


def _beside(g: dict[str, Any]) -> str:
    """The goal's targets not judged, beside the class they took no part in."""
    others = [m for m in g.get("not_judged") or () if isinstance(m, str)]
    return f" (not judged: {_e(', '.join(others))})" if others and g.get("class") != NOT_JUDGED else ""


def _badge(c: str | None) -> str:
    if not c:
        return '<span class="dim">—</span>'
    return f'<span class="badge" style="background:{CLASS_COLOURS.get(c, "#777")}">{_e(c)}</span>'


def _target(t: dict[str, Any], steps: dict[str, Any], unit: str, inputs: list[tuple[str, str]], unjudged: bool = False,
            project: str | None = None) -> str:
    o, c, tm = t["outcome"], t["cost"], t["times"]
    tid = t["id"]
    f = f"targets.{tid}"
    h = [f'<div class="target" data-target="{_e(tid)}"><h3>{_e(tid)} {_badge("not judged" if unjudged else class_words(o.get("class")))} '
         f'<span class="dim">{"no level" if unjudged else _e(o["level"])} · basis {_e(o["basis"])} · {_e(t["state"])}</span></h3>',
         f"<div>{_e(t['statement'])}</div>",
         f'<div class="dim">record score <span data-figure="{f}.record_score">{_e(o.get("record_score") or "—")}</span> · '
         f'final score <span data-figure="{f}.final_score">{_e(o.get("final_score") or "—")}</span> · '
         f'{o["met"]} of {o["live"]} criteria met, {o["unknown"]} unknown</div>',
         f'<div class="scroll"><table><tr><th style="width:150px">cost</th><td>{amount(c["total"], f + ".cost.total")}</td></tr>'
         f'<tr><th>by label</th><td>{bar(c["by_label"], unit)}</td></tr>'
         + (f'<tr><th>avoidable</th><td>{amount(c["avoidable"], f + ".cost.avoidable")} (sub-agents caused '
            f'{amount(c["avoidable_by_cause"].get("subtask"), f + ".cost.avoidable_subtask")}; cause not shown '
            f'{amount(c["avoidable_by_cause"].get("unknown"), f + ".cost.avoidable_unknown")})</td></tr>' if reviewed(c) else
            f'<tr><th>avoidable</th><td>{NOT_REVIEWED}: no call of it was labelled</td></tr>') +
         f'<tr><th>not reviewed</th><td>{amount(c["not_reviewed"], f + ".cost.not_reviewed")}</td></tr>'
         f'<tr><th>sub-agents\' calls</th><td>{amount(c["subagents"], f + ".cost.subagents")}</td></tr>'
         f'<tr><th>observed time</th><td><span data-figure="{f}.times.observed_seconds">{_secs(tm.get("observed_seconds"))}</span>'
         + (f' · avoidable <span data-figure="{f}.times.avoidable_seconds">{_secs(tm.get("avoidable_seconds"))}</span>'
            if reviewed(c) else " · avoidable " + NOT_REVIEWED) + '</td></tr>'
         f'<tr><th>talks</th><td>{_e(", ".join(t["talks"]) or "—")}</td></tr>'
         f'<tr><th>inputs</th><td>{" ".join(cite(s, steps) + " " + _e(a) for s, a in inputs) or "—"}</td></tr>'
         + (f'<tr><th>corrections</th><td>{_e(", ".join(t["corrections"]))}</td></tr>' if t["corrections"] else "")
         + "</table></div>"]
    if t["criteria"]:
        h.append('<div class="scroll"><table><tr><th>criterion</th><th>state</th><th>final</th><th>citations</th><th>reason</th></tr>' + "".join(
            f'<tr><td>{_e(x["id"])} {_e(x["text"])}</td><td>{_e(x["state"])}</td><td>{_e(x["final"])}</td>'
            f'<td>{" ".join(cite(s, steps) for s in x["citations"]) or "—"}</td><td>{_e(x.get("reason") or "")}</td></tr>'
            for x in t["criteria"]) + "</table></div>")
    if o.get("rework"):
        h.append('<div class="scroll"><table><tr><th>rework</th><th>trigger</th><th>cause</th><th>cost</th></tr>' + "".join(
            f'<tr><td>{_e(r["id"])}</td><td>{cite(r.get("trigger"), steps)}</td><td>{_e(r.get("cause"))}</td>'
            f'<td class="num">{amount(r["cost"], f + ".rework." + r["id"])}</td></tr>' for r in o["rework"]) + "</table></div>")
    if t["operations"]:  # folded: a long list a person opens when they want it
        h.append(f'<details class="ops"><summary>{len(t["operations"])} file operation'
                 f'{"" if len(t["operations"]) == 1 else "s"}' + (f' (paths from {_e(project)})' if project else "")
                 + '</summary><div class="scroll"><table><tr><th>operation</th><th>file</th><th>shows</th><th>status</th>'
                 '<th>share</th></tr>' + "".join(
            f'<tr><td>{_e(x["id"])} {cite(x.get("step"), steps)}</td><td class="mono wrap" title="{_e(x.get("path"))}">'
            f'{_e(_relative(x.get("path"), project) or "files changed, not named")}</td>'
            f'<td>{_e(x["shows"])}</td><td>{_e(x.get("status"))}</td><td>{_e(x["share"])}</td></tr>' for x in t["operations"])
            + "</table></div></details>")
    h.append("</div>")
    return "".join(h)


def _secs(s: float | None) -> str:
    if s is None:
        return "—"
    s = float(s)
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.1f} min"


# --- the model -------------------------------------------------------------------------------------

def model(path: Path, store: Any, view: Any = None, regroup: dict[str, Any] | None = None) -> dict[str, Any]:
    """What the page shows: the run as :func:`asz_core.judge.runner.read_run` reads it, the cited steps'
    text, the timeline of talks with the targets they served and the sub-agents they started,
    and each sub-agent's cost. The person's goals: ``regroup`` (a regroup's own page shows that
    regroup), else the latest regroup that compared anything."""
    import orjson

    from .. import window as windows
    from .close import load_view, stage_findings
    from .regroup_files import latest
    from .run_files import close_json

    v = view or load_view(path, store)
    d = {"run": v.run, "stages": v.stages, "close": close_json(path, v.run["run"])}
    w, led = v.window, v.ledger
    conv = w.conv
    st = (d["close"] or {}).get("statement") or {}
    tg = d["stages"].get("targets") or {}
    step_of_input = {s.input: s.id for s in conv.steps if s.kind == "input" and s.input}
    target_inputs: dict[str, list[tuple[str, str]]] = {}
    for r in tg.get("inputs", []) or []:
        for a in r.get("actions", []):
            if a.get("target"):
                target_inputs.setdefault(a["target"], []).append((step_of_input.get(r["input"], r["input"]), a["action"]))
    wanted: set[str] = set()
    for t in st.get("targets", []):
        for x in t["criteria"]:
            wanted.update(x.get("citations") or ())
        for r in t["outcome"].get("rework", []):
            wanted.update(s for s in (r.get("trigger"), r.get("last_step")) if s)
        wanted.update(x["step"] for x in t["operations"] if x.get("step"))
    for f in st.get("findings", []):
        if f.get("anchor"):
            wanted.add(f["anchor"])
    for xs in target_inputs.values():
        wanted.update(s for s, _ in xs)
    found = []
    for name in ("achievement", "subtasks", "efficiency", "divergence"):
        fl = stage_findings(d["stages"].get(name))
        if fl:
            found.append((name, fl))
            wanted.update(f["anchor"] for f in fl if isinstance(f.get("anchor"), str))
    steps: dict[str, Any] = {}
    for sid in sorted(wanted, key=lambda s: id_number(s, "s") or 1 << 60):
        n = id_number(sid, "s")
        if n is None or n > len(conv.steps) or not w.shows_step(sid):
            continue
        s = conv.step(sid)
        text = s.text
        if s.kind in ("tool", "agent_call") and s.request:  # what it asked, then what came back
            text = f"request: {orjson.dumps(s.request).decode()[:2000]}\n\nresult: {s.text}"
        elif s.kind == "model_call":
            text = f"a model call ({s.model or 'no model'}): " + ", ".join(
                f"{k} {getattr(s.usage, k) if s.usage and getattr(s.usage, k) is not None else 'unknown'}"
                for k in USAGE_TYPES)
        steps[sid] = {"kind": s.kind, "talk": s.talk, "stream": s.stream, "ts": s.ts, "text": text, "size": s.size,
                      "name": s.name, "status": s.status}
    served: dict[str, list[str]] = {}
    for t in st.get("targets", []):
        for k in t["talks"]:
            served.setdefault(k, []).append(t["id"])
    streams = {s.id: s for s in led.streams}
    rows = []
    for k in w.judged:
        kt = conv.talk(k)
        subs = []
        for sid in windows.descendants(conv, w.roots, [k]):
            ts = [conv.talk(x) for x in conv.stream(sid).talks]
            starts = [x.start for x in ts if x.start]
            ends = [x.end for x in ts if x.end]
            subs.append({"stream": sid, "key": conv.stream(sid).key, "start": min(starts) if starts else None,
                         "end": max(ends) if ends else None})
        rows.append({"talk": k, "start": kt.start, "end": kt.end, "targets": served.get(k, []), "subagents": subs})
    judged = set(w.judged)
    subagents = []
    for s in led.streams:
        if s.kind == "child" and (s.root in judged or w.whole):
            subagents.append({"stream": s.id, "key": s.key, "root": s.root, "calls": s.tally.calls,
                              "tokens": s.tally.token_sum, "money": None if s.tally.unpriced else s.tally.money,
                              "unpriced": s.tally.unpriced})
    del streams
    goal_statements = {}
    for g in tg.get("goals", []) or []:
        ev = [e.get("statement") for e in g.get("evolution", []) if e.get("statement")]
        goal_statements[g["id"]] = ev[-1] if ev else ""
    talk_cost = {t.id: t.with_subagents for t in led.talks}
    spend = []
    for k in w.judged:
        kt, tally = conv.talk(k), talk_cost.get(k)
        if tally is not None and tally.calls:
            spend.append({"talk": k, "start": kt.start, "end": kt.end, "tokens": tally.token_sum,
                          "money": None if tally.unpriced else str(tally.money)})
    return {"run": d["run"] or {}, "close": d["close"], "steps": steps, "timeline": rows, "subagents": subagents,
            "stages": d["stages"], "path": str(path), "project": conv.project, "spend": spend,
            "stage_findings": found, "target_inputs": target_inputs, "goal_statements": goal_statements,
            "regroup": regroup if regroup is not None else latest(path), "targets_stage": list(tg.get("targets", []) or [])}


def write(path: Path, store: Any, view: Any = None, out: Path | None = None, regroup: dict[str, Any] | None = None) -> Path:
    """Write report.html beside close.json (or at ``out``: a regroup's own page, following
    ``regroup``), once, atomically."""
    from .context import write_once

    out = out or path / "report.html"
    write_once(out, render(model(path, store, view, regroup)).encode())
    return out
