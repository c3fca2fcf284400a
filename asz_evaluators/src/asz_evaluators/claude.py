"""``claude``: Claude Code run headless (``claude -p``) as an evaluator (docs/evaluators/claude.md).

It runs with its built-in tools off (``--tools ""``), asz's navigation as its only MCP server
(``--strict-mcp-config``), no user, project or local settings (``--setting-sources ""``), no
session kept (``--no-session-persistence``), permissions that let only the asz tools run
(``--permission-mode dontAsk --allowedTools mcp__asz``), the stage prompt as the whole system
prompt (``--system-prompt-file``, never appended to Claude Code's own), and the stage's answer
schema as its structured output (``--json-schema``).

Its stream-json frames are read as they come (partial messages on): a request's input side
from its ``message_start``, its output from its ``message_delta``, counted once it ends
(``message_stop``). The ``result`` frame's ``modelUsage`` holds every model the call used,
a small model Claude Code runs beside the one asked for included; what a model's totals hold
beyond the requests the stream showed is counted as one line of that model. ``total_cost_usd``
is kept as the reported cost, beside asz's own figures. The init frame is checked: any tool
other than asz's (and the StructuredOutput tool that ``--json-schema`` adds) fails the call.
"""

from __future__ import annotations

import copy
import json
import os
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, ClassVar

import orjson

from asz_core.interfaces import Availability, EvaluatorBackend
from asz_core.judge.context import write_once
from asz_core.judge.judgment import CallResult, EvaluatorCall, Request

from . import cli_common as cc

TOOL_PREFIX = f"mcp__{cc.SERVER}__"
STRUCTURED = "StructuredOutput"
USER_PROMPT = ("Judge as your instructions say. Read the conversation only through the asz tools, then give your "
               "answer once, through the StructuredOutput tool.")
DEFAULT_MAX_TURNS = 200


