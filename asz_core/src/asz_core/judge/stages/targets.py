"""The targets stage: a scan of the inputs in order (spec: "Targets", "Goals", "One call or
several", "Every answer is checked"; docs/judge.md).

Each call answers for its own inputs and is given the catalogue the calls before it left (every
target found so far, bounded by judge.state_bytes) and the goals found so far, each with the
last input related to it. asz checks every answer against the record before it takes it:

* an id the conversation (or the call) does not hold is left out, with what rests on it;
* an input left unanswered gets the action ``unknown`` and the relation ``unclear``;
* a relation the record does not allow becomes ``unclear``: a continue, adjust or return must
  follow an earlier input of its goal, a new must start a goal no earlier input relates to; a
  return right after an input of the same goal, or after one that acted on a target of it, is a
  continue, and so is an adjust whose input refines, steers, corrects, adds or cancels no target
  of its goal (it changes nothing, so its statement is no step of the goal's evolution);
* a new target or goal gets the next id (t4, g2) in the order of the input that first acted on
  it; criteria are numbered t4.c1, and a dropped one is kept and marked, only when what dropped
  it is a person's input read so far that came after the target and the criterion were set and
  refines, steers, corrects or cancels that target;
* a talk is listed for a target only when one of its inputs acts on that target;
* a goal's main target is its only member, or the member the evaluator cited an input of that
  goal for, the person's, whose actions point to that target (an action on it other than a
  cancel), the target not cancelled; otherwise undetermined;
* a call that gives nothing readable twice fails the stage, which counts the inputs never read.

A stage with anything left out, filled in or changed is partial, and its note says what.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import attrs
import orjson
from attrs import define, field

from ...assembly import PERSON_SOURCES, Step
from ...digits import ID_NUMBER
from ...convert import dumps
from ..judgment import (ACTIONS, END_STATES, RELATIONS, Action, Check, check_notes, Criterion, Evolution, Goal, InputJudgment,
                        Relation, StageFile, Target, TargetsHeader)
from ...navigation import _clip
from ..chunks import Chunk, Item, plan_chunks
from ..context import EvaluatorSpec, Meter, Run, StageCalls, naming, now, own_entries, readable_with, write_once
from ..kit import render

STAGE = "targets"
TID = re.compile("t" + ID_NUMBER)
DIRECTING = frozenset({"create", "refine", "steer", "correct"})
CHANGING = DIRECTING | {"cancel"}
"""What an adjust must do to a target of its goal: refine, steer, correct, add (create) or cancel."""
DROPPING = frozenset({"refine", "steer", "correct", "cancel"})
"""What the input that drops a criterion must do to its target."""
KINDS = ("change", "question", "other")
CONTEXT_ROWS = 3
"""Rows of the call before that a later call of a scan is given as context."""
SHORT = 160
"""Bytes of a statement in a shortened catalogue entry."""


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _str(v: Any) -> str | None:
    return v.strip() if isinstance(v, str) and v.strip() else None


def _fold(s: str) -> str:
    return " ".join(s.split()).lower()


@define
class _Target:
    id: str
    created_by: str
    statement: str = ""
    kind: str | None = None
    criteria: list[Criterion] = field(factory=list)
    talks: list[str] = field(factory=list)
    state: str = "open"
    replaced_by: str | None = None
    goal: str | None = None
    inputs: list[str] = field(factory=list)
    set_at: dict[str, int] = field(factory=dict)
    """Criterion id -> the position of the earliest input that can have set it: the first input of
    the call that gave it acting on the target with create, refine, steer or correct (else the
    target's creator). A criterion can be dropped only after it."""

    def freeze(self, order: dict[str, int]) -> Target:
        talks = tuple(sorted(set(self.talks), key=lambda k: int(k[1:])))
        return Target(self.id, self.statement, self.kind, tuple(self.criteria), talks, self.state, self.replaced_by,
                      self.goal, self.created_by, tuple(sorted(self.inputs, key=lambda i: order.get(i, 0))))


@define
class _Goal:
    id: str
    inputs: list[str] = field(factory=list)
    evolution: list[Evolution] = field(factory=list)
    claim: tuple[str, str] | None = None
    """(target, the person's input cited for it as main)."""


class Scan:
    """The catalogue a scan builds, call by call."""

    def __init__(self, inputs: list[Step], judged: set[str], all_inputs: set[str]) -> None:
        self.order = [s.input for s in inputs if s.input]
        self.pos = {iid: n for n, iid in enumerate(self.order)}
        self.step_of = {s.input: s for s in inputs}
        self.talk_inputs: dict[str, list[str]] = {}
        for s in inputs:
            if s.talk:
                self.talk_inputs.setdefault(s.talk, []).append(s.input)  # type: ignore[arg-type]
        self.judged = judged
        self.all_inputs = all_inputs
        self.targets: dict[str, _Target] = {}
        self.goals: dict[str, _Goal] = {}
        self.results: dict[str, InputJudgment] = {}
        self.input_goals: dict[str, list[str]] = {}
        self.not_person: set[str] = set()
        self.checks: list[Check] = []
        self.read_upto = -1
        self.own_now: set[str] = set()
        self.before_t: set[str] = set()
        self.before_g: set[str] = set()

    # --- checks --------------------------------------------------------------------------------
    def left_out(self, where: str, what: str) -> None:
        self.checks.append(Check("left_out", where, what))

    def filled(self, where: str, what: str) -> None:
        self.checks.append(Check("filled_in", where, what))

    def changed(self, where: str, what: str) -> None:
        self.checks.append(Check("changed", where, what))

    def _read(self, iid: Any) -> bool:
        """An input this scan has read by now (its own call's or an earlier one's)."""
        return isinstance(iid, str) and iid in self.pos and self.pos[iid] <= self.read_upto

    # --- one call's answer ----------------------------------------------------------------------
    def apply(self, n: int, own: list[str], ans: dict[str, Any]) -> None:
        ownset = set(own)
        self.own_now = ownset
        self.before_t, self.before_g = set(self.targets), set(self.goals)  # ids earlier calls gave
        self.read_upto = max(self.pos[i] for i in own)
        entries = own_entries(_list(ans.get("inputs")), naming("input"), ownset, self.pos.keys() | self.all_inputs, "input", n,
                              self.checks)
        tdefs: dict[str, dict[str, Any]] = {}
        for t in _list(ans.get("targets")):
            key = t.get("target") if isinstance(t, dict) else None
            if not isinstance(key, str):
                self.left_out(f"call {n}", "a target entry that names no target")
            elif key in tdefs:
                self.left_out(key, "a second entry for the same target")
            else:
                tdefs[key] = t
        tkeys: dict[str, str] = {}
        gkeys: dict[str, str] = {}
        for iid in own:
            e = entries.get(iid)
            s = self.step_of[iid]
            if e is None:
                self.results[iid] = InputJudgment(iid, s.id, s.talk or "", s.source or "", n, (Action(None, "unknown"),),
                                                  (Relation("unclear"),), answered=False)
                self.input_goals[iid] = []
                self.filled(iid, "left unanswered: its action is unknown and its relation unclear")
                continue
            created: list[str] = []
            acts = self._actions(iid, e.get("actions"), tkeys, created)
            rels = self._relations(iid, e.get("relations"), acts, gkeys)
            goals = self.input_goals[iid]
            for tid in created:
                t = self.targets[tid]
                if len(goals) == 1:
                    t.goal = goals[0]
                elif len(goals) > 1:
                    key = next((k for k, v in tkeys.items() if v == tid), None)
                    named = (tdefs.get(key) or {}).get("goal") if key else None
                    gid = gkeys.get(named) if isinstance(named, str) else None
                    gid = gid or (named if named in self.before_g else None)
                    if gid in goals:
                        t.goal = gid
                    else:
                        self.changed(tid, f"created by {iid}, which relates to {', '.join(goals)}, and the answer does "
                                          "not say which goal it serves: it stays in no goal")
            rels = self._adjusts(iid, rels, acts)
            self.results[iid] = InputJudgment(iid, s.id, s.talk or "", s.source or "", n, tuple(acts), tuple(rels))
        for key, t in tdefs.items():
            tid = self._target_id(key, tkeys)
            if tid is None:
                self.left_out(key, f"a target {key} that no input creates" if not TID.fullmatch(key)
                              else f"a change to {key}: no such target")
                continue
            self._update(tid, t, tkeys)
        for key, tid in tkeys.items():
            if key not in tdefs:
                self.filled(tid, f"created by {self.targets[tid].created_by} but never described: its statement is empty")
        for g in _list(ans.get("goals")):
            self._goal_claim(g, tkeys, gkeys)

    def _target_id(self, key: str, tkeys: dict[str, str]) -> str | None:
        return tkeys.get(key) or (key if key in self.before_t else None)

    def _actions(self, iid: str, raw: Any, tkeys: dict[str, str], created: list[str]) -> list[Action]:
        out: list[Action] = []
        for a in _list(raw):
            act = a.get("action") if isinstance(a, dict) else None
            if act not in ACTIONS:
                self.left_out(iid, f"action {act!r}, which is no action")
                continue
            note = _str(a.get("note"))
            if act in ("none", "not_from_person", "unknown"):
                out.append(Action(None, act, note))
                continue
            key = a.get("target")
            if not isinstance(key, str):
                self.left_out(iid, f"{act} that names no target")
                continue
            if act == "create":
                if key in tkeys or key in self.before_t:
                    by = self.targets[self._target_id(key, tkeys)].created_by  # type: ignore[index]
                    self.left_out(iid, f"create of {key}, which {by} created already")
                    continue
                tid = f"t{len(self.targets) + 1}"
                tkeys[key] = tid
                self.targets[tid] = _Target(tid, iid)
                created.append(tid)
            else:
                tid = self._target_id(key, tkeys)  # type: ignore[assignment]
                if tid is None:
                    self.left_out(iid, f"{act} on {key}, a target no input before it created")
                    continue
            t = self.targets[tid]
            if iid not in t.inputs:
                t.inputs.append(iid)
            s = self.step_of[iid]
            if act in DIRECTING and s.talk and s.talk not in t.talks:
                t.talks.append(s.talk)
            out.append(Action(tid, act, note))
        if not out:
            self.filled(iid, ("no action of its answer was kept" if _list(raw) else "its answer gives no action")
                        + ": its action is unknown")
            out = [Action(None, "unknown")]
        if any(a.action == "not_from_person" for a in out):
            self.not_person.add(iid)
        return out

    def _unclear(self, iid: str, why: str) -> Relation:
        self.changed(iid, f"{why}: unclear")
        return Relation("unclear")

    def _relations(self, iid: str, raw: Any, acts: list[Action], gkeys: dict[str, str]) -> list[Relation]:
        p = self.pos[iid]
        prev = self.order[p - 1] if p > 0 else None
        out: list[Relation] = []
        for r in _list(raw):
            rel = r.get("relation") if isinstance(r, dict) else None
            if rel not in RELATIONS:
                out.append(self._unclear(iid, f"relation {rel!r}, which is no relation"))
                continue
            goal, follows, stmt = r.get("goal"), r.get("follows"), _str(r.get("statement"))
            if rel == "unclear":
                out.append(Relation("unclear"))
            elif rel == "not_from_person":
                if all(a.action == "not_from_person" for a in acts):
                    out.append(Relation("not_from_person"))
                else:
                    out.append(self._unclear(iid, "not_from_person, though its actions say the person wrote it"))
            elif rel == "new":
                if isinstance(goal, str) and (goal in gkeys or goal in self.before_g):
                    have = self.goals[gkeys.get(goal, goal)].inputs
                    out.append(self._unclear(iid, f"new names {goal}, which {have[0] if have else 'an earlier input'} "
                                                  "started already"))
                    continue
                gid = f"g{len(self.goals) + 1}"
                gkeys[goal if isinstance(goal, str) else f"#{gid}"] = gid
                self.goals[gid] = _Goal(gid, evolution=[Evolution(iid, "new", stmt)])
                out.append(Relation("new", gid, None, stmt))
            else:
                gid = (gkeys.get(goal) or (goal if goal in self.before_g else None)) if isinstance(goal, str) else None
                if gid is None:
                    out.append(self._unclear(iid, f"{rel} names {goal!r}, a goal no earlier input started"))
                    continue
                g = self.goals[gid]
                if not isinstance(follows, str) or follows not in g.inputs or follows == iid:
                    out.append(self._unclear(iid, f"{rel} of {gid} follows {follows!r}, which is no earlier input of {gid}"))
                    continue
                if rel == "return" and prev is not None:
                    acted = [a.target for a in (self.results[prev].actions if prev in self.results else ())
                             if a.target and self.targets[a.target].goal == gid]
                    if gid in self.input_goals.get(prev, []):
                        self.changed(iid, f"return to {gid} right after {prev}, an input of {gid}: continue")
                        rel = "continue"
                    elif acted:
                        self.changed(iid, f"return to {gid} right after {prev}, which acted on {acted[0]} of {gid}: "
                                          "continue")
                        rel = "continue"
                out.append(Relation(rel, gid, follows, stmt if rel == "adjust" else None))
        if not out:
            self.filled(iid, "its answer gives no relation: unclear")
            out = [Relation("unclear")]
        gids: list[str] = []
        for rr in out:
            if rr.goal and rr.goal not in gids:
                gids.append(rr.goal)
        self.input_goals[iid] = gids
        for gid in gids:
            self.goals[gid].inputs.append(iid)
        return out

    def _adjusts(self, iid: str, rels: list[Relation], acts: list[Action]) -> list[Relation]:
        """An adjust stands only when its input refines, steers, corrects, adds or cancels a target
        of its goal (its new targets have their goals by now); else it changes nothing and is a
        continue. The adjusts that stand are steps of their goal's evolution."""
        out = []
        for r in rels:
            if r.relation == "adjust" and r.goal is not None:
                if any(a.action in CHANGING and a.target and self.targets[a.target].goal == r.goal for a in acts):
                    self.goals[r.goal].evolution.append(Evolution(iid, "adjust", r.statement))
                else:
                    self.changed(iid, f"adjust of {r.goal}, though it refines, steers, corrects, adds or cancels no "
                                      f"target of {r.goal}: continue")
                    r = Relation("continue", r.goal, r.follows, None)
            out.append(r)
        return out

    def _drop_why_not(self, T: _Target, by: Any, cid: str | None) -> str | None:
        """Why ``by`` cannot have dropped a criterion of ``T`` (``cid``, or a new one), or None."""
        if not (self._read(by) and by not in self.not_person):
            return f"{by!r}, which is no person's input read so far"
        if by == T.created_by:
            return f"{by}, which created {T.id}"
        if self.pos[by] < self.pos[T.created_by]:
            return f"{by}, which came before {T.id} existed ({T.created_by} created it)"
        if cid is not None and self.pos[by] <= T.set_at.get(cid, -1):
            return f"{by}, which came before {cid} was set"
        acts = self.results[by].actions if by in self.results else ()
        if not any(a.target == T.id and a.action in DROPPING for a in acts):
            return f"{by}, which refines, steers, corrects or cancels nothing of {T.id}"
        return None

    def _update(self, tid: str, t: dict[str, Any], tkeys: dict[str, str]) -> None:
        T = self.targets[tid]
        st = _str(t.get("statement"))
        if st:
            T.statement = st
        if t.get("kind") in KINDS:
            T.kind = t["kind"]
        elif t.get("kind") is not None:
            self.left_out(tid, f"kind {t.get('kind')!r}, which is no kind")
        # Criteria looked up by id and by folded text in a dict, not a scan each: an answer of
        # thousands of criteria is checked in linear time.
        by_id = {x.id: k for k, x in enumerate(T.criteria)}
        by_text: dict[str, int] = {}
        for k, x in enumerate(T.criteria):
            by_text.setdefault(_fold(x.text), k)
        for c in _list(t.get("criteria")):
            if not isinstance(c, dict):
                self.left_out(tid, "a criterion that is not an object")
                continue
            cid, text, by = c.get("id"), _str(c.get("text")), c.get("dropped_by")
            idx = None
            if cid is not None:
                idx = by_id.get(cid) if isinstance(cid, str) else None
                if idx is None:
                    self.left_out(tid, f"criterion {cid!r}: {tid} has no such criterion")
                    continue
            elif text:
                idx = by_text.get(_fold(text))
            if idx is None and not text:
                self.left_out(tid, "a criterion with no text")
                continue
            new_id = f"{tid}.c{len(T.criteria) + 1}"
            if idx is None:
                T.set_at[new_id] = self._set_at(T)
            why = self._drop_why_not(T, by, T.criteria[idx].id if idx is not None else new_id) if by is not None else None
            if why is not None:
                self.left_out(tid, f"a criterion dropped by {why}: kept live")
                by = None
            if idx is not None:  # an existing criterion: only a drop changes it, and nothing is removed
                if by is not None and not T.criteria[idx].dropped:
                    T.criteria[idx] = attrs.evolve(T.criteria[idx], dropped=True, dropped_by=by)
                continue
            T.criteria.append(Criterion(new_id, text, by is not None, by))  # type: ignore[arg-type]
            by_id[new_id] = len(T.criteria) - 1
            by_text.setdefault(_fold(text), len(T.criteria) - 1)  # type: ignore[arg-type]
        for k in _list(t.get("talks")):
            if not (isinstance(k, str) and k in self.judged):
                self.left_out(tid, f"talk {k!r}: not a judged main talk")
            elif k not in T.talks:
                if any(a.target == tid for i in self.talk_inputs.get(k, ()) if i in self.results
                       for a in self.results[i].actions):
                    T.talks.append(k)
                else:
                    self.left_out(tid, f"talk {k}: none of its inputs acts on {tid}")
        state = t.get("state")
        if state is not None:
            if state in END_STATES:
                T.state = state
            else:
                self.left_out(tid, f"end state {state!r}, which is no end state")
        rb = t.get("replaced_by")
        if rb is not None:
            rid = self._target_id(rb, tkeys) if isinstance(rb, str) else None
            if rid is None or rid == tid:
                self.left_out(tid, f"replaced by {rb!r}, which is no other target")
            else:
                T.replaced_by = rid
        if T.state == "replaced" and T.replaced_by is None:
            self.checks.append(Check("unknown", tid, "replaced, by a target the answer does not name: what replaced it "
                                                     "is unknown"))

    def _set_at(self, T: _Target) -> int:
        """Where a criterion first given now can have been set, at the earliest: the first input of
        this call that creates, refines, steers or corrects the target, else its creator."""
        setting = [self.pos[i] for i in T.inputs if i in self.own_now and i in self.results
                   and any(a.target == T.id and a.action in DIRECTING for a in self.results[i].actions)]
        return min(setting) if setting else self.pos[T.created_by]

    def _goal_claim(self, g: Any, tkeys: dict[str, str], gkeys: dict[str, str]) -> None:
        key = g.get("goal") if isinstance(g, dict) else None
        gid = (gkeys.get(key) or (key if key in self.before_g else None)) if isinstance(key, str) else None
        if gid is None:
            self.left_out(str(key), f"goal {key!r}: no input relates to it")
            return
        mt, cited = g.get("main_target"), g.get("main_cited")
        if mt is None:
            return
        tid = self._target_id(mt, tkeys) if isinstance(mt, str) else None
        if tid is None:
            self.left_out(gid, f"main target {mt!r}: no such target")
            return
        if self.targets[tid].goal != gid:
            self.left_out(gid, f"main target {tid}, which is not a member of {gid}")
            return
        person = (self._read(cited) and cited not in self.not_person
                  and self.step_of[cited].source in PERSON_SOURCES)  # type: ignore[index]
        why = None
        if not person:
            why = f"cites no input of the person ({cited!r})"
        elif cited not in self.goals[gid].inputs:
            why = f"cites {cited}, which is no input of {gid}"
        elif not any(a.target == tid and a.action != "cancel" for a in self.results[cited].actions):  # type: ignore[index]
            why = f"cites {cited}, whose actions do not point to {tid}"
        elif self.targets[tid].state == "cancelled":
            why = f"cites {cited}, but {tid} was cancelled"
        if why is not None:
            members = sum(1 for t in self.targets.values() if t.goal == gid)
            if members > 1:
                self.changed(gid, f"main target {tid} {why}: undetermined")
            return
        self.goals[gid].claim = (tid, cited)  # type: ignore[assignment]

    # --- what the scan holds --------------------------------------------------------------------
    def goal_records(self) -> list[Goal]:
        out = []
        for gid, g in self.goals.items():
            members = tuple(t.id for t in self.targets.values() if t.goal == gid)
            if g.claim and g.claim[0] in members:
                main, basis, cited = g.claim[0], "cited", g.claim[1]
            elif len(members) == 1:
                main, basis, cited = members[0], "only_member", None
            else:
                main, basis, cited = None, "undetermined", None
            out.append(Goal(gid, members, main, basis, cited, tuple(g.inputs), tuple(g.evolution)))
        return out

    def target_records(self) -> list[Target]:
        return [t.freeze(self.pos) for t in self.targets.values()]

    def catalogue_json(self) -> list[dict[str, Any]]:
        from ...convert import unstructure

        return [unstructure(t) for t in self.target_records()]


# --- the prompt ---------------------------------------------------------------------------------

def _input_row(s: Step, reply: Step | None) -> dict[str, Any]:
    row: dict[str, Any] = {"input": s.input, "step": s.id, "talk": s.talk, "source": s.source, "text": _clip(s.text),
                           "bytes": s.size}
    if reply is not None:
        row["talk_reply"] = {"step": reply.id, "text": _clip(reply.text), "bytes": reply.size}
    return row


def _dump(o: Any) -> bytes:
    return orjson.dumps(o)


def inputs_of(run: Run) -> tuple[list[Item], list[Step], list[bytes]]:
    """The items (judged main talks) with their rows (inputs from outside the agent), the input
    steps in order, and the rows of the talks before the window (context)."""
    w, conv = run.window, run.window.conv

    def rows(kid: str) -> tuple[list[bytes], list[Step]]:
        t = conv.talk(kid)
        ins = [conv.step(x) for x in t.inputs]
        ins = [s for s in ins if s.source != "agent" and s.input and s.id in w.steps]
        reply = conv.step(t.reply) if t.reply and t.reply in w.steps else None
        return [_dump(_input_row(s, reply if k == len(ins) - 1 else None)) for k, s in enumerate(ins)], ins

    items, steps = [], []
    for kid in w.judged:
        r, ins = rows(kid)
        if ins:
            items.append(Item(kid, tuple(r), tuple(s.input for s in ins)))  # type: ignore[misc]
            steps.extend(ins)
    context = [b for kid in w.before for b in rows(kid)[0]]
    return items, steps, context


def bounded_catalogue(targets: list[dict[str, Any]], limit: int, shortened: bool = False) -> str:
    """The catalogue in at most ``limit`` bytes: whole; else open targets whole and the others
    shortened; else all shortened; else ids and end states, as many as fit, and a count. With
    ``shortened`` (context beside a call's own targets, which it is given whole) every target
    shortened first."""
    if not targets:
        return "(none yet)"

    def short(t: dict[str, Any]) -> dict[str, Any]:
        crit = t.get("criteria") or []
        return {"id": t["id"], "statement": _clip(t.get("statement") or "", SHORT), "state": t["state"], "goal": t["goal"],
                "criteria": f"{sum(1 for c in crit if not c['dropped'])} live, {sum(1 for c in crit if c['dropped'])} dropped",
                "shortened": True}

    def text(rows: list[dict[str, Any]]) -> str:
        return "\n".join(_dump(r).decode() for r in rows)

    tries = ([t for t in targets], [t if t["state"] == "open" else short(t) for t in targets], [short(t) for t in targets])
    for rows in tries[2:] if shortened else tries:
        s = text(rows)
        if len(s.encode()) <= limit:
            return s
    lines: list[str] = []
    used = 0
    for k, t in enumerate(targets):
        line = _dump({"id": t["id"], "state": t["state"]}).decode()
        tail = f"… and {len(targets) - k - 1} more targets: read any of them whole with targets(id=…)"
        if used + len(line.encode()) + 1 + len(tail.encode()) > limit:
            lines.append(f"… and {len(targets) - k} more targets: read any of them whole with targets(id=…)")
            break
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines)


