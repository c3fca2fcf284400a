"""The rules of admissible evidence: what a step an answer cites shows, and what it never shows
(spec: "Achievement", "Reasons, observations and accounts", "Sub-tasks", "Findings";
docs/evidence.md). One module, used by every stage that keeps an evaluator's judgment only as
far as the record shows what it cites: achievement, sub-tasks, efficiency and divergence.

Runtime-agnostic: it reads the assembled conversation of a run's window (:mod:`asz_core.window`)
and, for what depends on targets, the targets stage's records. Nothing here reads meaning: a
rule says which *kind* of step can show a thing, never whether its text does.

The API, in one place::

    ev = Evidence(window, targets=stage.targets, inputs=stage.inputs, raw=reader)
    c = ev.cite("s40")          # Cite: what the id is in this window (``shows``) and asz's words for it (``fact``)
    ev.observed(c)              # a tool step that returned (failed included), an API error or an interrupt
    ev.tool_result(c)           # a tool step that returned or failed (not a sub-agent's report back)
    ev.person(c)                # an input of the person on the main stream (never an agent's task to a
                                #   sub-agent, never one the targets stage found came from no person)
    ev.person_later(c, "t1")    # ... after the input that created t1, and not one that set t1
    ev.person_after_setting(c, "t1")   # ... after every input that set t1
    ev.admissible(c, "t1")      # shows a criterion's state or checks a claim: observed, or person_later
    ev.beyond_words(c, "t1")    # evidence beyond the agent's words: observed, or person_after_setting
    ev.agent_words(c)           # the agent's replies, model calls, summaries, a sub-agent's messages or report
    ev.main_reply(c)            # a reply of the agent on the main stream: what reached the person
    ev.after_set(c, "t1")       # a step recorded after the input that created t1
    ev.delivers(c, "t1")        # a main reply after t1 was set: what delivers an answer
    ev.sets(c, "t1")            # an input that set t1 (its create, refine or steer)
    ev.returned(c)              # a tool step that returned (a failed or unanswered request is not the thing done)
    ev.is_work(c)               # a step of an agent's work: a model call, a tool or agent call, a reply, a summary
    ev.why_not(cites)           # asz's reason when none of them shows a thing
    ev.work("t1")               # step ids of t1's talks and of every sub-task they started
    ev.before                   # step ids of the talks before the window (and their sub-tasks)
    ev.excerpt("s40", text)     # Excerpt: is ``text`` in the step word for word (its record read whole)?
    ev.order(c)                 # its place in landing order (``seq``); None for what is no step
    ev.happened(c)              # when it happened in the work (a sub-task's step where its starting step is)
    ev.starting_step("a2")      # the one step that started a sub-task (None: unattributed)
    ev.giver("a2")              # the stream of the agent that gave it its task (m, or the sub-agent above)
    ev.own_result(c, "a2")      # a result of the sub-task's own stream: what its outcome and report rest on
    ev.asker_later(c, "a2")     # a later step of the giving agent: what shows the report used
    ev.by_stream["a2"]          # a stream's steps in the window, in order (every stream's, one pass)
    ev.answer("a2")             # its answer, its report: its last reply, unless cut off after it (None)
    ev.report_back("a2")        # where its report came back (a notice, or the foreground result), or None
    ev.after_report(c, "a2")    # a later step of the giving agent after the report came back
    ev.shows_task_wrong(c, "a2")  # a tool result, an error, the person's words, or another agent call of the giver

What a cited id shows (``Cite.shows``):

=================  ==========================================================================
``result``         a tool step whose result came back (status ``returned``)
``failure``        a tool step (or an agent call) whose result came back as an error (``failed``)
``api_error``      a runtime notice of an error of the model API
``interrupt``      a runtime notice that the person interrupted the agent
``person``         an input of the person (``person``, ``queued``, ``command``) on the main stream
``reply``          a reply of the agent on the main stream
``subagent_reply`` a reply in a sub-agent's (or helper's) stream: its own messages, its report
``report``         an agent call that returned: the sub-agent's report back, a claim
``model_call``     a model call (with its reasoning): what was said, never what was done
``summary``        a compaction summary
``no_result``      a tool step whose result never came: it shows nothing
``agent_input``    a task an agent gave a sub-agent (an input of source ``agent``)
``not_person``     an input the targets stage found came from no person
``notice``         any other runtime notice (a hook, a task notification, a command's output)
``talk``           a talk id: it cites nothing in particular
``stream``         a stream id: it cites nothing in particular
``unknown``        an id this window does not hold
=================  ==========================================================================

An input id (``i4``) is read as its input step. The input that set a target (its ``create``,
``refine`` or ``steer``) shows what was asked, never that it was done.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import orjson
from attrs import frozen

from ..assembly import PERSON_SOURCES, Conversation, Step, work_order
from ..digits import ID_NUMBER
from ..window import Window

SETTING = frozenset({"create", "refine", "steer"})
"""Actions by which an input sets a target: say what is asked."""

OBSERVED = frozenset({"result", "failure", "api_error", "interrupt"})
TOOL_RESULTS = frozenset({"result", "failure"})
AGENT_WORDS = frozenset({"reply", "subagent_reply", "report", "model_call", "summary"})
NOTHING = frozenset({"no_result", "agent_input", "not_person", "notice", "talk", "stream", "unknown"})
WORK_KINDS = frozenset({"model_call", "tool", "agent_call", "reply", "summary"})
"""Step kinds that are an agent's work (an input or a runtime notice is not)."""
ASKER_WORK = frozenset({"model_call", "tool", "agent_call", "reply"})
"""Steps of the agent that gave a task that can show it used the report (a summary is context)."""

