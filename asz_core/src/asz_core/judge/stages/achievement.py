"""The achievement stage: for each target, whether the record shows its criteria met, what the
outcome rests on, the agent's claims checked, deliveries and contradictions, rework, findings and
an account of what was done (spec: "Achievement" to "Findings"; docs/judge.md).

One call per target, each given the card, its target whole with the rows of its talks and its
own file operations, and the catalogue bounded by ``judge.state_bytes``; with ``judge.mode``
single, one call for every target. Calls run side by side, up to ``judge.concurrency``, merged in
the order of the targets. Each answer is held to the record by
:mod:`~asz_core.judge.stages.achievement_check`. A target cancelled or replaced is not judged; a
target whose call gave nothing readable twice stays in the stage's coverage, not judged.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import attrs
import orjson

from ...convert import unstructure
from ..chunks import Chunk, Item, plan_chunks
from .. import stage_files
from ..context import EvaluatorSpec, Meter, Run, StageCalls, naming, now, own_entries, readable_with
from ..evidence import asking_calls, for_run
from ..judgment import AchievementHeader, Check, StageFile, check_notes, Target, TargetAchievement
from ..kit import render
from ..stage_files import StageRead
from .achievement_check import TargetCheck
from .targets import bounded_catalogue

STAGE = "achievement"
JUDGED_STATES = ("open", "closed")


def prior_targets(run: Run) -> StageRead:
    """The targets stage's file of this run, read by :mod:`..stage_files` (used when usable)."""
    return stage_files.of_run(run, "targets")


def _dump(o: Any) -> bytes:
    return orjson.dumps(o)


def items_of(run: Run, targets: Sequence[Target], own_ops: dict[str, tuple[str, ...]], nav: Any) -> list[Item]:
    """Per target its rows as the tools show them: the target whole, its talks (as ``talks``
    shows them) and its own file operations (as ``operations`` shows them)."""
    ops = {r["id"]: r for r in nav.operation_rows()}
    out = []
    for t in targets:
        rows = [_dump(unstructure(t))]
        ids = [t.id]
        for k in t.talks:
            r = nav.talk_row(k)
            if r is not None:
                rows.append(_dump(r))
                ids.append(k)
        for o in own_ops.get(t.id, ()):
            if o in ops:
                rows.append(_dump(ops[o]))
                ids.append(o)
        out.append(Item(t.id, tuple(rows), tuple(ids)))
    return out


def call_note(chunk: Chunk, mode: str, total: int) -> str:
    ids = list(chunk.items)
    if mode == "single":
        s = f"This is the only call of this stage: judge every target listed below ({', '.join(ids)})."
    else:
        s = (f"This call judges {ids[0]} alone (one call per target; {total} in this stage). The other targets are "
             "in the catalogue for context: answer only for yours.")
    for item, count, a, b in chunk.past:
        s += (f"\n\nTarget {item} has more rows than fit one call: {count} of them ({a} to {b}) are past this call's "
              "limit and not listed. Read them with talks(item=…) and operations.")
    return s


readable = readable_with("targets")


def received_work(run: Run, targets: Sequence[Target], inputs: Sequence[Any]) -> dict[str, frozenset[str]]:
    """Per target, the steps of the work it received, as cost per target gives calls to targets
    (a talk two targets share cut at its inputs; a sub-agent's calls where the step that began its
    chain is): each model call it received and each step such a call asked for
    (:func:`..evidence.asking_calls`); a step no model call asked for belongs to the targets of its
    talk. A target's own operations, and its rounds of rework, are in this work alone."""
    from ...ledger import build
    from ..target_cost import cost_per_target

    w = run.window
    costing = cost_per_target(w, build(w.conv, run.prices), targets, inputs)
    out: dict[str, set[str]] = {t.id: set() for t in targets}
    asked = asking_calls(w.conv.steps)
    for s in w.conv.steps:
        if s.id not in w.steps:
            continue
        call = s.id if s.kind == "model_call" else asked.get(s.id)
        got = costing.of_call.get(call, ()) if call is not None else costing.talk_targets(w.roots, s)
        for tid in got:
            if tid in out:
                out[tid].add(s.id)
    return {k: frozenset(v) for k, v in out.items()}


def own_operations(op_rows: Sequence[dict[str, Any]], received: dict[str, frozenset[str]]) -> dict[str, tuple[str, ...]]:
    """Per target, its own file operations: those of the work it received (:func:`received_work`)."""
    return {tid: tuple(r["id"] for r in op_rows if r.get("step") in mine) for tid, mine in received.items()}


