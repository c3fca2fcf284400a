"""LangSmith adapter: the real corpus files (counts derived here with plain json, never by the
adapter), hand-made run trees for what the corpus lacks, and bad input."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from asz_adapters_langsmith.adapter import LangSmithAdapter, usage_from_langchain
from asz_core import api
from asz_core.collect import collect
from asz_core.records import Cursor, Entry, Problem
from asz_core.store import Store

CORPUS = Path(os.environ.get("ASZ_CORPUS") or Path(__file__).resolve().parents[2].parent / "shared" / "corpus")
LS = CORPUS / "langsmith"
SDK_FILES = sorted((LS / "langchain-ai__langsmith-sdk").rglob("*.json")) if LS.is_dir() else []
SMITH_COPY = LS / "alex8224__synapse-agent" / "docs" / "smith_output.md"
CONTRACT_FILES = sorted(LS.rglob("validator.json")) + sorted(LS.rglob("worked-examples.json")) if LS.is_dir() else []

needs_corpus = pytest.mark.skipif(not SDK_FILES, reason=f"LangSmith corpus not found under {LS}")

adapter = LangSmithAdapter()


# --- helpers --------------------------------------------------------------------------------------

def read_all(path: Path) -> tuple[list[Entry], list[Problem], Cursor]:
    cur = Cursor()
    items = list(adapter.read(path, cur))
    return [i for i in items if isinstance(i, Entry)], [i for i in items if isinstance(i, Problem)], cur


def collected(paths: list[Path], home: Path) -> tuple[Store, Any]:
    store = Store.open(home)
    res = collect(paths, store, runtime="langsmith")
    return store, res


def conversations(store: Store) -> dict[str, Any]:
    return {row.id: api.load(row.id, store=store) for row in store.conversations()}


def token_totals(conv: Any) -> dict[str, tuple[int, int]]:
    """Per usage type: (sum of known counts, number of calls where it is unknown)."""
    out = {}
    for t in ("input", "output", "cache_read", "cache_write"):
        vals = [getattr(s.usage, t) for s in conv.model_calls()]
        out[t] = (sum(v for v in vals if v is not None), sum(1 for v in vals if v is None))
    return out


def tool_steps(conv: Any) -> list[Any]:
    return [s for s in conv.steps if s.kind in ("tool", "agent_call")]


# --- the real files ------------------------------------------------------------------------------

def plain_expectations(path: Path) -> dict[str, Any]:
    """What the file holds, worked out with plain json: post and patch merged by id (a JS update
    has no id: its dotted_order ends with it), usage only on llm runs, LangChain dialect."""
    doc = json.loads(path.read_text())
    runs: dict[str, dict[str, Any]] = {}
    for part in doc.get("post", []) + doc.get("patch", []):
        rid = part.get("id") or part["dotted_order"].split(".")[-1].split("Z", 1)[1]
        runs.setdefault(rid, {}).update({k: v for k, v in part.items() if v not in (None, {}, [])})
    traces = {r["trace_id"] for r in runs.values()}
    llm = [r for r in runs.values() if r["run_type"] == "llm"]
    totals = {"input": [0, 0], "output": [0, 0], "cache_read": [0, 0], "cache_write": [0, 0]}
    for r in llm:
        um = (r.get("outputs") or {}).get("usage_metadata")
        if not um:
            for v in totals.values():
                v[1] += 1
            continue
        det = um.get("input_token_details") or {}
        cr = det.get("cache_read", 0)
        cw = det.get("cache_creation", 0)
        totals["input"][0] += um["input_tokens"] - cr - cw
        totals["output"][0] += um["output_tokens"]
        totals["cache_read"][0] += cr
        totals["cache_write"][0] += cw
    persons = []
    for r in runs.values():
        if not r.get("parent_run_id"):
            persons += [m["content"] for m in r["inputs"]["messages"] if m["role"] == "user"]
    start = {rid: r["start_time"] for rid, r in runs.items()}
    return {
        "traces": traces, "model_calls": len(llm), "tool_steps": sum(r["run_type"] == "tool" for r in runs.values()),
        "streams": len(traces) + sum((r.get("extra") or {}).get("metadata", {}).get("ls_agent_type") == "subagent" for r in runs.values()),
        "persons": persons, "totals": {k: tuple(v) for k, v in totals.items()}, "start": start,
        "models": sorted(r["outputs"]["model"] for r in llm),
    }


@needs_corpus
@pytest.mark.parametrize("path", SDK_FILES, ids=lambda p: p.name)
def test_corpus_file_counts(path: Path, tmp_path: Path) -> None:
    want = plain_expectations(path)
    store, res = collected([path], tmp_path)
    assert res.problems == ()
    convs = conversations(store)
    assert set(convs) == want["traces"]  # a trace is a conversation
    assert sum(len(c.model_calls()) for c in convs.values()) == want["model_calls"]
    assert sum(len(tool_steps(c)) for c in convs.values()) == want["tool_steps"]
    assert sum(len(c.streams) for c in convs.values()) == want["streams"]
    assert [s.text for c in convs.values() for s in c.person_inputs()] == want["persons"]
    got = {t: [0, 0] for t in want["totals"]}
    for c in convs.values():
        for t, (n, unknown) in token_totals(c).items():
            got[t][0] += n
            got[t][1] += unknown
    assert {t: tuple(v) for t, v in got.items()} == want["totals"]
    assert sorted(s.model for c in convs.values() for s in c.model_calls()) == want["models"]
    for c in convs.values():
        assert len(c.main_talks) == 1 and c.main_talks[0].reply is not None
    store.close()


@needs_corpus
def test_corpus_times_epoch_ms_and_iso(tmp_path: Path) -> None:
    """JS payloads carry epoch milliseconds, Python ones ISO strings: both become ISO UTC."""
    for path in SDK_FILES:
        want = plain_expectations(path)
        entries, problems, _ = read_all(path)
        assert not problems
        for e in entries:
            raw = want["start"][e.key]
            if isinstance(raw, int):
                expect = datetime.fromtimestamp(raw / 1000, UTC)
            else:
                expect = datetime.fromisoformat(raw)
            assert datetime.fromisoformat(e.ts.replace("Z", "+00:00")) == expect, path.name
            assert e.ts.endswith("Z")


@needs_corpus
def test_corpus_js_update_without_id_merges_by_dotted_order() -> None:
    path = next(p for p in SDK_FILES if p.name == "langsmith_js_wrap_openai_default.json")
    doc = json.loads(path.read_text())
    assert "id" not in doc["patch"][0]  # the point of this file
    entries, problems, cur = read_all(path)
    assert not problems and len(entries) == 1
    e = entries[0]
    assert e.key == doc["post"][0]["id"] and e.versioned and e.line == 3
    raw = json.loads(e.raw)
    assert raw["outputs"]["usage_metadata"]["input_tokens"] == 9 and raw["inputs"]["messages"][0]["content"] == "howdy"
    assert cur.offset == path.stat().st_size


@needs_corpus
def test_corpus_stream_events_are_not_counted(tmp_path: Path) -> None:
    """A streamed run repeats the provider's usage in events[]; it is not counted again."""
    path = next(p for p in SDK_FILES if p.name == "langsmith_py_wrap_openai_stream.json")
    doc = json.loads(path.read_text())
    assert any("usage" in (ev.get("kwargs", {}).get("token") or {}) for ev in doc["patch"][0]["events"])
    store, _ = collected([path], tmp_path)
    (conv,) = conversations(store).values()
    (call,) = conv.model_calls()
    assert (call.usage.input, call.usage.output) == (9, 9)
    store.close()


