"""What the sub-task and efficiency stages share: the targets stage's answer and its costing, one
check of a work label (decisions.md section 8), who avoidable work is charged to, and what each
of their calls is given besides its rows (its own targets, the steps the achievement stage cited
for them, bounded by judge.state_bytes).

A label holds only as far as the record shows what it cites (spec: "Efficiency", "Sub-tasks"):
it cites a step of the work it labels, the one read to decide it (a talk id is not a step), and a
label other than the first three also cites the step that shows why. A label with no step of
its work is left out, and its cost counts as not reviewed rather than reviewed or avoidable.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import Any

import orjson

from . import stage_files
from .evidence import Evidence
from .judgment import AVOIDABLE, LABELS, NOT_REVIEWED, Check, WorkLabel
from .target_cost import Costing, cost_per_target

LEFT_OUT = "left out"


def check_label(raw: Any, own: Collection[str], ev: Evidence, where: str, checks: list[Check]) -> WorkLabel:
    """The label an answer gave some work, kept only when it cites a step of that work (``own``:
    the step ids of the work) and, when avoidable, a step the window shows for why. What does
    not hold is left out (``not_reviewed``, with asz's reason), and a check says so."""
    if not isinstance(raw, dict):
        if raw is not None:
            checks.append(Check("left_out", where, "a label that is not an object: not reviewed"))
        return WorkLabel(NOT_REVIEWED)
    lab, step, why, note = raw.get("label"), raw.get("step"), raw.get("why"), raw.get("note")
    note = note.strip() if isinstance(note, str) and note.strip() else None
    if lab == NOT_REVIEWED:
        return WorkLabel(NOT_REVIEWED, note=note, reason="the evaluator could not read enough of it")
    if lab not in LABELS:
        return _left_out(where, checks, lab, f"{lab!r} is no label", note)
    c = ev.cite(step) if step is not None else None
    if c is None or c.step is None or c.step not in own:
        said = "cites no step" if step is None else f"cites {step!r}, which is no step of the work it labels"
        return _left_out(where, checks, lab, f"label {lab} {said}", note, step=step if isinstance(step, str) else None)
    if lab in AVOIDABLE:
        w = ev.cite(why) if why is not None else None
        if w is None or w.step is None:
            said = "gives no step that shows why" if why is None else f"gives {why!r} for why, which is no step of this window"
            return _left_out(where, checks, lab, f"{lab} {said}", note, step=c.step)
        return WorkLabel(lab, c.step, w.step, note=note)
    return WorkLabel(lab, c.step, None, note=note)


def _left_out(where: str, checks: list[Check], lab: Any, why: str, note: str | None, step: str | None = None) -> WorkLabel:
    checks.append(Check("left_out", where, f"{why}: its cost is not reviewed"))
    return WorkLabel(NOT_REVIEWED, step, None, reason=why, given=lab if isinstance(lab, str) else repr(lab), note=note)


def demote(label: WorkLabel, where: str, why: str, checks: list[Check]) -> WorkLabel:
    """A label asz cannot keep for a reason of the stage's own (a delegation label with no such
    dispatch, misled work with no misleading sub-task): left out, not reviewed."""
    return _left_out(where, checks, label.label, why, label.note, step=label.step)


def giver_cause(giver: str | None) -> str:
    """Whose cost a giver's doing is: the main agent's for a sub-task a main talk started, a
    sub-task's (the sub-agent above) for a nested one."""
    return "main_agent" if giver == "m" else "subtask" if giver else "unknown"


def misled_cause(charge: str | None, giver: str | None) -> str:
    """Whose cost misled work is: the sub-task's when its task was right, the giver's when the
    task was wrong, unknown when the record does not show whether it was right."""
    if charge == "subtask":
        return "subtask"
    if charge == "giver":
        return giver_cause(giver)
    return "unknown"


# --- what a call is given besides its rows ---------------------------------------------------------

def read_stage(run: Any, stage: str) -> dict[str, Any] | None:
    """An earlier stage's file as JSON when it is usable (complete or partial, read by
    :mod:`.stage_files`); None otherwise."""
    got = stage_files.of_run(run, stage)
    return got.data if got.usable else None


def not_read(run: Any, *stages: str) -> tuple[str, ...]:
    """The note lines of a later stage for those of ``stages`` whose files are missing or
    unreadable (a failed or skipped stage says so in its own file)."""
    return tuple(n for s in stages if (n := stage_files.of_run(run, s).not_read_note()))


def targets_stage(run: Any) -> tuple[list[dict[str, Any]], Any, Any]:
    """The targets stage's catalogue (JSON) and its records, when it holds an answer."""
    got = stage_files.of_run(run, "targets")
    if not got.usable:
        return [], (), ()
    return list(got.data.get("targets") or []), got.record.targets, got.record.inputs


def costing_of(run: Any, targets: Any, inputs: Any) -> Costing:
    from ..ledger import build

    return cost_per_target(run.window, build(run.window.conv, run.prices), targets, inputs)


def cited_by_achievement(run: Any) -> dict[str, list[str]]:
    """Per target, the steps the achievement stage cited for it (empty when it has not run)."""
    d = read_stage(run, "achievement") or {}
    out: dict[str, list[str]] = {}
    for r in d.get("achievement") or ():
        cited = r.get("cited")
        if isinstance(r.get("target"), str) and isinstance(cited, list):
            out[r["target"]] = [x for x in cited if isinstance(x, str)]
    return out


def targets_text(catalogue: list[dict[str, Any]], mine: Iterable[str], limit: int,
                 bounded: Callable[[list[dict[str, Any]], int], str]) -> str:
    """The call's own targets, bounded as the targets stage bounds its catalogue."""
    want = set(mine)
    rows = [t for t in catalogue if t.get("id") in want]
    return bounded(rows, limit) if rows else "(none: no target's talk holds this work)"


def cited_text(cited: dict[str, list[str]], mine: Iterable[str], limit: int, ran: bool) -> str:
    """The steps achievement cited for each of the call's targets, in at most ``limit`` bytes:
    whole, else each target's first steps with a count of the rest."""
    if not ran:
        return "(the achievement stage has not run)"
    rows = [{"target": t, "cited": cited.get(t, [])} for t in mine]
    if not rows:
        return "(none)"
    whole = "\n".join(orjson.dumps(r).decode() for r in rows)
    if len(whole.encode()) <= limit:
        return whole
    per = max(1, (limit // max(1, len(rows)) - 60) // 7)
    short = [{"target": r["target"], "cited": r["cited"][:per], "more": max(0, len(r["cited"]) - per)} for r in rows]
    text = "\n".join(orjson.dumps(r).decode() for r in short)
    return text if len(text.encode()) <= limit else text.encode()[:limit].decode("utf-8", "ignore").rsplit("\n", 1)[0] + \
        "\n… (more: the achievement stage's file names every step it cited)"


# --- calls side by side -----------------------------------------------------------------------------

class SideBySide:
    """A stage's calls run side by side (sub-tasks, efficiency): what was planned and what came
    back, in order. ``failed[item]`` says why an item's call gave nothing readable twice."""

    def __init__(self, mode: str, chunks: list[Any], outs: list[Any], stage_run: Any, evaluator: Any,
                 mine: list[list[str]]) -> None:
        self.mode, self.chunks, self.outs, self.stage_run, self.evaluator, self.mine = mode, chunks, outs, stage_run, evaluator, mine
        self.failed = {i: f"call {n} gave nothing readable twice ({o.error})"
                       for n, (ch, o) in enumerate(zip(chunks, outs), 1) if not o.ok for i in ch.items}

    @property
    def all_failed(self) -> bool:
        return bool(self.chunks) and all(not o.ok for o in self.outs)

    def answers(self) -> Iterable[tuple[int, set[str], Any]]:
        """(call number, the items it owns, its answer) for each call that answered."""
        for n, (ch, o) in enumerate(zip(self.chunks, self.outs), 1):
            if o.ok:
                yield n, set(ch.items), o.answer


def run_side_by_side(run: Any, spec: Any, backend: Any, stage: str, items: list[Any], outline: dict[str, int],
                     targets_of: Callable[[list[str]], list[str]], catalogue: list[dict[str, Any]],
                     bounded: Callable[[list[dict[str, Any]], int], str], noun: str,
                     readable: Callable[[Any], str | None], extra: Callable[[list[str]], dict[str, str]] | None = None) -> SideBySide:
    """Plan the stage's calls (cut by the outlines of what each labels), give each its rows, its
    own targets and the steps achievement cited for them (and ``extra`` slots), and run them side
    by side up to judge.concurrency, merged in order. ``bounded`` bounds the targets as the targets
    stage bounds its catalogue; ``noun`` names the items ("sub-tasks")."""
    import time

    from .chunks import plan_outlined
    from .context import Meter, StageCalls, now
    from .kit import render

    t0, started = time.monotonic(), now()
    cfg = run.cfg.judge
    mode, chunks = plan_outlined(items, cfg, outline) if items else ("none", [])
    cited = cited_by_achievement(run)
    ach_ran = read_stage(run, "achievement") is not None
    card = run.card() if chunks else ""
    template, schema = run.kit.template(stage), run.kit.schema(stage)
    prompts, mine_of = [], []
    quarter = cfg.state_bytes // 4
    for n, ch in enumerate(chunks, 1):
        own = list(ch.items)
        mine = targets_of(own)
        mine_of.append(mine)
        note = (f"This is the only call of this stage: your {noun} are every one of the judged window ({', '.join(own)})."
                if mode == "single" else f"This is call {n} of {len(chunks)}; the calls run side by side. Your {noun} are "
                f"{', '.join(own)}. Other calls answer for the others.")
        prompts.append(render(template, {
            "budget": f"{cfg.read_bytes:,}", "card": card, "call_note": note, "own": "\n".join(r.decode() for r in ch.rows),
            "targets": targets_text(catalogue, mine, cfg.state_bytes - quarter, bounded),
            "cited": cited_text(cited, mine, quarter, ach_ran), **(extra(own) if extra else {})}))
    with Meter(stage, cfg.progress, run.say) as meter:
        calls = StageCalls(run, stage, spec, backend, meter)
        outs = calls.side_by_side([(lambda n=n, p=p: calls.call(n, p, schema, readable)) for n, p in enumerate(prompts, 1)])
        stage_run = calls.stage_run(mode, len(chunks), started, t0)
        evref = calls.evaluator_ref()
    return SideBySide(mode, chunks, outs, stage_run, evref, mine_of)


__all__ = ["SideBySide", "run_side_by_side", "check_label", "demote", "giver_cause", "misled_cause", "read_stage", "not_read",
           "targets_stage", "costing_of", "cited_by_achievement", "targets_text", "cited_text", "LEFT_OUT"]