def _count(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


class ClaudeStream:
    """The frames of one ``claude -p --output-format stream-json`` run, read one by one."""

    def __init__(self) -> None:
        self.init: dict[str, Any] | None = None
        self.refused: str | None = None
        self.requests: dict[str, dict[str, Any]] = {}
        self.result: dict[str, Any] | None = None
        self.notes: list[str] = []
        self.api_errors: list[str] = []
        self.partial = False
        """Whether the stream carried partial messages (stream_event frames)."""

    # --- frames --------------------------------------------------------------------------------
    def feed(self, frame: dict[str, Any]) -> str | None:
        """Take one frame; returns a reason to stop the call at once, or None."""
        t = frame.get("type")
        if t == "system":
            sub = frame.get("subtype")
            if sub == "init":
                self.init = frame
                self.refused = check_init(frame)
                return self.refused
            if sub == "api_retry":
                self.notes.append(f"claude retried a request (attempt {frame.get('attempt')} of "
                                  f"{frame.get('max_retries')}): {frame.get('error_status')} {frame.get('error')}")
            elif sub == "permission_denied":
                self.notes.append(f"claude denied the tool {frame.get('tool_name')}")
        elif t == "stream_event":
            self.partial = True
            self._event(frame)
        elif t == "assistant":
            self._assistant(frame)
        elif t == "result":
            self.result = frame
        return None

    def _req(self, key: str) -> dict[str, Any]:
        return self.requests.setdefault(key, {"id": key, "model": None, "usage": None, "delta": None, "started": False,
                                              "ended": False, "tools": []})

    def _event(self, frame: dict[str, Any]) -> None:
        ev = frame.get("event")
        if not isinstance(ev, dict):
            return
        et = ev.get("type")
        msg = ev.get("message") if isinstance(ev.get("message"), dict) else {}
        key = frame.get("api_message_id") or msg.get("id")
        if not isinstance(key, str):
            key = self._last_key()
            if key is None:
                return
        if et == "message_start":
            r = self._req(key)
            r["started"] = True
            r["model"] = msg.get("model") or r["model"]
            if isinstance(msg.get("usage"), dict):
                r["usage"] = msg["usage"]
        elif et == "message_delta":
            r = self._req(key)
            if isinstance(ev.get("usage"), dict):
                r["delta"] = ev["usage"]
        elif et == "message_stop":
            self._req(key)["ended"] = True

    def _last_key(self) -> str | None:
        return next(reversed(self.requests), None) if self.requests else None

    def _assistant(self, frame: dict[str, Any]) -> None:
        msg = frame.get("message")
        if not isinstance(msg, dict):
            return
        if msg.get("model") == "<synthetic>":  # claude's own message (an API error): no request
            texts = [b.get("text") for b in msg.get("content") or () if isinstance(b, dict) and b.get("text")]
            if texts:
                self.api_errors.append(" ".join(str(x) for x in texts))
            return
        key = msg.get("id")
        if not isinstance(key, str):
            return
        r = self._req(key)
        r["model"] = r["model"] or msg.get("model")
        for b in msg.get("content") or ():
            if isinstance(b, dict) and b.get("type") == "tool_use" and isinstance(b.get("name"), str):
                name = b["name"]
                r["tools"].append(name[len(TOOL_PREFIX):] if name.startswith(TOOL_PREFIX) else name)
        if not r["started"] and isinstance(msg.get("usage"), dict) and r["usage"] is None:
            r["usage"] = msg["usage"]  # without partial messages: the input side only

    # --- what it consumed ----------------------------------------------------------------------
    def consumed(self, stopped: bool) -> tuple[list[Request], dict[str, Any]]:
        """The requests (one per request the stream showed ending with its usage; the rest
        apart) and what claude reported of the call in its own terms."""
        out: list[Request] = []
        zero = {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}
        seen: dict[str, dict[str, int]] = {}
        known_apart: dict[str, dict[str, int]] = {}
        running = 0
        for r in self.requests.values():
            u = dict(r["usage"] or {})
            d = dict(r["delta"] or {})
            if not self.partial and r["usage"] is not None:
                r["ended"] = True  # partial messages off: the input side only, the output unknown
            elif self.partial and not r["started"] and r["usage"] is not None:
                # a request claude made without streaming (its fallback after a stream broke): the
                # assistant frame holds the whole response's usage
                r["ended"], d = True, {"output_tokens": u.get("output_tokens")}
            for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"):
                if _count(d.get(k)) is not None:
                    u[k] = d[k]
            # said: it ended with its final usage (message_delta). A stream cut off mid-request ends
            # with claude's own message_stop and no message_delta: its output was never said.
            said = r["ended"] and (r["delta"] is not None or not self.partial or not r["started"]) and (
                r["usage"] is not None or r["delta"] is not None)
            req = Request(input=_count(u.get("input_tokens")), output=_count(d.get("output_tokens")) if said else None,
                          cache_read=_count(u.get("cache_read_input_tokens")),
                          cache_write=_count(u.get("cache_creation_input_tokens")),
                          model=r["model"], said=said, reads=tuple(x for x in r["tools"] if x != STRUCTURED))
            if not r["ended"]:
                running += 1
            out.append(req)
            if req.model:
                into = seen if said else known_apart
                s = into.setdefault(req.model, dict(zero))
                for k in s:
                    s[k] += (getattr(req, k) or 0) if said or k != "output" else (_count(u.get("output_tokens")) or 0)
        if stopped and running == 0 and self.init is not None:
            # one more apart: the request running when it stopped, or one on its way
            out.append(Request(model=self.model, said=False))
        report: dict[str, Any] = {"per_request": "said: input side at message_start, output at message_delta"}
        res = self.result or {}
        mu = res.get("modelUsage") if isinstance(res.get("modelUsage"), dict) else {}
        report["model_usage"] = mu
        report["usage"] = res.get("usage")
        report["total_cost_usd"] = res.get("total_cost_usd")
        aux: dict[str, Any] = {}
        for model, m in mu.items():
            if not isinstance(m, dict):
                continue
            tot = {"input": _count(m.get("inputTokens")) or 0, "output": _count(m.get("outputTokens")) or 0,
                   "cache_read": _count(m.get("cacheReadInputTokens")) or 0,
                   "cache_write": _count(m.get("cacheCreationInputTokens")) or 0}
            s = seen.get(model, zero)
            ka = known_apart.get(model, zero)
            # what the totals hold beyond the requests said, less what the stream showed of those
            # counted apart (claude's totals count a cut request's input side)
            gap = {k: tot[k] - s[k] - ka[k] for k in tot}
            if any(v < 0 for v in gap.values()):
                self.notes.append(f"claude's totals for {model} differ from the requests its stream showed "
                                  f"({gap}); the requests are kept as shown")
                continue
            if any(gap.values()):
                aux[model] = gap
                out.append(Request(input=gap["input"], output=gap["output"], cache_read=gap["cache_read"],
                                   cache_write=gap["cache_write"], model=model, said=True, reads=()))
        report["only_in_totals"] = aux
        if aux:
            report["only_in_totals_note"] = ("what a model's totals hold beyond the requests the stream showed: one line "
                                             "per model in requests.jsonl (how many requests it took is not said)")
        return out, report

    @property
    def model(self) -> str | None:
        for r in self.requests.values():
            if r["model"]:
                return str(r["model"])
        if self.init and isinstance(self.init.get("model"), str):
            return str(self.init["model"])
        return None

    def model_window(self) -> int | None:
        res = self.result or {}
        mu = res.get("modelUsage") if isinstance(res.get("modelUsage"), dict) else {}
        m = mu.get(self.model) if self.model else None
        if not isinstance(m, dict) and len(mu) == 1:
            m = next(iter(mu.values()))
        return _count(m.get("contextWindow")) if isinstance(m, dict) else None

    def reported_cost(self) -> Decimal | None:
        v = (self.result or {}).get("total_cost_usd")
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            try:
                return Decimal(str(v))
            except InvalidOperation:
                return None
        return None


def check_init(frame: dict[str, Any]) -> str | None:
    """Why the init frame shows a call that is not read-only through asz alone, or None."""
    tools = [t for t in frame.get("tools") or () if isinstance(t, str)]
    extra = [t for t in tools if t != STRUCTURED and not t.startswith(TOOL_PREFIX)]
    if extra:
        return f"claude loaded tools other than asz's: {', '.join(extra)}"
    servers = [s for s in frame.get("mcp_servers") or () if isinstance(s, dict)]
    others = [str(s.get("name")) for s in servers if s.get("name") != cc.SERVER]
    if others:
        return f"claude loaded MCP servers other than asz's: {', '.join(others)}"
    mine = [s for s in servers if s.get("name") == cc.SERVER]
    if not mine or mine[0].get("status") != "connected":
        status = mine[0].get("status") if mine else "absent"
        return f"asz's navigation server did not connect to claude (status: {status})"
    return None


def command(call: EvaluatorCall, exe: str, mcp_config: Path) -> list[str]:
    model = call.argument or call.options.get("model")
    turns = call.options.get("max_turns")
    cmd = [exe, "-p", USER_PROMPT, "--output-format", "stream-json", "--verbose", "--include-partial-messages",
           "--tools", "", "--mcp-config", str(mcp_config), "--strict-mcp-config", "--allowedTools", f"mcp__{cc.SERVER}",
           "--setting-sources", "", "--no-session-persistence", "--permission-mode", "dontAsk",
           "--max-turns", str(turns if isinstance(turns, int) and turns > 0 else DEFAULT_MAX_TURNS),
           "--system-prompt-file", str(Path(call.directory).resolve() / "prompt.md"),
           "--json-schema", orjson.dumps(cc.plain_schema(call.schema)).decode()]
    if model:
        cmd += ["--model", str(model)]
    return cmd


def claude_status(exe: str, timeout: float = 30.0) -> dict[str, Any] | None:
    """What ``claude auth status`` says (a JSON object), or None when it says nothing readable."""
    r = cc.run_briefly([exe, "auth", "status"], timeout)
    if isinstance(r, str):
        return None
    try:
        v = json.loads(r.stdout)
    except ValueError:
        return None
    return v if isinstance(v, dict) else None


class ClaudeEvaluator(EvaluatorBackend):
    """Claude Code, headless, reading through ``asz judge mcp`` only."""

    name: ClassVar[str] = "claude"
    default_order: ClassVar[int | None] = 10

    @classmethod
    def available(cls, options: dict[str, Any]) -> Availability:
        """It can run here when the claude CLI is found and ``claude auth status`` says it is logged in."""
        exe = cc.locate("claude", "ASZ_CLAUDE", options)
        if not exe:
            return cc.not_found("claude", "ASZ_CLAUDE", "install the claude CLI (Claude Code), run `claude auth login` "
                                                        "(or set ANTHROPIC_API_KEY)")
        st = claude_status(str(exe))
        if not st or st.get("loggedIn") is not True:
            return Availability(False, f"the claude CLI ({exe}) is not logged in: run `claude auth login` "
                                       "(or set ANTHROPIC_API_KEY)")
        how = st.get("apiKeySource") or st.get("authMethod") or "logged in"
        return Availability(True, f"the claude CLI is on the PATH ({exe}) and logged in ({how})")

    @classmethod
    def check(cls, argument: str | None, options: dict[str, Any]) -> None:
        cc.find_executable("claude", None, "ASZ_CLAUDE", options)  # the CLI must be there before the run starts
        # and able to answer: what the automatic choice asks (logged in, or a key set), so a named
        # claude that is not logged in fails now, in one line, not once per call of a run
        cls.available(options).require(cls.name)

    def judge(self, call: EvaluatorCall) -> CallResult:
        exe = cc.find_executable("claude", call, "ASZ_CLAUDE")
        d = Path(call.directory).resolve()
        prompt = d / "prompt.md"
        if not prompt.is_file():
            write_once(prompt, call.prompt.encode())
        cfg = d / "mcp.json"
        write_once(cfg, orjson.dumps({"mcpServers": {cc.SERVER: {"type": "stdio", "command": cc.mcp_command(call)[0],
                                                                 "args": cc.mcp_command(call)[1:], "env": cc.mcp_env(call)}}},
                                     option=orjson.OPT_INDENT_2))
        env = dict(os.environ)
        env.update(cc.mcp_env(call))
        env.setdefault("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        stream = ClaudeStream()

        def on_line(line: str) -> str | None:
            frame = cc.json_line(line)
            return stream.feed(frame) if frame is not None else None

        fin = cc.run_lines(command(call, exe, cfg), cwd=cc.workdir(call), env=env, timeout=cc.timeout_of(call),
                           stream_file=d / "stream.jsonl", on_line=on_line,
                           tick=cc.tick_of(call, lambda: copy.deepcopy(stream).consumed(False)[0]))  # a copy: consumed() settles requests
        cc.count_reads(call)
        res = stream.result
        stopped = res is None
        requests, report = stream.consumed(stopped)
        report["exit_code"] = fin.rc
        report["notes"] = stream.notes
        cc.write_usage(call, report)
        stderr = fin.stderr
        if stream.notes:
            stderr = "\n".join(stream.notes) + ("\n" + stderr if stderr else "")
        common = dict(requests=tuple(requests), model=stream.model, model_window=stream.model_window(),
                      reported_cost=stream.reported_cost())
        if fin.stopped:
            return CallResult(error=fin.stopped, stderr=stderr, **common)
        if res is None:
            why = (f"claude was stopped after {cc.timeout_of(call):g} s" if fin.timed_out
                   else f"claude ended (exit code {fin.rc}) before its result")
            if stream.api_errors:
                why += f": {stream.api_errors[-1]}"
            return CallResult(error=why, stderr=stderr, **common)
        text = res.get("result") if isinstance(res.get("result"), str) else ""
        if res.get("is_error") or res.get("subtype") != "success":
            errs = [str(e) for e in res.get("errors") or ()]
            detail = "; ".join(errs) or text or str(res.get("terminal_reason") or "")
            status = f" (API status {res['api_error_status']})" if res.get("api_error_status") else ""
            # claude says subtype "success" on some failures (not logged in): name the failure, not that.
            kind = "" if res.get("subtype") == "success" else f" ({res.get('subtype')})"
            return CallResult(error=f"claude's call failed{kind}{status}: {detail}".rstrip(": ") + _what_to_do(detail),
                              raw=text, stderr=stderr, **common)
        answer = res.get("structured_output")
        if isinstance(answer, dict):
            return CallResult(answer=answer, raw=orjson.dumps(answer, option=orjson.OPT_INDENT_2).decode(),
                              stderr=stderr, **common)
        # no structured output: the text as it came (the runner reads a JSON object in it, if any)
        return CallResult(answer=None, raw=text, stderr=stderr, **common)


def _what_to_do(detail: str) -> str:
    """The step a person takes for a failure claude names without one."""
    d = detail.lower()
    if "logged in" in d or "/login" in d or "invalid api key" in d or "authentication" in d or "oauth" in d:
        return (". Log claude in (run `claude` and type /login) or set ANTHROPIC_API_KEY, or judge with another "
                "evaluator (--evaluator anthropic:MODEL, codex, ...)")
    if "credit balance" in d or "usage limit" in d or "rate limit" in d:
        return ". Wait for the limit to reset, or judge with another evaluator (--evaluator NAME)"
    return ""