def goals_text(scan: Scan, limit: int) -> str:
    """The goals found so far, each with the last input related to it, in at most ``limit``
    bytes: whole; else ids, last inputs and main targets; else the goals whose last input came
    latest, as many as fit, with a line saying how many more."""
    goals = scan.goal_records()
    if not goals:
        return "(none yet)"
    rows = []
    for g in goals:
        stmt = next((e.statement for e in reversed(g.evolution) if e.statement), None)
        rows.append({"id": g.id, "asks": _clip(stmt or "", SHORT), "last_input": g.inputs[-1] if g.inputs else None,
                     "members": list(g.members), "main_target": g.main_target})
    whole = "\n".join(_dump(r).decode() for r in rows)
    if len(whole.encode()) <= limit:
        return whole
    short = [{"id": r["id"], "last_input": r["last_input"], "main_target": r["main_target"]} for r in rows]
    text = "\n".join(_dump(r).decode() for r in short)
    if len(text.encode()) <= limit:
        return text
    latest = sorted(short, key=lambda r: -scan.pos.get(r["last_input"] or "", -1))
    lines: list[str] = []
    used = 0
    def tail(n: int) -> str:
        return (f"… and {n} more goals whose last input came earlier (the targets tool shows each target's goal and "
                "the inputs that acted on it)")

    for k, r in enumerate(latest):
        line = _dump(r).decode()
        rest = len(latest) - k - 1
        if used + len(line.encode()) + 1 + (len(tail(rest).encode()) if rest else 0) > limit:
            lines.append(tail(len(latest) - k))
            break
        lines.append(line)
        used += len(line.encode()) + 1
    return "\n".join(lines)


