"""The cheap first looks an adapter takes at every line before the one check of bad values
(records.said_bad_values): each may only say "fine" where the check finds nothing, so a value
that is no value is still warned about. Compared with the check itself on hostile values and on
every timestamp and usage of the Claude Code corpus."""

from __future__ import annotations

import datetime as dt
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asz_adapters_claudecode.adapter import _counts_plain, _usage_counts
from asz_core.records import MAX_COUNT, count, plainly_a_time, said_bad_values
from asz_core.times import instant

from .helpers import CLAUDE_CORPUS

EDGES = [
    "2025-10-12T09:33:21.123Z", "2025-10-12T09:33:21Z", "2025-10-12T09:33:21.123456Z", "2025-10-12T09:33:21.123+02:00",
    "2025-10-12T09:33:21", "2025-10-12", "2025-02-30T00:00:00Z", "2025-13-01T00:00:00Z", "2025-10-12T24:00:00Z",
    "0000-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "0001-01-02T00:00:00Z", "0002-01-01T00:00:00+23:59",
    "9998-12-31T23:59:59-23:59", "9999-12-30T00:00:00Z", "9999-12-31T23:59:59Z", "10000-01-01T00:00:00Z",
    "", " ", "garbage", "2025-10-12T09:33:21.123Z\x00", "２０２５-10-12T09:33:21Z", "2025-10-12T09:33:21,5Z",
    "20251012T093321Z", "2025-W41-1", "2025-285", 1760261601, 1.5, None, True, [], {}, "\ud83d",
]


@pytest.mark.parametrize("ts", EDGES, ids=repr)
def test_a_time_called_plain_is_one_instant_takes(ts: Any) -> None:
    if plainly_a_time(ts):
        assert instant(ts) is not None


@settings(max_examples=3000, deadline=None)
@given(st.one_of(
    st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31),
                 timezones=st.one_of(st.none(), st.timezones(), st.just(dt.UTC))).map(lambda t: t.isoformat()),
    st.text(alphabet="0123456789-:T.Z+ W", max_size=32),
))
def test_no_text_is_called_plain_that_instant_refuses(ts: str) -> None:
    if plainly_a_time(ts):
        assert instant(ts) is not None


def test_the_look_misses_no_bad_count() -> None:
    """A usage with any count that is no count (or a count in a split) is never called plain."""
    good = {"input_tokens": 3, "output_tokens": 9, "cache_read_input_tokens": 0, "service_tier": "standard",
            "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 12}}
    assert _counts_plain(good) and _counts_plain(None) and _counts_plain("no usage")
    for bad in (-1, 2**64, MAX_COUNT + 1, 1e308, 12.0, "12", True, [1], {"n": 1}):
        for where in ("input_tokens", "some_new_tokens"):
            u = dict(good, **{where: bad})
            assert not _counts_plain(u), (where, bad)
            assert said_bad_values([], "f", 1, _usage_counts("", u)), (where, bad)
        u = dict(good, cache_creation={"ephemeral_1h_input_tokens": bad})
        assert not _counts_plain(u), bad
        assert said_bad_values([], "f", 1, _usage_counts("", u)), bad


@pytest.mark.slow
@pytest.mark.usefixtures("corpus")
def test_the_looks_agree_with_the_check_on_the_whole_claude_code_corpus() -> None:
    """Every line's timestamp and usage in the corpus: a plain look where the check finds
    nothing, the same verdict as the check wherever the look says plain."""
    plain_times = plain_usages = lines = 0
    for f in sorted(CLAUDE_CORPUS.rglob("*.jsonl")):
        for raw in f.read_bytes().splitlines():
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue
            if type(obj) is not dict:
                continue
            lines += 1
            ts = obj.get("timestamp")
            if plainly_a_time(ts):
                plain_times += 1
                assert instant(ts) is not None, (f, ts)
            msg = obj.get("message")
            u = msg.get("usage") if type(msg) is dict else None
            if _counts_plain(u):
                plain_usages += 1
                assert all(count(v) is not None for _, v in _usage_counts("", u) if v is not None), (f, u)
    assert lines > 10_000
    assert plain_times > 0.95 * lines and plain_usages > 0.95 * lines  # the look pays on real lines
