"""The shared tool loop of the API evaluators, piece by piece: the tools it gives, the answer's
check, the results it replaces past its bound, the usage conversions, a missing SDK, the plugin."""

from __future__ import annotations

import builtins
import sys
from pathlib import Path
from typing import Any

import pytest

from asz_core.errors import EvaluatorError, MissingDependency
from asz_core.interfaces import Availability
from asz_core.judge.judgment import EvaluatorCall, Request
from asz_core.mcp_server import TOOL_SPECS
from asz_core.judge.kit import Kit
from asz_evaluators import api_loop
from asz_evaluators.anthropic_backend import AnthropicEvaluator
from asz_evaluators.api_loop import ToolResult, ToolUse, Turn, check_answer, elide, tool_specs
from asz_evaluators.bedrock_backend import BedrockEvaluator
from asz_evaluators.bedrock_backend import convert_usage as bedrock_usage
from asz_evaluators.openai_backend import OpenAIEvaluator
from asz_evaluators.openai_backend import convert_usage as openai_usage


def test_tools_are_the_navigation_and_submit() -> None:
    schema = Kit.load().schema("targets")
    tools = tool_specs(schema)
    assert [n for n, _, _ in tools] == [*TOOL_SPECS, "submit"]
    for name, _, sch in tools[:-1]:
        assert sch == TOOL_SPECS[name][1]
    sub = tools[-1][2]
    assert "$schema" not in sub and "$id" not in sub and sub["required"] == schema["required"]


def test_the_answer_is_checked_against_the_schema() -> None:
    schema = Kit.load().schema("targets")
    assert check_answer(schema, {"inputs": [], "targets": [], "goals": []}) == []
    problems = check_answer(schema, {"inputs": [{"input": "x1", "actions": [], "relations": []}], "targets": []})
    assert any("goals" in p for p in problems) and any(p.startswith("inputs/0/input") for p in problems)


def _turn(k: int, size: int, name: str = "step") -> Turn:
    use = ToolUse(f"u{k}", name, {"id": f"s{k}"})
    return Turn(assistant=[], uses=[use], results=[ToolResult(use, "x" * size)])


def test_oldest_results_are_replaced_past_the_bound() -> None:
    turns = [Turn(assistant=None, user_text="start"), _turn(1, 100), _turn(2, 100), _turn(3, 100)]
    assert elide(turns, 1000) == 0
    assert elide(turns, 150) == 2  # the two oldest go; the latest turn's result always stays
    texts = [t.results[0].text for t in turns[1:]]
    assert texts[0] == ('[step {"id":"s1"} was read here (100 bytes); it was taken out to keep the context small. '
                        "Call the tool again if you need it.]")
    assert texts[1].startswith('[step {"id":"s2"} was read here') and texts[2] == "x" * 100
    assert elide(turns, 0) == 0  # the latest is never replaced, and the replaced are not counted again
    assert api_loop.KEEP_BYTES == 256 * 1024


def test_openai_usage_takes_the_cache_out_once() -> None:
    u = {"prompt_tokens": 1500, "completion_tokens": 40, "total_tokens": 1540,
         "prompt_tokens_details": {"cached_tokens": 1200, "cache_write_tokens": 100}}
    assert openai_usage(u, "m") == Request(input=200, output=40, cache_read=1200, cache_write=100, model="m")
    # details without a cache write: none was written
    u["prompt_tokens_details"] = {"cached_tokens": 1200}
    assert openai_usage(u, "m") == Request(input=300, output=40, cache_read=1200, cache_write=0, model="m")
    # no details: the cache's part was not said; the total stays as input, the cache unknown
    del u["prompt_tokens_details"]
    assert openai_usage(u, "m") == Request(input=1500, output=40, cache_read=None, cache_write=None, model="m")
    assert openai_usage(None, "m") == Request(model="m", said=False)
    assert openai_usage({"completion_tokens": 3}, "m").said is False


def test_bedrock_usage() -> None:
    u = {"inputTokens": 100, "outputTokens": 10, "totalTokens": 410, "cacheReadInputTokens": 250, "cacheWriteInputTokens": 50}
    assert bedrock_usage(u, "m") == Request(input=100, output=10, cache_read=250, cache_write=50, model="m")
    # cache counts left out: 0 when the total shows it, unknown when it does not
    assert bedrock_usage({"inputTokens": 100, "outputTokens": 10, "totalTokens": 110}, "m") == Request(
        input=100, output=10, cache_read=0, cache_write=0, model="m")
    assert bedrock_usage({"inputTokens": 100, "outputTokens": 10, "totalTokens": 150}, "m") == Request(
        input=100, output=10, cache_read=None, cache_write=None, model="m")
    assert bedrock_usage({}, "m") == Request(model="m", said=False)


def _call(tmp_path: Path, argument: str | None = "m", options: dict[str, Any] | None = None) -> EvaluatorCall:
    return EvaluatorCall(stage="targets", call=1, attempt=1, prompt="p", schema={"type": "object"}, budget=100,
                         directory=tmp_path, navigator=None, argument=argument, options=options or {})