def run_achievement(run: Run, spec: EvaluatorSpec, backend: Any) -> StageFile:
    from ...navigation import Navigator

    t0, started = time.monotonic(), now()
    cfg = run.cfg.judge
    got = prior_targets(run)
    if not got.usable:
        unread = got.not_read_note()
        return run.stage_file(STAGE, "skipped", f"no target to judge: {got.not_used_note()}", note=(unread,) if unread else ())
    prior = got.record
    targets = list(prior.targets)
    ev = for_run(run.window, run.store, targets, prior.inputs)
    nav = Navigator(run.window, run.store, budget=10**12, run_dir=run.path, prices=run.prices, adapter=run.adapter)
    op_rows = nav.operation_rows()
    op_step = {r["id"]: r.get("step") for r in op_rows}
    judged = [t for t in targets if t.state in JUDGED_STATES]
    received = received_work(run, targets, prior.inputs)
    own = own_operations(op_rows, received)
    items = items_of(run, judged, own, nav)
    if cfg.mode == "single":
        mode, chunks = plan_chunks(items, cfg) if items else ("none", [])
    else:
        one = attrs.evolve(cfg, mode="stream")
        mode, chunks = ("stream" if items else "none"), [plan_chunks([it], one)[1][0] for it in items]
    kit = run.kit
    template, schema = kit.template(STAGE), kit.schema(STAGE)
    card = run.card() if chunks else ""
    whole = [unstructure(t) for t in targets]

    def job(n: int, chunk: Chunk) -> Any:
        # The call's own targets are whole above; the others are context, shortened (spec: "A call
        # is given only its own targets"), within judge.state_bytes.
        others = [t for t in whole if t["id"] not in chunk.items]
        catalogue = bounded_catalogue(others, cfg.state_bytes, shortened=True) if others else "(no other target)"
        prompt = render(template, {"budget": f"{cfg.read_bytes:,}", "card": card,
                                   "call_note": call_note(chunk, mode, len(chunks)),
                                   "own": "\n".join(b.decode() for b in chunk.rows), "catalogue": catalogue})
        return lambda: calls.call(n, prompt, schema, readable)

    with Meter(STAGE, cfg.progress, run.say) as meter:
        calls = StageCalls(run, STAGE, spec, backend, meter)
        outcomes = calls.side_by_side([job(n, c) for n, c in enumerate(chunks, 1)])
        stage_run = calls.stage_run(mode, len(chunks), started, t0)
        evaluator = calls.evaluator_ref()

    checks: list[Check] = []
    results: dict[str, TargetAchievement] = {}
    findings = 0

    def next_finding() -> str:
        nonlocal findings
        findings += 1
        return f"f{findings}"

    by_id = {t.id: t for t in judged}
    failed_calls = 0
    for n, (chunk, out) in enumerate(zip(chunks, outcomes), 1):
        mine = list(chunk.items)
        if not out.ok:
            failed_calls += 1
            for tid in mine:
                results[tid] = TargetAchievement(tid, False, f"its call ({n}) gave nothing readable twice: {out.error}", n)
            checks.append(Check("left_out", f"call {n}", f"gave nothing readable twice ({out.error}): "
                                                         f"{', '.join(mine)} not judged"))
            continue
        entries = own_entries(out.answer["targets"], naming("target"), mine, {t.id for t in targets}, "target", n, checks)
        for tid in mine:
            tc = TargetCheck(ev, by_id[tid], own.get(tid, ()), op_step, next_finding, received.get(tid))
            results[tid] = tc.run(entries.get(tid), n)
            checks.extend(tc.checks)

    rows = []
    not_judged: dict[str, int] = {}
    for t in targets:
        if t.id in results:
            rows.append(results[t.id])
            if not results[t.id].judged:
                not_judged["call failed"] = not_judged.get("call failed", 0) + 1
        else:
            why = f"{t.state} by the person" + (f" (replaced by {t.replaced_by})" if t.replaced_by else "")
            rows.append(TargetAchievement(t.id, False, f"not judged: {why}"))
            not_judged[t.state] = not_judged.get(t.state, 0) + 1
    levels: dict[str, int] = {}
    for r in rows:
        if r.judged and r.level:
            levels[r.level] = levels.get(r.level, 0) + 1
    header = AchievementHeader(targets=len(targets), judged=sum(1 for r in rows if r.judged), levels=levels,
                               not_judged=not_judged)
    note = check_notes(checks)
    ref = kit.ref(STAGE)
    if chunks and failed_calls == len(chunks):
        return run.stage_file(STAGE, "failed", f"every call gave nothing readable twice ({len(chunks)} calls): no target "
                              "was judged", note=note, kit=ref, evaluator=evaluator, run=stage_run, checks=tuple(checks),
                              header=header, achievement=tuple(rows))
    return run.stage_file(STAGE, "partial" if checks else "complete", None, note=note, kit=ref, evaluator=evaluator,
                          run=stage_run, checks=tuple(checks), header=header, achievement=tuple(rows))


__all__ = ["run_achievement", "prior_targets"]
