"""The Codex CLI adapter on the real rollouts in shared/corpus/codex, plus hand-made cases only
where the corpus has none (a forked child with copied history, a grandchild, queued input,
repeated token counts, shell-invoked apply_patch, bad lines, grown files).

Every count on a corpus file is derived here with plain json from the file itself, never from
the adapter; the literal numbers next to them were checked by hand once.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from asz_core.assembly import Conversation, assemble
from asz_core.collect import collect
from asz_core.records import Cursor, Entry, Problem
from asz_core.registry import Registry
from asz_core.store import Store

from asz_adapters_codex.adapter import CodexAdapter
from asz_adapters_codex.patch import patch_files

CORPUS = Path(os.environ.get("ASZ_CORPUS") or Path(__file__).resolve().parents[2].parent / "shared" / "corpus")
CODEX = CORPUS / "codex"
SESSIONS = CODEX / "langchain-ai__langsmith-codex-plugins/plugins/tracing/test/sessions/2026/04/23"
EDITING = SESSIONS / "rollout-editing.jsonl"
ATTACH = SESSIONS / "rollout-attachments.jsonl"
PARENT = SESSIONS / "rollout-subagents.jsonl"
CHILDREN = sorted(SESSIONS.glob("rollout-subagents-*.jsonl"))
EXEC_SAMPLE = CODEX / "openai__codex/docs-exec.md.sample.jsonl"
REAL = [EDITING, ATTACH, PARENT, *CHILDREN]

pytestmark = pytest.mark.skipif(not SESSIONS.is_dir(), reason=f"codex corpus not found at {CODEX}")


# --- helpers ------------------------------------------------------------------------------

def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def collect_into(store: Store, *paths: Path):
    return collect(list(paths), store, runtime="codex")


def conversations(store: Store) -> dict[str, Conversation]:
    out = {}
    for row in store.conversations():
        rnd = store.round(row.id)
        out[row.id] = assemble(row.id, row.runtime, rnd, store.records(row.id, rnd.number))
    return out


def only(store: Store) -> Conversation:
    convs = conversations(store)
    assert len(convs) == 1, list(convs)
    return next(iter(convs.values()))


def totals(conv: Conversation, stream: str | None = None) -> dict[str, int]:
    """Sums of the known counts, and how many calls have each count unknown."""
    calls = [c for c in conv.model_calls() if stream is None or c.stream == stream]
    kinds = ("input", "output", "cache_read", "cache_write")
    out = {k: sum(getattr(c.usage, k) or 0 for c in calls) for k in kinds}
    out.update({f"{k}_unknown": sum(1 for c in calls if getattr(c.usage, k) is None) for k in kinds})
    return out


def tool_steps(conv: Conversation, stream: str | None = None):
    return [s for s in conv.steps if s.kind in ("tool", "agent_call") and (stream is None or s.stream == stream)]


def expected_usage(path: Path) -> dict[str, int]:
    """Plain-json sums over every token_count with info: input without the cached part."""
    out = dict(calls=0, input=0, output=0, cache_read=0, cache_write=0)
    for o in lines(path):
        p = o["payload"]
        if o["type"] == "event_msg" and p["type"] == "token_count" and p["info"] is not None:
            u = p["info"]["last_token_usage"]
            out["calls"] += 1
            out["input"] += u["input_tokens"] - u["cached_input_tokens"]
            out["cache_read"] += u["cached_input_tokens"]
            out["output"] += u["output_tokens"]
            out["cache_write"] += u.get("cache_write_input_tokens", 0)  # OpenAI's dialect has none: 0
    return out


def expected_tools(path: Path) -> tuple[int, int]:
    """(tool calls, failed ones): a shell command whose exec_command_end exit code is not 0, a
    patch whose patch_apply_end says no success, a spawn_agent that spawned no thread."""
    recs = lines(path)
    calls = {o["payload"]["call_id"]: o["payload"]["name"] for o in recs
             if o["type"] == "response_item" and o["payload"]["type"] in ("function_call", "custom_tool_call")}
    failed = set()
    spawned = set()
    for o in recs:
        p = o["payload"]
        if o["type"] != "event_msg":
            continue
        if p["type"] == "exec_command_end" and p["exit_code"] != 0:
            failed.add(p["call_id"])
        if p["type"] == "patch_apply_end" and not p["success"]:
            failed.add(p["call_id"])
        if p["type"] == "collab_agent_spawn_end" and p.get("new_thread_id"):
            spawned.add(p["call_id"])
    failed |= {c for c, n in calls.items() if n == "spawn_agent" and c not in spawned}
    return len(calls), len(failed & set(calls))


def person_inputs(path: Path) -> list[str]:
    return [o["payload"]["message"] for o in lines(path) if o["type"] == "event_msg" and o["payload"]["type"] == "user_message"]


def write(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def rec(t: str, typ: str, payload: dict) -> dict:
    return {"timestamp": t, "type": typ, "payload": payload}


def tc(t: str, inp: int, cached: int, out: int, total: tuple[int, int, int] | None = None) -> dict:
    last = {"input_tokens": inp, "cached_input_tokens": cached, "output_tokens": out, "reasoning_output_tokens": 0,
            "total_tokens": inp + out}
    tot = last if total is None else {"input_tokens": total[0], "cached_input_tokens": total[1], "output_tokens": total[2],
                                      "reasoning_output_tokens": 0, "total_tokens": total[0] + total[2]}
    return rec(t, "event_msg", {"type": "token_count", "info": {"total_token_usage": tot, "last_token_usage": last}, "rate_limits": None})


def meta(t: str, tid: str, **extra) -> dict:
    return rec(t, "session_meta", {"id": tid, "timestamp": t, "cwd": "/w", "originator": "codex-tui", "cli_version": "0.123.0",
                                   "source": extra.pop("source", "cli"), "model_provider": "openai", **extra})


def ev(t: str, typ: str, **payload) -> dict:
    return rec(t, "event_msg", {"type": typ, **payload})


def item(t: str, typ: str, **payload) -> dict:
    return rec(t, "response_item", {"type": typ, **payload})


def assistant(t: str, text: str, phase: str = "final_answer") -> list[dict]:
    return [ev(t, "agent_message", message=text, phase=phase),
            item(t, "message", role="assistant", content=[{"type": "output_text", "text": text}], phase=phase)]


def spawn_source(parent: str, depth: int = 1) -> dict:
    return {"subagent": {"thread_spawn": {"parent_thread_id": parent, "depth": depth, "agent_nickname": "N", "agent_role": None}}}


# --- the real rollouts --------------------------------------------------------------------

@pytest.mark.parametrize("path", [EDITING, ATTACH], ids=lambda p: p.name)
def test_single_rollout_counts(path: Path, store: Store) -> None:
    res = collect_into(store, path)
    assert not res.problems
    assert res.records_seen == len(lines(path))
    conv = only(store)
    want = expected_usage(path)
    calls = conv.model_calls()
    assert len(calls) == want["calls"]
    t = totals(conv)
    assert (t["input"], t["output"], t["cache_read"]) == (want["input"], want["output"], want["cache_read"])
    assert t["input_unknown"] == t["output_unknown"] == t["cache_read_unknown"] == 0
    # OpenAI's dialect has no cache write (writing the cache is free): 0 by dialect, never unknown.
    assert (t["cache_write"], t["cache_write_unknown"]) == (want["cache_write"], 0) == (0, 0)
    # The model comes from turn_context.
    models = {o["payload"]["model"] for o in lines(path) if o["type"] == "turn_context"}
    assert {c.model for c in calls} == models == {"gpt-5.4"}
    n_tools, n_failed = expected_tools(path)
    tools = tool_steps(conv)
    assert len(tools) == n_tools
    assert sum(s.status == "failed" for s in tools) == n_failed
    assert all(s.status in ("returned", "failed") for s in tools)
    people = person_inputs(path)
    assert [s.text for s in conv.person_inputs()] == people
    assert len(conv.main_talks) == len(people) == 1
    # Each assistant text is written twice (agent_message and response_item message): once here.
    texts = [o["payload"]["message"] for o in lines(path) if o["type"] == "event_msg" and o["payload"]["type"] == "agent_message"]
    replies = [s for s in conv.steps if s.kind == "reply"]
    assert [s.text for s in replies] == texts
    talk = conv.main_talks[0]
    last = next(o["payload"]["last_agent_message"] for o in lines(path) if o["payload"].get("type") == "task_complete")
    assert conv.step(talk.reply).text == last


def test_editing_literals(store: Store) -> None:
    """The hand-checked numbers behind the derivations above."""
    assert expected_usage(EDITING) == dict(calls=5, input=14125, output=1627, cache_read=57088, cache_write=0)
    assert expected_tools(EDITING) == (8, 1)  # `rg --files` exits 1 in an empty folder
    assert expected_usage(ATTACH) == dict(calls=1, input=10403, output=262, cache_read=3840, cache_write=0)
    collect_into(store, EDITING)
    conv = only(store)
    failed = [s for s in tool_steps(conv) if s.status == "failed"]
    assert [s.request.get("cmd") for s in failed] == ["rg --files"]


def test_apply_patch_files_match_patch_apply_end(store: Store) -> None:
    collect_into(store, EDITING)
    conv = only(store)
    adapter = CodexAdapter()
    patches = [s for s in tool_steps(conv) if s.name == "apply_patch"]
    assert len(patches) == 1
    changed = [list(o["payload"]["changes"]) for o in lines(EDITING) if o["payload"].get("type") == "patch_apply_end"]
    assert adapter.file_requests("apply_patch", patches[0].request) == changed[0]
    assert changed[0] == ["/Users/duongtat/Work/ls-codex-sample/package.json", "/Users/duongtat/Work/ls-codex-sample/index.js",
                          "/Users/duongtat/Work/ls-codex-sample/README.md"]
    # The raw request (the whole patch) names the same files.
    raw = next(o["payload"]["input"] for o in lines(EDITING) if o["payload"].get("name") == "apply_patch")
    assert adapter.file_requests("apply_patch", {"input": raw}) == changed[0]
    assert all(not adapter.file_requests(s.name, s.request) for s in tool_steps(conv) if s.name != "apply_patch")


def test_subagents_join_parent_conversation(store: Store) -> None:
    res = collect_into(store, SESSIONS)
    assert not res.problems
    convs = conversations(store)
    parent_id = lines(PARENT)[0]["payload"]["id"]
    assert len(convs) == 3  # editing, attachments, and the parent with its two sub-agents
    conv = convs[parent_id]
    children = {lines(c)[0]["payload"]["id"]: c for c in CHILDREN}
    for cid, path in children.items():
        assert lines(path)[0]["payload"]["source"]["subagent"]["thread_spawn"]["parent_thread_id"] == parent_id
    # The spawn call that started each child, from the parent's own record.
    spawn_call = {o["payload"]["new_thread_id"]: o["payload"]["call_id"] for o in lines(PARENT)
                  if o["payload"].get("type") == "collab_agent_spawn_end"}
    assert set(spawn_call) == set(children)
    streams = {s.key: s for s in conv.streams}
    assert set(streams) == {"main", *children}
    for cid in children:
        s = streams[cid]
        assert s.kind == "child" and s.unattributed is None and s.parent == "m"
        assert [conv.step(x).tool_id for x in s.started_by] == [spawn_call[cid]]
        assert conv.step(s.started_by[0]).kind == "agent_call"
    # Counts per stream, each from its own file.
    for key, path in [("main", PARENT), *[(cid, p) for cid, p in children.items()]]:
        sid = streams[key].id
        want = expected_usage(path)
        t = totals(conv, sid)
        assert len([c for c in conv.model_calls() if c.stream == sid]) == want["calls"]
        assert (t["input"], t["output"], t["cache_read"]) == (want["input"], want["output"], want["cache_read"])
        n_tools, n_failed = expected_tools(path)
        tools = tool_steps(conv, sid)
        assert (len(tools), sum(s.status == "failed" for s in tools)) == (n_tools, n_failed)
    assert expected_usage(PARENT)["calls"] == 6 and expected_tools(PARENT) == (8, 2)  # two rejected spawns
    # Person input only from user_message in the parent; a child's user_message is its prompt.
    assert [s.text for s in conv.person_inputs()] == person_inputs(PARENT)
    agent_inputs = [s.text for s in conv.steps if s.kind == "input" and s.source == "agent"]
    assert sorted(agent_inputs) == sorted(m for p in CHILDREN for m in person_inputs(p))
    # <subagent_notification> user items are runtime notices, not the person.
    notes = [s for s in conv.steps if s.kind == "notice" and s.notice == "task_notification"]
    assert len(notes) == sum(1 for o in lines(PARENT) if o["payload"].get("role") == "user"
                             and "<subagent_notification>" in json.dumps(o["payload"]))  # == 2
    assert len(notes) == 2
    # spawn_agent answers with the child's id at once (a launch, not its report); each child's
    # report comes back by the notification that names it (its agent_path)
    for cid in children:
        assert conv.step(streams[cid].started_by[0]).launch is True
    ended = {s.ended for s in notes}
    assert ended == {streams[cid].id for cid in children}
    for s in notes:
        assert conv.stream(s.ended).key in s.text  # type: ignore[arg-type]
    # Talks: one main talk, one per child.
    assert len(conv.talks) == 1 + len(children)
    assert len(conv.main_talks) == 1


def test_child_without_parent_is_unattributed(store: Store, tmp_path: Path) -> None:
    child = CHILDREN[0]
    collect_into(store, child)
    conv = only(store)
    assert conv.id == lines(PARENT)[0]["payload"]["id"]  # the parent's thread names the conversation
    (s,) = conv.streams
    assert s.kind == "child" and s.unattributed == "no starting step"
    # The parent collected later lands in the same conversation and attributes the child.
    collect_into(store, PARENT)
    conv = only(store)
    s = next(x for x in conv.streams if x.key != "main")
    assert s.unattributed is None and s.parent == "m"


def test_recollect_publishes_nothing(store: Store) -> None:
    first = collect_into(store, SESSIONS)
    assert first.records_published == sum(len(lines(p)) for p in REAL)
    again = collect_into(store, SESSIONS)
    assert again.records_published == 0 and again.rounds == ()


def test_rewritten_file_publishes_nothing(store: Store, tmp_path: Path) -> None:
    """A file that shrank is read again from the start; what it holds is already stored."""
    src = EDITING.read_bytes().splitlines(keepends=True)
    f = tmp_path / EDITING.name
    f.write_bytes(b"".join(src))
    collect_into(store, f)
    f.write_bytes(b"".join(src[:10]))
    assert collect_into(store, f).records_published == 0
    f.write_bytes(b"".join(src))
    again = collect_into(store, f)
    assert again.records_published == 0 and again.files_read == 1


@pytest.mark.parametrize("cut", [13, 14, 20, 34, 49])
def test_grown_file_publishes_only_new_lines(store: Store, tmp_path: Path, cut: int) -> None:
    """A live rollout read twice: the second collect reads only the new lines, and the open
    model call (items seen, token_count not yet) is completed from the cursor's state."""
    src = EDITING.read_bytes().splitlines(keepends=True)
    f = tmp_path / EDITING.name
    f.write_bytes(b"".join(src[:cut]))
    r1 = collect_into(store, f)
    assert r1.records_published == cut
    f.write_bytes(b"".join(src))
    r2 = collect_into(store, f)
    assert r2.records_published == len(src) - cut
    assert [r.number for r in r2.rounds] == [2]
    grown = only(store)
    whole_store = Store.open(tmp_path / "whole")
    collect_into(whole_store, EDITING)
    whole = only(whole_store)
    assert totals(grown) == totals(whole)
    assert [(s.kind, s.name, s.status, s.call) for s in grown.steps] == [(s.kind, s.name, s.status, s.call) for s in whole.steps]
    whole_store.close()


