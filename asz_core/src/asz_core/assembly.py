"""Assembly: stored records of one conversation at one round -> streams, talks, steps, starts.

Runtime-agnostic: it reads only the normalized events adapters put on each record
(docs/events.md). Order is landing order (record ``seq``), never timestamps.

Ids are given in landing order, so an earlier round's ids stay valid at a later one: streams
``m`` (main) and ``a1…``, talks ``k1…``, steps ``s1…``, inputs ``i1…``.
"""

from __future__ import annotations

import datetime as dt
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import attrs
from attrs import frozen

from .lean_events import CAPTURE as CAPTURE_EVENTS
from .records import MAX_COUNT, Usage, count
from .store import Round, StoredRecord
from .times import FIRST, LAST, instant, utc_text

# CAPTURE_EVENTS: events of records captured beside the transcript, attached to the tool step they
# name. Defined in lean_events (below the store, which assembly reads), so both rules read one set.

PERSON_SOURCES = frozenset({"person", "queued", "command"})
"""Input sources that are the person's own words (a queued input was typed while the agent worked)."""


@frozen(slots=True)
class Step:
    """One thing in a stream. Fields beyond the first few belong to some kinds only."""

    id: str
    kind: str
    """input, model_call, tool, agent_call, reply, notice or summary."""
    stream: str
    talk: str | None
    seq: int
    """Landing position of its first record (its place in the order)."""
    records: tuple[int, ...]
    ts: str | None
    ts_end: str | None
    text: str = ""
    """The step's text (input, reply, notice, summary, tool result), its first 2,000 bytes."""
    size: int = 0
    """Whole size in bytes of that text as recorded."""
    input: str | None = None
    """Input id (i1…), for input steps."""
    source: str | None = None
    """Input source: person, queued, command (the person's) or agent (a sub-agent's prompt)."""
    notice: str | None = None
    """Notice kind: interrupt, task_notification, api_error, meta, hook, command_output, ..."""
    call: str | None = None
    """The runtime's id of the model call (model_call and reply steps)."""
    model: str | None = None
    usage: Usage | None = None
    output_floor: int | None = None
    """When output is unknown: the largest streaming value seen (a lower bound, never the count)."""
    tool_id: str | None = None
    name: str | None = None
    request: dict[str, Any] | None = None
    status: str | None = None
    """Tool steps: returned, failed or no_result (never returned)."""
    starts: tuple[str, ...] = ()
    """Stream ids this step started (agent_call)."""
    launch: bool = False
    """Agent calls: the result only acknowledged a launch (a sub-task run in the background), so
    it is not the sub-task's report back; that comes with a notice (``ended``)."""
    ended: str | None = None
    """Notices: the stream whose end this runtime notice reports (a background sub-task's)."""
    changes: tuple[dict[str, Any], ...] = ()
    """Tool steps: the workspace change records captured for this call, in landing order: each the
    ``change`` event (docs/events.md) with ``seq``, the record's landing position."""
    executions: tuple[dict[str, Any], ...] = ()
    """Tool steps: the execution records captured for this call (``execution`` events with ``seq``)."""
    replay_of: str | None = None
    """model_call steps: the step id of this conversation's call this one replays (the same
    response re-sent under a new call id in a child or helper stream: a /btw side question
    replays its parent's messages). Counted once, as that call; never in the ledger twice."""
    copy_of: str | None = None
    """model_call steps: the conversation that landed this same call first (a branched or copied
    session holds a copy of it). Counted there, not here."""

    @property
    def counted_elsewhere(self) -> bool:
        """A model call whose cost is another call's: a replay or a copy (see above)."""
        return self.replay_of is not None or self.copy_of is not None

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # Rebuild through __init__ (positional): twice as fast to unpickle as attrs' setstate,
        # which matters for the assembled-conversation cache (assembly_cache.py).
        return (Step, tuple(getattr(self, f) for f in _STEP_FIELDS))


_STEP_FIELDS = tuple(a.name for a in attrs.fields(Step))


@frozen(slots=True)
class Stream:
    id: str
    key: str
    """The runtime's key (``main``, ``agent-f7fd82bf``, ...)."""
    kind: str
    """main, child or helper."""
    started_by: tuple[str, ...]
    """Step ids the record links to this stream's start."""
    parent: str | None
    """The stream of the single starting step, if there is one."""
    unattributed: str | None
    """Why no single step can be shown to have started it: ``no starting step``, ``several
    starting steps`` or ``unattributed parent``. None when attributed (and for main)."""
    talks: tuple[str, ...]
    steps: int


