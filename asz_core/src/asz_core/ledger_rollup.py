"""The ledger of all by day and by month from one kept sum, not from each conversation's summary.

``asz ledger --by day`` with no filter adds up every conversation's calls by local day: from each
one's kept summary (:func:`.ledger.summaries`), a history of 670 conversations is 670 summaries
read and some 4,000 tallies made and added, every time. What it shows depends on the calls'
UTC quarter hours alone (every zone's midnight falls on one: ``conversations._quarter_days``), so
the quarter hours of all the conversations are kept added up, in ``ASZ_HOME/cache/ledger/rollup.json``
(signed like the summaries, :mod:`.signed`), with the totals, sub-agents, helpers, copies and
replays, and the head each conversation was at. A ledger of any zone reads that one file; a
conversation that grew (another head), was added or removed, is taken out by its old summary and
put in by its new one, so a day's growth reads the summaries of what grew only.

Exact: token counts are integers, money is a Decimal added and taken away exactly (no rounding:
far below its precision), and what the figure is written with (its exponent: ``1.50`` against
``1.5``) is the one adding up the summaries again would give, the smallest exponent of a tally
added (kept as a count per exponent, so taking a tally away gives it back). A sum's money parts
and unpriced reasons are said in one order (``ledger.in_order``), whichever way it was added.

Kept by price file (SHA-256) and the code that computes the summaries (``ledger._code_digest``,
this module included); anything else (another price file, a file not signed by this home, one
of another shape) is as if none were kept, and the sum is made again from the summaries.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from decimal import Context, Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import orjson

from . import signed, times
from .ledger import (NO_TIME, QUARTER, Row, Summary, Tally, _code_digest, _quarter, _summary_unkeep, in_order, month_of,
                     price_file_of, price_sha, quarter_start, summaries)
from .price_file import PriceFile
from .records import USAGE_TYPES

FILE = "rollup.json"
KEPT_BYTES = 64 << 20
VERSION = 1
INCREMENTAL = 1 / 8
"""Past this share of the conversations changed, the sum is made again from every summary."""

_EXACT = Context(prec=200, traps=[InvalidOperation])
"""Sums of money with room to spare: adding and taking away never rounds."""


def _exp(d: Decimal) -> int:
    return d.as_tuple().exponent  # type: ignore[return-value]


def _count(counts: dict[int, int], e: int, sign: int) -> None:
    n = counts.get(e, 0) + sign
    if n:
        counts[e] = n
    else:
        del counts[e]


class Sum:
    """Tallies added up (and taken away) exactly, that give back the :class:`Tally` that adding
    the same tallies with ``Tally.merge`` gives, to the exponent of every money figure."""

    __slots__ = ("calls", "tokens", "unknown", "output_floor", "money", "parts", "unpriced", "unpriced_tokens",
                 "reasons", "incomplete", "floor", "e_money", "e_floor", "e_parts")

    def __init__(self) -> None:
        self.calls = self.output_floor = self.unpriced = self.incomplete = 0
        self.tokens: dict[str, int] = {}
        self.unknown: dict[str, int] = {}
        self.unpriced_tokens: dict[str, int] = {}
        self.reasons: dict[str, int] = {}
        self.money = Decimal(0)
        self.floor = Decimal(0)
        self.parts: dict[str, Decimal] = {}
        self.e_money: dict[int, int] = {}
        """The exponents of the money figures added (how many of each): ``Tally.merge`` adds a
        tally's money only when it has calls, a floor's only when it is not 0, and a part only
        where the tally has it; the sum's exponent is the smallest of them (and 0's, a new
        tally's money and floor begin at)."""
        self.e_floor: dict[int, int] = {}
        self.e_parts: dict[str, dict[int, int]] = {}

    def add(self, t: Tally | Sum, sign: int = 1) -> None:
        """``t`` added (``sign`` 1) or taken away (-1)."""
        if not t.calls:
            return  # (as Tally.merge: a tally of no call adds nothing, its exponents neither)
        if isinstance(t, Sum):
            self._add_sum(t, sign)
            return
        self.calls += sign * t.calls
        self.output_floor += sign * t.output_floor
        self.unpriced += sign * t.unpriced
        self.incomplete += sign * t.incomplete
        _add_counts(self, t.tokens, t.unknown, t.unpriced_tokens, t.unpriced_reasons, sign)
        self.money = _EXACT.add(self.money, t.money) if sign > 0 else _EXACT.subtract(self.money, t.money)
        _count(self.e_money, _exp(t.money), sign)
        if t.floor_money:
            self.floor = _EXACT.add(self.floor, t.floor_money) if sign > 0 else _EXACT.subtract(self.floor, t.floor_money)
            _count(self.e_floor, _exp(t.floor_money), sign)
        for k, v in t.parts.items():
            self.parts[k] = _EXACT.add(self.parts.get(k, Decimal(0)), v) if sign > 0 else _EXACT.subtract(self.parts[k], v)
            counts = self.e_parts.setdefault(k, {})
            _count(counts, _exp(v), sign)
            if not counts:
                del self.e_parts[k], self.parts[k]

    def _add_sum(self, o: Sum, sign: int) -> None:
        self.calls += sign * o.calls
        self.output_floor += sign * o.output_floor
        self.unpriced += sign * o.unpriced
        self.incomplete += sign * o.incomplete
        _add_counts(self, o.tokens, o.unknown, o.unpriced_tokens, o.reasons, sign)
        op = _EXACT.add if sign > 0 else _EXACT.subtract
        self.money, self.floor = op(self.money, o.money), op(self.floor, o.floor)
        for mine_e, theirs_e in ((self.e_money, o.e_money), (self.e_floor, o.e_floor)):
            for e, n in theirs_e.items():
                _count(mine_e, e, sign * n)
        for k, v in o.parts.items():
            self.parts[k] = op(self.parts.get(k, Decimal(0)), v)
            counts = self.e_parts.setdefault(k, {})
            for e, n in o.e_parts[k].items():
                _count(counts, e, sign * n)
            if not counts:
                del self.e_parts[k], self.parts[k]

    def empty(self) -> bool:
        """No call left, and nothing else either (else what was taken away was not what was added)."""
        return not (self.calls or self.tokens or self.unknown or self.unpriced_tokens or self.reasons or self.output_floor
                    or self.unpriced or self.incomplete or self.money or self.floor or self.parts or self.e_money
                    or self.e_floor or self.e_parts)

    def tally(self) -> Tally:
        """The tally that adding up the same tallies one by one (``Tally.merge``) gives."""
        t = Tally()
        if not self.calls:
            return t
        t.calls, t.output_floor, t.unpriced, t.incomplete = self.calls, self.output_floor, self.unpriced, self.incomplete
        for mine, theirs in ((t.tokens, self.tokens), (t.unknown, self.unknown), (t.unpriced_tokens, self.unpriced_tokens)):
            mine.update(theirs)
        t.unpriced_reasons = dict(self.reasons)
        t.money = _at(self.money, min([0, *self.e_money]))
        t.floor_money = _at(self.floor, min([0, *self.e_floor])) if self.e_floor else Decimal(0)
        t.parts = {k: _at(v, min(self.e_parts[k])) for k, v in self.parts.items()}
        return in_order(t)

    def dump(self) -> dict[str, Any]:
        return {"calls": self.calls, "tokens": self.tokens, "unknown": self.unknown, "output_floor": self.output_floor,
                "money": str(self.money), "parts": {k: str(v) for k, v in self.parts.items()}, "unpriced": self.unpriced,
                "unpriced_tokens": self.unpriced_tokens, "reasons": self.reasons, "incomplete": self.incomplete,
                "floor": str(self.floor), "e_money": _keys(self.e_money), "e_floor": _keys(self.e_floor),
                "e_parts": {k: _keys(v) for k, v in self.e_parts.items()}}

    @classmethod
    def load(cls, d: dict[str, Any]) -> Sum:
        s = cls()
        s.calls, s.output_floor, s.unpriced, s.incomplete = (_int(d[k]) for k in ("calls", "output_floor", "unpriced", "incomplete"))
        s.tokens, s.unknown, s.unpriced_tokens, s.reasons = (
            {str(k): _int(v) for k, v in d[name].items()} for name in ("tokens", "unknown", "unpriced_tokens", "reasons"))
        s.money, s.floor = Decimal(d["money"]), Decimal(d["floor"])
        s.parts = {str(k): Decimal(v) for k, v in d["parts"].items()}
        s.e_money, s.e_floor = _exps(d["e_money"]), _exps(d["e_floor"])
        s.e_parts = {str(k): _exps(v) for k, v in d["e_parts"].items()}
        if set(s.parts) != set(s.e_parts) or not (s.tokens.keys() <= set(Tally().tokens) and s.unknown.keys() <= set(USAGE_TYPES)):
            raise ValueError("a kept sum of another shape")
        return s


