"""A regroup for the terminal: the judge's grouping and the person's side by side, then the
comparison goal by goal with each goal's outcome (``asz judge -show``, ``asz judge regroup``)."""

from __future__ import annotations

from typing import Any

from rich.console import Group

from ..tables import Col, FitTable, plural
from ..tables import InertText as Text  # every text of a report inert (terminal_text)
from .outcomes import class_words

_SIDE = {"target": Col("target"), "statement": Col("statement", wrap=True, min=16), "judge": Col("judge's goal"),
         "person": Col("person's goal", wrap=True, min=10), "why": Col("cites / why", wrap=True, min=12)}
_GOALS = {"goal": Col("goal"), "text": Col("the person's words", wrap=True, min=16), "verdict": Col("verdict"),
          "targets": Col("targets", wrap=True, min=6), "judge": Col("judge's groups", wrap=True, min=8),
          "main": Col("main target", wrap=True, min=8), "worked": Col("worked on"),
          "outcome": Col("class · main final · mean final", wrap=True, min=12)}


def _placed(p: dict[str, Any] | None) -> str:
    if p is None or p.get("placed") == "not_answered":
        return "not answered"
    if p["placed"] == "goal":
        return str(p["goal"])
    if p["placed"] == "none":
        return "none of them"
    return "unknown" + (f" (said {p['given']})" if p.get("given") else "")


def regroup_text(d: dict[str, Any], rg: dict[str, Any]) -> Group:
    """A regroup (its regroup.json) beside the run it regrouped (read with ``runner.read_run``)."""
    lab = rg.get("label") or {}
    call = rg.get("call") or {}
    c = call.get("consumed") or {}
    parts: list[Any] = [Text(f"regroup {rg.get('regroup')} by the person's goals: {rg.get('status')}"
                             + (f" ({rg['reason']})" if rg.get("reason") else ""), style="bold"),
                        Text(f"label file {lab.get('path')} (SHA-256 {str(lab.get('sha256'))[:12]}), "
                             f"{plural(len(lab.get('goals') or ()), 'goal')}; evaluator "
                             f"{(rg.get('evaluator') or {}).get('spec')}; {plural(call.get('attempts', 0), 'attempt')}, "
                             f"{plural(c.get('requests', 0), 'request')}"
                             + (f" (+{c['unknown_requests']} whose usage was never said)" if c.get("unknown_requests") else "")
                             + f", in {c.get('input', 0):,} · out {c.get('output', 0):,} · cache r {c.get('cache_read', 0):,}"
                             f" · cache w {c.get('cache_write', 0):,}", style="dim")]
    for n in rg.get("note") or ():
        parts.append(Text(n, style="yellow"))
    comp = rg.get("comparison")
    if comp is None:
        return Group(*parts)
    tg = (d.get("stages") or {}).get("targets") or {}
    targets = tg.get("targets") or []
    where = {p["target"]: p for p in rg.get("placements") or ()}
    side = FitTable(_SIDE, (("target", "statement", "judge", "person", "why"), ("target", "judge", "person", "why"),
                            ("target", "judge", "person")), title="the two groupings side by side", lines=True)
    for t in targets:
        p = where.get(t["id"])
        why = ", ".join(p.get("cites") or ()) if p else ""
        if p and p.get("reason"):
            why = (why + "; " if why else "") + p["reason"]
        side.add_row({"target": t["id"], "statement": Text(t.get("statement") or "—"), "judge": t.get("goal") or "none (alone)",
                      "person": Text(_placed(p)), "why": Text(why or "—")})
    parts.append(side if targets else Text("the run found no target", style="yellow"))
    outs = {o["id"]: o for o in rg.get("outcomes") or ()}
    gt = FitTable(_GOALS, (("goal", "text", "verdict", "targets", "judge", "main", "worked", "outcome"),
                           ("goal", "verdict", "targets", "judge", "main", "outcome"), ("goal", "verdict", "targets")),
                  title="the person's goals", lines=True)
    for g in comp.get("goals") or ():
        o = outs.get(g["goal"]) or {}
        main = g.get("main_target") or g.get("main_basis", "").replace("_", " ")
        if g.get("main_target"):
            main += f" ({g['main_basis'].replace('_', ' ')})"
        gt.add_row({"goal": g["goal"], "text": Text(g.get("text") or ""), "verdict": g["verdict"].replace("_", " "),
                    "targets": ", ".join(g.get("targets") or ()) or "—",
                    "judge": Text(", ".join(g.get("judge_groups") or ()) + (f"; with {', '.join(g['others'])}" if g.get("others") else "")
                                  or "—"),
                    "main": Text(main), "worked": g.get("worked_on", "").replace("_", " "),
                    "outcome": Text(f"{class_words(o.get('class'))} · {o.get('main_final_score') or '—'} · {o.get('mean_final_score') or '—'}")})
    parts.append(gt)
    for key, words in (("apart", "serving none of the person's goals"), ("unknown", "placed with nothing that shows it (unknown)"),
                       ("not_answered", "not answered"), ("alone", "in no goal of the judge (each stands alone)")):
        if comp.get(key):
            parts.append(Text(f"targets {words}: {', '.join(comp[key])}"))
    if rg.get("outcomes_note"):
        parts.append(Text(rg["outcomes_note"], style="yellow"))
    return Group(*parts)


__all__ = ["regroup_text"]
