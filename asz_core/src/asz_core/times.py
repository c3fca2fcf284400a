"""Times as a person gives and reads them: runtime timestamps to instants, ``--since``/``--until``
bounds, and the local day of an instant.

Runtimes write ISO-8601 timestamps (``2025-01-31T09:12:03.123Z``); one without an offset is taken
as UTC (what every runtime asz reads writes). A person's bounds are in local time unless they
carry an offset or a time zone is named. The local zone is the system's, applied per instant, so
a day across a daylight-saving change is still that day. Imports nothing heavy: the lean
command paths use it.
"""

from __future__ import annotations

import datetime as dt
import re
from .digits import NUMBER, whole
from .errors import AszError

UTC = dt.UTC

FIRST = dt.datetime.min.replace(tzinfo=UTC) + dt.timedelta(days=1)
LAST = dt.datetime.max.replace(tzinfo=UTC) - dt.timedelta(days=1)
"""The first and last instants asz takes from a record: every zone (offsets are under a day) can
show their day, so a table in ``--timezone +02:00`` never overflows on a time a runtime wrote."""


def instant(ts: str | None) -> dt.datetime | None:
    """A runtime timestamp as an aware UTC datetime; None when there is none, it is not ISO-8601,
    or it lies outside :data:`FIRST`...:data:`LAST` (within a day of year 1 or past 9999)."""
    if not ts or not isinstance(ts, str):
        return None
    try:
        t = dt.datetime.fromisoformat(ts)
        t = t.replace(tzinfo=UTC) if t.tzinfo is None else t.astimezone(UTC)
    except (ValueError, OverflowError):  # OverflowError: its offset takes it before year 1 or after 9999 in UTC
        return None
    return t if FIRST <= t <= LAST else None


def utc_text(t: dt.datetime) -> str:
    """An instant written the one way asz keeps them (sorts as text)."""
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def zone(name: str | None) -> dt.tzinfo | None:
    """The zone named by ``--timezone`` (an IANA name such as ``Europe/Paris``, or ``UTC``); None
    for the system's local time (``local`` or nothing)."""
    if name is None or name.strip().lower() in ("", "local"):
        return None
    if name.strip().upper() in ("UTC", "Z"):
        return UTC
    m = re.fullmatch(r"([+-])(\d{2}):?(\d{2})", name.strip())
    if m:
        delta = dt.timedelta(hours=int(m[2]), minutes=int(m[3]))
        return dt.timezone(-delta if m[1] == "-" else delta)
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError  # only for a zone named: a ledger in UTC or local time needs none

    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise AszError(f"unknown time zone {name!r}: give an IANA name such as Europe/Paris, UTC, "
                       "or an offset such as +02:00") from exc


def local(t: dt.datetime, tz: dt.tzinfo | None) -> dt.datetime:
    """The instant on the wall clock of ``tz`` (None: the system's local time)."""
    return t.astimezone(tz) if tz is not None else t.astimezone()


def day(t: dt.datetime, tz: dt.tzinfo | None) -> str:
    """The local date of an instant (``2025-01-31``)."""
    return local(t, tz).date().isoformat()


_DATE = re.compile(r"(\d{4})-?(\d{2})-?(\d{2})")
_AGO = re.compile(rf"({NUMBER})([dhm])")


def bound(text: str, tz: dt.tzinfo | None, *, end: bool = False, now: dt.datetime | None = None) -> dt.datetime:
    """An instant from a ``--since`` / ``--until`` value.

    A date (``2025-01-31`` or ``20250131``), ``today`` or ``yesterday`` is that whole local day:
    its start for ``--since``, the start of the next day for ``--until`` (``end``), so
    ``--until 2025-01-31`` includes all of the 31st. A date-time (``2025-01-31T14:00``, a space
    instead of the T works too) is that moment, local unless it carries an offset. ``3d``, ``12h``,
    ``30m``: that long before now. Raises AszError on anything else.
    """
    s = text.strip()
    now = now or dt.datetime.now(UTC)
    ago = _AGO.fullmatch(s)
    if ago:
        n, unit = int(ago[1]), ago[2]
        try:
            return now - dt.timedelta(**{{"d": "days", "h": "hours", "m": "minutes"}[unit]: n})
        except OverflowError:  # longer ago than year 1: before every time
            return _EARLIEST
    try:
        return _moment(s, text, tz, end, now)
    except OverflowError:
        # A bound past the calendar's first or last day (in UTC): before, or after, every time a
        # record can give (instant's FIRST...LAST), so it keeps everything or nothing on that side.
        year = whole(s[:4])
        return _LATEST if year is not None and year >= 5000 else _EARLIEST


_EARLIEST = dt.datetime.min.replace(tzinfo=UTC)
_LATEST = dt.datetime.max.replace(tzinfo=UTC)


def _moment(s: str, text: str, tz: dt.tzinfo | None, end: bool, now: dt.datetime) -> dt.datetime:
    if s.lower() in ("today", "yesterday"):
        d = local(now, tz).date() - dt.timedelta(days=1 if s.lower() == "yesterday" else 0)
        return _day_start(d + dt.timedelta(days=1) if end else d, tz)
    m = _DATE.fullmatch(s)
    if m:
        try:
            d = dt.date(int(m[1]), int(m[2]), int(m[3]))
        except ValueError as exc:
            raise AszError(f"{text!r} is not a date ({exc})") from exc
        return _day_start(d + dt.timedelta(days=1) if end else d, tz)
    try:
        t = dt.datetime.fromisoformat(s)
    except ValueError:
        raise AszError(f"{text!r} is neither a date (2025-01-31), a date-time (2025-01-31T14:00), "
                       "today/yesterday, nor a span before now (3d, 12h, 30m)") from None
    if t.tzinfo is None:
        t = t.replace(tzinfo=tz) if tz is not None else t.astimezone()  # naive: the wall clock of tz
    return t.astimezone(UTC)


def _day_start(d: dt.date, tz: dt.tzinfo | None) -> dt.datetime:
    start = dt.datetime(d.year, d.month, d.day)
    return (start.replace(tzinfo=tz) if tz is not None else start.astimezone()).astimezone(UTC)


def span_text(seconds: float | None) -> str:
    """A duration for people: ``45s``, ``12m``, ``3h 05m``, ``2d 4h``."""
    if seconds is None:
        return "—"
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m {s % 60:02d}s" if s < 600 else f"{s // 60}m"
    if s < 86400:
        return f"{s // 3600}h {s % 3600 // 60:02d}m"
    return f"{s // 86400}d {s % 86400 // 3600}h"
