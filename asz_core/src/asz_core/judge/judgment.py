"""Records of a judge run: what run.json, stages/<stage>.json and close.json hold, and what an
evaluator backend is given and gives back. Frozen attrs classes, no serialisation code: JSON
goes through :mod:`asz_core.convert` only (docs/judge.md describes every field).

Bump :data:`VERSION` on any change of a file's shape.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

from attrs import field, frozen

from .statement import AVOIDABLE, NOT_AVOIDABLE, NOT_REVIEWED, Statement

VERSION = 2
"""Version of the run files' shape (run.json, stages/*.json, close.json). Bump on change."""

STATUSES = ("complete", "partial", "failed", "skipped")


# --- what an evaluator backend is given and returns ---------------------------------------------

@frozen
class Request:
    """One model request of an evaluator call, as the provider reported it. A count the provider
    never said is None (unknown), never 0."""

    input: int | None = None
    output: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None
    model: str | None = None
    said: bool = True
    """False when the provider never said this request's usage (its answer was lost): counted
    apart, never as zero."""
    reads: tuple[str, ...] = ()
    """The navigation tools this request called (names, in order)."""
    credits: Decimal | None = None
    """What a provider that bills in credits (kiro-cli) reported: its own unit, never tokens."""

    @property
    def input_side(self) -> int | None:
        parts = (self.input, self.cache_read, self.cache_write)
        if not self.said or any(p is None for p in parts):
            return None
        return sum(parts)  # type: ignore[arg-type]


@frozen
class EvaluatorCall:
    """One call a stage gives an evaluator backend. ``navigator`` holds the reading budget."""

    stage: str
    call: int
    """1-based number of the call within its stage."""
    attempt: int
    """1, or 2 when the first attempt gave nothing readable."""
    prompt: str
    schema: dict[str, Any]
    budget: int
    directory: Path
    """The attempt's own directory (prompt.md, requests.jsonl, answer.txt, stderr.txt)."""
    navigator: Any = field(eq=False, repr=False)
    """A :class:`asz_core.navigation.Navigator` over the run's window, with this call's budget."""
    argument: str | None = None
    """The part after ``NAME:`` in the evaluator spec (scripted: its script file)."""
    options: dict[str, Any] = field(factory=dict)
    """The backend's section of ``evaluators:`` in asz.yaml."""
    progress: Any = field(default=None, eq=False, repr=False)
    """Where :meth:`requests_so_far` goes (the stage's progress meter), or None."""

    def requests_so_far(self, requests: Iterable[Request]) -> None:
        """Say, while the call runs, every request that has ended so far (the whole list each
        time): the stage's progress lines count them before the call ends. What the call returns
        is still what its attempt records."""
        if self.progress is not None:
            self.progress(tuple(requests))


@frozen
class CallResult:
    """What a backend returns for one call."""

    answer: Any = None
    """The answer: a JSON value (usually an object), or None when only ``raw`` came back."""
    raw: str = ""
    """The answer exactly as the evaluator gave it (kept as answer.txt)."""
    requests: tuple[Request, ...] = ()
    stderr: str = ""
    error: str | None = None
    """Why the call failed, when it did (nothing readable, a crash, a timeout)."""
    model: str | None = None
    model_window: int | None = None
    """The model's context window, when the evaluator said it."""
    reported_cost: Decimal | None = None
    """What a CLI says the call cost, kept beside asz's own figures, never instead of them."""


# --- what a stage file says of how it ran --------------------------------------------------------

@frozen
class Consumed:
    """What evaluator calls consumed: counted from what the provider reported, never estimated."""

    requests: int = 0
    """Requests whose usage was said."""
    unknown_requests: int = 0
    """Requests whose usage the provider never said: counted apart, never as zero."""
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    unknown: dict[str, int] = field(factory=dict)
    """Per type, said requests that did not say that type."""
    largest_input_side: int | None = None
    """The largest input side (input + cache read + cache write) of one request."""
    model_window: int | None = None
    """The model's window, when the evaluator said it."""
    reported_cost: Decimal | None = None
    credits: Decimal | None = None
    """Credits the provider reported (kiro-cli), in their own unit: never converted into tokens."""