@frozen(slots=True)
class Talk:
    id: str
    stream: str
    inputs: tuple[str, ...]
    """Step ids of its inputs (a main talk can hold several; a child talk's prompt)."""
    steps: tuple[str, ...]
    reply: str | None
    """Step id of its last reply."""
    start: str | None
    end: str | None


@frozen
class Conversation:
    id: str
    runtime: str
    round: Round
    streams: tuple[Stream, ...]
    talks: tuple[Talk, ...]
    steps: tuple[Step, ...]
    loose: tuple[str, ...]
    """Step ids of the main stream that no talk holds (before the first input)."""
    unattached: tuple[dict[str, Any], ...] = ()
    """Change and execution records (events with ``seq``) whose tool call no step of this view holds."""
    span: tuple[str | None, str | None] = (None, None)
    """The first and last time any of its records names (UTC, ``times.utc_text``): when it started
    and its last activity."""
    projects: tuple[str, ...] = ()
    """The working directories (project folders) the main stream's records name, each once, in
    landing order (``project`` events): the first is the conversation's project. Those of its
    other streams when the main stream names none (only sub-agent files were collected)."""

    @property
    def project(self) -> str | None:
        return self.projects[0] if self.projects else None

    def step(self, sid: str) -> Step:
        return self.steps[int(sid[1:]) - 1]

    def talk(self, kid: str) -> Talk:
        return self.talks[int(kid[1:]) - 1]

    def stream(self, aid: str) -> Stream:
        for s in self.streams:
            if s.id == aid:
                return s
        raise KeyError(aid)

    @property
    def main_talks(self) -> list[Talk]:
        return [t for t in self.talks if t.stream == "m"]

    def tool_step(self, tool_id: str) -> Step | None:
        """The tool step of a tool call id, if the view holds one."""
        for s in self.steps:
            if s.tool_id == tool_id:
                return s
        return None

    def model_calls(self) -> list[Step]:
        """Every model call step, replays and copies included (``Step.counted_elsewhere``)."""
        return [s for s in self.steps if s.kind == "model_call"]

    def person_inputs(self) -> list[Step]:
        return [s for s in self.steps if s.kind == "input" and s.source in PERSON_SOURCES]

    def first_input(self) -> Step | None:
        """The person's first real input: the first words they typed (``person`` or ``queued``),
        not a runtime command such as ``/clear``. With none, the first command given arguments
        (``/review the parser``: a custom command's request), else the first command."""
        return _first_input([s for s in self.steps if s.kind == "input" and s.stream == "m"])


# --- building ------------------------------------------------------------------------------

class _B:
    """A step under construction (mutable; frozen into Step at the end)."""

    __slots__ = ("kind", "stream", "seq", "records", "ts", "ts_end", "text", "size", "source", "notice",
                 "call", "model", "usage", "outputs", "final_out", "tool_id", "name", "request", "status",
                 "starts", "dropped", "launch", "ended", "response", "replay_of")

    def __init__(self, kind: str, stream: str, seq: int, ts: str | None) -> None:
        self.kind, self.stream, self.seq = kind, stream, seq
        self.records = [seq]
        self.ts = self.ts_end = ts
        self.text, self.size = "", 0
        self.source = self.notice = self.call = self.model = self.tool_id = self.name = self.status = None
        self.usage: dict[str, Any] | None = None
        self.outputs: list[int] = []
        self.final_out: int | None = None
        self.request: dict[str, Any] | None = None
        self.starts: list[str] = []
        self.dropped = False
        self.launch = False
        self.ended: str | None = None
        self.response: str | None = None
        self.replay_of: _B | None = None

    def touch(self, seq: int, ts: str | None) -> None:
        if self.records[-1] != seq:
            self.records.append(seq)
        if ts:
            self.ts_end = ts


class _S:
    __slots__ = ("key", "kind", "by", "after", "group", "first_seq", "steps", "agent_usage")

    def __init__(self, key: str, seq: int) -> None:
        self.key, self.first_seq = key, seq
        self.kind = "main" if key == "main" else "child"
        self.by: set[str] = set()
        self.after: str | None = None
        self.group: str | None = None
        self.steps: list[_B] = []
        self.agent_usage: dict[str, Any] | None = None


