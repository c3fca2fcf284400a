"""``codex``: ``codex exec`` run headless as an evaluator (docs/evaluators/codex.md).

It runs with JSON events (``--json``), keeps no session (``--ephemeral``), ignores the user's
configuration and rules (``--ignore-user-config --ignore-rules``), in a read-only sandbox
(``-s read-only``), never asks for approval, with the shell, patch, image, browser, web-search
and other built-in tools disabled (a read-only sandbox alone still lets the shell read the
disk), and asz's navigation as its only MCP server, its read-only tools approved. The stage
prompt is the model's instructions (``model_instructions_file``), and the answer schema, made
to meet OpenAI's strict rules, is the output schema.

codex says only what a whole turn consumed (``turn.completed.usage``), when it ends: that is
recorded as one line, and the requests one by one are unavailable; none is invented. A turn
that failed or was stopped says no usage: it is counted apart, never as zero. Any item of a
tool other than asz's (a command, a file change, a web search, another MCP server) stops the
call.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar

import orjson

from asz_core.interfaces import Availability, EvaluatorBackend
from asz_core.judge.context import write_once
from asz_core.judge.judgment import CallResult, EvaluatorCall, Request

from . import cli_common as cc

USER_PROMPT = ("Judge as your instructions say. Read the conversation only through the asz tools, then give your "
               "answer as one JSON object that meets the output schema.")
DISABLED_FEATURES = ("unified_exec", "shell_tool", "view_image", "goals", "apps", "plugins", "multi_agent",
                     "image_generation", "browser_use", "browser_use_external", "computer_use", "in_app_browser",
                     "tool_suggest", "skill_search", "sleep_tool")
FOREIGN_ITEMS = ("command_execution", "file_change", "web_search", "collab_tool_call")
PER_REQUEST = "unavailable: codex reports only what a whole turn consumed; the line in requests.jsonl is the whole turn"


def toml_value(v: Any) -> str:
    """A value as TOML (what ``codex -c key=value`` parses)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, str):
        return orjson.dumps(v).decode()
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{orjson.dumps(str(k)).decode()} = {toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(f"no TOML form for {type(v).__name__}")


# --- the output schema under OpenAI's strict rules --------------------------------------------------

def _allows_null(s: Any) -> bool:
    if not isinstance(s, dict):
        return True
    t = s.get("type")
    if t == "null" or (isinstance(t, list) and "null" in t):
        return True
    if "enum" in s and None in s["enum"]:
        return True
    return any(_allows_null(x) for x in s.get("anyOf") or ())


def _nullable(s: dict[str, Any]) -> dict[str, Any]:
    if _allows_null(s):
        return s
    s = dict(s)
    if "enum" in s:
        s["enum"] = [*s["enum"], None]
        if "type" in s:
            t = s["type"]
            s["type"] = [*t, "null"] if isinstance(t, list) else [t, "null"]
        return s
    if "type" in s:
        t = s["type"]
        s["type"] = [*t, "null"] if isinstance(t, list) else [t, "null"]
        return s
    return {"anyOf": [s, {"type": "null"}]}


def strict_schema(schema: Any) -> Any:
    """The schema made to meet OpenAI's strict structured output: every object closed
    (``additionalProperties: false``) with every property required; a property that was
    optional may be null instead. ``$schema``/``$id`` are dropped."""
    if isinstance(schema, list):
        return [strict_schema(x) for x in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: strict_schema(v) for k, v in schema.items() if k not in ("$schema", "$id", "default")}
    props = out.get("properties")
    if isinstance(props, dict) or out.get("type") == "object":
        props = props if isinstance(props, dict) else {}
        req = set(schema.get("required") or ())
        out["properties"] = {k: (v if k in req else _nullable(v)) for k, v in props.items()}
        out["required"] = list(props)
        out["additionalProperties"] = False
    return out


def drop_added_nulls(value: Any, schema: Any) -> Any:
    """Take out the nulls :func:`strict_schema` let an optional property have (a property the
    stage's own schema does not let be null is left out, as the stage's schema means)."""
    if not isinstance(schema, dict):
        return value
    if isinstance(value, dict):
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        req = set(schema.get("required") or ())
        out = {}
        for k, v in value.items():
            sub = props.get(k)
            if v is None and k not in req and sub is not None and not _allows_null(sub):
                continue
            out[k] = drop_added_nulls(v, sub) if sub is not None else v
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [drop_added_nulls(v, schema["items"]) for v in value]
    return value


# --- the events ---------------------------------------------------------------------------------------

def _count(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


class CodexStream:
    """The JSONL events of one ``codex exec --json`` run, read one by one."""

    def __init__(self) -> None:
        self.thread: str | None = None
        self.turns_started = 0
        self.turns: list[dict[str, Any]] = []
        """Each ended turn: its usage (or None) and the asz tools it called."""
        self.failed: str | None = None
        self.errors: list[str] = []
        self.message: str | None = None
        self.reads: list[str] = []

    def feed(self, ev: dict[str, Any]) -> str | None:
        t = ev.get("type")
        if t == "thread.started":
            self.thread = ev.get("thread_id")
        elif t == "turn.started":
            self.turns_started += 1
            self.reads = []
        elif t == "turn.completed":
            self.turns.append({"usage": ev.get("usage") if isinstance(ev.get("usage"), dict) else None,
                               "reads": tuple(self.reads)})
        elif t == "turn.failed":
            err = ev.get("error")
            self.failed = str(err.get("message") if isinstance(err, dict) else err)
        elif t == "error":
            self.errors.append(str(ev.get("message")))
        elif t in ("item.started", "item.updated", "item.completed"):
            item = ev.get("item") if isinstance(ev.get("item"), dict) else {}
            kind = item.get("type")
            if kind in FOREIGN_ITEMS:
                return f"codex used a tool other than asz's: {kind}"
            if kind == "mcp_tool_call":
                if item.get("server") != cc.SERVER:
                    return f"codex used a tool other than asz's: {item.get('server')}/{item.get('tool')}"
                if t == "item.completed":
                    self.reads.append(str(item.get("tool")))
            elif kind == "agent_message" and t == "item.completed" and isinstance(item.get("text"), str):
                self.message = item["text"]
            elif kind == "error" and t == "item.completed":
                self.errors.append(str(item.get("message")))
        return None

    def requests(self, model: str | None, stopped: bool) -> list[Request]:
        out = []
        for turn in self.turns:
            u = turn["usage"]
            if u is None:
                out.append(Request(model=model, said=False, reads=turn["reads"]))
                continue
            inp, cached = _count(u.get("input_tokens")), _count(u.get("cached_input_tokens"))
            write = _count(u.get("cache_write_input_tokens"))
            # OpenAI's input counts the cached tokens (read and written): asz's input is the rest
            uncached = None if inp is None else inp - (cached or 0) - (write or 0)
            out.append(Request(input=uncached if uncached is None or uncached >= 0 else None, output=_count(u.get("output_tokens")),
                               cache_read=cached, cache_write=write, model=model, said=True, reads=turn["reads"]))
        if self.turns_started > len(self.turns):  # a turn that failed or was stopped says no usage
            out.append(Request(model=model, said=False, reads=tuple(self.reads)))
        elif stopped and not self.turns:
            out.append(Request(model=model, said=False))
        return out


def command(call: EvaluatorCall, exe: str, cwd: Path, schema_file: Path, last: Path) -> list[str]:
    d = Path(call.directory).resolve()
    mcp = cc.mcp_command(call)
    model = call.argument or call.options.get("model")
    cmd = [exe, "exec", "--json", "--ephemeral", "--skip-git-repo-check", "--ignore-user-config", "--ignore-rules",
           "-C", str(cwd), "-s", "read-only",
           "-c", 'approval_policy="never"', "-c", 'web_search="disabled"']
    for f in DISABLED_FEATURES:
        cmd += ["--disable", f]
    settings: dict[str, Any] = {
        f"mcp_servers.{cc.SERVER}.command": mcp[0], f"mcp_servers.{cc.SERVER}.args": mcp[1:],
        f"mcp_servers.{cc.SERVER}.env": cc.mcp_env(call),
        f"mcp_servers.{cc.SERVER}.default_tools_approval_mode": "approve",
        f"mcp_servers.{cc.SERVER}.startup_timeout_sec": 60,
        f"mcp_servers.{cc.SERVER}.required": True,
        "model_instructions_file": str(d / "prompt.md"),
        "include_environment_context": False, "include_permissions_instructions": False,
        "skills.bundled.enabled": False,
    }
    extra = call.options.get("config")
    if isinstance(extra, dict):
        settings.update(extra)  # e.g. a model provider of one's own (the tests' fake server)
    for k, v in settings.items():
        cmd += ["-c", f"{k}={toml_value(v)}"]
    if model:
        cmd += ["-m", str(model)]
    cmd += ["--output-schema", str(schema_file), "-o", str(last), USER_PROMPT]
    return cmd


KEYS = ("CODEX_API_KEY", "OPENAI_API_KEY")
"""Keys ``codex exec`` takes from the environment when it is not logged in."""


def provider_of(options: dict[str, Any]) -> tuple[str | None, str | None]:
    """The model provider asz.yaml's ``config`` gives codex (None: OpenAI's own, which needs a login
    or a key) and the variable that provider reads its key from (None: it needs none), written
    dotted (``model_providers.P.env_key``) or nested, as ``-c`` takes either."""
    cfg = options.get("config")
    if not isinstance(cfg, dict) or not isinstance(cfg.get("model_provider"), str) or cfg["model_provider"] == "openai":
        return None, None
    p = cfg["model_provider"]
    nested = cfg.get("model_providers")
    table = nested.get(p) if isinstance(nested, dict) else cfg.get(f"model_providers.{p}")
    key = cfg.get(f"model_providers.{p}.env_key")
    if key is None and isinstance(table, dict):
        key = table.get("env_key")
    return p, str(key) if key else None


class CodexEvaluator(EvaluatorBackend):
    """``codex exec``, reading through ``asz judge mcp`` only. Picked unasked after the claude CLI
    and the API backends, when codex runs here and is logged in (or a key is set)."""

    name: ClassVar[str] = "codex"
    default_order: ClassVar[int | None] = 50

    @classmethod
    def available(cls, options: dict[str, Any]) -> Availability:
        """It can run here when the codex CLI is found, says its version, and ``codex login status``
        says it is logged in (read from its own files: it checks the login only when a request is
        sent), or CODEX_API_KEY or OPENAI_API_KEY is set; or, given a model provider of its own in
        asz.yaml's ``config``, when the variable that provider reads its key from is set."""
        found = cc.runnable("codex", "ASZ_CODEX", options, "the codex CLI",
                            "install the codex CLI (npm @openai/codex), run `codex login` (or set CODEX_API_KEY)")
        if isinstance(found, Availability):
            return found
        exe, version = found
        argument = cc.model_option(options)
        provider, key_env = provider_of(options)
        if provider is not None:  # a provider of asz.yaml's: its key, not codex's login, is what it needs
            if key_env and not os.environ.get(key_env):
                return Availability(False, f"the codex CLI's model provider {provider} (asz.yaml) reads its key from "
                                           f"{key_env}, which is not set")
            return Availability(True, f"the codex CLI is on the PATH ({exe}, {version}) with the model provider "
                                      f"{provider} of asz.yaml" + (f" ({key_env} is set)" if key_env else ""), argument)
        status = cc.run_briefly([exe, "login", "status"])
        if not isinstance(status, str) and status.returncode == 0:
            said = status.stdout + status.stderr
            how = "an API key" if "API key" in said else "ChatGPT" if "ChatGPT" in said else "logged in"
            return Availability(True, f"the codex CLI is on the PATH ({exe}, {version}) and logged in ({how})", argument)
        key = next((k for k in KEYS if os.environ.get(k)), None)
        if key:
            return Availability(True, f"the codex CLI is on the PATH ({exe}, {version}) and {key} is set", argument)
        return Availability(False, f"the codex CLI ({exe}) is not logged in: run `codex login` (or set CODEX_API_KEY)")

    @classmethod
    def check(cls, argument: str | None, options: dict[str, Any]) -> None:
        cc.find_executable("codex", None, "ASZ_CODEX", options)  # the CLI must be there before the run starts
        # and logged in (or given a key): what the automatic choice asks, so a named codex that is not
        # fails now, in one line, not once per call of a run
        cls.available(options).require(cls.name)

    def judge(self, call: EvaluatorCall) -> CallResult:
        exe = cc.find_executable("codex", call, "ASZ_CODEX")
        d = Path(call.directory).resolve()
        if not (d / "prompt.md").is_file():
            write_once(d / "prompt.md", call.prompt.encode())
        schema_file = d / "output-schema.json"
        write_once(schema_file, orjson.dumps(strict_schema(call.schema), option=orjson.OPT_INDENT_2))
        last = d / "last-message.txt"
        env = dict(os.environ)
        env.update(cc.mcp_env(call))
        model = call.argument or call.options.get("model")
        model = str(model) if model else None
        stream = CodexStream()

        def on_line(line: str) -> str | None:
            ev = cc.json_line(line)
            return stream.feed(ev) if ev is not None else None

        fin = cc.run_lines(command(call, exe, cc.workdir(call), schema_file, last), cwd=cc.workdir(call), env=env,
                           timeout=cc.timeout_of(call), stream_file=d / "stream.jsonl", on_line=on_line,
                           tick=cc.tick_of(call))  # codex says what a call consumed only when it ends
        cc.count_reads(call)
        stopped = bool(fin.stopped or fin.timed_out)
        requests = stream.requests(model, stopped)
        notes = [f"codex: {e}" for e in stream.errors]
        notes.append(f"codex: requests one by one are {PER_REQUEST}")
        cc.write_usage(call, {"per_request": PER_REQUEST, "turns": [t["usage"] for t in stream.turns],
                              "thread": stream.thread, "model": model, "exit_code": fin.rc, "errors": stream.errors})
        stderr = "\n".join(notes) + ("\n" + fin.stderr if fin.stderr else "")
        common = dict(requests=tuple(requests), model=model, stderr=stderr)
        if fin.stopped:
            return CallResult(error=fin.stopped, **common)
        if fin.timed_out:
            return CallResult(error=f"codex was stopped after {cc.timeout_of(call):g} s", **common)
        if stream.failed:
            return CallResult(error=f"codex's turn failed: {stream.failed}", **common)
        if not stream.turns:
            said = next((x.strip() for x in fin.stderr.splitlines() if x.startswith("Error:")), "")
            return CallResult(error=f"codex ended (exit code {fin.rc}) before its turn completed"
                                    + (f": {said[:500]}" if said else ""), **common)
        text = stream.message
        if text is None and last.is_file():
            text = last.read_text(encoding="utf-8")
        text = text or ""
        answer = cc.parse_json_answer(text)
        if isinstance(answer, dict):
            answer = drop_added_nulls(answer, call.schema)
        return CallResult(answer=answer, raw=text, **common)
