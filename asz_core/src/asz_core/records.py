"""Records: the frozen data asz passes around. No serialisation here (see convert.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime as _datetime
from typing import Any

from attrs import define, field, frozen

from .times import instant

_fromisoformat = _datetime.fromisoformat


@frozen(slots=True)
class Entry:
    """One raw record a runtime wrote, as an adapter read it."""

    key: str
    """Identity of the record, unique across the conversations of its runtime (Claude Code: the line's uuid). Two entries with one key
    are one record: a resumed session's copied lines are never stored twice."""
    session: str
    """The runtime's session id of the file this came from; decides the conversation."""
    stream: str
    """``"main"`` or the runtime's key of the child or helper stream it belongs to."""
    kind: str
    """The runtime's own type of the record (``user``, ``assistant``, ``run``, ...)."""
    file: str
    line: int
    """1-based line (or item) number in ``file``."""
    raw: bytes
    """The record exactly as written."""
    events: tuple[dict[str, Any], ...] = ()
    """Normalized events (docs/events.md)."""
    ts: str | None = None
    """The time the runtime wrote on it (ISO-8601), if any. Never used for order."""
    versioned: bool = False
    """True when a record with this key may be rewritten with new content (a LangSmith run that
    gained outputs): a changed one lands as a new version. False for append-only lines, whose
    later copies (a resume) are the same record."""
    repeat: bool = False
    """True when the adapter read this key earlier in the same file, and that earlier copy is still
    in it (Claude Code writing a line twice under one uuid). If its content differs from what is
    stored, it is the record's newer copy: it lands as the record's next version, unless it gives
    no events while the stored copy did (it could not be read: the one that reads is kept), and
    collect warns naming the file and both lines. Without it, a copy with other content (a
    resume's, a line edited in a rewritten file) is the same record."""


@frozen(slots=True)
class Problem:
    """Something an adapter could not read. Shown as a warning naming file and line."""

    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


SHAPE_ERRORS = (AttributeError, TypeError, KeyError, ValueError, IndexError, RecursionError)
"""What reading a record of an unexpected shape raises (a list where an object was, a value
nested deeper than the stack): adapters catch these per record, keep it whole and yield a Problem."""


@define(slots=True)
class Cursor:
    """Where reading of one file stopped; kept in the store between collects."""

    offset: int = 0
    line: int = 0
    state: dict[str, Any] = field(factory=dict)


# --- Usage --------------------------------------------------------------------------------

USAGE_TYPES = ("input", "output", "cache_read", "cache_write")

PARTS = ("input", "cache_read", "cache_write_5m", "cache_write_1h", "output", "other")
"""How a call's money is split (``pricing``). ``cache_write_5m`` holds cache writes priced at the
provider's plain cache-write rate (the 5-minute one); ``other`` what genai-prices prices beyond
tokens. Here, not in ``pricing``, so the ledger of all orders a sum's parts without importing it."""


@frozen(slots=True)
class Usage:
    """What one model call consumed, in the four types. ``None`` is unknown, never 0."""

    input: int | None = None
    output: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None
    cache_write_5m: int | None = None
    """Part of cache_write written for 5 minutes, when the runtime split it."""
    cache_write_1h: int | None = None
    """Part of cache_write written for 1 hour, when the runtime split it."""

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # Positional rebuild: fast to unpickle (the assembled-conversation cache holds many).
        return (Usage, (self.input, self.output, self.cache_read, self.cache_write, self.cache_write_5m, self.cache_write_1h))

    @classmethod
    def from_event(cls, d: dict[str, Any] | None, *, output_known: bool = True) -> Usage:
        if not d:
            return cls()
        return cls.with_output(d, count(d.get("output")) if output_known else None)

    @classmethod
    def with_output(cls, d: dict[str, Any], output: int | None) -> Usage:
        """A usage event's counts with ``output`` for its output: assembly chooses a call's output
        from all its fragments, and makes its Usage once (no ``attrs.evolve``: it runs for every call)."""
        g = d.get
        return cls(count(g("input")), output, count(g("cache_read")), count(g("cache_write")), count(g("cache_write_5m")),
                   count(g("cache_write_1h")))


MAX_COUNT = 10**12
"""The largest token count taken as a count. A call's context holds a few million tokens at
most; a count above a trillion (2**64-1, say) is no runtime's measure: unknown. Sums of counts
in range stay far inside 64 bits, so every total can be written as JSON."""


def str_id(v: Any) -> str | None:
    """An id as recorded (a tool call's, a message's), or None: an id is a non-empty string, and a
    number, a list or an object (a broken record) is no id."""
    return v if isinstance(v, str) and v else None


def bad_count(v: Any) -> bool:
    """Whether a token count as recorded is there but no count (``-1``, ``2**64``, ``1e308``,
    ``"12"``, ``true``): read as unknown, and worth a warning."""
    return v is not None and count(v) is None


def count(v: Any) -> int | None:
    """A token count as recorded, or None (unknown): a negative, out-of-range or non-integer
    value is not a count."""
    if type(v) is not int or v < 0 or v > MAX_COUNT:
        return None
    return v


def _as_recorded(v: Any) -> str | None:
    return v if isinstance(v, str) else None


BAD_COUNT, BAD_TIME = "token count", "timestamp"
"""The kinds :func:`said_bad_values` says once per file (kept in a file's cursor state)."""


def said_bad_values(said: list[str], file: str, line: int, counts: Iterable[tuple[str, Any]] = (),
                    stamps: Iterable[tuple[str, Any]] = (), *, read_count: Callable[[Any], int | None] = count,
                    read_time: Callable[[Any], str | None] = _as_recorded) -> list[Problem]:
    """The warnings of one record for a token count that is no count (``2**64``, ``-1``, ``1e308``,
    ``"12"``, ``true``) or a timestamp that is no time (year 0 or 10000, garbage, a number where
    the runtime writes text): each is read as unknown, as the spec says, and said once per kind and
    file, naming the first line (as unknown entry types are). ``said`` holds the kinds already said
    for the file: the adapter keeps it in the file's cursor state, so a grown file read on does not
    say them again. Every adapter calls this one check for each place it reads a count or a time.

    ``counts`` and ``stamps`` are (field, value as recorded) pairs; an absent value is None and
    says nothing. A count is what ``read_count`` takes (:func:`count`, or a runtime's reading that
    also takes a whole float); a timestamp is a time when ``read_time`` (the runtime's reading:
    ISO text as written, or its epoch numbers made text) gives text :func:`asz_core.times.instant`
    takes."""
    if BAD_COUNT in said and BAD_TIME in said:
        return []
    out: list[Problem] = []
    if BAD_TIME not in said:
        for name, v in stamps:
            if v is not None and instant(read_time(v)) is None:
                said.append(BAD_TIME)
                out.append(Problem(file, line, f"a timestamp that is no time ({name}: {_shown(v)}); read as unknown "
                                               "(further such lines of this file are not warned about)"))
                break
    if BAD_COUNT not in said:
        for name, v in counts:
            if v is not None and read_count(v) is None:
                said.append(BAD_COUNT)
                out.append(Problem(file, line, f"a token count that is no count ({name}: {_shown(v)}); read as unknown "
                                               "(further such lines of this file are not warned about)"))
                break
    return out


def plainly_a_time(ts: Any) -> bool:
    """Whether ``ts`` is, at a cheap look, a timestamp :func:`asz_core.times.instant` takes: ISO
    text in years 2-9998 (no offset, which is under a day, takes it out of instant's range). True
    only where ``instant`` gives a time (tests/core/test_plain_values.py compares them); False
    says nothing, and the caller then asks :func:`said_bad_values`. An adapter's first look at
    every line's time: the whole check per line was a fifth of reading a Claude Code transcript."""
    if type(ts) is not str:
        return False
    try:
        return 2 <= _fromisoformat(ts).year <= 9998
    except ValueError:
        return False


def _shown(v: Any) -> str:
    """A value of a record as JSON writes it, short (a string quoted: ``"12"`` is not ``12``)."""
    import json

    try:
        text = json.dumps(v)
    except (TypeError, ValueError):
        text = type(v).__name__
    return text if len(text) <= 40 else text[:37] + "..."
