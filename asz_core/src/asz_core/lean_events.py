"""A record's events as the ledger's lean view reads them (``assembly.calls_of``), kept at collect
beside the whole events (the store's ``leans`` table) so the first ledger decodes a few MB of them
instead of every event of every record.

:func:`lean` keeps what ``assembly._gather(lean=True)`` reads and drops the big rest: the texts
of replies, thinking, notices and summaries, a tool call's name and request, a tool result's
text. The small events it reads are kept whole (calls, inputs, streams, starts, projects: making
them smaller would cost collect more time than it saves the ledger). Whatever the lean view
decides (a stream opened, an input dropped as an echo, a replay, a call's counts, a sub-agent's
last output) comes out the same from the lean events as from the whole ones; the ledger's tests
compare the two over the corpus. Events of a shape the lean view would fail on (not a dict) are
kept, so it fails on them alike; anything odd enough to raise here keeps the record's events whole.

The store keys what it kept by :data:`RULE`, a digest of this file: lean events kept by another
version of this rule are never read (the whole events are, as before the table existed).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

CAPTURE = frozenset({"change", "execution"})
"""``assembly.CAPTURE_EVENTS``: a record of only these is captured beside the transcript."""

_CAPTURED = ({"e": "change"},)
"""What a captured record keeps: the lean view only needs to know it is one (it opens no stream)."""


def lean(events: tuple[dict[str, Any], ...] | list[Any]) -> tuple[Any, ...]:
    """What the lean view reads of one record's events, in their order (all of them, when
    anything about them is odd enough to raise here: the lean view then reads them whole)."""
    if not events:
        return ()
    try:
        return _lean(events)
    except Exception:  # noqa: BLE001 - never a reason not to store a record
        return tuple(events)


_WHOLE = frozenset({"call", "input", "stream", "starts", "project"})
"""Events the lean view reads (nearly) all of, and small: kept as they are."""


def _lean(events: tuple[dict[str, Any], ...] | list[Any]) -> tuple[Any, ...]:
    out: list[Any] = []
    for ev in events:
        if type(ev) is not dict:
            out.append(ev)  # the lean view fails on it as on the whole events
            continue
        e = ev.get("e")
        if e == "tool_use":
            out.append({"e": e, "id": ev["id"]} if "id" in ev else {"e": e})  # not its name or request
        elif e == "tool_result":
            d = {"e": e}  # not its text
            for k in ("id", "starts", "agent_usage"):
                if k in ev:
                    d[k] = ev[k]
            out.append(d)
        elif e in _WHOLE:
            out.append(ev)
        elif e == "change" or e == "execution":
            if all(type(x) is dict and x.get("e") in CAPTURE for x in events):
                return _CAPTURED
        # text, thinking, notice, summary, turn_end and anything else: the lean view reads none
    return tuple(out)


def _rule() -> str:
    try:
        return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]
    except OSError:  # no source to read (a frozen build): no lean events are ever trusted but this run's
        return f"pid{id(_CAPTURED)}"


RULE = _rule()
