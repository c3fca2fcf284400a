"""The sub-task and efficiency stages for the terminal: what each sub-task was found to be, and
the label of each talk or part (``asz judge -show``; the run's costs by label are the final
statement's).

Both are FitTables: at 160 columns every decision has its own column; at 80 a sub-task's four
decisions share one wrapping column (one per line) and the steps a label rests on go, so the
ids (sub-tasks, steps, talks) stay whole."""

from __future__ import annotations

from typing import Any

from rich.console import Group

from ..tables import Col, FitTable, plural
from ..tables import InertText as Text  # every text of a report inert (terminal_text)

DECISIONS = (("outcome", "outcome", "whether its work got done"),
             ("report", "report", "whether its report says what its steps show"),
             ("used", "used", "whether the agent that asked used the report"),
             ("dispatch", "dispatch", "whether asking for it was right"))
"""Each decision of a sub-task: its key, its header, what it means."""
MISLED = "the asking agent's step that acted on an inaccurate report, and who that work is charged to"
SAID = "[said …]: what the evaluator said, not kept because the record does not show it"

_SUB_COLS = {"sub": Col("sub-task"),
             "talks": Col("talks → main", wrap=True, min=5, words=True, note="its talks → the main talk its cost is part of"),
             "root": Col("rolls up to", wrap=True, min=5, words=True, note="the main talk its cost is part of"),
             "start": Col("started by", wrap=True, min=7, words=True), "targets": Col("targets", wrap=True, min=7),
             **{k: Col(h, wrap=True, min=4, words=True, note=n) for k, h, n in DECISIONS},
             "decisions": Col("decisions", wrap=True, min=22, note="; ".join(f"{h}: {n}" for _, h, n in DECISIONS)
                              + f"; misled: {MISLED}"),
             "misled": Col("misled", wrap=True, min=9, note=MISLED),
             "label": Col("label of its own work", wrap=True, min=12, words=True),
             "calls": Col("calls", right=True, note="its own model calls"),
             "note": Col("evaluator's note", wrap=True, min=12)}
_SUB_LAYOUTS = (("sub", "talks", "start", "targets", *(k for k, _, _ in DECISIONS), "misled", "label", "calls", "note"),
                ("sub", "root", "start", *(k for k, _, _ in DECISIONS), "misled", "label", "calls"),
                ("sub", "start", "decisions", "label", "calls"))
_PART_COLS = {"talk": Col("talk"), "part": Col("part (steps)"), "label": Col("label", wrap=True, min=12, words=True),
              "step": Col("read at", note="the step read to decide its label"),
              "why": Col("shown by", note="the step that shows why its work was avoidable"),
              "calls": Col("calls", right=True, note="the part's model calls"),
              "note": Col("why / note", wrap=True, min=16, note="asz: asz's reason for changing or leaving out the "
                                                                    "evaluator's label; the rest is the evaluator's")}
_PART_LAYOUTS = (("talk", "part", "label", "step", "why", "calls", "note"), ("talk", "part", "label", "calls", "note"),
                 ("talk", "part", "label", "note"))


def _label(lab: dict[str, Any]) -> str:
    s = lab.get("label") or "not_reviewed"
    if lab.get("cause"):
        s += f" ({lab['cause'].replace('_', ' ')})"
    if lab.get("given") and lab.get("given") != lab.get("label"):
        s += f" [said {lab['given']}]"
    return s


def _decision(d: dict[str, Any] | None) -> str:
    d = d or {}
    s = str(d.get("value") or "unknown")
    if d.get("given") and d.get("given") != d.get("value"):
        s += f" [said {d['given']}]"
    return s


def _misled(j: dict[str, Any]) -> str:
    if j.get("misled"):
        return f"at {j['misled']}, charged to {(j.get('charge') or 'unknown').replace('subtask', 'the sub-task')}"
    return "no" if not j.get("misled_given") else f"no [said {j['misled_given']}]"


def subtasks_text(sf: dict[str, Any]) -> Group:
    h = sf.get("header") or {}
    head = Text(f"sub-tasks: {h.get('subtasks', 0)}, {h.get('decided', 0)} decided, {h.get('not_reviewed', 0)} not reviewed, "
                f"{h.get('unattributed_subtasks', 0)} unattributed, {h.get('misleading', 0)} misled the agent", style="bold")
    rows = list(sf.get("subtasks") or ())
    said = any(_decision(j.get(k)) != str((j.get(k) or {}).get("value") or "unknown") for j in rows for k, _, _ in DECISIONS) \
        or any("[said" in _label(j.get("label") or {}) for j in rows)
    t = FitTable(_SUB_COLS, _SUB_LAYOUTS, lines=True, notes=[SAID] if said else ())
    for j in rows:
        dec = {k: _decision(j.get(k)) for k, _, _ in DECISIONS}
        t.add_row({"sub": j["stream"], "talks": Text(f"{', '.join(j.get('talks') or ()) or '—'} → {j.get('root') or '—'}"),
                   "root": j.get("root") or "—",
                   "start": Text(j.get("started_by") or f"— ({j.get('unattributed') or 'no step'})"),
                   "targets": Text(", ".join(j.get("targets") or ()) or "—"),
                   **dec,
                   "decisions": Text("\n".join(f"{h}: {dec[k]}" for k, h, _ in DECISIONS)
                                     + (f"\nmisled: {_misled(j)}" if j.get("misled") else "")),
                   "misled": Text(_misled(j)), "label": Text(_label(j.get("label") or {})),
                   "calls": str(j.get("calls", 0)), "note": Text(j.get("note") or "")})
    return Group(head, t)


def efficiency_text(sf: dict[str, Any]) -> Group:
    h = sf.get("header") or {}
    head = Text(f"labels: {h.get('labelled_talks', 0)} of {h.get('talks', 0)} talks labelled, "
                f"{plural(h.get('parts', 0), 'part')}, {h.get('parts_left_out', 0)} left out, "
                f"{plural(h.get('findings', 0), 'finding')}", style="bold")
    labs = [p.get("label") or {} for tk in sf.get("talks") or () for p in tk.get("parts") or ()]
    t = FitTable(_PART_COLS, _PART_LAYOUTS, notes=[SAID] if any("[said" in _label(x) for x in labs) else ())
    for tk in sf.get("talks") or ():
        for p in tk.get("parts") or ():
            lab = p.get("label") or {}
            note = "; ".join(x for x in (f"asz: {lab['reason']}" if lab.get("reason") else "", lab.get("note") or "") if x)
            t.add_row({"talk": tk["talk"], "part": p["start"] if p["start"] == p["end"] else f"{p['start']}–{p['end']}", "label": Text(_label(lab)),
                       "step": lab.get("step") or "—", "why": lab.get("why") or "—",
                       "calls": str(len(p.get("calls") or ())), "note": Text(note)})
    out: list[Any] = [head, t]
    for f in sf.get("findings") or ():
        out.append(Text(f"{f['id']} {f['target']} at {f['anchor']}: {f['what']}" + (f" Avoid: {f['avoid']}" if f.get("avoid") else "")))
    return Group(*out)


__all__ = ["subtasks_text", "efficiency_text"]
