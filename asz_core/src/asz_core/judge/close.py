"""The close: the final statement, computed (no evaluator) from the record at the run's head, its
price file and its stage files alone (docs/close.md).

Same head + price file + stage files give the same statement byte for byte: nothing here reads
a clock, a random number or the machine, and every sum is exact (``Fraction``) until it is
written, rounded once. A stage that is missing, failed, skipped or unreadable (its file read by
:mod:`.stage_files`, the one policy) is read for what it is: with no achievement every
criterion is unknown (levels unverified, scores null), with no efficiency and sub-task labels
every cost is not reviewed (efficiency unknown), and ``basis`` says so per stage.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import orjson
from attrs import frozen

from ..assembly import work_order
from ..errors import AszError
from ..records import USAGE_TYPES, Usage
from ..regular import read_below
from . import outcomes, stage_files
from .source_outcomes import SourceView
from .evidence import asking_calls
from .goal_outcome import frac, goal_statement
from . import statement as S



# --- exact sums -----------------------------------------------------------------------------------

class Acc:
    """An exact sum of call shares, rounded only when written. A share is 1/n of a call (the cut
    splits equally), so the sums are kept per n, in integers and Decimals, and made a Fraction
    once: exact, without a Fraction per call. Beside the money of the known counts, the lower
    bound: each priced call's ``CallPrice.at_least`` (its output floor priced, the ledger's)."""

    __slots__ = ("calls", "_tok", "_money", "_bound", "_odd", "unpriced", "unknown")

    def __init__(self) -> None:
        self.calls: set[str] = set()
        self._tok: dict[int, int] = {}
        self._money: dict[int, Decimal] = {}
        self._bound: dict[int, Decimal] = {}
        self._odd: list[tuple[Fraction, Fraction, Fraction]] = []  # (tokens, money, bound) of a share not 1/n
        self.unpriced: set[str] = set()
        self.unknown: set[str] = set()

    def add(self, c: Any, share: Fraction) -> None:
        self.calls.add(c.step)
        u = c.usage
        tok = (u.input or 0) + (u.output or 0) + (u.cache_read or 0) + (u.cache_write or 0)
        if u.input is None or u.output is None or u.cache_read is None or u.cache_write is None:
            self.unknown.add(c.step)
        self._add(c.step, tok, c.price, share)

    def _add(self, key: str, tok: int, p: Any, share: Fraction) -> None:
        m, b = p.money, p.at_least
        if m is None:
            self.unpriced.add(key)
            m = b = Decimal(0)
        if share.numerator == 1:
            n = share.denominator
            self._tok[n] = self._tok.get(n, 0) + tok
            self._money[n] = self._money.get(n, Decimal(0)) + m
            self._bound[n] = self._bound.get(n, Decimal(0)) + b
        else:
            self._odd.append((share * tok, share * Fraction(m), share * Fraction(b)))

    def merge(self, o: Acc) -> Acc:
        self.calls |= o.calls
        for n, v in o._tok.items():
            self._tok[n] = self._tok.get(n, 0) + v
        for mine, theirs in ((self._money, o._money), (self._bound, o._bound)):
            for n, d in theirs.items():
                mine[n] = mine.get(n, Decimal(0)) + d
        self._odd += o._odd
        self.unpriced |= o.unpriced
        self.unknown |= o.unknown
        return self

    @property
    def tokens(self) -> Fraction:
        return sum((Fraction(v, n) for n, v in self._tok.items()), Fraction(0)) + sum((t for t, _, _ in self._odd), Fraction(0))

    @property
    def money(self) -> Fraction:
        return (sum((Fraction(d) / n for n, d in self._money.items()), Fraction(0))
                + sum((m for _, m, _ in self._odd), Fraction(0)))

    @property
    def at_least(self) -> Fraction:
        """The lower bound of the money: the priced calls' known counts and output floors."""
        return (sum((Fraction(d) / n for n, d in self._bound.items()), Fraction(0))
                + sum((b for _, _, b in self._odd), Fraction(0)))

    def value(self, unit: str) -> Fraction:
        return self.money if unit == "money" else self.tokens

    def amount(self) -> S.Amount:
        whole = not self.unpriced and not self.unknown
        return S.Amount(calls=len(self.calls), tokens=round(self.tokens),
                        money=None if self.unpriced else money(self.money),
                        unpriced=len(self.unpriced), unknown=len(self.unknown),
                        at_least=None if whole else money(self.at_least))