def test_truncated_last_line_waits_for_next_collect(store: Store, tmp_path: Path) -> None:
    src = EDITING.read_bytes().splitlines(keepends=True)
    f = tmp_path / EDITING.name
    f.write_bytes(b"".join(src[:14]) + src[14][:40])
    r1 = collect_into(store, f)
    assert r1.records_published == 14
    assert [(p.file, p.line) for p in r1.problems] == [(str(f), 15)]
    assert "truncated" in r1.problems[0].message
    f.write_bytes(b"".join(src))
    r2 = collect_into(store, f)
    assert r2.records_published == len(src) - 14 and not r2.problems
    assert len(only(store).model_calls()) == 5


def test_bad_lines_warn_and_lose_nothing_else(store: Store, tmp_path: Path) -> None:
    src = EDITING.read_text().splitlines(keepends=True)
    bad = src[:10] + ["{this is not json\n", "[1, 2]\n", '{"timestamp":"2026-04-23T20:21:13.000Z","type":"mystery","payload":{}}\n'] + src[10:]
    f = tmp_path / EDITING.name
    f.write_text("".join(bad))
    res = collect_into(store, f)
    assert [(p.file, p.line) for p in res.problems] == [(str(f), 11), (str(f), 12), (str(f), 13)]
    assert "not JSON" in res.problems[0].message and "not a JSON object" in res.problems[1].message
    assert "unknown record type 'mystery'" in res.problems[2].message
    assert res.records_seen == len(src) + 1  # the unknown type is kept (no events)
    conv = only(store)
    want = expected_usage(EDITING)
    t = totals(conv)
    assert (len(conv.model_calls()), t["input"], t["output"], t["cache_read"]) == (want["calls"], want["input"], want["output"], want["cache_read"])
    assert (len(tool_steps(conv)), sum(s.status == "failed" for s in tool_steps(conv))) == expected_tools(EDITING)


