"""A fake ``kiro-cli``, built from Kiro's documented headless behaviour (kiro-cli cannot be
installed here; see docs/evaluators/kiro-cli.md):

``kiro-cli chat --no-interactive --agent NAME [--trust-all-tools] [--model M]
[--output-format stream-json] PROMPT`` reads the agent file ``.kiro/agents/NAME.json`` of its
working directory, starts the agent's MCP servers, and prints NDJSON frames
``{"type": "runStarted"|"sessionUpdate"|"metadata"|"runFinished", "data": {...}}`` (without
``--output-format`` it prints plain text ending in a ``▸ Credits: X • Time: Ys`` line). It keeps
the session under ``$HOME/.kiro/sessions/cli/``. ``kiro-cli whoami`` says "Logged in with Builder
ID" (exit code 0), or "Not logged in" (exit code 1) when ``FAKE_KIRO_LOGIN`` is ``none``.

What it does is scripted: ``FAKE_KIRO_SCRIPT`` is a JSON list, one entry per invocation:
``{"reads": [{"tool", "args", "delay"}], "answer": {...} | "text": "...", "credits": 1.5, "context": 12.5,
"fail": "why", "no_metadata": true}``. Each invocation appends what it did to ``FAKE_KIRO_LOG``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any


def out(kind: str, data: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"type": kind, "data": data}) + "\n")
    sys.stdout.flush()


async def read_all(server: dict[str, Any], reads: list[dict[str, Any]], log: dict[str, Any], sid: str, structured: bool) -> None:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=server["command"], args=server.get("args") or [],
                                   env={**os.environ, **(server.get("env") or {})})
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            log["tools"] = sorted(t.name for t in (await s.list_tools()).tools)
            for k, rd in enumerate(reads):
                tid = f"tooluse_{k + 1}"
                if rd.get("delay"):
                    await asyncio.sleep(float(rd["delay"]))
                if structured:
                    out("sessionUpdate", {"sessionId": sid, "update": {"sessionUpdate": "tool_call", "toolCallId": tid,
                                                                      "title": f"@asz/{rd['tool']}", "kind": "read",
                                                                      "rawInput": rd.get("args") or {}, "status": "pending"}})
                try:
                    res = await asyncio.wait_for(s.call_tool(rd["tool"], rd.get("args") or {}), 10)
                    text = "".join(getattr(c, "text", "") for c in res.content)
                    status = "failed" if res.is_error else "completed"
                except Exception as exc:  # the server ended
                    text, status = f"tool call failed: {type(exc).__name__}: {exc}", "failed"
                log["results"].append({"tool": rd["tool"], "status": status, "text": text[:300]})
                if structured:
                    out("sessionUpdate", {"sessionId": sid, "update": {"sessionUpdate": "tool_call_update", "toolCallId": tid,
                                                                      "status": status, "rawOutput": text}})


def main(argv: list[str]) -> int:
    if argv[:1] == ["--version"]:
        print("kiro-cli 0.0.0-fake")
        return 0
    if argv[:1] == ["whoami"]:  # as kiro-cli's whoami says it (its own login store; no service asked)
        if os.environ.get("FAKE_KIRO_LOGIN", "builder-id") == "none":
            print("Not logged in")
            return 1
        print("Logged in with Builder ID")
        return 0
    if argv[:1] != ["chat"] or "--no-interactive" not in argv:
        print("fake kiro-cli: only `chat --no-interactive` is faked", file=sys.stderr)
        return 2
    agent = argv[argv.index("--agent") + 1]
    structured = "--output-format" in argv and argv[argv.index("--output-format") + 1] == "stream-json"
    prompt = argv[-1]
    script = Path(os.environ["FAKE_KIRO_SCRIPT"])
    counter = script.with_name(script.name + ".n")
    n = int(counter.read_text()) if counter.is_file() else 0
    counter.write_text(str(n + 1))
    entries = json.loads(script.read_text())
    entry = entries[n] if n < len(entries) else {"text": "done"}
    cfg = json.loads((Path.cwd() / ".kiro" / "agents" / f"{agent}.json").read_text())
    sid = str(uuid.uuid4())
    log: dict[str, Any] = {"n": n + 1, "argv": argv, "cwd": str(Path.cwd()), "agent": cfg, "prompt": prompt, "results": [],
                           "session": sid}
    if structured:
        out("runStarted", {"sessionId": sid})
    servers = cfg.get("mcpServers") or {}
    if cfg.get("tools") != ["@asz"] or set(servers) != {"asz"} or cfg.get("includeMcpJson") is not False:
        log["refused"] = "the agent holds more than asz's tools"
    else:
        asyncio.run(read_all(servers["asz"], entry.get("reads") or [], log, sid, structured))
    text = json.dumps(entry["answer"]) if "answer" in entry else entry.get("text", "done")
    credits = entry.get("credits", 0.25 * (n + 1))
    log["credits"] = credits
    home = Path(os.environ.get("HOME", "~")).expanduser()
    sessions = home / ".kiro" / "sessions" / "cli"
    sessions.mkdir(parents=True, exist_ok=True)
    (sessions / f"{sid}.json").write_text(json.dumps({"session_id": sid, "cwd": str(Path.cwd()),
                                                      "metering_usage": [{"value": credits, "unit": "credit"}]}))
    with open(os.environ["FAKE_KIRO_LOG"], "a") as f:
        f.write(json.dumps(log) + "\n")
    if entry.get("fail"):
        if structured:
            out("runFinished", {"sessionId": sid, "status": "error", "stopReason": entry["fail"]})
        print(f"error: {entry['fail']}", file=sys.stderr)
        return 1
    if not structured:
        print(text)
        print(f"\n▸ Credits: {credits} • Time: 2s")
        return 0
    for k in range(0, len(text), 40):
        out("sessionUpdate", {"sessionId": sid, "update": {"sessionUpdate": "agent_message_chunk",
                                                          "content": {"type": "text", "text": text[k:k + 40]}}})
    if not entry.get("no_metadata"):
        out("metadata", {"sessionId": sid, "contextUsagePercentage": entry.get("context", 3.5),
                         "meteringUsage": [{"value": credits, "unit": "credit", "unitPlural": "credits"}],
                         "turnDurationMs": 2000})
    out("runFinished", {"sessionId": sid, "status": "completed", "stopReason": "end_turn"})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
