"""MyRuntime session logs to asz entries and events.

The made-up format this template reads: one JSON object a line, in files named ``*.mylog``::

    {"session": "s1", "id": "m1", "ts": "2025-01-01T10:00:00Z", "role": "user", "text": "fix the test"}
    {"session": "s1", "id": "m2", "ts": "...", "role": "assistant", "model": "some-model",
     "text": "Looking.", "usage": {"prompt": 1200, "cached": 1000, "completion": 40},
     "tool_calls": [{"id": "t1", "name": "write", "args": {"path": "a.py", "content": "..."}}]}
    {"session": "s1", "id": "m3", "ts": "...", "role": "tool", "call_id": "t1", "text": "ok", "error": false}

Replace the parts marked RUNTIME with what your runtime writes. Everything else (cursor,
problems, clipping, entry fields) is what every adapter does.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import orjson

from asz_core.interfaces import RuntimeAdapter
from asz_core.records import Cursor, Entry, Problem
from asz_core.regular import open_regular
from asz_core.textclip import clip_input, clip_text

SUFFIX = ".mylog"  # RUNTIME: how its files are named
EDIT_TOOLS = {"write": "path", "edit": "path"}  # RUNTIME: tools that change files, and the arg naming the file


class MyRuntimeAdapter(RuntimeAdapter):
    name: ClassVar[str] = "myruntime"  # unique across installed plugins; stored with each conversation

    def detect(self, path: Path) -> bool:
        """Cheap, and by content: never claim another runtime's files."""
        if path.is_dir():
            return any(self._looks_like_mine(p) for p in sorted(path.rglob("*" + SUFFIX))[:20])
        return self._looks_like_mine(path)

    def files(self, path: Path) -> list[Path]:
        """The files to read, in the order their records must land (deterministic)."""
        if path.is_file():
            return [path]
        return [p for p in sorted(path.rglob("*" + SUFFIX)) if self._looks_like_mine(p)]

    def file_requests(self, tool: str, request: Mapping[str, Any]) -> list[str]:
        key = EDIT_TOOLS.get(tool)
        value = request.get(key) if key else None
        return [value] if isinstance(value, str) and value else []

    def read(self, path: Path, cursor: Cursor) -> Iterator[Entry | Problem]:
        """Read from where the last collect stopped; advance the cursor past complete lines only."""
        fname = str(path)
        try:
            f = open_regular(path)  # never a FIFO or a device: plain open() could wait forever
        except OSError as exc:
            yield Problem(fname, 0, f"cannot read ({exc}); file skipped")
            return
        with f:
            f.seek(cursor.offset)
            offset, lineno = cursor.offset, cursor.line
            for raw in f:
                lineno += 1
                if not raw.endswith(b"\n"):
                    # A line still being written: leave it for the next collect.
                    yield Problem(fname, lineno, "truncated last line, left for the next collect")
                    break
                offset += len(raw)
                body = raw.strip()
                if body:
                    try:
                        obj = orjson.loads(body)
                    except orjson.JSONDecodeError as exc:
                        yield Problem(fname, lineno, f"not JSON ({exc}); line skipped")
                        obj = None
                    if obj is not None:
                        yield from self._entry(fname, lineno, body, obj)
                cursor.offset, cursor.line = offset, lineno

    # -- RUNTIME: one record to one entry with its events (docs/events.md) ---------------------
    def _entry(self, fname: str, lineno: int, body: bytes, obj: Any) -> Iterator[Entry | Problem]:
        if not isinstance(obj, dict) or not isinstance(obj.get("session"), str) or not isinstance(obj.get("id"), str):
            yield Problem(fname, lineno, "not a MyRuntime record (no session or id); line skipped")
            return
        try:
            events = tuple(self._events(obj))
        except (AttributeError, TypeError, ValueError) as exc:
            yield Problem(fname, lineno, f"record of unexpected shape ({exc}); kept, no events")
            events = ()
        yield Entry(
            key=obj["id"],                  # identity within the conversation
            session=obj["session"],         # decides the conversation
            stream="main",                  # or the key of a sub-agent's stream
            kind=str(obj.get("role")),
            file=fname,
            line=lineno,
            raw=body,                       # the record exactly as written
            events=events,
            ts=obj.get("ts") if isinstance(obj.get("ts"), str) else None,
        )

    def _events(self, obj: dict[str, Any]) -> Iterator[dict[str, Any]]:
        role = obj.get("role")
        text = obj.get("text") if isinstance(obj.get("text"), str) else ""
        if role == "user":
            yield {"e": "input", "source": "person", **clip_text(text)}
        elif role == "assistant":
            call = obj["id"]
            u = obj.get("usage")
            usage = None  # unknown, never 0, when the runtime records nothing
            if isinstance(u, dict):
                # Convert the runtime's dialect: asz's "input" excludes cached tokens.
                cached = u.get("cached")
                prompt = u.get("prompt")
                usage = {
                    "input": prompt - (cached or 0) if isinstance(prompt, int) else None,
                    "output": u.get("completion"),
                    "cache_read": cached,
                    "cache_write": None,
                }
            yield {"e": "call", "id": call, "model": obj.get("model"), "usage": usage, "final": True}
            if text.strip():
                yield {"e": "text", "call": call, **clip_text(text)}
            for tc in obj.get("tool_calls") or ():
                yield {"e": "tool_use", "call": call, "id": tc.get("id"), "name": tc.get("name"), "input": clip_input(tc.get("args") or {})}
        elif role == "tool":
            yield {"e": "tool_result", "id": obj.get("call_id"), "error": bool(obj.get("error")), **clip_text(text)}

    @staticmethod
    def _looks_like_mine(p: Path) -> bool:
        if not p.is_file() or p.suffix != SUFFIX:
            return False
        try:
            with open_regular(p) as f:
                first = f.readline(65536)
            obj = orjson.loads(first)
        except (OSError, orjson.JSONDecodeError):
            return False
        return isinstance(obj, dict) and "session" in obj and "role" in obj