def test_unexpected_shape_is_kept_with_a_warning(tmp_path: Path) -> None:
    f = write(tmp_path / "x.jsonl", [meta("2026-01-01T00:00:00.000Z", "t1"),
                                     ev("2026-01-01T00:00:01.000Z", "user_message", message="hi"),
                                     rec("2026-01-01T00:00:02.000Z", "turn_context", {"collaboration_mode": "not an object"}),
                                     ev("2026-01-01T00:00:03.000Z", "token_count", info={"last_token_usage": "bad"})])
    out = list(CodexAdapter().read(f, Cursor()))
    problems = [x for x in out if isinstance(x, Problem)]
    entries = [x for x in out if isinstance(x, Entry)]
    assert [(p.file, p.line) for p in problems] == [(str(f), 3), (str(f), 4)]
    assert "unexpected shape" in problems[0].message
    assert "not numbers" in problems[1].message  # said, not silent (issue 32)
    assert len(entries) == 4 and entries[2].events == ()
    assert [e["e"] for e in entries[1].events] == ["input"]
    # A token count whose usage is not an object is still one call, with unknown usage.
    assert [(e["e"], e["usage"]) for e in entries[3].events] == [("call", None)]


# --- detection ----------------------------------------------------------------------------

def test_detect_claims_only_codex_files() -> None:
    a = CodexAdapter()
    for p in REAL + [EXEC_SAMPLE]:
        assert a.detect(p), p
    for other in ("claude-code", "kiro", "langsmith"):
        root = CORPUS / other
        if not root.is_dir():
            continue
        assert not a.detect(root)
        assert not [p for p in root.rglob("*") if p.is_file() and a.detect(p)]