def add_consumed(parts: Iterable[Consumed]) -> Consumed:
    """What ``parts`` consumed, added up (a type unknown in one part stays counted apart)."""
    parts = list(parts)
    unknown: dict[str, int] = {}
    for p in parts:
        for k, v in p.unknown.items():
            unknown[k] = unknown.get(k, 0) + v
    sides = [p.largest_input_side for p in parts if p.largest_input_side is not None]
    wins = [p.model_window for p in parts if p.model_window is not None]
    costs = [p.reported_cost for p in parts if p.reported_cost is not None]
    credits = [p.credits for p in parts if p.credits is not None]
    return Consumed(requests=sum(p.requests for p in parts), unknown_requests=sum(p.unknown_requests for p in parts),
                    input=sum(p.input for p in parts), output=sum(p.output for p in parts),
                    cache_read=sum(p.cache_read for p in parts), cache_write=sum(p.cache_write for p in parts),
                    unknown=unknown, largest_input_side=max(sides) if sides else None,
                    model_window=max(wins) if wins else None, reported_cost=sum(costs) if costs else None,  # type: ignore[arg-type]
                    credits=sum(credits) if credits else None)  # type: ignore[arg-type]


@frozen
class AttemptRecord:
    call: int
    attempt: int
    directory: str
    """Relative to the run directory."""
    prompt_bytes: int
    status: str
    """``ok``, or ``unreadable`` / ``failed`` with ``error``."""
    error: str | None
    read_bytes: int
    """Bytes of navigation answers the call read (its budget's use)."""
    tool_calls: int
    seconds: float
    consumed: Consumed


@frozen
class StageRun:
    """How a stage ran (its header)."""

    mode: str
    """``single`` or ``stream`` (auto resolved), or ``none`` when no call ran."""
    calls: int = 0
    attempts: int = 0
    largest_prompt_bytes: int = 0
    read_bytes: int = 0
    consumed: Consumed = Consumed()
    started: str | None = None
    ended: str | None = None
    seconds: float = 0.0
    attempt_log: tuple[AttemptRecord, ...] = ()


@frozen
class KitRef:
    """The kit a stage was made with, by SHA-256 digest."""

    digest: str
    """The whole kit (every prompt and schema)."""
    prompt_template: str
    """The stage's template as sent: the shared prompt followed by the stage's prompt."""
    schema: str
    path: str


@frozen
class EvaluatorRef:
    spec: str
    """As given: NAME or NAME:ARGUMENT."""
    name: str
    distribution: str
    version: str
    models: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    """What the backend says of itself that a reader of the stage must know (kiro-cli: the chat
    session it leaves in Kiro's history)."""


WHERE_BYTES = 200
WHAT_BYTES = 4096
"""A check's words are bounded: an answer's huge value it quotes is cut, never copied whole into
the note (the stage file keeps what the evaluator said where it belongs, once)."""


def _bounded(limit: int) -> Any:
    def cut(v: Any) -> str:
        s = v if isinstance(v, str) else str(v)
        b = s.encode("utf-8", "backslashreplace")
        if len(b) <= limit:
            return s
        return b[:limit].decode("utf-8", "ignore") + f"… ({len(b):,} bytes in all)"
    return cut


@frozen
class Check:
    """Something asz left out, filled in or changed in an answer, and why."""

    kind: str
    """``left_out``, ``filled_in``, ``changed``, ``unknown`` (what the answer leaves unknown and
    asz keeps so: a target replaced by one the answer does not name), or ``noted`` (something the
    stage cannot fill in that leaves it partial: a target with criteria met and no delivery kept)."""
    where: str = field(converter=_bounded(WHERE_BYTES))
    """What it is about: an input, a target, a goal, a call (at most 200 bytes, then cut)."""
    what: str = field(converter=_bounded(WHAT_BYTES))
    """At most 4,096 bytes, then cut, saying how long it was."""


