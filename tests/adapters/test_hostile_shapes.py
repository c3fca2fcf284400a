"""Lines of hostile shapes in real transcripts, for every runtime: each field of real records
replaced, one at a time, by a list or an object where a string was (``type: ["user"]``, an
unhashable value), by a value nested 300 levels deep (past Python's stack as asz walks it, past
the 255 levels orjson writes), and by one nested deeper than any JSON reader takes.

Every such line is kept or skipped with a warning naming its file and line, never a crash: not
in collect, nor in what reads the store afterwards (assembly, the ledger, show, operations,
the navigation tools). The real records around them are published as without them.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from asz_core import api, ledger, navigation, operations, report
from asz_core.collect import collect
from asz_core.records import Problem
from asz_core.store import Store

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("ASZ_CORPUS") or ROOT.parent / "shared" / "corpus")
CLAUDE = (CORPUS / "claude-code" / "crypto590__personal-ai-infrastructure" / "projects"
          / "-Users-coreyyoung-Desktop-Projects-match" / "b277cc60-6558-433f-92b8-95dd61c280e1.jsonl")
CODEX = CORPUS / "codex" / "langchain-ai__langsmith-codex-plugins/plugins/tracing/test/sessions/2026/04/23/rollout-editing.jsonl"
KIRO = CORPUS / "kiro" / "PRO-HUNTER-X__team03-aws-hackathon" / "suggest-update-readme.md.json"
LANGSMITH = (CORPUS / "langsmith" / "langchain-ai__langsmith-sdk" / "python" / "tests" / "integration_tests"
             / "test_data" / "langsmith_py_wrap_openai_reasoning.json")

DEEP = 300
TOO_DEEP = 1100  # past orjson's 1024 levels and Python's json stack: no reader takes it


def nested(kind: str, depth: int = DEEP) -> Any:
    v: Any = "x"
    for _ in range(depth):
        v = {"k": v} if kind == "object" else [v]
    return v


HOSTILE = {"list": ["user"], "object": {"type": "user"}, "deep object": nested("object"), "deep list": nested("list")}


def paths(obj: Any, prefix: tuple[Any, ...] = (), depth: int = 6) -> Iterator[tuple[Any, ...]]:
    """Every key path of ``obj`` down to ``depth`` levels (lists: their first two items)."""
    if depth == 0:
        return
    items = obj.items() if isinstance(obj, dict) else enumerate(obj[:2]) if isinstance(obj, list) else ()
    for k, v in items:
        yield (*prefix, k)
        yield from paths(v, (*prefix, k), depth - 1)


def replaced(obj: Any, path: tuple[Any, ...], value: Any) -> Any:
    out = copy.deepcopy(obj)
    cur = out
    for k in path[:-1]:
        cur = cur[k]
    cur[path[-1]] = value
    return out


def mutants(obj: dict[str, Any], fresh: Any) -> Iterator[dict[str, Any]]:
    """``obj`` with each of its fields, in turn, replaced by each hostile value; ``fresh(obj)``
    gives the copy a new identity first, so it is not taken for the real record."""
    for p in paths(obj):
        for value in HOSTILE.values():
            yield replaced(fresh(copy.deepcopy(obj)), p, value)


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)  # the stdlib writes 300 levels; orjson would not


def too_deep_line() -> str:
    """Two lines: lists nested 1,000 deep (orjson reads them, Python's stack would not walk them),
    and an object nested past what any JSON reader takes (the file's last line)."""
    return "[" * 1000 + "]" * 1000 + '\n{"type": "user", "deep": ' + "[" * TOO_DEEP + "]" * TOO_DEEP + "}"


# --- per runtime: real records, hostile copies of them -----------------------------------------

def _claude(dest: Path) -> tuple[Path, int]:
    lines = CLAUDE.read_text(encoding="utf-8").splitlines()
    objs = [json.loads(x) for x in lines]
    picks = _firsts(objs, lambda o: (o.get("type"), _cc_shape(o)))
    n = 0

    def fresh(o: dict[str, Any]) -> dict[str, Any]:
        nonlocal n
        n += 1
        o["uuid"] = f"hostile-{n}"
        if isinstance(o.get("message"), dict) and "id" in o["message"]:
            o["message"]["id"] = f"msg_hostile_{n}"
        return o

    out = lines + [dumps(m) for o in picks for m in mutants(o, fresh)] + [too_deep_line()]
    f = dest / CLAUDE.name
    f.write_text("\n".join(out) + "\n", encoding="utf-8")
    return f, len(lines)


def _cc_shape(o: dict[str, Any]) -> str:
    content = (o.get("message") or {}).get("content") if isinstance(o.get("message"), dict) else None
    if isinstance(content, list):
        return ",".join(sorted({str(b.get("type")) for b in content if isinstance(b, dict)}))
    return type(content).__name__


def _codex(dest: Path) -> tuple[Path, int]:
    lines = CODEX.read_text(encoding="utf-8").splitlines()
    objs = [json.loads(x) for x in lines]
    picks = _firsts(objs[1:], lambda o: (o.get("type"), (o.get("payload") or {}).get("type")))
    extra = []
    for o in picks:
        if (o.get("payload") or {}).get("type") == "function_call":
            # The arguments are JSON inside a string: nested there too.
            args = replaced(o, ("payload", "arguments"), json.dumps({"cmd": nested("object")}))
            extra.append(dumps(args))
            # 1,000 levels: orjson reads them, asz must walk them without Python's stack.
            extra.append(dumps(replaced(o, ("payload", "arguments"), '{"cmd": ' + "[" * 1000 + "]" * 1000 + "}")))
    out = lines + [dumps(m) for o in picks for m in mutants(o, lambda o: o)] + extra + [too_deep_line()]
    f = dest / CODEX.name
    f.write_text("\n".join(out) + "\n", encoding="utf-8")
    return f, len(lines)


def _kiro(dest: Path) -> tuple[Path, int]:
    doc = json.loads(KIRO.read_text(encoding="utf-8"))
    hist = doc["history"]
    picks = _firsts(hist, lambda h: (tuple(h["user"]["content"]), tuple(h["assistant"])))
    n = 0

    def fresh(h: dict[str, Any]) -> dict[str, Any]:
        nonlocal n
        n += 1
        body = next(iter(h["assistant"].values()))
        body["message_id"] = f"hostile-{n}"
        return h

    doc["history"] = hist + [m for h in picks for m in mutants(h, fresh)]
    f = dest / KIRO.name
    f.write_text(json.dumps(doc, indent=1, ensure_ascii=False), encoding="utf-8")
    return f, len(hist)


def _kiro_journal(dest: Path) -> tuple[Path, int]:
    """Kiro 2.x journals (no real one exists: the shape of shared/spec/runtimes §1.6)."""
    sid = "5e55e55e-0000-4000-8000-000000000001"
    (dest / f"{sid}.json").write_text(json.dumps({"session_id": sid, "cwd": "/w", "title": "t"}))
    real = [
        {"version": "v1", "kind": "Prompt", "data": {"message_id": "p1", "content": [{"kind": "text", "data": "fix it"}],
                                                     "meta": {"timestamp": 1757000000}}},
        {"version": "v1", "kind": "AssistantMessage", "data": {"message_id": "a1", "content": [
            {"kind": "text", "data": "on it"},
            {"kind": "toolUse", "data": {"toolUseId": "t1", "name": "write", "input": {"path": "a.py", "content": "x"}}}]}},
        {"version": "v1", "kind": "ToolResults", "data": {"message_id": "r1", "content": [
            {"kind": "toolResult", "data": {"toolUseId": "t1", "status": "success", "content": [{"kind": "text", "data": "ok"}]}}]}},
    ]
    n = 0

    def fresh(o: dict[str, Any]) -> dict[str, Any]:
        nonlocal n
        n += 1
        o["data"]["message_id"] = f"hostile-{n}"
        return o

    lines = [dumps(o) for o in real]
    out = lines + [dumps(m) for o in real for m in mutants(o, fresh)] + [too_deep_line()]
    f = dest / f"{sid}.jsonl"
    f.write_text("\n".join(out) + "\n", encoding="utf-8")
    return f, len(lines)


def _langsmith(dest: Path) -> tuple[Path, int]:
    data = json.loads(LANGSMITH.read_text(encoding="utf-8"))
    runs = _runs(data) + _agent_runs()
    picks = _firsts(runs, lambda r: r.get("run_type"))
    n = 0

    def fresh(r: dict[str, Any]) -> dict[str, Any]:
        nonlocal n
        n += 1
        r["id"] = f"00000000-0000-4000-8000-{n:012d}"
        r.pop("dotted_order", None)
        r.pop("child_runs", None)
        return r

    # A root whose prompt is nested 1,000 levels in "input" keys (where a prompt is looked for).
    deep_prompt = ('{"id": "0000bbbb-0000-4000-8000-000000000001", "trace_id": "0000bbbb-0000-4000-8000-000000000001", '
                   '"run_type": "chain", "name": "agent", "inputs": ' + '{"input": ' * 1000 + '"go"' + "}" * 1000 + "}")
    out = [dumps(r) for r in runs] + [dumps(m) for r in picks for m in mutants(r, fresh)] + [deep_prompt, too_deep_line()]
    f = dest / "runs.jsonl"
    f.write_text("\n".join(out) + "\n", encoding="utf-8")
    return f, len(runs)


def _agent_runs() -> list[dict[str, Any]]:
    """A root chain with a tool run under it (the SDK corpus files hold llm runs only)."""
    root, tool = "0000aaaa-0000-4000-8000-000000000001", "0000aaaa-0000-4000-8000-000000000002"
    dotted = "20250101T000000000000Z" + root
    return [
        {"id": root, "trace_id": root, "dotted_order": dotted, "run_type": "chain", "name": "agent",
         "inputs": {"messages": [{"role": "user", "content": "write a.py"}]}, "outputs": {"messages": []},
         "start_time": "2025-01-01T00:00:00", "end_time": "2025-01-01T00:00:09", "extra": {"metadata": {"ls_agent_type": "root"}}},
        {"id": tool, "trace_id": root, "parent_run_id": root, "dotted_order": dotted + ".20250101T000001000000Z" + tool,
         "run_type": "tool", "name": "Write", "inputs": {"file_path": "a.py", "content": "print(1)"},
         "outputs": {"output": "written"}, "start_time": "2025-01-01T00:00:01", "end_time": "2025-01-01T00:00:02"},
    ]


def _runs(data: Any) -> list[dict[str, Any]]:
    """The run objects of a LangSmith fixture, whatever holds them."""
    found: list[dict[str, Any]] = []
    stack = [data]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            if "run_type" in v and "id" in v:
                found.append({k: x for k, x in v.items() if k != "child_runs"})
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return found


def _firsts(objs: list[Any], shape: Any) -> list[Any]:
    """The first object of each shape (one user line, one assistant line with a tool call, ...)."""
    seen: dict[Any, Any] = {}
    for o in objs:
        try:
            k = shape(o)
        except (AttributeError, KeyError, TypeError):
            continue
        seen.setdefault(k, o)
    return list(seen.values())


BUILD = {"claudecode": (_claude, CLAUDE), "codex": (_codex, CODEX), "kiro": (_kiro, KIRO),
         "kiro-journal": (_kiro_journal, None), "langsmith": (_langsmith, LANGSMITH)}


# --- the test ----------------------------------------------------------------------------------

def _read_everything(store: Store) -> int:
    """Everything that reads what collect stored, on every conversation; returns the steps seen."""
    prices = ledger.load_prices()
    steps = 0
    for row in store.conversations():
        conv = api.load(row.id, store=store)
        led = ledger.build(conv, prices)
        assert not list(ledger.check_owners(led))
        for by in ledger.BY:
            ledger.rows(led, by)
        json.dumps(report.show_json(conv, led), default=str)
        for width in (80, 200):
            Console(file=open(os.devnull, "w"), width=width).print(report.show_text(conv, led))  # noqa: SIM115
        operations.of_conversation(conv)
        nav = navigation.open_navigator(row.id, store=store, budget=10**12)
        for tool, args in [("card", {}), ("talks", {}), ("operations", {}), ("subtasks", {}),
                           ("search", {"query": "user"})]:
            json.loads(nav.call(tool, args))
        for t in conv.talks:
            json.loads(nav.call("talk", {"id": t.id}))
        for s in conv.steps:
            json.loads(nav.call("step", {"id": s.id}))
            json.loads(nav.call("records", {"step": s.id}))
            steps += 1
    return steps


@pytest.mark.parametrize("runtime", list(BUILD))
def test_hostile_shapes_are_kept_or_skipped_with_a_warning(runtime: str, tmp_path: Path, store: Store) -> None:
    build, source = BUILD[runtime]
    if source is not None and not source.is_file():
        pytest.skip(f"corpus not found at {source}")
    folder = tmp_path / runtime
    folder.mkdir()
    f, real = build(folder)
    # The real records alone, for comparison.
    clean_dir = tmp_path / "clean"
    clean_dir.mkdir()
    if runtime in ("claudecode", "codex", "kiro"):
        shutil.copyfile(source, clean_dir / f.name)
    else:
        lines = f.read_text(encoding="utf-8").splitlines()[:real]
        (clean_dir / f.name).write_text("\n".join(lines) + "\n", encoding="utf-8")
        for meta in folder.glob("*.json"):
            shutil.copyfile(meta, clean_dir / meta.name)
    clean_store = Store.open(tmp_path / "clean-home")
    try:
        clean = collect([clean_dir], clean_store, runtime=runtime.split("-")[0])
        clean_steps = sum(len(api.load(r.id, store=clean_store).steps) for r in clean_store.conversations())
    finally:
        clean_store.close()

    if f.suffix == ".jsonl":
        # The same file with its first line's type a list: the line detect and files() look at.
        lines = f.read_text(encoding="utf-8").splitlines()
        first = json.loads(lines[0])
        first["kind" if "kind" in first else "type"] = ["x"]
        (folder / "first").mkdir()
        (folder / "first" / f.name).write_text("\n".join([json.dumps(first), *lines[1:real]]) + "\n", encoding="utf-8")
    res = collect([folder], store, runtime=runtime.split("-")[0])
    assert res.records_published > clean.records_published
    for p in res.problems:
        assert isinstance(p, Problem) and p.file.startswith(str(folder)) and p.line >= 0, p
    # A tool request nested past what events keep is kept whole in its record, and said so.
    assert any("tool request nested deeper than" in p.message for p in res.problems)
    # The line no reader takes is skipped, with a warning naming it.
    last = len(f.read_text(encoding="utf-8").splitlines())
    if f.suffix == ".jsonl":
        assert any(p.line == last and "not JSON" in p.message for p in res.problems), res.problems[-3:]
    steps = _read_everything(store)
    assert steps >= clean_steps


def _too_deep_doc(doc: Any, put: Any) -> str:
    """``doc`` as pretty JSON with a value nested TOO_DEEP levels where ``put(doc, marker)`` put
    the marker string (no JSON writer writes it; the text is made by hand)."""
    marker = "@@too-deep@@"
    put(doc, marker)
    return json.dumps(doc, indent=1, ensure_ascii=False).replace(f'"{marker}"', "[" * TOO_DEEP + "]" * TOO_DEEP)


@pytest.mark.parametrize("shape", ["langsmith post", "langsmith array", "langsmith run", "kiro save"])
def test_a_document_nested_past_any_reader_keeps_what_came_before(shape: str, tmp_path: Path, store: Store) -> None:
    source = KIRO if shape == "kiro save" else LANGSMITH
    if not source.is_file():
        pytest.skip(f"corpus not found at {source}")
    doc = json.loads(source.read_text(encoding="utf-8"))
    clean = collect([source], Store.open(tmp_path / "clean"), runtime=shape.split()[0])
    if shape == "kiro save":
        text = _too_deep_doc(doc, lambda d, m: d["history"].append({"user": {"content": m}, "assistant": {}}))
    elif shape == "langsmith post":
        text = _too_deep_doc(doc, lambda d, m: d["post"].append({"id": "deep", "trace_id": "deep", "run_type": "chain", "inputs": m}))
    elif shape == "langsmith array":
        runs = _runs(doc)
        text = _too_deep_doc(runs, lambda d, m: d.append({"id": "deep", "trace_id": "deep", "run_type": "chain", "inputs": m}))
    else:
        text = _too_deep_doc({"id": "deep", "trace_id": "deep", "run_type": "chain", "inputs": {}},
                             lambda d, m: d["inputs"].update(x=m))
    f = tmp_path / "doc.json"
    f.write_text(text, encoding="utf-8")
    deep_line = next(n for n, x in enumerate(text.splitlines(), 1) if "[[[[" in x)
    res = collect([f], store, runtime=shape.split()[0])
    # Named at the item that holds it (its first line, a few lines above the nesting).
    assert any(p.file == str(f) and deep_line - 6 <= p.line <= deep_line and "too deep" in p.message
               for p in res.problems), res.problems
    if shape != "langsmith run":
        # What came before the value is published as in the file without it (Kiro: the state
        # record is a new version, it lists one more history item).
        assert res.records_published == clean.records_published
    _read_everything(store)