def test_registry_picks_the_right_runtime() -> None:
    reg = Registry()
    assert reg.detect_runtime(SESSIONS).name == "codex"
    assert reg.detect_runtime(EDITING).name == "codex"
    if (CORPUS / "claude-code").is_dir():
        assert reg.detect_runtime(CORPUS / "claude-code").name == "claudecode"


def test_collect_claude_corpus_still_uses_claudecode(store: Store) -> None:
    root = CORPUS / "claude-code"
    if not root.is_dir():
        pytest.skip("no claude-code corpus")
    collect([root], store)
    assert {row.runtime for row in store.conversations()} == {"claudecode"}


# --- codex exec --json --------------------------------------------------------------------

def test_exec_json_sample(store: Store) -> None:
    res = collect_into(store, EXEC_SAMPLE)
    assert not res.problems
    conv = only(store)
    recs = lines(EXEC_SAMPLE)
    usage = [o["usage"] for o in recs if o["type"] == "turn.completed"]
    assert len(usage) == 1
    (call,) = conv.model_calls()  # exec --json gives usage per turn: one call stands for the turn
    u = usage[0]
    assert (call.usage.input, call.usage.cache_read, call.usage.output, call.usage.cache_write) == (
        u["input_tokens"] - u["cached_input_tokens"], u["cached_input_tokens"], u["output_tokens"], 0)
    assert call.model is None  # exec --json names no model
    tools = tool_steps(conv)
    commands = [o for o in recs if o["type"] == "item.completed" and o["item"]["type"] == "command_execution"]
    assert len(tools) == len(commands) == 1
    assert tools[0].status == ("failed" if commands[0]["item"]["exit_code"] else "returned")
    replies = [s for s in conv.steps if s.kind == "reply"]
    assert [s.text for s in replies] == [o["item"]["text"] for o in recs if o["type"] == "item.completed" and o["item"]["type"] == "agent_message"]
    assert conv.person_inputs() == []  # the prompt is a command-line argument, not in the stream


