"""Rendering a judge run for people (rich) and programs (plain JSON): ``asz judge -show RUN``."""

from __future__ import annotations

from typing import Any

from rich.console import Group

from ..records import USAGE_TYPES
from ..money import of_amount
from ..tables import Col, FitTable, plural
from ..tables import InertText as Text  # every text of a report inert (terminal_text)

_STAGE_COLS = {"stage": Col("stage"), "status": Col("status"), "calls": Col("calls"), "prompt": Col("largest prompt", right=True),
               "consumed": Col("consumed", wrap=True, min=14), "why": Col("why / note", wrap=True, min=16)}
_TARGET_COLS = {"target": Col("target"), "state": Col("state"), "statement": Col("statement", wrap=True, min=20),
                "criteria": Col("criteria", wrap=True, min=20), "talks": Col("talks", wrap=True, min=6),
                "inputs": Col("inputs", wrap=True, min=6)}
_ACH_COLS = {"target": Col("target"), "level": Col("level"), "basis": Col("basis", wrap=True, min=10, words=True),
             "criteria": Col("criteria", wrap=True, min=16), "extra": Col("deliveries · rework · findings", wrap=True, min=16)}
_INPUT_COLS = {"input": Col("input"), "talk": Col("talk"), "actions": Col("actions", wrap=True, min=12),
               "relations": Col("relations", wrap=True, min=14)}


def _tok(c: dict[str, Any]) -> str:
    s = (f"in {c['input']:,} · out {c['output']:,} · cache r {c['cache_read']:,} · cache w {c['cache_write']:,}; "
         f"{plural(c['requests'], 'request')}")
    if c.get("unknown_requests"):
        s += f" (+{c['unknown_requests']} whose usage was never said)"
    return s


def summary_text(d: dict[str, Any]) -> Group:
    """A run in brief (``asz judge --brief``): what it judged, then its final statement (scores,
    each target's class, cost, time), or why there is none; every table is ``run_text``'s."""
    run, close = d["run"] or {}, d["close"]
    parts: list[Any] = [Text.assemble((f"run {run.get('run')}", "bold"), f"  conversation {str(run.get('conversation'))[:8]} ",
                                      f"({run.get('runtime')}) at {run.get('head')}  window {run.get('window')}")]
    if close and close.get("statement"):
        from .statement_text import statement_text

        parts.append(statement_text(close["statement"]))
    elif close and close.get("error"):
        parts.append(Text(f"no final statement: {close['error']}", style="red"))
    parts.append(Text(f"every table of the run: asz judge -show {run.get('run')}", style="dim"))
    return Group(*parts)


def evaluators_line(run: dict[str, Any]) -> str:
    """Which evaluator judged each stage: once when one judged them all."""
    specs = {s: e.get("spec") for s, e in (run.get("evaluators") or {}).items()}
    if len(set(specs.values())) == 1:
        return f"evaluator {next(iter(specs.values()))} (every stage)"
    return "  ".join(f"{s}: {e}" for s, e in specs.items())