@pytest.mark.parametrize(("cls", "module", "line"), [
    (AnthropicEvaluator, "anthropic", "pip install 'asz-evaluators[anthropic]'"),
    (OpenAIEvaluator, "openai", "pip install 'asz-evaluators[openai]'"),
    (BedrockEvaluator, "boto3", "pip install 'asz-evaluators[bedrock]'"),
])
def test_a_missing_sdk_says_the_pip_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cls: Any, module: str,
                                         line: str) -> None:
    real = builtins.__import__

    def fake(name: str, *a: Any, **kw: Any) -> Any:
        if name == module or name.startswith(module + "."):
            raise ImportError(f"No module named {name!r}")
        return real(name, *a, **kw)

    monkeypatch.delitem(sys.modules, module, raising=False)
    monkeypatch.setattr(builtins, "__import__", fake)
    with pytest.raises(MissingDependency) as exc:
        cls().judge(_call(tmp_path))
    assert line in str(exc.value)
    # a run can check it before it starts
    import importlib.util

    real_find = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == module else real_find(n, *a))
    with pytest.raises(MissingDependency) as exc:
        cls.check("m", {})
    assert line in str(exc.value)


@pytest.mark.parametrize(("cls", "module", "key"), [(AnthropicEvaluator, "anthropic", "ANTHROPIC_API_KEY"),
                                                   (OpenAIEvaluator, "openai", "OPENAI_API_KEY")])
def test_no_key_says_to_install_the_sdk_only_when_it_is_missing(monkeypatch: pytest.MonkeyPatch, cls: Any, module: str,
                                                                key: str) -> None:
    import importlib.util

    for k in cls.key_env:
        monkeypatch.delenv(k, raising=False)
    real_find = importlib.util.find_spec
    there = cls.available({"model": "m"})
    assert not there.ok and key in there.why and "pip install" not in there.why, there.why  # its SDK is installed here
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == module else real_find(n, *a))
    missing = cls.available({"model": "m"})
    assert not missing.ok and key in missing.why and f"pip install 'asz-evaluators[{cls.extra}]'" in missing.why, missing.why


def test_a_model_must_be_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "x")  # (a key, so that the model is what the check is about)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(EvaluatorError, match="--evaluator openai:MODEL"):
        OpenAIEvaluator().judge(_call(tmp_path, argument=None))
    assert OpenAIEvaluator().model(_call(tmp_path, argument=None, options={"model": "gpt-x"})) == "gpt-x"
    assert OpenAIEvaluator().model(_call(tmp_path, argument="gpt-y", options={"model": "gpt-x"})) == "gpt-y"
    with pytest.raises(EvaluatorError, match="--evaluator bedrock:MODEL"):
        BedrockEvaluator.check(None, {})
    OpenAIEvaluator.check(None, {"model": "gpt-x"})


def test_registered_without_importing_an_sdk() -> None:
    import subprocess

    code = ("import sys; from asz_core.registry import Registry; r = Registry(); "
            "names = sorted(p.name for p in r.plugins() if p.kind == 'evaluator backend'); "
            "print(names, [m for m in ('anthropic', 'openai', 'boto3') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "'anthropic'" in out and "'bedrock'" in out and "'openai'" in out and out.strip().endswith("[]")


def test_available(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert not OpenAIEvaluator.available({}).ok
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    assert OpenAIEvaluator.available({}) == Availability(True, "OPENAI_API_KEY is set; model gpt-5.5 (give --evaluator openai:MODEL for another)", "gpt-5.5")
    assert OpenAIEvaluator.available({"model": "gpt-4o"}) == Availability(True, "OPENAI_API_KEY is set")


class _Scripted(api_loop.ApiEvaluator):
    """A provider with no SDK: each send returns the next reply, or raises it."""

    name = "scripted-api"
    extra = "none"

    def __init__(self, replies: list[Any]) -> None:
        self.replies = list(replies)

    def client(self, call: EvaluatorCall, opts: dict[str, Any]) -> Any:
        return None

    def send(self, client: Any, model: str, system: str, turns: list[Turn], tools: Any, opts: dict[str, Any]) -> Any:
        r = self.replies.pop(0)
        if isinstance(r, Exception):
            raise r
        return r


class _BrokenNav:
    log: list[Any] = []
    ended = False

    def call(self, tool: str, args: dict[str, Any]) -> str:
        raise RuntimeError("the store went away")


def _reply(k: int, uses: list[ToolUse]) -> api_loop.Reply:
    return api_loop.Reply(assistant=[], uses=uses, text="", request=Request(input=k, output=1, cache_read=0, cache_write=0,
                                                                           model="m"), reported={})


def test_a_failure_of_asz_mid_call_keeps_what_was_counted(tmp_path: Path) -> None:
    call = EvaluatorCall(stage="targets", call=1, attempt=1, prompt="p", schema={"type": "object"}, budget=100,
                         directory=tmp_path, navigator=_BrokenNav(), argument="m")
    ev = _Scripted([api_loop.RequestFailed("API error 503: busy", retry=True), _reply(7, [ToolUse("u1", "card", {})])])
    res = ev.judge(attrs_evolve(call, options={"retry_wait": 0}))
    assert res.error == "RuntimeError: the store went away"
    assert res.requests == (Request(model="m", said=False), Request(input=7, output=1, cache_read=0, cache_write=0, model="m"))
    assert "the store went away" in res.stderr and "API error 503" in res.stderr


def test_a_request_never_sent_counts_nothing(tmp_path: Path) -> None:
    call = _call(tmp_path)
    res = _Scripted([api_loop.NotSent("no credentials")]).judge(call)
    assert res.error == "scripted-api: no credentials" and res.requests == ()


def attrs_evolve(obj: Any, **kw: Any) -> Any:
    import attrs

    return attrs.evolve(obj, **kw)