@needs_corpus
def test_corpus_no_usage_is_unknown_not_zero(tmp_path: Path) -> None:
    paths = [p for p in SDK_FILES if "no" in p.name and "usage" in p.name]
    assert len(paths) == 2
    store, _ = collected(paths, tmp_path)
    for conv in conversations(store).values():
        (call,) = conv.model_calls()
        assert call.usage.input is None and call.usage.output is None and call.usage.cache_read is None
    store.close()


@needs_corpus
def test_detect_and_files_on_the_langsmith_corpus() -> None:
    assert adapter.detect(LS)
    assert adapter.files(LS) == SDK_FILES  # the coding-agent-v1 contract files are not traces
    for p in CONTRACT_FILES:
        assert not adapter.detect(p)
    assert not adapter.detect(SMITH_COPY)  # markdown, not JSON


@pytest.mark.skipif(not CORPUS.is_dir(), reason="corpus not found")
@pytest.mark.parametrize("runtime", ["claude-code", "kiro", "codex"])
def test_detect_claims_no_other_runtime_file(runtime: str) -> None:
    root = CORPUS / runtime
    if not root.is_dir():
        pytest.skip(f"no {runtime} corpus")
    files = [p for p in root.rglob("*") if p.is_file()]
    assert files
    assert [p for p in files if adapter.detect(p)] == []
    assert not adapter.detect(root)


# --- the UI "copy run" (markdown-mangled in the corpus) ------------------------------------------

def smith_copy() -> dict[str, Any]:
    # The page rendered the JSON as markdown: \_ and \* are escapes JSON does not have.
    return json.loads(re.sub(r"\\([_*])", r"\1", SMITH_COPY.read_text(encoding="utf-8")))


@pytest.mark.skipif(not SMITH_COPY.is_file(), reason="smith_output.md not in corpus")
def test_copy_run_reads_person_input_and_counts_nothing_on_a_node(tmp_path: Path) -> None:
    """A copy of a deepagents graph-node run: the person's input is its human message; the
    usage inside its messages belongs to model calls recorded elsewhere and is not counted."""
    doc = smith_copy()
    humans = [m["content"] for m in doc["inputs"]["messages"] if m["type"] == "human"]
    assert len(humans) == 1
    f = tmp_path / "copy.json"
    f.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    assert adapter.detect(f)
    store, res = collected([f], tmp_path / "home")
    assert res.problems == ()
    (conv,) = conversations(store).values()
    assert [s.text for s in conv.person_inputs()] == humans
    assert conv.model_calls() == []
    store.close()


