"""The sub-task and efficiency stages for the terminal: what each sub-task was found to be, and
the label of each talk or part (``asz judge -show``; the run's costs by label are the final
statement's)."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text


def _label(lab: dict[str, Any]) -> str:
    s = lab.get("label") or "not_reviewed"
    if lab.get("cause"):
        s += f" ({lab['cause'].replace('_', ' ')})"
    if lab.get("given") and lab.get("given") != lab.get("label"):
        s += f" [said {lab['given']}]"
    return s


def subtasks_text(sf: dict[str, Any]) -> Group:
    h = sf.get("header") or {}
    head = Text(f"sub-tasks: {h.get('subtasks', 0)}, {h.get('decided', 0)} decided, {h.get('not_reviewed', 0)} not reviewed, "
                f"{h.get('unattributed_subtasks', 0)} unattributed, {h.get('misleading', 0)} misled the agent", style="bold")
    t = Table("sub-task", "started by", "outcome", "report", "used", "dispatch", "misled", "label", "calls")
    for j in sf.get("subtasks") or ():
        start = j.get("started_by") or f"— ({j.get('unattributed')})"
        misled = f"{j['misled']} → {j.get('charge')}" if j.get("misled") else "—"
        t.add_row(j["stream"], start, *(escape(str((j.get(k) or {}).get("value", "unknown"))) for k in ("outcome", "report", "used", "dispatch")),
                  misled, escape(_label(j.get("label") or {})), str(j.get("calls", 0)))
    return Group(head, t)


def efficiency_text(sf: dict[str, Any]) -> Group:
    h = sf.get("header") or {}
    head = Text(f"labels: {h.get('labelled_talks', 0)} of {h.get('talks', 0)} talks labelled, {h.get('parts', 0)} parts, "
                f"{h.get('parts_left_out', 0)} left out, {h.get('findings', 0)} findings", style="bold")
    t = Table("talk", "part", "label", "calls", "note")
    for tk in sf.get("talks") or ():
        for p in tk.get("parts") or ():
            lab = p.get("label") or {}
            t.add_row(tk["talk"], f"{p['start']}–{p['end']}", escape(_label(lab)), str(len(p.get("calls") or ())),
                      escape(lab.get("reason") or lab.get("note") or ""))
    out: list[Any] = [head, t]
    for f in sf.get("findings") or ():
        out.append(Text(f"{f['id']} {f['target']} at {f['anchor']}: {f['what']}" + (f" Avoid: {f['avoid']}" if f.get("avoid") else "")))
    return Group(*out)


__all__ = ["subtasks_text", "efficiency_text"]
