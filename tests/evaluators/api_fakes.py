"""Local fake model APIs for the API evaluators' tests: an HTTP server on 127.0.0.1 in a thread
that answers each POST with the next entry of a script, as Anthropic's Messages API, OpenAI's
Chat Completions or Bedrock's Converse would, and keeps every request it was sent.

Each provider is a :class:`Dialect`: how it says a tool turn, a text turn and an error, and what
asz must record of the usage it sent (so every test checks the consumption exactly against what
the server said)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Answer = tuple[str, int, Any, dict[str, str]]
"""("json", status, body, headers), or ("cut", 200, body, {}): the body cut off halfway."""


class FakeAPI:
    """A scripted HTTP server. ``seen`` holds (path, JSON body) of every request, in order."""

    def __init__(self, script: list[Answer]) -> None:
        self.script = list(script)
        self.seen: list[tuple[str, Any]] = []
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                with fake.lock:
                    fake.seen.append((self.path, body))
                    nxt = fake.script.pop(0) if fake.script else ("json", 500, {"error": {"message": "script ended"}}, {})
                kind, status, payload, headers = nxt
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                if kind == "cut":
                    self.send_header("Connection", "close")
                self.end_headers()
                if kind == "cut":
                    self.wfile.write(data[: len(data) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeAPI:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


# --- dialects -------------------------------------------------------------------------------------

class Dialect:
    name: str
    model = "fake-model-1"

    def usage(self, k: int) -> tuple[dict[str, Any], dict[str, int | None]]:
        """The usage the server says for request ``k`` and the four types asz must record."""
        raise NotImplementedError

    def tools(self, uses: list[tuple[str, dict[str, Any]]], k: int, *, usage: bool = True, text: str = "") -> Answer:
        raise NotImplementedError

    def text(self, text: str, k: int) -> Answer:
        raise NotImplementedError

    def error(self, status: int, message: str) -> Answer:
        raise NotImplementedError

    def results(self, body: Any) -> list[str]:
        """The tool results' texts a request carried (the last message's)."""
        raise NotImplementedError

    def user_texts(self, body: Any) -> list[str]:
        raise NotImplementedError

    def all_results(self, body: Any) -> list[str]:
        """Every tool result's text the request carried, in order."""
        raise NotImplementedError

    def tool_names(self, body: Any) -> list[str]:
        raise NotImplementedError

    def setup(self, url: str) -> dict[str, Any]:
        """The evaluator's options (asz.yaml's evaluators: section) pointing it at the fake."""
        raise NotImplementedError


class AnthropicDialect(Dialect):
    name = "anthropic"

    def usage(self, k: int) -> tuple[dict[str, Any], dict[str, int | None]]:
        u = {"input_tokens": 1000 + k, "output_tokens": 50 + k, "cache_read_input_tokens": 200 * k,
             "cache_creation_input_tokens": 30 if k == 1 else 0,
             "cache_creation": {"ephemeral_5m_input_tokens": 30 if k == 1 else 0, "ephemeral_1h_input_tokens": 0}}
        return u, {"input": 1000 + k, "output": 50 + k, "cache_read": 200 * k, "cache_write": 30 if k == 1 else 0}

    def _msg(self, content: list[dict[str, Any]], k: int, stop: str, usage: bool) -> Answer:
        body: dict[str, Any] = {"id": f"msg_{k}", "type": "message", "role": "assistant", "model": self.model,
                                "content": content, "stop_reason": stop, "stop_sequence": None}
        if usage:
            body["usage"] = self.usage(k)[0]
        return ("json", 200, body, {})

    def tools(self, uses: list[tuple[str, dict[str, Any]]], k: int, *, usage: bool = True, text: str = "") -> Answer:
        content = ([{"type": "text", "text": text}] if text else []) + [
            {"type": "tool_use", "id": f"toolu_{k}_{i}", "name": n, "input": a} for i, (n, a) in enumerate(uses)]
        return self._msg(content, k, "tool_use", usage)

    def text(self, text: str, k: int) -> Answer:
        return self._msg([{"type": "text", "text": text}], k, "end_turn", True)

    def error(self, status: int, message: str) -> Answer:
        kind = "overloaded_error" if status >= 500 else "invalid_request_error"
        return ("json", status, {"type": "error", "error": {"type": kind, "message": message}}, {})

    def results(self, body: Any) -> list[str]:
        last = body["messages"][-1]
        return [b["content"] for b in last["content"] if b.get("type") == "tool_result"]

    def user_texts(self, body: Any) -> list[str]:
        last = body["messages"][-1]
        return [b["text"] for b in last["content"] if b.get("type") == "text"]

    def all_results(self, body: Any) -> list[str]:
        return [b["content"] for m in body["messages"] if m["role"] == "user" and isinstance(m["content"], list)
                for b in m["content"] if b.get("type") == "tool_result"]

    def tool_names(self, body: Any) -> list[str]:
        return [t["name"] for t in body["tools"]]

    def setup(self, url: str) -> dict[str, Any]:
        return {"base_url": url}