@pytest.mark.skipif(not SMITH_COPY.is_file(), reason="smith_output.md not in corpus")
def test_real_deepagents_messages_in_a_run_tree(tmp_path: Path) -> None:
    """The copy's real messages (LangChain-serialized, cache_read inside input_tokens, task
    delegations) placed in the run tree LangGraph records: root chain, a model node with one
    llm run per AI message, a tools node with one tool run per tool call."""
    doc = smith_copy()
    msgs = doc["inputs"]["messages"] + doc["outputs"]["output"][0]["update"]["messages"]
    tree = Tree()
    root = tree.run("coding-agent", "chain", inputs={"messages": [msgs[0]]})
    results = {m["tool_call_id"]: m for m in msgs if m["type"] == "tool"}
    for m in msgs:
        if m["type"] != "ai":
            continue
        node = tree.run("model", "chain", root)
        tree.run("ChatOpenAI", "llm", node, outputs={"generations": [[{"text": m["content"], "message": m}]]})
        tools = tree.run("tools", "chain", root)
        for call in m["tool_calls"]:
            res = results.get(call["id"])
            tree.run(call["name"], "tool", tools, inputs=call["args"], outputs={"output": res} if res else None,
                     end=res is not None)
    f = tree.write(tmp_path / "deep.json")
    # Independent expectations from the messages alone.
    ais = [m for m in msgs if m["type"] == "ai"]
    calls = [c for m in ais for c in m["tool_calls"]]
    exp_in = sum(m["usage_metadata"]["input_tokens"] - m["usage_metadata"]["input_token_details"].get("cache_read", 0) for m in ais)
    exp_cr = sum(m["usage_metadata"]["input_token_details"].get("cache_read", 0) for m in ais)
    exp_out = sum(m["usage_metadata"]["output_tokens"] for m in ais)
    store, res = collected([f], tmp_path / "home")
    assert res.problems == ()
    (conv,) = conversations(store).values()
    assert len(conv.model_calls()) == len(ais) == 3
    assert token_totals(conv) == {"input": (exp_in, 0), "output": (exp_out, 0), "cache_read": (exp_cr, 0), "cache_write": (0, 0)}
    assert exp_cr == 10368 + 10624 + 12800
    steps = tool_steps(conv)
    assert len(steps) == len(calls)
    assert sum(s.status == "returned" for s in steps) == len(results)
    assert sum(s.status == "no_result" for s in steps) == len(calls) - len(results)
    assert [s.text for s in conv.person_inputs()] == [msgs[0]["content"]]
    assert {s.model for s in conv.model_calls()} == {"deepseek-v4-pro"}
    store.close()


# --- hand-made trees (what the corpus lacks) -----------------------------------------------------

class Tree:
    """Builds runs the way LangSmith records them: ids, trace_id, parent_run_id, dotted_order."""

    def __init__(self, t0: datetime | None = None) -> None:
        self.runs: list[dict[str, Any]] = []
        self.t = t0 or datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)

    def run(self, name: str, run_type: str, parent: dict[str, Any] | None = None, *, meta: dict[str, Any] | None = None,
            end: bool = True, **kw: Any) -> dict[str, Any]:
        self.t += timedelta(milliseconds=5)
        rid = str(uuid.uuid4())
        seg = self.t.strftime("%Y%m%dT%H%M%S%fZ") + rid
        r = {
            "id": rid, "name": name, "run_type": run_type,
            "trace_id": parent["trace_id"] if parent else rid,
            "parent_run_id": parent["id"] if parent else None,
            "dotted_order": f"{parent['dotted_order']}.{seg}" if parent else seg,
            "start_time": self.t.isoformat(), "end_time": (self.t + timedelta(seconds=1)).isoformat() if end else None,
            "inputs": {}, "outputs": {}, "extra": {"metadata": dict(meta or {})}, "error": None,
        }
        r.update({k: v for k, v in kw.items()})
        self.runs.append(r)
        return r

    def write(self, path: Path, shuffle: bool = False) -> Path:
        runs = list(self.runs)
        if shuffle:
            random.Random(7).shuffle(runs)
        path.write_text(json.dumps(runs, indent=2))
        return path


def lc_ai(text: str, usage: dict[str, Any] | None, tool_calls: list[dict[str, Any]] = (), model: str = "claude-sonnet-4") -> dict[str, Any]:
    kwargs = {"content": text, "tool_calls": list(tool_calls), "response_metadata": {"model_name": model}}
    if usage is not None:
        kwargs["usage_metadata"] = usage
    return {"generations": [[{"text": text, "message": {"lc": 1, "type": "constructor",
                                                        "id": ["langchain", "schema", "messages", "AIMessage"], "kwargs": kwargs}}]]}


