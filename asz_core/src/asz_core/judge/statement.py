"""Records of the final statement: what close.json's ``statement`` holds (docs/close.md).

Frozen attrs classes, no serialisation code (JSON goes through :mod:`asz_core.convert`). Every
number here is computed by :mod:`asz_core.judge.close` from the record, the price file and the stage
files; nothing an evaluator said is a number here. Exact values (a call's share, a score) are
written as fractions (``"1/3"``) beside their rounded amounts, so a reader can check a sum.
"""

from __future__ import annotations

from decimal import Decimal

from attrs import field, frozen

CLASSES = ("contradicted", "reverted", "not_achieved", "partial", "unverified", "achieved")
"""Outcome classes, most severe first (decisions.md section 6); ``cancelled`` and ``replaced``
stand apart from the order."""
APART = ("cancelled", "replaced")
NOT_JUDGED = "not_judged"
"""The class of a target still wanted that the achievement stage, which ran, did not judge (its
call failed twice): no level of its own, outside the order, left out of its goal's class."""
NOT_AVOIDABLE = ("productive", "necessary_exploration", "changed_requirement")
AVOIDABLE = ("repeated_failure", "avoidable_error", "redundant_work", "unrequested_work", "misdirected_delegation",
             "redundant_delegation", "misled_by_subtask")
NOT_REVIEWED = "not_reviewed"
CAUSES = ("main_agent", "subtask", "unknown")


@frozen
class Amount:
    """A sum of call shares: tokens (the four types' known counts) and money, each rounded from
    the exact sum. ``money`` is None when a call in it is unpriced (its tokens still count)."""

    calls: int = 0
    """Calls with a share in it (a shared call counts once here, whatever its share)."""
    tokens: int = 0
    money: Decimal | None = Decimal(0)
    unpriced: int = 0
    """Calls in it with no price (no model, or no price for their model)."""
    unknown: int = 0
    """Calls in it with a count unknown: their known counts only are in ``tokens``."""
    at_least: Decimal | None = None
    """Where its money is not whole (a call in it unpriced, or a count of one unknown): a lower
    bound of what it cost, the priced calls' known counts with their output floors priced (each
    call's ``CallPrice.at_least``, what the ledger's ``money_bound`` adds up). None when ``money``
    is whole: then ``money`` is exact."""


@frozen
class Span:
    start: str
    end: str


@frozen
class Share:
    """A call split between targets: each target's exact share of it."""

    step: str
    """The model call (a step id)."""
    targets: tuple[str, ...]
    share: str
    """Each target's share, as a fraction (``1/2``)."""
    why: str
    """``one input directed several targets`` or ``before any directing input``."""


@frozen
class Times:
    observed_seconds: float | None
    """The union of the spans of its talks and their child agents (two at once count once)."""
    observed: tuple[Span, ...]
    avoidable_seconds: float | None
    """The union of the main stream's avoidable runs; None when no label was reviewed."""
    avoidable: tuple[Span, ...] = ()


@frozen
class Costs:
    total: Amount
    by_label: dict[str, Amount]
    """Label (decisions.md section 8, or ``not_reviewed``) -> its part."""
    avoidable: Amount
    avoidable_by_cause: dict[str, Amount]
    """``main_agent``, ``subtask`` (the part sub-agents caused) and ``unknown`` (the record does
    not show whose): the avoidable part split by who caused it."""
    not_reviewed: Amount
    """The part no label covers."""
    subagents: Amount
    """The part that child agents' own calls made (whatever its label)."""


@frozen
class Round:
    """A round of rework (achievement's t1.r1) and what its calls cost, each call once."""

    id: str
    trigger: str | None
    """The step or input that showed the attempt had to be done again."""
    trigger_kind: str | None
    cause: str | None
    last_step: str | None
    cost: Amount
    by_label: dict[str, Amount]


@frozen
class FileOp:
    id: str
    """The operation (o3)."""
    path: str | None
    shows: str
    status: str | None
    step: str | None
    share: str
    """The target's share of the call that made it (``1``, ``1/2``)."""


@frozen
class Finding:
    id: str
    """f1, f2, … in recorded order of their anchors."""
    kind: str
    """``criterion_not_met``, ``contradiction``, ``undoing``, ``rework`` or ``correction``."""
    target: str
    anchor: str | None
    """The step (or input step) where the problem happened."""
    about: str
    """What it concerns: a criterion, an event or a round id, an input id."""
    what: str


@frozen
class Criterion:
    id: str
    text: str
    state: str
    """met, not_met, unknown or not_captured (achievement's; unknown when it did not run)."""
    final: str
    """The state after the standing contradictions and undoings are applied."""
    citations: tuple[str, ...] = ()
    reason: str | None = None