class OpenAIDialect(Dialect):
    name = "openai"

    def usage(self, k: int) -> tuple[dict[str, Any], dict[str, int | None]]:
        cached, write = 200 * k, (30 if k == 1 else None)
        prompt = 1000 + k + cached + (write or 0)
        details: dict[str, Any] = {"cached_tokens": cached, "audio_tokens": 0}
        if write is not None:
            details["cache_write_tokens"] = write
        u = {"prompt_tokens": prompt, "completion_tokens": 50 + k, "total_tokens": prompt + 50 + k,
             "prompt_tokens_details": details, "completion_tokens_details": {"reasoning_tokens": 10}}
        return u, {"input": 1000 + k, "output": 50 + k, "cache_read": cached, "cache_write": write or 0}

    def _msg(self, message: dict[str, Any], k: int, finish: str, usage: bool) -> Answer:
        body: dict[str, Any] = {"id": f"chatcmpl-{k}", "object": "chat.completion", "created": 1764500000,
                                "model": self.model,
                                "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}]}
        if usage:
            body["usage"] = self.usage(k)[0]
        return ("json", 200, body, {})

    def tools(self, uses: list[tuple[str, dict[str, Any]]], k: int, *, usage: bool = True, text: str = "") -> Answer:
        calls = [{"id": f"call_{k}_{i}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
                 for i, (n, a) in enumerate(uses)]
        return self._msg({"role": "assistant", "content": text or None, "tool_calls": calls}, k, "tool_calls", usage)

    def text(self, text: str, k: int) -> Answer:
        return self._msg({"role": "assistant", "content": text}, k, "stop", True)

    def error(self, status: int, message: str) -> Answer:
        return ("json", status, {"error": {"message": message, "type": "invalid_request_error", "code": None}}, {})

    def _tail(self, body: Any) -> list[dict[str, Any]]:
        out = []
        for m in reversed(body["messages"]):
            if m["role"] == "assistant":
                break
            out.append(m)
        return list(reversed(out))

    def results(self, body: Any) -> list[str]:
        return [m["content"] for m in self._tail(body) if m["role"] == "tool"]

    def user_texts(self, body: Any) -> list[str]:
        return [m["content"] for m in self._tail(body) if m["role"] == "user"]

    def all_results(self, body: Any) -> list[str]:
        return [m["content"] for m in body["messages"] if m["role"] == "tool"]

    def tool_names(self, body: Any) -> list[str]:
        return [t["function"]["name"] for t in body["tools"]]

    def setup(self, url: str) -> dict[str, Any]:
        return {"base_url": url + "/v1"}


class BedrockDialect(Dialect):
    name = "bedrock"
    model = "us.deepseek.r1-v1:0"

    def usage(self, k: int) -> tuple[dict[str, Any], dict[str, int | None]]:
        if k == 2:  # no cache counts said, and the total shows there were none
            u = {"inputTokens": 1002, "outputTokens": 52, "totalTokens": 1054}
            return u, {"input": 1002, "output": 52, "cache_read": 0, "cache_write": 0}
        read, write = 200 * k, 30 if k == 1 else 0
        u = {"inputTokens": 1000 + k, "outputTokens": 50 + k, "cacheReadInputTokens": read, "cacheWriteInputTokens": write,
             "totalTokens": 1000 + k + 50 + k + read + write}
        return u, {"input": 1000 + k, "output": 50 + k, "cache_read": read, "cache_write": write}

    def _msg(self, content: list[dict[str, Any]], k: int, stop: str, usage: bool) -> Answer:
        body: dict[str, Any] = {"output": {"message": {"role": "assistant", "content": content}}, "stopReason": stop,
                                "metrics": {"latencyMs": 12}}
        if usage:
            body["usage"] = self.usage(k)[0]
        return ("json", 200, body, {})

    def tools(self, uses: list[tuple[str, dict[str, Any]]], k: int, *, usage: bool = True, text: str = "") -> Answer:
        content = ([{"text": text}] if text else []) + [
            {"toolUse": {"toolUseId": f"tooluse_{k}_{i}", "name": n, "input": a}} for i, (n, a) in enumerate(uses)]
        return self._msg(content, k, "tool_use", usage)

    def text(self, text: str, k: int) -> Answer:
        return self._msg([{"text": text}], k, "end_turn", True)

    def error(self, status: int, message: str) -> Answer:
        code = "ServiceUnavailableException" if status >= 500 else "ValidationException"
        return ("json", status, {"message": message}, {"x-amzn-ErrorType": f"{code}:http://internal.amazon.com/coral/"})

    def results(self, body: Any) -> list[str]:
        last = body["messages"][-1]
        return [c["text"] for b in last["content"] if "toolResult" in b for c in b["toolResult"]["content"]]

    def user_texts(self, body: Any) -> list[str]:
        last = body["messages"][-1]
        return [b["text"] for b in last["content"] if "text" in b]

    def all_results(self, body: Any) -> list[str]:
        return [c["text"] for m in body["messages"] if m["role"] == "user" for b in m["content"] if "toolResult" in b
                for c in b["toolResult"]["content"]]

    def tool_names(self, body: Any) -> list[str]:
        return [t["toolSpec"]["name"] for t in body["toolConfig"]["tools"]]

    def setup(self, url: str) -> dict[str, Any]:
        return {"endpoint_url": url, "region": "us-east-1"}


DIALECTS: dict[str, Callable[[], Dialect]] = {"anthropic": AnthropicDialect, "openai": OpenAIDialect,
                                              "bedrock": BedrockDialect}
