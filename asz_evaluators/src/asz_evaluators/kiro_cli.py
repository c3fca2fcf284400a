"""``kiro-cli``: Kiro's CLI run headless (``kiro-cli chat --no-interactive``) as an evaluator
(docs/evaluators/kiro-cli.md). Not yet verified on a real install: it is built from Kiro's
documented behaviour and tested against a fake ``kiro-cli``.

The call's own directory gets an agent file, ``.kiro/agents/asz-judge.json``, whose only tools
are asz's MCP server (``tools: ["@asz"]``, ``includeMcpJson: false`` so no other MCP
configuration is merged in) and whose prompt is the stage prompt followed by the answer schema
(Kiro has no schema flag: the answer is read from its final text and checked by the stage). kiro-cli runs there with that
agent, trusting only the agent's tools.

Kiro reports credits and the share of the context used, not tokens: each turn it reports is one
line in requests.jsonl whose token counts are unknown (never zero), and the credits go to the
attempt's usage.json with their unit, ``credits``. Kiro keeps every chat session, per
directory, under ``~/.kiro`` and documents no way to turn that off: a kiro-cli call leaves its
session in Kiro's history (the attempt's stderr.txt says so).
"""

from __future__ import annotations

import os
import re
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, ClassVar

import orjson

from asz_core.interfaces import Availability, EvaluatorBackend
from asz_core.judge.context import write_once
from asz_core.judge.judgment import CallResult, EvaluatorCall, Request

from . import cli_common as cc

AGENT = "asz-judge"
USER_PROMPT = ("Judge as your instructions say. Read the conversation only through the asz tools, then give your "
               "answer as one JSON object that meets the answer schema in your instructions, and nothing else.")
SESSION_NOTE = ("kiro-cli keeps every chat session, per directory, under ~/.kiro, and documents no way to turn that "
                "off: this call's session stays in Kiro's history")
UNIT = "credits"
FOREIGN_KINDS = ("edit", "delete", "move", "execute", "fetch")
_CREDITS = re.compile(r"Credits:\s*([0-9]+(?:\.[0-9]+)?)")


def _decimal(v: Any) -> Decimal | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float, str)):
        try:
            return Decimal(str(v))
        except InvalidOperation:
            return None
    return None


def agent_file(call: EvaluatorCall) -> dict[str, Any]:
    mcp = cc.mcp_command(call)
    prompt = Path(call.directory).resolve() / "kiro-prompt.md"
    agent: dict[str, Any] = {
        "name": AGENT, "description": "asz judge: reads one recorded conversation through asz's read-only tools",
        "prompt": f"file://{prompt}",
        "mcpServers": {cc.SERVER: {"command": mcp[0], "args": mcp[1:], "env": cc.mcp_env(call), "timeout": 120000}},
        "tools": [f"@{cc.SERVER}"], "allowedTools": [f"@{cc.SERVER}"], "includeMcpJson": False,
        "toolAliases": {}, "toolsSettings": {}, "resources": [], "hooks": {},
    }
    model = call.argument or call.options.get("model")
    if model:
        agent["model"] = str(model)
    return agent


def kiro_prompt(call: EvaluatorCall) -> str:
    """The stage prompt, then the answer schema (Kiro has no flag that holds the answer to one)."""
    schema = orjson.dumps(cc.plain_schema(call.schema), option=orjson.OPT_INDENT_2).decode()
    return (call.prompt.rstrip() + "\n\n## Your answer\n\nAnswer with one JSON object, and nothing else, that meets "
            "this JSON schema:\n\n```json\n" + schema + "\n```\n")


