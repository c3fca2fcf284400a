"""One target's achievement answer held to the record (spec: "Achievement", "Reasons,
observations and accounts", "The files a target changed", "Deliveries and contradictions",
"Rework", "Findings"; docs/judge.md, "The achievement stage").

:func:`check_target` takes what the evaluator answered for one target and keeps it only as far
as the record shows what it cites, through the rules of :mod:`asz_core.judge.evidence`. Every
change it makes is a :class:`~asz_core.judge.judgment.Check` (left out, filled in, changed or
noted) that makes the stage partial and becomes a line of its note. The level is derived here
from the states, never taken from the answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from ..evidence import Cite, Evidence
from ..outcomes import level_of, standing as standing_of
from ..judgment import (BASES, CAUSES, CLAIM_CHECKS, CONCERNS, EVENTS, STATES, TRIGGERS, Account, Check, CheckMade,
                        ClaimCheck, Contradiction, CriterionState, Event, FileGroup, Finding, Observation, Part,
                        QuestionAccount, RemoteOperation, ReworkRound, Target, TargetAchievement)

DECIDED = ("met", "not_met")


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _obj(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _str(v: Any) -> str | None:
    return v.strip() if isinstance(v, str) and v.strip() else None


class TargetCheck:
    """Checks one target's answer; ``checks`` collects what asz left out, filled in or changed."""

    def __init__(self, ev: Evidence, target: Target, own_operations: Sequence[str], op_step: dict[str, str | None],
                 next_finding: Callable[[], str], received: frozenset[str] | None = None) -> None:
        """``received``: the steps of the work the target received, as cost per target cuts it
        (a talk two targets share holds work only one of them received); its talks' steps when
        not given."""
        self.ev, self.t, self.tid = ev, target, target.id
        self.live = [c for c in target.criteria if not c.dropped]
        self.live_ids = {c.id for c in self.live}
        self.own_ops = tuple(own_operations)
        self.op_step = op_step
        self.next_finding = next_finding
        self.checks: list[Check] = []
        self.received = received if received is not None else ev.work(target.id)
        self.shared_keys: set[str] = set()
        """Event keys the answer gave to several events (they name none of them)."""

    # --- checks and citations -------------------------------------------------------------------

    def note(self, kind: str, where: str, what: str) -> None:
        self.checks.append(Check(kind, where, what))

    def cites(self, raw: Any, where: str) -> list[Cite]:
        """The cited ids that name a step of the window, in order; the others left out, noted."""
        out = []
        for c in self.ev.cites(raw):
            if c.step is None:
                self.note("left_out", where, f"cited {c.fact}")
            else:
                out.append(c)
        return out

    def delivers(self, c: Cite) -> bool:
        """A reply of the agent on the main stream after the target was set: what delivers an answer."""
        return self.ev.delivers(c, self.tid)

    @staticmethod
    def ids(cs: Sequence[Cite]) -> tuple[str, ...]:
        return tuple(c.step for c in cs if c.step)

    def criterion_ids(self, raw: Any, where: str) -> tuple[tuple[str, ...], bool]:
        """The live criteria of the target a list names (the rest noted), and whether it named any."""
        named = [x for x in _list(raw)]
        kept = []
        for x in named:
            if isinstance(x, str) and x in self.live_ids:
                if x not in kept:
                    kept.append(x)
            else:
                self.note("left_out", where, f"criterion {x!r}: no live criterion of {self.tid}")
        return tuple(kept), bool(named)

    # --- the whole target -----------------------------------------------------------------------

    def run(self, ans: dict[str, Any] | None, call: int) -> TargetAchievement:
        tid = self.tid
        if ans is None:
            self.note("filled_in", tid, "the answer gave nothing for it: every criterion is unknown and its basis "
                                        "no_evidence")
            ans = {}
        basis, evaluator_basis, basis_reason, basis_cites = self.basis(ans)
        criteria = self.criteria(ans.get("criteria"), basis)
        claims = self.claims(ans.get("claims"))
        criteria = self.contradicted_by_claims(criteria, claims)
        events, standing, key_of = self.events(ans.get("events"), ans.get("contradictions"))
        contradictions = self.contradictions(ans.get("contradictions"), key_of, standing,
                                             {e.id for e in events if e.event == "undone"})
        rework = self.rework(ans.get("rework"))
        findings = self.findings(ans.get("findings"))
        account = self.account(ans.get("account"))
        states = [c.state for c in criteria]
        if any(c.state == "met" for c in criteria) and not any(e.event != "undone" for e in events):
            self.note("noted", tid, "criteria met and no delivery kept: nothing a source reports of it could reach "
                                    "its score")
        cited = self.cited(criteria, basis_cites, claims, events, contradictions, rework, findings, account)
        return TargetAchievement(
            target=tid, judged=True, call=call, level=level_of(states), basis=basis, evaluator_basis=evaluator_basis,
            basis_reason=basis_reason, basis_cites=basis_cites, live=len(criteria),
            met=sum(1 for s in states if s == "met"), unknown=sum(1 for s in states if s in ("unknown", "not_captured")),
            criteria=tuple(criteria), claims=tuple(claims), events=tuple(events), standing=standing,
            contradictions=tuple(contradictions), rework=tuple(rework), findings=tuple(findings), account=account,
            cited=cited, notes=_str(ans.get("notes")))

    # --- basis ------------------------------------------------------------------------------------

    def basis(self, ans: dict[str, Any]) -> tuple[str, str | None, str | None, tuple[str, ...]]:
        """The basis, weakened to agent_claim_only or no_evidence when what it cites does not show it."""
        b = ans.get("basis")
        cs = self.cites(ans.get("basis_cites"), f"{self.tid} basis")
        weak = "agent_claim_only" if any(self.ev.agent_words(c) for c in cs) else "no_evidence"
        if b not in BASES:
            self.note("filled_in" if b is None else "changed", f"{self.tid} basis",
                      f"{'no basis' if b is None else f'basis {b!r}, which is no basis'}: {weak}")
            return weak, None if b is None else str(b), "the answer gave no basis", self.ids(cs)
        why = None
        if b == "person_accepted" and not any(self.ev.person_after_setting(c, self.tid) for c in cs):
            why = "it cites no input of the person after every input that set the target"
        elif b == "observed_result" and not any(self.ev.tool_result(c) for c in cs):
            why = "it cites no tool step whose result came back"
        elif b == "delivered_answer":
            if self.t.kind == "change":
                why = f"{self.tid} is a change, and a file, a document or a change is never shown by a reply"
            elif not any(self.delivers(c) for c in cs):
                why = "it cites no reply of the agent after the target was set"
        if why is None:
            return b, None, None, self.ids(cs)
        self.note("changed", f"{self.tid} basis", f"{b} weakened to {weak}: {why}")
        return weak, b, f"{b} weakened: {why}", self.ids(cs)

    # --- criteria ---------------------------------------------------------------------------------

    def criteria(self, raw: Any, basis: str) -> list[CriterionState]:
        entries: dict[str, dict[str, Any]] = {}
        dropped = {c.id for c in self.t.criteria if c.dropped}
        for e in _list(raw):
            cid = _obj(e).get("id")
            if not isinstance(cid, str):  # a list or an object is no id (nor a key to look one up by)
                self.note("left_out", self.tid, f"a state for {cid!r}: no criterion of {self.tid}")
            elif cid in dropped:
                self.note("left_out", str(cid), "a state for a criterion the person dropped: never judged")
            elif cid not in self.live_ids:
                self.note("left_out", self.tid, f"a state for {cid!r}: no criterion of {self.tid}")
            elif cid in entries:
                self.note("left_out", str(cid), "a second state for the same criterion")
            else:
                entries[cid] = e  # type: ignore[index]
        out = []
        for c in self.live:
            e = entries.get(c.id)
            if e is None:
                self.note("filled_in", c.id, "left out by the answer: unknown")
                out.append(CriterionState(c.id, c.text, "unknown", "the answer left it out", "asz"))
                continue
            out.append(self.criterion(c.id, c.text, e, basis))
        return out

    def criterion(self, cid: str, text: str, e: dict[str, Any], basis: str) -> CriterionState:
        state, reason = e.get("state"), _str(e.get("reason"))
        delivered = e.get("delivered") is True
        cs = self.cites(e.get("cites"), cid)
        obs = self.observations(cid, e.get("observations"), cs)
        if state not in STATES:
            self.note("changed", cid, f"state {state!r}, which is no state: unknown")
            return CriterionState(cid, text, "unknown", f"the answer's state {state!r} is no state", "asz", str(state),
                                  reason, delivered, self.ids(cs), (), obs)
        shown: list[Cite] = []
        if state in DECIDED:
            # a reply that delivered the answer shows it delivered: a criterion met, never one not met
            shown = [c for c in cs if self.ev.admissible(c, self.tid)
                     or (state == "met" and self.delivers(c) and (delivered or basis == "delivered_answer"))]
            if not shown:
                why = self.ev.why_not(cs, self.tid)
                if state == "not_met" and any(self.delivers(c) for c in cs):
                    why += "; a reply shows only an answer delivered, never that a criterion is not met"
                elif any(self.delivers(c) for c in cs):
                    why += "; a reply shows only an answer delivered: the criterion is not marked delivered and the " \
                           "basis is not delivered_answer"
                self.note("changed", cid, f"{state}: {why}: unknown")
                return CriterionState(cid, text, "unknown", why, "asz", state, reason, delivered, self.ids(cs), (), obs)
        return CriterionState(cid, text, state, reason, "evaluator", None, None, delivered, self.ids(cs), self.ids(shown), obs)

    def observations(self, cid: str, raw: Any, cs: Sequence[Cite]) -> tuple[Observation, ...]:
        cited = {c.step: c for c in cs}
        out = []
        for o in _list(raw):
            o = _obj(o)
            c = self.ev.cite(o.get("step"))
            text = o.get("excerpt")
            if c.step not in cited:
                self.note("left_out", cid, f"an observation of {o.get('step')!r}, which the criterion does not cite")
                continue
            if not isinstance(text, str) or not text.strip():
                self.note("left_out", cid, f"an observation of {c.step} with no excerpt")
                continue
            got = self.ev.excerpt(c.step, text)  # type: ignore[arg-type]
            if not got.found:
                self.note("left_out", cid, f"an observation of {c.step}: its excerpt is not in the step word for word")
                continue
            if got.cut:
                self.note("changed", cid, f"the excerpt of {c.step} ({got.given_bytes} bytes) cut to its first 300 bytes")
            out.append(Observation(c.step, got.text, c.fact, _str(o.get("reading"))))  # type: ignore[arg-type]
        return tuple(out)

    # --- claims -------------------------------------------------------------------------------------

    def claims(self, raw: Any) -> list[ClaimCheck]:
        out = []
        for n, e in enumerate(_list(raw), 1):
            e = _obj(e)
            where = f"{self.tid} claim {n}"
            text = _str(e.get("claim"))
            said = self.ev.cite(e.get("said"))
            if text is None:
                self.note("left_out", where, "a claim with no text")
                continue
            if not self.ev.agent_words(said):
                self.note("left_out", where, f"a claim said at {said.fact}, which is no words of the agent")
                continue
            crit, named = self.criterion_ids(e.get("criteria"), where)
            if named and not crit:  # still the target's claim: it bears on the whole target
                self.note("noted", where, "a claim that names criteria, none of them the target's: it bears on the "
                                          "whole target")
            check = e.get("check")
            cs = self.cites(e.get("cites"), where)
            if check not in CLAIM_CHECKS:
                self.note("changed", where, f"check {check!r}, which is no check: no_evidence")
                out.append(ClaimCheck(text, said.step, "no_evidence", "asz", str(check), "the answer's check is no check",  # type: ignore[arg-type]
                                      crit, self.ids(cs)))
                continue
            if check in ("supported", "contradicted"):
                shown = [c for c in cs if self.ev.admissible(c, self.tid)]
                if not shown:
                    why = "a claim only the agent's words support or contradict is no_evidence: " + self.ev.why_not(cs, self.tid)
                    self.note("changed", where, f"{check}: {why}")
                    out.append(ClaimCheck(text, said.step, "no_evidence", "asz", check, why, crit, self.ids(cs)))  # type: ignore[arg-type]
                    continue
                out.append(ClaimCheck(text, said.step, check, "evaluator", None, None, crit, self.ids(shown)))  # type: ignore[arg-type]
                continue
            out.append(ClaimCheck(text, said.step, check, "evaluator", None, None, crit, self.ids(cs)))  # type: ignore[arg-type]
        return out

    def contradicted_by_claims(self, criteria: list[CriterionState], claims: Sequence[ClaimCheck]) -> list[CriterionState]:
        """A target with a contradicted claim is not achieved: the criteria the claim bears on
        (every criterion when it names none of the target's) are not met, whatever their state
        was (met, unknown or not captured: the record's contradiction of the claim shows them
        not met), so the level is never achieved nor unverified for want of a state."""
        out = list(criteria)
        for cl in claims:
            if cl.check != "contradicted":
                continue
            for k, c in enumerate(out):
                if c.state == "not_met" or (cl.criteria and c.id not in cl.criteria):
                    continue
                why = f"the claim {cl.claim!r} ({cl.said}) is contradicted by {', '.join(cl.cites)}"
                self.note("changed", c.id, f"{c.state}: {why}: not_met")
                out[k] = attrs.evolve(c, state="not_met", reason=why, by="asz",
                                      evaluator_state=c.evaluator_state if c.by == "asz" else c.state,
                                      evaluator_reason=c.evaluator_reason if c.by == "asz" else c.reason,
                                      shown_by=cl.cites)
        return out

    # --- events -------------------------------------------------------------------------------------

    def events(self, raw: Any, raw_contradictions: Any = None) -> tuple[list[Event], tuple[str, ...], dict[str, str]]:
        """Deliveries, undoings and deliveries again, kept in order, each placed at the earliest
        step that shows it; and the deliveries standing at the end."""
        kept: list[Event] = []
        key_of: dict[str, str] = {}
        seq_of: dict[str, int] = {}

        def contradicting(replaced: Sequence[str]) -> list[int]:
            """Where the evidence of the answer's contradictions of ``replaced`` is: only a
            contradiction naming one of those deliveries (never an undoing, an event left out or
            another delivery) that disproves the conclusion or criteria of the target."""
            out = []
            for x in _list(raw_contradictions):
                x = _obj(x)
                key = x.get("delivery")
                if not (isinstance(key, str) and key_of.get(key) in replaced):
                    continue
                dis = x.get("disproves")
                if dis != "conclusion" and not (dis == "criteria" and any(
                        isinstance(c, str) and c in self.live_ids for c in _list(x.get("criteria")))):
                    continue
                out += [c.seq for c in self.ev.cites(x.get("cites")) if c.seq is not None and self.ev.beyond_words(c, self.tid)]
            return out

        # A key the answer gives to two events names neither: what names it (a contradiction, a
        # delivery again's corrects, an undoing's deliveries) cannot be shown to name a delivery.
        given = [_obj(e).get("key") for e in _list(raw)]
        self.shared_keys = {k for k in given if isinstance(k, str) and given.count(k) > 1}
        for k in sorted(self.shared_keys):
            self.note("noted", f"{self.tid} events", f"the key {k!r} is given to {given.count(k)} events: what names it "
                                                     "names none of them")
        for n, e in enumerate(_list(raw), 1):
            e = _obj(e)
            key = e.get("key") if isinstance(e.get("key"), str) else f"#{n}"
            where = f"{self.tid} event {key}"
            kind, concerns = e.get("event"), e.get("concerns")
            if kind not in EVENTS or concerns not in CONCERNS:
                self.note("left_out", where, f"{kind!r} concerning {concerns!r}: no such event or concern")
                continue
            cs = self.cites(e.get("cites"), where)
            if concerns == "answer":
                shown = [c for c in cs if self.delivers(c)]
                need = "reply of the agent after the target was set"
            else:
                shown = [c for c in cs if self.ev.returned(c) and self.ev.after_set(c, self.tid)]
                need = "tool step that returned after the target was set (a request is not the thing done)"
            if not shown:
                self.note("left_out", where, f"{kind} of {concerns}: it cites no {need}; " + self.ev.why_not(cs, self.tid))
                continue
            at = min(shown, key=lambda c: c.seq)  # type: ignore[arg-type,return-value]
            deliveries = [x for x in kept if x.event != "undone"]
            if kind == "delivered" and any(x.event == "undone" for x in kept):
                self.note("left_out", where, "a delivery after an undoing: after an undoing comes a delivery again")
                continue
            if kind != "delivered" and not deliveries:
                self.note("left_out", where, f"{kind} before any delivery")
                continue
            if kept and at.seq <= seq_of[kept[-1].id]:  # type: ignore[operator]
                self.note("left_out", where, f"{kind} at {at.step}, not recorded after {kept[-1].id} ({kept[-1].at})")
                continue
            eid = f"{self.tid}.e{len(kept) + 1}"
            corrects: tuple[str, ...] = ()
            crit: tuple[str, ...] = ()
            dels: tuple[str, ...] = ()
            if kind == "delivered_again":
                got = self.earlier(e.get("corrects"), key_of, deliveries, where, "a delivery again that names only what "
                                   "is no earlier delivery", "of what it corrects")
                if got is None:
                    continue
                corrects = got
                if all(self.ev.main_reply(c) for c in shown):
                    # what it replaces: those it names, or every delivery standing now
                    replaced = corrects or tuple(standing_of((x.id, x.event, x.corrects, x.deliveries) for x in kept)[0])
                    last = max(replaced, key=lambda d: seq_of[d])
                    by_id = {x.id: x for x in kept}
                    if not self.redone(seq_of[last], at.seq, [x for x in kept if x.event == "undone"], seq_of,  # type: ignore[arg-type]
                                       cs, contradicting(replaced)):
                        self.note("left_out", where, f"a reply that only repeats a delivered result is no event: no work "
                                                     f"was redone between {last} ({by_id[last].at}) and {at.step} (a file "
                                                     f"operation of {self.tid}, a check's result it cites, an undoing, a "
                                                     "contradiction or the person's correction)")
                        continue
            elif kind == "undone":
                crit, named_c = self.criterion_ids(e.get("criteria"), where)
                if named_c and not crit:
                    self.note("left_out", where, "an undoing that names criteria, none of them the target's")
                    continue
                got = self.earlier(e.get("deliveries"), key_of, deliveries, where, "an undoing that names deliveries, "
                                   "none of them earlier deliveries", "of the deliveries it names")
                if got is None:
                    continue
                dels = got
            ev = Event(eid, kind, concerns, at.step, _str(e.get("what")), self.ids(shown), corrects, crit, dels)  # type: ignore[arg-type]
            kept.append(ev)
            if key not in self.shared_keys:
                key_of[key] = eid
            seq_of[eid] = at.seq  # type: ignore[assignment]
        at_end, took = standing_of((x.id, x.event, x.corrects, x.deliveries) for x in kept)
        end = tuple(at_end)
        kept = [attrs.evolve(x, applies=any(d in end for d in took[x.id])) if x.event == "undone" else x for x in kept]
        return kept, end, key_of

    def earlier(self, raw: Any, key_of: dict[str, str], deliveries: Sequence[Event], where: str, none: str,
                some: str) -> tuple[str, ...] | None:
        """The earlier deliveries a list of keys names; None when it names some and none of them
        is one (the event is then left out, never read as the whole); the others are noted."""
        named = list(_list(raw))
        ids = {d.id for d in deliveries}
        got = tuple(key_of[x] for x in named if isinstance(x, str) and key_of.get(x) in ids)
        if named and not got:
            self.note("left_out", where, f"{none} ({named})")
            return None
        if len(got) < len(named):
            self.note("left_out", where, f"{some}, {[x for x in named if not (isinstance(x, str) and key_of.get(x) in ids)]}: "
                                         "no earlier delivery")
        return got

    def redone(self, after: int, before: int, undoings: Sequence[Event], seq_of: dict[str, int], cs: Sequence[Cite],
               contradicting: Sequence[int]) -> bool:
        """Whether a delivery again resting on replies, at ``before``, rests on work redone since
        the latest delivery it replaces, at ``after`` (spec: "A reply that only repeats a result
        already delivered, such as a closing summary, is no event"): a file operation of the
        target, a check's result the event cites, an undoing, a contradiction's evidence or the
        person's correction of the target between the two. A tool step that changes nothing for
        the target (a to-do list, a read) that the event does not cite is none of these, and
        neither is a delivery of another part between (docs/rule-readings.md)."""
        def between(seq: int | None) -> bool:
            return seq is not None and after < seq < before

        if any(between(seq_of[u.id]) for u in undoings):
            return True
        if any(between(self.ev.cite(self.op_step.get(o)).seq) for o in self.own_ops):
            return True
        if any(self.ev.tool_result(c) and between(c.seq) for c in cs):
            return True
        if any(between(x) for x in contradicting):
            return True
        return any(between(self.ev.cite(i).seq) for i in self.ev.corrections(self.tid))

    def contradictions(self, raw: Any, key_of: dict[str, str], standing: tuple[str, ...],
                       undoings: set[str]) -> list[Contradiction]:
        """Contradictions, each of a delivery event kept (delivered or delivered again: a result
        that reached the person); one naming an undoing is left out (what was taken back is no
        result to disprove)."""
        out = []
        for n, e in enumerate(_list(raw), 1):
            e = _obj(e)
            where = f"{self.tid} contradiction {n}"
            key = e.get("delivery")
            eid = key_of.get(key) if isinstance(key, str) else None
            if eid is None:
                self.note("left_out", where, f"a contradiction of {key!r}: " + (
                    "a key given to several events, which names none of them" if key in self.shared_keys
                    else "no delivery kept"))
                continue
            if eid in undoings:
                self.note("left_out", where, f"a contradiction of {eid}, an undoing: a contradiction names a delivery "
                                             "(delivered or delivered again), never an undoing")
                continue
            dis = e.get("disproves")
            crit: tuple[str, ...] = ()
            if dis == "criteria":
                crit, _ = self.criterion_ids(e.get("criteria"), where)
                if not crit:
                    self.note("left_out", where, "a contradiction of criteria that names none of the target's")
                    continue
            elif dis != "conclusion":
                self.note("left_out", where, f"disproves {dis!r}: neither the conclusion nor criteria")
                continue
            cs = self.cites(e.get("cites"), where)
            shown = [c for c in cs if self.ev.beyond_words(c, self.tid)]
            if not shown:
                self.note("left_out", where, "it cites no evidence beyond the agent's words (a tool result, an error, "
                                             "the person's input after the inputs that set the target); "
                          + self.ev.why_not(cs, self.tid))
                continue
            out.append(Contradiction(eid, dis, crit, self.ids(shown), _str(e.get("what")), eid in standing))
        return out

    # --- rework ---------------------------------------------------------------------------------------

    def rework(self, raw: Any) -> list[ReworkRound]:
        out: list[ReworkRound] = []
        work, before = self.received, self.ev.before  # the work the target received, not any step of its talks
        for n, e in enumerate(_list(raw), 1):
            e = _obj(e)
            where = f"{self.tid} rework {n}"
            trig = e.get("trigger")
            tc = self.ev.cite(e.get("trigger_step"))
            if trig not in TRIGGERS:
                self.note("left_out", where, f"trigger {trig!r}, which is no trigger")
                continue
            if (trig == "person" and not self.ev.person(tc)) or (trig != "person" and not self.ev.tool_result(tc)):
                need = "an input of the person" if trig == "person" else "a tool step that returned"
                self.note("left_out", where, f"a {trig} trigger at {tc.fact}: it must be {need}")
                continue
            # in the order the work happened: a sub-task's step where its starting step is
            at = self.ev.happened
            attempt = [c for c in self.cites(e.get("attempt"), where) if self.ev.is_work(c)
                       and (c.step in work or c.step in before) and at(c) <= at(tc)]  # type: ignore[operator]
            redo = [c for c in self.cites(e.get("redo"), where) if self.ev.is_work(c) and c.step in work
                    and at(c) > at(tc)]  # type: ignore[operator]
            if not attempt or not redo:
                self.note("left_out", where, "attempt, trigger and redo do not come in that order, each shown: "
                          + ("no step of the agent's work for the target (or before the window) at or before the "
                             "trigger" if not attempt else "no step of the agent's work for the target after the trigger"))
                continue
            cause = e.get("cause")
            given = None
            if cause not in CAUSES:
                self.note("changed", where, f"cause {cause!r}, which is no cause: unknown")
                given, cause = str(cause), "unknown"
            elif cause == "requirement_change" and trig != "person":
                self.note("changed", where, f"requirement_change with a {trig} trigger: only the person can change a "
                                            "requirement: unknown")
                given, cause = cause, "unknown"
            redo.sort(key=at)  # type: ignore[arg-type,return-value]
            out.append(ReworkRound(f"{self.tid}.r{len(out) + 1}", self.ids(attempt), trig, tc.step, self.ids(redo), cause,  # type: ignore[arg-type]
                                   tc.step, redo[-1].step, _str(e.get("what")), given))  # type: ignore[arg-type]
        return out

    # --- findings ---------------------------------------------------------------------------------------

    def findings(self, raw: Any) -> list[Finding]:
        out = []
        for n, e in enumerate(_list(raw), 1):
            e = _obj(e)
            where = f"{self.tid} finding {n}"
            a = self.ev.cite(e.get("anchor"))
            what = _str(e.get("what"))
            if what is None:
                self.note("left_out", where, "a finding that says nothing")
                continue
            if a.step is None or (a.step not in self.ev.work(self.tid) and a.step not in self.ev.before):
                self.note("left_out", where, f"anchored at {a.fact}: no step of the target's work or before the window")
                continue
            cs = self.cites(e.get("cites"), where)
            if not cs:
                self.note("left_out", where, "a finding that cites no step")
                continue
            out.append(Finding(self.next_finding(), self.tid, a.step, what, _str(e.get("why")), _str(e.get("avoid")),
                               self.ids(cs)))
        return out

    # --- the account --------------------------------------------------------------------------------------

    def part(self, raw: Any, where: str, shows: Callable[[Cite], bool], need: str) -> Part | None:
        e = _obj(raw)
        if not e:
            return None
        text = _str(e.get("text"))
        shown = [c for c in self.cites(e.get("cites"), where) if shows(c)]
        if text is None or not shown:
            self.note("left_out", where, f"nothing it cites shows it: it needs {need}" if text else "a part with no text")
            return None
        return Part(text, self.ids(shown))

    def account(self, raw: Any) -> Account:
        e = _obj(raw)
        ev, tid = self.ev, self.tid
        question = None
        q = _obj(e.get("question"))
        if q:
            checks = []
            for n, c in enumerate(_list(q.get("checks")), 1):
                c = _obj(c)
                p = self.part({"text": c.get("what"), "cites": c.get("cites")}, f"{tid} account check {n}",
                              ev.tool_result, "a tool step that shows what it found")
                if p:
                    checks.append(CheckMade(p.text, _str(c.get("found")), _str(c.get("holds")), p.cites))
            ruled = [p for n, r in enumerate(_list(q.get("ruled_out")), 1)
                     if (p := self.part(r, f"{tid} account ruled out {n}", ev.tool_result, "a tool step that shows it"))]
            question = QuestionAccount(self.part(q.get("asked"), f"{tid} account asked", ev.person, "the person's input"),
                                       tuple(checks), tuple(ruled),
                                       self.part(q.get("answer"), f"{tid} account answer", self.delivers,
                                                 "a reply of the agent"))
        ops = []
        for n, o in enumerate(_list(e.get("operations")), 1):
            o = _obj(o)
            where = f"{tid} account operation {n}"
            req = self.part(o.get("request"), f"{where} request",
                            lambda c: c.step is not None and ev.conv.step(c.step).kind == "tool",
                            "the tool step that sent it")
            if req is None:
                self.note("left_out", where, "an operation with no request shown")
                continue
            at = min(ev.cite(s).seq for s in req.cites)  # type: ignore[type-var]
            resp = self.part(o.get("response"), f"{where} response",
                             lambda c: ev.tool_result(c) and c.seq >= at, "a step that returned, at or after the request")  # type: ignore[operator]
            conf = self.part(o.get("confirmation"), f"{where} confirmation",
                             lambda c: c.seq is not None and c.seq > at and (ev.tool_result(c) or ev.person_after_setting(c, tid)),
                             "a later step that shows it happened, or the person's input after the inputs that set the target")
            ops.append(RemoteOperation(_str(o.get("system")), _str(o.get("operation")),
                                       ev.conv.step(req.cites[0]).name, req, resp, conf))
        groups, placed = [], set()
        own = set(self.own_ops)
        for n, g in enumerate(_list(e.get("files")), 1):
            g = _obj(g)
            where = f"{tid} account files {n}"
            mine = []
            for oid in _list(g.get("operations")):
                if not isinstance(oid, str):
                    self.note("left_out", where, f"operation {oid!r}: no operation the record shows")
                elif oid not in own:
                    why = "no operation the record shows" if oid not in self.op_step else "not one of the target's own"
                    self.note("left_out", where, f"operation {oid!r}: {why}")
                elif oid in placed:
                    self.note("left_out", where, f"operation {oid}: in another group already (each is in one)")
                else:
                    placed.add(oid)
                    mine.append(oid)
            if not mine:
                self.note("left_out", where, "a group of files that names none of the target's own operations")
                continue
            groups.append(FileGroup(_str(g.get("area")), _str(g.get("category")), _str(g.get("changed")), tuple(mine)))
        ungrouped = tuple(o for o in self.own_ops if o not in placed)
        if ungrouped:
            self.note("filled_in", f"{tid} account files", f"its own operations {', '.join(ungrouped)} are in no group: "
                                                            "listed ungrouped")
        return Account(question, tuple(ops), tuple(groups), self.own_ops, ungrouped)

    # --- what it cites ---------------------------------------------------------------------------------

    def cited(self, criteria: Sequence[CriterionState], basis_cites: tuple[str, ...], claims: Sequence[ClaimCheck],
              events: Sequence[Event], contradictions: Sequence[Contradiction], rework: Sequence[ReworkRound],
              findings: Sequence[Finding], account: Account) -> tuple[str, ...]:
        got: set[str] = set(basis_cites)
        for c in criteria:
            got.update(c.cites)
        for cl in claims:
            got.update((cl.said, *cl.cites))
        for x in (*events, *contradictions):
            got.update(x.cites)
        for r in rework:
            got.update((*r.attempt, r.trigger_step, *r.redo))
        for f in findings:
            got.update((f.anchor, *f.cites))
        q = account.question
        parts: list[Part | None] = [q.asked, q.answer, *q.ruled_out] if q else []
        parts += [p for o in account.operations for p in (o.request, o.response, o.confirmation)]
        for p in parts:
            if p:
                got.update(p.cites)
        if q:
            for ch in q.checks:
                got.update(ch.cites)
        for o in account.files:
            got.update(s for s in (self.op_step.get(x) for x in o.operations) if s)
        return tuple(sorted(got, key=lambda s: int(s[1:])))


__all__ = ["TargetCheck", "level_of"]
