"""``anthropic``: the Anthropic Messages API with tools (docs/evaluators/anthropic.md).

``--evaluator anthropic:MODEL``. The SDK (``pip install 'asz-evaluators[anthropic]'``) is imported
here only, when a call runs. Credentials and the endpoint are the SDK's own: ``ANTHROPIC_API_KEY``
and ``ANTHROPIC_BASE_URL``, or ``base_url`` in asz.yaml's ``evaluators: {anthropic: ...}``.

Usage as Anthropic says it: ``input_tokens`` excludes the cache, ``cache_read_input_tokens`` and
``cache_creation_input_tokens`` are the cache's own: each is taken as it is, with no conversion.
"""

from __future__ import annotations

from typing import Any, ClassVar

from asz_core.judge.judgment import EvaluatorCall, Request

from .api_loop import ApiEvaluator, NotSent, Reply, RequestFailed, ToolUse, Turn, count, sdk_client

MAX_TOKENS = 16000
"""Output tokens one response may use (``max_tokens``)."""


class AnthropicEvaluator(ApiEvaluator):
    """Anthropic Messages API, the navigation and ``submit`` as tools."""

    name: ClassVar[str] = "anthropic"
    extra: ClassVar[str] = "anthropic"
    key_env: ClassVar[tuple[str, ...]] = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
    base_url_env: ClassVar[str | None] = "ANTHROPIC_BASE_URL"
    default_order: ClassVar[int | None] = 20
    default_model: ClassVar[str | None] = "claude-sonnet-4-5"

    @classmethod
    def modules(cls) -> tuple[str, ...]:
        return ("anthropic",)

    def client(self, call: EvaluatorCall, opts: dict[str, Any]) -> Any:
        return sdk_client("anthropic", self.extra, "Anthropic", "AnthropicError", "ANTHROPIC_API_KEY", opts)

    def send(self, client: Any, model: str, system: str, turns: list[Turn], tools: list[tuple[str, str, dict[str, Any]]],
             opts: dict[str, Any]) -> Reply:
        import anthropic

        messages: list[dict[str, Any]] = []
        for t in turns:
            if t.assistant is not None:
                messages.append({"role": "assistant", "content": t.assistant})
            content: list[dict[str, Any]] = [
                {"type": "tool_result", "tool_use_id": r.use.id, "content": r.text, **({"is_error": True} if r.error else {})}
                for r in t.results]
            if t.user_text:
                content.append({"type": "text", "text": t.user_text})
            if content:
                if messages and messages[-1]["role"] == "user":
                    messages[-1]["content"].extend(content)
                else:
                    messages.append({"role": "user", "content": content})
        kw: dict[str, Any] = {}
        if opts.get("cache", True):  # each request sends the whole exchange again: cache what was sent before
            kw["cache_control"] = {"type": "ephemeral"}
        try:
            resp = client.messages.create(
                model=model, max_tokens=int(opts.get("max_tokens") or MAX_TOKENS), system=system, messages=messages,
                tools=[{"name": n, "description": d, "input_schema": s} for n, d, s in tools], **kw)
        except (TypeError, ValueError) as exc:  # the SDK refused to build the request (no credentials): never sent
            raise NotSent(f"{exc} (the request was not sent)") from None
        except anthropic.APIStatusError as exc:
            retry = exc.status_code in (408, 409, 429) or exc.status_code >= 500
            raise RequestFailed(f"API error {exc.status_code}: {_message(exc)}", retry=retry) from None
        except anthropic.APIConnectionError as exc:
            raise RequestFailed(f"the answer was lost on the way ({type(exc).__name__}: {exc})", retry=True) from None
        except anthropic.APIResponseValidationError as exc:
            raise RequestFailed(f"the answer could not be read ({exc})", retry=False) from None
        data = resp.model_dump(mode="json", exclude_unset=True) if hasattr(resp, "model_dump") else dict(resp)
        content = data.get("content") if isinstance(data.get("content"), list) else []
        echo: list[dict[str, Any]] = []
        uses: list[ToolUse] = []
        texts: list[str] = []
        for b in content:
            kind = b.get("type") if isinstance(b, dict) else None
            if kind == "text":
                if b.get("text"):  # the API refuses an empty text block sent back
                    echo.append({"type": "text", "text": b["text"]})
                texts.append(b.get("text") or "")
            elif kind == "tool_use":
                echo.append({"type": "tool_use", "id": b.get("id"), "name": b.get("name"), "input": b.get("input")})
                uses.append(ToolUse(str(b.get("id")), str(b.get("name")), b.get("input")))
            elif kind == "thinking":
                echo.append({"type": "thinking", "thinking": b.get("thinking") or "", "signature": b.get("signature") or ""})
            elif kind == "redacted_thinking":
                echo.append({"type": "redacted_thinking", "data": b.get("data") or ""})
        said = data.get("model") if isinstance(data.get("model"), str) else None
        usage = data.get("usage")
        if isinstance(usage, dict) and count(usage.get("input_tokens")) is not None:
            req = Request(input=count(usage.get("input_tokens")), output=count(usage.get("output_tokens")),
                          cache_read=count(usage.get("cache_read_input_tokens")),
                          cache_write=count(usage.get("cache_creation_input_tokens")), model=said or model)
        else:
            req = Request(model=said or model, said=False)
        reported = {"id": data.get("id"), "model": said, "stop_reason": data.get("stop_reason"), "usage": usage}
        if not echo:  # the API refuses an empty assistant message
            echo = [{"type": "text", "text": "(no answer)"}]
        return Reply(assistant=echo, uses=uses, text="".join(texts), request=req, reported=reported)


def _message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and err.get("message"):
            return f"{err.get('type', 'error')}: {err['message']}"
    return str(getattr(exc, "message", exc))