def test_deepagents_task_tool_opens_a_child_stream_and_cache_spellings_are_counted_once(tmp_path: Path) -> None:
    t = Tree()
    root = t.run("LangGraph", "chain", inputs={"messages": [{"type": "human", "content": "analyze the project"}]},
                 prompt_tokens=99999, completion_tokens=9999, total_tokens=109998,  # rolled-up totals: never counted
                 usage_metadata={"input_tokens": 99999, "output_tokens": 9999, "total_tokens": 109998})
    node = t.run("model", "chain", root, outputs={"messages": [{"type": "ai", "content": "x", "usage_metadata": {"input_tokens": 7, "output_tokens": 7, "total_tokens": 14}}]})
    # both spellings of one cache write (cache_creation 300 = 5m 100 + 1h 200): 300, not 600
    t.run("ChatAnthropic", "llm", node, outputs=lc_ai("I'll delegate", {
        "input_tokens": 1000, "output_tokens": 50, "total_tokens": 1050,
        "input_token_details": {"cache_read": 600, "cache_creation": 300, "ephemeral_5m_input_tokens": 100, "ephemeral_1h_input_tokens": 200}}))
    tools = t.run("tools", "chain", root)
    task = t.run("task", "tool", tools, inputs={"description": "read the README", "subagent_type": "researcher"},
                 outputs={"output": {"type": "tool", "content": "README says hi", "tool_call_id": "c1"}})
    sub = t.run("researcher", "chain", task, inputs={"messages": [{"type": "human", "content": "read the README"}]})
    sn = t.run("model", "chain", sub)
    # the claude_agent_sdk helper's spelling ephemeral_1hr_input_tokens
    t.run("ChatAnthropic", "llm", sn, outputs=lc_ai("reading", {"input_tokens": 200, "output_tokens": 10, "total_tokens": 210,
                                                                 "input_token_details": {"cache_read": 0, "ephemeral_1hr_input_tokens": 50}}))
    st = t.run("tools", "chain", sub)
    t.run("read_file", "tool", st, inputs={"file_path": "/README.md"}, outputs={"output": "hi"})
    sn2 = t.run("model", "chain", sub)
    t.run("ChatAnthropic", "llm", sn2, outputs=lc_ai("README says hi", {"input_tokens": 300, "output_tokens": 5, "total_tokens": 305}))
    t.run("write_file", "tool", tools, inputs={"file_path": "/docs/a.md", "content": "x"}, error="Permission denied")
    n3 = t.run("model", "chain", root)
    t.run("ChatAnthropic", "llm", n3, outputs=lc_ai("Done.", {"input_tokens": 500, "output_tokens": 20, "total_tokens": 520, "input_token_details": {"cache_read": 400}}))
    f = t.write(tmp_path / "deep.json", shuffle=True)

    store, res = collected([f], tmp_path / "home")
    assert res.problems == ()
    (conv,) = conversations(store).values()
    assert conv.id == root["trace_id"]
    main, child = conv.streams
    assert (main.kind, child.kind) == ("main", "child")
    starter = conv.step(child.started_by[0])
    assert starter.kind == "agent_call" and starter.name == "task" and child.parent == "m" and child.unattributed is None
    assert [s.text for s in conv.person_inputs()] == ["analyze the project"]
    assert [s.text for s in conv.steps if s.kind == "input" and s.source == "agent"] == ["read the README"]
    calls = conv.model_calls()
    assert len(calls) == 4
    u = [c.usage for c in calls]
    assert (u[0].input, u[0].cache_read, u[0].cache_write, u[0].cache_write_5m, u[0].cache_write_1h) == (100, 600, 300, 100, 200)
    assert (u[1].input, u[1].cache_write, u[1].cache_write_1h) == (150, 50, 50)
    assert (u[2].input, u[2].cache_read, u[2].cache_write) == (300, None, None)  # no details: unknown, not 0
    assert (u[3].input, u[3].cache_read, u[3].cache_write) == (100, 400, 0)
    assert token_totals(conv) == {"input": (650, 0), "output": (85, 0), "cache_read": (1000, 1), "cache_write": (350, 1)}
    wf = next(s for s in conv.steps if s.name == "write_file")
    assert wf.status == "failed" and "Permission denied" in wf.text
    assert conv.main_talks[0].reply and conv.step(conv.main_talks[0].reply).text == "Done."
    store.close()