RecordRow = tuple[int, str, str, "str | None", tuple[dict[str, Any], ...]]
"""What assembly reads of a stored record: ``(seq, key, stream, ts, events)`` (``Store.records(lean=True)``: a
list of those five as decoded, or a tuple)."""

_ROW = operator.attrgetter("seq", "key", "stream", "ts", "events")


class _Gathered:
    """The first pass over a conversation's records: its steps and streams under construction, in
    landing order, with what joins them. Both the assembled conversation and the ledger's lean
    summary (:func:`calls_of`) are made from it, so they read the records one way."""

    __slots__ = ("steps", "streams", "tools", "starts", "record_step", "captured", "projects", "first", "last")

    def __init__(self, steps: list[_B], streams: dict[str, _S], tools: dict[str, _B], starts: dict[str, set[str]],
                 record_step: dict[str, _B], captured: dict[str, dict[str, list[dict[str, Any]]]],
                 projects: dict[bool, dict[str, None]], first: Any, last: Any) -> None:
        self.steps, self.streams, self.tools, self.starts = steps, streams, tools, starts
        self.record_step, self.captured, self.projects, self.first, self.last = record_step, captured, projects, first, last

    @property
    def span(self) -> tuple[str | None, str | None]:
        return (utc_text(self.first) if self.first else None, utc_text(self.last) if self.last else None)

    @property
    def project_paths(self) -> tuple[str, ...]:
        return tuple(self.projects[True] or self.projects[False])

    def order(self) -> list[_S]:
        """Streams in landing order, main first."""
        return sorted(self.streams.values(), key=lambda x: (x.key != "main", x.first_seq))