def _add_counts(into: Sum, tokens: dict[str, int], unknown: dict[str, int], unpriced_tokens: dict[str, int],
                reasons: dict[str, int], sign: int) -> None:
    """The counts by name added to ``into``'s (``sign`` 1) or taken away (-1); a count that comes
    to 0 is dropped, as a sum of tallies never holds one."""
    for mine, theirs in ((into.tokens, tokens), (into.unknown, unknown), (into.unpriced_tokens, unpriced_tokens),
                         (into.reasons, reasons)):
        for k, v in theirs.items():
            if v:
                n = mine.get(k, 0) + sign * v
                if n:
                    mine[k] = n
                else:
                    del mine[k]


def _at(d: Decimal, e: int) -> Decimal:
    return d.quantize(Decimal((0, (1,), e)), context=_EXACT)


def _keys(counts: dict[int, int]) -> dict[str, int]:
    return {str(e): n for e, n in counts.items()}


def _exps(d: dict[str, Any]) -> dict[int, int]:
    return {int(e): _int(n) for e, n in d.items()}


def _int(v: Any) -> int:
    if type(v) is not int:
        raise TypeError("a kept count that is no integer")
    return v


class Rollup:
    """Every collected conversation's calls added up: by UTC quarter hour (those with no time
    apart), in all, of sub-agents and of helpers; with the head each conversation was at."""

    def __init__(self) -> None:
        self.heads: dict[str, list[Any]] = {}
        """conversation -> [head, the time of its last model call or None]."""
        self.quarters: dict[str, Sum] = {}
        self.no_time = Sum()
        self.total, self.subagents, self.helpers = Sum(), Sum(), Sum()
        self.copies = self.replays = 0
        self.prices: dict[str, Any] = {}

    def put(self, s: Summary, sign: int = 1) -> None:
        """``s`` added (``sign`` 1), or taken away (-1)."""
        if sign > 0:
            self.heads[s.conversation] = [s.head, s.last_call]
        else:
            del self.heads[s.conversation]
        self.total.add(s.total, sign)
        self.subagents.add(s.subagents, sign)
        self.helpers.add(s.helpers, sign)
        self.copies += sign * s.copies
        self.replays += sign * s.replays
        if s.by_quarter:
            for q, t in s.by_quarter.items():
                self._quarter(q).add(t, sign)
        elif (first := times.instant(s.first_call)) is not None:  # all its timed calls in one quarter hour
            at = self._quarter(_quarter(first))
            for k, t in s.by_day.items():
                if k != NO_TIME:
                    at.add(t, sign)
        if NO_TIME in s.by_day:
            self.no_time.add(s.by_day[NO_TIME], sign)
        if sign < 0:
            for q in [q for q, x in self.quarters.items() if not x.calls]:
                if not self.quarters.pop(q).empty():
                    raise ValueError("a quarter hour of no call holds figures")

    def _quarter(self, q: str) -> Sum:
        got = self.quarters.get(q)
        if got is None:
            got = self.quarters[q] = Sum()
        return got

    def rows(self, by: str, tz: dt.tzinfo | None) -> list[Row] | None:
        """The rows by local day or month of ``tz`` (None: the system's local time), as
        ``conversations.all_rows`` gives them; None where a midnight of ``tz`` cuts a quarter hour
        (a zone offset by other minutes: none since 1979), for the calls to be counted one by one."""
        groups: dict[str, Sum] = {}
        tick = QUARTER - dt.timedelta(microseconds=1)
        for q, x in self.quarters.items():
            start = quarter_start(q)
            d = times.day(start, tz)
            if times.day(start + tick, tz) != d:
                return None
            key = d if by == "day" else month_of(d)
            got = groups.get(key)
            if got is None:
                got = groups[key] = Sum()
            got.add(x)
        if self.no_time.calls:
            groups[NO_TIME] = self.no_time
        return [Row(k, groups[k].tally()) for k in sorted(groups)]

    def newest(self) -> str | None:
        """The last model call of any conversation (``AllLedger.newest``)."""
        return max((last for _, last in self.heads.values() if last), key=_instant_key, default=None)

    def dump(self, code: str, sha: str) -> dict[str, Any]:
        return {"v": VERSION, "code": code, "sha": sha, "prices": self.prices, "heads": self.heads,
                "quarters": {q: x.dump() for q, x in self.quarters.items()}, "no_time": self.no_time.dump(),
                "total": self.total.dump(), "subagents": self.subagents.dump(), "helpers": self.helpers.dump(),
                "copies": self.copies, "replays": self.replays}

    @classmethod
    def load(cls, d: Any, code: str, sha: str) -> Rollup | None:
        """What ``d`` (read from the kept file) holds, when kept by this code for this price file."""
        if not isinstance(d, dict) or d.get("v") != VERSION or d.get("code") != code or d.get("sha") != sha:
            return None
        try:
            r = cls()
            r.heads = {str(k): [str(v[0]), v[1] if isinstance(v[1], str) else None] for k, v in d["heads"].items()}
            r.quarters = {str(q): Sum.load(x) for q, x in d["quarters"].items()}
            for q in r.quarters:
                quarter_start(q)
            r.no_time, r.total, r.subagents, r.helpers = (Sum.load(d[k]) for k in ("no_time", "total", "subagents", "helpers"))
            r.copies, r.replays = _int(d["copies"]), _int(d["replays"])
            r.prices = dict(d["prices"])
        except (KeyError, TypeError, ValueError, ArithmeticError, AttributeError, IndexError):
            return None  # of another shape: made again
        return r


