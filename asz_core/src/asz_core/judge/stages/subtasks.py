"""The sub-task stage: one decision per sub-task, each checked on its own (spec: "Sub-tasks";
decisions.md section 7; docs/subtasks.md).

Every stream a step started is a sub-task, followed through the starts relations as deep as
they go (a sub-agent's sub-agent is a sub-task of its own), judged once whatever targets it
serves; a stream no single step can be shown to have started stays apart, unattributed with
its reason, and is still read and judged on its own (over the whole conversation). Calls run
side by side, up to judge.concurrency at once, each cut so the outlines of its sub-tasks fit
three quarters of its reading budget, merged in order.

asz keeps a decision only as far as the record shows what it cites (asz_core.judge.evidence):

* an outcome or a report holds only on a citation into the sub-task's own stream: a tool step
  of its own and the result it returned (its report back and its own messages are claims);
  its report is its own last reply;
* used holds only on a later step of the agent that gave the task, in that agent's stream after
  the starting step (never an input, a runtime notice or context it was sent);
* a dispatch holds only citing the step that gave the task; misdirected or redundant also
  with what shows it wrong besides the agent's words (a tool result, an error, the person's
  words, another agent call of the same agent giving the task again);
* misled holds only on a report found inaccurate and a later step of the giving agent made
  after the report came back (the runtime's notice that it ended, or the foreground result);
  that work is charged to the sub-task (its task was right), to the giver (its task was
  wrong), or to neither (unknown);
* a shared decision is written once per sub-task, each checked against its own steps, and a
  nested sub-task is never covered by its parent's decision;
* a decision with nothing valid behind it falls back to the value that claims nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from ...assembly import Step

from ..chunks import Item
from ..context import EvaluatorSpec, Run, own_entries, readable_with
from ..evidence import WORK_KINDS, Cite, Evidence, for_run as evidence_for
from ..judgment import (AVOIDABLE, DISPATCHES, NOT_REVIEWED, OUTCOMES, REPORTS, USES, CallLabel, Check, check_notes, Decision,
                        StageFile, SubtaskJudgment, SubtasksHeader, WorkLabel)
from ..labelling import check_label, costing_of, demote, giver_cause, misled_cause, not_read, run_side_by_side, targets_stage
from .targets import bounded_catalogue

STAGE = "subtasks"
DELEGATION = {"misdirected": "misdirected_delegation", "redundant": "redundant_delegation"}


readable = readable_with("decisions")


# --- what the stage judges -----------------------------------------------------------------------

def subtask_streams(run: Run) -> list[str]:
    """The sub-tasks the window judges, in landing order of their streams: those its judged talks
    started (as deep as they go), and, over the whole conversation, those loose work started and
    those no single step can be shown to have started. Those of talks before the window are
    context."""
    w = run.window
    judged = set(w.judged)
    out = []
    for st in w.conv.streams:
        if st.id == "m" or st.id not in w.streams:
            continue
        root = w.roots.get(st.id)
        if root in judged or (w.whole and root in ("loose", "unattributed")):
            out.append(st.id)
    return out


# --- one sub-task, checked on its own --------------------------------------------------------------

class SubtaskCheck:
    """The checks of one answer entry's decisions against one sub-task."""

    def __init__(self, ev: Evidence, stream: str, checks: list[Check], steps: Sequence[Step] | None = None) -> None:
        """``steps``: the stream's steps in the window, in order, when the caller has them already."""
        self.ev, self.a, self.checks = ev, stream, checks
        self.start = ev.starting_step(stream)
        if steps is None:
            steps = ev.by_stream.get(stream, [])
        self.own = {s.id for s in steps}
        self.work = {s.id for s in steps if s.kind in WORK_KINDS}
        """Its own work: what a work label cites (the task it was given, its input, and a
        runtime notice are its stream's steps, not its work)."""
        self.replied = any(s.kind == "reply" for s in steps)
        self.report_step = ev.answer(stream)
        """Its report: its own last reply, unless an interruption or API error of its own cut it off after it."""

    def _cites(self, raw: Any) -> list[Cite]:
        return self.ev.cites(raw.get("cites") if isinstance(raw, dict) else None)

    def _decision(self, name: str, raw: Any, allowed: tuple[str, ...], holds: Any, needs: str) -> Decision:
        if raw is None:
            return Decision("unknown")
        v = raw.get("value") if isinstance(raw, dict) else None
        if v not in allowed:
            self.checks.append(Check("left_out", self.a, f"{name} {v!r}, which is no {name}: unknown"))
            return Decision("unknown", reason=f"{v!r} is no {name}", given=v if isinstance(v, str) else None)
        cites = self._cites(raw)
        if v == "unknown":
            return Decision("unknown", tuple(c.step for c in cites if c.step))
        kept = [c for c in cites if holds(c)]
        if not kept:
            why = f"{name} {v} needs {needs}; " + self.ev.why_not(cites)
            self.checks.append(Check("changed", self.a, f"{why}: unknown"))
            return Decision("unknown", reason=why, given=v)
        return Decision(v, tuple(dict.fromkeys(c.step for c in kept if c.step)))

    def outcome(self, raw: Any) -> Decision:
        return self._decision("outcome", raw, OUTCOMES, lambda c: self.ev.own_result(c, self.a),
                              f"a result of {self.a}'s own steps")

    def report(self, raw: Any) -> Decision:
        if self.report_step is None and isinstance(raw, dict) and raw.get("value") in ("accurate", "inaccurate"):
            why = (f"{self.a} has no reply of its own: it gave no report to check" if not self.replied else
                   f"{self.a} was cut off after its last reply (an interruption or API error of its own): it never "
                   "answered, and gave no report to check")
            self.checks.append(Check("changed", self.a, f"report {raw['value']}: {why}: unknown"))
            return Decision("unknown", reason=why, given=raw["value"])
        return self._decision("report", raw, REPORTS, lambda c: self.ev.own_result(c, self.a),
                              f"a result of {self.a}'s own steps to check its report against")

    def used(self, raw: Any) -> Decision:
        if self.start is None:
            return self._no_giver("used", raw)
        return self._decision("used", raw, USES, lambda c: self.ev.asker_later(c, self.a),
                              f"a later step of {self.start.stream} after {self.start.id}, which gave the task")

    def dispatch(self, raw: Any) -> Decision:
        if self.start is None:
            return self._no_giver("dispatch", raw)
        d = self._decision("dispatch", raw, DISPATCHES, lambda c: c.step == self.start.id,  # type: ignore[union-attr]
                           f"the step that gave the task ({self.start.id})")
        if d.value in ("misdirected", "redundant"):
            cites = self._cites(raw)
            shown = [c for c in cites if c.step != self.start.id and self.ev.shows_task_wrong(c, self.a)]
            if not shown:
                others = [c for c in cites if c.step != self.start.id]
                why = (f"dispatch {d.value} needs what shows the task wrong besides the agent's words (a tool result, an "
                       f"error, the person's words, another agent call of {self.start.stream} given after {self.start.id}, "
                       f"not with it); " + self.ev.why_not(others))
                self.checks.append(Check("changed", self.a, f"{why}: unknown"))
                return Decision("unknown", reason=why, given=d.value)
            return Decision(d.value, tuple(dict.fromkeys([self.start.id, *(c.step for c in shown if c.step)])))
        return d

    def _no_giver(self, name: str, raw: Any) -> Decision:
        v = raw.get("value") if isinstance(raw, dict) else None
        if v in (None, "unknown"):
            return Decision("unknown")
        why = f"no single step can be shown to have started {self.a}: no agent gave it a task"
        self.checks.append(Check("changed", self.a, f"{name} {v}: {why}: unknown"))
        return Decision("unknown", reason=why, given=v if isinstance(v, str) else None)

    def misled(self, raw: Any, report: Decision) -> tuple[str | None, str | None]:
        """(the acting step kept, asz's reason when it kept none)."""
        if raw is None:
            return None, None
        c = self.ev.cite(raw)
        if report.value != "inaccurate":
            why = f"misled needs a report found inaccurate, and the report is {report.value}"
        elif self.start is None:
            why = f"no agent gave {self.a} its task"
        elif self.ev.report_back(self.a) is None:
            why = (f"nothing shows {self.a}'s report came back (no notice that it ended, and its starting step "
                   f"{self.start.id} was a launch with no report)")
        elif not self.ev.after_report(c, self.a):
            why = (f"misled needs a later step of {self.start.stream} made after the report came back "
                   f"({self.ev.report_back(self.a)[0]}); {c.fact}")  # type: ignore[index]
        else:
            return c.step, None
        self.checks.append(Check("changed", self.a, f"misled {raw!r}: {why}: none"))
        return None, why


