"""Collected conversations as a person finds them: by when, where and which runtime.

``listing`` gives one row per conversation (started and last activity, project, cost, talks,
calls, the person's first real input, the shortest id prefix that names it), newest activity
last. ``ledger_of_all`` gives the ledger of the conversations a :class:`Filter` keeps, cut by
conversation, talk, stream, model, local day or project; with ``--since``/``--until`` it counts
exactly the model calls made in that span. ``show`` and ``show_talk`` give one conversation (or
one talk of it) with its ledger, what ``asz show`` prints.

The listing and the ledger of all read the per-conversation summaries the ledger keeps
(``ledger.summaries``), so a second look costs a file read. A summary says the span of time its
calls lie in: a conversation wholly inside or outside the span (or on one local day, for ``--by
day``) needs nothing more; only one that straddles a bound is built again, from its kept
assembly, to count its calls one by one.
With no filter, the ledger of all by day or by month reads one kept sum of every conversation
instead (:mod:`.ledger_rollup`), brought up to date by what changed.

Nothing here imports typer or rich: a lean command path can use it as it is.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import attrs
from attrs import frozen

from . import times
from .errors import AszError
from .ledger import NO_TIME, QUARTER, Ledger, Row, Summary, Tally, build, grouped, in_order, load_prices, month_of, rows, quarter_start, summaries, summarize
from .price_file import PriceFile
from .short_ids import SHORT_ID, short_ids, shortest_prefixes  # noqa: F401 - here too, where they were
from .store import Round, Store

if TYPE_CHECKING:  # assembly only where a conversation is loaded: the ledger of all reads kept summaries
    from .assembly import Conversation

NO_PROJECT = "(no project)"


@frozen
class Filter:
    """Which conversations (and, with a span of time, which of their model calls) to count."""

    since: dt.datetime | None = None
    """Aware UTC instants: a call counts when ``since <= its time < until``."""
    until: dt.datetime | None = None
    projects: tuple[str, ...] = ()
    """Any of them found in a conversation's project path (case-insensitive), e.g. its folder name."""
    runtimes: tuple[str, ...] = ()
    tz: dt.tzinfo | None = None
    """The zone days and local times are in; None: the system's local time."""

    @classmethod
    def of(cls, since: str | None = None, until: str | None = None, timezone: str | None = None,
           projects: Iterable[str] = (), runtimes: Iterable[str] = (), *, now: dt.datetime | None = None) -> Filter:
        """A filter from what a person typed (``--since 2025-01-31``, ``--timezone Europe/Paris``, ...)."""
        tz = times.zone(timezone)
        lo = times.bound(since, tz, now=now) if since else None
        hi = times.bound(until, tz, end=True, now=now) if until else None
        if lo is not None and hi is not None and hi <= lo:
            raise AszError(f"--until {until} is not after --since {since}: nothing lies between them")
        return cls(lo, hi, tuple(p for p in projects if p), tuple(r for r in runtimes if r), tz)

    @property
    def timed(self) -> bool:
        return self.since is not None or self.until is not None

    def holds(self, ts: str | None) -> bool:
        """Whether a time lies in the span (a time the record does not give never does)."""
        t = times.instant(ts)
        return t is not None and (self.since is None or t >= self.since) and (self.until is None or t < self.until)

    def place(self, runtime: str, projects: Sequence[str]) -> bool:
        """Whether a conversation of that runtime and those projects is kept (time aside)."""
        if self.runtimes and runtime not in self.runtimes:
            return False
        if self.projects:
            return any(p.lower() in x.lower() for p in self.projects for x in projects)
        return True

    def overlaps(self, start: str | None, end: str | None) -> bool:
        """Whether activity from ``start`` to ``end`` touches the span."""
        if not self.timed:
            return True
        a, b = times.instant(start), times.instant(end)
        if a is None or b is None:
            return False
        return (self.until is None or a < self.until) and (self.since is None or b >= self.since)

    def to_json(self) -> dict[str, Any]:
        return {"since": times.utc_text(self.since) if self.since else None,
                "until": times.utc_text(self.until) if self.until else None,
                "projects": list(self.projects), "runtimes": list(self.runtimes),
                "timezone": _tz_name(self.tz)}


def _tz_name(tz: dt.tzinfo | None) -> str:
    if tz is None:
        return "local (" + (dt.datetime.now().astimezone().tzname() or "?") + ")"
    return getattr(tz, "key", None) or str(tz)


# --- the listing -----------------------------------------------------------------------------------

