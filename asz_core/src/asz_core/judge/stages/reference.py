"""The reference stage: the conclusions each saved source holds, and how far each can be trusted
(spec: "Judging against a source"; docs/sources.md).

One call however many sources there are, so the checks hold across all of them. The evaluator
reads each source's text through the navigation's ``sources`` tool (never in the prompt: a
source is data, never instructions) and names each conclusion: final or intermediate, required
or explanatory, the inputs it is about, its support (saved with cited lines, linked, asserted),
what corrects it (superseded_by), what it conflicts with and builds on. asz keeps:

* each id once (a second conclusion with the same id is left out), and gives each its lasting
  id, ``srcN.kM`` in the answer's order per source;
* a conclusion only of a saved source, and only with a statement;
* ``saved`` only with cited lines, and only lines within the source (lines past its end are left
  out; ``saved`` with none left becomes ``asserted``);
* ``superseded_by`` only to a conclusion of the same source, ``superseded_by`` and
  ``builds_on`` free of cycles (a reference that would close one is left out), no reference to
  itself or to a conclusion not kept;
* the inputs its scope names that the conversation holds; the others apart, as unbound.

A source whose comparison is unavailable (not fetched) leaves the stage partial, saying so.
"""

from __future__ import annotations

import re
import time
from typing import Any

import orjson

from ...assembly import PERSON_SOURCES
from ..context import EvaluatorSpec, Meter, Run, StageCalls, now, readable_with
from ..judgment import (CONCLUSION_KINDS, ROLES, SUPPORTS, Check, Conclusion, ReferenceHeader, SourceCoverage,
                        StageFile, check_notes)
from ..kit import render
from ..source_files import read_saved

STAGE = "reference"
readable = readable_with("conclusions")
_RANGE = re.compile(r"^\s*([1-9][0-9]{0,8})\s*(?:[-–]\s*([1-9][0-9]{0,8}))?\s*$")
ID_BYTES = 100


def inputs_held(run: Run) -> dict[str, Any]:
    """The conversation's inputs an evaluator can name (those the window shows), id -> step."""
    return {s.input: s for s in run.window.shown_steps() if s.kind == "input" and s.input}


def coverage(run: Run) -> tuple[list[SourceCoverage], dict[str, int]]:
    """Each saved source, compared or unavailable (why); the usable ones' line counts."""
    cov, lines = [], {}
    for s in read_saved(run.path):
        if s.usable:
            cov.append(SourceCoverage(s.id, "compared"))
            lines[s.id] = s.manifest.text.lines  # type: ignore[union-attr]
        else:
            cov.append(SourceCoverage(s.id, "unavailable", s.why_unavailable))
    return cov, lines


def run_reference(run: Run, spec: EvaluatorSpec, backend: Any) -> StageFile:
    t0, started = time.monotonic(), now()
    cov, lines_of = coverage(run)
    nav = run.reader()
    rows = orjson.loads(nav.call("sources")).get("sources", [])
    held = inputs_held(run)
    inputs = "\n".join(orjson.dumps({"input": i, "step": s.id, "talk": s.talk, "from": s.source,
                                     "text": _clip(s.text)}).decode()
                       for i, s in held.items() if s.source in PERSON_SOURCES) or "(none)"
    unavailable = [c for c in cov if c.status != "compared"]
    note = (f"This is the only call of this stage: find the conclusions of every saved source "
            f"({', '.join(lines_of)}).")
    if unavailable:
        note += " " + " ".join(f"{c.source} could not be saved ({c.why}): its comparison is unavailable; say nothing of it."
                               for c in unavailable)
    prompt = render(run.kit.template(STAGE), {"budget": f"{run.cfg.judge.read_bytes:,}", "card": run.card(),
                                              "call_note": note, "sources": "\n".join(orjson.dumps(r).decode() for r in rows),
                                              "inputs": inputs})
    out, stage_run, evref, ref = one_call(run, STAGE, spec, backend, prompt, readable, started, t0)
    unavailable_notes = tuple(f"{c.source}: comparison unavailable: {c.why}" for c in unavailable)
    if not out.ok:
        return run.stage_file(STAGE, "failed", f"the call gave nothing readable twice ({out.error})", note=unavailable_notes,
                              kit=ref, evaluator=evref, run=stage_run, sources=tuple(cov))
    checks: list[Check] = []
    kept = keep_conclusions(out.answer["conclusions"], lines_of, set(held), checks)
    per = {s: sum(1 for c in kept if c.source == s) for s in lines_of}
    cov = [SourceCoverage(c.source, c.status, c.why, per.get(c.source, 0)) for c in cov]
    header = ReferenceHeader(sources_compared=len(lines_of), sources_unavailable=len(unavailable), conclusions_kept=len(kept),
                             superseded=sum(1 for c in kept if c.superseded_by), unbound_inputs=sum(len(c.unbound) for c in kept))
    note_lines = unavailable_notes + check_notes(checks)
    status = "partial" if (checks or unavailable) else "complete"
    return run.stage_file(STAGE, status, None, note=note_lines, kit=ref, evaluator=evref, run=stage_run,
                          checks=tuple(checks), header=header, sources=tuple(cov), conclusions=tuple(kept))