# --- hand-made cases the corpus lacks -----------------------------------------------------

T0 = "2026-05-01T10:00:00"


def test_forked_subagent_skips_copied_history(store: Store, tmp_path: Path) -> None:
    """A full-history fork (spawn_agent fork_context): the child file opens with its meta, then
    the parent's meta and history copied in one burst, token counts included. Only the child's
    own call counts."""
    parent, child = "p-0001", "c-0002"
    copied = [
        meta(f"{T0}.001Z", parent),
        ev(f"{T0}.002Z", "task_started", turn_id="tp1"),
        ev(f"{T0}.002Z", "user_message", message="earlier request"),
        tc(f"{T0}.003Z", 1000, 0, 50),
        *assistant(f"{T0}.003Z", "earlier answer"),
        ev(f"{T0}.003Z", "task_complete", turn_id="tp1"),
        ev(f"{T0}.004Z", "task_started", turn_id="tp2"),
        ev(f"{T0}.004Z", "user_message", message="spawn a forked helper"),
        tc(f"{T0}.005Z", 1200, 1000, 40, total=(2200, 1000, 90)),
    ]
    own = [
        ev(f"{T0}.030Z", "task_started", turn_id="tc1"),
        rec(f"{T0}.031Z", "turn_context", {"turn_id": "tc1", "model": "gpt-5.4"}),
        ev(f"{T0}.032Z", "user_message", message="do the forked task"),
        item("2026-05-01T10:00:03.000Z", "reasoning", summary=[]),
        *assistant("2026-05-01T10:00:03.100Z", "forked result"),
        tc("2026-05-01T10:00:03.200Z", 2500, 2200, 30, total=(4700, 3200, 120)),
        ev("2026-05-01T10:00:03.300Z", "task_complete", turn_id="tc1"),
    ]
    f = write(tmp_path / f"rollout-2026-05-01T10-00-00-{child}.jsonl",
              [meta(f"{T0}.000Z", child, forked_from_id=parent, source=spawn_source(parent))] + copied + own)
    res = collect_into(store, f)
    assert not res.problems and res.records_seen == 1 + len(copied) + len(own)
    conv = only(store)
    assert conv.id == parent
    (call,) = conv.model_calls()
    assert (call.usage.input, call.usage.cache_read, call.usage.output) == (300, 2200, 30)
    assert [s.text for s in conv.steps if s.kind == "input"] == ["do the forked task"]
    assert all(s.source == "agent" for s in conv.steps if s.kind == "input")
    assert [s.text for s in conv.steps if s.kind == "reply"] == ["forked result"]
    assert [s.notice for s in conv.steps if s.kind == "notice"] == ["fork"]


