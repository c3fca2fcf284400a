"""The kiro-cli evaluator against a fake kiro-cli built from Kiro's documented behaviour
(cli_fake_kiro.py: kiro-cli cannot be installed here), which reads the agent file the backend
writes and calls the real `asz judge mcp` it names. Credits are checked exactly against what the
fake reported; tokens are never made up."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from .cli_helpers import (_clean_env, answer_for, attempt_dir, reads_of, requests_of, run_targets,  # noqa: F401
                          small_conv)

FAKE = Path(__file__).with_name("cli_fake_kiro.py")


def _run(small_conv: Any, tmp_path: Path, monkeypatch: Any, script: list[dict[str, Any]], options: dict[str, Any] | None = None,
         **kw: Any) -> tuple[list[dict[str, Any]], Any, dict[str, Any]]:
    store, cid, _ = small_conv
    exe = tmp_path / "kiro-cli"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    exe.chmod(0o755)
    (tmp_path / "kiro-script.json").write_text(json.dumps(script))
    monkeypatch.setenv("FAKE_KIRO_SCRIPT", str(tmp_path / "kiro-script.json"))
    monkeypatch.setenv("FAKE_KIRO_LOG", str(tmp_path / "kiro-log.jsonl"))
    res, stage = run_targets(store, cid, tmp_path, "kiro-cli:claude-sonnet-4.5",
                             {"command": str(exe), "timeout": 120, **(options or {})}, **kw)
    log = tmp_path / "kiro-log.jsonl"
    return ([json.loads(x) for x in log.read_text().splitlines()] if log.is_file() else []), res, stage


TURN = {"input": None, "output": None, "cache_read": None, "cache_write": None, "model": "claude-sonnet-4.5", "said": True}


def test_clean_call(small_conv: Any, tmp_path: Path, monkeypatch: Any) -> None:
    answer = answer_for(small_conv[2])
    log, res, stage = _run(small_conv, tmp_path, monkeypatch, [
        {"reads": [{"tool": "talks"}], "answer": answer, "credits": 1.37, "context": 12.5}])
    assert stage["status"] == "complete", stage["reason"]
    d = attempt_dir(res)
    [inv] = log
    # the agent file in the call's own directory holds only asz's server; the prompt is the stage's
    agent = inv["agent"]
    assert inv["cwd"] == str(d.resolve() / "cwd") and agent["tools"] == ["@asz"] and agent["includeMcpJson"] is False
    assert list(agent["mcpServers"]) == ["asz"] and agent["mcpServers"]["asz"]["args"][2:4] == ["judge", "mcp"]
    assert agent["prompt"] == f"file://{d.resolve() / 'kiro-prompt.md'}"
    assert (d / "kiro-prompt.md").read_text().startswith((d / "prompt.md").read_text().rstrip())
    assert "--agent" in inv["argv"] and "--no-interactive" in inv["argv"]
    assert {"talks", "step", "search"} <= set(inv["tools"])
    # one turn: tokens unknown (never zero), credits in their own unit
    lines = requests_of(d)
    assert lines == [{**TURN, "reads": ["talks"], "credits": "1.37"}]
    c = stage["run"]["consumed"]
    assert (c["requests"], c["unknown_requests"], c["input"], c["output"]) == (1, 0, 0, 0)
    assert c["credits"] == "1.37"  # in the stage's totals, in their own unit, never as tokens
    assert c["unknown"] == {"input": 1, "output": 1, "cache_read": 1, "cache_write": 1}
    usage = json.loads((d / "usage.json").read_text())
    assert usage["unit"] == "credits" and usage["credits"] == "1.37" and usage["turns"][0]["context_usage_percentage"] == 12.5
    assert usage["tokens"].startswith("unavailable")
    assert [(r["tool"], r["status"]) for r in reads_of(d)] == [("talks", "ok")]
    assert stage["run"]["attempt_log"][0]["read_bytes"] == reads_of(d)[0]["used"]
    # Kiro keeps the session: said, and there it is
    assert "keeps every chat session" in (d / "stderr.txt").read_text()
    assert any("keeps every chat session" in n for n in stage["evaluator"]["notes"])  # and in the stage file
    run = json.loads((res.path / "run.json").read_text())
    assert any("keeps every chat session" in n for n in run["evaluators"]["targets"]["notes"])
    assert (tmp_path / "home" / ".kiro" / "sessions" / "cli" / f"{inv['session']}.json").is_file()
    assert stage["targets"][0]["statement"] == "the outcome a"


def test_reading_past_the_budget_and_the_third_refusal(small_conv: Any, tmp_path: Path, monkeypatch: Any) -> None:
    answer = answer_for(small_conv[2])
    log, res, stage = _run(small_conv, tmp_path, monkeypatch, [
        {"reads": [{"tool": "talks"}] * 3 + [{"tool": "talks", "delay": 2}], "answer": answer, "credits": 2}],
        read_bytes=100)
    assert stage["status"] == "complete", stage["reason"]
    d = attempt_dir(res)
    assert [(r["tool"], r["status"]) for r in reads_of(d)] == [("talks", "refused")] * 3
    results = log[0]["results"]
    assert [r["status"] for r in results[:3]] == ["failed"] * 3 and '"refused":true' in results[0]["text"]
    assert results[3]["text"].startswith("tool call failed")  # the server had ended
    assert requests_of(d) == [{**TURN, "reads": ["talks"] * 4, "credits": "2"}]
    assert json.loads((d / "usage.json").read_text())["credits"] == "2"


def test_a_malformed_answer_is_tried_once_more(small_conv: Any, tmp_path: Path, monkeypatch: Any) -> None:
    answer = answer_for(small_conv[2])
    log, res, stage = _run(small_conv, tmp_path, monkeypatch, [{"text": "no json", "credits": 0.5},
                                                              {"answer": answer, "credits": 0.75}])
    assert stage["status"] == "complete", stage["reason"]
    one, two = attempt_dir(res, 1, 1), attempt_dir(res, 1, 2)
    assert [x["cwd"] for x in log] == [str(one.resolve() / "cwd"), str(two.resolve() / "cwd")]
    assert (one / "answer.txt").read_text() == "no json"
    assert [json.loads((x / "usage.json").read_text())["credits"] for x in (one, two)] == ["0.5", "0.75"]
    assert requests_of(one) == [{**TURN, "reads": [], "credits": "0.5"}]
    assert requests_of(two) == [{**TURN, "reads": [], "credits": "0.75"}]
    assert stage["run"]["consumed"]["requests"] == 2
    assert stage["run"]["consumed"]["credits"] == "1.25"  # the failed attempt's credits still count


def test_a_failure_and_a_call_that_reports_nothing(small_conv: Any, tmp_path: Path, monkeypatch: Any) -> None:
    log, res, stage = _run(small_conv, tmp_path, monkeypatch, [{"fail": "model error", "credits": 0.1},
                                                              {"text": "{}", "no_metadata": True}])
    assert stage["status"] == "failed"
    one, two = attempt_dir(res, 1, 1), attempt_dir(res, 1, 2)
    assert "kiro-cli failed (exit code 1): model error" in stage["run"]["attempt_log"][0]["error"]
    apart = {**TURN, "said": False, "reads": []}
    assert requests_of(one) == [apart] and requests_of(two) == [apart]  # nothing said: counted apart, never zero
    assert json.loads((two / "usage.json").read_text())["credits"] is None
    assert stage["run"]["consumed"]["unknown_requests"] == 2


def test_plain_text_output(small_conv: Any, tmp_path: Path, monkeypatch: Any) -> None:
    """An older kiro-cli with no stream-json: the answer is the text, the credits its last line."""
    answer = answer_for(small_conv[2])
    log, res, stage = _run(small_conv, tmp_path, monkeypatch, [{"answer": answer, "credits": 0.42}],
                           options={"output_format": ""})
    assert stage["status"] == "complete", stage["reason"]
    d = attempt_dir(res)
    assert "--output-format" not in log[0]["argv"]
    assert json.loads((d / "usage.json").read_text())["credits"] == "0.42"
    assert requests_of(d) == [{**TURN, "reads": [], "credits": "0.42"}]


def test_another_tool_stops_the_call() -> None:
    from asz_evaluators.kiro_cli import KiroStream

    s = KiroStream()
    assert s.feed(json.dumps({"type": "runStarted", "data": {"sessionId": "x"}})) is None
    why = s.feed(json.dumps({"type": "sessionUpdate", "data": {"update": {
        "sessionUpdate": "tool_call", "toolCallId": "t1", "title": "shell", "kind": "execute"}}}))
    assert why == "kiro-cli used a tool other than asz's: shell"
    assert [r.said for r in s.requests("m")] == [False] and s.credits() is None