def money(f: Fraction) -> Decimal:
    from .target_cost import decimal_of

    return decimal_of(f)


def score(f: Fraction | None, unit: str) -> S.Score:
    return S.Score(frac(f), None if f is None else Decimal(round(f * 10000)).scaleb(-4), unit)


# --- time -----------------------------------------------------------------------------------------

def parse_time(ts: str | None) -> dt.datetime | None:
    """A runtime's ISO 8601 time (``Z`` or an offset; none taken for UTC), or None."""
    if not ts:
        return None
    try:
        t = dt.datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=dt.UTC)


def union(spans: Iterable[tuple[str | None, str | None]]) -> tuple[float | None, tuple[S.Span, ...]]:
    """The union of time spans: overlapping spans count once. None when no span has both ends."""
    got = sorted((a, b, sa, sb) for sa, sb in spans if (a := parse_time(sa)) and (b := parse_time(sb)) and b >= a)
    if not got:
        return None, ()
    merged: list[list[Any]] = []
    for a, b, sa, sb in got:
        if merged and a <= merged[-1][1]:
            if b > merged[-1][1]:
                merged[-1][1], merged[-1][3] = b, sb
        else:
            merged.append([a, b, sa, sb])
    secs = sum((b - a).total_seconds() for a, b, _, _ in merged)
    return round(secs, 3), tuple(S.Span(sa, sb) for _, _, sa, sb in merged)


# --- reading the run ------------------------------------------------------------------------------

def read_stages(path: Path, run: dict[str, Any]) -> dict[str, stage_files.StageRead]:
    """Every stage's file of the run at ``path`` as :mod:`.stage_files` reads it, pinned to its
    run.json's JSON ``run`` (a file of another head is unreadable)."""
    return stage_files.read_all(path, stage_files.Pin.of_json(run))


def usable(stage: dict[str, Any] | None) -> bool:
    return bool(stage) and stage.get("status") in stage_files.USABLE


def _basis(read: dict[str, Any]) -> dict[str, str]:
    what = {"targets": "no targets, goals or shares", "achievement": "every criterion unknown: levels unverified",
            "subtasks": "sub-agents' work not reviewed", "efficiency": "costs not reviewed: efficiency unknown",
            "reference": "no source compared", "divergence": "no source's contradiction applied"}
    out = {}
    for s, consequence in what.items():
        r = read[s]
        out[s] = ("used" + (" (partial)" if r.status == "partial" else "")) if r.usable else f"{r.said}: {consequence}"
    return out


# --- who each call went to ---------------------------------------------------------------------------

class Attribution:
    """Each call of the window's priced work and the targets it went to, with exact shares: the
    cut of :func:`asz_core.judge.target_cost.cost_per_target` (a talk cut at its inputs, a sub-agent's
    calls where the main step that began its chain is), read as shares per call."""

    def __init__(self, w: Any, led: Any, stage: Any) -> None:
        from .target_cost import cost_per_target

        targets, inputs = (stage.targets, stage.inputs) if stage is not None else ((), ())
        self.costing = cost_per_target(w, led, targets, inputs)
        of_call = self.costing.of_call
        self.shares: dict[str, dict[str, Fraction]] = {
            s: {t: Fraction(1, len(to)) for t in to} for s, to in of_call.items() if to}
        self.why = {x.call: x.why for x in self.costing.record.shared}
        self.talks = {r.target: r.talks for r in self.costing.record.targets}
        self.window_calls = [c for c in led.calls if c.step in of_call]


# --- the statement --------------------------------------------------------------------------------

