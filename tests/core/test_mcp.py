"""`asz judge mcp` driven over stdio by the mcp SDK's own client: tools listed read-only, calls
answered as the navigator answers them, errors never crash it, the log, and the end after three
refused answers."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from asz_core import navigation as N

ASZ = Path(sys.executable).parent / "asz"


def _params(home: Path, *args: str) -> Any:
    from mcp import StdioServerParameters

    env = {**os.environ, "ASZ_HOME": str(home)}
    return StdioServerParameters(command=str(ASZ), args=["judge", "mcp", *args], env=env)


async def _session(params: Any, body: Any) -> Any:
    from mcp import ClientSession, stdio_client

    with anyio.fail_after(60):
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                return await body(s)


def _text(res: Any) -> str:
    assert len(res.content) == 1
    return res.content[0].text


def test_stdio_tools_calls_and_log(corpus_store: Any, tmp_path: Path) -> None:
    home = Path(corpus_store.path).parent
    log = tmp_path / "reads.jsonl"

    async def body(s: Any) -> dict[str, Any]:
        tools = (await s.list_tools()).tools
        out: dict[str, Any] = {"tools": tools}
        out["card"] = await s.call_tool("card", {})
        out["talks"] = await s.call_tool("talks", {"page": 1})
        out["talk"] = await s.call_tool("talk", {"id": "k2"})
        out["step"] = await s.call_tool("step", {"id": "s3", "offset": 0})
        out["search"] = await s.call_tool("search", {"query": "error"})
        out["bad"] = await s.call_tool("step", {"id": ["not", "an", "id"], "offset": "x"})
        out["missing"] = await s.call_tool("talk", {"id": "k999"})
        out["after"] = await s.call_tool("card", {})
        return out

    got = anyio.run(_session, _params(home, "fa812bfe", "--window", "k2", "--log", str(log)), body)
    tools = got["tools"]
    assert sorted(t.name for t in tools) == sorted(N.TOOLS)
    for t in tools:
        a = t.annotations
        assert (a.read_only_hint, a.destructive_hint, a.open_world_hint) == (True, False, False)
    card = json.loads(_text(got["card"]))
    assert card["head"]["round"] == "r1" and card["window"]["judged"]["first"] == "k2"
    talks = json.loads(_text(got["talks"]))
    assert [r["mark"] for r in talks["talks"]] == ["before", "judged"]
    assert json.loads(_text(got["talk"]))["talk"]["id"] == "k2"
    assert "text" in json.loads(_text(got["step"]))
    assert json.loads(_text(got["search"]))["matches"] > 0
    assert got["bad"].is_error and "error" in json.loads(_text(got["bad"]))
    assert got["missing"].is_error and "no talk k999" in json.loads(_text(got["missing"]))["error"]
    assert not got["after"].is_error  # still serving
    entries = [json.loads(x) for x in log.read_text().splitlines()]
    assert [e["tool"] for e in entries] == ["card", "talks", "talk", "step", "search", "step", "talk", "card"]
    texts = [_text(got[k]) for k in ("card", "talks", "talk", "step", "search", "bad", "missing", "after")]
    assert [e["bytes"] for e in entries] == [len(t.encode()) for t in texts]
    assert entries[-1]["used"] == sum(len(t.encode()) for t in texts)
    assert json.loads(texts[-1])["budget_left"] == N.READ_BYTES - entries[-1]["used"]


def test_stdio_ends_after_three_refusals(corpus_store: Any, tmp_path: Path) -> None:
    from mcp import MCPError

    home = Path(corpus_store.path).parent
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"conversation": "258c7280", "head": "r1", "window": "k1",
                                               "config": {"judge": {"read_bytes": 800}}}))

    async def body(s: Any) -> list[Any]:
        out = []
        for _ in range(4):
            out.append(await s.call_tool("talks", {}))
            await anyio.sleep(0.05)
        await anyio.sleep(1.0)
        try:
            out.append(await s.call_tool("card", {}))
        except (MCPError, anyio.ClosedResourceError, anyio.BrokenResourceError, Exception) as exc:  # the server is gone
            out.append(exc)
        return out

    try:
        got = anyio.run(_session, _params(home, "--run", str(run), "--call", "c1"), body)
    except BaseException as exc:  # the client may see the server's end as a broken session
        got = None
        assert not isinstance(exc, (AssertionError, TimeoutError)), exc
    entries = [json.loads(x) for x in (run / "calls" / "c1" / "reads.jsonl").read_text().splitlines()]
    statuses = [e["status"] for e in entries]
    assert statuses[:3] == ["refused"] * 3  # the talks page is larger than 800 bytes
    assert statuses[3:] in ([], ["ended"])  # a call that came before the server stopped is told it ended
    assert all(e["used"] == 0 for e in entries)
    assert "card" not in [e["tool"] for e in entries[3:] if e["status"] == "ok"]
    if got is not None:
        first = json.loads(_text(got[0]))
        assert first["refused"] and "unknown" in first["message"]
        assert not isinstance(got[-1], type(got[0])) or got[-1].is_error


def test_in_memory_client_and_the_end_callback(corpus_store: Any) -> None:
    """The server object with the SDK's in-memory client: the end is signalled after the third refusal."""
    import mcp

    from asz_core.mcp_server import build_server
    from asz_core.registry import Registry
    from asz_core.window import build

    w = build(corpus_store, "258c7280", None, "k1")
    nav = N.Navigator(w, corpus_store, budget=700, adapter=Registry().runtime(w.conv.runtime))
    ended: list[int] = []
    server = build_server(nav, on_end=lambda: ended.append(nav.calls))

    async def body() -> list[Any]:
        async with mcp.Client(server) as c:
            tools = (await c.list_tools()).tools
            assert all(t.annotations.read_only_hint for t in tools)
            out = [await c.call_tool("records", {"step": "s1"})]
            out += [await c.call_tool("talks", {}) for _ in range(3)]
            return out

    got = anyio.run(body)
    assert not got[0].is_error and all(r.is_error for r in got[1:])
    assert nav.refusals == 3 and ended == [4]


def test_bad_window_or_missing_store_is_a_clear_error(corpus_store: Any, tmp_path: Path) -> None:
    import subprocess

    home = Path(corpus_store.path).parent
    r = subprocess.run([str(ASZ), "judge", "mcp", "fa812bfe", "--window", "k999"], env={**os.environ, "ASZ_HOME": str(home)},
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and "k999 is not a main talk" in r.stderr
    empty = tmp_path / "nohome"
    r = subprocess.run([str(ASZ), "judge", "mcp", "fa812bfe"], env={**os.environ, "ASZ_HOME": str(empty)},
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and "no asz store" in r.stderr and not empty.exists()
