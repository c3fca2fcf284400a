"""The claude evaluator: the real claude CLI (2.1.332, from npm) against a local fake model server
that calls the real `asz judge mcp` tools and then answers. Every test checks what asz recorded
against exactly what the fake server said."""

from __future__ import annotations

import json
import os
import stat
from decimal import Decimal
from pathlib import Path
from typing import Any

from asz_evaluators.claude import ClaudeStream, check_init

from .cli_fakes import FakeAnthropic
from .cli_helpers import (CLAUDE, _clean_env, answer_for, attempt_dir, needs_claude, reads_of,  # noqa: F401
                          requests_of, run_targets, small_conv)

MODEL = "claude-sonnet-4-5"
SAMPLES = Path(os.environ.get("ASZ_SPEC") or Path(__file__).resolve().parents[3] / "shared" / "spec") / "evaluator-samples"


def _run(small_conv: Any, tmp_path: Path, monkeypatch: Any, script: list[dict[str, Any]], command: str | None = None,
         **kw: Any) -> tuple[FakeAnthropic, Any, dict[str, Any]]:
    store, cid, _ = small_conv
    fake = FakeAnthropic(script).start()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-fake")
    opts = {"command": command or str(CLAUDE), "timeout": kw.pop("timeout", 120)}
    try:
        res, stage = run_targets(store, cid, tmp_path, f"claude:{MODEL}", opts, **kw)
    finally:
        fake.stop()
    return fake, res, stage


def _said(fake: FakeAnthropic, n: int, reads: list[str]) -> dict[str, Any]:
    """The request line asz must record for the fake's request ``n`` (1-based)."""
    u = fake.sent[n - 1]["usage"]
    return {"input": u["input_tokens"], "output": u["output_tokens"], "cache_read": u["cache_read_input_tokens"],
            "cache_write": u["cache_creation_input_tokens"], "model": MODEL, "said": True, "reads": reads}


def _consumed(lines: list[dict[str, Any]]) -> dict[str, int]:
    said = [x for x in lines if x["said"]]
    return {"requests": len(said), "unknown_requests": len(lines) - len(said),
            **{k: sum(x[k] or 0 for x in said) for k in ("input", "output", "cache_read", "cache_write")}}


def _stage_consumed(stage: dict[str, Any]) -> dict[str, int]:
    c = stage["run"]["consumed"]
    return {k: c[k] for k in ("requests", "unknown_requests", "input", "output", "cache_read", "cache_write")}


