"""A loopback fake of the Anthropic Messages API that scripts a tool-using agent.

Run as a thread (``FakeAnthropic(script).start()``) and point ``ANTHROPIC_BASE_URL`` at its
``url``. Each request with tools gets the reply the script gives for the number of tool results
the request already carries: ``script[n]`` is a tool_use block ``{"name", "input"}`` or a final
text. Requests without tools (auxiliary calls such as a title) get a short text. Streaming (SSE)
and plain JSON answers are both spoken, and ``count_tokens`` answers a fixed count.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeAnthropic:
    def __init__(self, script: list[dict[str, Any] | str], model: str = "claude-sonnet-4-5-20250929") -> None:
        self.script, self.model = script, model
        self.requests: list[dict[str, Any]] = []
        self._n = 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:  # quiet
                pass

            def _send(self, code: int, body: bytes, ctype: str = "application/json") -> None:
                self.send_response(code)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_HEAD(self) -> None:  # noqa: N802
                self._send(200, b"")

            def do_GET(self) -> None:  # noqa: N802
                self._send(200, b"{}")

            def do_POST(self) -> None:  # noqa: N802
                n = int(self.headers.get("content-length") or 0)
                try:
                    req = json.loads(self.rfile.read(n) or b"{}")
                except ValueError:
                    req = {}
                path = self.path.split("?")[0]
                if path.endswith("/count_tokens"):
                    self._send(200, b'{"input_tokens": 10}')
                    return
                if not path.endswith("/v1/messages"):
                    self._send(200, b"{}")
                    return
                fake.requests.append(req)
                msg = fake.answer(req)
                if req.get("stream"):
                    body = b"".join(_sse(e) for e in _events(msg))
                    self._send(200, body, "text/event-stream")
                else:
                    self._send(200, json.dumps(msg).encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> FakeAnthropic:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def answer(self, req: dict[str, Any]) -> dict[str, Any]:
        self._n += 1
        mid = f"msg_fake{self._n:04d}"
        base = {"id": mid, "type": "message", "role": "assistant", "model": req.get("model") or self.model,
                "stop_sequence": None, "usage": {"input_tokens": 100, "output_tokens": 10,
                                                 "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}
        if not req.get("tools"):
            return {**base, "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn"}
        done = sum(1 for m in req.get("messages") or () if isinstance(m.get("content"), list)
                   for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result")
        item = self.script[done] if done < len(self.script) else "done"
        if isinstance(item, str):
            return {**base, "content": [{"type": "text", "text": item}], "stop_reason": "end_turn"}
        block = {"type": "tool_use", "id": f"toolu_fake{done + 1:02d}", "name": item["name"], "input": item["input"]}
        return {**base, "content": [block], "stop_reason": "tool_use"}


def _sse(event: dict[str, Any]) -> bytes:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


def _events(msg: dict[str, Any]) -> list[dict[str, Any]]:
    start = {**msg, "content": [], "stop_reason": None, "usage": {**msg["usage"], "output_tokens": 1}}
    out: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for i, b in enumerate(msg["content"]):
        if b["type"] == "text":
            out.append({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}})
            out.append({"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": b["text"]}})
        else:
            out.append({"type": "content_block_start", "index": i,
                        "content_block": {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}})
            out.append({"type": "content_block_delta", "index": i,
                        "delta": {"type": "input_json_delta", "partial_json": json.dumps(b["input"])}})
        out.append({"type": "content_block_stop", "index": i})
    out.append({"type": "message_delta", "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": msg["usage"]["output_tokens"]}})
    out.append({"type": "message_stop"})
    return out