@frozen
class Outcome:
    level: str
    """achieved, partial, not_achieved or unverified (decisions.md section 5)."""
    basis: str
    met: int
    unknown: int
    """Live criteria unknown or not captured."""
    live: int
    record_score: str | None
    """met / live as a fraction (unknown counts as not met); None when no achievement stage ran."""
    final_score: str | None
    applied: tuple[str, ...]
    """Contradictions and undoings of standing deliveries applied to the final score."""
    class_: str
    rework: tuple[Round, ...]
    rework_cost: Amount
    """Every call of every round, each counted once."""
    judged: bool = True
    """False when the achievement stage did not judge it (its call failed twice, or the stage did
    not run, or it was cancelled or replaced): then it has no score (null, never 0) and is left out
    of the run's scores."""


@frozen
class TargetStatement:
    id: str
    statement: str
    goal: str | None
    state: str
    replaced_by: str | None
    talks: tuple[str, ...]
    criteria: tuple[Criterion, ...]
    outcome: Outcome
    cost: Costs
    times: Times
    shares: tuple[Share, ...]
    """The calls it shares with other targets, each with its exact share."""
    corrections: tuple[str, ...]
    """The person's inputs that corrected it."""
    operations: tuple[FileOp, ...]
    findings: tuple[str, ...]
    """Ids of the findings kept for it."""


@frozen
class GoalStatement:
    id: str
    members: tuple[str, ...]
    main_target: str | None
    class_: str | None
    """The most severe class of its judged targets; ``not_judged`` when none was judged."""
    first_finding: str | None
    main_final_score: str | None
    mean_final_score: str | None
    not_judged: tuple[str, ...] = ()
    """Its targets of class ``not_judged``, said beside its class (which they took no part in)."""


@frozen
class Score:
    value: str | None
    """An exact fraction (``2/3``), or None when there is nothing to weigh."""
    rounded: Decimal | None
    unit: str
    """``money`` when every call of the targets is priced, else ``tokens``."""


@frozen
class RunScores:
    achievement: Score
    """The targets' final scores weighted by each one's exact cost share, over those still wanted."""
    efficiency: Score
    """1 - avoidable / reviewed cost."""
    coverage: Score
    """reviewed / total cost."""
    delivered: Score
    """The part of the targets' cost that went to targets achieved (targets still wanted that were
    not judged left out)."""
    judged: Score = Score(None, None, "tokens")
    """The part of the cost of the targets still wanted whose target the achievement stage judged:
    what the achievement score covers (1 when every one was judged)."""


@frozen
class Judging:
    """What the run's evaluators consumed, priced where the price file lists their models."""

    stages: dict[str, Amount]
    total: Amount
    conversation: Amount
    """What the judged conversation (its window) cost, beside it."""


@frozen
class ConclusionStatement:
    """A conclusion of a source, its verdict, and what it changed or why not (docs/sources.md)."""

    id: str
    statement: str
    kind: str | None
    role: str | None
    support: str | None
    lines: tuple[tuple[int, ...], ...]
    inputs: tuple[str, ...]
    unbound: tuple[str, ...]
    superseded_by: str | None
    verdict: str | None
    """The divergence stage's (None: not compared)."""
    judgment: bool
    target: str | None
    delivery: str | None
    disproves: str | None
    criteria: tuple[str, ...]
    applied: bool
    """A contradiction or rollback applied to the final score."""
    changed: str | None
    """What it changed, in words."""
    why_not: str | None
    """Why a contradiction or rollback changes no score."""
    causes: tuple[str, ...] = ()


@frozen
class SourceStatement:
    """A source of the run: its manifest's facts, whether it was compared, its conclusions."""

    id: str
    source: str | None
    status: str
    why: str | None
    taken: str | None
    fetcher: str | None
    how: str | None
    content_type: str | None
    bytes: int | None
    cut: bool
    sha256: str | None
    text_sha256: str | None
    title: str | None
    author: str | None
    published: str | None
    revision: str | None
    comparison: str
    """``compared``, or ``unavailable: why`` (not the same as no contradiction found), or why not."""
    conclusions: tuple[ConclusionStatement, ...] = ()


@frozen
class Statement:
    """The final statement: each target's outcome, the goals', and the run's scores."""

    basis: dict[str, str]
    """Stage -> what the statement could take from it (``used``, or why not)."""
    scores: RunScores
    targets: tuple[TargetStatement, ...]
    goals: tuple[GoalStatement, ...]
    findings: tuple[Finding, ...]
    not_judged: Amount
    """What the targets still wanted that the achievement stage did not judge cost: left out of
    the run's scores."""
    unassigned: Amount
    """The window's calls no target's talk holds."""
    unassigned_operations: tuple[str, ...]
    """The operations no target's calls made."""
    judging: Judging
    notes: tuple[str, ...] = field(factory=tuple)
    sources: tuple[SourceStatement, ...] = ()
    """The sources the run was judged against (docs/sources.md)."""
