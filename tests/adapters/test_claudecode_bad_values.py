"""A token count of 2**64, -1, 1e308 or "12", and a timestamp in year 0, 10000, garbage or an
integer: each read as unknown (as the spec says) and said, one warning per kind and file naming
its first line. The transcripts are made here."""

from __future__ import annotations

from pathlib import Path

import pytest

from asz_core.collect import collect
from asz_core.conversations import Filter, ledger_of_one

from cc_shapes import Session, text, usage


@pytest.mark.parametrize("bad", [2**64, -1, 1e308, "12", True])
def test_a_count_that_is_no_count_is_said_once_per_file(tmp_path: Path, store, bad) -> None:
    s = Session("bad-counts")
    s.user("u1", None, "go")
    for n in range(3):
        u = usage(100, 0, 0, 7, final=True)
        u["output_tokens"] = bad if n else 7
        s.assistant(f"a{n}", "u1" if n == 0 else f"a{n - 1}", f"msg_{n}", f"req_{n}", text("ok"), u)
    path = s.write(tmp_path / "t.jsonl")
    said = [str(p) for p in collect([path], store).problems]
    assert len(said) == 1 and f"{path}:3:" in said[0] and "a token count that is no count (output_tokens" in said[0], said
    led = ledger_of_one("bad-counts", None, Filter(), store=store)
    assert led.total.calls == 3 and led.total.tokens["input"] == 300  # the lines are kept, their other counts too


@pytest.mark.parametrize("bad", ["0000-01-01T00:00:00Z", "10000-01-01T00:00:00Z", "garbage", 1767225600])
def test_a_timestamp_that_is_no_time_is_said_once_per_file(tmp_path: Path, store, bad) -> None:
    s = Session("bad-times")
    s.user("u1", None, "go", timestamp=bad)
    s.assistant("a1", "u1", "msg_1", "req_1", text("ok"), usage(10, 0, 0, 5, final=True), timestamp=bad)
    s.user("u2", "a1", "again")
    path = s.write(tmp_path / "t.jsonl")
    said = [str(p) for p in collect([path], store).problems]
    assert len(said) == 1 and f"{path}:1:" in said[0] and "a timestamp that is no time" in said[0], said


def test_good_values_say_nothing(tmp_path: Path, store) -> None:
    s = Session("good")
    s.user("u1", None, "go")
    s.assistant("a1", "u1", "msg_1", "req_1", text("ok"), usage(10, 0, 0, 5, final=True))
    assert list(collect([s.write(tmp_path / "t.jsonl")], store).problems) == []


@pytest.mark.parametrize("key", ["ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens"])
@pytest.mark.parametrize("bad", [2**64, -1, 1e308, "12", True])
def test_a_bad_count_in_the_cache_creation_split_is_said(tmp_path: Path, store, key, bad) -> None:
    s = Session("bad-split")
    s.user("u1", None, "go")
    for n in range(3):
        u = usage(100, 40, 0, 7, final=True)
        if n:
            u["cache_creation"][key] = bad
        s.assistant(f"a{n}", "u1" if n == 0 else f"a{n - 1}", f"msg_{n}", f"req_{n}", text("ok"), u)
    path = s.write(tmp_path / "t.jsonl")
    said = [str(p) for p in collect([path], store).problems]
    assert len(said) == 1 and said[0].startswith(f"{path}:3: a token count that is no count (cache_creation.{key}: "), said
    led = ledger_of_one("bad-split", None, Filter(), store=store)
    # The line's other counts stand: 3 calls, 100 input and 7 output each, 40 written to the cache each.
    assert led.total.calls == 3 and led.total.tokens["input"] == 300 and led.total.tokens["output"] == 21
    assert led.total.tokens["cache_write"] == 120


def test_a_bad_count_in_a_task_results_usage_is_said(tmp_path: Path, store) -> None:
    s = Session("bad-agent")
    s.user("u1", None, "go")
    s.assistant("a1", "u1", "msg_1", "req_1", {"type": "tool_use", "id": "t1", "name": "Task",
                                                "input": {"prompt": "look"}}, usage(10, 0, 0, 5, final=True))
    s.result("u2", "a1", "t1", "done", tur={"agentId": "x1", "usage": {"input_tokens": 3, "output_tokens": -1}})
    path = s.write(tmp_path / "t.jsonl")
    said = [str(p) for p in collect([path], store).problems]
    assert said == [f"{path}:3: a token count that is no count (toolUseResult.usage.output_tokens: -1); read as "
                    "unknown (further such lines of this file are not warned about)"]


def test_absent_counts_and_times_say_nothing(tmp_path: Path, store) -> None:
    s = Session("absent")
    s.user("u1", None, "go", timestamp=None)
    u = usage(10, 0, 0, 5, final=True)
    del u["cache_creation"]["ephemeral_1h_input_tokens"]
    u["output_tokens"] = None
    s.assistant("a1", "u1", "msg_1", "req_1", text("ok"), u)
    assert list(collect([s.write(tmp_path / "t.jsonl")], store).problems) == []