def call_note(n: int, total: int, chunk: Chunk, mode: str, first_own: str, last_own: str) -> str:
    yours = f"Your input is {first_own}." if first_own == last_own else f"Your inputs are {first_own} to {last_own}."
    if mode == "single":
        s = (f"This is the only call of this stage: your inputs are every input of the judged window, "
             f"{first_own} to {last_own}.")
    else:
        s = (f"This is call {n} of {total} of a scan in order. {yours} "
             + ("Calls before yours answered for the inputs before yours: their targets and goals are below, and "
                "your relations can follow their inputs. " if n > 1 else "")
             + ("Calls after yours answer for the inputs after yours." if n < total else "Yours is the last call."))
    for item, count, a, b in chunk.past:
        s += (f"\n\nTalk {item} holds more inputs than fit one call: {count} of its inputs ({a} to {b}) are past this "
              f"call's limit and not listed below. They are yours too: read them with talks(item='{item}') or "
              f"talk(id='{item}').")
    return s


readable = readable_with("inputs")


# --- the stage ------------------------------------------------------------------------------------

def run_targets(run: Run, spec: EvaluatorSpec, backend: Any) -> StageFile:
    t0, started = time.monotonic(), now()
    cfg = run.cfg.judge
    items, steps, context = inputs_of(run)
    conv = run.window.conv
    all_inputs = {s.input for s in conv.steps if s.kind == "input" and s.input}
    scan = Scan(steps, set(run.window.judged), all_inputs)
    kit = run.kit
    template, schema = kit.template(STAGE), kit.schema(STAGE)
    mode, chunks = plan_chunks(items, cfg) if items else ("none", [])
    card = run.card() if chunks else ""
    every_row = [(rid, row) for it in items for rid, row in zip(it.row_ids, it.rows)]
    with Meter(STAGE, cfg.progress, run.say) as meter:
        calls = StageCalls(run, STAGE, spec, backend, meter)
        failed: tuple[int, str, int] | None = None
        for n, chunk in enumerate(chunks, 1):
            own = list(chunk.own)
            if n == 1:
                ctx = [b.decode() for b in context] or ["(no inputs before yours)"]
            else:
                start = scan.pos[own[0]]
                prev = [row for rid, row in every_row if scan.pos[rid] < start][-CONTEXT_ROWS:]
                ctx = ([f"({len(context)} inputs of talks before the window: read them with talks)"] if context else []) \
                    + [f"({start - len(prev)} earlier inputs answered by the calls before yours)"] * (start > len(prev)) \
                    + [b.decode() for b in prev]
            state_dir = run.path / "calls" / STAGE / str(n) / "state"
            cat = scan.catalogue_json()
            goals = goals_text(scan, cfg.state_bytes // 4)  # the goals take at most a quarter, the catalogue the rest
            # the catalogue so far as a stage file of this run, so the call's targets tool reads it by
            # the policy every stage file is read by (stage_files), as it reads the finished one
            state = run.stage_file(STAGE, "partial", None, note=(f"the targets of the calls before call {n}",),
                                   targets=tuple(scan.target_records()))
            write_once(state_dir / "stages" / "targets.json", dumps(state, indent=True))
            prompt = render(template, {
                "budget": f"{cfg.read_bytes:,}", "card": card, "call_note": call_note(n, len(chunks), chunk, mode, own[0], own[-1]),
                "own": "\n".join(b.decode() for b in chunk.rows), "context": "\n".join(ctx),
                "catalogue": bounded_catalogue(cat, cfg.state_bytes - len(goals.encode())), "goals": goals,
            })
            out = calls.call(n, prompt, schema, readable, run_dir=state_dir)
            if not out.ok:
                never = sum(len(c.own) for c in chunks[n - 1:])
                failed = (n, out.error or "nothing readable", never)
                break
            scan.apply(n, own, out.answer)
        stage_run = calls.stage_run(mode, len(chunks) if not failed else failed[0], started, t0)
        ev = calls.evaluator_ref()
    ref = kit.ref(STAGE)
    total_inputs = len(steps)
    if failed:
        n, why, never = failed
        header = TargetsHeader(inputs=total_inputs, answered=0, goals=0, targets=0, targets_in_no_goal=0, never_read=never)
        return run.stage_file(STAGE, "failed", f"call {n} gave nothing readable twice ({why}); {never} of "
                              f"{total_inputs} inputs were never read", kit=ref, evaluator=ev, run=stage_run,
                              header=header, checks=tuple(scan.checks))
    targets = scan.target_records()
    goals = scan.goal_records()
    results = tuple(scan.results[i] for i in scan.order if i in scan.results)
    header = TargetsHeader(inputs=total_inputs, answered=sum(1 for r in results if r.answered), goals=len(goals),
                           targets=len(targets), targets_in_no_goal=sum(1 for t in targets if t.goal is None))
    note = check_notes(scan.checks)
    return run.stage_file(STAGE, "partial" if scan.checks else "complete", None, note=note, kit=ref, evaluator=ev,
                          run=stage_run, checks=tuple(scan.checks), header=header, goals=tuple(goals),
                          targets=tuple(targets), inputs=results)


__all__ = ["run_targets", "Scan", "bounded_catalogue", "inputs_of", "Path"]