def check_notes(checks: Iterable[Check]) -> tuple[str, ...]:
    """A stage file's note lines for its checks, one each, as every stage writes them."""
    return tuple(f"{c.kind.replace('_', ' ')}: {c.where}: {c.what}" for c in checks)


# --- targets ---------------------------------------------------------------------------------------

ACTIONS = ("create", "refine", "steer", "accept", "correct", "cancel", "none", "not_from_person", "unknown")
RELATIONS = ("new", "continue", "adjust", "return", "unclear", "not_from_person")
END_STATES = ("open", "closed", "cancelled", "replaced")


@frozen
class Action:
    target: str | None
    """A target id (t3); None for none, not_from_person and unknown."""
    action: str
    note: str | None = None


@frozen
class Relation:
    relation: str
    goal: str | None = None
    follows: str | None = None
    """The earlier input of its goal this one follows (continue, adjust, return)."""
    statement: str | None = None
    """What the goal asks after this input (new, adjust): the goal's evolution."""


@frozen
class InputJudgment:
    input: str
    step: str
    talk: str
    source: str
    call: int
    actions: tuple[Action, ...]
    relations: tuple[Relation, ...]
    answered: bool = True
    """False when the evaluator left it unanswered (its action is unknown, its relation unclear)."""


@frozen
class Criterion:
    id: str
    """t2.c1: given by asz when the stage is accepted."""
    text: str
    dropped: bool = False
    """A criterion the person dropped: kept, marked, never judged."""
    dropped_by: str | None = None


@frozen
class Target:
    id: str
    statement: str
    kind: str | None
    """``change``, ``question`` or ``other`` as the evaluator said."""
    criteria: tuple[Criterion, ...]
    talks: tuple[str, ...]
    state: str
    """open, closed, cancelled or replaced (the end state)."""
    replaced_by: str | None
    goal: str | None
    """The goal of the input that created it; None when that cannot be shown."""
    created_by: str
    """The input that created it."""
    inputs: tuple[str, ...]
    """Every input that acted on it, in order."""


@frozen
class Evolution:
    input: str
    relation: str
    statement: str | None


@frozen
class Goal:
    id: str
    members: tuple[str, ...]
    main_target: str | None
    """The main target, or None: undetermined."""
    main_basis: str
    """``only_member``, ``cited`` or ``undetermined``."""
    main_cited: str | None
    """The input the evaluator cited for the main target."""
    inputs: tuple[str, ...]
    """Inputs related to it, in order (its last is what the next call is given)."""
    evolution: tuple[Evolution, ...]


@frozen
class TargetsHeader:
    inputs: int
    """Inputs the stage answers for."""
    answered: int
    goals: int
    targets: int
    targets_in_no_goal: int
    never_read: int = 0
    """Inputs of calls that never ended (a failed stage)."""


# --- work labels (sub-tasks and efficiency) --------------------------------------------------------

# The work labels and the causes of avoidable work are defined once, with the statement that
# prices them (decisions.md section 8): the sub-task and efficiency stages label by them.
LABELS = (*NOT_AVOIDABLE, *AVOIDABLE)
"""Every label; no label is ``not_reviewed``."""
OUTCOMES = ("completed", "failed", "partial", "unknown")
REPORTS = ("accurate", "inaccurate", "unknown")
USES = ("used", "unused", "unknown")
DISPATCHES = ("right", "misdirected", "redundant", "unknown")


@frozen
class Decision:
    """One decision of a sub-task with the citations that hold it."""

    value: str
    cites: tuple[str, ...] = ()
    """The steps it cites that show it (only those kept)."""
    reason: str | None = None
    """asz's reason, when asz changed the value (``given`` is what the evaluator said)."""
    given: str | None = None


@frozen
class WorkLabel:
    """A label of some work (decisions.md section 8), with the step read to decide it and, for an
    avoidable label, the step that shows why."""

    label: str
    """A label, or ``not_reviewed``."""
    step: str | None = None
    why: str | None = None
    cause: str | None = None
    """For avoidable work: ``main_agent``, ``subtask`` or ``unknown``."""
    reason: str | None = None
    """asz's reason, when asz left the evaluator's label out or changed it (``given``)."""
    given: str | None = None
    note: str | None = None