def _gather(rows: Iterable[RecordRow], lean: bool = False) -> _Gathered:
    """Steps and streams from the records, in landing order: calls joined by call id, replies by
    call, tool results to their calls, echoed inputs dropped, replays marked, a sub-agent's last
    call completed from its parent's record of it. ``lean`` (:func:`calls_of`): without what
    only the assembled conversation reads (replies, notices, summaries, captured records, tool
    steps, which record holds which step); nothing of that decides an input dropped, a replay or
    a call's counts. What it reads of the events is what ``lean_events.lean`` keeps."""
    steps: list[_B] = []
    streams: dict[str, _S] = {}
    calls: dict[str, _B] = {}
    replies: dict[str, _B] = {}
    tools: dict[str, _B] = {}
    starts: dict[str, set[str]] = {}  # stream key -> tool ids the record links to its start
    record_step: dict[str, _B] = {}  # record key -> the first step it holds
    usage_of_agent: dict[str, dict[str, Any]] = {}
    answered: dict[str, bool] = {}  # lean: tool call id -> whether its result came (no tool steps)
    stamps: set[Any] = set()  # the times met, each once: the span is their earliest and latest instant

    def new(kind: str, s: _S) -> _B:
        b = _B(kind, s.key, seq, ts)
        steps.append(b)
        s.steps.append(b)
        if not lean:
            record_step.setdefault(key, b)
        return b

    captured: dict[str, dict[str, list[dict[str, Any]]]] = {}  # tool id -> change/execution events
    projects: dict[bool, dict[str, None]] = {True: {}, False: {}}  # main stream's / others' project paths, in landing order

    add_stamp = stamps.add
    for seq, key, stream, ts, events in rows:
        add_stamp(ts)
        if events and events[0].get("e") in CAPTURE_EVENTS and all(ev.get("e") in CAPTURE_EVENTS for ev in events):
            # A record captured beside the transcript (a recorder's change or execution record):
            # it belongs to the tool call it names, whenever it landed, and opens no stream.
            for ev in () if lean else events:
                tid = _tool_id(ev.get("tool"))
                if tid:
                    captured.setdefault(tid, {}).setdefault(ev["e"], []).append({**ev, "seq": seq})
            continue
        s = streams.get(stream)
        if s is None:
            s = streams[stream] = _S(stream, seq)
        if s.steps and not lean:
            # A record that opens no step of its own (a progress line) still has a place: the
            # step before it, so a join that names it (a helper stream's parent) finds a step.
            record_step.setdefault(key, s.steps[-1])
        for ev in events:
            e = ev.get("e")
            if e == "call":
                # The commonest event (every fragment of every response): written for speed.
                cid = ev["id"]
                b = calls.get(cid)
                if b is None:
                    b = calls[cid] = new("model_call", s)
                    b.call, b.model = cid, ev.get("model")
                else:
                    if not lean:  # the lean view reads neither a call's records nor its end
                        b.touch(seq, ts)
                    if not b.model:
                        b.model = ev.get("model")
                if not b.response:
                    r = ev.get("response")
                    if isinstance(r, str):
                        b.response = r
                u = ev.get("usage")
                if u:
                    if b.usage is None:
                        b.usage = dict(u)
                    out = u.get("output")
                    if type(out) is int and 0 <= out <= MAX_COUNT:  # records.count
                        b.outputs.append(out)
                        if ev.get("final"):
                            b.final_out = out
                if not lean:
                    record_step.setdefault(key, b)
            elif e == "text":
                if lean:
                    continue
                b = replies.get(ev["call"])
                if b is None:
                    b = replies[ev["call"]] = new("reply", s)
                    b.call, b.text, b.size = ev["call"], ev.get("text", ""), ev.get("size", 0)
                else:
                    b.touch(seq, ts)
                    b.text = _join(b.text, ev.get("text", ""))
                    b.size += ev.get("size", 0) + 1
            elif e == "tool_use":
                tid = _tool_id(ev.get("id"))
                if lean:
                    if tid and tid not in answered:
                        answered[tid] = False
                    continue
                if tid in tools:
                    tools[tid].touch(seq, ts)
                    continue
                b = new("tool", s)
                name = ev.get("name")  # a list or an object (a broken line) names no tool
                b.tool_id, b.name, b.request, b.status = tid, name if isinstance(name, str) else None, ev.get("input"), "no_result"
                if tid:
                    tools[tid] = b
            elif e == "tool_result":
                tid = _tool_id(ev.get("id"))
                if lean:
                    if answered.get(tid) is not False:
                        continue  # no such call, or a second result for one call: the first one counts
                    answered[tid] = True
                else:
                    b = tools.get(tid)
                    if b is None:
                        b = new("notice", s)
                        b.notice, b.text, b.size = "orphan_tool_result", ev.get("text", ""), ev.get("size", 0)
                        continue
                    if b.status != "no_result":
                        continue  # a second result for one call: the first one counts
                    b.touch(seq, ts)
                    b.status = "failed" if ev.get("error") else "returned"
                    b.text, b.size = ev.get("text", ""), ev.get("size", 0)
                    b.launch = ev.get("launch") is True
                    record_step.setdefault(key, b)
                if ev.get("starts") and tid:
                    starts.setdefault(ev["starts"], set()).add(tid)
                    if ev.get("agent_usage"):
                        usage_of_agent[ev["starts"]] = ev["agent_usage"]
            elif e == "starts":
                if _tool_id(ev.get("id")):
                    starts.setdefault(ev["stream"], set()).add(ev["id"])
            elif e == "stream":
                s.kind = ev.get("kind") or "child"
                s.by.update(x for x in ev.get("by") or () if _tool_id(x))
                s.after = ev.get("after")
                s.group = ev.get("group") if isinstance(ev.get("group"), str) else None
            elif e == "input":
                b = new("input", s)
                b.source, b.text, b.size = ev.get("source"), ev.get("text", ""), ev.get("size", 0)
            elif e == "notice" and not lean:
                b = new("notice", s)
                b.notice, b.text, b.size = ev.get("kind"), ev.get("text", ""), ev.get("size", 0)
                if isinstance(ev.get("ended"), str) and ev["ended"]:
                    b.ended = ev["ended"]  # a stream key: made a stream id once ids are given
            elif e == "summary" and not lean:
                b = new("summary", s)
                b.text, b.size = ev.get("text", ""), ev.get("size", 0)
            elif e == "project":
                path = ev.get("path")
                if isinstance(path, str) and path:
                    projects[s.key == "main"].setdefault(path)

    first, last = _span(stamps)
    _drop_echoed_inputs(streams.values())
    _mark_replays(steps)
    for st in streams.values():
        au = usage_of_agent.get(st.key) if st.key != "main" else None
        if au:
            _apply_agent_usage(st, au)
    return _Gathered(steps, streams, tools, starts, record_step, captured, projects, first, last)