def test_claude_code_plugin_trace(tmp_path: Path) -> None:
    """The Claude Code plugin's shape: a turn chain, llm runs with usage in extra.metadata (input
    counting cache reads and writes), tool runs {input: args}, an Agent tool run holding the
    "<type> Subagent" chain, a synthetic reply, and an interrupted turn."""
    base = {"ls_integration": "claude-code", "ls_agent_purpose": "coding", "thread_id": "sess_1"}
    t = Tree()
    root = t.run("Claude Code", "chain", meta={**base, "ls_agent_type": "root"}, error="User interrupt",
                 inputs={"messages": [{"role": "user", "content": [{"type": "text", "text": "fix the failing test"}]}]})

    def um(fresh: int, cr: int, cw: int, out: int) -> dict[str, Any]:
        return {"input_tokens": fresh + cr + cw, "output_tokens": out, "total_tokens": fresh + cr + cw + out,
                "input_token_details": {"cache_read": cr, "cache_creation": cw}}

    t.run("Claude", "llm", root, meta={**base, "ls_agent_type": "root", "usage_metadata": um(10, 600, 300, 40), "ls_model_name": "claude-opus-4-1"},
          outputs={"messages": [{"role": "assistant", "content": [{"type": "thinking", "thinking": "look at the test"},
                                                                  {"type": "text", "text": "Let me fix it."},
                                                                  {"type": "tool_call", "name": "Write", "args": {}, "id": "toolu_1"}]}]})
    w = t.run("Write", "tool", root, meta={**base, "ls_agent_type": "root"}, inputs={"input": {"file_path": "/src/a.py", "content": "x"}},
              outputs={"output": "File written"})
    agent = t.run("Agent", "tool", root, meta={**base, "ls_agent_type": "root", "ls_tool_name": "Task"},
                  inputs={"input": {"description": "explore", "prompt": "Find where the test data lives", "subagent_type": "Explore"}},
                  outputs={"output": {"status": "completed"}})
    sub_meta = {**base, "ls_agent_type": "subagent"}
    chain = t.run("Explore Subagent", "chain", agent, meta={**sub_meta, "ls_subagent_id": "a1b2", "ls_subagent_type": "Explore"},
                  inputs={"description": "explore", "prompt": "Find where the test data lives"})
    t.run("Claude", "llm", chain, meta={**sub_meta, "usage_metadata": um(5, 100, 0, 8), "ls_model_name": "claude-opus-4-1"},
          outputs={"messages": [{"role": "assistant", "content": [{"type": "text", "text": "In tests/data."}]}]})
    t.run("Read", "tool", chain, meta=sub_meta, inputs={"input": {"file_path": "/tests/data"}}, outputs={"output": "..."})
    t.run("Claude", "llm", root, meta={**base, "ls_agent_type": "root", "synthetic": True},
          outputs={"messages": [{"role": "assistant", "content": [{"type": "text", "text": "No response requested."}]}]})
    f = t.write(tmp_path / "cc.jsonl")
    f.write_text("\n".join(json.dumps(r) for r in t.runs) + "\n")

    assert adapter.detect(f)
    store, res = collected([f], tmp_path / "home")
    assert res.problems == ()
    (conv,) = conversations(store).values()
    calls = conv.model_calls()
    assert len(calls) == 2  # the synthetic reply is no model call
    assert [(c.usage.input, c.usage.cache_read, c.usage.cache_write, c.usage.output) for c in calls] == [(10, 600, 300, 40), (5, 100, 0, 8)]
    assert {c.model for c in calls} == {"claude-opus-4-1"}
    notices = [(s.notice, s.text) for s in conv.steps if s.kind == "notice"]
    assert ("interrupt", "User interrupt") in notices and ("synthetic", "No response requested.") in notices
    child = conv.streams[1]
    assert conv.step(child.started_by[0]).name == "Task" and child.unattributed is None
    assert [s.text for s in conv.steps if s.source == "agent"] == ["Find where the test data lives"]
    ws = next(s for s in conv.steps if s.tool_id == w["id"])
    assert adapter.file_requests(ws.name, ws.request) == ["/src/a.py"]
    assert any(s.kind == "reply" and s.text == "Let me fix it." for s in conv.steps)
    store.close()


def test_codex_plugin_trace(tmp_path: Path) -> None:
    """The Codex plugin: cache_creation holds reasoning tokens (cache write is 0), usage also on
    tool runs and as the turn's aggregate (never counted), a child rollout's chain directly under
    the turn (the tree does not show which call started it: unattributed), apply_patch paths."""
    base = {"ls_integration": "openai-codex", "thread_id": "thr_main"}
    t = Tree()
    turn_usage = {"input_tokens": 5800, "output_tokens": 350, "total_tokens": 6150, "input_token_details": {"cache_read": 4000, "cache_creation": 130}}
    root = t.run("openai.codex", "chain", meta={**base, "ls_agent_type": "root", "ls_raw_aggregated_usage": turn_usage},
                 inputs={"messages": [{"role": "user", "content": [{"type": "text", "text": "add tests for x"}]}]},
                 usage_metadata=turn_usage)
    t.run("openai.codex.turn", "llm", root, meta={**base, "ls_agent_type": "root", "ls_model_name": "gpt-5-codex",
                                                  "usage_metadata": {"input_tokens": 5000, "output_tokens": 300, "total_tokens": 5300,
                                                                     "input_token_details": {"cache_read": 4000, "cache_creation": 120}}},
          outputs={"messages": [{"role": "ai", "content": [{"type": "reasoning", "reasoning": "plan"}, {"type": "text", "text": "Patching."}]}]})
    patch = "*** Begin Patch\n*** Update File: src/x.py\n@@\n-a\n+b\n*** Add File: tests/test_x.py\n+def test(): pass\n*** End Patch\n"
    ap = t.run("apply_patch", "tool", root, meta={**base, "ls_agent_type": "root", "usage_metadata": {"input_tokens": 5000, "output_tokens": 300, "total_tokens": 5300}},
               inputs={"input": patch}, outputs={"messages": [{"role": "tool", "content": [{"type": "text", "text": "Success"}], "tool_call_id": "c1"}]})
    t.run("spawn_agent", "tool", root, meta={**base, "ls_agent_type": "root"}, inputs={"input": {"message": "write more tests"}},
          outputs={"messages": [{"role": "tool", "content": [{"type": "text", "text": "{\"agent_id\": \"thr_child\"}"}]}]})
    child = t.run("openai.codex", "chain", root, meta={**base, "ls_agent_type": "subagent", "ls_subagent_id": "thr_child"},
                  inputs={"messages": [{"role": "user", "content": "write more tests"}]})
    t.run("openai.codex.turn", "llm", child, meta={**base, "ls_agent_type": "subagent",
                                                   "usage_metadata": {"input_tokens": 800, "output_tokens": 50, "total_tokens": 850,
                                                                      "input_token_details": {"cache_read": 0, "cache_creation": 10}}},
          outputs={"messages": [{"role": "ai", "content": [{"type": "text", "text": "Done."}]}]})
    f = t.write(tmp_path / "codex.json")

    store, res = collected([f], tmp_path / "home")
    assert res.problems == ()
    (conv,) = conversations(store).values()
    assert token_totals(conv) == {"input": (1000 + 800, 0), "output": (350, 0), "cache_read": (4000, 0), "cache_write": (0, 0)}
    assert len(conv.streams) == 2 and conv.streams[1].unattributed == "no starting step"
    assert [s.text for s in conv.person_inputs()] == ["add tests for x"]
    aps = next(s for s in conv.steps if s.tool_id == ap["id"])
    assert aps.status == "returned" and aps.text == "Success"
    assert adapter.file_requests("apply_patch", aps.request) == ["src/x.py", "tests/test_x.py"]
    store.close()


