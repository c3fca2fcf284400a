"""The Kiro / Amazon Q CLI adapter on the real corpus files, plus hand-made cases where the
corpus has none (the pre-1.13 [user, assistant] form, the SQLite store, Kiro 2.x journals).

Expected counts are derived here from the files with plain json, following the rules of
shared/spec/runtimes/kiro-codex-langsmith.md §1, never by calling the adapter.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import warnings
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from asz_adapters_kiro.adapter import KiroAdapter
from asz_core.assembly import Conversation, assemble
from asz_core.collect import collect
from asz_core.records import Cursor, Entry, Problem, Usage
from asz_core.registry import Registry
from asz_core.store import Store

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("ASZ_CORPUS") or ROOT.parent / "shared" / "corpus")
KIRO = CORPUS / "kiro"
CLAUDE = CORPUS / "claude-code"

SAVES = {
    "suggest": "PRO-HUNTER-X__team03-aws-hackathon/suggest-update-readme.md.json",
    "tdd": "PRO-HUNTER-X__team03-aws-hackathon/tdd-admin-backend.json",
    "dreamhack": "namd0ng__team27-aws-hackathon/C_UsersChangwooDesktopDreamHack.json",
}
COMPACTED = "metaneutrons__SnapcastClient/q.json"
INTERRUPT = "The user interrupted the tool execution."
SYNTHETIC = "Tool uses were interrupted, waiting for the next user prompt"

pytestmark = pytest.mark.skipif(not KIRO.is_dir(), reason=f"corpus not found at {KIRO}")


@pytest.fixture(autouse=True)
def _quiet_plugins():
    # Other adapters may be mid-development in this workspace; their load warnings are not ours.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


# --- independent expectations ---------------------------------------------------------------

def expect_history(doc: dict) -> dict:
    """Counts from a ConversationState's history, by the spec's rules (§1.3)."""
    calls = person = interrupts = 0
    tool_ids: list[str] = []
    status: dict[str, str] = {}
    edits: list[str] = []
    models = Counter()
    for h in doc["history"]:
        if isinstance(h, dict):
            user, asst, rm = h["user"], h["assistant"], h.get("request_metadata")
        else:
            user, asst, rm = h[0], h[1], None
        (uk, uv), = user["content"].items()
        if uk == "Prompt":
            person += 1
        elif uk == "CancelledToolUses":
            if uv.get("prompt") == INTERRUPT:
                interrupts += 1
            elif uv.get("prompt"):
                person += 1
        if uk in ("ToolUseResults", "CancelledToolUses"):
            for r in uv["tool_use_results"]:
                status.setdefault(r["tool_use_id"], r["status"])
        (ak, av), = asst.items()
        if rm is not None or av.get("message_id"):
            calls += 1
            models[(rm or {}).get("model_id")] += 1
        for u in av.get("tool_uses", []) if ak == "ToolUse" else []:
            tool_ids.append(u["id"])
            if u["name"] == "fs_write" and u["args"].get("path"):
                edits.append(u["args"]["path"])
    return {
        "calls": calls,
        "person": person,
        "talks": person,  # every person input here is followed by a model call: no echoes
        "interrupts": interrupts,
        "tools": len(tool_ids),
        "returned": sum(1 for t in tool_ids if status.get(t) == "Success"),
        "failed": sum(1 for t in tool_ids if status.get(t) == "Error"),
        "no_result": sum(1 for t in tool_ids if t not in status),
        "edits": edits,
        "models": models,
    }


def expect_transcript(doc: dict) -> dict:
    """Counts from a compacted save's transcript (§1.5): '> ' lines are the person's (tool
    approvals 'y'/'n'/'t' and slash commands among them); the others one response each."""
    person = commands = approvals = calls = interrupts = talks = 0
    last_input, call_since = None, True
    for line in doc["transcript"]:
        if line.startswith("> "):
            said = line[2:].replace("> \n", "\n").strip()
            if said.lower() in ("y", "n", "t"):
                approvals += 1
                continue
            if said.startswith("/"):
                commands += 1
            else:
                person += 1
            if said != last_input or call_since:
                talks += 1
            last_input, call_since = said, False
        elif line.split("\n[Tool uses:")[0].strip() == SYNTHETIC:
            interrupts += 1
        else:
            calls += 1
            call_since = True
    summary_call = isinstance(doc["latest_summary"], list) and isinstance(doc["latest_summary"][1], dict)
    return {"person": person, "commands": commands, "approvals": approvals, "talks": talks,
            "calls": calls + int(summary_call), "interrupts": interrupts}


# --- helpers ----------------------------------------------------------------------------------

def load(store: Store) -> dict[str, Conversation]:
    out = {}
    for row in store.conversations():
        if row.head is not None:
            out[row.id] = assemble(row.id, row.runtime, row.head, store.records(row.id, row.head.number))
    return out


def tool_steps(conv: Conversation):
    return [s for s in conv.steps if s.kind in ("tool", "agent_call")]


def edited(conv: Conversation) -> list[str]:
    k = KiroAdapter()
    return [p for s in tool_steps(conv) for p in k.file_requests(s.name or "", s.request or {})]


def read_all(path: Path) -> tuple[list[Entry], list[Problem]]:
    entries, problems = [], []
    for item in KiroAdapter().read(path, Cursor()):
        (problems if isinstance(item, Problem) else entries).append(item)
    return entries, problems


def check_against(conv: Conversation, exp: dict) -> None:
    calls = conv.model_calls()
    assert len(calls) == exp["calls"]
    # No token counts in Q CLI: every call's usage is unknown, never 0.
    assert all(c.usage == Usage() for c in calls)
    assert len(conv.person_inputs()) == exp["person"]
    assert len(conv.main_talks) == exp["talks"]
    tools = tool_steps(conv)
    assert len(tools) == exp["tools"]
    st = Counter(s.status for s in tools)
    assert st["returned"] == exp["returned"]
    assert st["failed"] == exp["failed"]
    assert st["no_result"] == exp["no_result"]
    assert sorted(edited(conv)) == sorted(exp["edits"])
    notices = Counter(s.notice for s in conv.steps if s.kind == "notice")
    assert notices["interrupt"] == exp["interrupts"]
    assert notices["orphan_tool_result"] == 0
    assert Counter(c.model for c in calls) == exp["models"]


# --- the real saves ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(SAVES))
def test_corpus_save_counts(name: str, store: Store) -> None:
    path = KIRO / SAVES[name]
    doc = json.loads(path.read_text(encoding="utf-8"))
    exp = expect_history(doc)
    res = collect([path], store)
    assert not res.problems
    # One record per history entry, and one for the rest of the state.
    assert res.records_published == len(doc["history"]) + 1
    conv = load(store)[doc["conversation_id"]]
    assert conv.runtime == "kiro"
    check_against(conv, exp)
    # The fake reply after a Ctrl-C is neither a model call nor a reply.
    assert not any(s.kind == "reply" and s.text.startswith(SYNTHETIC) for s in conv.steps)


def test_corpus_counts_stated_in_manifest(store: Store) -> None:
    """The numbers the corpus manifest states, checked once by hand against the files."""
    tdd = expect_history(json.loads((KIRO / SAVES["tdd"]).read_text(encoding="utf-8")))
    assert (tdd["calls"], tdd["interrupts"], tdd["person"]) == (118, 3, 9)  # 121 entries, 6 cancels
    dh = json.loads((KIRO / SAVES["dreamhack"]).read_text(encoding="utf-8"))
    assert sum(1 for h in dh["history"] if "Prompt" in h["user"]["content"]) == 19
    assert len(expect_history(dh)["edits"]) == 57


def test_corpus_compacted_save(store: Store) -> None:
    path = KIRO / COMPACTED
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["history"] == [] and doc["valid_history_range"] == [0, 0]
    exp = expect_transcript(doc)
    res = collect([path], store)
    assert not res.problems
    conv = load(store)[doc["conversation_id"]]
    calls = conv.model_calls()
    assert len(calls) == exp["calls"]
    assert all(c.usage == Usage() for c in calls)
    assert sum(1 for s in conv.steps if s.kind == "input" and s.source == "person") == exp["person"]
    assert sum(1 for s in conv.steps if s.kind == "input" and s.source == "command") == exp["commands"]
    assert len(conv.main_talks) == exp["talks"]
    notices = Counter(s.notice for s in conv.steps if s.kind == "notice")
    assert notices["interrupt"] == exp["interrupts"]
    assert notices["tool_approval"] == exp["approvals"]
    # The transcript names tools but records neither their requests nor results: no tool steps.
    assert tool_steps(conv) == []
    # latest_summary = [text, request_metadata]: a summary step and the call that wrote it,
    # in the talk of the /compact command that asked for it.
    summaries = [s for s in conv.steps if s.kind == "summary"]
    assert len(summaries) == 1 and summaries[0].text.startswith("## CONVERSATION SUMMARY")
    talk = conv.talk(summaries[0].talk)
    assert conv.step(talk.inputs[0]).text == "/compact"
    # The legacy top-level `model` names the transcript's calls; the summary call has its own.
    assert {c.model for c in calls} == {doc["model"], doc["latest_summary"][1]["model_id"]}


def test_corpus_whole_folder_and_recollect(store: Store) -> None:
    res = collect([KIRO], store)
    assert not res.problems
    assert res.conversations == 4
    again = collect([KIRO], store)
    assert again.records_published == 0 and again.conversations == 0


def test_entry_lines_and_timestamps() -> None:
    path = KIRO / SAVES["dreamhack"]
    text = path.read_text(encoding="utf-8").split("\n")
    entries, problems = read_all(path)
    assert not problems
    history = [e for e in entries if e.kind not in ("state", "summary")]
    for e in history:
        # The line of an entry is where its object opens; the next line opens its user part.
        assert text[e.line - 1].strip() == "{" and text[e.line].strip() == '"user": {'
    first = history[0]
    doc = json.loads(path.read_text(encoding="utf-8"))
    # 9 fractional digits and a local offset, read as UTC.
    ts0 = doc["history"][0]["user"]["timestamp"]
    assert ts0.endswith("+09:00") and len(ts0.split(".")[1]) == 15
    utc = datetime.fromisoformat(ts0[:26] + ts0[-6:]).astimezone(UTC)
    assert first.ts == utc.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    # A ToolUseResults entry has no user timestamp: the request's start time stands in.
    tur, h = next((e, h) for e, h in zip(history, doc["history"], strict=True) if "ToolUseResults" in h["user"]["content"])
    start = datetime.fromtimestamp(h["request_metadata"]["request_start_timestamp_ms"] / 1000, UTC)
    assert tur.ts == start.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


# --- keys: re-saved and grown documents publish nothing twice --------------------------------

def test_grown_resave_publishes_only_new(tmp_path: Path, store: Store) -> None:
    src = json.loads((KIRO / SAVES["tdd"]).read_text(encoding="utf-8"))
    k = 40
    early = dict(src, history=src["history"][:k], valid_history_range=[0, k])
    save = tmp_path / "my-save"  # /save names have no reliable extension
    save.write_text(json.dumps(early, indent=2, ensure_ascii=False), encoding="utf-8")
    r1 = collect([save], store)
    assert r1.records_published == k + 1
    # The person saves again later over the same path: the whole document is rewritten, and
    # Q CLI has meanwhile dropped the oldest entries from its history (it keeps a window).
    later = dict(src, history=src["history"][20:], valid_history_range=[0, len(src["history"]) - 20])
    save.write_text(json.dumps(later, indent=2, ensure_ascii=False), encoding="utf-8")
    r2 = collect([save], store)
    assert r2.records_published == (len(src["history"]) - k) + 1  # new entries + the state's new version
    # The conversation holds every entry either save showed.
    conv = load(store)[src["conversation_id"]]
    check_against(conv, expect_history(src))
    assert [r.number for r in store.rounds(src["conversation_id"])] == [1, 2]
    # Round 1 still shows the conversation as it was then.
    first = assemble(conv.id, "kiro", store.rounds(conv.id)[0], store.records(conv.id, 1))
    check_against(first, expect_history(early))


def test_same_conversation_saved_twice_elsewhere(tmp_path: Path, store: Store) -> None:
    """A second /save of the same conversation (compact JSON this time, another path) and a
    copy of the first: the records are the ones already stored."""
    path = KIRO / SAVES["suggest"]
    collect([path], store)
    doc = json.loads(path.read_text(encoding="utf-8"))
    (tmp_path / "again.json").write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    shutil.copy(path, tmp_path / "copy")
    res = collect([tmp_path], store)
    assert res.records_published == 0 and not res.problems
    assert len(store.conversations()) == 1


def test_same_size_rewrite_is_read(tmp_path: Path, store: Store) -> None:
    """A document rewritten in place at the same size (its last bytes unchanged) is still read."""
    doc = json.loads((KIRO / SAVES["suggest"]).read_text(encoding="utf-8"))
    save = tmp_path / "s.json"
    save.write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
    collect([save], store)
    before = save.stat().st_size
    doc["history"][5]["assistant"]["Response"]["message_id"] = "ffffffff-190d-4c7e-b203-82658e7d071b"
    save.write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
    assert save.stat().st_size == before
    res = collect([save], store)
    assert res.records_published == 1  # the entry with the new id


def test_forked_conversation_continues(tmp_path: Path, store: Store) -> None:
    """Newer builds fork the conversation after /compact: a new conversation_id whose history
    keeps the last entries. Those entries are already stored, so the fork continues the
    conversation they belong to."""
    src = json.loads((KIRO / SAVES["suggest"]).read_text(encoding="utf-8"))
    collect([KIRO / SAVES["suggest"]], store)
    new = json.loads(json.dumps(src["history"][5]))
    new["assistant"]["Response"]["message_id"] = "0b0b0b0b-0000-4000-8000-00000000f0f0"
    new["user"]["content"] = {"Prompt": {"prompt": "go on"}}
    meta = dict(src["history"][5]["request_metadata"], message_id="0b0b0b0b-0000-4000-8000-00000000aaaa")
    fork = dict(src, conversation_id="f0f0f0f0-0000-4000-8000-000000000001", history=[*src["history"][4:], new],
                valid_history_range=[0, 3], latest_summary=["## CONVERSATION SUMMARY\nREADME work.", meta])
    (tmp_path / "fork.json").write_text(json.dumps(fork, indent=2, ensure_ascii=False), encoding="utf-8")
    res = collect([tmp_path / "fork.json"], store)
    assert res.records_published == 3  # the new entry, the summary, the fork's state
    rows = store.conversations()
    assert len(rows) == 1 and set(rows[0].sessions) == {src["conversation_id"], fork["conversation_id"]}
    conv = load(store)[src["conversation_id"]]
    assert len(conv.model_calls()) == 6 + 1 + 1  # the summary's request is a call too
    assert conv.person_inputs()[-1].text == "go on"


# --- the SQLite store ---------------------------------------------------------------------------

def make_store_db(path: Path, v2: list[tuple[str, str]], v1: list[tuple[str, str]]) -> None:
    """A data.sqlite3 in the documented schema (migrations 007 and 008)."""
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE conversations (key TEXT PRIMARY KEY, value TEXT);
        CREATE TABLE conversations_v2 (
            key TEXT NOT NULL, conversation_id TEXT NOT NULL, value TEXT NOT NULL,
            created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, PRIMARY KEY (key, conversation_id));
        CREATE TABLE state (key TEXT PRIMARY KEY, value BLOB);
    """)
    for i, (cwd, value) in enumerate(v2):
        cid = json.loads(value)["conversation_id"]
        db.execute("INSERT INTO conversations_v2 VALUES (?,?,?,?,?)", (cwd, cid, value, 1757000000000 + i, 1757000000000 + i))
    for cwd, value in v1:
        db.execute("INSERT INTO conversations VALUES (?,?)", (cwd, value))
    db.commit()
    db.close()


