"""The codex evaluator: the real codex CLI (0.171.0, from npm) against a local fake Responses
server (a custom model provider) that calls the real `asz judge mcp` tools and then answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .cli_fakes import FakeOpenAI
from .cli_helpers import (CODEX, _clean_env, answer_for, attempt_dir, needs_codex, reads_of,  # noqa: F401
                          requests_of, run_targets, small_conv)

MODEL = "my-judge-model"


def _run(small_conv: Any, tmp_path: Path, monkeypatch: Any, script: list[dict[str, Any]], **kw: Any) -> tuple[FakeOpenAI, Any, dict[str, Any]]:
    store, cid, _ = small_conv
    fake = FakeOpenAI(script).start()
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir(exist_ok=True)
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    monkeypatch.setenv("FAKE_KEY", "sk-fake")
    opts = {"command": str(CODEX), "timeout": kw.pop("timeout", 120), "config": {
        "model_provider": "fake", "model_providers.fake.name": "fake", "model_providers.fake.base_url": fake.url + "/v1",
        "model_providers.fake.env_key": "FAKE_KEY", "model_providers.fake.wire_api": "responses",
        "model_providers.fake.supports_websockets": False, "model_providers.fake.request_max_retries": 0,
        "model_providers.fake.stream_max_retries": 0}}
    try:
        res, stage = run_targets(store, cid, tmp_path, f"codex:{MODEL}", opts, **kw)
    finally:
        fake.stop()
    return fake, res, stage


def _turn(fake: FakeOpenAI, ns: list[int], reads: list[str]) -> dict[str, Any]:
    """The one line asz must record for a turn made of the fake's requests ``ns``: their usage
    summed as codex sums it, input without the cached part."""
    us = [fake.sent[n - 1]["usage"] for n in ns if fake.sent[n - 1]["usage"] is not None]
    inp = sum(u["input_tokens"] for u in us)
    cached = sum(u["input_tokens_details"]["cached_tokens"] for u in us)
    return {"input": inp - cached, "output": sum(u["output_tokens"] for u in us), "cache_read": cached, "cache_write": 0,
            "model": MODEL, "said": True, "reads": reads}


APART = {"input": None, "output": None, "cache_read": None, "cache_write": None, "model": MODEL, "said": False}


def _consumed(lines: list[dict[str, Any]]) -> dict[str, int]:
    said = [x for x in lines if x["said"]]
    return {"requests": len(said), "unknown_requests": len(lines) - len(said),
            **{k: sum(x[k] or 0 for x in said) for k in ("input", "output", "cache_read", "cache_write")}}


def _stage_consumed(stage: dict[str, Any]) -> dict[str, int]:
    c = stage["run"]["consumed"]
    return {k: c[k] for k in ("requests", "unknown_requests", "input", "output", "cache_read", "cache_write")}


@needs_codex
def test_clean_call(small_conv: Any, tmp_path: Path, monkeypatch: Any) -> None:
    answer = answer_for(small_conv[2])
    fake, res, stage = _run(small_conv, tmp_path, monkeypatch, [{"tool": "talks"}, {"answer": answer}])
    assert stage["status"] == "complete", stage["reason"]
    d = attempt_dir(res)
    lines = requests_of(d)
    assert lines == [_turn(fake, [1, 2], ["talks"])]  # one line: the whole turn, as codex reports it
    assert _stage_consumed(stage) == _consumed(lines)
    usage = json.loads((d / "usage.json").read_text())
    assert usage["per_request"].startswith("unavailable") and len(usage["turns"]) == 1
    assert usage["turns"][0]["reasoning_output_tokens"] == 1 + 2
    assert "requests one by one are unavailable" in (d / "stderr.txt").read_text()
    assert [(r["tool"], r["status"]) for r in reads_of(d)] == [("talks", "ok")]
    assert stage["run"]["attempt_log"][0]["read_bytes"] == reads_of(d)[0]["used"]
    # what the model was given: asz's tools and codex's MCP resource helpers, no shell, patch, image or web tool
    for body in fake.bodies:
        names = {t.get("name") for t in body["tools"]}
        assert names <= {"mcp__asz", "list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource",
                         "request_user_input"}, names
        [ns] = [t for t in body["tools"] if t.get("name") == "mcp__asz"]
        assert {t["name"] for t in ns["tools"]} >= {"talks", "step", "search"}
    first = fake.bodies[0]["input"][0]  # the stage prompt as the model's instructions
    assert first["role"] == "developer" and (d / "prompt.md").read_text().strip() in first["content"][0]["text"]
    fmt = fake.bodies[0]["text"]["format"]
    assert fmt["strict"] is True and fmt["schema"]["additionalProperties"] is False
    assert fmt["schema"] == json.loads((d / "output-schema.json").read_text())
    assert stage["targets"][0]["statement"] == "the outcome a"
    # no session kept
    assert not list((tmp_path / "codex-home").glob("sessions/**/*.jsonl"))


@needs_codex
def test_reading_past_the_budget_is_refused(small_conv: Any, tmp_path: Path, monkeypatch: Any) -> None:
    answer = answer_for(small_conv[2])
    fake, res, stage = _run(small_conv, tmp_path, monkeypatch, [{"tool": "talks"}, {"tool": "talks"}, {"answer": answer}],
                            read_bytes=2000)
    assert stage["status"] == "complete", stage["reason"]
    d = attempt_dir(res)
    assert [(r["tool"], r["status"]) for r in reads_of(d)] == [("talks", "ok"), ("talks", "refused")]
    assert "refused whole" in json.dumps(fake.bodies[2]["input"][-1])
    assert requests_of(d) == [_turn(fake, [1, 2, 3], ["talks", "talks"])]
    assert _stage_consumed(stage) == _consumed(requests_of(d))


@needs_codex
def test_the_third_refusal_ends_the_navigation_server(small_conv: Any, tmp_path: Path, monkeypatch: Any) -> None:
    answer = answer_for(small_conv[2])
    fake, res, stage = _run(small_conv, tmp_path, monkeypatch, [
        {"tool": "talks"}, {"tool": "talks"}, {"tool": "talks"}, {"tool": "talks", "delay": 2.0}, {"answer": answer}],
        read_bytes=100)
    assert stage["status"] == "complete", stage["reason"]
    d = attempt_dir(res)
    assert [(r["tool"], r["status"]) for r in reads_of(d)] == [("talks", "refused")] * 3
    after = json.dumps(fake.bodies[4]["input"][-1])
    assert "Transport closed" in after and "refused" not in after
    assert requests_of(d) == [_turn(fake, [1, 2, 3, 4, 5], ["talks"] * 4)]
    assert _stage_consumed(stage) == _consumed(requests_of(d))


@needs_codex
def test_a_malformed_answer_is_tried_once_more_in_its_own_directory(small_conv: Any, tmp_path: Path, monkeypatch: Any) -> None:
    answer = answer_for(small_conv[2])
    fake, res, stage = _run(small_conv, tmp_path, monkeypatch, [{"text": "no json here"}, {"answer": answer}])
    assert stage["status"] == "complete", stage["reason"]
    one, two = attempt_dir(res, 1, 1), attempt_dir(res, 1, 2)
    assert (one / "answer.txt").read_text() == "no json here"
    assert requests_of(one) == [_turn(fake, [1], [])] and requests_of(two) == [_turn(fake, [2], [])]
    assert [a["status"] for a in stage["run"]["attempt_log"]] == ["unreadable", "ok"]
    assert (one / "cwd").is_dir() and (two / "cwd").is_dir()
    assert _stage_consumed(stage) == _consumed(requests_of(one) + requests_of(two))


@needs_codex
def test_an_api_error_fails_the_call(small_conv: Any, tmp_path: Path, monkeypatch: Any) -> None:
    fake, res, stage = _run(small_conv, tmp_path, monkeypatch, [{"error": 400}] * 4)
    assert stage["status"] == "failed" and "fake failure for testing" in stage["reason"]
    assert [s.get("error") for s in fake.sent] == [400, 400]
    for a in (1, 2):  # a failed turn says no usage: counted apart, never as zero
        assert requests_of(attempt_dir(res, 1, a)) == [{**APART, "reads": []}]
    assert _stage_consumed(stage) == {"requests": 0, "unknown_requests": 2, "input": 0, "output": 0, "cache_read": 0,
                                      "cache_write": 0}


@needs_codex
def test_a_stream_cut_off_mid_request(small_conv: Any, tmp_path: Path, monkeypatch: Any) -> None:
    answer = answer_for(small_conv[2])
    fake, res, stage = _run(small_conv, tmp_path, monkeypatch, [{"tool": "talks"}, {"cut": True}, {"answer": answer}])
    assert stage["status"] == "complete", stage["reason"]
    one, two = attempt_dir(res, 1, 1), attempt_dir(res, 1, 2)
    assert "stream disconnected before completion" in stage["run"]["attempt_log"][0]["error"]
    # codex says nothing of a failed turn, not even the request that ended before the cut: the turn is counted apart
    assert requests_of(one) == [{**APART, "reads": ["talks"]}]
    assert requests_of(two) == [_turn(fake, [3], [])]
    assert _stage_consumed(stage) == _consumed(requests_of(one) + requests_of(two))


@needs_codex
def test_a_response_with_no_usage(small_conv: Any, tmp_path: Path, monkeypatch: Any) -> None:
    answer = answer_for(small_conv[2])
    fake, res, stage = _run(small_conv, tmp_path, monkeypatch, [{"tool": "talks"}, {"answer": answer, "usage": None}])
    assert stage["status"] == "complete", stage["reason"]
    assert fake.sent[1]["usage"] is None and fake.sent[1]["ended"]
    # codex's turn total holds only what was said: the response with no usage adds nothing to it, and
    # codex gives no sign of it (its requests one by one are unavailable), so asz cannot count it apart
    lines = requests_of(attempt_dir(res))
    assert lines == [_turn(fake, [1], ["talks"])]
    assert _stage_consumed(stage) == _consumed(lines)


def test_the_strict_output_schema() -> None:
    from asz_core.judge.kit import Kit
    from asz_evaluators.codex import drop_added_nulls, strict_schema

    schema = Kit.load().schema("targets")
    strict = strict_schema(schema)

    def walk(s: Any) -> None:
        if isinstance(s, dict):
            if s.get("type") == "object" or "properties" in s:
                assert s["additionalProperties"] is False and s["required"] == list(s["properties"])
            for v in s.values():
                walk(v)
        elif isinstance(s, list):
            for v in s:
                walk(v)
    walk(strict)
    assert "$schema" not in strict
    crit = strict["properties"]["targets"]["items"]["properties"]["criteria"]["items"]["properties"]
    assert crit["text"]["type"] == ["string", "null"]
    kind = strict["properties"]["targets"]["items"]["properties"]["kind"]
    assert None in kind["enum"]
    ans = {"inputs": [], "goals": [], "notes": None,
           "targets": [{"target": "new:a", "statement": None, "kind": None, "criteria": [{"id": None, "text": "x", "dropped_by": None}],
                        "talks": None, "state": "open", "replaced_by": None}]}
    assert drop_added_nulls(ans, schema) == {
        "inputs": [], "goals": [], "notes": None,
        "targets": [{"target": "new:a", "criteria": [{"id": None, "text": "x", "dropped_by": None}], "state": "open",
                     "replaced_by": None}]}


def _sample(name: str) -> list[dict[str, Any]]:
    import os

    import pytest

    p = Path(os.environ.get("ASZ_SPEC") or Path(__file__).resolve().parents[3] / "shared" / "spec") / "evaluator-samples" / name
    if not p.is_file():
        pytest.skip(f"no captured stream at {p}")
    return [json.loads(x) for x in p.read_text().splitlines() if x.strip()]


def test_the_parser_over_captured_streams() -> None:
    from asz_evaluators.codex import CodexStream

    s = CodexStream()
    for ev in _sample("codex_run3.jsonl"):
        assert s.feed(ev) is None
    [line] = s.requests("m", stopped=False)
    assert (line.input, line.cache_read, line.cache_write, line.output, line.said, line.reads) == (
        5022 - 500, 500, 0, 56, True, ("get_turn",))
    assert json.loads(s.message) == {"verdict": "pass", "score": 7}
    f = CodexStream()
    for ev in _sample("codex_fail.jsonl"):
        f.feed(ev)
    assert "fake failure for testing" in f.failed and [(x.said, x.input) for x in f.requests("m", False)] == [(False, None)]
    # a WebSocket fallback's error events are not failures
    w = CodexStream()
    for ev in _sample("codex_run1.jsonl"):
        w.feed(ev)
    assert w.failed is None and len(w.errors) == 5 and w.requests("m", False)[0].said


def test_another_tool_stops_the_call() -> None:
    from asz_evaluators.codex import CodexStream, toml_value

    s = CodexStream()
    s.feed({"type": "turn.started"})
    why = s.feed({"type": "item.started", "item": {"id": "item_1", "type": "command_execution", "command": "cat /etc/passwd"}})
    assert why == "codex used a tool other than asz's: command_execution"
    why = s.feed({"type": "item.started", "item": {"type": "mcp_tool_call", "server": "fs", "tool": "read"}})
    assert why == "codex used a tool other than asz's: fs/read"
    assert [x.said for x in s.requests("m", stopped=True)] == [False]  # the turn never said its usage
    assert toml_value({"A": "x\"y", "b": [1, True]}) == '{"A" = "x\\"y", "b" = [1, true]}'


@needs_codex
def test_a_navigation_server_that_does_not_start_fails_the_call(small_conv: Any, tmp_path: Path, monkeypatch: Any) -> None:
    from asz_evaluators import cli_common

    monkeypatch.setattr(cli_common, "mcp_env", lambda call: {"ASZ_HOME": str(tmp_path / "no-store")})
    fake, res, stage = _run(small_conv, tmp_path, monkeypatch, [{"answer": answer_for(small_conv[2])}] * 2)
    assert stage["status"] == "failed" and fake.sent == []  # codex never asked the model: asz's server is required
    assert "required MCP servers failed to initialize: asz" in stage["reason"]
    assert requests_of(attempt_dir(res)) == []  # no turn started: no request