def one_call(run: Run, stage: str, spec: EvaluatorSpec, backend: Any, prompt: str, readable: Any, started: str,
             t0: float) -> tuple[Any, Any, Any, Any]:
    """A stage of one call (reference, divergence): its outcome, its run, its evaluator, its kit."""
    with Meter(stage, run.cfg.judge.progress, run.say) as meter:
        calls = StageCalls(run, stage, spec, backend, meter)
        out = calls.call(1, prompt, run.kit.schema(stage), readable)
        stage_run = calls.stage_run("single", 1, started, t0)
        evref = calls.evaluator_ref()
    return out, stage_run, evref, run.kit.ref(stage)


def _clip(text: str | None, limit: int = 300) -> str:
    t = text or ""
    b = t.encode("utf-8", "replace")
    return t if len(b) <= limit else b[:limit].decode("utf-8", "ignore") + "…"


def _text(v: Any, limit: int = 4000) -> str | None:
    if not isinstance(v, str) or not v.strip():
        return None
    b = v.encode("utf-8", "replace")
    return v if len(b) <= limit else b[:limit].decode("utf-8", "ignore") + "…"


def parse_lines(raw: Any, last: int, where: str, checks: list[Check]) -> list[tuple[int, int]]:
    """Cited lines (12, "12-14") as ranges within 1..``last``; the others left out, each said."""
    out: list[tuple[int, int]] = []
    for x in raw if isinstance(raw, list) else ([] if raw is None else [raw]):
        m = _RANGE.match(str(x)) if isinstance(x, (int, str)) and not isinstance(x, bool) else None
        if m is None:
            checks.append(Check("left_out", where, f"cited line {x!r}, which is no line number or range"))
            continue
        a = int(m.group(1))
        b = int(m.group(2) or a)
        if b < a:
            a, b = b, a
        if b > last:
            checks.append(Check("left_out", where, f"cited lines {a}-{b}, past the source's end (it has {last} lines)"
                                if a != b else f"cited line {a}, past the source's end (it has {last} lines)"))
            continue
        if (a, b) not in out:
            out.append((a, b))
    return out


