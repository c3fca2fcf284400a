"""Cost per target: every model call of the judged work given to the targets whose work it was
(spec: "Cost"; docs/target-cost.md).

A target's cost is the cost of its talks. A talk serving several targets is cut at its inputs:
each call goes to the targets the last directing input before it directed work to (create,
refine, steer, correct). Accepting, cancelling, thanks and an input no person wrote direct
nothing, so the work after them goes on for what came before. A child agent's calls take the
place of the step that started it (through the starts relations as deep as they go: a
grandchild's calls sit where the main-stream step that began its chain sits). Only calls that
one input directed to several targets, or that come before any directing input of their talk,
are split, equally among those targets (before any directing input: among the targets that
claim the talk), and each such share is written. Talks no target claims, loose work and
streams no single step can be shown to have started are unassigned.

Shares are exact: a call split three ways gives each target a third of each of its counts and
of its money, kept as a :class:`~fractions.Fraction`, so the targets and the unassigned part add
up to the priced work exactly, in tokens and in money; only what is shown is rounded.

The priced work is what the window judges: its main talks with the sub-tasks they started, and,
in a run over the whole conversation, the loose work and the unattributed streams (the ledger's
total). Talks before the window are context and are not priced.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from decimal import ROUND_HALF_EVEN, Decimal
from fractions import Fraction
from typing import Any

from attrs import frozen

from ..assembly import LOOSE, UNATTRIBUTED, Conversation, stream_anchors
from .judgment import InputJudgment, Target
from ..ledger import TOKEN_KEYS, CallCost, Ledger, Tally
from ..records import USAGE_TYPES

DIRECTING = frozenset({"create", "refine", "steer", "correct"})
"""The actions that direct work to a target; every other action directs nothing."""
SEVERAL = "one input directed several targets"
BEFORE = "before any directing input"

MONEY_PLACES = Decimal("0.000001")


# --- exact amounts ------------------------------------------------------------------------------

@frozen
class Portion:
    """An exact part of the ledger: sums of whole calls and of fractions of calls.

    ``calls``, ``tokens``, ``unknown``, ``unpriced`` and ``incomplete`` count as a
    :class:`~asz_core.ledger.Tally` does (a third of a call whose output is unknown adds a third to
    ``unknown['output']``), ``money`` is the money of the priced calls' known counts. Every figure
    is exact; ``tokens_rounded`` and ``money_rounded`` are what a person is shown."""

    calls: Fraction
    tokens: dict[str, Fraction]
    unknown: dict[str, Fraction]
    money: Fraction
    unpriced: Fraction
    incomplete: Fraction
    tokens_rounded: dict[str, int]
    money_rounded: Decimal

    @property
    def token_sum(self) -> Fraction:
        return sum((self.tokens[k] for k in USAGE_TYPES), Fraction(0))

    @property
    def priced(self) -> bool:
        """True when no call of it is unpriced (its money is the money of all its calls' known counts)."""
        return self.unpriced == 0

    @classmethod
    def of(cls, groups: dict[int, Tally]) -> Portion:
        """The exact sum of ``tally / n`` over ``groups`` (n -> the calls split n ways)."""
        calls, money, unpriced, incomplete = Fraction(0), Fraction(0), Fraction(0), Fraction(0)
        tokens = dict.fromkeys(TOKEN_KEYS, Fraction(0))
        unknown = dict.fromkeys(USAGE_TYPES, Fraction(0))
        for n, t in groups.items():
            calls += Fraction(t.calls, n)
            money += Fraction(t.money) / n
            unpriced += Fraction(t.unpriced, n)
            incomplete += Fraction(t.incomplete, n)
            for k in TOKEN_KEYS:
                tokens[k] += Fraction(t.tokens[k], n)
            for k in USAGE_TYPES:
                unknown[k] += Fraction(t.unknown[k], n)
        return cls._make(calls, tokens, unknown, money, unpriced, incomplete)

    @classmethod
    def sum(cls, parts: Iterable[Portion]) -> Portion:
        calls, money, unpriced, incomplete = Fraction(0), Fraction(0), Fraction(0), Fraction(0)
        tokens = dict.fromkeys(TOKEN_KEYS, Fraction(0))
        unknown = dict.fromkeys(USAGE_TYPES, Fraction(0))
        for p in parts:
            calls += p.calls
            money += p.money
            unpriced += p.unpriced
            incomplete += p.incomplete
            for k in TOKEN_KEYS:
                tokens[k] += p.tokens[k]
            for k in USAGE_TYPES:
                unknown[k] += p.unknown[k]
        return cls._make(calls, tokens, unknown, money, unpriced, incomplete)

    @classmethod
    def _make(cls, calls: Fraction, tokens: dict[str, Fraction], unknown: dict[str, Fraction], money: Fraction,
              unpriced: Fraction, incomplete: Fraction) -> Portion:
        return cls(calls, tokens, unknown, money, unpriced, incomplete,
                   {k: round(v) for k, v in tokens.items()}, decimal_of(money))


def decimal_of(f: Fraction, places: Decimal = MONEY_PLACES) -> Decimal:
    """A fraction shown as a Decimal, rounded half-even to ``places``."""
    return (Decimal(f.numerator) / Decimal(f.denominator)).quantize(places, rounding=ROUND_HALF_EVEN)


# --- the records --------------------------------------------------------------------------------

@frozen
class SharedCall:
    """A call split equally between targets, and why."""

    call: str
    """The model call's step id."""
    talk: str
    """The main talk it is in, or whose step started the sub-task it is in."""
    among: tuple[str, ...]
    fraction: Fraction
    """What each of ``among`` gets of it: 1/len(among)."""
    why: str
    """``one input directed several targets`` or ``before any directing input``."""
    input: str | None
    """The input that directed it to several targets (None before any directing input)."""


@frozen
class TargetCost:
    target: str
    talks: tuple[str, ...]
    """The judged talks it claims."""
    calls: int
    """Calls wholly its own."""
    shared: int
    """Calls it shares with other targets (each listed in ``TargetCosts.shared``)."""
    cost: Portion


@frozen
class UnassignedCost:
    what: str
    """A talk id, ``loose``, or a stream id."""
    kind: str
    """``talk`` (no target claims it), ``loose`` (main-stream work before the first input, with
    what it started) or ``unattributed`` (a stream no single step can be shown to have started)."""
    reason: str | None
    cost: Portion


@frozen
class TargetCosts:
    """What each target cost, what no target claims, and the calls that were split."""

    targets: tuple[TargetCost, ...]
    unassigned: tuple[UnassignedCost, ...]
    unassigned_total: Portion
    total: Portion
    """The priced work: the targets and the unassigned part add up to it exactly."""
    shared: tuple[SharedCall, ...]
    prices: str
    """The price file's name and SHA-256."""


class Costing:
    """The calls of the priced work, each with the targets it went to; and the record.

    ``of_call[step]`` is the tuple of targets a call went to (each gets ``1/len`` of it), or ``()``
    for a call no target claims. Close and the report price any set of calls per target with
    :meth:`portion` (the part labelled avoidable, a round of rework), so every figure uses one cut."""

    def __init__(self, record: TargetCosts, of_call: dict[str, tuple[str, ...]], calls: dict[str, CallCost],
                 at: dict[str, tuple[str, ...]] | None = None, anchor: dict[str, str] | None = None) -> None:
        self.record, self.of_call, self.calls = record, of_call, calls
        self.at = at or {}
        """Each main-stream step of a judged talk -> the targets work at it goes to (``()``: none)."""
        self.anchor = anchor or {}
        """Each child stream a main talk alone started -> the main-stream step that began its chain."""
        self.targets_stage: str | None = None
        """Of a run directory (:func:`for_run`): its targets stage's file as read (``complete``,
        ``failed (…)``, ``unreadable (…)``, …), what the cut rests on."""

    def talk_targets(self, roots: dict[str, str], step: Any) -> tuple[str, ...]:
        """The targets that claim the talk ``step`` is in (a child stream's step: the main talk
        that began its chain, ``roots`` being the window's :func:`~asz_core.assembly.stream_roots`),
        in the targets' order: where a step no model call asked for belongs (spec: "A step that no
        model call asked for, as some runtimes record, belongs to the targets of its talk"). The
        one place this is read, for the achievement stage (a target's work) and the close (whose
        file operations)."""
        root = step.talk if step.stream == "m" else roots.get(step.stream)
        return tuple(r.target for r in self.record.targets if root in r.talks)

    def targets_of_stream(self, stream: str) -> tuple[str, ...]:
        """The targets a sub-task serves: those of the talk that started it, at its starting step."""
        a = self.anchor.get(stream)
        return self.at.get(a, ()) if a else ()

    def portion(self, target: str, steps: Iterable[str]) -> Portion:
        """The target's exact share of the calls ``steps`` (calls it has no share of add nothing)."""
        groups: dict[int, Tally] = {}
        for sid in dict.fromkeys(steps):
            got = self.of_call.get(sid)
            if got and target in got:
                groups.setdefault(len(got), Tally()).add(self.calls[sid])
        return Portion.of(groups)

    def unassigned_portion(self, steps: Iterable[str]) -> Portion:
        """The calls of ``steps`` that no target claims."""
        t = Tally.of(self.calls[s] for s in dict.fromkeys(steps) if s in self.of_call and not self.of_call[s])
        return Portion.of({1: t})


# --- the cut ------------------------------------------------------------------------------------

def cost_per_target(window: Any, led: Ledger, targets: Sequence[Target], inputs: Sequence[InputJudgment]) -> Costing:
    """Cut the window's priced work between ``targets`` (the targets stage's, with its inputs'
    actions). ``led`` is the ledger of ``window.conv``."""
    conv: Conversation = window.conv
    judged = tuple(window.judged)
    jset = set(judged)
    known = {t.id for t in targets}
    directs: dict[str, tuple[str, ...]] = {}
    for ij in inputs:
        got = tuple(dict.fromkeys(a.target for a in ij.actions if a.action in DIRECTING and a.target in known))
        if got:
            directs[ij.step] = got  # type: ignore[assignment]
    # The targets a talk serves: those that claim it, and those an input of it directed work to
    # (the targets stage adds the latter itself; a stage file that did not still cuts the same).
    claims: dict[str, list[str]] = {}
    for t in targets:
        for k in t.talks:
            if k in jset and t.id not in claims.setdefault(k, []):
                claims[k].append(t.id)
    for kid in judged:
        for sid in conv.talk(kid).inputs:
            for tid in directs.get(sid, ()):
                if tid not in claims.setdefault(kid, []):
                    claims[kid].append(tid)
    calls = {c.step: c for c in led.calls}
    anchor = {sid: a for sid, a in stream_anchors(conv).items() if a is not None}
    under: dict[str, list[CallCost]] = {}
    for c in led.calls:
        if c.stream != "m" and c.root in jset and c.stream in anchor:
            under.setdefault(anchor[c.stream], []).append(c)

    groups: dict[str, dict[int, Tally]] = {t.id: {} for t in targets}
    whole = dict.fromkeys(groups, 0)
    split = dict.fromkeys(groups, 0)
    of_call: dict[str, tuple[str, ...]] = {}
    at: dict[str, tuple[str, ...]] = {}
    shared: list[SharedCall] = []
    unassigned: list[UnassignedCost] = []
    by_talk = {t.id: t for t in led.talks}

    for kid in judged:
        talk = conv.talk(kid)
        claimants = tuple(claims.get(kid, ()))
        if not claimants:
            tally = by_talk[kid].with_subagents if kid in by_talk else Tally()
            for sid in talk.steps:
                at[sid] = ()
                if sid in calls:
                    of_call[sid] = ()
                for c in under.get(sid, ()):
                    of_call[c.step] = ()
            unassigned.append(UnassignedCost(kid, "talk", "no target claims it", Portion.of({1: tally})))
            continue
        cur: tuple[str, ...] | None = None
        cur_input: str | None = None
        for sid in talk.steps:
            if sid in directs:
                cur, cur_input = directs[sid], conv.step(sid).input
            at[sid] = cur if cur is not None else claimants
            here = [calls[sid]] if sid in calls else []
            for c in (*here, *under.get(sid, ())):
                to = cur if cur is not None else claimants
                of_call[c.step] = to
                n = len(to)
                for tid in to:
                    groups[tid].setdefault(n, Tally()).add(c)
                    if n == 1:
                        whole[tid] += 1
                    else:
                        split[tid] += 1
                if n > 1:
                    shared.append(SharedCall(c.step, kid, to, Fraction(1, n), SEVERAL if cur is not None else BEFORE,
                                             cur_input if cur is not None else None))

    if window.whole:
        if led.loose.calls or led.loose_streams:
            unassigned.append(UnassignedCost(LOOSE, "loose", "main-stream work before the first input", Portion.of({1: led.loose})))
        for st in led.streams:
            if st.root == UNATTRIBUTED:
                unassigned.append(UnassignedCost(st.id, "unattributed", st.unattributed or "started by an unattributed stream",
                                                 Portion.of({1: st.tally})))
        for c in led.calls:
            if c.root in (LOOSE, UNATTRIBUTED):
                of_call[c.step] = ()

    talks_of: dict[str, list[str]] = {t.id: [] for t in targets}
    for kid in judged:
        for tid in claims.get(kid, ()):
            talks_of[tid].append(kid)
    rows = tuple(TargetCost(t.id, tuple(talks_of[t.id]), whole[t.id], split[t.id], Portion.of(groups[t.id]))
                 for t in targets)
    un_total = Portion.sum(u.cost for u in unassigned)
    total = Portion.sum([*(r.cost for r in rows), un_total])
    rec = TargetCosts(rows, tuple(unassigned), un_total, total, tuple(shared),
                      f"{led.prices.name} {led.prices.sha256}")
    return Costing(rec, of_call, calls, at, anchor)


def priced_work(window: Any, led: Ledger) -> Tally:
    """What the window prices, straight from the ledger: its judged talks with their sub-tasks,
    and (whole conversation) the loose work and the unattributed streams."""
    jset = set(window.judged)
    parts = [t.with_subagents for t in led.talks if t.id in jset]
    if window.whole:
        parts += [led.loose, led.unattributed]
    return Tally.sum(parts)


# --- from a run's files -------------------------------------------------------------------------

def for_run(path: Any, store: Any = None) -> Costing:
    """Cost per target of a run directory: its window at its head, priced with its price file,
    cut by its targets stage (every talk unassigned when that stage holds no targets: failed,
    skipped, missing or unreadable, read by :mod:`.stage_files`; ``targets_stage`` says which)."""
    from pathlib import Path

    from .. import ledger, window as windows
    from ..store import Store
    from .run_files import run_json
    from .stage_files import Pin, read

    p = Path(path)
    run = run_json(p)
    st = store or Store.open()
    w = windows.build(st, run["conversation"], run["head"], run["window"])
    led = ledger.build(w.conv, ledger.load_prices(run["prices"].get("path")))
    got = read(p, "targets", Pin.of_json(run))
    sf = got.record if got.usable else None
    costing = cost_per_target(w, led, sf.targets if sf else (), sf.inputs if sf else ())
    costing.targets_stage = got.said
    return costing


__all__ = ["Portion", "SharedCall", "TargetCost", "UnassignedCost", "TargetCosts", "Costing", "cost_per_target",
           "priced_work", "for_run", "DIRECTING", "SEVERAL", "BEFORE"]