def test_subagent_with_copied_metas_but_no_fork_id(store: Store, tmp_path: Path) -> None:
    """Older builds: no forked_from_id, but the ancestors' metas follow the child's own."""
    parent, child = "p-0003", "c-0004"
    recs = [meta(f"{T0}.000Z", child, source=spawn_source(parent)), meta(f"{T0}.001Z", parent),
            ev(f"{T0}.002Z", "task_started", turn_id="tp"), ev(f"{T0}.002Z", "user_message", message="x"),
            tc(f"{T0}.003Z", 500, 0, 5),
            ev(f"{T0}.040Z", "task_started", turn_id="tc"), ev(f"{T0}.041Z", "user_message", message="child task"),
            *assistant("2026-05-01T10:00:02.000Z", "done"), tc("2026-05-01T10:00:02.100Z", 700, 500, 7, total=(1200, 500, 12)),
            ev("2026-05-01T10:00:02.200Z", "task_complete", turn_id="tc")]
    collect_into(store, write(tmp_path / f"rollout-x-{child}.jsonl", recs))
    conv = only(store)
    assert [(c.usage.input, c.usage.output) for c in conv.model_calls()] == [(200, 7)]
    assert [s.text for s in conv.steps if s.kind == "input"] == ["child task"]


def test_user_fork_with_gap_ends_copied_history(store: Store, tmp_path: Path) -> None:
    """A fork the person made (forked_from_id, source cli): the copy is all closed turns; the
    person's next prompt comes seconds later and is the first thing counted."""
    t = "2026-05-01T10:00:02"  # the copy may be written a while after the fork's own meta
    recs = [meta(f"{T0}.000Z", "f-1", forked_from_id="o-1"), meta(f"{t}.001Z", "o-1"),
            ev(f"{t}.002Z", "task_started", turn_id="a"), ev(f"{t}.002Z", "user_message", message="old"),
            *assistant(f"{t}.003Z", "old answer"), tc(f"{t}.003Z", 900, 0, 9), ev(f"{t}.003Z", "task_complete", turn_id="a"),
            ev("2026-05-01T10:00:20.000Z", "task_started", turn_id="b"),
            ev("2026-05-01T10:00:20.001Z", "user_message", message="new direction"),
            *assistant("2026-05-01T10:00:24.000Z", "new answer"), tc("2026-05-01T10:00:24.100Z", 1000, 900, 10, total=(1900, 900, 19)),
            ev("2026-05-01T10:00:24.200Z", "task_complete", turn_id="b")]
    collect_into(store, write(tmp_path / "rollout-fork-f-1.jsonl", recs))
    conv = only(store)
    assert conv.id == "f-1"
    assert [s.text for s in conv.person_inputs()] == ["new direction"]
    assert [(c.usage.input, c.usage.cache_read, c.usage.output) for c in conv.model_calls()] == [(100, 900, 10)]
    assert len(conv.main_talks) == 1


def test_grandchild_joins_the_root_conversation(store: Store, tmp_path: Path) -> None:
    day = tmp_path / "sessions/2026/05/01"
    root, child, grand = "r-0000-0000-0000-000000000001", "c-0000-0000-0000-000000000002", "g-0000-0000-0000-000000000003"
    write(day / f"rollout-2026-05-01T10-00-00-{root}.jsonl", [
        meta(f"{T0}.000Z", root), ev(f"{T0}.001Z", "task_started", turn_id="1"), ev(f"{T0}.002Z", "user_message", message="go"),
        item(f"{T0}.100Z", "function_call", name="spawn_agent", arguments='{"message":"sub"}', call_id="call_A"),
        tc(f"{T0}.200Z", 100, 0, 10),
        ev(f"{T0}.300Z", "collab_agent_spawn_end", call_id="call_A", new_thread_id=child),
        item(f"{T0}.300Z", "function_call_output", call_id="call_A", output=json.dumps({"agent_id": child, "nickname": "C"})),
    ])
    write(day / f"rollout-2026-05-01T10-00-01-{child}.jsonl", [
        meta("2026-05-01T10:00:01.000Z", child, source=spawn_source(root, 1)),
        ev("2026-05-01T10:00:01.001Z", "task_started", turn_id="2"), ev("2026-05-01T10:00:01.002Z", "user_message", message="sub"),
        item("2026-05-01T10:00:02.000Z", "function_call", name="spawn_agent", arguments='{"message":"subsub"}', call_id="call_B"),
        tc("2026-05-01T10:00:02.100Z", 200, 0, 20),
        item("2026-05-01T10:00:02.300Z", "function_call_output", call_id="call_B", output=json.dumps({"agent_id": grand, "nickname": "G"})),
    ])
    write(day / f"rollout-2026-05-01T10-00-03-{grand}.jsonl", [
        meta("2026-05-01T10:00:03.000Z", grand, source=spawn_source(child, 2)),
        ev("2026-05-01T10:00:03.001Z", "task_started", turn_id="3"), ev("2026-05-01T10:00:03.002Z", "user_message", message="subsub"),
        *assistant("2026-05-01T10:00:05.000Z", "leaf"), tc("2026-05-01T10:00:05.100Z", 300, 0, 30),
    ])
    adapter = CodexAdapter()
    order = [p.name for p in adapter.files(tmp_path / "sessions")]
    assert order == [f"rollout-2026-05-01T10-00-00-{root}.jsonl", f"rollout-2026-05-01T10-00-01-{child}.jsonl",
                     f"rollout-2026-05-01T10-00-03-{grand}.jsonl"]
    collect_into(store, tmp_path / "sessions")
    conv = only(store)
    assert conv.id == root
    streams = {s.key: s for s in conv.streams}
    assert streams[child].parent == "m" and streams[child].unattributed is None
    assert streams[grand].parent == streams[child].id and streams[grand].unattributed is None
    assert sum(c.usage.output for c in conv.model_calls()) == 60


