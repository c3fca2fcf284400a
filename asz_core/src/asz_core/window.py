"""Windows: what one judge run may see of a conversation at one head (docs/windows.md).

A run judges the whole conversation, or a window of whole main talks chosen by a talk id range
or by the time their talks started. Each selected talk comes with every sub-task it started
(followed through the starts relations as deep as they go), however long it ran. The main talks
before the window are context (``before``): readable, never judged or priced. Nothing recorded
after the selected work ends is shown: the window's view is the conversation assembled again
from the records that landed up to the last record of the selected work (``cut``), so a step
that started before then keeps only the records written by then (a tool call whose result came
later shows no result; a model call still running counts what it had read, its output unknown),
and a talk that ran past the end ends there. Loose work and streams no single step can be shown
to have started are shown only in runs over the whole conversation.

Order is landing order (record ``seq``), never timestamps. Built on the store's and assembly's
public functions; nothing here writes.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from typing import Any

import orjson
from attrs import frozen

from .assembly import CAPTURE_EVENTS, LOOSE, UNATTRIBUTED, Conversation, Step, Talk, assemble, stream_roots
from .digits import ID_NUMBER
from .errors import AszError
from .gcpause import no_gc
from .store import Round, Store, StoredRecord


class WindowError(AszError):
    """A window that cannot be made (no such talk, an empty range, a bad time)."""


@frozen
class WindowSpec:
    """What a run asked for: the whole conversation, a talk id range, or a time range."""

    kind: str = "all"
    """``all``, ``talks`` or ``time``."""
    first: str | None = None
    """Talk range: first main talk id (``k3``); time range: the start (ISO 8601, inclusive)."""
    last: str | None = None
    """Talk range: last main talk id (inclusive); time range: the end (ISO 8601, exclusive)."""

    @classmethod
    def parse(cls, text: str | None) -> WindowSpec:
        """``all`` (or nothing), ``k3..k7`` / ``k3-k7`` / ``k5`` (talk ids), or ``FROM..TO`` with
        ISO 8601 times (either side may be empty)."""
        if not text or text.strip() in ("all", "whole"):
            return cls()
        t = text.strip()
        m = re.fullmatch(rf"(k{ID_NUMBER})\s*(?:(?:\.\.|-)\s*(k{ID_NUMBER}))?", t)
        if m:
            return cls("talks", m.group(1), m.group(2) or m.group(1))
        if ".." in t:
            a, b = (x.strip() or None for x in t.split("..", 1))
            for x in (a, b):
                if x is not None:
                    _time(x)
            return cls("time", a, b)
        raise WindowError(f"window {text!r}: give all, a talk range such as k3..k7, or a time range FROM..TO")

    def text(self) -> str:
        """The window as ``--window`` takes it: ``all``, ``k3..k7`` or ``FROM..TO``."""
        if self.kind == "talks":
            return f"{self.first}..{self.last}"
        if self.kind == "time":
            return f"{self.first or ''}..{self.last or ''}"
        return "all"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "first": self.first, "last": self.last}


@frozen
class Window:
    """The view one run reads. ``conv`` is the conversation as it stood at ``cut``."""

    spec: WindowSpec
    round: Round
    conv: Conversation
    cut: int
    """The last record seq the window shows (every record landed after it is hidden)."""
    whole: bool
    judged: tuple[str, ...]
    """Main talks judged (the window's talks), in order."""
    before: tuple[str, ...]
    """Main talks before the window: context, marked ``before``."""
    roots: dict[str, str]
    """Child stream -> the main talk it rolls up to, ``loose`` or ``unattributed`` (in ``conv``)."""
    streams: frozenset[str]
    """Streams the window shows (``m`` included)."""
    talks: frozenset[str]
    """Talks the window shows: judged and before main talks, and the talks of shown streams."""
    steps: frozenset[str]
    """Steps the window shows."""
    cut_records: int
    """Records of the head the cut hides (0 for a whole-conversation window)."""
    captures: frozenset[int] = frozenset()
    """Change and execution records that landed after ``cut`` but were written when their tool
    call returned, before it (the recorder's spool lands after the transcript): shown."""

    @property
    def head(self) -> str:
        return f"r{self.round.number}"

    def mark(self, talk: str) -> str:
        """``judged``, ``before`` (context), ``loose`` or ``unattributed`` for a shown talk."""
        t = self.conv.talk(talk)
        root = talk if t.stream == "m" else self.roots.get(t.stream, UNATTRIBUTED)
        if root in self.before:
            return "before"
        if root in (LOOSE, UNATTRIBUTED):
            return root
        return "judged"

    def shows_step(self, sid: str) -> bool:
        return sid in self.steps

    def shown_steps(self) -> list[Step]:
        return [s for s in self.conv.steps if s.id in self.steps]

    def shown_talks(self) -> list[Talk]:
        return [t for t in self.conv.talks if t.id in self.talks]

    def to_json(self) -> dict[str, Any]:
        return {
            "spec": self.spec.to_json(), "whole": self.whole, "judged": _span(self.judged), "before": _span(self.before),
            "cut_seq": self.cut, "records_after_cut_hidden": self.cut_records,
        }


def _span(ids: tuple[str, ...]) -> dict[str, Any]:
    return {"count": len(ids), "first": ids[0] if ids else None, "last": ids[-1] if ids else None}


# --- reading the store at a cut -----------------------------------------------------------------

def records_at(store: Store, conversation: str, upto: int, cut: int | None = None) -> list[StoredRecord]:
    """The records of the view at round ``upto`` that landed by ``cut`` (a record seq), in landing
    order; a rewritten record shows its newest version landed by both (as :meth:`Store.records`)."""
    return store.records(conversation, upto, cut=cut)


def raw_at(store: Store, conversation: str, seq: int, upto: int, cut: int, captures: frozenset[int] = frozenset()) -> bytes:
    """The bytes of record ``seq`` as the window sees them (its newest version landed by round
    ``upto`` and by ``cut``; a capture the window shows past the cut as it landed)."""
    first = store.placed(conversation, seq)
    if not first or first[2] > upto or (seq > cut and seq not in captures):
        raise WindowError(f"record {seq} is not in the window")
    raw = store.newest_raw(conversation, first[0], upto, max(cut, seq))
    if raw is None:
        raise WindowError(f"record {seq} is not in the window")
    return raw


# --- building -------------------------------------------------------------------------------------

roots = stream_roots  # the ledger's owners and the window's sub-tasks follow one rule


def _time(text: str) -> dt.datetime:
    try:
        t = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError as exc:
        raise WindowError(f"{text!r} is not an ISO 8601 time") from exc
    return t if t.tzinfo else t.replace(tzinfo=dt.timezone.utc)


def select(conv: Conversation, spec: WindowSpec) -> list[str]:
    """The main talks a spec selects, in order (a contiguous range of main talks)."""
    mains = conv.main_talks
    if spec.kind == "all":
        return [t.id for t in mains]
    ids = [t.id for t in mains]
    if spec.kind == "talks":
        for k in (spec.first, spec.last):
            if k not in ids:
                raise WindowError(f"{k} is not a main talk of {conv.id[:8]} at r{conv.round.number} "
                                  f"(main talks: {ids[0] + '…' + ids[-1] if ids else 'none'})")
        a, b = ids.index(spec.first), ids.index(spec.last)  # type: ignore[arg-type]
        if a > b:
            raise WindowError(f"talk range {spec.first}..{spec.last} is empty: {spec.first} comes after {spec.last}")
        return ids[a:b + 1]
    lo = _time(spec.first) if spec.first else None
    hi = _time(spec.last) if spec.last else None
    hit = []
    for i, t in enumerate(mains):
        if t.start is None:
            continue
        s = _time(t.start)
        if (lo is None or s >= lo) and (hi is None or s < hi):
            hit.append(i)
    if not hit:
        raise WindowError(f"no main talk of {conv.id[:8]} starts in {spec.first or '…'}..{spec.last or '…'}")
    return ids[hit[0]:hit[-1] + 1]


def _whole(spec: WindowSpec, rnd: Round, conv: Conversation, last_seq: int) -> Window:
    return Window(spec, rnd, conv, last_seq, True, tuple(t.id for t in conv.main_talks), (), roots(conv),
                  frozenset(s.id for s in conv.streams), frozenset(t.id for t in conv.talks),
                  frozenset(s.id for s in conv.steps), 0)


def whole(store: Store, conversation: str, head: str | int | None = None) -> Window:
    """The whole conversation's window at a round, as :func:`build` makes it, from the assembly
    cache ``asz show`` reads (a second look at a 90 MB conversation costs a file read, not an
    assembly). Its cut is the head's last row (:func:`_head_seq`), as :func:`build` cuts a whole
    window."""
    from .assembly_cache import load_assembled

    cid = store.resolve(conversation)
    rnd = store.round(cid, head)
    with no_gc():
        conv = load_assembled(store, cid, rnd)
    return _whole(WindowSpec(), rnd, conv, _head_seq(store, cid, rnd.number))


def _head_seq(store: Store, cid: str, upto: int) -> int:
    """The cut of a whole window: the last row landed by round ``upto``, every version counted
    (a record rewritten after the last new one shows its newest version; the seq of the newest
    first version would hide it)."""
    return store.last_seq(cid, upto)


def build(store: Store, conversation: str, head: str | int | None = None, spec: WindowSpec | str | None = None) -> Window:
    """The window ``spec`` of a collected conversation at a round (default: the newest)."""
    if not isinstance(spec, WindowSpec):
        spec = WindowSpec.parse(spec)
    cid = store.resolve(conversation)
    rnd = store.round(cid, head)
    runtime = store.runtime_of(cid)
    with no_gc():
        recs = store.records(cid, rnd.number)
        copies = store.copied_calls(cid)
        full = assemble(cid, runtime, rnd, recs, copies)
        if spec.kind == "all":
            return _whole(spec, rnd, full, _head_seq(store, cid, rnd.number))
        judged = select(full, spec)
        rts_full = roots(full)
        jset = set(judged)
        cut = 0
        for t in judged:
            for sid in full.talk(t).steps:
                cut = max(cut, full.step(sid).records[-1])
        sub = {sid for sid, r in rts_full.items() if r in jset}
        for s in full.steps:
            if s.stream in sub:
                cut = max(cut, s.records[-1])
        del full, rts_full, sub  # the head's view is not kept: the window is assembled again
        versioned = store.has_versions(cid, rnd.number)
        later = [r for r in recs if r.seq > cut]
        if versioned:  # which version each record showed at the cut: read again from the store
            del recs
            recs = records_at(store, cid, rnd.number, cut)
        else:  # every record has one version: the view at the cut is the head's records up to it
            recs = [r for r in recs if r.seq <= cut]
        kept = _captures_written_by(recs, later)
        captures = frozenset(r.seq for r in kept)
        conv = assemble(cid, runtime, rnd, recs + kept, copies)
        del later
        del recs
    rts = roots(conv)
    first = conv.talk(judged[0])
    before = tuple(t.id for t in conv.main_talks if int(t.id[1:]) < int(first.id[1:]))
    shown_roots = jset | set(before)
    streams = {"m"} | {sid for sid, r in rts.items() if r in shown_roots}
    talks = set(shown_roots)
    for t in conv.talks:
        if t.stream != "m" and t.stream in streams:
            talks.add(t.id)
    steps = frozenset(s.id for s in conv.steps if s.talk in talks)
    hidden = store.count_after(cid, rnd.number, cut)
    return Window(spec, rnd, conv, cut, False, tuple(judged), before, rts, frozenset(streams), frozenset(talks), steps,
                  hidden - len(captures), captures)



def _captures_written_by(shown: list[StoredRecord], later: list[StoredRecord]) -> list[StoredRecord]:
    """Records past the cut made only of change and execution records of tool calls whose result
    the window shows: the recorder wrote them when the call returned, before the cut, and they
    landed later only because the spool is collected after the transcript. A call whose result
    came after the cut keeps none (its capture was written later)."""
    returned = {ev.get("id") for r in shown for ev in r.events if ev.get("e") == "tool_result"}
    return [r for r in later if r.events and all(ev.get("e") in CAPTURE_EVENTS and ev.get("tool") in returned
                                                   for ev in r.events)]


def descendants(conv: Conversation, rts: dict[str, str], talk_ids: Iterable[str]) -> list[str]:
    """Child streams rolling up to any of ``talk_ids``, in landing order."""
    want = set(talk_ids)
    return [st.id for st in conv.streams if st.id != "m" and rts.get(st.id) in want]