# --- the stage ---------------------------------------------------------------------------------------

def subtasks_named(e: Any) -> list[str]:
    """The sub-tasks a decision names (one decision can cover several)."""
    names = e.get("subtasks") if isinstance(e, dict) else None
    return [x for x in names if isinstance(x, str) and x] if isinstance(names, list) else []


def run_subtasks(run: Run, spec: EvaluatorSpec, backend: Any) -> StageFile:
    w = run.window
    catalogue, targets, inputs = targets_stage(run)
    costing = costing_of(run, targets, inputs)
    ev = evidence_for(w, run.store, targets, inputs)
    streams = subtask_streams(run)
    nav = run.reader()
    rows = {r["id"]: r for r in nav.rows("subtasks")}
    items = [Item(a, (orjson.dumps(rows[a]),), (a,)) for a in streams if a in rows]
    outline = {a: sum(nav.outline_bytes(k) for k in w.conv.stream(a).talks if k in w.talks) for a in streams}
    ran = run_side_by_side(run, spec, backend, STAGE, items, outline,
                           lambda own: list(dict.fromkeys(t for a in own for t in costing.targets_of_stream(a))),
                           catalogue, bounded_catalogue, "sub-tasks", readable)

    checks: list[Check] = []
    entry_of: dict[str, tuple[int, dict[str, Any], tuple[str, ...]]] = {}
    failed = ran.failed
    for n, own, answer in ran.answers():
        for a, e in own_entries(answer["decisions"], subtasks_named, own, rows, "sub-task", n, checks).items():
            entry_of[a] = (n, e, tuple(x for x in subtasks_named(e) if x != a))

    in_window = ev.by_stream  # per stream its steps in the window, in order: one pass
    model_calls = {a: [s.id for s in steps if s.kind == "model_call"] for a, steps in in_window.items()}
    judged: list[SubtaskJudgment] = []
    for a in streams:
        st = w.conv.stream(a)
        sc = SubtaskCheck(ev, a, checks, in_window.get(a, []))
        base = dict(stream=a, kind=st.kind, talks=tuple(k for k in st.talks if k in w.talks), root=w.roots.get(a, "unattributed"),
                    started_by=sc.start.id if sc.start else None, giver=sc.start.stream if sc.start else None,
                    unattributed=st.unattributed, targets=costing.targets_of_stream(a), report_step=sc.report_step,
                    report_back=(ev.report_back(a) or (None,))[0],
                    calls=len(model_calls.get(a, ())))
        got = entry_of.get(a)
        if got is None:
            why = failed.get(a) or "no decision covers it"
            if a not in failed:
                checks.append(Check("filled_in", a, f"{why}: every decision unknown, its work not reviewed"))
            judged.append(SubtaskJudgment(**base, judged=False, label=WorkLabel(NOT_REVIEWED, reason=why)))
            continue
        n, e, others = got
        outcome, report = sc.outcome(e.get("outcome")), sc.report(e.get("report"))
        used, dispatch = sc.used(e.get("used")), sc.dispatch(e.get("dispatch"))
        misled, misled_why = sc.misled(e.get("misled"), report)
        charge = None
        if misled:
            charge = {"right": "subtask", "misdirected": "giver", "redundant": "giver"}.get(dispatch.value, "unknown")
        label = check_label(e.get("label"), sc.work, ev, a, checks)
        deleg = DELEGATION.get(dispatch.value)
        if label.label in DELEGATION.values() and label.label != deleg:
            label = demote(label, a, f"{label.label} needs the dispatch {label.label.split('_')[0]}, which "
                                     f"{'is ' + dispatch.value if dispatch.value != 'unknown' else 'nothing shows'}", checks)
        elif deleg and label.label not in (NOT_REVIEWED, deleg) and label.step:
            checks.append(Check("changed", a, f"its task was {dispatch.value} when given, and it did what it was told: "
                                              f"its work is {deleg}, not {label.label}"))
            label = WorkLabel(deleg, label.step, sc.start.id, reason=f"its dispatch was {dispatch.value}",  # type: ignore[union-attr]
                              given=label.label, note=label.note)
        note = e.get("note") if isinstance(e.get("note"), str) else None
        judged.append(SubtaskJudgment(**base, judged=True, call=n, decided_with=others, outcome=outcome, report=report,
                                      used=used, dispatch=dispatch, misled=misled,
                                      misled_given=e.get("misled") if misled is None and isinstance(e.get("misled"), str) else None,
                                      misled_reason=misled_why, charge=charge, label=label, note=note))

    judged = _misled_labels_and_causes(judged, checks)
    call_rows = tuple(CallLabel(c, j.label.label, j.label.cause) for j in judged if j.label.label != NOT_REVIEWED
                      for c in model_calls.get(j.stream, ()))
    header = SubtasksHeader(subtasks=len(judged), decided=sum(1 for j in judged if j.judged),
                            not_reviewed=sum(1 for j in judged if j.label.label == NOT_REVIEWED),
                            unattributed_subtasks=sum(1 for j in judged if j.unattributed),
                            misleading=sum(1 for j in judged if j.misled), never_judged=len(failed))
    unread = not_read(run, "targets", "achievement")
    note = unread + check_notes(checks)
    ref = run.kit.ref(STAGE)
    if ran.all_failed:
        return run.stage_file(STAGE, "failed", f"every call gave nothing readable twice ({ran.outs[0].error}); "
                              f"{len(failed)} sub-tasks never judged", note=note, kit=ref, evaluator=ran.evaluator, run=ran.stage_run,
                              checks=tuple(checks), header=header, subtasks=tuple(judged))
    status = "partial" if (checks or failed or unread) else "complete"
    if failed:
        note += tuple(f"not judged: {a}: {why}" for a, why in failed.items())
    return run.stage_file(STAGE, status, None, note=note, kit=ref, evaluator=ran.evaluator, run=ran.stage_run, checks=tuple(checks),
                          header=header, subtasks=tuple(judged), calls=call_rows)