def keep_conclusions(entries: Any, lines_of: dict[str, int], held: set[str], checks: list[Check]) -> list[Conclusion]:
    """The answer's conclusions as asz keeps them (see the module's docstring)."""
    firsts: dict[str, dict[str, Any]] = {}  # the evaluator's id -> its entry, the first one
    order: list[str] = []
    for n, e in enumerate(entries if isinstance(entries, list) else [], 1):
        gid = e.get("id") if isinstance(e, dict) else None
        if not isinstance(gid, str) or not gid.strip():
            checks.append(Check("left_out", f"conclusion {n}", "a conclusion with no id"))
            continue
        gid = gid.strip()[:ID_BYTES]
        src = e.get("source")
        if gid in firsts:
            checks.append(Check("left_out", gid, "a second conclusion with the same id: the first is kept"))
            continue
        if src not in lines_of:
            why = "it names no source" if not isinstance(src, str) else f"{src} is no saved source of this run"
            checks.append(Check("left_out", gid, why))
            continue
        if _text(e.get("statement")) is None:
            checks.append(Check("left_out", gid, "a conclusion with no statement"))
            continue
        firsts[gid] = e
        order.append(gid)
    # asz's lasting ids, in the answer's order per source
    count: dict[str, int] = {}
    new_id: dict[str, str] = {}
    for gid in order:
        src = firsts[gid]["source"]
        count[src] = count.get(src, 0) + 1
        new_id[gid] = f"{src}.k{count[src]}"

    def ref(gid: str, x: Any, what: str) -> str | None:
        """The lasting id a reference names, or None (left out, said)."""
        if not isinstance(x, str) or not x:
            return None
        if x == gid:
            checks.append(Check("left_out", new_id[gid], f"{what} names the conclusion itself"))
            return None
        if x not in new_id:
            checks.append(Check("left_out", new_id[gid], f"{what} {x!r}, which is no conclusion kept"))
            return None
        return new_id[x]

    built: dict[str, dict[str, Any]] = {}
    edges_sup: dict[str, str] = {}
    edges_on: dict[str, list[str]] = {}
    for gid in order:
        e, cid = firsts[gid], new_id[gid]
        src = e["source"]
        where = cid
        kind = e.get("kind") if e.get("kind") in CONCLUSION_KINDS else "unknown"
        role = e.get("role") if e.get("role") in ROLES else "unknown"
        for name, v, allowed in (("kind", e.get("kind"), CONCLUSION_KINDS), ("role", e.get("role"), ROLES)):
            if v not in allowed:
                checks.append(Check("changed", where, f"{name} {v!r}, which is none of {', '.join(allowed)}: unknown"))
        given_support = e.get("support")
        lines = parse_lines(e.get("lines"), lines_of[src], where, checks)
        support, reason, evaluator_support = given_support, None, None
        if given_support not in SUPPORTS:
            support, reason, evaluator_support = "asserted", f"{given_support!r} is no support", \
                given_support if isinstance(given_support, str) else None
            checks.append(Check("changed", where, f"support {given_support!r}, which is none of {', '.join(SUPPORTS)}: asserted"))
        elif given_support == "saved" and not lines:
            reason = "saved needs cited lines of the source" + (" within it" if e.get("lines") else "")
            support, evaluator_support = "asserted", "saved"
            checks.append(Check("changed", where, f"support saved, and no line of {src} it cites is kept: asserted"))
        named = [x for x in (e.get("inputs") if isinstance(e.get("inputs"), list) else []) if isinstance(x, str) and x]
        bound = tuple(dict.fromkeys(x for x in named if x in held))
        unbound = tuple(dict.fromkeys(x[:ID_BYTES] for x in named if x not in held))
        sup = ref(gid, e.get("superseded_by"), "superseded_by")
        if sup is not None and firsts_src(firsts, new_id, sup) != src:
            checks.append(Check("left_out", where, f"superseded_by {sup}, a conclusion of another source: a correction "
                                                   "comes from the same source (use conflicts)"))
            sup = None
        if sup is not None:
            if _reaches(sup, cid, lambda x: [edges_sup[x]] if x in edges_sup else []):
                checks.append(Check("left_out", where, f"superseded_by {sup}, which would close a cycle of corrections"))
            else:
                edges_sup[cid] = sup
        ons = []
        for x in e.get("builds_on") if isinstance(e.get("builds_on"), list) else []:
            r = ref(gid, x, "builds_on")
            if r is None or r in ons:
                continue
            if _reaches(r, cid, lambda y: edges_on.get(y, [])):
                checks.append(Check("left_out", where, f"builds_on {r}, which would close a cycle"))
                continue
            ons.append(r)
            edges_on[cid] = ons
        conflicts = []
        for x in e.get("conflicts") if isinstance(e.get("conflicts"), list) else []:
            r = ref(gid, x, "conflicts")
            if r is not None and r not in conflicts:
                conflicts.append(r)
        built[cid] = dict(id=cid, source=src, statement=_text(e.get("statement")), kind=kind, role=role, support=support,
                          lines=tuple(lines), inputs=bound, unbound=unbound, conflicts=tuple(conflicts), builds_on=tuple(ons),
                          given_id=gid if gid != cid else None, evaluator_support=evaluator_support, reason=reason,
                          note=_text(e.get("note"), 1000))
    out = [Conclusion(**b, superseded_by=edges_sup.get(cid)) for cid, b in built.items()]
    return sorted(out, key=lambda k: (int(k.source[3:]), int(k.id.rsplit(".k", 1)[1])))  # by source, then in order


def firsts_src(firsts: dict[str, dict[str, Any]], new_id: dict[str, str], cid: str) -> str | None:
    """The source of the conclusion asz calls ``cid``."""
    return next((firsts[g]["source"] for g, n in new_id.items() if n == cid), None)


def _reaches(start: str, goal: str, nxt: Any) -> bool:
    """Whether ``goal`` is reached from ``start`` following ``nxt`` (bounded by the ids seen)."""
    seen, todo = set(), [start]
    while todo:
        x = todo.pop()
        if x == goal:
            return True
        if x in seen:
            continue
        seen.add(x)
        todo.extend(nxt(x))
    return False


__all__ = ["run_reference", "one_call", "keep_conclusions", "parse_lines", "coverage", "inputs_held"]