def test_queued_input_and_interrupt(store: Store, tmp_path: Path) -> None:
    recs = [meta(f"{T0}.000Z", "q-1"), rec(f"{T0}.000Z", "turn_context", {"model": "gpt-5.4"}),
            ev(f"{T0}.001Z", "task_started", turn_id="1"), ev(f"{T0}.002Z", "user_message", message="first"),
            *assistant(f"{T0}.500Z", "working", "commentary"), tc(f"{T0}.600Z", 100, 0, 10),
            ev(f"{T0}.700Z", "user_message", message="also this"),
            *assistant(f"{T0}.800Z", "partial", "commentary"),
            ev(f"{T0}.900Z", "turn_aborted", turn_id="1", reason="interrupted"),
            ev("2026-05-01T10:00:05.000Z", "task_started", turn_id="2"), ev("2026-05-01T10:00:05.001Z", "user_message", message="next"),
            *assistant("2026-05-01T10:00:06.000Z", "ok"), tc("2026-05-01T10:00:06.100Z", 300, 100, 5, total=(400, 100, 15)),
            ev("2026-05-01T10:00:06.200Z", "task_complete", turn_id="2")]
    collect_into(store, write(tmp_path / "q.jsonl", recs))
    conv = only(store)
    assert [(s.source, s.text) for s in conv.steps if s.kind == "input"] == [("person", "first"), ("queued", "also this"), ("person", "next")]
    assert len(conv.main_talks) == 2
    calls = conv.model_calls()
    # The interrupted call wrote its words but no token_count: a call with unknown usage.
    assert [(c.usage.input, c.usage.output) for c in calls] == [(100, 10), (None, None), (200, 5)]
    assert [s.notice for s in conv.steps if s.kind == "notice"] == ["interrupt"]


def test_token_count_repeats_rate_limits_and_legacy_totals(store: Store, tmp_path: Path) -> None:
    recs = [meta(f"{T0}.000Z", "t-1"),
            ev(f"{T0}.001Z", "token_count", info=None, rate_limits={"primary": {"used_percent": 1}}),
            tc(f"{T0}.002Z", 0, 0, 0),  # nothing consumed yet: no call
            ev(f"{T0}.003Z", "user_message", message="hi"),
            *assistant(f"{T0}.500Z", "hello"), tc(f"{T0}.600Z", 1000, 200, 50),
            tc(f"{T0}.601Z", 1000, 200, 50),  # the same count written again
            # Only cumulative totals (older builds): the difference is this call's usage.
            ev(f"{T0}.900Z", "token_count", info={"total_token_usage": {"input_tokens": 2500, "cached_input_tokens": 1200,
                                                                         "output_tokens": 80, "total_tokens": 2580}}),
            ev(f"{T0}.950Z", "token_count", info={"last_token_usage": {"input_tokens": 10, "cached_input_tokens": 0,
                                                                        "cache_write_input_tokens": 4, "output_tokens": 1}})]
    collect_into(store, write(tmp_path / "t.jsonl", recs))
    conv = only(store)
    assert [(c.usage.input, c.usage.cache_read, c.usage.output, c.usage.cache_write) for c in conv.model_calls()] == [
        (800, 200, 50, 0), (500, 1000, 30, 0), (6, 0, 1, 4)]