EXCERPT_BYTES = 300
"""An observation's excerpt is cut to its first 300 bytes."""

_ID = re.compile(rf"([skia])({ID_NUMBER})")
_ESCAPES = re.compile(r"\\[nrt]")
_SPACE = re.compile(r"\s+")


@frozen
class Cite:
    """One id an answer cited, as the window holds it."""

    id: str
    """As the answer gave it."""
    shows: str
    """What it is (the table in the module's docstring)."""
    step: str | None = None
    """The step it names (an input id is read as its step); None for a talk, a stream, an unknown id."""
    seq: int | None = None
    """The step's place in landing order."""
    stream: str | None = None
    talk: str | None = None
    input: str | None = None
    fact: str = ""
    """What the record says of it, in asz's words: a fact, apart from any reading of its text."""


@frozen
class Excerpt:
    """An excerpt checked against its step."""

    text: str
    """As kept: the evaluator's excerpt, cut to its first 300 bytes."""
    found: bool
    """It stands in the step word for word (whitespace folded, a JSON escape of a line break read as one)."""
    cut: bool
    """It was longer than 300 bytes."""
    given_bytes: int


def fold(text: str) -> str:
    """Text as excerpts are compared: a JSON escape of a line break (or tab) read as one, every
    run of whitespace one space."""
    return _SPACE.sub(" ", _ESCAPES.sub(" ", text)).strip()


def cut_bytes(text: str, limit: int = EXCERPT_BYTES) -> str:
    b = text.encode("utf-8", "surrogatepass")
    return text if len(b) <= limit else b[:limit].decode("utf-8", "ignore")


def _strings(v: Any, out: list[str]) -> None:
    if isinstance(v, str):
        out.append(v)
    elif isinstance(v, dict):
        for x in v.values():
            _strings(x, out)
    elif isinstance(v, list):
        for x in v:
            _strings(x, out)


