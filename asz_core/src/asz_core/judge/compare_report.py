"""``asz compare`` for people: the runs side by side, then per pair of runs the targets matched
and their agreement, the work labels weighted by cost with Cohen's kappa, and the sub-task
decisions (docs/compare.md). ``--json`` prints :func:`asz_core.judge.compare.compare`'s whole."""

from __future__ import annotations

from typing import Any

from rich.console import Group

from ..money import dollars
from ..tables import Col, FitTable, plural
from ..tables import InertText as Text  # every text of a report inert (terminal_text)
from .outcomes import class_words
from .statement_text import both

_MATCH = {"a": Col("target"), "b": Col("target"), "level": Col("level", wrap=True, min=8, words=True), "class": Col("class", wrap=True, min=8, words=True),
          "basis": Col("basis", wrap=True, min=8, words=True), "met": Col("met"), "rework": Col("rework"), "final": Col("final score")}
_PARTS = (("both_avoidable", "both call it avoidable"), ("both_not_avoidable", "both call it not avoidable"),
          ("disagree", "they disagree on"), ("a_avoidable_b_not", "  the first calls avoidable, the second not"),
          ("b_avoidable_a_not", "  the second calls avoidable, the first not"))


def _pair(x: Any, y: Any) -> str:
    return str(x) if x == y else f"{x} | {y}"


def _money(a: dict[str, Any] | None) -> str:
    return both(a) if a else "—"


def _evaluators(r: dict[str, Any]) -> str:
    specs = r["evaluators"]
    if len(set(specs.values())) == 1:
        return f"every stage: {next(iter(specs.values()))}"
    return "\n".join(f"{s}: {e}" for s, e in specs.items()) or "—"


def _cost(x: dict[str, Any], unit: str) -> str:
    return dollars(x['cost_rounded']) if unit == "money" else f"{x['cost_rounded']} tokens"


def compare_text(d: dict[str, Any]) -> Group:
    runs = d["runs"]
    parts: list[Any] = [Text(f"compare {len(runs)} runs of {str(d['conversation'])[:8]}", style="bold")]
    cols = {"what": Col("")} | {f"r{i}": Col(r["run"], wrap=True, min=12) for i, r in enumerate(runs)}
    t = FitTable(cols, (tuple(cols),), title="the runs side by side", lines=True)

    def row(what: str, f: Any) -> None:
        t.add_row({"what": what} | {f"r{i}": Text(str(f(r))) for i, r in enumerate(runs)})

    row("head · window", lambda r: f"{r['head']} {r['head_digest'][:12]} · {r['window']}")
    row("evaluators", _evaluators)
    for k in ("achievement", "efficiency", "coverage", "delivered"):
        row(k, lambda r, k=k: ((r.get("scores") or {}).get(k) or {}).get("rounded") or "—")
    row("judging cost", lambda r: _money((r.get("judging") or {}).get("total")))
    row("judging by stage", lambda r: "\n".join(f"{s}: {_money(a)}" for s, a in ((r.get("judging") or {}).get("stages") or {}).items()) or "—")
    row("could not judge", lambda r: "\n".join(r["could_not_judge"]) or "nothing")
    parts.append(t)
    by_id = {r["run"]: r for r in runs}
    for p in d["pairs"]:
        parts.append(Text(f"{p['a']} and {p['b']}: {p['talks']['shared']} main talks both judged"
                          + ("" if p["same_head"] else f" (heads {by_id[p['a']]['head']} and {by_id[p['b']]['head']})"), style="bold"))
        tg = p["targets"]
        if tg["matched"]:
            mt = FitTable(_MATCH, (tuple(_MATCH), ("a", "b", "level", "class", "met", "final")), lines=True,
                          title="targets matched (the same creating input, talks in common): first | second where they differ")
            for m in tg["matched"]:
                oa, ob = m["a_outcome"], m["b_outcome"]
                mt.add_row({"a": m["a"], "b": m["b"], "level": _pair(oa["level"], ob["level"]), "class": _pair(class_words(oa["class"]), class_words(ob["class"])),
                            "basis": _pair(oa["basis"], ob["basis"]), "met": _pair(oa["met"], ob["met"]),
                            "rework": _pair(oa["rework"], ob["rework"]), "final": _pair(oa["final_score"], ob["final_score"])})
            parts.append(mt)
            parts.append(Text("agree: " + ", ".join(f"{f.replace('_', ' ')} {a['agree']}/{a['of']}" for f, a in tg["agreement"].items())))
            if tg.get("not_judged"):
                parts.append(Text("not judged by one run, left out of the agreement: "
                                  + ", ".join(f"{a} | {b}" for a, b in tg["not_judged"]), style="dim"))
        else:
            parts.append(Text("no target in common", style="yellow"))
        for side, rid in (("a", p["a"]), ("b", p["b"])):
            if tg["unmatched"][side]:
                parts.append(Text(f"only in {rid}: {', '.join(tg['unmatched'][side])}"))
            if tg["outside"][side]:
                parts.append(Text(f"in {rid}, outside the talks both judged: {', '.join(tg['outside'][side])}", style="dim"))
        lb = p["labels"]
        parts.append(Text(f"work labels over {lb['calls']} model calls ({lb['both_reviewed']} reviewed by both), by {lb['unit']}:"))
        for k, words in _PARTS:
            x = lb["parts"][k]
            parts.append(Text(f"  {x['share_rounded'] or '—'} {words} ({plural(x['calls'], 'call')}, {_cost(x, lb['unit'])})"))
        for k, words in (("a_only_reviewed", "only the first reviewed"), ("b_only_reviewed", "only the second reviewed"),
                         ("neither_reviewed", "neither reviewed")):
            x = lb["parts"][k]
            if x["calls"]:
                parts.append(Text(f"  {x['calls']} calls {words} ({x['share_rounded']} of all)", style="dim"))
        parts.append(Text(f"  Cohen's kappa over calls: {lb['kappa_rounded'] or lb['kappa_note']}"
                          + (f" (observed {lb['observed']}, expected {lb['expected']})" if lb["kappa"] is not None else "")
                          + f"; the same label on {lb['same_label']['calls']} of {lb['same_label']['of']}"))
        sb = p["subtasks"]
        parts.append(Text(f"sub-task decisions: {plural(sb['both_judged'], 'sub-task')} both judged"
                          + (": " + ", ".join(f"{f} {a['agree']}/{a['of']}" for f, a in sb["agreement"].items()) if sb["both_judged"] else "")))
    return Group(*parts)


__all__ = ["compare_text"]