def test_sqlite_store(tmp_path: Path, store: Store) -> None:
    suggest = (KIRO / SAVES["suggest"]).read_text(encoding="utf-8")
    tdd = (KIRO / SAVES["tdd"]).read_text(encoding="utf-8")
    compact = json.dumps(json.loads(suggest), ensure_ascii=False)  # serde_json writes it compact
    dbp = tmp_path / "data.sqlite3"
    # suggest is in both tables (migration 008 copies rows over); tdd only in the old table;
    # one row of the old table is not JSON.
    tdd_compact = json.dumps(json.loads(tdd), ensure_ascii=False)
    make_store_db(dbp, v2=[("/home/u/team03", compact)],
                  v1=[("/home/u/team03", compact), ("/home/u/api", tdd_compact), ("/home/u/broken", "not json")])
    k = KiroAdapter()
    assert k.detect(dbp) and k.files(tmp_path) == [dbp]
    res = collect([dbp], store)
    assert len(res.problems) == 1
    p = res.problems[0]
    assert "conversations:/home/u/broken" in p.file and p.line == 1
    convs = load(store)
    assert len(convs) == 2
    for text in (suggest, tdd):
        doc = json.loads(text)
        check_against(convs[doc["conversation_id"]], expect_history(doc))
    # The /save exports of the same conversations (pretty JSON) add nothing, interrupts included.
    again = collect([KIRO / SAVES["suggest"], KIRO / SAVES["tdd"]], store)
    assert again.records_published == 0
    # Unchanged store: nothing; a new turn written into the row: only that turn.
    assert collect([dbp], store).records_published == 0
    doc = json.loads(suggest)
    extra = json.loads(json.dumps(doc["history"][5]))
    extra["assistant"]["Response"]["message_id"] = "0b0b0b0b-0000-4000-8000-000000000001"
    extra["user"]["content"] = {"Prompt": {"prompt": "thanks, apply it"}}
    doc["history"].append(extra)
    db = sqlite3.connect(dbp)
    db.execute("UPDATE conversations_v2 SET value = ?, updated_at = updated_at + 1", (json.dumps(doc, ensure_ascii=False),))
    db.commit()
    db.close()
    res = collect([dbp], store)
    assert res.records_published == 2  # the new entry and the state's new version
    conv = load(store)[doc["conversation_id"]]
    check_against(conv, expect_history(doc))