@frozen
class SubtaskJudgment:
    """One sub-task: a stream a step started (or one no single step can be shown to have
    started), and the sub-task stage's decisions about it, each checked on its own."""

    stream: str
    kind: str
    """child or helper."""
    talks: tuple[str, ...]
    root: str
    """The main talk it rolls up to, ``loose`` or ``unattributed``."""
    started_by: str | None
    giver: str | None
    """The stream of the agent that gave the task: ``m``, or the sub-agent above it."""
    unattributed: str | None
    targets: tuple[str, ...]
    """The targets of the talk that started it, at its starting step (the cost cut)."""
    judged: bool
    """False when no decision covers it (its work is not reviewed)."""
    call: int | None = None
    decided_with: tuple[str, ...] = ()
    """The other sub-tasks the same answer entry named (a shared decision, checked per sub-task)."""
    report_step: str | None = None
    """Its report: its own last reply, None when it never answered (no reply, or an interruption
    or API error of its own after its last)."""
    report_back: str | None = None
    """Where its report came back: the notice that it ended, or its starting step (foreground,
    when that call returned after it answered)."""
    outcome: Decision = Decision("unknown")
    report: Decision = Decision("unknown")
    used: Decision = Decision("unknown")
    dispatch: Decision = Decision("unknown")
    misled: str | None = None
    """The giving agent's step that acted on its inaccurate report."""
    misled_given: str | None = None
    """What the evaluator said for misled, when asz did not keep it."""
    misled_reason: str | None = None
    charge: str | None = None
    """Who misled work is charged to: ``subtask`` (its task was right), ``giver`` (its task was
    misdirected or redundant) or ``unknown`` (the record does not show whether it was right)."""
    label: WorkLabel = WorkLabel(NOT_REVIEWED)
    calls: int = 0
    """Its own model calls."""
    note: str | None = None


@frozen
class SubtasksHeader:
    subtasks: int
    decided: int
    """Sub-tasks a decision covers."""
    not_reviewed: int
    """Sub-tasks whose work is not reviewed (no decision, a label left out, or not_reviewed)."""
    unattributed_subtasks: int
    misleading: int
    """Sub-tasks whose inaccurate report misled the agent that asked."""
    never_judged: int = 0
    """Sub-tasks of calls that failed twice."""


@frozen
class CallLabel:
    """One model call's label, as the close prices it."""

    step: str
    label: str
    cause: str | None = None


@frozen
class PartLabel:
    """A talk, or a part of a talk from a step on, and its label."""

    talk: str
    start: str
    """Its first step."""
    end: str
    """Its last step (of the talk's own stream)."""
    label: WorkLabel
    calls: tuple[str, ...]
    """The model calls it holds: the call that asked for its first step on (a call that asked for
    the first steps of several parts belongs to the first), with, when the run has no sub-task
    stage, the calls of the sub-tasks whose starting step it holds."""


@frozen
class TalkLabels:
    talk: str
    judged: bool
    """False when no answer labelled it (its work is not reviewed)."""
    call: int | None
    parts: tuple[PartLabel, ...]


@frozen
class Finding:
    id: str
    target: str
    anchor: str
    """The step (or input) where the problem happened."""
    what: str
    why: str | None
    avoid: str | None
    cites: tuple[str, ...]


@frozen
class EfficiencyHeader:
    talks: int
    labelled_talks: int
    parts: int
    parts_left_out: int
    """Parts whose label asz left out (their cost not reviewed)."""
    findings: int
    never_labelled: int = 0
    """Talks of calls that failed twice."""


# --- files ----------------------------------------------------------------------------------------

# --- achievement ----------------------------------------------------------------------------------

