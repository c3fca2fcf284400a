"""Hand-made conversations for the edge cases the corpus lacks, each made from the bundled example
(examples/claude-code, 5e1f0c2a) by adding what the case needs: a sub-agent of a sub-agent, a
sub-agent run in the background that reports by a notification."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "claude-code"
MAIN = "5e1f0c2a-7b3d-4c8e-9a61-0d2f4b8c9e13.jsonl"


def _copy(dst: Path) -> Path:
    out = dst / "claude-code"
    shutil.copytree(EXAMPLE, out)
    return out


def nested_example(dst: Path) -> Path:
    """The bundled example, its sub-agent a3f9c21 given a sub-agent of its own (b7e0d14) that it
    starts with a Task call of its own: two levels deep, each with a starts relation. The
    grandchild runs a Grep (whose result finds nothing) and reports a float anyway; a1 then
    replies on that report."""
    out = _copy(dst)
    sub = next(out.rglob("subagents"))
    child = sub / "agent-a3f9c21.jsonl"
    lines = [json.loads(x) for x in child.read_text().splitlines()]
    base = {k: lines[0][k] for k in ("isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch", "slug")}
    last = lines[-1]

    def usage(inp: int, out_: int, read: int, write: int) -> dict[str, Any]:
        return {"input_tokens": inp, "output_tokens": out_, "cache_read_input_tokens": read,
                "cache_creation_input_tokens": write, "iterations": []}

    task = {**base, "parentUuid": last["uuid"], "type": "assistant", "uuid": "n-1", "timestamp": "2026-11-20T14:14:30.000Z",
            "agentId": "a3f9c21", "requestId": "req_nested_1",
            "message": {"model": "claude-haiku-4-5-20251001", "id": "msg_nested_1", "type": "message", "role": "assistant",
                        "content": [{"type": "tool_use", "id": "toolu_nested_1", "name": "Task",
                                     "input": {"description": "check csv", "prompt": "Look at export_csv.py", "subagent_type": "Explore"}}],
                        "stop_reason": "tool_use", "usage": usage(5, 40, 4000, 100)}}
    result = {**base, "parentUuid": "n-1", "type": "user", "uuid": "n-2", "timestamp": "2026-11-20T14:14:40.000Z",
              "agentId": "a3f9c21", "toolUseResult": {"agentId": "b7e0d14", "status": "completed", "content": []},
              "message": {"role": "user", "content": [{"tool_use_id": "toolu_nested_1", "type": "tool_result",
                                                       "content": "export_csv.py:22 formats a float"}]}}
    after = {**base, "parentUuid": "n-2", "type": "assistant", "uuid": "n-3", "timestamp": "2026-11-20T14:14:42.000Z",
             "agentId": "a3f9c21", "requestId": "req_nested_2",
             "message": {"model": "claude-haiku-4-5-20251001", "id": "msg_nested_2", "type": "message", "role": "assistant",
                         "content": [{"type": "text", "text": "The CSV export formats a float too: three places."}],
                         "stop_reason": "end_turn", "usage": usage(6, 25, 4200, 80)}}
    child.write_text("\n".join(json.dumps(x) for x in [*lines, task, result, after]) + "\n")
    grand = [
        {**base, "parentUuid": None, "type": "user", "uuid": "g-1", "timestamp": "2026-11-20T14:14:31.000Z", "agentId": "b7e0d14",
         "message": {"role": "user", "content": "Look at export_csv.py"}},
        {**base, "parentUuid": "g-1", "type": "assistant", "uuid": "g-2", "timestamp": "2026-11-20T14:14:33.000Z",
         "agentId": "b7e0d14", "requestId": "req_grand_1",
         "message": {"model": "claude-haiku-4-5-20251001", "id": "msg_grand_1", "type": "message", "role": "assistant",
                     "content": [{"type": "tool_use", "id": "toolu_grand_1", "name": "Grep",
                                  "input": {"pattern": "float", "path": "invoicer/export_csv.py"}}],
                     "stop_reason": "tool_use", "usage": usage(4, 20, 0, 2400)}},
        {**base, "parentUuid": "g-2", "type": "user", "uuid": "g-3", "timestamp": "2026-11-20T14:14:34.000Z", "agentId": "b7e0d14",
         "message": {"role": "user", "content": [{"tool_use_id": "toolu_grand_1", "type": "tool_result", "content": "No matches found"}]}},
        {**base, "parentUuid": "g-3", "type": "assistant", "uuid": "g-4", "timestamp": "2026-11-20T14:14:35.000Z",
         "agentId": "b7e0d14", "requestId": "req_grand_2",
         "message": {"model": "claude-haiku-4-5-20251001", "id": "msg_grand_2", "type": "message", "role": "assistant",
                     "content": [{"type": "text", "text": "export_csv.py:22 formats a float"}], "stop_reason": "end_turn",
                     "usage": usage(7, 30, 2400, 100)}},
    ]
    (sub / "agent-b7e0d14.jsonl").write_text("\n".join(json.dumps(x) for x in grand) + "\n")
    return out


def background_example(dst: Path) -> Path:
    """The bundled example with its sub-agent launched in the background: the Task result only
    acknowledges the launch (``isAsync``), and a ``<task-notification>`` naming the agent comes
    later, queued after the CSV Grep's result."""
    out = _copy(dst)
    main = next(out.rglob(MAIN))
    lines = [json.loads(x) for x in main.read_text().splitlines()]
    task_result = next(i for i, x in enumerate(lines) if isinstance(x.get("toolUseResult"), dict)
                       and x["toolUseResult"].get("agentId") == "a3f9c21")
    tr = lines[task_result]
    tr["toolUseResult"] = {"isAsync": True, "status": "async_launched", "agentId": "a3f9c21",
                           "description": "Find float money arithmetic"}
    tr["message"]["content"][0]["content"] = [{"type": "text", "text": "Async agent launched successfully.\nagentId: a3f9c21"}]
    grep_result = next(i for i, x in enumerate(lines) if x.get("type") == "user" and i > task_result
                       and "export_csv.py:22" in json.dumps(x.get("message", {})))
    note = {"type": "queue-operation", "operation": "enqueue", "timestamp": "2026-11-20T14:15:08.000Z",
            "sessionId": lines[0].get("sessionId"),
            "content": "<task-notification>\n<task-id>a3f9c21</task-id>\n<status>completed</status>\n"
                       "<summary>Agent \"Find float money arithmetic\" completed</summary>\n</task-notification>"}
    lines.insert(grep_result + 1, note)
    main.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return out


