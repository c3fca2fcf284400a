"""``openai``: the OpenAI Chat Completions API with tools (docs/evaluators/openai.md).

``--evaluator openai:MODEL``. The SDK (``pip install 'asz-evaluators[openai]'``) is imported here
only, when a call runs. Credentials and the endpoint are the SDK's own: ``OPENAI_API_KEY`` and
``OPENAI_BASE_URL``, or ``base_url`` in asz.yaml's ``evaluators: {openai: ...}``, so any server
that speaks Chat Completions can judge.

Why Chat Completions and not Responses: it is stateless (the Responses API stores each response on
OpenAI's side unless told not to, and a judge keeps nothing it does not need), every
OpenAI-compatible server speaks it, and its tool calls carry the whole exchange in the request,
which is what the shared loop sends. What it gives up: a reasoning model's reasoning is not
carried from one request to the next.

Usage as OpenAI says it: ``prompt_tokens`` includes the cached tokens
(``prompt_tokens_details.cached_tokens``) and any written to the cache
(``prompt_tokens_details.cache_write_tokens``); asz takes them out once, so its input is the rest.
"""

from __future__ import annotations

from typing import Any, ClassVar

import orjson

from asz_core.judge.judgment import EvaluatorCall, Request

from .api_loop import ApiEvaluator, NotSent, Reply, RequestFailed, ToolUse, Turn, count, sdk_client


def convert_usage(usage: Any, model: str | None) -> Request:
    """Chat Completions usage in asz's four types, converted once. With no usage: never said."""
    if not isinstance(usage, dict) or count(usage.get("prompt_tokens")) is None:
        return Request(model=model, said=False)
    prompt = count(usage.get("prompt_tokens"))
    details = usage.get("prompt_tokens_details")
    if isinstance(details, dict):
        read = count(details.get("cached_tokens"))
        # OpenAI says a cache write only where one is charged: when it says the prompt's details
        # without one, none of prompt_tokens was written to a cache.
        cw = details.get("cache_write_tokens")
        write = 0 if cw is None else count(cw)
        if read is None or write is None:  # the details said, but not the cached part: the split is unknown
            return Request(input=None, output=count(usage.get("completion_tokens")), cache_read=read, cache_write=write,
                           model=model)
        rest = prompt - read - write  # type: ignore[operator]
        return Request(input=rest if rest >= 0 else None, output=count(usage.get("completion_tokens")),
                       cache_read=read, cache_write=write, model=model)
    # No details: how much of prompt_tokens came from a cache was not said. The total stays as input;
    # the cache types are unknown.
    return Request(input=prompt, output=count(usage.get("completion_tokens")), cache_read=None, cache_write=None,
                   model=model)


class OpenAIEvaluator(ApiEvaluator):
    """OpenAI Chat Completions, the navigation and ``submit`` as function tools."""

    name: ClassVar[str] = "openai"
    extra: ClassVar[str] = "openai"
    key_env: ClassVar[tuple[str, ...]] = ("OPENAI_API_KEY",)
    base_url_env: ClassVar[str | None] = "OPENAI_BASE_URL"
    default_order: ClassVar[int | None] = 30
    default_model: ClassVar[str | None] = "gpt-5.5"

    @classmethod
    def modules(cls) -> tuple[str, ...]:
        return ("openai",)

    def client(self, call: EvaluatorCall, opts: dict[str, Any]) -> Any:
        return sdk_client("openai", self.extra, "OpenAI", "OpenAIError", "OPENAI_API_KEY", opts)

    def send(self, client: Any, model: str, system: str, turns: list[Turn], tools: list[tuple[str, str, dict[str, Any]]],
             opts: dict[str, Any]) -> Reply:
        import openai

        messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
        for t in turns:
            if t.assistant is not None:
                messages.append(t.assistant)
            for r in t.results:
                messages.append({"role": "tool", "tool_call_id": r.use.id, "content": r.text})
            if t.user_text:
                messages.append({"role": "user", "content": t.user_text})
        kw: dict[str, Any] = {}
        if opts.get("max_tokens"):
            kw["max_completion_tokens"] = int(opts["max_tokens"])
        try:
            resp = client.chat.completions.create(
                model=model, messages=messages,
                tools=[{"type": "function", "function": {"name": n, "description": d, "parameters": s}} for n, d, s in tools],
                **kw)
        except (TypeError, ValueError) as exc:  # the SDK refused to build the request (no credentials): never sent
            raise NotSent(f"{exc} (the request was not sent)") from None
        except openai.APIStatusError as exc:
            retry = exc.status_code in (408, 409, 429) or exc.status_code >= 500
            raise RequestFailed(f"API error {exc.status_code}: {_message(exc)}", retry=retry) from None
        except openai.APIConnectionError as exc:
            raise RequestFailed(f"the answer was lost on the way ({type(exc).__name__}: {exc})", retry=True) from None
        except openai.APIResponseValidationError as exc:
            raise RequestFailed(f"the answer could not be read ({exc})", retry=False) from None
        data = resp.model_dump(mode="json", exclude_unset=True) if hasattr(resp, "model_dump") else dict(resp)
        said = data.get("model") if isinstance(data.get("model"), str) else None
        choices = data.get("choices") if isinstance(data.get("choices"), list) else []
        msg = (choices[0] or {}).get("message") if choices and isinstance(choices[0], dict) else None
        msg = msg if isinstance(msg, dict) else {}
        uses: list[ToolUse] = []
        calls: list[dict[str, Any]] = []
        for tc in msg.get("tool_calls") or []:
            fn = tc.get("function") if isinstance(tc, dict) else None
            if not isinstance(fn, dict):
                continue
            text = fn.get("arguments") or "{}"
            try:
                args: Any = orjson.loads(text)
            except orjson.JSONDecodeError:
                args = _lenient(text)
            uses.append(ToolUse(str(tc.get("id")), str(fn.get("name")), args))
            calls.append({"id": tc.get("id"), "type": "function", "function": {"name": fn.get("name"), "arguments": text}})
        content = msg.get("content") if isinstance(msg.get("content"), str) else ""
        echo: dict[str, Any] = {"role": "assistant", "content": content or None}
        if calls:
            echo["tool_calls"] = calls
        if not calls and not content:
            echo["content"] = "(no answer)"
        usage = data.get("usage")
        req = convert_usage(usage, said or model)
        reported = {"id": data.get("id"), "model": said,
                    "finish_reason": (choices[0] or {}).get("finish_reason") if choices and isinstance(choices[0], dict) else None,
                    "usage": usage}
        return Reply(assistant=echo, uses=uses, text=content, request=req, reported=reported)


def _message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error") if isinstance(body.get("error"), dict) else body
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
    return str(getattr(exc, "message", exc))


def _lenient(text: Any) -> Any:
    """Arguments orjson refuses only for a lone surrogate's escape (``\\ud800``), read as Python's
    json reads them (the loop makes each U+FFFD); anything else that is no JSON stays its text."""
    import json

    def no_constant(name: str) -> Any:
        raise ValueError(name)  # NaN and Infinity are no JSON, as orjson says

    try:
        return json.loads(text, parse_constant=no_constant)
    except (ValueError, TypeError):
        return text