class KiroStream:
    """kiro-cli's ``--output-format stream-json`` frames, or its plain text when it has none."""

    def __init__(self) -> None:
        self.frames = 0
        self.text_lines: list[str] = []
        self.chunks: list[str] = []
        self.turns: list[dict[str, Any]] = []
        """Each metadata frame: credits (Decimal or None), context share, time."""
        self.finished: dict[str, Any] | None = None
        self.session: str | None = None
        self.reads: list[str] = []
        self.started = False

    def feed(self, line: str) -> str | None:
        frame = cc.json_line(line)
        if frame is None or "type" not in frame:
            self.text_lines.append(line)
            return None
        self.frames += 1
        t, data = frame.get("type"), frame.get("data") if isinstance(frame.get("data"), dict) else {}
        self.session = data.get("sessionId") or self.session
        if t == "runStarted":
            self.started = True
        elif t == "metadata":
            usage = data.get("meteringUsage")
            credits: Decimal | None = None
            if isinstance(usage, list):
                vals = [_decimal(u.get("value")) for u in usage if isinstance(u, dict)]
                credits = sum((v for v in vals if v is not None), Decimal(0)) if any(v is not None for v in vals) else None
            self.turns.append({"credits": credits, "context_usage_percentage": data.get("contextUsagePercentage"),
                               "turn_duration_ms": data.get("turnDurationMs"), "reads": tuple(self.reads)})
            self.reads = []
        elif t == "sessionUpdate":
            up = data.get("update") if isinstance(data.get("update"), dict) else {}
            kind = up.get("sessionUpdate") or up.get("type")
            if kind == "agent_message_chunk":
                c = up.get("content")
                if isinstance(c, dict) and isinstance(c.get("text"), str):
                    self.chunks.append(c["text"])
            elif kind == "tool_call":
                if up.get("kind") in FOREIGN_KINDS:
                    return f"kiro-cli used a tool other than asz's: {up.get('title') or up.get('kind')}"
                title = str(up.get("title") or up.get("name") or "")
                self.reads.append(title.split("/")[-1])
                self.chunks = []  # the answer is what it says after its last read
        elif t == "runFinished":
            self.finished = data
        return None

    @property
    def structured(self) -> bool:
        return self.frames > 0

    def answer_text(self) -> str:
        if self.structured:
            return "".join(self.chunks)
        lines = [x for x in self.text_lines if not _CREDITS.search(x)]
        return "\n".join(lines).strip()

    def text_credits(self) -> Decimal | None:
        for line in reversed(self.text_lines):
            m = _CREDITS.search(line)
            if m:
                return Decimal(m.group(1))
        return None

    def requests(self, model: str | None) -> list[Request]:
        """One line per turn Kiro reported: its tokens unknown (Kiro says credits, not tokens);
        a call that reported nothing is one request apart."""
        if not self.structured:
            return [Request(model=model, said=self.text_credits() is not None, credits=self.text_credits())]
        out = [Request(model=model, said=True, reads=t["reads"], credits=t["credits"]) for t in self.turns]
        if not out:
            out.append(Request(model=model, said=False, reads=tuple(self.reads)))
        return out

    def credits(self) -> Decimal | None:
        if not self.structured:
            return self.text_credits()
        vals = [t["credits"] for t in self.turns if t["credits"] is not None]
        return sum(vals, Decimal(0)) if vals else None


def command(call: EvaluatorCall, exe: str) -> list[str]:
    cmd = [exe, "chat", "--no-interactive", "--agent", AGENT, "--trust-all-tools"]
    fmt = call.options.get("output_format", "stream-json")
    if fmt:
        cmd += ["--output-format", str(fmt)]
    model = call.argument or call.options.get("model")
    if model:
        cmd += ["--model", str(model)]
    return [*cmd, USER_PROMPT]