STATES = ("met", "not_met", "unknown", "not_captured")
LEVELS = ("achieved", "partial", "not_achieved", "unverified")
BASES = ("person_accepted", "observed_result", "delivered_answer", "agent_claim_only", "no_evidence")
CLAIM_CHECKS = ("supported", "contradicted", "no_evidence", "not_captured")
EVENTS = ("delivered", "undone", "delivered_again")
CONCERNS = ("answer", "revision", "file", "remote_change")
TRIGGERS = ("person", "verification", "tool")
CAUSES = ("agent_error", "requirement_change", "unknown")


@frozen
class Observation:
    """An excerpt of a cited step, what the record says of the step, and the evaluator's reading."""

    step: str
    excerpt: str
    """Word for word in the step (whitespace folded), at most 300 bytes."""
    fact: str
    """What the record says of the step (returned, failed, no_result, an API error, an interrupt,
    a reply, an input): asz's, a fact."""
    reading: str | None
    """What the evaluator reads in it: an interpretation."""


@frozen
class CriterionState:
    id: str
    """t2.c1"""
    text: str
    state: str
    """met, not_met, unknown or not_captured."""
    reason: str | None
    """Why the state holds: asz's when asz changed the state, else the evaluator's."""
    by: str
    """``evaluator``, or ``asz`` when asz changed or filled in the state."""
    evaluator_state: str | None = None
    """What the evaluator said, when asz changed it."""
    evaluator_reason: str | None = None
    """The evaluator's own reason, kept apart when asz changed the state."""
    delivered: bool = False
    """The evaluator's word that the criterion asks for an answer a reply delivered."""
    cites: tuple[str, ...] = ()
    """The steps it cites that the window holds."""
    shown_by: tuple[str, ...] = ()
    """Those of them that show a met or not_met."""
    observations: tuple[Observation, ...] = ()


@frozen
class ClaimCheck:
    """A claim of the agent about the outcome (or a statement of a delivered answer), checked."""

    claim: str
    said: str
    """The step where the agent said it."""
    check: str
    """supported, contradicted, no_evidence or not_captured."""
    by: str
    evaluator_check: str | None = None
    reason: str | None = None
    criteria: tuple[str, ...] = ()
    """The criteria it bears on (none: the whole target)."""
    cites: tuple[str, ...] = ()


@frozen
class Event:
    id: str
    """t1.e1, in recorded order."""
    event: str
    """delivered, undone or delivered_again."""
    concerns: str
    """answer, revision, file or remote_change."""
    at: str
    """The earliest step that shows it."""
    what: str | None
    cites: tuple[str, ...]
    corrects: tuple[str, ...] = ()
    """delivered_again: the earlier deliveries it corrects (none: all standing then)."""
    criteria: tuple[str, ...] = ()
    """undone: the criteria it took back (none: the whole result)."""
    deliveries: tuple[str, ...] = ()
    """undone: the deliveries it took back (none: every one standing then)."""
    applies: bool | None = None
    """undone: whether it applies at the end (one of its deliveries still stands)."""


@frozen
class Contradiction:
    delivery: str
    """The delivery event it concerns (t1.e1)."""
    disproves: str
    """``conclusion`` or ``criteria``."""
    criteria: tuple[str, ...]
    cites: tuple[str, ...]
    what: str | None
    applies: bool
    """Its delivery stands at the end."""


@frozen
class ReworkRound:
    id: str
    """t1.r1"""
    attempt: tuple[str, ...]
    trigger: str
    """person, verification or tool."""
    trigger_step: str
    redo: tuple[str, ...]
    cause: str
    """agent_error, requirement_change or unknown."""
    start: str
    """The trigger's step: a round runs from its trigger to the last step of its redo."""
    end: str
    what: str | None = None
    evaluator_cause: str | None = None
    """The evaluator's cause, when asz changed it."""


@frozen
class Part:
    """A part of an account: what it says, and the steps it cites that show it."""

    text: str
    cites: tuple[str, ...]


@frozen
class CheckMade:
    """A check made for a question: what was checked or tried, what it found, how far that holds."""

    what: str
    found: str | None
    holds: str | None
    cites: tuple[str, ...]