def assemble(conversation: str, runtime: str, rnd: Round, records: Sequence[StoredRecord],
             copies: Mapping[str, str] | None = None) -> Conversation:
    """Build the conversation as it stood at round ``rnd`` from its records. ``copies``: call ids
    another conversation landed first -> that conversation (``Store.copied_calls``)."""
    g = _gather(map(_ROW, records))
    steps, streams, tools, starts, record_step, captured = g.steps, g.streams, g.tools, g.starts, g.record_step, g.captured

    # Stream ids in landing order; main is m.
    order = g.order()
    sid_of: dict[str, str] = {}
    n = 0
    for st in order:
        if st.key == "main":
            sid_of[st.key] = "m"
        else:
            n += 1
            sid_of[st.key] = f"a{n}"

    # Step ids in landing order of their first record (creation order is that order).
    live = [b for b in steps if not b.dropped]
    step_id = {id(b): f"s{i}" for i, b in enumerate(live, 1)}

    # Starts relations: what the record links to each stream's start.
    starters: dict[str, list[_B]] = {}
    for st in order:
        if st.key == "main":
            continue
        ids = starts.get(st.key, set()) | st.by | (starts.get(st.group, set()) if st.group else set())
        found = {id(tools[t]): tools[t] for t in ids if t in tools}
        if not found and st.after and st.after in record_step:
            b = record_step[st.after]
            if b.stream != st.key:
                found = {id(b): b}
        starters[st.key] = sorted(found.values(), key=lambda b: b.seq)
        for b in found.values():
            if b.kind == "tool":
                b.kind = "agent_call"
            b.starts.append(sid_of[st.key])

    reason: dict[str, str | None] = {"main": None}
    for st in order:
        if st.key == "main":
            continue
        found = starters[st.key]
        reason[st.key] = "no starting step" if not found else "several starting steps" if len(found) > 1 else None
    for st in order:
        # A child can land before its parent (agent files land in name order): follow the
        # parents up to main; any unattributed one on the way (or a loop) makes it unattributed.
        if reason[st.key] is not None or st.key == "main":
            continue
        p, hops = starters[st.key][0].stream, 0
        while p != "main":
            if reason.get(p) is not None or hops > len(order):
                reason[st.key] = "unattributed parent"
                break
            p, hops = starters[p][0].stream, hops + 1

    # Talks.
    talk_of: dict[int, int] = {}
    talk_list: list[tuple[_S, list[_B]]] = []
    loose: list[_B] = []
    for st in order:
        mine = [b for b in st.steps if not b.dropped]
        if st.key != "main":
            if mine:
                talk_list.append((st, mine))
            continue
        cur: list[_B] | None = None
        for b in mine:
            if _opens_talk(b, cur is not None):
                cur = [b]
                talk_list.append((st, cur))
            elif cur is None:
                loose.append(b)
            else:
                cur.append(b)
    talk_list.sort(key=lambda t: t[1][0].seq)
    talks: list[Talk] = []
    for i, (st, bs) in enumerate(talk_list, 1):
        for b in bs:
            talk_of[id(b)] = i
        reply = next((b for b in reversed(bs) if b.kind == "reply"), None)
        stamps = [x for b in bs for x in (b.ts, b.ts_end) if x]
        talks.append(Talk(
            id=f"k{i}", stream=sid_of[st.key],
            inputs=tuple(step_id[id(b)] for b in bs if b.kind == "input"),
            steps=tuple(step_id[id(b)] for b in bs),
            reply=step_id[id(reply)] if reply else None,
            start=min(stamps) if stamps else None, end=max(stamps) if stamps else None,
        ))

    final_steps: list[Step] = []
    n_input = 0
    for b in live:
        inp = None
        if b.kind == "input":
            n_input += 1
            inp = f"i{n_input}"
        usage, floor = _usage(b) if b.kind == "model_call" else (None, None)
        t = talk_of.get(id(b))
        cap = captured.pop(b.tool_id, None) if b.tool_id and b.kind in ("tool", "agent_call") else None
        final_steps.append(Step(
            id=step_id[id(b)], kind=b.kind, stream=sid_of[b.stream], talk=f"k{t}" if t else None,
            seq=b.seq, records=tuple(b.records), ts=b.ts, ts_end=b.ts_end, text=b.text, size=b.size,
            input=inp, source=b.source, notice=b.notice, call=b.call, model=b.model, usage=usage,
            output_floor=floor, tool_id=b.tool_id, name=b.name, request=b.request, status=b.status,
            starts=tuple(b.starts), launch=b.launch and bool(b.starts),
            ended=sid_of.get(b.ended) if b.ended else None,
            changes=tuple(cap.get("change", ())) if cap else (),
            executions=tuple(cap.get("execution", ())) if cap else (),
            replay_of=step_id[id(b.replay_of)] if b.replay_of is not None else None,
            copy_of=copies.get(b.call) if copies and b.call and b.kind == "model_call" else None,
        ))
    unattached = tuple(sorted((ev for evs in captured.values() for lst in evs.values() for ev in lst), key=lambda ev: ev["seq"]))

    talks_by_stream: dict[str, list[str]] = {}
    for t in talks:
        talks_by_stream.setdefault(t.stream, []).append(t.id)
    stream_rows = []
    for st in order:
        sid = sid_of[st.key]
        found = starters.get(st.key, [])
        stream_rows.append(Stream(
            id=sid, key=st.key, kind=st.kind,
            started_by=tuple(step_id[id(b)] for b in found if id(b) in step_id),
            parent=sid_of[found[0].stream] if len(found) == 1 else None,
            unattributed=reason[st.key], talks=tuple(talks_by_stream.get(sid, ())),
            steps=sum(1 for b in st.steps if not b.dropped),
        ))
    return Conversation(conversation, runtime, rnd, tuple(stream_rows), tuple(talks), tuple(final_steps),
                        tuple(step_id[id(b)] for b in loose), unattached, g.span, g.project_paths)