class KiroEvaluator(EvaluatorBackend):
    """kiro-cli, headless, with an agent that holds only asz's navigation. Picked unasked last of
    the shipped backends, when kiro-cli runs here and is logged in or KIRO_API_KEY is set."""

    name: ClassVar[str] = "kiro-cli"
    default_order: ClassVar[int | None] = 60
    notes: ClassVar[tuple[str, ...]] = (SESSION_NOTE,)
    """Written with the evaluator in every stage file it judged and in run.json (and in each
    attempt's stderr.txt and usage.json)."""

    @classmethod
    def available(cls, options: dict[str, Any]) -> Availability:
        """It can run here when kiro-cli is found, says its version, and KIRO_API_KEY is set (Kiro's
        key for headless use) or ``kiro-cli whoami`` says it is logged in (exit code 0; Kiro's
        documented way to see which login is active: it reads kiro-cli's own store, and prints
        "Not logged in" with exit code 1 when there is none)."""
        found = cc.runnable("kiro-cli", "ASZ_KIRO_CLI", options, "kiro-cli",
                            "install kiro-cli, run `kiro-cli login` (or set KIRO_API_KEY)")
        if isinstance(found, Availability):
            return found
        exe, version = found
        model = cc.model_option(options)
        if os.environ.get("KIRO_API_KEY"):
            return Availability(True, f"kiro-cli is on the PATH ({exe}, {version}) and KIRO_API_KEY is set", model)
        who = cc.run_briefly([exe, "whoami"])
        if isinstance(who, str) or who.returncode != 0:
            return Availability(False, f"kiro-cli ({exe}) is not logged in: run `kiro-cli login` (or set KIRO_API_KEY)")
        said = next((x.strip() for x in who.stdout.splitlines() if x.strip()), "")[:100]
        how = said[len("logged in with "):] if said.lower().startswith("logged in with ") else said
        return Availability(True, f"kiro-cli is on the PATH ({exe}, {version}) and logged in" + (f" ({how})" if how else ""),
                            model)

    @classmethod
    def check(cls, argument: str | None, options: dict[str, Any]) -> None:
        cc.find_executable("kiro-cli", None, "ASZ_KIRO_CLI", options)  # the CLI must be there before the run starts
        # and logged in (or given its key): a named kiro-cli that is not fails now, in one line
        cls.available(options).require(cls.name)

    def judge(self, call: EvaluatorCall) -> CallResult:
        exe = cc.find_executable("kiro-cli", call, "ASZ_KIRO_CLI")
        d = Path(call.directory).resolve()
        if not (d / "prompt.md").is_file():
            write_once(d / "prompt.md", call.prompt.encode())
        write_once(d / "kiro-prompt.md", kiro_prompt(call).encode())
        cwd = cc.workdir(call)
        agents = cwd / ".kiro" / "agents"
        agents.mkdir(parents=True, exist_ok=True)
        write_once(agents / f"{AGENT}.json", orjson.dumps(agent_file(call), option=orjson.OPT_INDENT_2))
        env = dict(os.environ)
        env.update(cc.mcp_env(call))
        model = call.argument or call.options.get("model")
        model = str(model) if model else None
        stream = KiroStream()
        fin = cc.run_lines(command(call, exe), cwd=cwd, env=env, timeout=cc.timeout_of(call),
                           stream_file=d / "stream.jsonl", on_line=stream.feed,
                           tick=cc.tick_of(call, lambda: stream.requests(model)))
        cc.count_reads(call)
        credits = stream.credits()
        cc.write_usage(call, {"unit": UNIT, "credits": str(credits) if credits is not None else None,
                              "tokens": "unavailable: kiro-cli reports credits and context use, not tokens",
                              "turns": [{k: (str(v) if isinstance(v, Decimal) else v) for k, v in t.items()}
                                        for t in stream.turns],
                              "session": stream.session, "sessions_kept": SESSION_NOTE, "exit_code": fin.rc,
                              "verified": "not yet on a real kiro-cli install"})
        stderr = f"kiro-cli: {SESSION_NOTE}" + (f" (session {stream.session})" if stream.session else "") + "\n"
        stderr += f"kiro-cli: consumed {credits if credits is not None else 'an unknown number of'} {UNIT} (tokens unavailable)\n"
        stderr += fin.stderr
        common = dict(requests=tuple(stream.requests(model)), model=model, stderr=stderr)
        if fin.stopped:
            return CallResult(error=fin.stopped, **common)
        if fin.timed_out:
            return CallResult(error=f"kiro-cli was stopped after {cc.timeout_of(call):g} s", **common)
        fs = stream.finished or {}
        status = str(fs.get("status") or "").lower()
        if fin.rc != 0 or (stream.structured and (stream.finished is None or status not in ("", "completed", "success", "ok"))):
            why = fs.get("stopReason") or fs.get("error") or fs.get("status") or (fin.stderr.strip().splitlines() or [""])[-1]
            return CallResult(error=f"kiro-cli failed (exit code {fin.rc}): {why}".rstrip(": "), **common)
        text = stream.answer_text()
        return CallResult(answer=cc.parse_json_answer(text), raw=text, **common)