# --- the pre-1.13 array form (not in the corpus) -------------------------------------------------

def test_legacy_array_history(tmp_path: Path, store: Store) -> None:
    src = json.loads((KIRO / SAVES["tdd"]).read_text(encoding="utf-8"))
    hist = src["history"][33:72]  # from a prompt, over an interrupt with its synthetic reply
    legacy = []
    for h in hist:
        user = {k: v for k, v in h["user"].items() if k not in ("timestamp", "images")}
        legacy.append([user, h["assistant"]])
    doc = {"conversation_id": "legacy-0001", "next_message": None, "history": legacy,
           "valid_history_range": [0, len(legacy)], "transcript": [], "tools": {},
           "context_manager": None, "context_message_length": None, "latest_summary": "older builds kept a string",
           "model": "CLAUDE_SONNET_4_20250514_V1_0"}
    save = tmp_path / "legacy"
    save.write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
    exp = expect_history(doc)
    assert exp["interrupts"] == 1 and exp["calls"] == len(legacy) - 1
    res = collect([save], store)
    assert not res.problems
    conv = load(store)["legacy-0001"]
    # No request_metadata in this form: the conversation's model names every call.
    exp["models"] = Counter({doc["model"]: exp["calls"]})
    exp["talks"] = exp["person"]
    check_against(conv, exp)
    assert [s.text for s in conv.steps if s.kind == "summary"] == ["older builds kept a string"]
    assert exp["person"] == 2 and exp["no_result"] == 1  # the last entry's tool use has no result yet