def test_usage_spellings_table() -> None:
    """The cache-write spellings one by one (the rule is written in usage_from_langchain)."""
    def u(det: dict[str, Any] | None, codex: bool = False) -> tuple[Any, ...]:
        um = {"input_tokens": 1000, "output_tokens": 10}
        if det is not None:
            um["input_token_details"] = det
        r = usage_from_langchain(um, codex=codex)
        return r["input"], r["cache_read"], r["cache_write"], r.get("cache_write_5m"), r.get("cache_write_1h")

    assert u(None) == (1000, None, None, None, None)
    assert u({}) == (1000, 0, 0, None, None)
    assert u({"cache_read": 100}) == (900, 100, 0, None, None)
    assert u({"cache_read": 100, "cache_creation": 200}) == (700, 100, 200, None, None)
    assert u({"ephemeral_5m_input_tokens": 150, "ephemeral_1h_input_tokens": 50}) == (800, 0, 200, 150, 50)
    assert u({"ephemeral_5m_input_tokens": 150, "ephemeral_1hr_input_tokens": 50}) == (800, 0, 200, 150, 50)
    assert u({"ephemeral_1h_input_tokens": 50, "ephemeral_1hr_input_tokens": 50}) == (950, 0, 50, 0, 50)  # one write, two names
    assert u({"cache_creation": 200, "ephemeral_5m_input_tokens": 150, "ephemeral_1h_input_tokens": 50}) == (800, 0, 200, 150, 50)
    assert u({"cache_read": 100, "cache_creation": 300}, codex=True) == (900, 100, 0, None, None)  # reasoning, not a write
    assert u({"cache_read": 5000}) == (1000, 5000, 0, None, None)  # a producer that left cache out of input


