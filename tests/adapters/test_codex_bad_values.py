"""Codex: a token count of 2**64, -1, 1e308, "12" or true, and a timestamp in year 0, 10000,
garbage or an integer, each read as unknown (as the spec says) and said once per kind and file,
naming its first line (records.said_bad_values). The rollouts and exec streams are made here,
shaped as test_codex_order's; the corpus is read whole at the end."""

from __future__ import annotations

from pathlib import Path

import pytest

from asz_core.collect import collect
from asz_core.store import Store

from test_codex import CODEX, collect_into, only, rec, write
from test_codex_order import items_first, own

BAD_COUNTS = [2**64, -1, 1e308, "12", True]
BAD_TIMES = ["0000-01-01T00:00:00Z", "10000-01-01T00:00:00Z", "garbage", 1767225600]
TAIL = "read as unknown (further such lines of this file are not warned about)"
# items_first's lines: 8, 14 and 19 are the three requests' token_counts.
COUNT_LINES = (8, 14, 19)


def counts_of(recs: list[dict]) -> list[dict]:
    return [r for r in recs if r["payload"].get("type") == "token_count"]


@pytest.mark.parametrize("bad", BAD_COUNTS)
def test_a_count_that_is_no_count_is_said_once_per_file(bad, store: Store, tmp_path: Path) -> None:
    recs = items_first(tid="bad-count")
    for r in counts_of(recs)[1:]:  # requests 2 and 3: their own output count
        r["payload"]["info"]["last_token_usage"]["output_tokens"] = bad
    path = write(tmp_path / "rollout-bad.jsonl", recs)
    res = collect_into(store, path)
    said = [str(p) for p in res.problems]
    assert len(said) == 1 and said[0].startswith(f"{path}:14: a token count that is no count"), said
    if not isinstance(bad, (str, bool)):  # a number: the shared warning, naming the field
        shown = {2**64: "1.8446744073709552e+19", -1: "-1", 1e308: "1e+308"}[bad]
        assert said[0] == f"{path}:14: a token count that is no count (last_token_usage.output_tokens: {shown}); {TAIL}"
    # The lines' other counts stand: input without the cached part, the cached part; output unknown.
    assert [own(c) for c in only(store).model_calls()] == [(800, 200, 50), (400, 1000, None), (400, 1300, None)]


@pytest.mark.parametrize("where", ["total_token_usage", "last_token_usage"])
def test_each_usage_of_a_count_is_looked_at(where: str, store: Store, tmp_path: Path) -> None:
    recs = items_first(tid="bad-where")
    counts_of(recs)[2]["payload"]["info"][where]["cached_input_tokens"] = -5
    path = write(tmp_path / "rollout-w.jsonl", recs)
    said = [str(p) for p in collect_into(store, path).problems]
    assert said == [f"{path}:19: a token count that is no count ({where}.cached_input_tokens: -5); {TAIL}"]


@pytest.mark.parametrize("bad", BAD_TIMES)
def test_a_timestamp_that_is_no_time_is_said_once_per_file(bad, store: Store, tmp_path: Path) -> None:
    recs = items_first(tid="bad-time")
    for r in recs[5:9]:  # lines 6 to 9
        r["timestamp"] = bad
    path = write(tmp_path / "rollout-t.jsonl", recs)
    said = [str(p) for p in collect_into(store, path).problems]
    shown = {1767225600: "1767225600"}.get(bad, f'"{bad}"')
    assert said == [f"{path}:6: a timestamp that is no time (timestamp: {shown}); {TAIL}"]
    assert [own(c) for c in only(store).model_calls()] == [(800, 200, 50), (400, 1000, 120), (400, 1300, 30)]


def test_both_kinds_on_one_line_each_said_and_not_again_when_the_file_grows(store: Store, tmp_path: Path) -> None:
    recs = items_first(tid="bad-both")
    r = counts_of(recs)[0]
    r["timestamp"], r["payload"]["info"]["last_token_usage"]["input_tokens"] = "garbage", -1
    path = write(tmp_path / "rollout-b.jsonl", recs[:10])
    first = [str(p) for p in collect_into(store, path).problems]
    assert first == [f"{path}:8: a token count that is no count (last_token_usage.input_tokens: -1); {TAIL}",
                     f'{path}:8: a timestamp that is no time (timestamp: "garbage"); {TAIL}']
    recs[13]["timestamp"], recs[13]["payload"]["info"]["last_token_usage"]["output_tokens"] = 7, 2**64
    write(path, recs)
    assert list(collect_into(store, path).problems) == []  # said for this file: the cursor keeps it


def exec_stream(usages: list[dict]) -> list[dict]:
    out: list[dict] = [{"type": "thread.started", "thread_id": "exec-bad"}]
    for n, u in enumerate(usages):
        out += [{"type": "turn.started"},
                {"type": "item.completed", "item": {"id": f"item_{n}", "type": "agent_message", "text": f"answer {n}"}},
                {"type": "turn.completed", "usage": u}]
    return out


@pytest.mark.parametrize("bad", BAD_COUNTS)
def test_an_exec_streams_bad_count_is_said(bad, store: Store, tmp_path: Path) -> None:
    good = {"input_tokens": 900, "cached_input_tokens": 100, "output_tokens": 40}
    path = write(tmp_path / "exec.jsonl", exec_stream([good, {**good, "output_tokens": bad}, {**good, "output_tokens": bad}]))
    said = [str(p) for p in collect_into(store, path).problems]
    assert len(said) == 1 and said[0].startswith(f"{path}:7: a token count that is no count (usage.output_tokens: "), said
    assert [own(c) for c in only(store).model_calls()] == [(800, 100, 40), (800, 100, None), (800, 100, None)]


def test_good_values_and_absent_fields_say_nothing(store: Store, tmp_path: Path) -> None:
    recs = items_first(tid="good")
    del recs[5]["timestamp"]
    recs[6]["timestamp"] = None
    del counts_of(recs)[0]["payload"]["info"]["last_token_usage"]["reasoning_output_tokens"]
    counts_of(recs)[1]["payload"]["info"]["last_token_usage"]["total_tokens"] = None
    recs.append(rec("2026-05-02T09:00:04+02:00", "event_msg", {"type": "token_count", "info": None, "rate_limits": {}}))
    path = write(tmp_path / "rollout-good.jsonl", recs)
    good = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0}
    stream = write(tmp_path / "exec.jsonl", exec_stream([good, {"input_tokens": 5}]))
    assert list(collect_into(store, path, stream).problems) == []


def test_the_corpus_gives_no_new_warning_but_its_trimmed_timestamps(store: Store) -> None:
    """Every Codex file of the corpus: before this check none warned. One fixture had its
    timestamps replaced by "[trimmed for fixture]" from its line 27 on: that is no time, said once."""
    if not CODEX.is_dir():
        pytest.skip(f"codex corpus not found at {CODEX}")
    small = CODEX / "jazzyalex__agent-sessions/Resources/Fixtures/stage0/agents/codex/small.jsonl"
    said = [str(p) for p in collect([CODEX], store).problems]
    assert said == [f'{small}:27: a timestamp that is no time (timestamp: "[trimmed for fixture]"); {TAIL}']
