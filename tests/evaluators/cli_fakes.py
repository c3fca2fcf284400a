"""Loopback fake model servers for the CLI evaluators' tests: the Anthropic Messages API (for the
real claude CLI, through ANTHROPIC_BASE_URL) and the OpenAI Responses API (for the real codex
CLI, through a custom model provider).

Each serves a script, one step per model request the CLI makes for the call (requests are
numbered as they arrive):

* ``{"tool": NAME, "input": {...}}``: call one navigation tool (``asz judge mcp``'s NAME);
* ``{"answer": {...}}``: give the answer (claude: the StructuredOutput tool; codex: the final
  message's JSON text);
* ``{"text": "..."}``: a final text (no structured answer);
* ``{"error": 400}``: answer with that HTTP status;
* ``{"stall": True}``: start the response, then stop sending (the call is stopped by its timeout);
* ``{"cut": True}``: start the response, then close the connection (a stream cut off mid-request);
* any step may carry ``"usage": None`` (no usage said at all) and ``"delay": SECONDS`` (wait
  before answering).

Every request's usage is made up of distinct numbers and recorded in ``sent``, so a test checks
what asz recorded against exactly what the server said.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_MISSING = object()


class _Base:
    def __init__(self, script: list[dict[str, Any]]) -> None:
        self.script = script
        self.sent: list[dict[str, Any]] = []
        """Per main request: {"n", "id", "model", "usage" (as sent, or None), "ended"}."""
        self.other: list[dict[str, Any]] = []
        """Requests outside the script (auxiliary calls), with the usage sent."""
        self.bodies: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.stop_event = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:
                pass

            def send_body(self, code: int, body: bytes, ctype: str = "application/json") -> None:
                self.send_response(code)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_HEAD(self) -> None:  # noqa: N802
                self.send_body(200, b"")

            def do_GET(self) -> None:  # noqa: N802
                if self.path.split("?")[0].endswith("/models"):
                    self.send_body(200, b'{"data": [], "models": []}')
                    return
                self.send_body(404, b'{"error": {"message": "nope"}}')

            def do_POST(self) -> None:  # noqa: N802
                n = int(self.headers.get("content-length") or 0)
                try:
                    req = json.loads(self.rfile.read(n) or b"{}")
                except ValueError:
                    req = {}
                fake.post(self, self.path.split("?")[0], req)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> _Base:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.stop_event.set()
        self.server.shutdown()
        self.server.server_close()

    def step(self) -> tuple[int, dict[str, Any]]:
        with self.lock:
            n = len(self.sent) + 1
            item = self.script[n - 1] if n <= len(self.script) else {"text": "done"}
            self.sent.append({"n": n, "id": None, "model": None, "usage": None, "ended": False})
        if item.get("delay"):
            time.sleep(float(item["delay"]))
        return n, item

    def stall(self, h: BaseHTTPRequestHandler) -> None:
        try:
            h.wfile.flush()
        except OSError:
            return
        self.stop_event.wait(120)


# --- Anthropic -------------------------------------------------------------------------------------

def anthropic_usage(n: int) -> dict[str, Any]:
    return {"input_tokens": 100 * n + 1, "cache_creation_input_tokens": 10 * n + 2, "cache_read_input_tokens": 1000 * n + 3,
            "output_tokens": 5 * n + 4, "cache_creation": {"ephemeral_5m_input_tokens": 10 * n + 2, "ephemeral_1h_input_tokens": 0}}


def _sse(event: dict[str, Any]) -> bytes:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


class FakeAnthropic(_Base):
    """The Messages API as claude 2.1.332 speaks it (streaming SSE, count_tokens)."""

    def post(self, h: Any, path: str, req: dict[str, Any]) -> None:
        if path.endswith("/count_tokens"):
            h.send_body(200, b'{"input_tokens": 10}')
            return
        if not path.endswith("/v1/messages"):
            h.send_body(200, b"{}")
            return
        self.bodies.append(req)
        model = req.get("model") or "claude-sonnet-4-5"
        tools = [t.get("name") for t in req.get("tools") or () if isinstance(t, dict)]
        if not any(str(t).startswith("mcp__asz__") or t == "StructuredOutput" for t in tools):
            u = {"input_tokens": 7, "output_tokens": 3, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
            self.other.append({"model": model, "usage": u})
            msg = {"id": f"msg_aux{len(self.other):04d}", "type": "message", "role": "assistant", "model": model,
                   "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn", "stop_sequence": None, "usage": u}
            self._reply(h, req, msg)
            return
        n, item = self.step()
        rec = self.sent[n - 1]
        if "error" in item:
            rec["error"] = item["error"]
            h.send_body(int(item["error"]), json.dumps({"type": "error", "error": {
                "type": "invalid_request_error", "message": "fake failure for testing"}}).encode())
            return
        mid = f"msg_fake{n:04d}"
        usage = item.get("usage", _MISSING)
        usage = anthropic_usage(n) if usage is _MISSING else usage
        rec.update(id=mid, model=model, usage=usage)
        if "tool" in item:
            content = [{"type": "tool_use", "id": f"toolu_{n:04d}", "name": f"mcp__asz__{item['tool']}",
                        "input": item.get("input") or {}}]
            stop = "tool_use"
        elif "answer" in item:
            content = [{"type": "tool_use", "id": f"toolu_so{n:04d}", "name": "StructuredOutput", "input": item["answer"]}]
            stop = "tool_use"
        else:
            content = [{"type": "text", "text": item.get("text", "done")}]
            stop = "end_turn"
        msg: dict[str, Any] = {"id": mid, "type": "message", "role": "assistant", "model": model, "content": content,
                               "stop_reason": stop, "stop_sequence": None}
        if usage is not None:
            msg["usage"] = usage
        if item.get("stall"):
            start = {**msg, "content": [], "stop_reason": None}
            if usage is not None:
                start["usage"] = {**usage, "output_tokens": 1}
            h.send_response(200)
            h.send_header("content-type", "text/event-stream")
            h.end_headers()
            h.wfile.write(_sse({"type": "message_start", "message": start}))
            self.stall(h)
            return
        if item.get("cut"):
            start = {**msg, "content": [], "stop_reason": None}
            if usage is not None:
                start["usage"] = {**usage, "output_tokens": 1}
            h.send_response(200)
            h.send_header("content-type", "text/event-stream")
            h.send_header("connection", "close")
            h.end_headers()
            h.wfile.write(_sse({"type": "message_start", "message": start}))
            h.wfile.flush()
            h.close_connection = True
            return
        self._reply(h, req, msg)
        rec["ended"] = True

    def _reply(self, h: Any, req: dict[str, Any], msg: dict[str, Any]) -> None:
        if not req.get("stream"):
            h.send_body(200, json.dumps(msg).encode())
            return
        usage = msg.get("usage")
        start = {**msg, "content": [], "stop_reason": None}
        if usage is not None:
            start["usage"] = {**usage, "output_tokens": 1}
        else:
            start.pop("usage", None)
        events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
        for i, b in enumerate(msg["content"]):
            if b["type"] == "text":
                events += [{"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}},
                           {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": b["text"]}}]
            else:
                events += [{"type": "content_block_start", "index": i,
                            "content_block": {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}},
                           {"type": "content_block_delta", "index": i,
                            "delta": {"type": "input_json_delta", "partial_json": json.dumps(b["input"])}}]
            events.append({"type": "content_block_stop", "index": i})
        delta: dict[str, Any] = {"type": "message_delta", "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None}}
        if usage is not None:
            delta["usage"] = {"output_tokens": usage["output_tokens"]}
        events += [delta, {"type": "message_stop"}]
        h.send_body(200, b"".join(_sse(e) for e in events), "text/event-stream")


# --- OpenAI Responses --------------------------------------------------------------------------------

def openai_usage(n: int) -> dict[str, Any]:
    return {"input_tokens": 1000 * n + 11, "input_tokens_details": {"cached_tokens": 100 * n + 1},
            "output_tokens": 10 * n + 3, "output_tokens_details": {"reasoning_tokens": n},
            "total_tokens": 1000 * n + 11 + 10 * n + 3}


class FakeOpenAI(_Base):
    """The Responses API (SSE) as codex 0.171.0 speaks it through a custom model provider."""

    def post(self, h: Any, path: str, req: dict[str, Any]) -> None:
        if not path.endswith("/responses"):
            h.send_body(404, b'{"error": {"message": "nope"}}')
            return
        self.bodies.append(req)
        model = req.get("model") or "gpt-fake"
        tools = json.dumps(req.get("tools") or [])
        if "mcp__asz" not in tools and "talks" not in tools:
            u = {"input_tokens": 7, "output_tokens": 3, "total_tokens": 10}
            self.other.append({"model": model, "usage": u, "tools": tools[:200]})
        n, item = self.step()
        rec = self.sent[n - 1]
        if "error" in item:
            rec["error"] = item["error"]
            h.send_body(int(item["error"]), json.dumps({"error": {"message": "fake failure for testing",
                                                                 "type": "invalid_request_error", "param": None,
                                                                 "code": "fake_fail"}}).encode())
            return
        rid = f"resp_fake{n:04d}"
        usage = item.get("usage", _MISSING)
        usage = openai_usage(n) if usage is _MISSING else usage
        rec.update(id=rid, model=model, usage=usage)
        if "tool" in item:
            out = {"type": "function_call", "id": f"fc_{n:04d}", "call_id": f"call_{n:04d}",
                   "name": f"mcp__asz__{item['tool']}", "arguments": json.dumps(item.get("input") or {}), "status": "completed"}
            if item.get("namespace", True):
                out.update(name=item["tool"], namespace="mcp__asz")
        else:
            text = json.dumps(item["answer"]) if "answer" in item else item.get("text", "done")
            out = {"type": "message", "id": f"msg_{n:04d}", "role": "assistant", "status": "completed",
                   "content": [{"type": "output_text", "text": text, "annotations": []}]}
        base = {"id": rid, "object": "response", "created_at": int(time.time()), "model": model, "status": "in_progress",
                "output": []}
        events = [{"type": "response.created", "response": base},
                  {"type": "response.output_item.added", "output_index": 0, "item": {**out, "status": "in_progress"}}]
        h.send_response(200)
        h.send_header("content-type", "text/event-stream")
        h.send_header("connection", "close")
        h.end_headers()
        for e in events:
            h.wfile.write(_sse(e))
        if item.get("stall"):
            self.stall(h)
            return
        if item.get("cut"):
            h.wfile.flush()
            h.close_connection = True
            return
        done: dict[str, Any] = {**base, "status": "completed", "output": [out]}
        if usage is not None:
            done["usage"] = usage
        for e in ({"type": "response.output_item.done", "output_index": 0, "item": out},
                  {"type": "response.completed", "response": done}):
            h.wfile.write(_sse(e))
        h.wfile.flush()
        h.close_connection = True
        rec["ended"] = True