def test_api_export_runs_object_with_flat_counts(tmp_path: Path) -> None:
    """An API answer {"runs": [...]}: naive ISO times, flat prompt/completion counts; the chain's
    are the backend's roll-up of its children and are not counted."""
    tid = "5a1c2d8e-0000-4000-8000-000000000001"
    lid = "5a1c2d8e-0000-4000-8000-000000000002"
    runs = [
        {"id": tid, "trace_id": tid, "name": "Agent", "run_type": "chain", "dotted_order": f"20250301T120000000000Z{tid}",
         "start_time": "2025-03-01T12:00:00", "end_time": "2025-03-01T12:00:09", "inputs": {"input": "summarise the log"},
         "outputs": {"output": "It failed twice."}, "prompt_tokens": 1000, "completion_tokens": 20, "total_tokens": 1020},
        {"id": lid, "trace_id": tid, "parent_run_id": tid, "name": "ChatOpenAI", "run_type": "llm",
         "dotted_order": f"20250301T120000000000Z{tid}.20250301T120001000000Z{lid}", "start_time": "2025-03-01T12:00:01.5",
         "end_time": "2025-03-01T12:00:08", "inputs": {"messages": [[{"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "HumanMessage"], "kwargs": {"content": "summarise the log"}}]]},
         "outputs": {"generations": [[{"text": "It failed twice."}]]}, "prompt_tokens": 1000, "completion_tokens": 20,
         "prompt_token_details": {"cache_read": 200}},
    ]
    f = tmp_path / "api.json"
    f.write_text('{"runs": [\n' + ",\n".join(json.dumps(r) for r in runs) + '\n], "cursors": {"next": null}}\n')
    entries, problems, _ = read_all(f)
    assert not problems and [e.key for e in entries] == [tid, lid]
    assert [e.ts for e in entries] == ["2025-03-01T12:00:00.000000Z", "2025-03-01T12:00:01.500000Z"]
    assert [e.line for e in entries] == [2, 3]  # the line each run starts on
    store, _ = collected([f], tmp_path / "home")
    (conv,) = conversations(store).values()
    assert token_totals(conv) == {"input": (800, 0), "output": (20, 0), "cache_read": (200, 0), "cache_write": (0, 0)}
    assert [s.text for s in conv.person_inputs()] == ["summarise the log"]
    assert conv.step(conv.main_talks[0].reply).text == "It failed twice."
    store.close()


def test_nested_child_runs_without_dotted_order(tmp_path: Path) -> None:
    """Runs loaded with their children (Run.child_runs): no parent ids or dotted_order on the
    children; the nesting gives the tree and start times the order."""
    doc = {"id": "r1", "name": "agent", "run_type": "chain", "trace_id": "r1", "start_time": "2025-01-01T00:00:00Z",
           "inputs": {"question": "what time is it?"}, "outputs": {"answer": "noon"},
           "child_runs": [
               {"id": "r3", "name": "clock", "run_type": "tool", "start_time": "2025-01-01T00:00:02Z", "end_time": "2025-01-01T00:00:03Z",
                "inputs": {"tz": "UTC"}, "outputs": {"output": "12:00"}, "child_runs": []},
               {"id": "r2", "name": "llm", "run_type": "llm", "start_time": "2025-01-01T00:00:01Z", "end_time": "2025-01-01T00:00:02Z",
                "inputs": {"prompts": ["what time is it?"]}, "outputs": {"generations": [[{"text": "calling clock"}]],
                                                                         "llm_output": {"token_usage": {"prompt_tokens": 30, "completion_tokens": 4, "prompt_tokens_details": {"cached_tokens": 10}}}}},
           ]}
    f = tmp_path / "nested.json"
    f.write_text(json.dumps(doc))
    entries, problems, _ = read_all(f)
    assert not problems
    assert [e.key for e in entries] == ["r1", "r2", "r3"] and {e.session for e in entries} == {"r1"}
    assert b"child_runs" not in entries[0].raw  # children are records of their own
    store, _ = collected([f], tmp_path / "home")
    (conv,) = conversations(store).values()
    (call,) = conv.model_calls()
    assert (call.usage.input, call.usage.cache_read, call.usage.output) == (20, 10, 4)  # OpenAI dialect: cached inside prompt
    (tool,) = tool_steps(conv)
    assert tool.name == "clock" and tool.text == "12:00"
    store.close()


def test_order_is_dotted_order_whatever_the_file_order(tmp_path: Path) -> None:
    t = Tree()
    root = t.run("a", "chain", inputs={"input": "go"})
    for i in range(6):
        node = t.run(f"n{i}", "chain", root)
        t.run("m", "llm", node, outputs=lc_ai(f"step {i}", None))
    want = [r["id"] for r in sorted(t.runs, key=lambda r: r["dotted_order"])]
    a = [e.key for e in read_all(t.write(tmp_path / "a.json", shuffle=True))[0]]
    b = [e.key for e in read_all(t.write(tmp_path / "b.json"))[0]]
    assert a == b == want


def test_grown_jsonl_update_lands_as_a_new_version(tmp_path: Path) -> None:
    """A run's create, then later its update appended: the run is read again and lands as a new
    version with outputs and usage; nothing is stored twice."""
    rid = "0190a000-0000-7000-8000-00000000000a"
    post = {"id": rid, "trace_id": rid, "name": "ChatOpenAI", "run_type": "llm", "dotted_order": f"20250301T120000000000Z{rid}",
            "start_time": 1740830400000, "inputs": {"messages": [{"role": "user", "content": "hi"}]}}
    patch = {"trace_id": rid, "dotted_order": post["dotted_order"], "end_time": 1740830401000,  # a JS update: no id
             "outputs": {"choices": [{"message": {"role": "assistant", "content": "hello"}}], "model": "gpt-4o-mini",
                         "usage_metadata": {"input_tokens": 12, "output_tokens": 3, "total_tokens": 15, "input_token_details": {"cache_read": 2}}}}
    f = tmp_path / "live.jsonl"
    f.write_text(json.dumps(post) + "\n")
    store = Store.open(tmp_path / "home")
    collect([f], store, runtime="langsmith")
    (call,) = api.load(rid, store=store).model_calls()
    assert call.usage.input is None and call.usage.output is None
    with open(f, "a") as fh:
        fh.write(json.dumps({"patch": [patch]}) + "\n")
    res = collect([f], store, runtime="langsmith")
    assert res.records_published == 1 and len(res.rounds) == 1
    conv = api.load(rid, store=store)
    (call,) = conv.model_calls()
    assert (call.usage.input, call.usage.cache_read, call.usage.output) == (10, 2, 3)
    assert conv.step(conv.main_talks[0].reply).text == "hello"
    assert len(store.records(rid, 2)) == 1 and [r.version for r in store.records(rid, 2)] == [2]
    res = collect([f], store, runtime="langsmith")
    assert res.records_published == 0
    store.close()


# --- bad input -----------------------------------------------------------------------------------

def test_bad_jsonl_lines_are_named_and_nothing_else_is_lost(tmp_path: Path) -> None:
    t = Tree()
    root = t.run("agent", "chain", inputs={"input": "hello"})
    llm = t.run("m", "llm", root, outputs=lc_ai("hi", {"input_tokens": 5, "output_tokens": 1, "total_tokens": 6}))
    lines = [
        json.dumps(root),
        "{not json",
        "[1, 2]",
        json.dumps({"name": "nameless", "run_type": "llm"}),
        json.dumps(llm),
        json.dumps({"foo": 1}),
    ]
    f = tmp_path / "bad.jsonl"
    f.write_text("\n".join(lines) + '\n{"id": "trunc')
    entries, problems, cur = read_all(f)
    assert [e.key for e in entries] == [root["id"], llm["id"]]
    assert [e.line for e in entries] == [1, 5]
    problems.sort(key=lambda p: p.line)
    assert [(p.file, p.line) for p in problems] == [(str(f), 2), (str(f), 3), (str(f), 3), (str(f), 4), (str(f), 6), (str(f), 7)]
    assert "not JSON" in problems[0].message and "truncated" in problems[-1].message
    assert "without id or dotted_order" in problems[3].message
    assert cur.offset == len("\n".join(lines).encode()) + 1 and cur.line == 6  # the half-written line is left
    store, res = collected([f], tmp_path / "home")
    assert len(res.problems) == 6
    (conv,) = conversations(store).values()
    assert len(conv.model_calls()) == 1 and [s.text for s in conv.person_inputs()] == ["hello"]
    store.close()


def test_json_syntax_error_keeps_the_runs_before_it(tmp_path: Path) -> None:
    t = Tree()
    root = t.run("agent", "chain", inputs={"input": "hello"})
    llm = t.run("m", "llm", root, outputs=lc_ai("hi", None))
    text = json.dumps([root, llm], indent=2)
    text = text[:-2] + ',\n  {"id": "x", oops}\n]'
    f = tmp_path / "broken.json"
    f.write_text(text)
    entries, problems, _ = read_all(f)
    assert [e.key for e in entries] == [root["id"], llm["id"]]
    (p,) = problems
    assert p.file == str(f) and p.line == text.count("\n") and "not valid JSON" in p.message


def test_shapes_that_are_not_runs_are_named(tmp_path: Path) -> None:
    t = Tree()
    root = t.run("agent", "chain", inputs={"input": "hello"})
    f = tmp_path / "mixed.json"
    f.write_text(json.dumps({"post": [root, "oops", {"name": "no id"}], "patch": [{"end_time": 1}]}, indent=1))
    entries, problems, _ = read_all(f)
    assert [e.key for e in entries] == [root["id"]]
    msgs = [p.message for p in problems]
    assert any("post[1]" in m and "not a run" in m for m in msgs)
    assert any("post[2]" in m and "without id or dotted_order" in m for m in msgs)
    assert any("patch[0]" in m and "without id or dotted_order" in m for m in msgs)
    assert all(p.file == str(f) and p.line > 1 for p in problems)


def test_update_without_its_create_is_kept_apart(tmp_path: Path) -> None:
    rid = "0190a000-0000-7000-8000-0000000000bb"
    f = tmp_path / "patch-only.json"
    f.write_text(json.dumps({"patch": [{"trace_id": rid, "dotted_order": f"20250301T120000000000Z{rid}", "outputs": {"x": 1}}]}))
    entries, problems, _ = read_all(f)
    (e,) = entries
    assert e.key == f"{rid}:update" and e.events == () and e.session == rid
    (p,) = problems
    assert "create is not in this file" in p.message and p.line == 1


def test_unexpected_shapes_inside_a_run_do_not_stop_reading(tmp_path: Path) -> None:
    t = Tree()
    root = t.run("agent", "chain", inputs={"messages": "just a string"})
    t.run("m", "llm", root, outputs={"generations": "nonsense", "usage_metadata": {"input_tokens": "many"}}, extra=None)
    t.run("tool", "tool", root, inputs=["not", "a", "dict"], outputs={"output": {"weird": [1, 2]}}, error={"message": "boom"})
    entries, problems, _ = read_all(t.write(tmp_path / "odd.json"))
    assert not problems and len(entries) == 3
    ev = {e.kind: e.events for e in entries}
    assert ev["chain"][0]["text"] == "just a string"
    call = next(x for x in ev["llm"] if x["e"] == "call")
    assert call["usage"] is None
    res = next(x for x in ev["tool"] if x["e"] == "tool_result")
    assert res["error"] is True and "boom" in res["text"]


# --- plugin wiring -------------------------------------------------------------------------------

def test_entry_point_and_no_heavy_imports() -> None:
    from asz_core.registry import Registry

    assert type(Registry().runtime("langsmith")).__name__ == "LangSmithAdapter"
    code = ("import sys, asz_adapters_langsmith.plugin as p; p.asz_runtime_adapters;"
            "print('asz_adapters_langsmith.adapter' in sys.modules, 'langsmith' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False"]
    code = "import sys, asz_adapters_langsmith.adapter; print('langsmith' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"


@needs_corpus
def test_collect_detects_langsmith_for_the_corpus_folder() -> None:
    from asz_core.registry import Registry

    found = Registry().detect_runtime(LS)
    assert found is not None and found.name == "langsmith"