def _instant_key(ts: str) -> Any:
    t = times.instant(ts)
    return t if t is not None else times.FIRST


def rolled(every: Sequence[Any], *, store: Any, prices: str | None = None) -> tuple[Rollup, PriceFile] | None:
    """The sum of every collected conversation (``every``: the store's ``conversations()``) at
    its newest round, and the price file; kept in the store's home and brought up to date: what
    changed since is taken out by its old summary and put in by its new one. None when the price
    file cannot be read (the ledger of all says what is wrong with it)."""
    path, sha = price_sha(prices)
    if not sha:
        return None
    code = _code_digest()
    home = store.path.parent
    folder = home / "cache" / "ledger"
    try:
        kept_data = orjson.loads(signed.read(home, folder / FILE, KEPT_BYTES) or b"null")
    except ValueError:
        kept_data = None
    r = Rollup.load(kept_data, code, sha)
    live = [row for row in every if row.head is not None]
    now = {row.id: row.head.head for row in live}
    if r is not None and len(r.heads) == len(now) and all(r.heads.get(k, (None,))[0] == h for k, h in now.items()):
        return r, price_file_of(path, sha, r.prices)
    changed = [row for row in live if r is None or r.heads.get(row.id, (None,))[0] != row.head.head]
    gone = [k for k in (r.heads if r is not None else ()) if k not in now]
    got = None
    if r is not None and len(changed) + len(gone) <= max(8, INCREMENTAL * len(live)):
        got = _update(r, changed, gone, folder, code, sha, store, prices)
    if got is None:
        sums, file = summaries(prices=prices, store=store, rows=every)
        r = Rollup()
        for s in sums:
            r.put(s)
    else:
        r, file = got
    r.prices = {"source": file.source, "taken": file.taken}
    try:
        data = orjson.dumps(r.dump(code, sha))
    except TypeError:
        return r, file
    signed.write(home, folder / FILE, data)
    return r, file


def _update(r: Rollup, changed: list[Any], gone: list[str], folder: Path, code: str, sha: str, store: Any,
            prices: str | None) -> tuple[Rollup, PriceFile] | None:
    """``r`` with the conversations ``gone`` taken out and those ``changed`` put in anew (each
    taken out by the summary kept at the head ``r`` has it at); None when such a summary is no
    longer kept (another command kept the new one in its place): then made again from all."""
    from .summary_keep import Kept

    kept = Kept(folder, code)
    olds: list[Summary] = []
    for conv in [row.id for row in changed if row.id in r.heads] + gone:
        dump = kept.get(sha, conv, r.heads[conv][0])
        s = _summary_unkeep(dump) if dump is not None else None
        if s is None:
            return None
        olds.append(s)
    if changed or not r.prices:
        news, file = summaries(prices=prices, store=store, rows=changed, kept=kept)  # (its files read once)
    else:  # only taken out: the price file as it was kept
        news, file = [], price_file_of(*price_sha(prices), r.prices)
    try:
        for s in olds:
            r.put(s, -1)
        for s in news:
            r.put(s)
    except (ValueError, KeyError, ArithmeticError):
        return None
    return r, file