def run_text(d: dict[str, Any], rate: bool = True) -> Group:
    """A run read with :func:`asz_core.judge.runner.read_run`, for the terminal. ``rate``: the
    closing line says the evaluator's tokens a minute (``asz judge`` says it once, as the run closes,
    and asks for the report without it)."""
    run, stages, close = d["run"] or {}, d["stages"], d["close"]
    parts: list[Any] = []
    parts.append(Text.assemble((f"run {run.get('run')}", "bold"), f"  conversation {str(run.get('conversation'))[:8]} ",
                               f"({run.get('runtime')}) at {run.get('head')} ", (str(run.get("head_digest", ""))[:12], "dim"),
                               f"  window {run.get('window')}"))
    parts.append(Text(f"kit {str(run.get('kit'))[:12]}  prices {run.get('prices', {}).get('name')} "
                      f"{str(run.get('prices', {}).get('sha256'))[:12]}  " + evaluators_line(run), style="dim"))
    for s_name, e in (run.get("evaluators") or {}).items():
        for n in e.get("notes") or ():
            parts.append(Text(f"{s_name} ({e.get('name')}): {n}", style="yellow"))
    problems = d.get("problems") or []
    for p in problems:  # a closed run that lacks a file: said first
        parts.append(Text(p, style="red"))
    damaged = any(p.startswith("stages/") for p in problems)
    if close and close.get("statement") and damaged:
        parts.append(Text("the final statement is not shown: the stage files it was computed from are not all there",
                          style="red"))
    elif close and close.get("statement"):  # the run's scores first, then each goal and target
        from .statement_text import statement_text

        parts.append(statement_text(close["statement"]))
        if close["statement"].get("sources"):  # each source: its manifest, its conclusions, what they changed
            from .sources_report import sources_text

            parts.append(sources_text(close["statement"]))
        from .close import stage_findings

        for name in ("achievement", "subtasks", "efficiency", "divergence"):
            for f in stage_findings(stages.get(name)):
                parts.append(Text(f"{name} finding {f.get('id', '')} for {f.get('target', '—')} at {f.get('anchor') or '—'}: "
                                  f"{f.get('what', '')}" + (f"; avoid: {f['avoid']}" if f.get("avoid") else ""), style="yellow"))
    elif close and close.get("error"):
        parts.append(Text(f"no final statement: {close['error']}", style="red"))
    t = FitTable(_STAGE_COLS, (("stage", "status", "calls", "prompt", "consumed", "why"), ("stage", "status", "calls", "why"),
                               ("stage", "status", "why")), title="stages")
    for name, sf in stages.items():
        r = sf.get("run") or {}
        why = sf.get("reason") or ""
        if sf.get("note"):
            why = (why + "; " if why else "") + f"{plural(len(sf['note']), 'check')}: " + "; ".join(sf["note"][:3]) + (" …" if len(sf["note"]) > 3 else "")
        c = r.get("consumed") or {}
        priced = (((close or {}).get("statement") or {}).get("judging") or {}).get("stages") or {}
        t.add_row({"stage": name, "status": sf.get("status", "?"),
                   "calls": f"{r.get('calls', 0)} ({plural(r.get('attempts', 0), 'attempt')})" if r.get("calls") else "—",
                   "prompt": f"{r.get('largest_prompt_bytes', 0):,} B" if r.get("calls") else "—",
                   "consumed": f"{plural(c.get('requests', 0), 'request')}, {sum(c.get(k, 0) for k in USAGE_TYPES):,} tokens, "
                               f"read {r.get('read_bytes', 0):,} B" + (f", {of_amount(priced[name])}" if name in priced else "")
                               if r.get("calls") else "—",
                   "why": Text(why) if why else ""})
    parts.append(t)
    tg = stages.get("targets")
    if tg and tg.get("status") in ("complete", "partial"):
        parts.append(targets_text(tg))
    ach = stages.get("achievement")
    if ach and ach.get("achievement"):
        parts.append(achievement_text(ach))
    from .work_report import efficiency_text, subtasks_text

    for name, render in (("subtasks", subtasks_text), ("efficiency", efficiency_text)):
        sf = stages.get(name)
        if sf and sf.get("status") in ("complete", "partial", "failed") and (sf.get("subtasks") or sf.get("talks")):
            parts.append(render(sf))
    if d.get("regroup"):  # the latest regroup that compared anything: both groupings side by side
        from .regroup_report import regroup_text

        parts.append(regroup_text(d, d["regroup"]))
    if close:
        c, secs = close["consumed"], close.get("evaluator_seconds") or 0
        parts.append(Text(f"closed {close.get('ended')}: {close.get('seconds')} s; evaluator stages consumed "
                          f"{_tok(c)} over {secs} s"
                          # in the words and figures of the run's own closing line (context.consumed_line)
                          + (f"; {(c['input'] + c['cache_read'] + c['cache_write']) / (secs / 60):,.0f} input-side and "
                             f"{c['output'] / (secs / 60):,.0f} output tokens/min" if rate and secs > 0 else "")))
    else:
        parts.append(Text("the run has not closed", style="yellow"))
    return Group(*parts)


