"""The in-process tool loop the API evaluators share (docs/evaluators/anthropic.md, openai.md,
bedrock.md).

An API evaluator gets the navigation as the provider's tools, in the asz process, each tool's
input schema as the navigation states it (:data:`asz_core.mcp_server.TOOL_SPECS`), plus one
``submit`` tool whose input schema is the stage's answer schema. A submitted answer is checked
against that schema before it is accepted; one that does not match is answered with what is
wrong, and the model may submit again (:data:`MAX_BAD_SUBMITS` times in all).

Every tool call reads through the call's :class:`~asz_core.navigation.Navigator`, so the reading
budget, its refusals and the read log are the navigation's own. Once the tool results kept in the
model's context pass :data:`KEEP_BYTES`, the oldest are replaced by a line saying they were read
(the model calls the tool again when it needs one back).

Usage: every response's usage is recorded as the provider reported it, one
:class:`~asz_core.judge.judgment.Request` per request, converted once into asz's four types (input
without the cache, output, cache read, cache write). A request whose answer never came (an API
error, a connection cut off, a response with no usage) is a request whose usage was never said:
counted apart (``said=False``), never as zero, and it hides none of the others. What each
response said is also kept as the provider wrote it, one line per request, in ``api.jsonl`` in
the attempt's directory.

The SDK clients are made with their own retries off, so that every request sent is one this loop
saw; the loop retries a failed request itself (``retries``, default 2) and counts each.
"""

from __future__ import annotations

import time
import traceback
from abc import abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import orjson
from attrs import define, field

from asz_core.errors import EvaluatorError, MissingDependency
from asz_core.interfaces import Availability, EvaluatorBackend
from asz_core.judge.context import clean
from asz_core.judge.judgment import CallResult, EvaluatorCall, Request

KEEP_BYTES = 262144
"""Bytes of tool results kept in the model's context; past it the oldest are replaced by a line."""
MAX_BAD_SUBMITS = 3
"""Submits that do not match the answer schema before the call fails."""
MAX_REQUESTS = 100
"""Requests one call may make (``max_requests``)."""
RETRIES = 2
"""Times a failed request is sent again (``retries``); each one is counted."""
SUBMIT = "submit"
SUBMIT_DESCRIPTION = ("Give your answer: one JSON object matching the stage's answer schema, as this tool's input. "
                      "It is checked against the schema; an answer that does not match is returned with what is "
                      "wrong, so you can submit again. Call it once, when you have read what your answer needs.")
START = ("Read the conversation through the tools, from the overview down, as the instructions say. When you have "
         "read what your answer needs, give your answer by calling the submit tool with the JSON object as its "
         "input.")
ENDED = ("The navigation has ended: three answers were refused, and the tools read nothing more. Answer now by "
         "calling the submit tool with what you have read, and say unknown for the rest.")
AFTER_END = 3
"""Requests a call may still make after the one in which the navigation ended, before it fails
with no answer."""
NUDGE = ("Give your answer now by calling the submit tool with the JSON object (matching the answer schema) as its "
         "input. asz reads nothing but that.")


def missing(sdk: str, extra: str) -> MissingDependency:
    return MissingDependency(f"the {extra} evaluator needs the {sdk} package: pip install 'asz-evaluators[{extra}]' "
                             f"(or pip install {sdk})")


def url_problem(url: Any, where: str) -> str | None:
    """Why ``url`` (given by ``where``) cannot be an endpoint, or None: an http or https URL with a
    host, as the SDKs need (``localhost:8080``, without its scheme, would fail every request)."""
    from urllib.parse import urlsplit

    shown = repr(url) if isinstance(url, str) else type(url).__name__
    if not isinstance(url, str) or not url.strip():
        return f"{where} ({shown}) is no URL"
    try:
        u = urlsplit(url.strip())
        u.port  # noqa: B018  # a port that is no number, or out of range, raises here
    except ValueError as exc:
        return f"{where} ({shown}) is no URL: {exc}"
    if u.scheme not in ("http", "https") or not u.hostname:
        return f"{where} ({shown}) is no http:// or https:// URL with a host"
    return None