def _opens_talk(b: Any, in_talk: bool) -> bool:
    """Whether a main-stream step opens a talk: the person's input or command (a queued input
    only when no talk is open: typed while the agent worked, it belongs to the talk it joined)."""
    return b.kind == "input" and (b.source in ("person", "command") or (b.source == "queued" and not in_talk))


def _first_input(inputs: Sequence[Any]) -> Any:
    """Of the main stream's inputs in order, the person's first real one (``Conversation.first_input``)."""
    inputs = [s for s in inputs if s.source in PERSON_SOURCES]
    typed = next((s for s in inputs if s.source != "command"), None)
    with_args = next((s for s in inputs if s.source == "command" and len(s.text.split(None, 1)) > 1), None)
    return typed or with_args or next(iter(inputs), None)


class LeanCall(NamedTuple):
    """A model call as the ledger's summaries read it (``Step``'s fields of a model call)."""

    stream: str
    """The runtime's key of its stream (``main``, ``agent-f7fd82bf``, ...)."""
    owner: str | int
    """Which owner it is counted under (``Ledger.owners``, by identity only): the number of the
    main talk holding it, else its stream's key (a child stream is one talk; ``main`` for loose
    main-stream work)."""
    call: str | None
    model: str | None
    ts: str | None
    usage: Usage
    output_floor: int | None
    copy_of: str | None
    replay: bool
    """It replays another call of the conversation (``Step.replay_of``)."""


@frozen
class Calls:
    """What the ledger's summaries read of a conversation at a round, made by the same first pass
    as :func:`assemble` but without the rest of it (step and talk ids, starts relations, steps'
    texts and requests): its model calls in step order, its streams, how many main talks it has
    and how it began."""

    id: str
    runtime: str
    round: Round
    streams: tuple[tuple[str, str], ...]
    """(key, kind) of each stream, in ``Conversation.streams``' order (main first, then landing order)."""
    calls: tuple[LeanCall, ...]
    main_talks: int
    first_input: str | None
    """The text of ``Conversation.first_input``."""
    span: tuple[str | None, str | None]
    projects: tuple[str, ...]


