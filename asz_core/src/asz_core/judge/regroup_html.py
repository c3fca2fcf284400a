"""The person's goals on report.html: the latest regroup that compared anything, the judge's
grouping and the person's side by side, and the comparison goal by goal with each goal's
outcome (docs/regroup.md). A section of its own, so the page's other parts stay as they are."""

from __future__ import annotations

from html import escape
from typing import Any

from .outcomes import class_words


def _e(x: Any) -> str:
    return escape("" if x is None else str(x))


def _placed(p: dict[str, Any] | None) -> str:
    if p is None or p.get("placed") == "not_answered":
        return "not answered"
    if p["placed"] == "goal":
        return str(p["goal"])
    return "none of them" if p["placed"] == "none" else "unknown"


def section(rg: dict[str, Any] | None, targets: list[dict[str, Any]]) -> str:
    """The section for regroup ``rg`` (its regroup.json; None: no section) over the run's
    targets (the targets stage's, each with the judge's goal)."""
    if not rg or rg.get("comparison") is None:
        return ""
    lab = rg.get("label") or {}
    comp = rg["comparison"]
    where = {p["target"]: p for p in rg.get("placements") or ()}
    h = [f'<h2 id="regroup" data-regroup="{_e(rg.get("regroup"))}">the person\'s goals ({_e(rg.get("regroup"))})</h2>',
         f'<div class="dim">label file {_e(lab.get("path"))} · SHA-256 {_e(str(lab.get("sha256"))[:12])} · '
         f'{_e((rg.get("evaluator") or {}).get("spec"))} · {_e(rg.get("status"))}</div>']
    h.append("<table><tr><th>target</th><th>statement</th><th>judge's goal</th><th>person's goal</th></tr>" + "".join(
        f'<tr data-placement="{_e(t["id"])}"><td>{_e(t["id"])}</td><td>{_e(t.get("statement"))}</td>'
        f'<td>{_e(t.get("goal") or "none (alone)")}</td><td>{_e(_placed(where.get(t["id"])))}</td></tr>' for t in targets)
        + "</table>")
    outs = {o["id"]: o for o in rg.get("outcomes") or ()}
    rows = []
    for g in comp.get("goals") or ():
        o = outs.get(g["goal"]) or {}
        rows.append(f'<tr data-person-goal="{_e(g["goal"])}"><td>{_e(g["goal"])}</td><td>{_e(g.get("text"))}</td>'
                    f'<td>{_e(g["verdict"])}</td><td>{_e(", ".join(g.get("targets") or ()) or "—")}</td>'
                    f'<td>{_e(", ".join(g.get("judge_groups") or ()) or "—")}</td><td>{_e(g.get("main_target") or "—")}</td>'
                    f'<td>{_e(class_words(o.get("class")))}</td><td>{_e(o.get("main_final_score") or "—")}</td>'
                    f'<td>{_e(o.get("mean_final_score") or "—")}</td></tr>')
    h.append("<table><tr><th>goal</th><th>the person's words</th><th>verdict</th><th>targets</th><th>judge's groups</th>"
             "<th>main target</th><th>class</th><th>main final</th><th>mean final</th></tr>" + "".join(rows) + "</table>")
    for key, words in (("apart", "serving none of the person's goals"), ("unknown", "placement unknown"),
                       ("not_answered", "not answered")):
        if comp.get(key):
            h.append(f'<p class="dim">targets {words}: {_e(", ".join(comp[key]))}</p>')
    return "".join(h)


__all__ = ["section"]