def sdk_client(module: str, extra: str, client: str, error: str, key_env: str, opts: dict[str, Any]) -> Any:
    """A provider SDK's client (anthropic.Anthropic, openai.OpenAI) as every API backend makes it:
    the SDK's own retries off (the loop retries and counts each attempt), the timeout and
    ``base_url`` from asz.yaml; a missing SDK or key said before any request."""
    try:
        sdk = __import__(module)  # as an import statement does (a top-level package)
    except ImportError:
        raise missing(module, extra) from None
    kw: dict[str, Any] = {"max_retries": 0, "timeout": float(opts.get("timeout") or 600)}
    if opts.get("base_url"):
        kw["base_url"] = opts["base_url"]
    try:
        return getattr(sdk, client)(**kw)
    except getattr(sdk, error) as exc:  # no key: said before any request
        raise EvaluatorError(f"{module}: {exc} (set {key_env})") from None


# --- what the loop keeps ---------------------------------------------------------------------------

@define
class ToolUse:
    id: str
    name: str
    input: Any
    """The arguments as the model gave them: a dict, or the text that did not parse as one."""


@define
class ToolResult:
    use: ToolUse
    text: str
    error: bool = False
    elided: bool = False


@define
class Turn:
    """One exchange the provider renders into its messages: the assistant's message as the
    provider gave it (echoed back as it was), then the tool results, or a text from asz."""

    assistant: Any
    uses: list[ToolUse] = field(factory=list)
    results: list[ToolResult] = field(factory=list)
    user_text: str | None = None


@define
class Reply:
    """One response, read by the provider class."""

    assistant: Any
    uses: list[ToolUse]
    text: str
    request: Request
    reported: dict[str, Any]
    """What the provider said of the response (usage, stop reason, model), kept in api.jsonl."""


class RequestFailed(Exception):
    """A request that got no answer with usage: an API error, or a connection cut off."""

    def __init__(self, message: str, *, retry: bool) -> None:
        super().__init__(message)
        self.retry = retry


class NotSent(Exception):
    """A request that was never sent (no credentials, a bad option): the call fails, nothing is counted."""


def count(v: Any) -> int | None:
    """A count as the provider said it: None when it was not said, or is no count."""
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def dump(v: Any) -> str:
    return orjson.dumps(v, option=orjson.OPT_NON_STR_KEYS, default=str).decode()


