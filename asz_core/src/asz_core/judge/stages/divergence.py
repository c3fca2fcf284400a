"""The divergence stage: the conversation against each conclusion the reference stage kept
(spec: "Judging against a source"; decisions.md section 11; docs/sources.md).

One call, given the conclusions, the targets with the inputs that set or changed each, their
delivery events and which deliveries stand at the end, and the sub-tasks the sub-task stage
found misled the agent. Per conclusion a verdict: consistent, contradicted, rolled_back,
not_observed or unknown. asz keeps, each with a check when it changes something:

* a verdict only for a conclusion kept, once; a conclusion no verdict answers is unknown;
* contradicted and rolled_back only naming a target the conclusion is about, through an input of
  its scope that set or changed the target (create, refine, steer, correct), a delivery event of
  that target, and citing a step that shows the delivery; contradicted also the criteria (the
  target's live ones) it shows not met, or the delivered conclusion; what does not hold is
  unknown. A delivery that no longer stands at the end is kept, and changes no score (the close
  says why);
* not_observed marked as the evaluator's judgment (absence, which the record cannot show);
* a cause of why the work went another way only for a conclusion contradicted or rolled back,
  at a step of the target's work, with the evidence its kind needs (a tool result for a
  misleading or misread one; a failed or unanswered tool step for missing context; a step before
  it for context not used; a sub-task the sub-task stage found misled the agent, started in the
  target's work before the step, for an untrue sub-task report); question_not_asked and
  premise_unchecked marked as judgment; with none supported, the cause is unavailable.
"""

from __future__ import annotations

import time
from typing import Any

import orjson

from ... import digits
from .. import stage_files
from ..context import EvaluatorSpec, Run, now, readable_with
from ..evidence import Evidence, for_run
from ..judgment import (DIVERGENCE_CAUSES, JUDGMENT_CAUSES, VERDICTS, Check, DivergenceCause, DivergenceHeader, StageFile,
                        Verdict, check_notes)
from ..kit import render
from ..labelling import targets_stage
from .reference import one_call

STAGE = "divergence"
CHANGING = frozenset({"create", "refine", "steer", "correct"})
"""Actions by which an input set or changed a target."""
DISPROVING = ("contradicted", "rolled_back")
readable = readable_with("verdicts")


class Facts:
    """What the checks read: the reference stage's conclusions, the targets stage's targets and
    input actions, the achievement stage's events and standing deliveries, the sub-task stage's
    misleading sub-tasks, and the rules of evidence over the window."""

    def __init__(self, run: Run) -> None:
        ref = stage_files.of_run(run, "reference")
        self.conclusions = {c["id"]: c for c in (ref.data.get("conclusions") or [])} if ref.usable else {}
        self.coverage = list(ref.data.get("sources") or []) if ref.usable else []
        catalogue, targets, inputs = targets_stage(run)
        self.targets = {t["id"]: t for t in catalogue}
        self.changed_by: dict[str, set[str]] = {}  # target -> inputs that set or changed it
        for j in inputs:
            for a in j.actions:
                if a.target and a.action in CHANGING:
                    self.changed_by.setdefault(a.target, set()).add(j.input)
        for t in targets:
            self.changed_by.setdefault(t.id, set()).add(t.created_by)
        ach = stage_files.of_run(run, "achievement")
        self.achievement = {a["target"]: a for a in (ach.data.get("achievement") or [])} if ach.usable else {}
        sub = stage_files.of_run(run, "subtasks")
        self.misleading = {d["stream"]: d for d in (sub.data.get("subtasks") or []) if d.get("misled")} if sub.usable else {}
        self.ev: Evidence = for_run(run.window, run.store, targets, inputs)
        self.seq = {s.id: s.seq for s in run.window.conv.steps}
        self.reference_note = ref.not_used_note()
        self.notes = [r.not_used_note() for r in (ref, stage_files.of_run(run, "targets"), ach) if not r.usable]

    def events(self, tid: str) -> dict[str, dict[str, Any]]:
        return {e["id"]: e for e in self.achievement.get(tid, {}).get("events") or [] if isinstance(e, dict) and e.get("id")}

    def standing(self, tid: str) -> list[str]:
        return list(self.achievement.get(tid, {}).get("standing") or [])

    def live_criteria(self, tid: str) -> list[str]:
        return [c["id"] for c in self.targets.get(tid, {}).get("criteria") or [] if not c.get("dropped")]

    def target_rows(self) -> list[dict[str, Any]]:
        """What the prompt gives of each target: its criteria, the inputs that set or changed it,
        its delivery events and which stand at the end."""
        out = []
        for tid, t in self.targets.items():
            evs = self.events(tid)
            out.append({"id": tid, "statement": t.get("statement"), "state": t.get("state"),
                        "criteria": [{"id": c["id"], "text": c.get("text")} for c in t.get("criteria") or [] if not c.get("dropped")],
                        "set_or_changed_by": sorted(self.changed_by.get(tid, ()), key=lambda i: digits.id_number(i, i[:1]) or 0),
                        "deliveries": [{"id": e["id"], "event": e.get("event"), "at": e.get("at"), "what": e.get("what")}
                                       for e in evs.values() if e.get("event") in ("delivered", "delivered_again")],
                        "standing_at_end": self.standing(tid)})
        return out