def calls_of(conversation: str, runtime: str, rnd: Round, rows: Iterable[RecordRow],
             copies: Mapping[str, str] | None = None) -> Calls:
    """The :class:`Calls` of the conversation :func:`assemble` would build from the same records."""
    g = _gather(rows, lean=True)
    main = g.streams.get("main")
    talk_of: dict[int, int] = {}  # main-stream model call -> the number of the main talk holding it
    inputs: list[_B] = []
    talks = 0
    for b in main.steps if main is not None else ():
        if b.dropped:
            continue
        if b.kind == "input":
            inputs.append(b)
        if _opens_talk(b, talks > 0):
            talks += 1
        elif talks and b.kind == "model_call":
            talk_of[id(b)] = talks
    calls = tuple(
        LeanCall(b.stream, talk_of.get(id(b), b.stream), b.call, b.model, b.ts, *_usage(b),
                 copies.get(b.call) if copies and b.call else None, b.replay_of is not None)
        for b in g.steps if b.kind == "model_call")
    first = _first_input(inputs)
    return Calls(conversation, runtime, rnd, tuple((st.key, st.kind) for st in g.order()), calls, talks,
                 first.text if first is not None else None, g.span, g.project_paths)


def _span(stamps: set[Any]) -> tuple[dt.datetime | None, dt.datetime | None]:
    """The earliest and latest instant of the records' times (``times.instant`` of each; one that
    is none is left out). Parsed all at once, and compared as parsed: aware times compare as
    instants and naive ones (UTC) among themselves; anything else (a time that is not ISO-8601,
    not text, naive beside aware) takes ``instant`` one by one."""
    try:
        got = [_fromiso(x) for x in stamps if x]
        if not got:
            return None, None
        lo, hi = min(got), max(got)  # TypeError: naive and aware times together
        if lo.tzinfo is None:  # all naive: UTC
            lo, hi = lo.replace(tzinfo=dt.UTC), hi.replace(tzinfo=dt.UTC)
        else:
            lo, hi = lo.astimezone(dt.UTC), hi.astimezone(dt.UTC)  # OverflowError: an end past year 1 or 9999 in UTC
        if lo < FIRST or hi > LAST:
            raise OverflowError  # an end instant leaves out (as may the next one in): one by one
        return lo, hi
    except (TypeError, ValueError, OverflowError):
        known = [t for t in map(instant, stamps) if t is not None]
        return (min(known), max(known)) if known else (None, None)


_fromiso = dt.datetime.fromisoformat


def _tool_id(v: Any) -> str | None:
    """A tool call id as events carry it: a non-empty string, else none (never a crash)."""
    return v if isinstance(v, str) and v else None


def _join(a: str, b: str) -> str:
    out = f"{a}\n{b}" if a else b
    return out if len(out) <= 2000 else out[:2000]


def _drop_echoed_inputs(streams: Any) -> None:
    """One input recorded twice is one input: the same text again in the same stream with no
    model call between (a queued input later written as a prompt line, a slash command written
    both as a user line and as a system line). The first keeps its place."""
    for st in streams:
        last: _B | None = None
        for b in st.steps:
            if b.kind == "model_call":
                last = None
            elif b.kind == "input":
                if last is not None and last.text.strip() == b.text.strip() and b.source in PERSON_SOURCES and last.source in PERSON_SOURCES:
                    b.dropped = True
                    last.records.extend(x for x in b.records if x not in last.records)
                    continue
                last = b


def _mark_replays(steps: list[_B]) -> None:
    """Calls of one response (the runtime's ``response`` id) under several call ids, at least one
    of them outside the main stream, are one response: a child or helper stream that replays
    another stream's messages (a /btw side question re-sends its parent's) holds a replay, counted
    once as the call it replays: the main stream's, else the first landed. Main-stream calls are
    never replays of one another (they are the runtime's own separate requests)."""
    by_response: dict[str, list[_B]] = {}
    for b in steps:
        if b.kind == "model_call" and b.response:
            by_response.setdefault(b.response, []).append(b)
    for group in by_response.values():
        if len(group) < 2:
            continue
        first = next((b for b in group if b.stream == "main"), group[0])
        for b in group:
            if b is not first and b.stream != "main":
                b.replay_of = first


def _usage(b: _B) -> tuple[Usage | None, int | None]:
    """The four types of one call: input side from its fragments, output from the final one.

    The output is known only when the record shows the final value: a fragment marked final by
    the runtime, or a value that grew after an earlier fragment's (the final usage arrived).
    Otherwise it is unknown, and the largest streaming value is kept apart as a lower bound.
    """
    if b.usage is None:
        return Usage(), None
    known = b.final_out is not None or (len(b.outputs) > 1 and b.outputs[-1] > b.outputs[0])
    if known:
        out = b.final_out if b.final_out is not None else max(b.outputs)
        floor = None
    else:
        out, floor = None, (max(b.outputs) if b.outputs else None)
    return Usage.with_output(b.usage, out), floor