@frozen
class Listed:
    """One conversation as ``asz conversations`` shows it."""

    id: str
    short: str
    """The shortest prefix of ``id`` that names it alone (what the table shows)."""
    runtime: str
    sessions: tuple[str, ...]
    head: Round
    summary: Summary
    """Its ledger summary at ``head``: cost, project, times, talks, first input."""


@frozen
class Listing:
    rows: tuple[Listed, ...]
    """Oldest activity first, the newest last (nearest the prompt)."""
    filter: Filter
    untimed: int = 0
    """Conversations left out by a span of time because their record gives no time."""
    total: int = 0
    """Conversations collected (before the filter)."""
    newest: str | None = None
    """The last activity of any conversation collected (before the filter): what a span that
    finds nothing says."""


def listing(f: Filter | None = None, *, store: Store | None = None, prices: str | None = None,
            last: int | None = None) -> Listing:
    """The collected conversations the filter keeps, oldest activity first; ``last``: only that
    many of the most recently active."""
    f = f or Filter()
    st = store or Store.open()
    every = st.conversations()
    conv_rows = [r for r in every if r.head is not None]
    short = shortest_prefixes(every)
    sums = {s.conversation: s for s in summaries(prices=prices, store=st, rows=every)[0]}
    out, untimed = [], 0
    for r in conv_rows:
        s = sums[r.id]
        if not f.place(r.runtime, s.projects):
            continue
        if f.timed and s.started is None:
            untimed += 1
            continue
        if not f.overlaps(s.started, s.last):
            continue
        assert r.head is not None
        out.append(Listed(r.id, short[r.id], r.runtime, r.sessions, r.head, s))
    out.sort(key=lambda x: (x.summary.last or "", x.summary.started or "", x.id))
    if last is not None:
        out = out[-last:] if last > 0 else []
    newest = max((s.last for s in sums.values() if s.last), key=_instant_key, default=None)
    return Listing(tuple(out), f, untimed, len(conv_rows), newest)


def _instant_key(ts: str) -> Any:
    t = times.instant(ts)
    return t if t is not None else times.FIRST


# --- the ledger of all -----------------------------------------------------------------------------

BY_ALL = ("talk", "stream", "model", "day", "month", "project")
"""How the ledger of all conversations can be cut (none: one row per conversation)."""


@frozen
class AllLedger:
    """The ledger of the conversations a filter keeps, cut one way."""

    items: tuple[Summary | Ledger, ...]
    """One per conversation kept, holding only the calls in the span (ledgers for talk and stream);
    none when the rows came from the kept sum of all (by day or month with no filter: ``totals``,
    ``counted_elsewhere`` and ``conversations`` say what they would)."""
    prices: PriceFile
    by: str | None
    rows: tuple[tuple[str | None, Row], ...]
    """(conversation, row) for talk and stream; (None, row) otherwise."""
    filter: Filter
    untimed_calls: int = 0
    """Calls a span of time left out because the record gives them no time."""
    shorts: dict[str, str] = attrs.field(factory=dict)
    """Conversation id -> its shortest unique prefix."""
    collected: int = 0
    """Conversations collected (before the filter): none, and the ledger says to collect."""
    newest: str | None = None
    """The last model call of any conversation collected (before the filter)."""
    totals: tuple[Tally, Tally, Tally] | None = None
    """The total, sub-agents and helpers of all of them; None: ``items``' added up."""
    counted_elsewhere: tuple[int, int] | None = None
    """Copies and replays (``ledger_data.counted_elsewhere``); None: ``items``'."""
    conversations: int | None = None
    """How many conversations it holds; None: ``len(items)``."""