class Evidence:
    """The rules over one window. ``targets`` and ``inputs`` are the targets stage's records
    (``Target``, ``InputJudgment``); ``raw(seq)`` reads a record's bytes as the window sees them
    (for excerpts; without it only the step's kept text is searched)."""

    def __init__(self, window: Window, targets: Sequence[Any] = (), inputs: Sequence[Any] = (),
                 raw: Callable[[int], bytes] | None = None) -> None:
        self.w: Window = window
        self.conv: Conversation = window.conv
        self.raw = raw
        self.targets = {t.id: t for t in targets}
        self._input_step: dict[str, Step] = {s.input: s for s in self.conv.steps if s.kind == "input" and s.input}
        self.not_person: frozenset[str] = frozenset(
            j.input for j in inputs if any(a.action == "not_from_person" for a in j.actions))
        self._acts: dict[str, tuple[Any, ...]] = {j.input: tuple(j.actions) for j in inputs}
        self._setting: dict[str, list[int]] = {}
        self._created: dict[str, int] = {}
        for tid, t in self.targets.items():
            created = self._input_step.get(t.created_by)
            if created is not None:
                self._created[tid] = created.seq
            seqs = [self._input_step[i].seq for i in t.inputs if i in self._input_step
                    and any(a.target == tid and a.action in SETTING for a in self._acts.get(i, ()))]
            if created is not None and created.seq not in seqs:
                seqs.append(created.seq)
            self._setting[tid] = sorted(seqs)
        self._work: dict[str, frozenset[str]] = {}
        self._before: frozenset[str] | None = None
        self._hay: dict[str, list[str]] = {}
        self._asked: dict[str, str | None] | None = None
        self._streams: dict[str, list[Step]] | None = None
        self._happened: Callable[[str], tuple[int, ...]] | None = None

    # --- what an id is -------------------------------------------------------------------------

    def cite(self, cid: Any) -> Cite:
        """What ``cid`` is in this window, and what the record says of it."""
        if not isinstance(cid, str):
            return Cite(repr(cid), "unknown", fact=f"{cid!r} is no id")
        m = _ID.fullmatch(cid.strip())
        if m is None:
            return Cite(cid, "unknown", fact=f"{cid!r} is no id of a step this window holds")
        kind, n = m.group(1), int(m.group(2))
        if kind == "k":
            if cid in self.w.talks:
                return Cite(cid, "talk", talk=cid, fact=f"{cid}: a talk id, which cites nothing in particular")
            return Cite(cid, "unknown", fact=f"{cid}: no such talk in this window")
        if kind == "a":
            if cid in self.w.streams:
                return Cite(cid, "stream", stream=cid, fact=f"{cid}: a stream id, which cites nothing in particular")
            return Cite(cid, "unknown", fact=f"{cid}: no such stream in this window")
        if kind == "i":
            s = self._input_step.get(cid)
        else:
            s = self.conv.steps[n - 1] if n <= len(self.conv.steps) else None
        if s is None or s.id not in self.w.steps:
            return Cite(cid, "unknown", fact=f"{cid}: no such step in this window")
        shows, fact = self._what(s)
        return Cite(cid, shows, s.id, s.seq, s.stream, s.talk, s.input, fact)

    def cites(self, ids: Iterable[Any]) -> list[Cite]:
        """Each id of ``ids`` once, in the order given (a list that is not one reads as empty)."""
        out: list[Cite] = []
        seen: set[str] = set()
        for x in ids if isinstance(ids, (list, tuple)) else ():
            c = self.cite(x)
            key = c.step or c.id
            if key not in seen:
                seen.add(key)
                out.append(c)
        return out

    def _what(self, s: Step) -> tuple[str, str]:
        name = s.name or "?"
        if s.kind in ("tool", "agent_call"):
            if s.status == "no_result":
                return "no_result", f"{s.id}: the {name} call's result never came (no_result)"
            if s.status == "failed":
                return "failure", f"{s.id}: the {name} call failed"
            if s.kind == "agent_call":
                return "report", f"{s.id}: the {name} call returned a sub-agent's report back"
            return "result", f"{s.id}: the {name} call returned"
        if s.kind == "notice":
            if s.notice == "api_error":
                return "api_error", f"{s.id}: an error of the model API"
            if s.notice == "interrupt":
                return "interrupt", f"{s.id}: an interrupt"
            return "notice", f"{s.id}: a runtime notice ({s.notice})"
        if s.kind == "input":
            if s.stream != "m" or s.source == "agent" or s.source not in PERSON_SOURCES:
                return "agent_input", f"{s.id}: a task an agent gave a sub-agent ({s.input})"
            if s.input in self.not_person:
                return "not_person", f"{s.id}: input {s.input}, which the targets stage found came from no person"
            return "person", f"{s.id}: the person's input {s.input}"
        if s.kind == "reply":
            if s.stream == "m":
                return "reply", f"{s.id}: a reply of the agent"
            return "subagent_reply", f"{s.id}: a reply of the sub-agent {s.stream}"
        if s.kind == "model_call":
            return "model_call", f"{s.id}: a model call"
        if s.kind == "summary":
            return "summary", f"{s.id}: a compaction summary"
        return "notice", f"{s.id}: a {s.kind} step"

    # --- what it shows ----------------------------------------------------------------------------

    @staticmethod
    def observed(c: Cite) -> bool:
        """A tool step that returned a result, a failed one included, an API error or an interrupt."""
        return c.shows in OBSERVED

    @staticmethod
    def tool_result(c: Cite) -> bool:
        """A tool step whose result came back (returned or failed), not a sub-agent's report back."""
        return c.shows in TOOL_RESULTS

    @staticmethod
    def returned(c: Cite) -> bool:
        """A tool step that returned (not failed, not a request whose result never came)."""
        return c.shows == "result"

    @staticmethod
    def person(c: Cite) -> bool:
        return c.shows == "person"

    @staticmethod
    def agent_words(c: Cite) -> bool:
        """What shows only what was said: replies, model calls, summaries, a sub-agent's messages and report."""
        return c.shows in AGENT_WORDS

    @staticmethod
    def main_reply(c: Cite) -> bool:
        """A reply of the agent on the main stream: what reached the person."""
        return c.shows == "reply"

    def sets(self, c: Cite, target: str) -> bool:
        """An input that set ``target`` (created, refined or steered it)."""
        return c.shows == "person" and c.seq in self._setting.get(target, ())

    def person_later(self, c: Cite, target: str) -> bool:
        """The person's own later input: after the input that created ``target``, and not one
        that set it (which shows what was asked, never that it was done)."""
        return c.shows == "person" and self.after_set(c, target) and not self.sets(c, target)

    def after_set(self, c: Cite, target: str) -> bool:
        """A step recorded after the input that created ``target``."""
        created = self._created.get(target)
        return created is not None and c.seq is not None and c.seq > created

    def delivers(self, c: Cite, target: str) -> bool:
        """A reply of the agent on the main stream after ``target`` was set: what delivers an answer."""
        return self.main_reply(c) and self.after_set(c, target)

    def corrections(self, target: str) -> list[str]:
        """The person's inputs that corrected ``target`` (the targets stage's ``correct`` actions)."""
        return [i for i, acts in self._acts.items() if i not in self.not_person
                and any(a.target == target and a.action == "correct" for a in acts)]

    def person_after_setting(self, c: Cite, target: str) -> bool:
        """The person's input after every input that set ``target``."""
        setting = self._setting.get(target)
        return c.shows == "person" and bool(setting) and c.seq is not None and c.seq > max(setting)  # type: ignore[arg-type]

    def admissible(self, c: Cite, target: str) -> bool:
        """What shows a criterion's state (met or not_met) or checks a claim: a tool step that
        returned (failed included), an API error, an interrupt, or the person's later input."""
        return self.observed(c) or self.person_later(c, target)

    def beyond_words(self, c: Cite, target: str) -> bool:
        """Evidence beyond the agent's words (a contradiction's): a tool result, an error, an
        interrupt, or the person's input after the inputs that set ``target``."""
        return self.observed(c) or self.person_after_setting(c, target)

    def why_not(self, cs: Sequence[Cite], target: str | None = None) -> str:
        """asz's words for why none of ``cs`` shows a thing (about ``target``, when given: an
        input that set it, or came before it, says so)."""
        if not cs:
            return "it cites nothing"

        def said(c: Cite) -> str:
            if target is not None and c.shows == "person":
                if self.sets(c, target):
                    return f"{c.fact}, which set {target}: what was asked, never that it was done"
                created = self._created.get(target)
                if created is None or (c.seq is not None and c.seq <= created):
                    return f"{c.fact}, before {target} was set"
            return c.fact

        return "nothing it cites shows it: " + "; ".join(said(c) for c in cs)

    @staticmethod
    def order(c: Cite) -> int | None:
        return c.seq

    def happened(self, c: Cite) -> tuple[int, ...] | None:
        """When the step ``c`` names happened in the work (:func:`~asz_core.assembly.work_order`: a
        sub-task's step where the step that started it lies in its giver's talk, never after the
        whole main stream because its runtime recorded it in a file of its own); None for what is
        no step. Keys compare as tuples."""
        if c.step is None:
            return None
        if self._happened is None:
            self._happened = work_order(self.conv)
        return self._happened(c.step)

    def created_at(self, target: str) -> int | None:
        """The place of the input that created ``target``."""
        return self._created.get(target)

    # --- whose work a step is ---------------------------------------------------------------------

    def work(self, target: str) -> frozenset[str]:
        """Step ids of ``target``'s talks and of every sub-task they started, as deep as it goes."""
        got = self._work.get(target)
        if got is None:
            t = self.targets.get(target)
            got = self._work[target] = self.steps_of_talks(t.talks if t is not None else ())
        return got

    def steps_of_talks(self, talks: Iterable[str]) -> frozenset[str]:
        """Step ids of these main talks and of the sub-tasks each started (steps the window shows)."""
        want = set(talks)
        streams = {sid for sid, root in self.w.roots.items() if root in want}
        return frozenset(s.id for s in self.conv.steps if s.id in self.w.steps
                         and (s.talk in want or s.stream in streams))

    @property
    def before(self) -> frozenset[str]:
        """Step ids of the talks before the judged window, with their sub-tasks: context."""
        if self._before is None:
            self._before = self.steps_of_talks(self.w.before)
        return self._before

    def is_work(self, c: Cite) -> bool:
        """A step that is an agent's work (a model call, a tool or agent call, a reply, a summary)."""
        return c.step is not None and self.conv.step(c.step).kind in WORK_KINDS

    # --- sub-tasks (spec: "Sub-tasks") ----------------------------------------------------------

    def starting_step(self, stream: str) -> Step | None:
        """The one step that started ``stream``; None when no single step can be shown to have."""
        st = self.conv.stream(stream)
        if st.unattributed is not None or len(st.started_by) != 1:
            return None
        return self.conv.step(st.started_by[0])

    def giver(self, stream: str) -> str | None:
        """The stream of the agent that gave ``stream`` its task: ``m`` for a sub-task a main talk
        started, the sub-agent above it for a nested one; None when unattributed."""
        s = self.starting_step(stream)
        return s.stream if s is not None else None

    def own_result(self, c: Cite, stream: str) -> bool:
        """What an outcome or a report of ``stream`` rests on: a step of its own stream whose
        result came back (a tool step that returned or failed, an API error, an interrupt).
        Its report back (the result of the step that started it), its messages and replies,
        and a nested sub-task's steps are not its own results."""
        return self.observed(c) and c.stream == stream

    def _after(self, c: Cite, pos: int) -> bool:
        return c.seq is not None and c.seq > pos

    def asker_later(self, c: Cite, stream: str) -> bool:
        """A later step of the agent that gave ``stream`` its task, which is what shows whether
        the report was used: its own model call, tool or agent call or reply, in its stream,
        after the step that started the sub-task ended. Never an input, a runtime notice, a
        summary, or context the sub-task was sent."""
        start = self.starting_step(stream)
        if start is None or c.step is None or c.stream != start.stream or c.step == start.id:
            return False
        return self.conv.step(c.step).kind in ASKER_WORK and self._after(c, start.records[-1])

    def answer(self, stream: str) -> str | None:
        """The sub-task's answer, its report: its own last reply in the window, when no
        interruption or API error of its own stream came after it; None when it never answered
        (it never replied, or it was cut off after its last reply: what its starting call then
        returned is the runtime's interruption or error text, even when the runtime marks the
        call returned, as Claude Code's Task does over a sub-agent's API error)."""
        last: Step | None = None
        for s in self.by_stream.get(stream, ()):
            if s.kind == "reply" or (s.kind == "notice" and s.notice in ("api_error", "interrupt")):
                last = s
        return last.id if last is not None and last.kind == "reply" else None

    @property
    def by_stream(self) -> dict[str, list[Step]]:
        """Each stream's steps in the window, in order: found once, in one pass."""
        if self._streams is None:
            self._streams = {}
            for s in self.conv.steps:
                if s.id in self.w.steps:
                    self._streams.setdefault(s.stream, []).append(s)
        return self._streams

    def report_back(self, stream: str) -> tuple[str, int] | None:
        """Where ``stream``'s report came back: (the step, its place in landing order). The
        earliest runtime notice that it ended; or, for one that ran in the foreground, the
        result of the call that started it, which the record marks as its own, when it returned
        after the sub-task answered (:meth:`answer`): a background launch's acknowledgement is not
        a report, and a call interrupted or failed before the sub-task answered returned the
        runtime's interruption or error text, no report, whatever status the runtime gave it.
        None when neither shows it: then no work is charged to its report. Order is landing order,
        never time."""
        found: list[tuple[int, str]] = []
        for s in self.conv.steps:
            if s.kind == "notice" and s.ended == stream and s.id in self.w.steps:
                found.append((s.seq, s.id))
                break
        start = self.starting_step(stream)
        if (start is not None and start.kind == "agent_call" and not start.launch and start.status == "returned"
                and start.id in self.w.steps and self.answer(stream) is not None):
            found.append((start.records[-1], start.id))
        if not found:
            return None
        pos, sid = min(found)
        return sid, pos

    def after_report(self, c: Cite, stream: str) -> bool:
        """A later step of the agent that gave the task (:meth:`asker_later`) made after the
        report came back: in the talk it came back to a later step, in another talk one that
        landed after it."""
        back = self.report_back(stream)
        return back is not None and self.asker_later(c, stream) and self._after(c, back[1])

    def shows_task_wrong(self, c: Cite, stream: str) -> bool:
        """What shows the task given to ``stream`` wrong besides the agent's words: a tool result,
        an error, an interrupt, the person's words, or another agent call of the agent that
        gave the task after it was given (giving it again, or correcting it), whatever its result:
        a sibling launched before it or with it shows nothing, even one that failed (its error is
        its own task's). The agent saying in a message that the task was wrong is its own account,
        and shows nothing."""
        start = self.starting_step(stream)
        giving = (start is not None and c.step is not None and c.stream == start.stream
                  and self.conv.step(c.step).kind == "agent_call")
        if not giving:  # an agent call of the giver shows it only by the order below, failed or not
            return self.observed(c) or self.person(c)
        if c.seq is None or c.step == start.id:  # type: ignore[union-attr]
            return False
        # only after the task was given: a sibling launched before it, or with it (asked for by the
        # same model call), shows nothing of it
        asked = self.asked
        return c.seq > start.seq and (asked.get(c.step) is None or asked.get(c.step) != asked.get(start.id))  # type: ignore[union-attr]

    @property
    def asked(self) -> dict[str, str | None]:
        """Each step a model call asks for -> that call (:func:`asking_calls`), computed once."""
        if self._asked is None:
            self._asked = asking_calls(self.conv.steps)
        return self._asked

    # --- observations -----------------------------------------------------------------------------

    def excerpt(self, sid: str, text: str) -> Excerpt:
        """Check an excerpt against step ``sid``: it must stand in the step word for word, with
        whitespace folded and a JSON escape of a line break read as one. The step's kept text
        is searched first, then each of its records whole (raw and with its strings decoded),
        since a page or the kept text may have clipped it. Kept cut to its first 300 bytes."""
        given = len(text.encode("utf-8", "surrogatepass"))
        kept = cut_bytes(text)
        needle = fold(text)
        found = bool(needle) and any(needle in h for h in self._cached_haystacks(sid))
        return Excerpt(kept, found, given > EXCERPT_BYTES, given)

    HAYSTACKS_KEPT = 32
    """Steps whose records' folded texts are kept for the next excerpt: an answer may give
    thousands of observations of one large step, and reading and folding its records for each
    took 3 ms a time on a 78 KB step (a 1 MB one, 40 ms)."""

    def _cached_haystacks(self, sid: str) -> Iterator[str]:
        """The step's kept text folded, then (only when asked for: the kept text mostly holds the
        excerpt) its records' texts, read once per step while it is among the latest kept."""
        yield self._kept_haystack(sid)
        if self.raw is None:
            return
        cache = self._hay
        got = cache.pop(sid, None)
        if got is None:
            got = list(self._record_haystacks(sid))
            if len(cache) >= self.HAYSTACKS_KEPT:
                cache.pop(next(iter(cache)))
        cache[sid] = got  # the most recent last
        yield from got

    def _kept_haystack(self, sid: str) -> str:
        s = self.conv.step(sid)
        own = [s.text or ""]
        if s.name:
            own.append(s.name)
        if s.request is not None:
            own.append(orjson.dumps(s.request).decode())
            strs: list[str] = []
            _strings(s.request, strs)
            own.append("\n".join(strs))
        return fold("\n".join(own))

    def _record_haystacks(self, sid: str) -> Iterator[str]:
        for seq in self.conv.step(sid).records:
            try:
                b = self.raw(seq)  # type: ignore[misc]
            except Exception:  # noqa: BLE001 - a record the window cannot read shows nothing more
                continue
            text = b.decode("utf-8", "replace")
            yield fold(text)
            try:
                obj = orjson.loads(b)
            except orjson.JSONDecodeError:
                continue
            strs: list[str] = []
            _strings(obj, strs)
            yield fold("\n".join(strs))