def _achievement(stage: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """Per target, what the achievement stage kept (its ``achievement`` entries, judgment.py's
    ``TargetAchievement``), in the words :mod:`.outcomes` reads: criterion states and citations,
    level, basis, events, the contradictions and undoings, rework rounds. Empty when the stage
    did not run or failed; a target it did not judge has no entry, so its criteria are unknown."""
    if not usable(stage):
        return {}
    out: dict[str, dict[str, Any]] = {}
    for t in stage.get("achievement", []) or []:  # type: ignore[union-attr]
        if not isinstance(t, dict) or not t.get("target") or t.get("judged") is False:
            continue
        out[t["target"]] = {
            "level": t.get("level"), "basis": t.get("basis"),
            "criteria": [{"id": c.get("id"), "state": c.get("state"), "citations": list(c.get("cites") or ()),
                          "shown_by": list(c.get("shown_by") or ()), "reason": c.get("reason")}
                         for c in t.get("criteria", []) if isinstance(c, dict)],
            "events": [{"id": e.get("id"), "kind": e.get("event"), "step": e.get("at"), "corrects": list(e.get("corrects") or ()),
                        "criteria": list(e.get("criteria") or ()), "deliveries": list(e.get("deliveries") or ())}
                       for e in t.get("events", []) if isinstance(e, dict)],
            "contradictions": [{"id": f"{x.get('delivery')}.x{n}", "delivery": x.get("delivery"),
                                "criteria": [] if x.get("disproves") == "conclusion" else list(x.get("criteria") or ()),
                                "citations": list(x.get("cites") or ())}
                               for n, x in enumerate((x for x in t.get("contradictions", []) if isinstance(x, dict)), 1)],
            "rework": [{"id": r.get("id"), "trigger": r.get("trigger_step") or r.get("start"), "trigger_kind": r.get("trigger"),
                        "cause": r.get("cause"), "last_step": r.get("end")}
                       for r in t.get("rework", []) if isinstance(r, dict)],
        }
    return out


def stage_findings(stage: dict[str, Any] | None) -> list[dict[str, Any]]:
    """A stage's own findings (``anchor``/``at``, ``what``): the achievement stage keeps them per
    target, the efficiency stage beside its labels."""
    if not usable(stage):
        return []
    got = [f for t in stage.get("achievement", []) or [] if isinstance(t, dict)  # type: ignore[union-attr]
           for f in t.get("findings", []) or [] if isinstance(f, dict)]
    got += [f for f in stage.get("findings", []) or [] if isinstance(f, dict)]  # type: ignore[union-attr]
    return [{**f, "anchor": f.get("anchor") or f.get("at")} for f in got]


def _labels(stages: dict[str, dict[str, Any]]) -> dict[str, tuple[str, str | None]]:
    """Call step -> (label, cause of avoidable work) from the sub-task and efficiency stages'
    ``calls`` rows (judgment.py's ``CallLabel``), a sub-task's own label first; a call no row
    labels is not reviewed."""
    out: dict[str, tuple[str, str | None]] = {}
    for s in ("subtasks", "efficiency"):  # a sub-task's own label first
        sf = stages.get(s)
        if not usable(sf):
            continue
        for row in sf.get("calls", []) or []:  # type: ignore[union-attr]
            if isinstance(row, dict) and row.get("step") and row.get("label"):
                out.setdefault(row["step"], (row["label"], row.get("cause")))
    return out


@frozen
class View:
    """What a closed run is computed from: run.json, the stage files, the window at its head and
    the ledger priced with its price file."""

    run: dict[str, Any]
    read: dict[str, Any]
    """Every stage's file as :mod:`.stage_files` reads it (:class:`~.stage_files.StageRead`)."""
    window: Any
    ledger: Any
    prices: Any

    @property
    def stages(self) -> dict[str, dict[str, Any]]:
        """The JSON of each stage file that reads (whatever its status)."""
        return json_of(self.read)


def json_of(read: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s: r.data for s, r in read.items() if r.data is not None}


def load_view(path: Path, store: Any) -> View:
    """The run at ``path`` as its close reads it; an error when the store's head or the price
    file is not the one the run judged."""
    from .. import ledger, window as windows
    from .run_files import run_json

    run = run_json(path)
    w = windows.build(store, run["conversation"], run["head"], run["window"])
    if w.round.head != run["head_digest"]:
        raise AszError(f"{path}: the store's {run['head']} is {w.round.head[:12]}, the run judged {run['head_digest'][:12]}")
    prices = ledger.load_prices(run["prices"].get("path"))
    if prices.file.sha256 != run["prices"]["sha256"]:
        raise AszError(f"{path}: the price file {prices.file.path} changed since the run (SHA-256 "
                       f"{prices.file.sha256[:12]}, the run used {run['prices']['sha256'][:12]})")
    return View(run, read_stages(path, run), w, ledger.build(w.conv, prices), prices)


def compute(path: Path, store: Any, registry: Any = None, view: View | None = None) -> S.Statement:
    """The final statement of the run at ``path``, from its run.json, its stage files, the store
    at its head and its price file."""
    from .. import operations, window as windows

    v = view or load_view(path, store)
    stages, w, led, prices = v.stages, v.window, v.ledger, v.prices
    conv = w.conv
    notes: list[str] = []
    ts = stages.get("targets")
    targets = list(ts.get("targets", [])) if usable(ts) else []  # type: ignore[union-attr]
    inputs = list(ts.get("inputs", [])) if usable(ts) else []  # type: ignore[union-attr]
    goals = list(ts.get("goals", [])) if usable(ts) else []  # type: ignore[union-attr]
    att = Attribution(w, led, v.read["targets"].record if v.read["targets"].usable else None)
    ach = _achievement(stages.get("achievement"))
    judged_ach = usable(stages.get("achievement"))  # without it no score was measured: None, not 0
    labels = _labels(stages)
    reviewed_any = bool(labels)
    calls = {c.step: c for c in att.window_calls}
    step_of_input = {s.input: s.id for s in conv.steps if s.kind == "input" and s.input}

    def label_of(step: str) -> tuple[str, str | None]:
        return labels.get(step, (S.NOT_REVIEWED, None))

    def acc_of(items: Iterable[tuple[str, Fraction]]) -> Acc:
        a = Acc()
        for sid, sh in items:
            a.add(calls[sid], sh)
        return a

    per_target: dict[str, list[tuple[str, Fraction]]] = {t["id"]: [] for t in targets}
    for sid, sh in att.shares.items():
        for t, f in sh.items():
            per_target[t].append((sid, f))

    ops = [o for o in operations.of_conversation(conv, registry)
           if (o.step and w.shows_step(o.step)) and o.talk is not None]

    op_shares = operation_shares(ops, asking_calls(conv.steps), att.shares,
                                 lambda o: att.costing.talk_targets(w.roots, conv.step(o.step)))

    ops_of: dict[str, list[Any]] = {}  # each target's operations, in landing order
    for o in ops:
        for tid in op_shares.get(o.id, {}):
            ops_of.setdefault(tid, []).append(o)
    corrected: dict[str, list[str]] = {}  # the person's inputs that corrected each target, in order
    for r in inputs:
        for tid in dict.fromkeys(x.get("target") for x in r.get("actions", []) if x.get("action") == "correct"):
            if tid:
                corrected.setdefault(tid, []).append(r["input"])
    findings: list[tuple[int, int, dict[str, Any]]] = []  # (anchor seq, order, fields)

    def seq_of(step: str | None) -> int:
        try:
            return conv.step(step).seq if step else 1 << 62
        except (IndexError, ValueError):
            return 1 << 62

    happened = work_order(conv)

    def place_of(step: str | None) -> tuple[int, ...]:
        """When a step happened in the target's work (a sub-task's step where its starting step
        is): the order a round of rework runs in, as the achievement stage kept it."""
        try:
            return happened(step) if step else (1 << 62,)
        except (IndexError, ValueError):
            return (1 << 62,)

    src = SourceView(path, stages)
    outs: list[S.TargetStatement] = []
    weights: dict[str, Acc] = {}
    finals: dict[str, Fraction] = {}
    classes: dict[str, str] = {}
    t_findings: dict[str, list[int]] = {}
    for t in targets:
        tid = t["id"]
        a = ach.get(tid, {})
        mine = per_target[tid]
        total = acc_of(mine)
        weights[tid] = total
        by_label: dict[str, Acc] = {}
        by_cause: dict[str, Acc] = {c: Acc() for c in S.CAUSES}
        subagents = Acc()
        for sid, sh in mine:
            lab, cause = label_of(sid)
            by_label.setdefault(lab, Acc()).add(calls[sid], sh)
            if lab in S.AVOIDABLE:
                by_cause[cause if cause in S.CAUSES else "unknown"].add(calls[sid], sh)
            if calls[sid].stream != "m":
                subagents.add(calls[sid], sh)
        avoid = Acc()
        for lab in S.AVOIDABLE:
            if lab in by_label:
                avoid.merge(by_label[lab])
        costs = S.Costs(total=total.amount(), by_label={k: by_label[k].amount() for k in sorted(by_label)},
                        avoidable=avoid.amount(), avoidable_by_cause={k: v.amount() for k, v in by_cause.items()},
                        not_reviewed=(by_label.get(S.NOT_REVIEWED) or Acc()).amount(), subagents=subagents.amount())
        # Times: its talks with their child agents; avoidable runs of the main stream.
        talks = list(att.talks.get(tid, ()))
        spans = []
        for k in talks:
            kt = conv.talk(k)
            spans.append((kt.start, kt.end))
            for sid in windows.descendants(conv, w.roots, [k]):
                for ck in conv.stream(sid).talks:
                    spans.append((conv.talk(ck).start, conv.talk(ck).end))
        obs_secs, obs = union(spans)
        av_secs, av = (union(_avoidable_runs(conv, talks, set(s for s, _ in mine), label_of)) if reviewed_any
                       else (None, ()))
        if reviewed_any and av_secs is None:
            av_secs = 0.0
        times = S.Times(obs_secs, obs, av_secs, av)
        a_with = src.with_sources(tid, a, seq_of)  # the sources' contradictions and rollbacks that apply
        j = outcomes.judge_target(t, a_with, seq_of)
        if a_with is not a:
            src.note_change(tid, outcomes.judge_target(t, a, seq_of), j, tid in ach)
        crit, contra, undone = list(j.criteria), j.contradictions, j.undoings
        fin, level, basis = j.final, j.level, j.basis
        judged = tid in ach  # a target the stage did not judge (its call failed twice) has no score, never 0
        klass = S.NOT_JUDGED if outcomes.unjudged(judged_ach, judged, t.get("state")) else j.class_
        classes[tid] = klass
        if judged:
            finals[tid] = fin
        # Rework rounds and their cost, each call counted once across rounds.
        rounds, seen = [], Acc()
        mine_by_step = dict(mine)
        order = sorted(mine_by_step, key=place_of)
        counted: set[str] = set()
        for r in a.get("rework", []) or []:
            if not isinstance(r, dict) or not r.get("id"):
                continue
            # from its trigger to the last step of its redo, in the order the work happened
            lo, hi = place_of(r.get("trigger")), place_of(r.get("last_step"))
            inside = [s for s in order if lo <= place_of(s) <= hi and s not in counted]
            counted.update(inside)
            ra, rl = Acc(), {}
            for s in inside:
                ra.add(calls[s], mine_by_step[s])
                rl.setdefault(label_of(s)[0], Acc()).add(calls[s], mine_by_step[s])
            seen.merge(ra)
            rounds.append(S.Round(r["id"], r.get("trigger"), r.get("trigger_kind"), r.get("cause"), r.get("last_step"),
                                  ra.amount(), {k: v.amount() for k, v in sorted(rl.items())}))
        outcome = S.Outcome(level=level, basis=basis, met=j.met, unknown=j.unknown, live=len(crit),
                            record_score=frac(j.record) if judged else None, final_score=frac(fin) if judged else None,
                            applied=tuple(x.get("id", "") for x in [*contra, *undone]), class_=klass,
                            rework=tuple(rounds), rework_cost=seen.amount(), judged=judged)
        corrections = tuple(corrected.get(tid, ()))
        mine_f = outcomes.findings_of(tid, t.get("state") not in S.APART, j, rounds, corrections, step_of_input)
        t_findings[tid] = []
        for anchor, o, f in mine_f:
            t_findings[tid].append(len(findings))
            findings.append((seq_of(anchor), o, {**f, "anchor": anchor}))
        fops = tuple(S.FileOp(o.id, o.path, o.shows, o.status, o.step, frac(op_shares[o.id][tid]))  # type: ignore[arg-type]
                     for o in ops_of.get(tid, ()))
        outs.append(S.TargetStatement(
            id=tid, statement=t.get("statement", ""), goal=t.get("goal"), state=t.get("state", "open"),
            replaced_by=t.get("replaced_by"), talks=tuple(talks), criteria=tuple(crit), outcome=outcome, cost=costs,
            times=times, shares=tuple(S.Share(sid, tuple(sorted(att.shares[sid])), frac(sh), att.why[sid])  # type: ignore[arg-type]
                                      for sid, sh in sorted(mine, key=lambda x: seq_of(x[0])) if sid in att.why),
            corrections=corrections, operations=fops, findings=()))
    # Findings get ids in recorded order of their anchors.
    order = sorted(range(len(findings)), key=lambda i: (findings[i][0], findings[i][1], i))
    fid = {i: f"f{n}" for n, i in enumerate(order, 1)}
    all_f = tuple(S.Finding(id=fid[i], **findings[i][2]) for i in order)
    outs = [_with_findings(x, tuple(fid[i] for i in sorted(t_findings[x.id], key=order.index))) for x in outs]
    # Goals.
    by_id = {x.id: x for x in outs}
    state = {x.id: x.state for x in outs}
    fids = {m: [fid[i] for i in t_findings[m]] for m in by_id}
    gouts = [goal_statement(g["id"], g.get("members", []), g.get("main_target"), state, classes, finals, fids, judged_ach)
             for g in goals]
    # The run's scores, from each call's exact share.
    target_calls = {sid for sid in att.shares}
    unit = "money" if target_calls and all(calls[s].price.money is not None for s in target_calls) else "tokens"
    # A target still wanted that the achievement stage did not judge is left out of the run's
    # scores; the part of the wanted targets' cost the scores cover is said beside them.
    wanted = [x.id for x in outs if x.state not in S.APART]
    scored = [t for t in wanted if t in finals]
    unjudged = [t for t in wanted if t not in finals]
    wsum = sum((weights[t].value(unit) for t in scored), Fraction(0))
    ach_score = sum((weights[t].value(unit) * finals[t] for t in scored), Fraction(0)) / wsum if wsum else None
    wanted_sum = sum((weights[t].value(unit) for t in wanted), Fraction(0))
    judged_part = wsum / wanted_sum if wanted_sum else None
    not_judged = Acc()
    for t in unjudged:
        not_judged.merge(acc_of(per_target[t]))
    every = Acc()
    for sid in target_calls:
        every.add(calls[sid], Fraction(1))
    reviewed = Acc()
    avoidable = Acc()
    for sid in target_calls:
        lab = label_of(sid)[0]
        if lab != S.NOT_REVIEWED:
            reviewed.add(calls[sid], Fraction(1))
        if lab in S.AVOIDABLE:
            avoidable.add(calls[sid], Fraction(1))
    tot = every.value(unit)
    rv = reviewed.value(unit)
    eff = 1 - avoidable.value(unit) / rv if rv else None
    cov = rv / tot if tot else None
    achieved = [x.id for x in outs if classes[x.id] == "achieved"]
    allsum = sum((weights[t].value(unit) for t in weights if t not in unjudged), Fraction(0))
    dlv = sum((weights[t].value(unit) for t in achieved), Fraction(0)) / allsum if allsum and judged_ach else None
    scores = S.RunScores(score(ach_score, unit), score(eff, unit), score(cov, unit), score(dlv, unit),
                         score(judged_part, unit))
    unassigned = Acc()
    for c in att.window_calls:
        if c.step not in att.shares:
            unassigned.add(c, Fraction(1))
    conversation = Acc()
    for c in att.window_calls:
        conversation.add(c, Fraction(1))
    if not targets:
        notes.append("no target: every cost of the window is unassigned")
    return S.Statement(
        basis=_basis(v.read), scores=scores, targets=tuple(outs), goals=tuple(gouts), findings=all_f,
        not_judged=not_judged.amount(), unassigned=unassigned.amount(), unassigned_operations=tuple(o.id for o in ops if o.id not in op_shares),
        judging=_judging(path, stages, prices, conversation.amount()), notes=tuple(notes), sources=src.statement())


def operation_shares(ops: Iterable[Any], asked_by: dict[str, str | None], shares: dict[str, dict[str, Fraction]],
                     talk_targets: Any) -> dict[str, dict[str, Fraction]]:
    """Operation id -> the targets whose calls made it, each with its exact share: the share of
    the call that asked for its step (spec: "those of the calls the target received, with its
    share when a call was shared"); a step no model call asked for belongs to the targets of its
    talk (``talk_targets(op)``), split equally. An operation of a call no target received is in
    none: it is listed for the conversation."""
    out: dict[str, dict[str, Fraction]] = {}
    for o in ops:
        call = asked_by.get(o.step)
        if call is not None:
            if call in shares:
                out[o.id] = shares[call]
        elif mine := talk_targets(o):
            out[o.id] = {t: Fraction(1, len(mine)) for t in mine}
    return out


def _with_findings(x: S.TargetStatement, f: tuple[str, ...]) -> S.TargetStatement:
    import attrs

    return attrs.evolve(x, findings=f)


def _avoidable_runs(conv: Any, talks: list[str], mine: set[str], label_of: Any) -> list[tuple[str | None, str | None]]:
    """Spans of the main stream's avoidable work in ``talks``: a run of avoidable calls lasts from
    its first call to the talk's next call, or to the talk's end."""
    out = []
    for k in talks:
        kt = conv.talk(k)
        main_calls = [conv.step(s) for s in kt.steps if conv.step(s).kind == "model_call"]
        start = None
        for c in main_calls:
            bad = c.id in mine and label_of(c.id)[0] in S.AVOIDABLE
            if bad and start is None:
                start = c.ts
            elif not bad and start is not None:
                out.append((start, c.ts))
                start = None
        if start is not None:
            out.append((start, kt.end))
    return out


def _judging(path: Path, stages: dict[str, dict[str, Any]], prices: Any, conversation: S.Amount) -> S.Judging:
    """What each evaluator stage consumed, request by request from requests.jsonl, priced where
    the price file lists the request's model (at the stage's start)."""
    per: dict[str, S.Amount] = {}
    whole = _ReqAcc()
    for name, sf in stages.items():
        r = sf.get("run") or {}
        if not r.get("attempts"):
            continue
        a = _ReqAcc()
        for att in r.get("attempt_log", []):
            try:  # the run's own file: from its folder down, no link followed, nothing but a regular file
                lines = read_below(path, Path(str(att["directory"])) / "requests.jsonl").splitlines()
            except OSError:
                lines = []
            for n, line in enumerate(lines):
                try:
                    q = orjson.loads(line)
                except orjson.JSONDecodeError:
                    a.unknown.add(f"{att['directory']}:{n}")
                    continue
                a.add_request(f"{att['directory']}:{n}", q, prices, r.get("started"))
            if not lines and att.get("consumed", {}).get("requests"):
                a.unknown.add(att["directory"])
        per[name] = a.amount()
        whole.merge(a)
    return S.Judging(per, whole.amount(), conversation)


class _ReqAcc(Acc):
    """Evaluator requests (each whole), priced one by one."""

    def add_request(self, key: str, q: dict[str, Any], prices: Any, ts: str | None) -> None:
        self.calls.add(key)
        if not q.get("said", True):
            self.unknown.add(key)
            self.unpriced.add(key)
            return
        u = Usage(**{k: q.get(k) for k in USAGE_TYPES})
        if any(getattr(u, k) is None for k in USAGE_TYPES):
            self.unknown.add(key)
        self._add(key, sum(getattr(u, k) or 0 for k in USAGE_TYPES), prices.price(q.get("model"), u, ts), Fraction(1))


def close_file(path: Path, store: Any, registry: Any = None, view: View | None = None) -> Any:
    """close.json of the run at ``path``: how its stages ran, what they consumed, and the final
    statement; a function of run.json, the stage files, the store at the head and the price file
    only (the run's end is its last stage's end, never the clock)."""
    from .judgment import VERSION, CloseFile
    from .run_files import run_json

    run = view.run if view is not None else run_json(path)
    read = view.read if view is not None else read_stages(path, run)
    stages = json_of(read)
    total = stage_files.consumed(read.values())
    eval_secs = round(sum(float((sf.get("run") or {}).get("seconds") or 0) for sf in stages.values()), 3)
    ends = [e for sf in stages.values() if (e := (sf.get("run") or {}).get("ended"))]
    ended = max([run["started"], *ends], key=lambda x: parse_time(x) or dt.datetime.min.replace(tzinfo=dt.UTC))
    a, b = parse_time(run["started"]), parse_time(ended)
    mins = max(eval_secs, 1e-9) / 60
    error = None
    try:
        st = compute(path, store, registry, view)
    except AszError as exc:
        st, error = None, str(exc)
    except Exception as exc:  # asz's own fault: the run still closes, and says so
        st, error = None, f"the final statement could not be computed: {type(exc).__name__}: {exc}"
    return CloseFile(version=VERSION, run=run["run"], ended=ended,
                     seconds=round((b - a).total_seconds(), 3) if a and b else 0.0, evaluator_seconds=eval_secs,
                     consumed=total, per_minute={k: round(getattr(total, k) / mins, 1) if eval_secs > 0 else 0.0
                                                 for k in USAGE_TYPES},
                     stages=stage_files.statuses(read), statement=st, error=error)