@frozen
class QuestionAccount:
    asked: Part | None
    checks: tuple[CheckMade, ...]
    ruled_out: tuple[Part, ...]
    answer: Part | None


@frozen
class RemoteOperation:
    """An operation on another system: its request, response and later confirmation."""

    system: str | None
    operation: str | None
    tool: str | None
    """The tool the request went through, as the record names it."""
    request: Part
    response: Part | None
    confirmation: Part | None


@frozen
class FileGroup:
    area: str | None
    category: str | None
    changed: str | None
    operations: tuple[str, ...]


@frozen
class Account:
    question: QuestionAccount | None = None
    operations: tuple[RemoteOperation, ...] = ()
    files: tuple[FileGroup, ...] = ()
    own_operations: tuple[str, ...] = ()
    """The target's own file operations: those of the steps the target received."""
    ungrouped: tuple[str, ...] = ()
    """Its own operations no group names."""


@frozen
class TargetAchievement:
    target: str
    judged: bool
    """False when it was not judged: cancelled, replaced, or its call failed twice (``why``)."""
    why: str | None = None
    call: int | None = None
    level: str | None = None
    """Derived by asz from the criteria's states (decisions.md section 5), never the evaluator's."""
    basis: str | None = None
    evaluator_basis: str | None = None
    """The basis the evaluator gave, when asz weakened it."""
    basis_reason: str | None = None
    basis_cites: tuple[str, ...] = ()
    live: int = 0
    met: int = 0
    unknown: int = 0
    """Live criteria unknown or not_captured."""
    criteria: tuple[CriterionState, ...] = ()
    claims: tuple[ClaimCheck, ...] = ()
    events: tuple[Event, ...] = ()
    standing: tuple[str, ...] = ()
    """The deliveries standing at the end."""
    contradictions: tuple[Contradiction, ...] = ()
    rework: tuple[ReworkRound, ...] = ()
    findings: tuple[Finding, ...] = ()
    account: Account | None = None
    cited: tuple[str, ...] = ()
    """Every step the kept judgment cites, in landing order: what the sub-task and efficiency
    stages are given for this target."""
    notes: str | None = None
    """The evaluator's notes."""


@frozen
class AchievementHeader:
    targets: int
    judged: int
    levels: dict[str, int]
    """Judged targets per level."""
    not_judged: dict[str, int]
    """Targets not judged, per reason."""


# --- sources: the reference and divergence stages (spec: "Judging against a source") ---------------

CONCLUSION_KINDS = ("final", "intermediate")
ROLES = ("required", "explanatory")
SUPPORTS = ("saved", "linked", "asserted")
"""saved: the source holds the evidence (cited lines); linked: it only names or links it;
asserted: the author's word alone."""
VERDICTS = ("consistent", "contradicted", "rolled_back", "not_observed", "unknown")
"""decisions.md section 11; not_observed is the evaluator's judgment (absence)."""
DIVERGENCE_CAUSES = ("misleading_tool_result", "result_misread", "untrue_subtask_report", "context_missing",
                     "context_unused", "question_not_asked", "premise_unchecked", "unavailable")
JUDGMENT_CAUSES = ("question_not_asked", "premise_unchecked")
"""Causes resting on absence: the evaluator's judgment, which the record cannot show."""


@frozen
class SourceCoverage:
    """A source as the reference stage saw it: compared, or its comparison unavailable (why)."""

    source: str
    status: str
    """``compared`` or ``unavailable``."""
    why: str | None = None
    conclusions: int = 0