ASKED = frozenset({"tool", "agent_call", "reply", "summary"})
"""Steps a model call asks for (a runtime's view puts them inside that call)."""


def asking_calls(steps: Iterable[Step]) -> dict[str, str | None]:
    """Each step of a kind a model call asks for (:data:`ASKED`) -> the model call that asked for
    it: the last model call before it in its talk (and stream); None when its talk had no call
    yet, or it is in no talk, as some runtimes record a step no model call asked for (a summary at
    a talk's start, a person's shell command). An input inside a talk was typed while the agent
    worked (a talk begins at an input that reaches an idle agent): it reaches the model at its
    next call and ends no call running, whose tools may land after it (e720dd6e: i3 queued at
    s174 between two tool uses of s172's message, the second one s175). ``steps`` in recorded
    order: the conversation's, or one talk's. The one rule, used by the achievement stage (a
    target's own operations), the efficiency stage (what a part takes in) and the close (whose
    file operations)."""
    last: dict[tuple[str, str | None], str] = {}
    out: dict[str, str | None] = {}
    for s in steps:
        key = (s.stream, s.talk)
        if s.kind == "model_call":
            last[key] = s.id
        elif s.kind in ASKED:
            out[s.id] = last.get(key) if s.talk is not None else None
    return out


def for_run(window: Window, store: Any, targets: Sequence[Any] = (), inputs: Sequence[Any] = ()) -> Evidence:
    """An :class:`Evidence` whose excerpts read the records whole from ``store`` as the window sees them."""
    from ..window import raw_at

    def raw(seq: int) -> bytes:
        return raw_at(store, window.conv.id, seq, window.round.number, window.cut, window.captures)

    return Evidence(window, targets, inputs, raw)


__all__ = ["Evidence", "Cite", "Excerpt", "for_run", "fold", "cut_bytes", "SETTING", "OBSERVED", "ASKER_WORK",
           "TOOL_RESULTS", "AGENT_WORDS", "NOTHING", "WORK_KINDS", "EXCERPT_BYTES"]