def test_file_requests_patch_forms() -> None:
    a = CodexAdapter()
    patch = ("*** Begin Patch\n*** Update File: src/app.py\n@@\n-a\n+b\n*** Delete File: old.txt\n"
             "*** Add File: new dir/n.md\n+x\n*** Update File: a.py\n*** Move to: b.py\n@@\n-1\n+2\n*** End Patch\n")
    names = ["src/app.py", "old.txt", "new dir/n.md", "a.py", "b.py"]
    assert patch_files(patch) == names
    assert a.file_requests("apply_patch", {"input": patch}) == names  # custom tool, and the older function form
    assert a.file_requests("shell", {"command": ["apply_patch", patch]}) == names
    assert a.file_requests("shell", {"command": ["bash", "-lc", f"apply_patch <<'EOF'\n{patch}EOF\n"]}) == names
    assert a.file_requests("exec_command", {"cmd": f"apply_patch <<'PATCH'\n{patch}PATCH", "workdir": "/w"}) == names
    assert a.file_requests("local_shell", {"type": "exec", "command": ["applypatch", patch]}) == names
    assert a.file_requests("exec_command", {"cmd": "cat '*** Update File: x'"}) == []
    assert a.file_requests("exec_command", {"cmd": "ls"}) == []
    assert a.file_requests("file_change", {"changes": [{"path": "/w/a", "kind": "add"}, {"path": "/w/b", "kind": "update"}]}) == ["/w/a", "/w/b"]


def test_long_patch_names_every_file_in_the_event(store: Store, tmp_path: Path) -> None:
    body = "".join(f"*** Add File: /w/f{i}.txt\n" + "+" + "x" * 900 + "\n" for i in range(5))
    patch = f"*** Begin Patch\n{body}*** End Patch\n"
    recs = [meta(f"{T0}.000Z", "l-1"), ev(f"{T0}.001Z", "user_message", message="write"),
            item(f"{T0}.500Z", "custom_tool_call", name="apply_patch", input=patch, call_id="c1", status="completed"),
            tc(f"{T0}.600Z", 100, 0, 900),
            ev(f"{T0}.700Z", "patch_apply_end", call_id="c1", success=False, changes={}),
            item(f"{T0}.701Z", "custom_tool_call_output", call_id="c1", output="patch rejected"),
            item(f"{T0}.800Z", "function_call", name="shell", arguments=json.dumps({"command": ["apply_patch", patch]}), call_id="c2"),
            tc(f"{T0}.900Z", 200, 100, 900, total=(300, 100, 1800)),
            item(f"{T0}.950Z", "function_call_output", call_id="c2", output=json.dumps({"output": "Done!", "metadata": {"exit_code": 0}}))]
    collect_into(store, write(tmp_path / "p.jsonl", recs))
    conv = only(store)
    a = CodexAdapter()
    steps = tool_steps(conv)
    want = [f"/w/f{i}.txt" for i in range(5)]
    assert len(steps[0].request["input"]) < len(patch)  # the event clips the patch text
    assert [a.file_requests(s.name, s.request) for s in steps] == [want, want]
    assert [s.status for s in steps] == ["failed", "returned"]


def test_legacy_unwrapped_rollout(store: Store, tmp_path: Path) -> None:
    """≤ 0.3x (third-party description only): a bare meta line, unwrapped items, state lines."""
    recs = [{"id": "legacy-1", "timestamp": "2025-05-01T10:00:00.000Z", "instructions": "", "cwd": "/w"},
            {"record_type": "state"},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>x</environment_context>"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix it"}]},
            {"type": "function_call", "name": "shell", "arguments": '{"command":["false"]}', "call_id": "c1"},
            {"type": "function_call_output", "call_id": "c1", "output": '{"output":"","metadata":{"exit_code":1}}'},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "failed"}]}]
    f = write(tmp_path / "rollout-2025-05-01T10-00-00-legacy-1.jsonl", recs)
    assert CodexAdapter().detect(f)
    collect_into(store, f)
    conv = only(store)
    assert [s.text for s in conv.person_inputs()] == ["fix it"]
    assert [s.status for s in tool_steps(conv)] == ["failed"]
    assert [c.usage.input for c in conv.model_calls()] == [None]  # no token counts recorded


def test_keys_are_stable_and_distinct(tmp_path: Path) -> None:
    """Lines have no uuids: key = thread, line number and a digest of the line, so identical
    lines in two rollouts never merge and a re-read yields the same keys."""
    same = [ev(f"{T0}.000Z", "task_started", turn_id="1")]
    f1, f2 = write(tmp_path / "a.jsonl", same), write(tmp_path / "b.jsonl", same)
    a = CodexAdapter()
    k1 = [e.key for e in a.read(f1, Cursor()) if isinstance(e, Entry)]
    k2 = [e.key for e in a.read(f2, Cursor()) if isinstance(e, Entry)]
    assert k1 != k2
    assert k1 == [e.key for e in CodexAdapter().read(f1, Cursor()) if isinstance(e, Entry)]
    keys = [e.key for e in a.read(EDITING, Cursor()) if isinstance(e, Entry)]
    assert len(set(keys)) == len(keys) == len(lines(EDITING))
    assert all(re.match(r"^019dbc00-a3c9-7681-8e0c-73139815b4f2:\d+:[0-9a-f]{16}$", k) for k in keys)
