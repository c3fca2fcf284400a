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


def _run_dir(tmp_path: Path, conversation: str, window: str, read_bytes: int) -> Path:
    """A run directory whose run.json names what `asz judge mcp --run` serves, with a small budget."""
    from asz_core.convert import dumps
    from asz_core.judge.judgment import VERSION, PriceRef, RunFile

    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_bytes(dumps(RunFile(
        version=VERSION, run="run", conversation=conversation, runtime="claudecode", head="r1", head_digest="0" * 64,
        window=window, window_detail={}, prices=PriceRef(name="prices", path=None, sha256="0" * 64), kit="0" * 64,
        kit_path="", config={"judge": {"read_bytes": read_bytes}}, stages=(), evaluators={}, plugins={}, asz="",
        started="2026-01-01T00:00:00Z")))
    return run


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
    run = _run_dir(tmp_path, "258c7280", "k1", 800)

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
    server = build_server(nav, on_end=lambda request_id: ended.append(nav.calls))

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


# --- the real server process, spoken to line by line (what the SDK client never sends) ------------

class _Raw:
    """`asz judge mcp` as a child process, spoken to in raw JSON-RPC lines; every read times out."""

    def __init__(self, home: Path, *args: str) -> None:
        import subprocess

        self.p = subprocess.Popen([str(ASZ), "judge", "mcp", *args], env={**os.environ, "ASZ_HOME": str(home)},
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.send_obj({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
        assert "result" in self.recv()
        self.send_obj({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, line: bytes) -> None:
        assert self.p.stdin is not None
        self.p.stdin.write(line + b"\n")
        self.p.stdin.flush()

    def send_obj(self, obj: Any) -> None:
        self.send(json.dumps(obj).encode())

    def recv(self, timeout: float = 30) -> dict[str, Any]:
        import select

        assert self.p.stdout is not None
        ready, _, _ = select.select([self.p.stdout], [], [], timeout)
        assert ready, "no reply"
        line = self.p.stdout.readline()
        assert line, "the server closed its output"
        return json.loads(line)

    def call(self, rid: int, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        self.send_obj({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": tool, "arguments": args}})
        got = self.recv()
        assert got["id"] == rid
        return got

    def close(self) -> None:
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait(10)


def test_the_server_process_exits_after_the_third_refusal_with_stdin_still_open(corpus_store: Any, tmp_path: Path) -> None:
    import time

    home = Path(corpus_store.path).parent
    run = _run_dir(tmp_path, "fa812bfe", "k2", 600)
    raw = _Raw(home, "--run", str(run), "--call", "c1")
    try:
        answers = [raw.call(n, "talks", {}) for n in (1, 2, 3)]
        assert all(a["result"]["isError"] and json.loads(a["result"]["content"][0]["text"])["refused"] for a in answers)
        t0 = time.monotonic()
        code = raw.p.wait(15)  # stdin is never closed: the server ends on its own
        assert code == 0 and time.monotonic() - t0 < 10
        assert "ended after 3 refused answers" in raw.p.stderr.read().decode()  # type: ignore[union-attr]
    finally:
        raw.close()
    entries = [json.loads(x) for x in (run / "calls" / "c1" / "reads.jsonl").read_text().splitlines()]
    assert [e["status"] for e in entries] == ["refused"] * 3
    # An agent CLI starts the server again when it ended (claude does): the call's navigation has
    # ended, so the new one does not serve, and the budget is not given afresh.
    import subprocess

    again = subprocess.run([str(ASZ), "judge", "mcp", "--run", str(run), "--call", "c1"], input=b"",
                           env={**os.environ, "ASZ_HOME": str(home)}, capture_output=True, timeout=60)
    assert again.returncode == 0 and b"already ended" in again.stderr and again.stdout == b""
    assert len((run / "calls" / "c1" / "reads.jsonl").read_text().splitlines()) == 3


def test_a_server_started_again_mid_call_goes_on_with_the_call_s_budget(corpus_store: Any, tmp_path: Path) -> None:
    home = Path(corpus_store.path).parent
    log = tmp_path / "reads.jsonl"
    raw = _Raw(home, "fa812bfe", "--window", "k2", "--log", str(log))
    try:
        first = raw.call(1, "card", {})["result"]["content"][0]["text"]
    finally:
        raw.close()
    raw = _Raw(home, "fa812bfe", "--window", "k2", "--log", str(log))
    try:
        second = raw.call(1, "card", {})["result"]["content"][0]["text"]
    finally:
        raw.close()
    entries = [json.loads(x) for x in log.read_text().splitlines()]
    assert [e["n"] for e in entries] == [1, 2]
    assert entries[-1]["used"] == len(first.encode()) + len(second.encode())
    assert json.loads(second)["budget_left"] == N.READ_BYTES - entries[-1]["used"]


def test_an_integer_past_64_bits_is_a_tool_error_logged_and_charged_as_answered(corpus_store: Any, tmp_path: Path) -> None:
    home = Path(corpus_store.path).parent
    log = tmp_path / "reads.jsonl"
    raw = _Raw(home, "fa812bfe", "--window", "k2", "--log", str(log))
    texts = []
    try:
        cases = [("talks", {"page": 2**64}), ("step", {"id": "s3", "offset": 2**64 + 5}),
                 ("search", {"query": "error", "page": -(2**64)}), ("talk", {"id": "k2", "page": 10**30})]
        for n, (tool, args) in enumerate(cases, 1):
            res = raw.call(n, tool, args)["result"]  # a tool's answer, not a JSON-RPC error
            assert res["isError"]
            text = res["content"][0]["text"]
            name = next(iter(k for k, v in args.items() if isinstance(v, int)))
            assert f"{name}: {args[name]} is out of range" in json.loads(text)["error"]
            texts.append(text)
        card = raw.call(9, "card", {})["result"]
        assert not card["isError"]
        texts.append(card["content"][0]["text"])
    finally:
        raw.close()
    entries = [json.loads(x) for x in log.read_text().splitlines()]
    assert [e["tool"] for e in entries] == ["talks", "step", "search", "talk", "card"]
    assert [e["status"] for e in entries] == ["error"] * 4 + ["ok"]
    assert entries[0]["args"] == {"page": str(2**64)}
    # Charged exactly the bytes answered, no more.
    assert [e["bytes"] for e in entries] == [len(t.encode()) for t in texts]
    assert entries[-1]["used"] == sum(len(t.encode()) for t in texts)
    assert json.loads(texts[-1])["budget_left"] == N.READ_BYTES - entries[-1]["used"]


def test_arguments_that_are_no_json_object_are_a_tool_error_charged_and_logged(corpus_store: Any, tmp_path: Path) -> None:
    """The SDK alone answers a list, a string or a number as arguments with a protocol error the budget
    never sees, and runs a call whose arguments are null with none: here each is the navigator's tool
    error, logged and charged; arguments left out still mean none."""
    home = Path(corpus_store.path).parent
    log = tmp_path / "reads.jsonl"
    raw = _Raw(home, "fa812bfe", "--window", "k2", "--log", str(log))
    bad: list[Any] = [["s1"], "x", 3, 2.5, True, None, [{"id": "k2"}]]
    texts = []
    try:
        for n, args in enumerate(bad, 1):
            res = raw.call(n, "talk", args)["result"]  # type: ignore[arg-type]
            assert res["isError"], args
            text = res["content"][0]["text"]
            assert json.loads(text)["error"].startswith("the arguments are not a JSON object: "), args
            texts.append(text)
        raw.send_obj({"jsonrpc": "2.0", "id": 20, "method": "tools/call", "params": {"name": "card"}})
        card = raw.recv()["result"]
        assert not card["isError"]
        texts.append(card["content"][0]["text"])
        # What is no tool call stays the SDK's protocol error (a name that is no string).
        raw.send_obj({"jsonrpc": "2.0", "id": 21, "method": "tools/call", "params": {"name": 5, "arguments": []}})
        assert raw.recv()["error"]["code"] == -32602
    finally:
        raw.close()
    entries = [json.loads(x) for x in log.read_text().splitlines()]
    assert [e["status"] for e in entries] == ["error"] * len(bad) + ["ok"]
    assert entries[0]["args"] == {"(arguments)": "['s1']"} and entries[5]["args"] == {"(arguments)": "null"}
    assert [e["bytes"] for e in entries] == [len(t.encode()) for t in texts]
    assert entries[-1]["used"] == sum(len(t.encode()) for t in texts)


def test_a_line_it_cannot_read_gets_an_error_reply(corpus_store: Any, tmp_path: Path) -> None:
    home = Path(corpus_store.path).parent
    log = tmp_path / "reads.jsonl"
    raw = _Raw(home, "fa812bfe", "--window", "k2", "--log", str(log))
    try:
        raw.send(b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search","arguments":{"query":"\\ud800"}}}')
        got = raw.recv()
        assert got["id"] == 7 and got["error"]["code"] == -32602 and "lone surrogate" in got["error"]["message"]
        raw.send(b'{"jsonrpc":"2.0","id":8,"method":')  # cut short
        got = raw.recv()
        assert got["id"] is None and got["error"]["code"] == -32700
        raw.send(b'{"jsonrpc":"2.0","id":"nine"}')  # JSON, but no message
        got = raw.recv()
        assert got["id"] == "nine" and got["error"]["code"] == -32600
        raw.send(b'{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"talk","arguments":{"id":"k\xff"}}}')
        got = raw.recv()
        assert got["error"]["code"] == -32700 and "UTF-8" in got["error"]["message"]
        raw.send(b"[1, 2, 3]")
        assert raw.recv()["error"]["code"] == -32600
        assert not raw.call(11, "card", {})["result"]["isError"]  # still serving
    finally:
        raw.close()
    assert [json.loads(x)["tool"] for x in log.read_text().splitlines()] == ["card"]


def test_the_navigator_in_process_answers_what_no_log_could_hold_with_an_error(corpus_store: Any, tmp_path: Path) -> None:
    """API evaluators call the navigator directly with the model's arguments (Python's json reads
    lone surrogates and any integer): an error answer, logged, never a crash of the log."""
    from asz_core.mcp_server import jsonl_sink
    from asz_core.window import build

    log = tmp_path / "reads.jsonl"
    nav = N.Navigator(build(corpus_store, "fa812bfe", None, "k2"), corpus_store, log=jsonl_sink(log))
    cases = [("search", {"query": "\ud800"}), ("talk", {"id": "k2", "page": 2**64}), ("talk", {"id\udc00": "k2"}),
             ("step", {"id": ["s1", "\ud800"], "offset": 0}), ("no\ud800such", {})]
    answers = [json.loads(nav.call(tool, args)) for tool, args in cases]
    assert all("error" in a for a in answers)
    entries = [json.loads(x) for x in log.read_text().splitlines()]
    assert [e["status"] for e in entries] == ["error"] * len(cases)
    assert entries[1]["args"]["page"] == str(2**64) and entries[0]["args"]["query"] == "\\ud800"


# --- hostile arguments, fuzzed in process -----------------------------------------------------------

HOSTILE: list[Any] = [None, 0, -1, 1, 2, 10**6, 2**63 - 1, -(2**63), 2.5, -0.5, float("inf"), float("nan"), True, False,
                      [], {}, "", " ", "1", "-1", "1.5", "1e3", " 2 ", "+3", "0x10", "1_000", "\u0663", "\u00b2", "x" * 100_000,
                      "\x00", "s1", "s117", "s999999", "s0", "s-1", "S117", " s117", "s117\x00", "s\u0661\u0661\u0667", "k1",
                      "k2", "k0", "k1\n", "a1", "a2", "t1", "t9", "i1", "o1", "o999", "r1", "r999", "*", "%", "_",
                      "' OR 1=1 --", "\"", "\\", "../../etc/passwd", "/etc/passwd", ["s117"], {"id": "s117"}]


def _deep(n: int) -> Any:
    v: Any = "s117"
    for k in range(n):
        v = [v] if k % 2 else {"x": v}
    return v


def test_every_tool_answers_every_hostile_argument_with_a_page(corpus_store: Any, tmp_path: Path) -> None:
    """Each tool, each of its arguments (and one it does not take) given each hostile value, with
    the others at random (seeded): every call answers one JSON page naming its tool, no call
    raises, each is logged once, and the budget counts exactly the bytes answered. Arguments that
    are no JSON object are an error answer too. Over 258c7280 judged through every stage, so the
    targets and subtasks tools read real stage files."""
    import inspect
    import random

    from asz_core.mcp_server import jsonl_sink
    from asz_core.window import build
    from tests.judge.achievement_story import CID, T1, T2, T3, TARGETS
    from asz_core.judge import runner

    script = tmp_path / "script.json"
    calls = [{"stage": "targets", "answer": TARGETS}] + [{"stage": "achievement", "call": n, "answer": {"targets": [t]}}
                                                         for n, t in enumerate((T1, T2, T3), 1)]
    script.write_text(json.dumps({"calls": calls}))
    run = runner.judge(runner.JudgeOptions(CID, evaluator=f"scripted:{script}", stages=("targets", "achievement")),
                       store=corpus_store).path
    log = tmp_path / "reads.jsonl"
    nav = N.Navigator(build(corpus_store, CID), corpus_store, budget=10**12, run_dir=run, log=jsonl_sink(log))
    rng = random.Random(20261201)
    n = 0
    for tool in N.TOOLS:
        params = list(inspect.signature(getattr(nav, "_" + tool)).parameters)
        for p in [*params, "bogus"]:
            for v in [*HOSTILE, _deep(300)]:
                args = {p: v, **{q: rng.choice(HOSTILE) for q in params if q != p and rng.random() < 0.3}}
                text = nav.call(tool, args)
                n += 1
                got = json.loads(text)
                assert len(text.encode()) <= N.PAGE_BYTES and got["tool"] == tool, (tool, args)
    for args in ("x", [("page", 1)], 5, [], ["s1"]):
        got = json.loads(nav.call("talks", args))  # type: ignore[arg-type]
        assert got["error"].startswith("the arguments are not a JSON object: "), args
        n += 1
    entries = [json.loads(x) for x in log.read_text().splitlines()]
    assert len(entries) == n and sum(e["bytes"] for e in entries) == nav.used
    assert entries[-1]["args"] == {"(arguments)": "['s1']"} and entries[-1]["status"] == "error"
    assert {e["status"] for e in entries} == {"ok", "error"}


def test_a_window_shows_no_step_past_its_end_whatever_is_asked(corpus_store: Any) -> None:
    """258c7280 judged to k1: k2 and its steps (s432 on) are past the end. Asked for by any tool,
    in any spelling, they are an error, never a page of them; a search finds nothing in them."""
    from asz_core.window import build
    from tests.judge.achievement_story import CID

    w = build(corpus_store, CID, None, "k1..k1")
    nav = N.Navigator(w, corpus_store, budget=10**12)
    past = [s.id for s in w.conv.steps if s.id not in w.steps and s.talk == "k2"]
    assert "s432" in past and "s434" in past
    for sid in past[:40]:
        for tool, args in (("step", {"id": sid}), ("step", {"id": f" {sid} "}), ("records", {"step": sid}),
                           ("search", {"query": "push", "step": sid}), ("step", {"id": sid.upper()})):
            got = json.loads(nav.call(tool, args))
            assert "error" in got, (tool, args, got)
    assert "error" in json.loads(nav.call("talk", {"id": "k2"}))
    found = json.loads(nav.call("search", {"query": "did you push"}))  # s432's words, past the end
    assert found["matches"] == 0 and found["rows"] == []
    whole = N.Navigator(build(corpus_store, CID), corpus_store, budget=10**12)
    assert [r["step"] for r in json.loads(whole.call("search", {"query": "did you push"}))["rows"]] == ["s432"]


def test_one_64_bit_bound_for_arguments_and_request_ids(corpus_store: Any) -> None:
    """A tool argument and a JSON-RPC id are taken up to the same signed 64-bit edge, both sides of it."""
    from asz_core.mcp_wire import rejected
    from asz_core.window import build

    nav = N.Navigator(build(corpus_store, "fa812bfe", None, "k2"), corpus_store)
    for n, inside in ((2**63 - 1, True), (2**63, False), (-(2**63), True), (-(2**63) - 1, False)):
        got = json.loads(nav.call("step", {"id": "s3", "offset": n}))
        assert ("out of range" in got.get("error", "")) is not inside, (n, got)
        assert nav.log[-1]["args"]["offset"] == (n if inside else str(n))
        # No JSON-RPC message (no method): the error reply keeps the id only if it is one.
        rid, code, _ = rejected(json.dumps({"jsonrpc": "2.0", "id": n}))  # type: ignore[misc]
        assert code == -32600 and rid == (n if inside else None), n