def run_divergence(run: Run, spec: EvaluatorSpec, backend: Any) -> StageFile:
    t0, started = time.monotonic(), now()
    facts = Facts(run)
    cov = facts.coverage
    unavailable = tuple(f"{c['source']}: comparison unavailable: {c.get('why')}" for c in cov if c.get("status") != "compared")
    if not facts.conclusions:
        why = "no conclusion to compare: " + (facts.reference_note or "the reference stage kept none")
        return run.stage_file(STAGE, "skipped", why, note=unavailable)
    misled = [{"subtask": a, "started_by": d.get("started_by"), "misled": d.get("misled"), "targets": d.get("targets")}
              for a, d in facts.misleading.items()]
    prompt = render(run.kit.template(STAGE), {
        "budget": f"{run.cfg.judge.read_bytes:,}", "card": run.card(),
        "call_note": "This is the only call of this stage: compare the conversation with every conclusion listed below.",
        "conclusions": "\n".join(orjson.dumps({k: c.get(k) for k in ("id", "source", "statement", "kind", "role", "support",
                                                                      "lines", "inputs", "superseded_by", "conflicts")}).decode()
                                 for c in facts.conclusions.values()),
        "targets": "\n".join(orjson.dumps(r).decode() for r in facts.target_rows()) or "(none)",
        "misled": "\n".join(orjson.dumps(m).decode() for m in misled) or "(none)"})
    out, stage_run, evref, ref = one_call(run, STAGE, spec, backend, prompt, readable, started, t0)
    if not out.ok:
        return run.stage_file(STAGE, "failed", f"the call gave nothing readable twice ({out.error})", note=unavailable,
                              kit=ref, evaluator=evref, run=stage_run, sources=tuple(_coverage(cov)))
    checks: list[Check] = []
    verdicts = keep_verdicts(out.answer["verdicts"], facts, checks)
    causes = keep_causes(out.answer.get("causes"), verdicts, facts, checks)
    counts: dict[str, int] = {}
    for v in verdicts:
        counts[v.verdict] = counts.get(v.verdict, 0) + 1
    header = DivergenceHeader(conclusions_compared=len(verdicts), verdicts=counts,
                              unavailable_sources=sum(1 for c in cov if c.get("status") != "compared"))
    note = unavailable + tuple(facts.notes) + check_notes(checks)
    status = "partial" if (checks or unavailable or facts.notes) else "complete"
    return run.stage_file(STAGE, status, None, note=note, kit=ref, evaluator=evref, run=stage_run, checks=tuple(checks),
                          header=header, sources=tuple(_coverage(cov)), verdicts=tuple(verdicts), causes=tuple(causes))


def _coverage(cov: list[dict[str, Any]]) -> list[Any]:
    from ..judgment import SourceCoverage

    return [SourceCoverage(c["source"], c["status"], c.get("why"), c.get("conclusions", 0)) for c in cov]


def _words(v: Any, limit: int = 2000) -> str | None:
    if not isinstance(v, str) or not v.strip():
        return None
    b = v.encode("utf-8", "replace")
    return v if len(b) <= limit else b[:limit].decode("utf-8", "ignore") + "…"


def _ids(v: Any) -> list[str]:
    return [x for x in v if isinstance(x, str) and x] if isinstance(v, list) else []