def _misled_labels_and_causes(judged: list[SubtaskJudgment], checks: list[Check]) -> list[SubtaskJudgment]:
    """Who each avoidable label's cost is charged to; a sub-task's own work labelled misled holds
    only when a sub-task it started misled it (a held misled step in its own stream)."""
    import attrs

    misled_in: dict[str, SubtaskJudgment] = {}
    for j in judged:
        if j.misled and j.giver and j.giver != "m":
            misled_in.setdefault(j.giver, j)
    out = []
    for j in judged:
        lab = j.label
        if lab.label == "misled_by_subtask":
            child = misled_in.get(j.stream)
            if child is None:
                lab = demote(lab, j.stream, f"misled_by_subtask needs a sub-task {j.stream} started that misled it", checks)
            else:
                lab = attrs.evolve(lab, cause=misled_cause(child.charge, child.giver))
        elif lab.label in ("misdirected_delegation", "redundant_delegation"):
            lab = attrs.evolve(lab, cause=giver_cause(j.giver))
        elif lab.label in AVOIDABLE:
            lab = attrs.evolve(lab, cause="subtask")
        out.append(attrs.evolve(j, label=lab) if lab is not j.label else j)
    return out


__all__ = ["run_subtasks", "subtask_streams", "SubtaskCheck", "readable"]