def tool_specs(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """The tools an API evaluator is given: the navigation's, each with its input schema, then
    ``submit`` with the stage's answer schema."""
    from asz_core.mcp_server import TOOL_SPECS

    out = [(name, desc, sch) for name, (desc, sch) in TOOL_SPECS.items()]
    sub = {k: v for k, v in schema.items() if k not in ("$schema", "$id")}
    out.append((SUBMIT, SUBMIT_DESCRIPTION, sub))
    return out


def check_answer(schema: dict[str, Any], answer: Any) -> list[str]:
    """What is wrong with ``answer`` against the stage's schema (empty when it matches)."""
    import jsonschema

    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    errors = sorted(cls(schema).iter_errors(answer), key=lambda e: list(e.absolute_path))
    out = []
    for e in errors[:20]:
        where = "/".join(str(p) for p in e.absolute_path) or "(the answer)"
        out.append(f"{where}: {e.message[:300]}")
    if len(errors) > 20:
        out.append(f"... and {len(errors) - 20} more")
    return out


def elide(turns: list[Turn], keep: int) -> int:
    """Replace the oldest tool results by a line saying they were read, until those kept take at
    most ``keep`` bytes; the results of the latest turn are always kept. Returns how many were
    replaced."""
    live = [r for t in turns for r in t.results if not r.elided and r.use.name != SUBMIT]
    size = sum(len(r.text.encode()) for r in live)
    last = [t for t in turns if t.results][-1:]
    n = 0
    for r in live:
        if last and any(r is x for x in last[0].results):  # what the model just read is always given to it
            break
        if size <= keep:
            break
        b = len(r.text.encode())
        args = r.use.input if isinstance(r.use.input, dict) else {}
        r.text = (f"[{r.use.name} {dump(args)} was read here ({b} bytes); it was taken out to keep the context "
                  "small. Call the tool again if you need it.]")
        r.elided = True
        size -= b
        n += 1
    return n


# --- the backend -----------------------------------------------------------------------------------

class ApiEvaluator(EvaluatorBackend):
    """An evaluator over a provider's API: the loop, the usage, the files. Subclasses give the
    client, one request, and how a reply reads."""

    name: ClassVar[str]
    extra: ClassVar[str]
    """The extra of asz-evaluators that installs its SDK."""
    key_env: ClassVar[tuple[str, ...]] = ()
    """Environment variables that give it credentials (for choosing an evaluator)."""

    # -- what a provider gives --

    @abstractmethod
    def client(self, call: EvaluatorCall, opts: dict[str, Any]) -> Any:
        """The SDK client, its retries off. Raises MissingDependency when the SDK is missing."""

    @abstractmethod
    def send(self, client: Any, model: str, system: str, turns: list[Turn], tools: list[tuple[str, str, dict[str, Any]]],
             opts: dict[str, Any]) -> Reply:
        """One request with the whole exchange so far. Raises RequestFailed when no answer came."""

    # -- options --

    default_model: ClassVar[str | None] = None
    """The model it runs when asz picks it unasked and asz.yaml names none (None: it needs one named)."""

    @classmethod
    def available(cls, options: dict[str, Any]) -> Availability:
        """It can run here when it has credentials (:meth:`credentials`), its SDK installed, an
        endpoint it can send to (:meth:`endpoint_problem`) and a model named (or a default one)."""
        import importlib.util

        has, said = cls.credentials(options)
        pip = f"pip install 'asz-evaluators[{cls.extra}]'"
        sdk = all(importlib.util.find_spec(m) for m in cls.modules())
        if not has:  # the pip line only when the SDK is missing too: never to install what is there
            return Availability(False, said if sdk else f"{said}, and install the {cls.name} SDK ({pip})")
        if not sdk:
            return Availability(False, f"{said}, but the {cls.name} SDK is not installed ({pip})")
        named = isinstance(options.get("model"), str) and options["model"]
        if not named and not cls.default_model:
            return Availability(False, f"{said}, but the {cls.name} evaluator needs a model: set evaluators: "
                                       f"{{{cls.name}: {{model: MODEL}}}} in asz.yaml or give --evaluator {cls.name}:MODEL")
        bad = cls.endpoint_problem(options)
        if bad:
            return Availability(False, f"{said}, but {bad}")
        if named:
            return Availability(True, said)
        return Availability(True, f"{said}; model {cls.default_model} (give --evaluator {cls.name}:MODEL for another)",
                            cls.default_model)

    @classmethod
    def credentials(cls, options: dict[str, Any]) -> tuple[bool, str]:
        """Whether it has credentials here and what gives them ("KEY is set"), or what to set. The
        default: one of :attr:`key_env` set (and not empty: the SDKs refuse an empty key)."""
        import os

        key = next((k for k in cls.key_env if os.environ.get(k)), None)
        return (True, f"{key} is set") if key else (False, f"set {' or '.join(cls.key_env)}")

    base_url_env: ClassVar[str | None] = None
    """The variable the SDK reads its endpoint from when asz.yaml gives no ``base_url``."""

    @classmethod
    def endpoint_problem(cls, options: dict[str, Any]) -> str | None:
        """Why the endpoint requests would go to cannot be used, or None: ``base_url`` of asz.yaml,
        else :attr:`base_url_env` when set. Read as the SDK reads it, never asked over the network."""
        import os

        if "base_url" in options and options["base_url"] is not None:
            return url_problem(options["base_url"], f"base_url in evaluators: {{{cls.name}: ...}}")
        if cls.base_url_env and cls.base_url_env in os.environ:
            return url_problem(os.environ[cls.base_url_env], cls.base_url_env)
        return None

    @classmethod
    def modules(cls) -> tuple[str, ...]:
        return ()

    @classmethod
    def check(cls, argument: str | None, options: dict[str, Any]) -> None:
        """What a run can check before it starts: the SDK is installed and a model is given, then
        what the automatic choice asks (credentials, an endpoint it can send to), so that a named
        evaluator with no key fails now, in one line, not once per call. Raises MissingDependency
        (with the pip line), EvaluatorError or ConfigError."""
        import importlib.util

        for m in cls.modules():
            if importlib.util.find_spec(m) is None:
                raise missing(m, cls.extra)
        model = argument or options.get("model")
        if not isinstance(model, str) or not model:
            raise EvaluatorError(f"the {cls.name} evaluator needs a model: give it as --evaluator {cls.name}:MODEL, or "
                                 f"set evaluators: {{{cls.name}: {{model: MODEL}}}} in asz.yaml")
        cls.available({**options, "model": model}).require(cls.name)

    def model(self, call: EvaluatorCall) -> str:
        model = call.argument or call.options.get("model")
        if not isinstance(model, str) or not model:
            raise EvaluatorError(f"the {self.name} evaluator needs a model: give it as --evaluator {self.name}:MODEL, or "
                                 f"set evaluators: {{{self.name}: {{model: MODEL}}}} in asz.yaml")
        return model

    # -- the loop --

    def judge(self, call: EvaluatorCall) -> CallResult:
        opts = dict(call.options)
        model = self.model(call)
        client = self.client(call, opts)
        tools = tool_specs(call.schema)
        names = {n for n, _, _ in tools}
        keep = int(opts.get("keep_bytes") or KEEP_BYTES)
        max_requests = int(opts.get("max_requests") or MAX_REQUESTS)
        retries = int(opts.get("retries", RETRIES))
        wait = float(opts.get("retry_wait", 2.0))
        log = _Log(call.directory / "api.jsonl")
        requests: list[Request] = []
        turns: list[Turn] = [Turn(assistant=None, user_text=START)]
        notes: list[str] = []
        bad = 0
        nudged = False
        ended_at: int | None = None
        last_text = ""
        last_submit: str | None = None
        models: list[str] = []

        def result(answer: Any = None, raw: str = "", error: str | None = None) -> CallResult:
            log.close()
            return CallResult(answer=answer, raw=raw, requests=tuple(requests), stderr="\n".join(notes) + ("\n" if notes else ""),
                              error=error, model=models[-1] if models else model)

        pending: list[Request] = []  # the request being read, until it is counted
        try:
            while True:
                if len(requests) >= max_requests:
                    return result(raw=last_submit or last_text,
                                  error=f"no answer after {max_requests} requests (max_requests)")
                reply = None
                for attempt in range(retries + 1):
                    n = len(requests) + 1
                    try:
                        reply = self.send(client, model, call.prompt, turns, tools, opts)
                        break
                    except NotSent as exc:
                        return result(raw=last_submit or last_text, error=f"{self.name}: {exc}")
                    except Exception as exc:  # no answer came: the request is counted apart, and the others stay
                        why = str(exc) if isinstance(exc, RequestFailed) else f"{type(exc).__name__}: {exc}"
                        requests.append(Request(model=model, said=False))
                        call.requests_so_far(requests)
                        log.write({"request": n, "error": why})
                        notes.append(f"request {n}: {why} (its usage was never said: counted apart)")
                        again = isinstance(exc, RequestFailed) and exc.retry
                        if not again or attempt == retries or len(requests) >= max_requests:
                            return result(raw=last_submit or last_text, error=f"{self.name}: {why}")
                        time.sleep(wait * (2 ** attempt))
                assert reply is not None
                if reply.request.model:
                    models.append(reply.request.model)
                log.write({"request": len(requests) + 1, **reply.reported})
                pending = [reply.request]
                turn = Turn(assistant=reply.assistant, uses=reply.uses)
                turns.append(turn)
                if reply.text:
                    last_text = reply.text
                read: list[str] = []
                answer = None
                for use in reply.uses:
                    use.input = clean(use.input)  # an SDK's json reads "\ud800" as a lone surrogate: U+FFFD
                    if use.name == SUBMIT:
                        if answer is not None:
                            turn.results.append(ToolResult(use, "ignored: an answer was accepted already", True))
                            continue
                        last_submit = use.input if isinstance(use.input, str) else dump(use.input)
                        if not isinstance(use.input, dict):
                            problems = ["the input is not a JSON object"]
                        else:
                            problems = check_answer(call.schema, use.input)
                        if problems:
                            bad += 1
                            notes.append(f"submit {bad} did not match the answer schema: " + "; ".join(problems[:3]))
                            turn.results.append(ToolResult(use, "Not accepted: the answer does not match the answer schema:\n"
                                                           + "\n".join(problems) + "\nFix these and call submit again.", True))
                        else:
                            answer = use.input
                            turn.results.append(ToolResult(use, "accepted"))
                    elif use.name in names:
                        if not isinstance(use.input, dict):
                            turn.results.append(ToolResult(use, dump({"error": f"{use.name}: the arguments are not a JSON "
                                                                                 f"object: {str(use.input)[:200]}"}), True))
                            continue
                        text = call.navigator.call(use.name, use.input)
                        entry = call.navigator.log[-1] if call.navigator.log else {}
                        turn.results.append(ToolResult(use, text, entry.get("status", "ok") != "ok"))
                        read.append(use.name)
                    else:
                        turn.results.append(ToolResult(use, dump({"error": f"no tool named {use.name!r}"}), True))
                pending = []
                requests.append(attrs_evolve(reply.request, reads=tuple(read)))
                call.requests_so_far(requests)  # the stage's progress counts it while the call goes on
                if answer is not None:
                    return result(answer=answer, raw=orjson.dumps(answer, option=orjson.OPT_INDENT_2).decode())
                if bad >= MAX_BAD_SUBMITS:
                    return result(raw=last_submit or last_text,
                                  error=f"the answer did not match the answer schema after {bad} submits")
                if call.navigator is not None and call.navigator.ended:
                    if ended_at is None:
                        ended_at = len(requests)
                    elif len(requests) - ended_at >= AFTER_END:
                        return result(raw=last_submit or last_text,
                                      error=f"the navigation ended and no answer came in {AFTER_END} more requests")
                    if reply.uses:
                        turn.user_text = ENDED
                if not reply.uses:
                    if nudged:  # it ended twice without a tool: its text is the answer as it gave it
                        return result(raw=reply.text)
                    nudged = True
                    turns.append(Turn(assistant=None, user_text=NUDGE))
                    continue
                elided = elide(turns, keep)
                if elided:
                    notes.append(f"after request {len(requests)}: {elided} older tool results replaced by a line "
                                 f"(past {keep} bytes)")
        except Exception as exc:  # asz's own failure mid-call: what was counted stays counted
            requests.extend(pending)
            notes.append(traceback.format_exc())
            return result(raw=last_submit or last_text, error=f"{type(exc).__name__}: {exc}")


def attrs_evolve(r: Request, **kw: Any) -> Request:
    import attrs

    return attrs.evolve(r, **kw)


class _Log:
    """api.jsonl: what each response said, as the provider said it, one line per request."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.f: Any = None

    def write(self, entry: dict[str, Any]) -> None:
        if self.f is None:
            from asz_core.regular import open_append

            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.f = open_append(self.path)
        self.f.write(orjson.dumps(entry, option=orjson.OPT_NON_STR_KEYS, default=str) + b"\n")
        self.f.flush()

    def close(self) -> None:
        if self.f is not None:
            self.f.close()
            self.f = None


Sender = Callable[..., Reply]

__all__ = ["ApiEvaluator", "Reply", "RequestFailed", "NotSent", "Turn", "ToolUse", "ToolResult", "KEEP_BYTES", "check_answer",
           "elide", "tool_specs", "count", "missing"]
