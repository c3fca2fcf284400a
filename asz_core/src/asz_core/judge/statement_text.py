"""The final statement for the terminal (``asz judge -show RUN``): the run's scores first, then each
goal and target with class, level, scores, cost and avoidable part, and the findings.

Readable at 80 columns and at 160: the figures (scores, money, tokens, time) never wrap or get
cut, the words (statements, findings) fold. Colours come from rich, which writes them only to a
terminal.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group

from ..money import of_amount
from ..tables import Col, FitTable
from ..tables import InertText as Text  # every text of a report inert (terminal_text)
from .outcomes import class_words, not_judged
from .runs_report import score_text  # noqa: F401 - here too, where the run's tables take it
from .statement import NOT_JUDGED

CLASS_STYLE = {"contradicted": "bold red", "reverted": "red", "not_achieved": "red", "partial": "yellow",
               "unverified": "dim", "achieved": "green", "cancelled": "dim", "replaced": "dim", "not judged": "dim"}


def goal_class(g: dict[str, Any]) -> str:
    """A goal's class, with the targets not judged (which took no part in it) said beside it."""
    cls = class_words(g.get("class"))
    others = [m for m in g.get("not_judged") or () if isinstance(m, str)]
    return cls + (f" (not judged: {', '.join(others)})" if others and g.get("class") != NOT_JUDGED else "")


def amount(a: dict[str, Any] | None, unit: str = "money") -> str:
    """A cost in one short cell: money when priced (the known figure, and the lower bound beside it
    where it is not whole), else tokens."""
    if not a:
        return "—"
    if unit == "money" and a.get("money") is not None:
        return of_amount(a)
    return f"{a.get('tokens', 0):,} tok"


def both(a: dict[str, Any] | None) -> str:
    """A cost in prose: its money (the bound beside it where it is not whole) and its tokens."""
    a = a or {}
    n = a.get("unpriced", 0)
    m = of_amount(a) if a.get("money") is not None else f"{of_amount(a)} ({n} {'call' if n == 1 else 'calls'} unpriced)"
    return f"{m}, {a.get('tokens', 0):,} tokens"


def secs(s: float | None) -> str:
    if s is None:
        return "—"
    return f"{s:.0f} s" if s < 120 else (f"{s / 60:.1f} min" if s < 7200 else f"{s / 3600:.1f} h")


def score(s: dict[str, Any] | None) -> str:
    """A score of close.json (``{"value", "rounded", "unit"}``) as a person reads it."""
    return score_text(s.get("rounded") if s else None)


def frac(v: str | None) -> str:
    if v is None:
        return "—"
    if "/" in v:
        a, b = v.split("/")
        return f"{int(a) / int(b):.2f}"
    return f"{float(v):.2f}"


def statement_text(st: dict[str, Any]) -> Group:
    sc = st.get("scores") or {}
    unit = (sc.get("achievement") or {}).get("unit", "tokens")
    parts: list[Any] = []
    head = Text.assemble(("achievement ", "bold"), (score(sc.get("achievement")), "bold cyan"),
                         ("   efficiency ", "bold"), (score(sc.get("efficiency")), "bold cyan"),
                         (f" (coverage {score(sc.get('coverage'))})", "dim"),
                         ("   delivered ", "bold"), (score(sc.get("delivered")), "bold cyan"),
                         (f"   by {unit}", "dim"))
    parts.append(head)
    nj = [t["id"] for t in st.get("targets", []) if not_judged(t, st)]
    if nj:
        parts.append(Text(f"not judged: {', '.join(nj)} (their achievement call failed), "
                          f"{both(st.get('not_judged'))}: left out of the scores, which cover "
                          f"{score(sc.get('judged'))} of the wanted targets' cost", style="yellow"))
    j = st.get("judging") or {}
    parts.append(Text(f"the conversation cost {both(j.get('conversation'))}; judging it cost {both(j.get('total'))}",
                      style="dim"))
    for k, v in (st.get("basis") or {}).items():
        if not str(v).startswith("used"):
            parts.append(Text(f"{k}: {v}", style="yellow"))
    for n in st.get("notes") or ():
        parts.append(Text(n, style="yellow"))
    targets = {t["id"]: t for t in st.get("targets", [])}
    findings = {f["id"]: f for f in st.get("findings", [])}
    groups = [(g, [targets[m] for m in g["members"] if m in targets]) for g in st.get("goals", [])]
    held = {m for g, _ in groups for m in g["members"]}
    rest = [t for t in targets.values() if t["id"] not in held]
    if rest:
        groups.append(({"id": None}, rest))
    for n, (g, members) in enumerate(groups, 1):
        if g.get("id"):
            title = Text.assemble((g["id"], "bold"), "  ", (goal_class(g), CLASS_STYLE.get(class_words(g.get("class")), "")),
                                  f"  main {g.get('main_target') or 'undetermined'}"
                                  f" (final {frac(g.get('main_final_score'))}), mean final {frac(g.get('mean_final_score'))}"
                                  + (f", first finding {g['first_finding']}" if g.get("first_finding") else ""))
        else:
            title = Text("in no goal", style="bold")
        parts.append(Text(""))
        parts.append(title)
        parts.append(_targets_table(members, unit, last=n == len(groups), st=st))
        for t in members:
            parts.append(Text.assemble((f"{t['id']} ", "bold"), t.get("statement") or "", style=""))
            for fid in t.get("findings", []):
                f = findings.get(fid)
                if f:
                    parts.append(Text(f"  {fid} {f['kind']} at {f.get('anchor') or '—'}: {f['what']}", style="yellow"))
    if st.get("unassigned", {}).get("calls"):
        parts.append(Text(f"\nunassigned (no target's talk): {amount(st['unassigned'], unit)} in "
                          f"{st['unassigned']['calls']} calls", style="dim"))
    if st.get("unassigned_operations"):
        parts.append(Text(f"operations no target's calls made: {', '.join(st['unassigned_operations'])}", style="dim"))
    return Group(*parts)