@frozen
class Conclusion:
    id: str
    """src1.k1: given by asz, in the answer's order per source."""
    source: str
    statement: str
    kind: str
    """final, intermediate, or unknown (the answer gave none of them)."""
    role: str
    """required, explanatory, or unknown."""
    support: str
    """saved, linked or asserted (decisions in SUPPORTS)."""
    lines: tuple[tuple[int, int], ...] = ()
    """The source's lines it rests on, as (first, last) ranges of the saved text's numbered lines."""
    inputs: tuple[str, ...] = ()
    """The inputs of the conversation its scope names (those it holds)."""
    unbound: tuple[str, ...] = ()
    """Inputs its scope names that the conversation does not hold: kept apart."""
    superseded_by: str | None = None
    """The correction the same source makes of it later: it changes no score, the correction does."""
    conflicts: tuple[str, ...] = ()
    builds_on: tuple[str, ...] = ()
    given_id: str | None = None
    """The evaluator's own id, when it differs."""
    evaluator_support: str | None = None
    """The support the evaluator gave, when asz changed it."""
    reason: str | None = None
    """asz's reason for what it changed."""
    note: str | None = None


@frozen
class ReferenceHeader:
    sources_compared: int
    sources_unavailable: int
    conclusions_kept: int
    superseded: int
    unbound_inputs: int


@frozen
class Verdict:
    """The conversation against one conclusion (decisions.md section 11)."""

    conclusion: str
    source: str
    verdict: str
    target: str | None = None
    input: str | None = None
    """contradicted, rolled_back: the input of the conclusion's scope that set or changed the target."""
    delivery: str | None = None
    """contradicted, rolled_back: the target's delivery event standing at the end it concerns."""
    disproves: str | None = None
    """contradicted: ``conclusion`` (the delivered conclusion) or ``criteria``."""
    criteria: tuple[str, ...] = ()
    cites: tuple[str, ...] = ()
    judgment: bool = False
    """Marked as the evaluator's judgment (not_observed: absence, which the record cannot show)."""
    given: str | None = None
    """The evaluator's verdict, when asz changed it."""
    reason: str | None = None
    why: str | None = None
    """The evaluator's words."""


@frozen
class DivergenceCause:
    """Why the work went another way than the source, at the step where it did."""

    conclusion: str
    target: str | None
    cause: str
    at: str | None = None
    cites: tuple[str, ...] = ()
    subtask: str | None = None
    """untrue_subtask_report: the sub-task the sub-task stage found misled the agent."""
    judgment: bool = False
    given: str | None = None
    reason: str | None = None
    why: str | None = None


@frozen
class DivergenceHeader:
    conclusions_compared: int
    verdicts: dict[str, int]
    """Conclusions per verdict."""
    unavailable_sources: int


@frozen
class StageFile:
    """One Session Judgment file: ``stages/<stage>.json``, written once."""

    version: int
    stage: str
    status: str
    """complete, partial, failed or skipped."""
    reason: str | None
    """Why it failed or was skipped."""
    note: tuple[str, ...]
    """What was left out or filled in (a partial stage), in words."""
    conversation: str
    head: str
    head_digest: str
    window: str
    kit: KitRef | None
    evaluator: EvaluatorRef | None
    run: StageRun
    checks: tuple[Check, ...] = ()
    header: (TargetsHeader | AchievementHeader | SubtasksHeader | EfficiencyHeader | ReferenceHeader | DivergenceHeader
             | None) = None
    goals: tuple[Goal, ...] = ()
    targets: tuple[Target, ...] = ()
    inputs: tuple[InputJudgment, ...] = ()
    subtasks: tuple[SubtaskJudgment, ...] = ()
    """The sub-task stage: one entry per sub-task, in landing order of its stream."""
    talks: tuple[TalkLabels, ...] = ()
    """The efficiency stage: one entry per talk of a target, in order."""
    calls: tuple[CallLabel, ...] = ()
    """The sub-task and efficiency stages: each model call the stage labels (close prices them);
    a call no row labels is not reviewed."""
    findings: tuple[Finding, ...] = ()
    achievement: tuple[TargetAchievement, ...] = ()
    """The achievement stage: one entry per target of the targets stage, in its order (each with
    its own findings)."""
    sources: tuple[SourceCoverage, ...] = ()
    """The reference and divergence stages: each source, compared or unavailable (why)."""
    conclusions: tuple[Conclusion, ...] = ()
    """The reference stage: the conclusions kept, by source."""
    verdicts: tuple[Verdict, ...] = ()
    """The divergence stage: one per conclusion compared."""
    causes: tuple[DivergenceCause, ...] = ()