def keep_verdicts(entries: Any, facts: Facts, checks: list[Check]) -> list[Verdict]:
    """One verdict per conclusion kept, in the reference stage's order (see the module's docstring)."""
    given: dict[str, dict[str, Any]] = {}
    for n, e in enumerate(entries if isinstance(entries, list) else [], 1):
        cid = e.get("conclusion") if isinstance(e, dict) else None
        if not isinstance(cid, str) or cid not in facts.conclusions:
            checks.append(Check("left_out", cid if isinstance(cid, str) else f"verdict {n}",
                                "a verdict for no conclusion the reference stage kept"))
        elif cid in given:
            checks.append(Check("left_out", cid, "a second verdict for the same conclusion: the first is kept"))
        else:
            given[cid] = e
    out = []
    for cid, c in facts.conclusions.items():
        e = given.get(cid)
        if e is None:
            checks.append(Check("filled_in", cid, "no verdict answers it: unknown"))
            out.append(Verdict(cid, c["source"], "unknown", reason="no verdict answers it"))
            continue
        out.append(_verdict(cid, c, e, facts, checks))
    return out


def _verdict(cid: str, c: dict[str, Any], e: dict[str, Any], facts: Facts, checks: list[Check]) -> Verdict:
    v, why = e.get("verdict"), _words(e.get("why"))
    tid = e.get("target") if isinstance(e.get("target"), str) else None
    cites = tuple(dict.fromkeys(x.step for x in facts.ev.cites(e.get("cites")) if x.step))
    base = dict(conclusion=cid, source=c["source"], why=why)
    if v not in VERDICTS:
        checks.append(Check("changed", cid, f"verdict {v!r}, which is none of {', '.join(VERDICTS)}: unknown"))
        return Verdict(**base, verdict="unknown", given=v if isinstance(v, str) else None, reason=f"{v!r} is no verdict")
    if tid is not None and tid not in facts.targets:
        checks.append(Check("left_out", cid, f"target {tid!r}, which is no target of the targets stage"))
        tid = None
    if v == "not_observed":
        return Verdict(**base, verdict=v, target=tid, cites=cites, judgment=True)
    if v in ("consistent", "unknown"):
        return Verdict(**base, verdict=v, target=tid, cites=cites)
    why_not = _why_not_disproving(v, c, e, tid, facts)
    if why_not is not None:
        checks.append(Check("changed", cid, f"{v}: {why_not}: unknown"))
        return Verdict(**base, verdict="unknown", target=tid, given=v, reason=why_not, cites=cites)
    ev = facts.events(tid)[e["delivery"]]  # type: ignore[index]
    crit = [x for x in _ids(e.get("criteria")) if x in facts.live_criteria(tid)]  # type: ignore[arg-type]
    disproves = e.get("disproves") if v == "contradicted" else ("criteria" if crit else None)
    return Verdict(**base, verdict=v, target=tid, input=e["input"], delivery=ev["id"], disproves=disproves,
                   criteria=tuple(dict.fromkeys(crit)) if disproves == "criteria" or v == "rolled_back" else (), cites=cites)


def _why_not_disproving(v: str, c: dict[str, Any], e: dict[str, Any], tid: str | None, facts: Facts) -> str | None:
    """Why a contradiction or a rollback does not hold, or None when it does."""
    if tid is None:
        return "it names no target"
    scope = set(c.get("inputs") or ())
    if not scope:
        return "the conclusion is about no input of the conversation"
    inp = e.get("input")
    if inp not in scope:
        return f"input {inp!r} is not of the conclusion's scope ({', '.join(sorted(scope))})"
    if inp not in facts.changed_by.get(tid, set()):
        return f"{inp} did not set or change {tid} (the targets stage gives it no create, refine, steer or correct of it)"
    evs = facts.events(tid)
    d = evs.get(e.get("delivery")) if isinstance(e.get("delivery"), str) else None
    if d is None or d.get("event") not in ("delivered", "delivered_again"):
        return f"{e.get('delivery')!r} is no delivery event of {tid}"
    shown = {d.get("at"), *(d.get("cites") or ())}
    cited = {x.step for x in facts.ev.cites(e.get("cites")) if x.step}
    if not cited & shown:
        return f"it cites no step that shows the delivery {d['id']} ({', '.join(sorted(s for s in shown if s))})"
    if v == "contradicted":
        dis = e.get("disproves")
        if dis not in ("conclusion", "criteria"):
            return f"disproves {dis!r}: it must be the delivered conclusion or criteria"
        if dis == "criteria":
            named = _ids(e.get("criteria"))
            live = facts.live_criteria(tid)
            if not any(x in live for x in named):
                return f"it names no live criterion of {tid} ({', '.join(named) or 'none'})"
    return None


