"""--since / --until / --timezone as a person types them, and local days across a DST change."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from zoneinfo import ZoneInfo

import pytest

from asz_core import times
from asz_core.errors import AszError

UTC = dt.UTC
PARIS = ZoneInfo("Europe/Paris")
NOW = dt.datetime(2025, 3, 30, 10, 0, tzinfo=UTC)  # the day Paris moved to summer time (02:00 -> 03:00)


def test_a_date_is_the_whole_local_day() -> None:
    assert times.bound("2025-01-31", PARIS) == dt.datetime(2025, 1, 30, 23, 0, tzinfo=UTC)
    assert times.bound("20250131", PARIS) == times.bound("2025-01-31", PARIS)
    # --until a date includes all of it: the bound is the next local midnight
    assert times.bound("2025-01-31", PARIS, end=True) == dt.datetime(2025, 1, 31, 23, 0, tzinfo=UTC)
    # the DST day has 23 hours: its end is 22:00 UTC, its start 23:00 UTC the day before
    start, end = times.bound("2025-03-30", PARIS), times.bound("2025-03-30", PARIS, end=True)
    assert (end - start) == dt.timedelta(hours=23)
    assert times.bound("2025-01-31", UTC) == dt.datetime(2025, 1, 31, tzinfo=UTC)


def test_date_times_offsets_and_spans_before_now() -> None:
    assert times.bound("2025-01-31T14:00", PARIS) == dt.datetime(2025, 1, 31, 13, 0, tzinfo=UTC)
    assert times.bound("2025-01-31 14:00", PARIS) == dt.datetime(2025, 1, 31, 13, 0, tzinfo=UTC)
    # an offset given wins over the zone
    assert times.bound("2025-01-31T14:00+05:00", PARIS) == dt.datetime(2025, 1, 31, 9, 0, tzinfo=UTC)
    assert times.bound("2025-01-31T14:00Z", PARIS) == dt.datetime(2025, 1, 31, 14, 0, tzinfo=UTC)
    assert times.bound("3d", PARIS, now=NOW) == NOW - dt.timedelta(days=3)
    assert times.bound("12h", None, now=NOW) == NOW - dt.timedelta(hours=12)
    assert times.bound("today", PARIS, now=NOW) == dt.datetime(2025, 3, 29, 23, 0, tzinfo=UTC)
    assert times.bound("yesterday", PARIS, now=NOW) == dt.datetime(2025, 3, 28, 23, 0, tzinfo=UTC)
    assert times.bound("today", PARIS, end=True, now=NOW) == dt.datetime(2025, 3, 30, 22, 0, tzinfo=UTC)


@pytest.mark.parametrize("bad", ["last week", "2025-13-01", "2025-02-30", "31/01/2025", "", "3 days"])
def test_what_is_not_a_time_says_what_is(bad: str) -> None:
    with pytest.raises(AszError, match="is n"):
        times.bound(bad, UTC)


def test_zones() -> None:
    assert times.zone(None) is None and times.zone("local") is None
    assert times.zone("UTC") is UTC and times.zone("utc") is UTC
    assert times.zone("Europe/Paris") == PARIS
    assert times.zone("+05:30").utcoffset(None) == dt.timedelta(hours=5, minutes=30)
    assert times.zone("-0800").utcoffset(None) == dt.timedelta(hours=-8)
    with pytest.raises(AszError, match="unknown time zone 'Mars/Olympus'"):
        times.zone("Mars/Olympus")


def test_instants_and_days() -> None:
    assert times.instant("2025-01-31T23:30:00Z") == dt.datetime(2025, 1, 31, 23, 30, tzinfo=UTC)
    assert times.instant("2025-01-31T23:30:00") == dt.datetime(2025, 1, 31, 23, 30, tzinfo=UTC)  # no offset: UTC
    assert times.instant("2025-02-01T01:30:00+02:00") == dt.datetime(2025, 1, 31, 23, 30, tzinfo=UTC)
    assert times.instant(None) is None and times.instant("soon") is None
    # an offset that takes it before year 1 or after 9999 in UTC: no instant, not an OverflowError
    assert times.instant("0001-01-01T00:00:00+01:00") is None and times.instant("9999-12-31T23:59:59-01:00") is None
    t = times.instant("2025-01-31T23:30:00Z")
    assert t is not None
    assert times.day(t, UTC) == "2025-01-31" and times.day(t, PARIS) == "2025-02-01"
    assert times.day(t, ZoneInfo("America/New_York")) == "2025-01-31"


def test_local_time_is_the_systems_per_instant() -> None:
    """No zone named: the system's rules at each instant (TZ), so both sides of a DST change are right."""
    code = ("import datetime as dt; from asz_core import times; "
            "print(times.day(dt.datetime(2025,3,29,23,30,tzinfo=dt.UTC), None), "
            "times.day(dt.datetime(2025,7,1,22,30,tzinfo=dt.UTC), None), "
            "times.bound('2025-07-02', None).isoformat())")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**os.environ, "TZ": "Europe/Paris"}, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["2025-03-30", "2025-07-02", "2025-07-01T22:00:00+00:00"]


def test_spans_for_people() -> None:
    assert [times.span_text(x) for x in (None, 0, 45, 125, 1800, 3 * 3600 + 300, 2 * 86400 + 4 * 3600)] == \
        ["—", "0s", "45s", "2m 05s", "30m", "3h 05m", "2d 4h"]


def test_an_instant_is_one_every_zone_can_show_the_day_of() -> None:
    # Within a day of year 1 or past 9999 in UTC, some zone's day of it does not exist: no instant.
    assert times.instant("9999-12-31T23:30:00Z") is None and times.instant("0001-01-01T12:00:00Z") is None
    assert times.instant("9999-12-31T03:30:00+02:00") is None  # 01:30 UTC on the last day
    last, first = times.instant("9999-12-30T23:59:59Z"), times.instant("0001-01-02T00:00:00Z")
    assert last is not None and first is not None
    for off in (-23 * 60 - 59, 0, 23 * 60 + 59):
        tz = dt.timezone(dt.timedelta(minutes=off))
        assert times.day(last, tz) in ("9999-12-30", "9999-12-31") and times.day(first, tz) in ("0001-01-01", "0001-01-02")


@pytest.mark.parametrize(("text", "end", "offset", "every"), [
    ("9999-12-31", True, 2, True),  # --until the last day: after every time (was OverflowError)
    ("9999-12-31", True, -2, True),
    ("9999-12-31T23:30:00-02:00", True, 0, True),
    ("0001-01-01", False, 2, True),  # --since the first day, east of UTC: before every time
    ("0001-01-01", True, 2, False),  # --until it: before every time, so nothing
    ("9999-12-31T23:00:00-02:00", False, 0, False),  # --since past the end: nothing
    ("99999999d", False, 0, True),  # longer ago than year 1
])
def test_a_bound_past_the_calendars_ends_keeps_all_or_nothing(text: str, end: bool, offset: int, every: bool) -> None:
    tz = dt.timezone(dt.timedelta(hours=offset))
    b = times.bound(text, tz, end=end)
    probes = [times.instant(t) for t in ("0001-01-02T00:00:00Z", "2025-01-31T09:00:00Z", "9999-12-30T23:59:59Z")]
    kept = [t is not None and (t < b if end else t >= b) for t in probes]
    assert kept == [every] * 3, (text, b)