@frozen
class PriceRef:
    name: str
    path: str | None
    sha256: str


@frozen
class RunFile:
    """``run.json``: what the run is pinned to, written when the run starts."""

    version: int
    run: str
    conversation: str
    runtime: str
    head: str
    """The round, r3 (``asz judge mcp --run`` reads it)."""
    head_digest: str
    window: str
    """The window as asked (all, k3..k7, FROM..TO)."""
    window_detail: dict[str, Any]
    prices: PriceRef
    kit: str
    """SHA-256 of the whole kit."""
    kit_path: str
    config: dict[str, Any]
    stages: tuple[str, ...]
    """The stages asked for, in order."""
    evaluators: dict[str, EvaluatorRef]
    """Per stage asked for: its evaluator."""
    plugins: dict[str, str]
    """Distribution -> version of every loaded plugin."""
    asz: str
    started: str
    pid: int | None = None
    """The process that ran it, on ``host``: ``asz runs`` tells a run still going from one that died."""
    host: str | None = None
    sources: tuple[str, ...] = ()
    """The sources it was given, in order (src1, src2, ...): saved in work/sources/."""


@frozen
class CloseFile:
    """``close.json``: the run closed, with the final statement (asz_core/judge/close.py)."""

    version: int
    run: str
    ended: str
    seconds: float
    """From the run's start to its end (its last stage's end)."""
    evaluator_seconds: float
    """Time the evaluator stages ran."""
    consumed: Consumed
    """What all evaluator stages consumed."""
    per_minute: dict[str, float]
    """Tokens of each type per minute of evaluator time."""
    stages: dict[str, str]
    """Stage -> its status."""
    statement: Statement | None = None
    """The final statement (:class:`asz_core.judge.statement.Statement`); None when it could not be
    computed (``error`` says why)."""
    error: str | None = None


@frozen
class CallShare:
    """A target a model call is charged to, with its exact share of the call."""

    target: str
    share: Fraction


@frozen
class WindowCall:
    """One model call of the judged window, with what it cost and whose it is, as the close cut it."""

    step: str
    """The call's step id: what the sub-task and efficiency stages label."""
    call: str | None
    """The runtime's id of the call (Claude Code: ``message.id:requestId``)."""
    stream: str
    talk: str | None
    root: str
    """The main talk it rolls up to (its own, or the one its sub-agent's chain began in), ``loose`` or ``unattributed``."""
    model: str | None
    input: int | None
    output: int | None
    cache_read: int | None
    cache_write: int | None
    """The four token counts; None is unknown, never 0."""
    output_floor: int | None
    """An unknown output: the largest streaming value its fragments showed (a lower bound)."""
    money: Decimal | None
    """The price of its known counts, exact as the price file gives it; None when unpriced."""
    complete: bool
    """Every count known: ``money`` is what the call cost."""
    at_least: Decimal | None
    """A lower bound of what it cost: ``money`` and the price of its output's floor; None when unpriced."""
    unpriced: str | None
    """Why it has no price."""
    to: tuple[CallShare, ...]
    """The targets it is charged to (target_cost's cut), each with its share; empty: no target's."""
    shared: str | None = None
    """Why it is split between targets (``one input directed several targets``, ``before any directing input``)."""


@frozen
class CallsFile:
    """``call-costs.json``: every model call of the judged window with its cost and owner, written
    when the run closes (asz_core/judge/call_costs.py); what ``asz compare`` weighs calls by."""

    version: int
    run: str
    conversation: str
    head: str
    head_digest: str
    window: str
    prices: PriceRef
    targets_stage: str
    """What the cut rests on: the targets stage's file as read (``complete``, ``failed (…)``, ``missing``…)."""
    judged: tuple[str, ...]
    """The main talks the run judged, in order."""
    calls: tuple[WindowCall, ...]
    """In landing order."""
