"""Claude Code lines in the runtime's own shape, for hand-made fixtures of cases the corpus lacks.

The envelope and the message objects follow the corpus files (shared/spec/runtimes/claude-code.md):
2.1.39 lines as in ``marot__spotter/.../fa812bfe-….jsonl`` (``usage`` with ``cache_creation`` and
``inference_geo``; the final usage adds ``iterations`` and ``server_tool_use``), 2.0.x lines as in
``crypto590__…/b277cc60-….jsonl``. Only the fields asz reads vary between tests.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class Session:
    """Lines of one session file, each with the envelope Claude Code writes."""

    def __init__(self, sid: str, version: str = "2.1.39", cwd: str = "/home/USER/projects/app", hour: int = 15,
                 **extra: Any) -> None:
        self.sid, self.version, self.cwd, self.extra = sid, version, cwd, extra
        self.lines: list[dict[str, Any]] = []
        self._n, self._hour = 0, hour

    def _ts(self) -> str:
        """Times a second apart from ``hour``:00 on (a later session: a later hour)."""
        self._n += 1
        return f"2026-02-12T{self._hour:02d}:{self._n // 60:02d}:{self._n % 60:02d}.000Z"

    def _envelope(self, typ: str, uuid: str, parent: str | None, **extra: Any) -> dict[str, Any]:
        o: dict[str, Any] = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": self.cwd,
                             "sessionId": self.sid, "version": self.version, "gitBranch": "main", "type": typ}
        o.update(self.extra)
        o.update(extra)
        o.setdefault("uuid", uuid)
        o.setdefault("timestamp", self._ts())
        return o

    def user(self, uuid: str, parent: str | None, content: Any, **extra: Any) -> dict[str, Any]:
        o = self._envelope("user", uuid, parent, message={"role": "user", "content": content}, **extra)
        self.lines.append(o)
        return o

    def result(self, uuid: str, parent: str | None, tool_id: str, text: str, tur: Any = None, **extra: Any) -> dict[str, Any]:
        content = [{"tool_use_id": tool_id, "type": "tool_result", "content": [{"type": "text", "text": text}]}]
        if tur is not None:
            extra["toolUseResult"] = tur
        return self.user(uuid, parent, content, **extra)

    def assistant(self, uuid: str, parent: str | None, mid: str | None, req: str | None, block: dict[str, Any],
                  usage: dict[str, Any] | None, model: str = "claude-opus-4-6", **extra: Any) -> dict[str, Any]:
        msg: dict[str, Any] = {"model": model, "id": mid, "type": "message", "role": "assistant", "content": [block],
                               "stop_reason": None, "stop_sequence": None, "usage": usage}
        if mid is None:
            del msg["id"]
        if usage is None:
            del msg["usage"]
        o = self._envelope("assistant", uuid, parent, message=msg, **extra)
        if req is not None:
            o["requestId"] = req
        self.lines.append(o)
        return o

    def raw(self, o: dict[str, Any]) -> dict[str, Any]:
        self.lines.append(o)
        return o

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(dumps(o) + "\n" for o in self.lines))
        return path


def dumps(o: Any) -> str:
    """One line as Claude Code writes it: compact JSON (tools such as ccusage match on its bytes)."""
    return json.dumps(o, separators=(",", ":"), ensure_ascii=False)


def usage(inp: int, cache_write: int, cache_read: int, out: int, final: bool = False) -> dict[str, Any]:
    """A 2.1 usage object: the streaming placeholder shape, or (``final``) the final one."""
    u: dict[str, Any] = {"input_tokens": inp, "cache_creation_input_tokens": cache_write, "cache_read_input_tokens": cache_read,
                         "cache_creation": {"ephemeral_5m_input_tokens": cache_write, "ephemeral_1h_input_tokens": 0},
                         "output_tokens": out, "service_tier": "standard"}
    if final:
        u |= {"server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0}, "inference_geo": "", "iterations": []}
    else:
        u["inference_geo"] = "not_available"
    return u


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def tool(tid: str, name: str, inp: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": tid, "name": name, "input": inp, "caller": {"type": "direct"}}


def snapshot(message_id: str) -> dict[str, Any]:
    return {"type": "file-history-snapshot", "messageId": message_id,
            "snapshot": {"messageId": message_id, "trackedFileBackups": {}, "timestamp": "2026-02-12T15:36:09.516Z"},
            "isSnapshotUpdate": False}