# --- Kiro 2.x session journals (no real file exists in the corpus) -------------------------------

def _line(kind: str, data: dict | None) -> str:
    return json.dumps({"version": "v1", "kind": kind, "data": data}, ensure_ascii=False)


def write_kiro2(folder: Path) -> dict:
    """A session and a sub-agent session in the shapes third-party parsers report (§1.6)."""
    folder.mkdir(parents=True, exist_ok=True)
    sid, child = "5a1e0000-0000-4000-8000-000000000001", "5a1e0000-0000-4000-8000-000000000002"
    (folder / f"{sid}.json").write_text(json.dumps({
        "session_id": sid, "cwd": "/work/app", "title": "fix the build",
        "created_at": "2026-04-16T05:30:52.620649Z", "updated_at": "2026-04-16T05:31:10.100588Z",
        "session_state": {"version": "v1", "agent_name": "kiro_default",
                          "rts_model_state": {"conversation_id": sid, "model_info": {"model_id": "claude-sonnet-4.5"}},
                          "conversation_metadata": {"user_turn_metadatas": [
                              {"message_ids": ["p1", "a1", "a2"], "input_token_count": 0, "output_token_count": 0,
                               "metering_usage": [{"value": 0.42, "unit": "credit"}], "end_reason": "UserTurnEnd"}]}}}))
    lines = [
        _line("Prompt", {"message_id": "p1", "content": [{"kind": "text", "data": "fix the build"}], "meta": {"timestamp": 1784869360.25}}),
        # One response streamed as two records with one message_id: one model call.
        _line("AssistantMessage", {"message_id": "a1", "content": [
            {"kind": "thinking", "data": {"text": "check the file", "signature": "c2ln", "redactedContent": None, "modelId": "claude-opus-4.6"}},
            {"kind": "text", "data": "Let me look."}]}),
        _line("AssistantMessage", {"message_id": "a1", "content": [
            {"kind": "toolUse", "data": {"toolUseId": "tooluse_w1", "name": "write", "input": {"command": "create", "path": "src/main.rs", "content": "fn main() {}", "__tool_use_purpose": "fix"}}},
            {"kind": "toolUse", "data": {"toolUseId": "tooluse_s1", "name": "shell", "input": {"command": "cargo build", "__tool_use_purpose": "build"}}}]}),
        _line("ToolResults", {"message_id": "r1", "content": [
            {"kind": "toolResult", "data": {"toolUseId": "tooluse_w1", "content": [{"kind": "text", "data": "ok"}], "status": "success"}},
            {"kind": "toolResult", "data": {"toolUseId": "tooluse_s1", "content": [{"kind": "json", "data": {"exit_status": "exit status: 101", "stdout": "", "stderr": "error"}}], "status": "error"}}],
            "results": {}}),
        _line("AssistantMessage", {"message_id": "a2", "content": [
            {"kind": "toolUse", "data": {"toolUseId": "tooluse_sub", "name": "subagent", "input": {"task": "write the tests", "stages": []}}}]}),
        _line("ToolResults", {"message_id": "r2", "content": [
            {"kind": "toolResult", "data": {"toolUseId": "tooluse_sub", "content": [{"kind": "text", "data": "done"}], "status": "success"}}]}),
        _line("AssistantMessage", {"message_id": "a3", "content": [{"kind": "text", "data": "The build is fixed."}]}),
        _line("Clear", None),
        _line("Prompt", {"message_id": "p2", "content": [{"kind": "text", "data": "now the docs"}], "meta": {"timestamp": 1784869500}}),
    ]
    (folder / f"{sid}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / f"{sid}.lock").write_text("{}")
    (folder / f"{child}.json").write_text(json.dumps({
        "session_id": child, "cwd": "/work/app", "is_subagent": True, "parent_session_id": sid,
        "session_state": {"rts_model_state": {"model_info": {"model_name": "claude-haiku-4.5"}}}}))
    (folder / f"{child}.jsonl").write_text("\n".join([
        _line("Prompt", {"message_id": "c1", "content": [{"kind": "text", "data": "write the tests"}], "meta": {"timestamp": 1784869400}}),
        _line("AssistantMessage", {"message_id": "c2", "content": [
            {"kind": "toolUse", "data": {"toolUseId": "tooluse_cw", "name": "write", "input": {"command": "create", "path": "tests/t.rs", "content": "#[test] fn t() {}"}}}]}),
        _line("ToolResults", {"message_id": "c3", "content": [
            {"kind": "toolResult", "data": {"toolUseId": "tooluse_cw", "content": [{"kind": "text", "data": "ok"}], "status": "success"}}]}),
        _line("AssistantMessage", {"message_id": "c4", "content": [{"kind": "text", "data": "Tests written."}]}),
    ]) + "\n", encoding="utf-8")
    return {"sid": sid, "child": child}


def test_kiro2_journal(tmp_path: Path, store: Store) -> None:
    folder = tmp_path / ".kiro" / "sessions" / "cli"
    ids = write_kiro2(folder)
    k = KiroAdapter()
    assert k.detect(tmp_path / ".kiro")
    assert [p.name for p in k.files(folder)] == [f"{ids['sid']}.jsonl", f"{ids['child']}.jsonl"]
    assert k.files(folder / f"{ids['sid']}.json") == [folder / f"{ids['sid']}.jsonl"]
    res = collect([tmp_path / ".kiro"], store)
    assert not res.problems
    convs = load(store)
    assert list(convs) == [ids["sid"]]  # the sub-agent's session is a stream of its parent's
    conv = convs[ids["sid"]]
    calls = conv.model_calls()
    assert len(calls) == 3 + 2  # a1 (two records), a2, a3; the sub-agent's c2, c4
    assert all(c.usage == Usage() for c in calls)
    # The thinking block names the call's model; otherwise the session's.
    assert [c.model for c in calls] == ["claude-opus-4.6", "claude-sonnet-4.5", "claude-sonnet-4.5", "claude-haiku-4.5", "claude-haiku-4.5"]
    assert [s.text for s in conv.person_inputs()] == ["fix the build", "now the docs"]
    assert len(conv.main_talks) == 2
    tools = tool_steps(conv)
    assert Counter(s.status for s in tools) == Counter({"returned": 3, "failed": 1})
    assert sorted(edited(conv)) == ["src/main.rs", "tests/t.rs"]
    child = next(s for s in conv.streams if s.id != "m")
    assert child.kind == "child" and child.unattributed == "no starting step"
    assert conv.step(conv.talk(child.talks[0]).inputs[0]).source == "agent"
    assert Counter(s.notice for s in conv.steps if s.kind == "notice") == Counter({"clear": 1})
    prompt = conv.person_inputs()[0]
    assert prompt.ts == datetime.fromtimestamp(1784869360.25, UTC).strftime("%Y-%m-%dT%H:%M:%S.250Z")


def test_kiro2_journal_grows(tmp_path: Path, store: Store) -> None:
    folder = tmp_path / "cli"
    ids = write_kiro2(folder)
    journal = folder / f"{ids['sid']}.jsonl"
    full = journal.read_text(encoding="utf-8").splitlines(keepends=True)
    journal.write_text("".join(full[:3]) + full[3][:40], encoding="utf-8")  # a line still being written
    r1 = collect([journal], store)
    assert [p.line for p in r1.problems] == [4] and "truncated" in r1.problems[0].message
    assert r1.records_published == 1 + 3  # the session metadata and three whole lines
    journal.write_text("".join(full), encoding="utf-8")
    r2 = collect([journal], store)
    assert not r2.problems
    assert r2.records_published == len(full) - 3  # the rest; the metadata is unchanged
    assert collect([journal], store).records_published == 0


# --- bad input ------------------------------------------------------------------------------------

def test_truncated_save(tmp_path: Path) -> None:
    text = (KIRO / SAVES["tdd"]).read_text(encoding="utf-8")
    cut = text.index("테스트 성공할때마다 작게 커밋")  # inside history item 69
    broken = tmp_path / "cut"
    broken.write_text(text[:cut], encoding="utf-8")
    entries, problems = read_all(broken)
    assert len(problems) == 1
    p = problems[0]
    # The break is named by line: inside item 69, which starts where its '{' is.
    item69 = [e for e in read_all(KIRO / SAVES["tdd"])[0] if e.kind != "state"][69]
    assert item69.line <= p.line <= text[:cut].count("\n") + 1
    assert "69 history items before it are kept" in p.message
    assert sum(1 for e in entries if e.kind != "state") == 69


def test_bad_history_items(tmp_path: Path, store: Store) -> None:
    doc = json.loads((KIRO / SAVES["suggest"]).read_text(encoding="utf-8"))
    doc["history"].insert(3, 42)
    doc["history"][1]["user"]["content"] = {"SomethingNew": {"x": 1}}
    path = tmp_path / "odd.json"
    text = json.dumps(doc, indent=2, ensure_ascii=False)
    path.write_text(text, encoding="utf-8")
    res = collect([path], store)
    lines = text.split("\n")
    msgs = {p.line: p.message for p in res.problems}
    assert len(msgs) == 2
    bad = next(n for n, m in msgs.items() if "history item 3 is int" in m)
    assert lines[bad - 1].strip() == "42,"
    unknown = next(n for n, m in msgs.items() if "'SomethingNew'" in m)
    assert lines[unknown - 1].strip() == "{" and "history item 1" in msgs[unknown]
    # Nothing else is lost: every other entry is read as usual.
    conv = load(store)[doc["conversation_id"]]
    assert len(conv.model_calls()) == 6
    assert res.records_published == len(doc["history"]) + 1


def test_not_a_conversation_and_bad_journal_lines(tmp_path: Path) -> None:
    k = KiroAdapter()
    other = tmp_path / "list.json"
    other.write_text("[1, 2]")
    assert not k.detect(other)
    entries, problems = read_all(other)  # forced with --runtime kiro
    assert entries == [] and problems[0].line == 1 and "not a Kiro" in problems[0].message
    j = tmp_path / "s.jsonl"
    j.write_text("\n".join([_line("Prompt", {"message_id": "p", "content": [{"kind": "text", "data": "hi"}]}),
                            "{not json", "[1]", _line("Mystery", {}),
                            _line("AssistantMessage", {"message_id": "a", "content": [{"kind": "text", "data": "hello"}]})]) + "\n")
    assert k.detect(j)
    entries, problems = read_all(j)
    assert [(p.line, p.message.split(" ")[0]) for p in problems] == [(2, "not"), (3, "not"), (4, "unknown")]
    assert [e.kind for e in entries] == ["Prompt", "Mystery", "AssistantMessage"]


# --- detection ------------------------------------------------------------------------------------

def test_detect_does_not_cross_claude_code() -> None:
    from asz_adapters_claudecode.adapter import ClaudeCodeAdapter

    k, c = KiroAdapter(), ClaudeCodeAdapter()
    kiro_files = [p for p in KIRO.rglob("*") if p.is_file()]
    assert sorted(p for p in kiro_files if k.detect(p)) == sorted(KIRO / s for s in [*SAVES.values(), COMPACTED])
    assert not any(c.detect(p) for p in kiro_files)
    if CLAUDE.is_dir():
        claude_files = [p for p in CLAUDE.rglob("*") if p.is_file()]
        assert not any(k.detect(p) for p in claude_files)
        assert not k.detect(CLAUDE) and k.files(CLAUDE) == []
    reg = Registry()
    assert reg.detect_runtime(KIRO).name == "kiro"
    if CLAUDE.is_dir():
        assert reg.detect_runtime(CLAUDE).name == "claudecode"


def test_file_requests() -> None:
    k = KiroAdapter()
    assert k.file_requests("fs_write", {"command": "create", "path": "a.py", "file_text": ""}) == ["a.py"]
    assert k.file_requests("fs_write", {"path": "b.py", "new_str": "x"}) == ["b.py"]  # no command
    assert k.file_requests("write", {"command": "create", "path": "c.rs", "content": ""}) == ["c.rs"]
    assert k.file_requests("fs_read", {"operations": [{"mode": "Line", "path": "a.py"}]}) == []
    assert k.file_requests("execute_bash", {"command": "echo > a"}) == []
    assert k.file_requests("fs_write", {"command": "create"}) == []