def ledger_of_all(f: Filter | None = None, by: str | None = None, *, prices: str | None = None,
                  store: Store | None = None) -> AllLedger:
    """The ledger of every collected conversation the filter keeps, each at its newest round."""
    f = f or Filter()
    if by is not None and by not in BY_ALL:
        raise AszError(f"--by must be one of {', '.join(BY_ALL)}, not {by!r}")
    st = store or Store.open()
    every = st.conversations()
    if by in ("day", "month") and not (f.timed or f.projects or f.runtimes):
        # Every conversation's calls by day: from the one kept sum of them all (.ledger_rollup),
        # not from each one's summary. (``items`` is left empty: ``totals`` and the counts say it.)
        from .ledger_rollup import rolled

        got = rolled(every, store=st, prices=prices)
        if got is not None and (day_rows := got[0].rows(by, f.tz)) is not None:
            r, file = got
            return AllLedger((), file, by, tuple((None, x) for x in day_rows), f, 0, {}, len(r.heads), r.newest(),
                             (r.total.tally(), r.subagents.tally(), r.helpers.tally()), (r.copies, r.replays), len(r.heads))
    sums, file = summaries(prices=prices, store=st, rows=every)
    book = None
    built: dict[str, tuple[Conversation, Ledger]] = {}

    def made(s: Summary) -> tuple[Conversation, Ledger]:
        nonlocal book
        if s.conversation not in built:
            book = book or load_prices(prices)
            conv = _load_named(st, s.conversation, s.round)
            built[s.conversation] = conv, build(conv, book, (lambda step: f.holds(step.ts)) if f.timed else None)
        return built[s.conversation]

    def ledger(s: Summary) -> Ledger:
        return made(s)[1]

    kept: list[Summary] = []
    untimed = 0
    for s in sums:
        if not f.place(s.runtime, s.projects):
            continue
        if f.timed:
            no_time = s.by_day.get(NO_TIME)
            untimed += no_time.calls if no_time else 0
            span = f.overlaps(s.first_call, s.last_call)
            if not span:
                continue
            inside = (f.since is None or times.instant(s.first_call) >= f.since) and \
                     (f.until is None or times.instant(s.last_call) < f.until)  # type: ignore[operator]
            if not inside or no_time:
                s = summarize(ledger(s), made(s)[0])  # of the calls in the span only
                if not s.total.calls:
                    continue
        kept.append(s)

    items: list[Summary | Ledger] = [ledger(s) for s in kept] if by in ("talk", "stream") else list(kept)
    out = all_rows(items, by, f.tz, ledger)
    shorts = shortest_prefixes(every)
    newest = max((s.last_call for s in sums if s.last_call), key=_instant_key, default=None)
    return AllLedger(tuple(items), file, by, tuple(out), f, untimed, shorts, len(sums), newest)


def all_rows(items: Sequence[Summary | Ledger], by: str | None, tz: dt.tzinfo | None = dt.UTC,
             ledger_of: Callable[[Summary], Ledger] | None = None) -> list[tuple[str | None, Row]]:
    """The rows of the ledger of all, cut ``by`` (the one place they are made): one per
    conversation (its runtime, round, sub-agents and project) by default; per talk or stream of
    each (``(conversation, row)``); or the calls of all of them grouped by model, by day of ``tz``
    (None: the system's local time) or by project. ``ledger_of`` builds a summary's ledger where
    its calls are needed one by one (talks, streams, days of ``tz`` a summary's span crosses);
    without it a summary's days are its own, UTC days. A ledger names no project."""
    if by in ("talk", "stream"):
        leds = [x if isinstance(x, Ledger) else _need(ledger_of)(x) for x in items]
        return [(x.conversation, r) for x in leds for r in rows(x, by)]
    if by in ("day", "month"):  # (each sum's parts in one order, as the kept sum of all says them: .ledger_rollup)
        cut = _days if by == "day" else _months
        out = grouped(d for x in items for d in cut(x, tz, ledger_of).items())
        for r in out:
            in_order(r.tally)
        return [(None, r) for r in out]
    if by == "project":
        return [(None, r) for r in grouped((_project(x) or NO_PROJECT, x.total) for x in items)]
    if by == "model":
        return [(None, r) for r in grouped(m for x in items for m in x.by_model.items())]
    if by is not None:
        raise AszError(f"--by must be one of {', '.join(BY_ALL)}, not {by!r}")
    return [(None, Row(x.conversation, x.total, {"runtime": x.runtime, "round": f"r{x.round}", "subagents": x.subagents,
                                                 "project": _project(x)}))
            for x in items]


def _project(x: Summary | Ledger) -> str | None:
    return x.project if isinstance(x, Summary) else None


def _need(ledger_of: Callable[[Summary], Ledger] | None) -> Callable[[Summary], Ledger]:
    if ledger_of is None:
        raise ValueError("a summary's calls one by one need its ledger: give ledger_of")
    return ledger_of


def _months(x: Summary | Ledger, tz: dt.tzinfo | None, ledger_of: Callable[[Summary], Ledger] | None) -> dict[str, Tally]:
    """A conversation's calls by local month: from its summary when they all fall in one month
    (most conversations, whatever days they cross), else from its local days."""
    if isinstance(x, Summary):
        a, b = times.instant(x.first_call), times.instant(x.last_call)
        if a is not None and b is not None and times.day(a, tz)[:7] == times.day(b, tz)[:7]:
            out = {times.day(a, tz)[:7]: Tally.sum(t for k, t in x.by_day.items() if k != NO_TIME)}
            if NO_TIME in x.by_day:
                out[NO_TIME] = x.by_day[NO_TIME]
            return out
    months: dict[str, Tally] = {}
    for k, t in _days(x, tz, ledger_of).items():
        months.setdefault(month_of(k), Tally()).merge(t)
    return months