def targets_text(tg: dict[str, Any]) -> Group:
    h = tg.get("header") or {}
    head = Text(f"targets: {h.get('targets', 0)} in {plural(h.get('goals', 0), 'goal')}, {h.get('targets_in_no_goal', 0)} in no goal; "
                f"{h.get('answered', 0)} of {h.get('inputs', 0)} inputs answered", style="bold")
    by_goal: dict[Any, list[dict[str, Any]]] = {}
    for t in tg.get("targets", []):
        by_goal.setdefault(t.get("goal"), []).append(t)
    tables: list[Any] = [head]
    goals = {g["id"]: g for g in tg.get("goals", [])}
    for gid in [*goals, None]:
        members = by_goal.get(gid, [])
        if gid is None and not members:
            continue
        g = goals.get(gid) if gid else None
        if g:
            asks = next((e["statement"] for e in reversed(g.get("evolution", [])) if e.get("statement")), "")
            main = (f"main target {g['main_target']} ({g.get('main_basis', '').replace('_', ' ')}"
                    + (f" {g['main_cited']})" if g.get("main_cited") else ")")) if g.get("main_target") else "main target undetermined"
            title = f"{gid}: {asks} ({main})"
        else:
            title = "in no goal"
        tables.append(Text(title, style="bold"))
        t = FitTable(_TARGET_COLS, (("target", "state", "statement", "criteria", "talks", "inputs"),
                                    ("target", "state", "statement", "criteria"), ("target", "statement", "criteria")), lines=True)
        for x in members:
            crit = "\n".join(f"{c['id']} {'[dropped by ' + str(c.get('dropped_by')) + '] ' if c.get('dropped') else ''}{c['text']}"
                             for c in x.get("criteria", [])) or "—"
            t.add_row({"target": x["id"], "state": x["state"] + (f" → {x['replaced_by']}" if x.get("replaced_by") else ""),
                       "statement": Text(x.get("statement") or "—"), "criteria": Text(crit),
                       "talks": ",".join(x.get("talks", [])) or "—", "inputs": ",".join(x.get("inputs", []))})
        tables.append(t)
    it = FitTable(_INPUT_COLS, (("input", "talk", "actions", "relations"), ("input", "actions", "relations")), title="inputs")
    for r in tg.get("inputs", []):
        acts = ", ".join(f"{a['action']}" + (f" {a['target']}" if a.get("target") else "") for a in r["actions"])
        rels = ", ".join(f"{x['relation']}" + (f" {x['goal']}" if x.get("goal") else "") + (f" after {x['follows']}" if x.get("follows") else "")
                         for x in r["relations"])
        it.add_row({"input": r["input"], "talk": r["talk"], "actions": Text(acts + ("" if r.get("answered", True) else " (unanswered)")),
                    "relations": Text(rels)})
    tables.append(it)
    return Group(*tables)


def achievement_text(st: dict[str, Any]) -> Group:
    """Each target's level (derived from its criteria), basis and criteria, with what asz changed."""
    h = st.get("header") or {}
    levels = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in (h.get("levels") or {}).items()) or "none judged"
    not_judged = ", ".join(f"{n} {k}" for k, n in (h.get("not_judged") or {}).items())
    head = Text(f"achievement: {h.get('judged', 0)} of {h.get('targets', 0)} targets judged: {levels}"
                + (f"; not judged: {not_judged}" if not_judged else ""), style="bold")
    t = FitTable(_ACH_COLS, (("target", "level", "basis", "criteria", "extra"), ("target", "level", "criteria", "extra"),
                             ("target", "level", "criteria")), lines=True)
    for r in st.get("achievement", []):
        if not r.get("judged"):
            t.add_row({"target": r["target"], "level": "—", "basis": "—", "criteria": Text(r.get("why") or "not judged"), "extra": ""})
            continue
        basis = r.get("basis") or "—"
        if r.get("evaluator_basis"):
            basis += f"\n(said {r['evaluator_basis']}: weakened)"
        crit = "\n".join(f"{c['id']} {c['state']}" + (f" (said {c['evaluator_state']})" if c.get("evaluator_state") else "")
                         + (f": {c['reason']}" if c.get("reason") else "") for c in r.get("criteria", [])) or "no live criteria"
        events = ", ".join(f"{e['id']} {e['event']} {e['concerns']} at {e['at']}" for e in r.get("events", [])) or "no delivery"
        extra = [events, f"standing: {', '.join(r.get('standing') or []) or 'none'}"]
        extra += [f"{x['id']} {x['trigger']} at {x['trigger_step']} ({x['cause']})" for x in r.get("rework", [])]
        extra += [f"{f['id']} at {f['anchor']}: {f['what']}" for f in r.get("findings", [])]
        contra = [c for c in r.get("contradictions", [])]
        extra += [f"contradicts {c['delivery']} ({c['disproves']})" + ("" if c.get("applies") else ", not standing") for c in contra]
        t.add_row({"target": r["target"], "level": f"{r.get('level')}\n{r.get('met', 0)}/{r.get('live', 0)} met",
                   "basis": Text(basis), "criteria": Text(crit), "extra": Text("\n".join(extra))})
    return Group(head, t)