def _apply_agent_usage(st: _S, au: dict[str, Any]) -> None:
    """The parent's record of a sub-agent's last call carries that call's final usage: when the
    stream's own copy of it lacks the final fragment, the output is known from there."""
    last = next((b for b in reversed(st.steps) if b.kind == "model_call"), None)
    if last is None or last.usage is None or last.final_out is not None:
        return
    out = count(au.get("output"))
    if all(last.usage.get(k) == au.get(k) for k in ("input", "cache_read", "cache_write")) and out is not None:
        last.final_out = out


LOOSE = "loose"
"""What a stream rolls up to when loose main-stream work (before the first input) started it."""
UNATTRIBUTED = "unattributed"
"""What a stream rolls up to when no single step can be shown to have started it."""


def stream_anchors(conv: Conversation) -> dict[str, str | None]:
    """Each child stream -> the main-stream step that began its chain of starting steps, as deep
    as it goes (a sub-agent's sub-agent sits where its parent's starting step sits); None when no
    single step started it or its chain (or its chain loops). Cost per target places a sub-task's
    calls there; :func:`stream_roots` is the talk of that step."""
    by_id = {st.id: st for st in conv.streams}
    out: dict[str, str | None] = {}

    def anchor(sid: str, seen: frozenset[str]) -> str | None:
        if sid in out:
            return out[sid]
        st = by_id[sid]
        if st.unattributed is not None or len(st.started_by) != 1 or sid in seen:
            a = None
        else:
            starter = conv.step(st.started_by[0])
            a = starter.id if starter.stream == "m" else anchor(starter.stream, seen | {sid})
        out[sid] = a
        return a

    for st in conv.streams:
        if st.id != "m":
            anchor(st.id, frozenset())
    return out


def stream_roots(conv: Conversation) -> dict[str, str]:
    """Each child stream -> the main talk that alone started it, through its chain of starting
    steps as deep as it goes; ``LOOSE`` when loose main-stream work started it; ``UNATTRIBUTED``
    when no single step did (or its chain loops). The ledger owns costs by it, the window picks
    sub-tasks by it."""
    out: dict[str, str] = {}
    for sid, a in stream_anchors(conv).items():
        out[sid] = UNATTRIBUTED if a is None else (conv.step(a).talk or LOOSE)
    return out


def work_order(conv: Conversation) -> Callable[[str], tuple[int, ...]]:
    """When a step happened in the work, as a key to compare steps by: a main-stream step at its
    landing position ``(seq,)``; a sub-task's step where the step that started it lies in its
    giver's stream, through its chain of starting steps as deep as it goes, and among the
    sub-task's own steps in landing order: ``(starting step's seq, ..., its own seq)``. So a
    sub-task's steps come after the step that started it and before its giver's next step,
    though a runtime that keeps each sub-agent in a file of its own lands them after the whole
    main file (Claude Code): 258c7280's a1, started at s343, ran before s344. A stream no single
    step can be shown to have started (or whose chain none did) is placed by landing order alone.
    Never by times, which can go back or be missing (spec: "A child agent's calls stay with the
    part its own starting step is in"; "Order is never taken from times"; docs/rule-readings.md).
    The one rule by which the achievement stage orders a round of rework's attempt, trigger and
    redo and the close finds the calls a round holds."""
    anchors = stream_anchors(conv)
    by_id = {st.id: st for st in conv.streams}
    prefix: dict[str, tuple[int, ...]] = {"m": ()}

    def of_stream(sid: str) -> tuple[int, ...]:
        got = prefix.get(sid)
        if got is None:
            if anchors.get(sid) is None:  # unattributed, or its chain is: landing order alone
                got = ()
            else:
                starter = conv.step(by_id[sid].started_by[0])
                got = of_stream(starter.stream) + (starter.seq,)
            prefix[sid] = got
        return got

    def place(step: str) -> tuple[int, ...]:
        s = conv.step(step)
        return (*of_stream(s.stream), s.seq)

    return place