def _days(x: Summary | Ledger, tz: dt.tzinfo | None, ledger_of: Callable[[Summary], Ledger] | None) -> dict[str, Tally]:
    """A conversation's calls by local day: from its summary when they all fall on one day (or
    ``tz`` is UTC, a summary's own days, and there is no ledger to build)."""
    if isinstance(x, Ledger):
        return {r.key: r.tally for r in rows(x, "day", tz)}
    a, b = times.instant(x.first_call), times.instant(x.last_call)
    if a is not None and b is not None and times.day(a, tz) == times.day(b, tz):
        timed = Tally.sum(t for k, t in x.by_day.items() if k != NO_TIME)
        out = {times.day(a, tz): timed}
        if NO_TIME in x.by_day:
            out[NO_TIME] = x.by_day[NO_TIME]
        return out
    if (a is None and b is None) or tz is dt.UTC:
        return dict(x.by_day)  # only calls with no time (or none); or the summary's UTC days
    days = _quarter_days(x, tz)
    if days is not None:
        return days
    return {r.key: r.tally for r in rows(_need(ledger_of)(x), "day", tz)}


def _quarter_days(x: Summary, tz: dt.tzinfo | None) -> dict[str, Tally] | None:
    """A summary's calls by local day from its quarter hours, in day order as ``rows`` gives them;
    None when it keeps none, or a quarter hour of it straddles a midnight of ``tz`` (a zone whose
    offset is not whole quarter hours, which no zone has today, or has had since 1979)."""
    if not x.by_quarter:
        return None
    out: dict[str, Tally] = {}
    for key, t in x.by_quarter.items():
        start = quarter_start(key)
        d = times.day(start, tz)
        if times.day(start + QUARTER - _TICK, tz) != d:
            return None
        if d in out:
            out[d].merge(t)
        else:
            out[d] = t.copy()
    if NO_TIME in x.by_day:
        out[NO_TIME] = x.by_day[NO_TIME]
    return {k: out[k] for k in sorted(out)}


_TICK = dt.timedelta(microseconds=1)


def ledger_of_one(name: str, head: str | None, f: Filter, *, prices: str | None = None,
                  store: Store | None = None) -> Ledger:
    """One conversation's ledger, of the calls made in the filter's span (all, without one)."""
    if f.projects or f.runtimes:
        raise AszError("--project and --runtime choose among all conversations: give them without a conversation")
    st = store or Store.open()
    return build(_load_named(st, name, head), load_prices(prices), (lambda step: f.holds(step.ts)) if f.timed else None)


# --- one conversation, as `asz show` shows it ----------------------------------------------------

@frozen
class Shown:
    """What ``asz show CONV`` shows: the conversation at a round, and its ledger (each talk's
    calls, tokens and money are the ledger's)."""

    conversation: Conversation
    ledger: Ledger


@frozen
class Outline:
    """What ``asz show CONV --talk kN`` shows: one talk's steps in outline (the navigation's
    ``talk`` rows, whole), each model call priced by the conversation's ledger."""

    conversation: Conversation
    talk: dict[str, Any]
    """The talk's head: id, stream, start, end, ..."""
    steps: list[dict[str, Any]]
    ledger: Ledger


def show(name: str, head: str | int | None = None, *, prices: str | None = None, store: Store | None = None) -> Shown:
    """The conversation named by id, unique prefix or session id at a round (default: newest),
    with its ledger priced with ``prices`` (default: the shipped snapshot)."""
    conv = _load_named(store or Store.open(), name, head)
    return Shown(conv, build(conv, load_prices(prices)))


def show_talk(name: str, talk: str, head: str | int | None = None, *, prices: str | None = None,
              store: Store | None = None) -> Outline:
    """One talk of the conversation named (``k3``; ``loose`` for the work before the first input)
    in outline, with the conversation's ledger."""
    from .navigation import outline_of  # the navigation only when a talk is asked for

    conv, talk_head, steps = outline_of(name, talk, head, store=store)
    return Outline(conv, talk_head, steps, build(conv, load_prices(prices)))


def _load_named(store: Store, name: str, head: str | int | None) -> Conversation:
    # The assembled-conversation cache (pickle, and a digest of assembly's code) only when a
    # conversation is built whole: the ledger of all from summaries needs none of it.
    from .assembly_cache import load_named

    return load_named(store, name, head)