def keep_causes(entries: Any, verdicts: list[Verdict], facts: Facts, checks: list[Check]) -> list[DivergenceCause]:
    """The causes kept (see the module's docstring); each conclusion contradicted or rolled back
    that no cause holds for gets one, unavailable."""
    by = {v.conclusion: v for v in verdicts}
    out: list[DivergenceCause] = []
    for n, e in enumerate(entries if isinstance(entries, list) else [], 1):
        cid = e.get("conclusion") if isinstance(e, dict) else None
        v = by.get(cid) if isinstance(cid, str) else None
        if v is None or v.verdict not in DISPROVING:
            checks.append(Check("left_out", cid if isinstance(cid, str) else f"cause {n}",
                                "a cause for no conclusion kept as contradicted or rolled back"))
            continue
        out.append(_cause(v, e, facts, checks))
    for v in verdicts:
        if v.verdict in DISPROVING and not any(c.conclusion == v.conclusion and c.cause != "unavailable" for c in out):
            if not any(c.conclusion == v.conclusion for c in out):
                out.append(DivergenceCause(v.conclusion, v.target, "unavailable", reason="no cause was given"))
    return out


def _cause(v: Verdict, e: dict[str, Any], facts: Facts, checks: list[Check]) -> DivergenceCause:
    kind, tid, why = e.get("cause"), v.target, _words(e.get("why"))
    at = facts.ev.cite(e.get("at"))
    cites = facts.ev.cites(e.get("cites"))
    base = dict(conclusion=v.conclusion, target=tid, why=why)

    def unavailable(reason: str) -> DivergenceCause:
        named = kind if kind in DIVERGENCE_CAUSES else repr(kind)
        checks.append(Check("changed", v.conclusion, f"cause {named}: {reason}: unavailable"))
        return DivergenceCause(**base, cause="unavailable", at=at.step, cites=tuple(c.step for c in cites if c.step),
                               given=kind if isinstance(kind, str) else None, reason=reason)

    if kind not in DIVERGENCE_CAUSES:
        return unavailable(f"{kind!r} is none of the causes")
    if kind == "unavailable":
        return DivergenceCause(**base, cause=kind, at=at.step)
    work = facts.ev.work(tid) if tid else frozenset()
    if at.step is None or at.step not in work:
        return unavailable(f"it is at {e.get('at')!r}, which is no step of {tid}'s work")
    pos = facts.seq[at.step]
    before = [c for c in cites if c.step and facts.seq.get(c.step, 10**12) <= pos]
    if kind in JUDGMENT_CAUSES:
        return DivergenceCause(**base, cause=kind, at=at.step, cites=tuple(c.step for c in cites if c.step), judgment=True)
    if kind in ("misleading_tool_result", "result_misread"):
        kept = [c for c in before if facts.ev.tool_result(c)]
        need = "a tool result at or before its step"
    elif kind == "context_missing":
        kept = [c for c in before if c.shows in ("failure", "no_result", "api_error", "interrupt")]
        need = "evidence of what failed to arrive (a failed or unanswered tool step, an error) at or before its step"
    elif kind == "context_unused":
        kept = [c for c in before if c.step != at.step]
        need = "the step before it that held the context"
    else:  # untrue_subtask_report
        a = e.get("subtask")
        d = facts.misleading.get(a) if isinstance(a, str) else None
        if d is None:
            return unavailable(f"sub-task {a!r} is none the sub-task stage found misled the agent")
        start = d.get("started_by")
        if start not in work or facts.seq.get(start, 10**12) >= pos:
            return unavailable(f"{a} was not started in {tid}'s work before {at.step}")
        own = {s.id for s in facts.ev.conv.steps if s.stream == a}
        kept = [c for c in cites if c.step == start or c.step in own]
        need = f"a step of {a} or the step that started it ({start})"
        if not kept:
            return unavailable(f"it needs {need}; {facts.ev.why_not(cites)}")
        return DivergenceCause(**base, cause=kind, at=at.step, cites=tuple(c.step for c in kept if c.step), subtask=a)
    if not kept:
        return unavailable(f"it needs {need}; {facts.ev.why_not(cites)}")
    return DivergenceCause(**base, cause=kind, at=at.step, cites=tuple(c.step for c in kept if c.step))


__all__ = ["run_divergence", "keep_verdicts", "keep_causes", "Facts"]
