"""Helpers of the window, navigation and MCP tests: a small Claude Code 2.1 session written in two
rounds whose window end cuts a sub-agent mid-way, and corpus conversation lookups."""

from __future__ import annotations

import json
import uuid as _uuid
from pathlib import Path
from typing import Any

SID = "bbbbbbbb-1111-4222-8333-555555555555"
AGENT = "abc123"


def uid(name: str) -> str:
    """A record's uuid from a short name (uuid-shaped, as Claude Code writes them)."""
    return str(_uuid.uuid5(_uuid.NAMESPACE_URL, name))


def line(typ: str, uuid: str, parent: str | None, content: Any, *, ts: str, n: int | None = None, out: int = 7,
         stop: str | None = None, **extra: Any) -> dict[str, Any]:
    o: dict[str, Any] = {"parentUuid": uid(parent) if parent else None, "isSidechain": False, "userType": "external",
                         "cwd": "/w", "sessionId": SID, "version": "2.1.39", "type": typ, "uuid": uid(uuid), "timestamp": ts}
    if typ == "user":
        o["message"] = {"role": "user", "content": content}
    else:
        o["requestId"] = f"req_{n}"
        o["message"] = {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
                        "content": content, "stop_reason": stop,
                        "usage": {"input_tokens": n, "output_tokens": out, "cache_read_input_tokens": 100,
                                  "cache_creation_input_tokens": 0}}
    o.update(extra)
    return o


def tool_use(tid: str, name: str, inp: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": "tool_use", "id": tid, "name": name, "input": inp}]


def tool_result(uuid: str, parent: str, tid: str, text: str, *, ts: str, agent: str | None = None,
                error: bool = False, **extra: Any) -> dict[str, Any]:
    tur: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if agent:
        tur["agentId"] = agent
    return line("user", uuid, parent, [{"type": "tool_result", "tool_use_id": tid, "content": text, "is_error": error}],
                ts=ts, toolUseResult=tur, **extra)


def _t(m: int) -> str:
    return f"2026-01-01T10:{m:02d}:00.000Z"


SIDE = {"isSidechain": True, "agentId": AGENT}

MAIN_1 = [
    line("user", "u1", None, "start the helper agent", ts=_t(0)),
    line("assistant", "a1", "u1", tool_use("T1", "Task", {"description": "d", "prompt": "P", "subagent_type": "x",
                                                           "run_in_background": True}), ts=_t(1), n=1),
    tool_result("r1", "a1", "T1", "agent launched", ts=_t(2), agent=AGENT),
    line("assistant", "a2", "r1", [{"type": "text", "text": "launched it"}], ts=_t(3), n=2, stop="end_turn"),
    line("user", "u2", "a2", "second question", ts=_t(10)),
    line("assistant", "a3", "u2", tool_use("B1", "Bash", {"command": "ls"}), ts=_t(11), n=3),
]
AGENT_1 = [
    line("user", "g1", None, "P", ts=_t(4), **SIDE),
    line("assistant", "g2", "g1", tool_use("G1", "Bash", {"command": "pwd"}), ts=_t(5), n=10, out=7, **SIDE),
]
MAIN_2 = [
    tool_result("rb1", "a3", "B1", "file-list", ts=_t(12)),
    line("assistant", "a4", "rb1", [{"type": "text", "text": "answer two"}], ts=_t(13), n=4, stop="end_turn"),
]
AGENT_2 = [
    line("assistant", "g2b", "g2", [{"type": "text", "text": "LATE-AGENT-TEXT"}], ts=_t(14), n=10, out=50,
         stop="tool_use", **SIDE),
    tool_result("g3", "g2b", "G1", "/w LATE-RESULT", ts=_t(15), **SIDE),
    line("assistant", "g4", "g3", [{"type": "text", "text": "sub done"}], ts=_t(16), n=11, stop="end_turn", **SIDE),
]


def write(path: Path, lines: list[dict[str, Any]], mode: str = "w") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open(mode) as f:
        f.write("".join(json.dumps(o) + "\n" for o in lines))


def straddle(tmp: Path, store: Any) -> str:
    """Collect the two-round session: round 1 main + agent's first half, round 2 the rest.
    Landing: main r1, agent half 1, main r2, agent half 2."""
    from asz_core.collect import collect

    proj = tmp / "proj"
    main = proj / f"{SID}.jsonl"
    agent = proj / SID / "subagents" / f"agent-{AGENT}.jsonl"
    write(main, MAIN_1)
    write(agent, AGENT_1)
    r = collect([proj], store)
    assert not [str(p) for p in r.problems]
    write(main, MAIN_2, "a")
    write(agent, AGENT_2, "a")
    r = collect([proj], store)
    assert not [str(p) for p in r.problems]
    return SID
