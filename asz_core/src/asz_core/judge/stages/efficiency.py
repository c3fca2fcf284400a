"""The efficiency stage: one label per talk of a target, or per part of a talk from a step on, and
findings for the work labelled avoidable (spec: "Efficiency", "Findings"; decisions.md section 8;
docs/efficiency.md).

A part runs from its first step to the next part's first step, in the order the work happened.
It takes in the model call that asked for its first step (a runtime's view puts a tool inside
that call), and a call that asked for the first steps of several parts belongs to the first of
them. With a sub-task stage a label covers only the talk's own stream: each sub-task's calls
are priced by its own work (the sub-task stage's label), an unjudged sub-task is not reviewed,
and so is every sub-task when that stage failed. Without one, a sub-task's calls take the label
of the part its starting step is in.

asz keeps a label only as far as the record shows what it cites (:mod:`..labelling`): a step of
its talk, and for an avoidable label the step that shows why; misled_by_subtask only from a
step that acted on the report of a sub-task the sub-task stage found misled the agent. A label
left out leaves its part not reviewed. A finding is kept only anchored at a step of its target's
talks or of their sub-tasks. Calls run side by side, each cut so the outlines of its talks fit
three quarters of its reading budget, merged in order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import orjson

from ...assembly import Step
from ..chunks import Item
from ..context import EvaluatorSpec, Run, naming, own_entries, readable_with
from ..evidence import Evidence, asking_calls, for_run as evidence_for
from ..judgment import (AVOIDABLE, NOT_REVIEWED, CallLabel, Check, check_notes, EfficiencyHeader, Finding, PartLabel, StageFile,
                        TalkLabels, WorkLabel)
from .. import stage_files
from ..labelling import check_label, costing_of, demote, misled_cause, not_read, read_stage, run_side_by_side, targets_stage
from .targets import bounded_catalogue

STAGE = "efficiency"


readable = readable_with("talks")


# --- the cut of a talk into parts --------------------------------------------------------------------

def part_calls(steps: Sequence[Step], starts: Sequence[int]) -> tuple[list[str], list[list[str]]]:
    """The model calls of a talk's own steps before its first part, and those of each part.

    ``starts`` are the indices in ``steps`` of the parts' first steps, ascending. A part takes in
    the model call that asked for its first step (:func:`..evidence.asking_calls`, the one rule: the
    last call of its talk before it); a call that asked for the first steps of several parts belongs to the first."""
    calls = [i for i, s in enumerate(steps) if s.kind == "model_call"]
    index = {s.id: i for i, s in enumerate(steps)}
    asked = asking_calls(steps)
    begins = []
    for i in starts:
        call = asked.get(steps[i].id)
        begins.append(index[call] if call is not None else i)
    before: list[str] = []
    out: list[list[str]] = [[] for _ in starts]
    for j in calls:
        first = next((p for p, b in enumerate(begins) if b == j), None)
        if first is None:
            earlier = [p for p, b in enumerate(begins) if b < j]
            first = earlier[-1] if earlier else None
        (before if first is None else out[first]).append(steps[j].id)
    return before, out


def part_of_step(starts: Sequence[int], i: int) -> int | None:
    """The part a step at index ``i`` is in (its first step at or before it), or None before any."""
    got = [p for p, s in enumerate(starts) if s <= i]
    return got[-1] if got else None


# --- the stage -----------------------------------------------------------------------------------------

def subtask_stage(run: Run) -> tuple[str, dict[str, Any], str | None]:
    """Whether the run has a sub-task stage: ``judged`` (its file holds decisions), ``failed``
    (it ran and failed, or its file is missing or unreadable: every sub-task not reviewed) or
    ``none`` (skipped, not asked: a sub-task's calls take the label of the part its starting step
    is in); and the note line that says why every sub-task is not reviewed."""
    got = stage_files.of_run(run, "subtasks")
    if got.usable:
        return "judged", got.data, None
    if got.status == "skipped":
        return "none", {}, None
    why = got.not_read_note() or "the sub-task stage failed"
    return "failed", {}, f"{why}: every sub-task's work is not reviewed"


def run_efficiency(run: Run, spec: EvaluatorSpec, backend: Any) -> StageFile:
    w = run.window
    conv = w.conv
    catalogue, targets, inputs = targets_stage(run)
    costing = costing_of(run, targets, inputs)
    ev = evidence_for(w, run.store, targets, inputs)
    claims: dict[str, list[str]] = {}
    for r in costing.record.targets:
        for k in r.talks:
            claims.setdefault(k, []).append(r.target)
    talks = [k for k in w.judged if k in claims]
    sub_mode, sub, sub_note = subtask_stage(run)
    misleading = [j for j in sub.get("subtasks") or () if isinstance(j, dict) and j.get("misled") and j.get("giver") == "m"]
    nav = run.reader()
    rows = {r["id"]: r for r in nav.rows("talks")}
    items = [Item(k, (orjson.dumps(rows[k]),), (k,)) for k in talks if k in rows]
    outline = {k: nav.outline_bytes(k) for k in talks}

    def misled_slot(own: list[str]) -> dict[str, str]:
        mis = [{"subtask": j["stream"], "talk": conv.step(j["misled"]).talk, "acted_at": j["misled"],
                "report": (j.get("report") or {}).get("value"), "charged_to": j.get("charge")}
               for j in misleading if conv.step(j["misled"]).talk in own]
        return {"misled": "\n".join(orjson.dumps(m).decode() for m in mis) or "(none)"}

    ran = run_side_by_side(run, spec, backend, STAGE, items, outline,
                           lambda own: list(dict.fromkeys(t for k in own for t in claims.get(k, ()))),
                           catalogue, bounded_catalogue, "talks", readable, misled_slot)
    mine_of = [set(m) for m in ran.mine]

    checks: list[Check] = []
    entry_of: dict[str, tuple[int, dict[str, Any]]] = {}
    failed = ran.failed
    raw_findings: list[tuple[int, Any]] = []
    for n, own, answer in ran.answers():
        for k, e in own_entries(answer["talks"], naming("talk"), own, w.talks, "talk", n, checks).items():
            entry_of[k] = (n, e)
        found = answer.get("findings")
        raw_findings += [(n, f) for f in (found if isinstance(found, list) else [])]

    anchors = costing.anchor
    labelled: list[TalkLabels] = []
    call_rows: list[CallLabel] = []
    left_out_parts = 0
    by_part_of_anchor: dict[str, tuple[str, str | None]] = {}
    for k in talks:
        steps = [conv.step(s) for s in conv.talk(k).steps if s in w.steps]
        index = {s.id: i for i, s in enumerate(steps)}
        got = entry_of.get(k)
        starts: list[int] = []
        raws: list[Any] = []
        if got is not None:
            seen: set[int] = set()
            given = got[1].get("parts")
            if not isinstance(given, list):
                checks.append(Check("left_out", k, f"parts {type(given).__name__}, not a list: not reviewed"))
                given = []
            for p in given:
                f = p.get("from") if isinstance(p, dict) else None
                if not isinstance(f, str) or f not in index:
                    checks.append(Check("left_out", k, f"a part from {f!r}, which is no step of {k}: its label is not kept"))
                    left_out_parts += 1
                elif index[f] in seen:
                    checks.append(Check("left_out", k, f"a second part from {f}"))
                    left_out_parts += 1
                else:
                    seen.add(index[f])
                    starts.append(index[f])
                    raws.append(p)
            order = sorted(range(len(starts)), key=lambda x: starts[x])
            starts, raws = [starts[x] for x in order], [raws[x] for x in order]
        if got is None:
            why = failed.get(k) or "no answer labels it"
            if k not in failed:
                checks.append(Check("filled_in", k, f"{why}: not reviewed"))
        elif not starts:
            checks.append(Check("filled_in", k, "no part of its answer was kept: not reviewed"))
        parts: list[PartLabel] = []
        if not steps:
            labelled.append(TalkLabels(k, False, None, ()))
            continue
        if not starts or starts[0] != 0:
            if starts:
                checks.append(Check("filled_in", k, f"no part covers {steps[0].id} to {steps[starts[0] - 1].id}: not reviewed"))
            starts = [0, *starts]
            raws = [None, *raws]
        before, per = part_calls(steps, starts)
        per[0] = before + per[0]
        for p, (i, raw) in enumerate(zip(starts, raws)):
            end = steps[(starts[p + 1] if p + 1 < len(starts) else len(steps)) - 1].id
            where = f"{k} from {steps[i].id}"
            if raw is None:
                lab = WorkLabel(NOT_REVIEWED, reason=failed.get(k) or ("no answer labels it" if got is None else
                                                                      "no part of the answer covers it"))
            else:
                lab = check_label(raw, set(index), ev, where, checks)
                lab = _misled(lab, i, steps, index, misleading, sub_mode, where, checks)
                if lab.label in AVOIDABLE and lab.cause is None:
                    lab = attrs.evolve(lab, cause="main_agent")
                if lab.label == NOT_REVIEWED and lab.given is not None:
                    left_out_parts += 1
            calls_here = list(per[p])
            for s in steps[i:(starts[p + 1] if p + 1 < len(starts) else len(steps))]:
                by_part_of_anchor[s.id] = (lab.label, lab.cause)
            parts.append(PartLabel(k, steps[i].id, end, lab, tuple(calls_here)))
            if lab.label != NOT_REVIEWED:  # a call no row labels is not reviewed
                call_rows += [CallLabel(c, lab.label, lab.cause) for c in calls_here]
        labelled.append(TalkLabels(k, got is not None, got[0] if got else None, tuple(parts)))
    if sub_mode == "none":  # no sub-task stage: a sub-task's calls go with its starting step's part
        for c in costing.calls.values():
            a = anchors.get(c.stream)
            if c.stream != "m" and a in by_part_of_anchor and by_part_of_anchor[a][0] != NOT_REVIEWED:
                lab_, cause = by_part_of_anchor[a]
                call_rows.append(CallLabel(c.step, lab_, cause))

    sub_label = {j["stream"]: (j.get("label") or {}).get("label") for j in sub.get("subtasks") or ()
                 if isinstance(j, dict) and j.get("stream")}

    def label_at(sid: str) -> str:
        """The label of the work a step is in: its part's, or for a sub-task's step its own label
        (with a sub-task stage) or that of the part its starting step is in (without one)."""
        st = conv.step(sid)
        if st.stream == "m":
            return by_part_of_anchor.get(sid, (NOT_REVIEWED, None))[0]
        if sub_mode == "judged":
            return sub_label.get(st.stream) or NOT_REVIEWED
        if sub_mode == "failed":
            return NOT_REVIEWED
        return by_part_of_anchor.get(anchors.get(st.stream) or "", (NOT_REVIEWED, None))[0]

    findings = _findings(raw_findings, mine_of, ev, run, checks, label_at)
    header = EfficiencyHeader(talks=len(talks), labelled_talks=sum(1 for t in labelled if t.judged),
                              parts=sum(len(t.parts) for t in labelled), parts_left_out=left_out_parts,
                              findings=len(findings), never_labelled=len(failed))
    unread = not_read(run, "targets", "achievement")
    note = unread + check_notes(checks) + ((sub_note,) if sub_note else ())
    ref = run.kit.ref(STAGE)
    kw = dict(note=note, kit=ref, evaluator=ran.evaluator, run=ran.stage_run, checks=tuple(checks), header=header,
              talks=tuple(labelled))
    if ran.all_failed:
        return run.stage_file(STAGE, "failed", f"every call gave nothing readable twice ({ran.outs[0].error}); "
                              f"{len(failed)} talks never labelled", **kw)
    if failed:
        kw["note"] = note + tuple(f"not labelled: {k}: {why}" for k, why in failed.items())
    status = "partial" if (checks or failed or sub_mode == "failed" or unread) else "complete"
    return run.stage_file(STAGE, status, None, **kw, calls=tuple(call_rows), findings=tuple(findings))


def _misled(lab: WorkLabel, i: int, steps: Sequence[Step], index: dict[str, int], misleading: list[dict[str, Any]],
            sub_mode: str, where: str, checks: list[Check]) -> WorkLabel:
    """misled_by_subtask holds only from a step that acted on the report of a sub-task the
    sub-task stage found misled the agent, in this talk, the part beginning at or after it."""
    if lab.label != "misled_by_subtask":
        return lab
    if sub_mode != "judged":
        return demote(lab, where, "misled_by_subtask needs the sub-task stage's decisions, and "
                                  + ("it could not be used" if sub_mode == "failed" else "the run has no sub-task stage"), checks)
    j = next((j for j in misleading if j["misled"] == lab.why), None)
    if j is None or lab.why not in index:
        return demote(lab, where, f"misled_by_subtask cites {lab.why} for why, which is no step of this talk that acted on "
                                  "a sub-task's inaccurate report (the sub-task stage's misled decisions)", checks)
    if i < index[lab.why]:  # type: ignore[index]
        return demote(lab, where, f"misled work begins at the step that acted on the report ({lab.why}), after "
                                  f"{steps[i].id} where this part begins", checks)
    return attrs.evolve(lab, cause=misled_cause(j.get("charge"), "m"))


def _findings(raw: list[tuple[int, Any]], mine_of: list[set[str]], ev: Evidence, run: Run, checks: list[Check],
              label_at: Any) -> list[Finding]:
    """Findings kept: each naming one of its call's targets, anchored at a step of that target's
    talks or of their sub-tasks, in work the stage labelled avoidable (``label_at(step)``: the
    stage records findings for that work alone), with something said of what went wrong and
    citing a step that shows it. Ids continue after the achievement stage's findings."""
    ach = read_stage(run, "achievement") or {}
    n0 = sum(len(r.get("findings") or ()) for r in (ach.get("achievement") or ach.get("targets") or ()) if isinstance(r, dict))
    n0 = max(n0, len(ach.get("findings") or ()))
    out: list[Finding] = []
    for n, f in raw:
        if not isinstance(f, dict):
            checks.append(Check("left_out", f"call {n}", "a finding that is not an object"))
            continue
        t, at, what = f.get("target"), f.get("at"), f.get("what")
        where = f"finding at {at}"
        if not isinstance(t, str) or t not in mine_of[n - 1]:
            checks.append(Check("left_out", where, f"it names {t!r}, which is no target of the talks this call labels"))
            continue
        c = ev.cite(at)
        if c.step is None or c.step not in ev.work(t):  # type: ignore[arg-type]
            checks.append(Check("left_out", where, f"its anchor is no step of {t}'s talks or of their sub-tasks ({c.fact})"))
            continue
        if not isinstance(what, str) or not what.strip():
            checks.append(Check("left_out", where, "it says nothing of what went wrong"))
            continue
        lab = label_at(c.step)
        if lab not in AVOIDABLE:
            checks.append(Check("left_out", where, f"it sits in work labelled {lab}: the stage's findings concern work "
                                                   "it labelled avoidable"))
            continue
        cites = ev.cites(f.get("cites"))
        kept = tuple(x.step for x in cites if x.step)
        if not kept:
            checks.append(Check("left_out", where, "it cites no step of the window: nothing shows it"))
            continue
        if len(kept) < len(cites):
            checks.append(Check("left_out", where, "citations the window does not hold: "
                                + ", ".join(x.id for x in cites if not x.step)))
        why, avoid = f.get("why"), f.get("avoid")
        out.append(Finding(f"f{n0 + len(out) + 1}", t, c.step, what.strip(), why if isinstance(why, str) else None,  # type: ignore[arg-type]
                           avoid if isinstance(avoid, str) else None, kept))
    return out


__all__ = ["run_efficiency", "part_calls", "part_of_step", "readable"]