def interrupted_example(dst: Path, text: str = "[Request interrupted by user for tool use]") -> Path:
    """The bundled example with its foreground sub-agent's starting Task interrupted before the
    sub-agent answered: the Task's result is the runtime's interruption text, marked an error."""
    out = _copy(dst)
    main = next(out.rglob(MAIN))
    lines = [json.loads(x) for x in main.read_text().splitlines()]
    i = next(i for i, x in enumerate(lines) if isinstance(x.get("toolUseResult"), dict)
             and x["toolUseResult"].get("agentId") == "a3f9c21")
    block = lines[i]["message"]["content"][0]
    block["content"] = [{"type": "text", "text": text}]
    block["is_error"] = True
    main.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return out


def cut_off_example(dst: Path) -> Path:
    """The bundled example with an API error of its sub-agent a1 after its last reply (shaped as
    Claude Code writes one: a <synthetic> assistant line with isApiErrorMessage, as b277cc60's
    agent-8d7ee089 holds): the sub-agent was cut off after it last replied, its Task still marked returned."""
    out = _copy(dst)
    sub = next(out.rglob("agent-a3f9c21.jsonl"))
    lines = [json.loads(x) for x in sub.read_text().splitlines()]
    last = lines[-1]
    err = {**last, "parentUuid": last["uuid"], "uuid": "9d78246f-bcce-4777-9a0f-1540d1924545", "requestId": None,
           "isApiErrorMessage": True,
           "message": {"id": "3e56b140-aaac-4591-a0bd-af5308ca5607", "model": "<synthetic>", "role": "assistant",
                       "type": "message", "stop_reason": "stop_sequence", "stop_sequence": "",
                       "usage": {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0,
                                 "cache_read_input_tokens": 0},
                       "content": [{"type": "text", "text": "API Error: 500 {\"type\":\"error\"}"}]}}
    sub.write_text("\n".join(json.dumps(x) for x in [*lines, err]) + "\n")
    return out


def failed_sibling(dst: Path) -> Path:
    """The corpus conversation fe5e1c67 (five inline sub-agents; s10 launched a2, a3 and a1 at once
    by the Tasks s12, s13, s14) with (made) the second Task's result an error: a sibling launched
    with a2's task that failed, which the corpus lacks."""
    from tests.conftest import CLAUDE_CORPUS, need_corpus

    need_corpus(CLAUDE_CORPUS)  # a clone without ../shared skips the test, saying why
    src = next(CLAUDE_CORPUS.rglob("fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"))
    out = dst / "failed-sibling" / "sample-project"
    out.mkdir(parents=True)
    lines = [json.loads(x) for x in src.read_text().splitlines()]
    tasks = [b["id"] for x in lines if x.get("type") == "assistant" and isinstance(x["message"].get("content"), list)
             for b in x["message"]["content"] if b.get("type") == "tool_use" and b.get("name") == "Task"]
    for x in lines:
        content = (x.get("message") or {}).get("content")
        for b in content if isinstance(content, list) else ():
            if isinstance(b, dict) and b.get("type") == "tool_result" and b.get("tool_use_id") == tasks[1]:
                b["is_error"] = True
    (out / src.name).write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return out.parent
