"""How each target ended (spec: "How each target ended"): its criteria as the achievement stage
kept them, the deliveries standing at the end, the contradictions and undoings that apply, the
level, the record and final scores, the class, and asz's own findings. Pure functions over the
stage files' JSON; :mod:`asz_core.judge.close` prices and times what they name."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from typing import Any

from attrs import field, frozen

from . import statement as S

STATES = ("met", "not_met", "unknown", "not_captured")
LEVELS = ("achieved", "partial", "not_achieved", "unverified")


def level_of(states: Sequence[str]) -> str:
    """The level from the live criteria's states (decisions.md section 5; none: unverified): the
    one rule, used by the achievement stage when it writes a level and by the close, which
    derives it again from the states it reads rather than taking a level written beside them."""
    if states and all(s == "met" for s in states):
        return "achieved"
    met, no = sum(1 for s in states if s == "met"), sum(1 for s in states if s == "not_met")
    if met and no:
        return "partial"
    if no:
        return "not_achieved"
    return "unverified"


def standing(events: Iterable[tuple[str, str, Sequence[str], Sequence[str]]]) -> tuple[list[str], dict[str, tuple[str, ...]]]:
    """Over events ``(id, kind, corrects, deliveries)`` in recorded order: the deliveries standing
    at the end, and for each undoing the deliveries it took back (spec: "Deliveries and
    contradictions"). The deliveries standing are every delivery except those a later delivery
    again replaced: one that names what it corrects replaces those, one naming none replaces all.
    An undoing that names no delivery took back every one standing then. The one place this is
    computed: the achievement stage and the close both call it."""
    out: list[str] = []
    took: dict[str, tuple[str, ...]] = {}
    for eid, kind, corrects, deliveries in events:
        if kind == "delivered":
            out.append(eid)
        elif kind == "delivered_again":
            named = [d for d in corrects if d in out]
            out = [d for d in out if named and d not in named]
            out.append(eid)
        elif kind == "undone":
            took[eid] = tuple(deliveries) or tuple(out)
    return out, took


@frozen
class Judged:
    criteria: tuple[S.Criterion, ...]
    level: str
    basis: str
    record: Fraction
    final: Fraction
    class_: str
    contradictions: list[dict[str, Any]]
    """Contradictions of deliveries standing at the end: those that apply."""
    undoings: list[dict[str, Any]]
    """Undoings that apply: one of the deliveries they took back still stands at the end."""
    events: list[dict[str, Any]]
    anchors: dict[str, str | None] = field(factory=dict)
    """Criterion id -> its first evidence that shows its state, in recorded order (the first of
    its citations when the stage file names none that shows it)."""

    @property
    def met(self) -> int:
        return sum(1 for c in self.criteria if c.state == "met")

    @property
    def unknown(self) -> int:
        """Live criteria unknown or not captured."""
        return sum(1 for c in self.criteria if c.state in ("unknown", "not_captured"))


def judge_target(t: dict[str, Any], a: dict[str, Any], seq_of: Callable[[str | None], int]) -> Judged:
    """A target of the targets stage with what the achievement stage kept of it (``a``, empty
    when it did not run)."""
    states = {c["id"]: c for c in a.get("criteria", []) if isinstance(c, dict) and c.get("id")}
    live = [c for c in t.get("criteria", []) if not c.get("dropped")]
    events = [e for e in a.get("events", []) if isinstance(e, dict) and e.get("id")]
    events.sort(key=lambda e: seq_of(e.get("step")))
    at_end, took = standing((e["id"], e.get("kind"), e.get("corrects") or (), e.get("deliveries") or ()) for e in events)
    end = set(at_end)
    contra = [x for x in a.get("contradictions", []) if isinstance(x, dict) and x.get("delivery") in end]
    undone = [e for e in events if e["id"] in took and any(d in end for d in took[e["id"]])]
    whole = any(not x.get("criteria") for x in [*contra, *undone])  # the conclusion, or the whole result
    off = {c for x in [*contra, *undone] for c in (x.get("criteria") or [])}
    crit = []
    for c in live:
        got = states.get(c["id"], {})
        st = got.get("state") if got.get("state") in STATES else "unknown"
        crit.append(S.Criterion(c["id"], c.get("text", ""), st, "not_met" if c["id"] in off else st,
                                tuple(got.get("citations") or ()), got.get("reason")))
    n = len(crit)
    record = Fraction(sum(1 for c in crit if c.state == "met"), n) if n else Fraction(0)
    final = Fraction(0) if whole or not n else Fraction(sum(1 for c in crit if c.final == "met"), n)
    level = level_of([c.state for c in crit])  # derived from the states read, never a level written beside them
    if t.get("state") in S.APART:
        klass = t["state"]
    elif contra:
        klass = "contradicted"
    elif undone:
        klass = "reverted"
    else:
        klass = level
    anchors = {}
    for c in crit:
        shown = [x for x in states.get(c.id, {}).get("shown_by") or () if isinstance(x, str)]
        anchors[c.id] = min(shown, key=seq_of) if shown else (c.citations[0] if c.citations else None)
    return Judged(tuple(crit), level, a.get("basis") or "no_evidence", record, final, klass, contra, undone, events,
                  anchors)


def findings_of(tid: str, wanted: bool, j: Judged, rounds: list[S.Round], corrections: tuple[str, ...],
                step_of_input: dict[str, str]) -> list[tuple[str | None, int, dict[str, Any]]]:
    """asz's own findings for one target, each (anchor step, order among findings at one step,
    fields): each criterion not met at its first evidence that shows it, each applying contradiction and
    undoing at its event, each round of rework at its trigger, each correction at the person's
    input unless a round began there. A target no longer wanted keeps only the last two kinds."""
    out: list[tuple[str | None, int, dict[str, Any]]] = []
    if wanted:
        for c in j.criteria:
            if c.state == "not_met":
                out.append((j.anchors.get(c.id), 0,
                            {"kind": "criterion_not_met", "target": tid, "about": c.id, "what": f"{c.id} not met: {c.text}"}))
        by_id = {e["id"]: e for e in j.events}
        for x in j.contradictions:
            out.append((by_id.get(x.get("delivery"), {}).get("step"), 1,
                        {"kind": "contradiction", "target": tid, "about": x.get("id", ""),
                         "what": f"the delivery {x.get('delivery')} is contradicted"
                                 + (f" on {', '.join(x['criteria'])}" if x.get("criteria") else " in its conclusion")}))
        for e in j.undoings:
            out.append((e.get("step"), 1, {"kind": "undoing", "target": tid, "about": e["id"],
                                           "what": f"the result was undone ({e['id']})"}))
    triggers = set()
    for r in rounds:
        triggers.add(r.trigger)
        out.append((r.trigger, 2, {"kind": "rework", "target": tid, "about": r.id,
                                   "what": f"rework {r.id}" + (f" ({r.cause})" if r.cause else "")}))
    for i in corrections:
        sid = step_of_input.get(i)
        if sid not in triggers and i not in triggers:
            out.append((sid, 3, {"kind": "correction", "target": tid, "about": i, "what": f"the person corrected {tid} ({i})"}))
    return out


def unjudged(ran: bool, judged: bool, state: str | None) -> bool:
    """A target still wanted that the achievement stage, which ran (``ran``), did not judge (its
    call failed twice): its class is ``not_judged``, it has no score, and it is said "not
    judged" wherever it is shown. Without the stage every target is unverified instead."""
    return ran and not judged and state not in S.APART


def class_words(c: str | None) -> str:
    """A class as -show, the report and compare say it: ``not_judged`` is "not judged"."""
    return "not judged" if c == S.NOT_JUDGED else c or "—"


def not_judged(t: dict[str, Any], st: dict[str, Any]) -> bool:
    """:func:`unjudged` over a final statement as close.json holds it. A statement closed before
    the class existed (the class ``unverified``, ``judged`` false) reads the same."""
    o = t.get("outcome") or {}
    if o.get("class") == S.NOT_JUDGED:
        return True
    ran = str((st.get("basis") or {}).get("achievement", "")).startswith("used")
    return unjudged(ran, o.get("judged") is not False, t.get("state"))