_COLS = {"target": Col("target"), "class": Col("class"), "level": Col("level · basis", wrap=True, min=10, words=True),
         "outcome": Col("class · level · basis · score", wrap=True, min=12, words=True), "score": Col("score", right=True),
         "cost": Col("cost", right=True), "avoidable": Col("avoidable", right=True),
         "subagents": Col("by sub-agents", right=True), "avtime": Col("avoidable time", right=True),
         "time": Col("time", right=True), "rework": Col("rework", right=True)}
_LAYOUTS = (("target", "class", "level", "score", "cost", "avoidable", "subagents", "avtime", "time", "rework"),
            ("target", "class", "level", "score", "cost", "avoidable", "time", "rework"),
            ("target", "outcome", "cost", "avoidable", "time", "rework"),
            ("target", "outcome", "cost", "avoidable", "time"),
            ("target", "outcome", "cost", "avoidable"))
NOTE = ("score: criteria met of those live on the record → the final score, once contradictions and undoings "
        "are applied; avoidable: the part of the cost labelled avoidable; time: the union of its talks' spans; "
        "rework: rounds · what they cost")


def _targets_table(members: list[dict[str, Any]], unit: str, last: bool, st: dict[str, Any]) -> FitTable:
    t = FitTable(_COLS, _LAYOUTS, notes=[NOTE] if last else ())  # said once, under the last goal's table
    for x in members:
        o, c = x["outcome"], x["cost"]
        cls = "not judged" if not_judged(x, st) else class_words(o.get("class"))
        # a target not judged has no level of its own: its criteria are unknown because nothing judged them
        lvl = "—" if cls == "not judged" else ("" if cls == o["level"] else f"{o['level']} · ") + str(o.get("basis") or "—")
        sc = "—" if o.get("record_score") is None and o.get("final_score") is None else \
            f"{frac(o.get('record_score'))}→{frac(o.get('final_score'))}"
        reviewed = bool(c["by_label"].keys() - {"not_reviewed"})
        t.add_row({"target": x["id"], "class": Text(cls, style=CLASS_STYLE.get(cls, "")), "level": Text(lvl, style="dim"),
                   "outcome": Text(cls, style=CLASS_STYLE.get(cls, "")) + Text(f"\n{lvl}\nscore {sc}", style="dim"),
                   "score": sc, "cost": amount(c["total"], unit),
                   "avoidable": amount(c["avoidable"], unit) if reviewed else "not reviewed",
                   "subagents": amount(c.get("subagents"), unit),
                   "avtime": secs(x["times"].get("avoidable_seconds")) if reviewed else "not reviewed",
                   "time": secs(x["times"].get("observed_seconds")),
                   "rework": f"{len(o.get('rework', []))} · {amount(o.get('rework_cost'), unit)}" if o.get("rework") else "—"})
    return t