@needs_claude
def test_clean_call(small_conv: Any, tmp_path: Path, monkeypatch: Any) -> None:
    answer = answer_for(small_conv[2])
    fake, res, stage = _run(small_conv, tmp_path, monkeypatch, [{"tool": "talks", "input": {}}, {"answer": answer}])
    assert stage["status"] == "complete", stage["reason"]
    d = attempt_dir(res)
    lines = requests_of(d)
    assert lines == [_said(fake, 1, ["talks"]), _said(fake, 2, [])]
    assert _stage_consumed(stage) == _consumed(lines)
    assert fake.other == []  # no request outside the script (no small model) in this configuration
    # claude's own figures kept beside asz's: its cost and its per-model totals
    usage = json.loads((d / "usage.json").read_text())
    assert usage["model_usage"][MODEL]["inputTokens"] == 101 + 201 and usage["only_in_totals"] == {}
    assert Decimal(stage["run"]["consumed"]["reported_cost"]) == Decimal(str(usage["total_cost_usd"])) > 0
    assert stage["run"]["consumed"]["model_window"] == 200000
    assert stage["evaluator"]["models"] == [MODEL]
    # what it read, through the real asz judge mcp, counted into the attempt
    reads = reads_of(d)
    assert [(r["tool"], r["status"]) for r in reads] == [("talks", "ok")]
    [att] = stage["run"]["attempt_log"]
    assert att["read_bytes"] == reads[0]["used"] > 0 and att["tool_calls"] == 1
    # the model saw only asz's tools and the StructuredOutput tool, and the stage prompt as the whole system prompt
    for body in fake.bodies:
        names = {t["name"] for t in body["tools"]}
        assert names - {"StructuredOutput"} and all(n.startswith("mcp__asz__") for n in names - {"StructuredOutput"})
    system = fake.bodies[0]["system"]
    text = "".join(b["text"] for b in system) if isinstance(system, list) else system
    prompt = (d / "prompt.md").read_text()
    assert prompt.strip() in text and len(text) < len(prompt) + 2000  # no Claude Code prompt of its own around it
    # the model got the navigation's answer as the tool result
    result = fake.bodies[1]["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and '"tool":"talks"' in json.dumps(result["content"]).replace("\\", "")
    # its answer is the stage's
    assert len(stage["inputs"]) == len(small_conv[2]) and stage["targets"][0]["statement"] == "the outcome a"
    # no session kept under the (test's) home
    assert not list((Path(os.environ["HOME"]) / ".claude" / "projects").glob("**/*.jsonl"))


@needs_claude
def test_reading_past_the_budget_is_refused(small_conv: Any, tmp_path: Path, monkeypatch: Any) -> None:
    answer = answer_for(small_conv[2])
    fake, res, stage = _run(small_conv, tmp_path, monkeypatch, [
        {"tool": "talks"}, {"tool": "talks"}, {"answer": answer}], read_bytes=2000)
    assert stage["status"] == "complete", stage["reason"]
    d = attempt_dir(res)
    reads = reads_of(d)
    assert [(r["tool"], r["status"]) for r in reads] == [("talks", "ok"), ("talks", "refused")]
    refusal = json.dumps(fake.bodies[2]["messages"][-1]["content"][0]["content"]).replace("\\", "")
    assert '"refused":true' in refusal and "refused whole" in refusal
    lines = requests_of(d)
    assert lines == [_said(fake, 1, ["talks"]), _said(fake, 2, ["talks"]), _said(fake, 3, [])]
    assert _stage_consumed(stage) == _consumed(lines)
    assert stage["run"]["attempt_log"][0]["read_bytes"] == reads[0]["bytes"]


@needs_claude
def test_the_third_refusal_ends_the_navigation_server(small_conv: Any, tmp_path: Path, monkeypatch: Any) -> None:
    answer = answer_for(small_conv[2])
    fake, res, stage = _run(small_conv, tmp_path, monkeypatch, [
        {"tool": "talks"}, {"tool": "talks"}, {"tool": "talks"},
        {"tool": "talks", "delay": 2.0},  # asked after the server ended
        {"answer": answer}], read_bytes=100)
    assert stage["status"] == "complete", stage["reason"]
    d = attempt_dir(res)
    assert [(r["tool"], r["status"]) for r in reads_of(d)] == [("talks", "refused")] * 3  # nothing after the third
    after = json.dumps(fake.bodies[4]["messages"][-1]["content"][0])
    assert "is_error" in after and '"refused' not in after and "ended" not in after
    lines = requests_of(d)
    assert lines == [_said(fake, 1, ["talks"]), _said(fake, 2, ["talks"]), _said(fake, 3, ["talks"]),
                     _said(fake, 4, ["talks"]), _said(fake, 5, [])]
    assert _stage_consumed(stage) == _consumed(lines)


@needs_claude
def test_a_malformed_answer_is_tried_once_more_in_its_own_directory(small_conv: Any, tmp_path: Path, monkeypatch: Any) -> None:
    answer = answer_for(small_conv[2])
    # attempt 1: text, and text again when claude insists on the StructuredOutput tool; attempt 2 answers
    fake, res, stage = _run(small_conv, tmp_path, monkeypatch, [
        {"text": "no json here"}, {"text": "still none"}, {"answer": answer}])
    assert stage["status"] == "complete", stage["reason"]
    one, two = attempt_dir(res, 1, 1), attempt_dir(res, 1, 2)
    assert requests_of(one) == [_said(fake, 1, []), _said(fake, 2, [])]
    assert requests_of(two) == [_said(fake, 3, [])]
    assert (one / "answer.txt").read_text() == "still none"
    assert [a["status"] for a in stage["run"]["attempt_log"]] == ["unreadable", "ok"]
    # each attempt ran in a directory of its own
    cwds = [json.loads(x)["cwd"] for d in (one, two) for x in (d / "stream.jsonl").read_text().splitlines()
            if '"subtype":"init"' in x]
    assert cwds == [str(one.resolve() / "cwd"), str(two.resolve() / "cwd")]
    assert _stage_consumed(stage) == _consumed(requests_of(one) + requests_of(two))


@needs_claude
def test_an_api_error_fails_the_call(small_conv: Any, tmp_path: Path, monkeypatch: Any) -> None:
    fake, res, stage = _run(small_conv, tmp_path, monkeypatch, [{"error": 400}] * 8)  # every request
    assert stage["status"] == "failed"
    assert "API status 400" in stage["reason"] and "fake failure for testing" in stage["reason"]
    for a in (1, 2):
        d = attempt_dir(res, 1, a)
        assert requests_of(d) == []  # an error answer carries no usage, and claude's synthetic message is no request
        assert json.loads((d / "usage.json").read_text())["model_usage"] == {}
    assert fake.sent and all(s.get("error") == 400 and s["usage"] is None for s in fake.sent)
    assert _stage_consumed(stage) == _consumed([])


@needs_claude
def test_a_stream_cut_off_mid_request(small_conv: Any, tmp_path: Path, monkeypatch: Any) -> None:
    answer = answer_for(small_conv[2])
    fake, res, stage = _run(small_conv, tmp_path, monkeypatch, [
        {"tool": "talks"}, {"stall": True}, {"answer": answer}], timeout=10)
    assert stage["status"] == "complete", stage["reason"]
    one, two = attempt_dir(res, 1, 1), attempt_dir(res, 1, 2)
    assert "stopped after 10 s" in stage["run"]["attempt_log"][0]["error"]
    u = fake.sent[1]["usage"]
    # the request that ended, and the one running when it stopped, apart: its input side as said, never zero
    assert requests_of(one) == [_said(fake, 1, ["talks"]),
                                {"input": u["input_tokens"], "output": None, "cache_read": u["cache_read_input_tokens"],
                                 "cache_write": u["cache_creation_input_tokens"], "model": MODEL, "said": False, "reads": []}]
    assert requests_of(two) == [_said(fake, 3, [])]
    assert _stage_consumed(stage) == _consumed(requests_of(one) + requests_of(two))
    assert stage["run"]["consumed"]["unknown_requests"] == 1


@needs_claude
def test_a_stream_cut_off_then_retried(small_conv: Any, tmp_path: Path, monkeypatch: Any) -> None:
    """The connection closes after message_start: claude ends that request with a message_stop of
    its own (no message_delta) and asks again without streaming. The cut request is counted apart,
    its input side as said; claude's totals (which count that input side) add no line."""
    answer = answer_for(small_conv[2])
    fake, res, stage = _run(small_conv, tmp_path, monkeypatch, [{"tool": "talks"}, {"cut": True}, {"answer": answer}])
    assert stage["status"] == "complete", stage["reason"]
    d = attempt_dir(res)
    u = fake.sent[1]["usage"]
    assert [s["ended"] for s in fake.sent] == [True, False, True]
    assert requests_of(d) == [_said(fake, 1, ["talks"]),
                              {"input": u["input_tokens"], "output": None, "cache_read": u["cache_read_input_tokens"],
                               "cache_write": u["cache_creation_input_tokens"], "model": MODEL, "said": False, "reads": []},
                              _said(fake, 3, [])]
    assert json.loads((d / "usage.json").read_text())["only_in_totals"] == {}
    assert _stage_consumed(stage) == _consumed(requests_of(d))


@needs_claude
def test_a_response_with_no_usage_is_counted_apart(small_conv: Any, tmp_path: Path, monkeypatch: Any) -> None:
    answer = answer_for(small_conv[2])
    fake, res, stage = _run(small_conv, tmp_path, monkeypatch, [{"tool": "talks"}, {"answer": answer, "usage": None}])
    assert stage["status"] == "complete", stage["reason"]
    assert fake.sent[1]["usage"] is None
    lines = requests_of(attempt_dir(res))
    assert lines == [_said(fake, 1, ["talks"]), {"input": None, "output": None, "cache_read": None, "cache_write": None,
                                                 "model": MODEL, "said": False, "reads": []}]
    assert _stage_consumed(stage) == _consumed(lines) and stage["run"]["consumed"]["unknown_requests"] == 1


@needs_claude
def test_an_extra_tool_in_the_init_frame_fails_the_call(small_conv: Any, tmp_path: Path, monkeypatch: Any) -> None:
    # The real claude, given one built-in tool more than asz asks for (as a settings file an
    # organization enforces could): the init frame lists it, and the call stops there.
    wrapper = tmp_path / "claude-with-read"
    # (`claude auth status`, asked before the run starts, as it is)
    wrapper.write_text(f'#!/bin/sh\n[ "$1" = auth ] && exec "{CLAUDE}" "$@"\nexec "{CLAUDE}" "$@" --tools Read\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    answer = answer_for(small_conv[2])
    # the first request is held 3 s: the call is stopped at the init frame while it may be on its way
    fake, res, stage = _run(small_conv, tmp_path, monkeypatch, [{"answer": answer, "delay": 3}] * 2, command=str(wrapper))
    assert stage["status"] == "failed"
    assert "claude loaded tools other than asz's: Read" in stage["reason"]
    assert len(fake.sent) <= 2
    apart = {"input": None, "output": None, "cache_read": None, "cache_write": None, "model": MODEL, "said": False, "reads": []}
    for a in (1, 2):
        d = attempt_dir(res, 1, a)
        assert requests_of(d) == [apart]  # stopped before its result: one request apart, the one on its way
        init = json.loads((d / "stream.jsonl").read_text().splitlines()[0])
        assert "Read" in init["tools"]
    assert stage["run"]["consumed"]["unknown_requests"] == 2 and stage["run"]["consumed"]["requests"] == 0


# --- the stream parser over captured frames -----------------------------------------------------


def _frames(name: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (SAMPLES / name).read_text().splitlines() if x.strip()]


def test_the_parser_counts_every_model_of_the_totals() -> None:
    """A small model that only the totals show (Claude Code's own calls) is counted, as one line of that model."""
    frames = _frames("claude_run2.jsonl") if (SAMPLES / "claude_run2.jsonl").is_file() else []
    if not frames:
        import pytest
        pytest.skip(f"no captured stream at {SAMPLES}")
    result = next(f for f in frames if f["type"] == "result")
    result["modelUsage"]["claude-haiku-4-5"] = {"inputTokens": 350, "outputTokens": 12, "cacheReadInputTokens": 0,
                                                "cacheCreationInputTokens": 0, "costUSD": 0.0004, "contextWindow": 200000}
    s = ClaudeStream()
    for f in frames:
        assert s.feed(f) is None
    lines, report = s.consumed(stopped=False)
    main = [x for x in lines if x.model == "claude-sonnet-4-5"]
    assert [(x.input, x.output, x.cache_read, x.cache_write, x.said) for x in main] == [
        (301, 8, 3000, 30, True), (401, 9, 4000, 40, True)]
    [small] = [x for x in lines if x.model == "claude-haiku-4-5"]
    assert (small.input, small.output, small.cache_read, small.cache_write, small.said) == (350, 12, 0, 0, True)
    assert report["only_in_totals"] == {"claude-haiku-4-5": {"input": 350, "output": 12, "cache_read": 0, "cache_write": 0}}
    assert s.reported_cost() == Decimal(str(result["total_cost_usd"]))


def test_the_parser_on_a_failed_call_and_a_stopped_one() -> None:
    if not (SAMPLES / "claude_fail.jsonl").is_file():
        import pytest
        pytest.skip(f"no captured stream at {SAMPLES}")
    s = ClaudeStream()
    for f in _frames("claude_fail.jsonl"):
        s.feed(f)
    assert s.result["is_error"] and s.result["subtype"] == "success"
    assert s.consumed(stopped=False)[0] == [] and s.api_errors == ["API Error: 400 fake failure for testing"]
    # stopped before its result: the requests the stream showed ending, and one more apart
    frames = [f for f in _frames("claude_run2.jsonl") if f["type"] != "result"]
    s = ClaudeStream()
    for f in frames:
        s.feed(f)
    lines, _ = s.consumed(stopped=True)
    assert [x.said for x in lines] == [True, True, False]


def test_the_init_check() -> None:
    ok = {"tools": ["StructuredOutput", "mcp__asz__talks"], "mcp_servers": [{"name": "asz", "status": "connected"}]}
    assert check_init(ok) is None
    assert check_init({**ok, "tools": ["Bash", "mcp__asz__talks"]}) == "claude loaded tools other than asz's: Bash"
    assert "other than asz's: other" in check_init({**ok, "mcp_servers": [*ok["mcp_servers"], {"name": "other"}]})
    assert "did not connect" in check_init({**ok, "mcp_servers": [{"name": "asz", "status": "failed"}]})


@needs_claude
def test_a_navigation_server_that_does_not_start_fails_the_call(small_conv: Any, tmp_path: Path, monkeypatch: Any) -> None:
    from asz_evaluators import cli_common

    monkeypatch.setattr(cli_common, "mcp_env", lambda call: {"ASZ_HOME": str(tmp_path / "no-store")})
    fake, res, stage = _run(small_conv, tmp_path, monkeypatch, [{"answer": answer_for(small_conv[2]), "delay": 3}] * 2)
    assert stage["status"] == "failed"
    assert "asz's navigation server did not connect to claude (status: failed)" in stage["reason"]
    apart = {"input": None, "output": None, "cache_read": None, "cache_write": None, "model": MODEL, "said": False, "reads": []}
    assert requests_of(attempt_dir(res)) == [apart]


def test_the_progress_tick_says_each_request_as_the_stream_shows_it_ending() -> None:
    """While claude runs, the tick gives the stage's progress the requests the stream showed ending
    so far, and never settles the stream: what the call counts at its end is the same."""
    import copy
    import types

    from asz_evaluators import cli_common

    if not (SAMPLES / "claude_run2.jsonl").is_file():
        import pytest
        pytest.skip(f"no captured stream at {SAMPLES}")
    frames = [f for f in _frames("claude_run2.jsonl") if f["type"] != "result"]
    said: list[tuple[Any, ...]] = []
    call = types.SimpleNamespace(directory=Path("/nonexistent"), navigator=None,
                                 requests_so_far=lambda reqs: said.append(tuple(reqs)))
    s = ClaudeStream()
    tick = cli_common.tick_of(call, lambda: copy.deepcopy(s).consumed(False)[0])  # type: ignore[arg-type]
    for f in frames:
        s.feed(f)
        tick()
    counts = [len(x) for x in said]
    assert counts == sorted(counts) and counts[0] == 0 and 1 in counts and counts[-1] == 2  # one by one, as each ended
    assert [(x.input, x.output) for x in said[-1]] == [(301, 8), (401, 9)]
    fresh = ClaudeStream()
    for f in frames:
        fresh.feed(f)
    assert s.consumed(stopped=True)[0] == fresh.consumed(stopped=True)[0]
