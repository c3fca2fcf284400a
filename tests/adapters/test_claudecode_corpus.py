"""The Claude Code corpus (../shared/corpus/claude-code, read in place, never copied) against
counts derived here, independently of asz.

The counter below (``_files``, ``_groups``, ``_count``) reads the JSONL files with plain
``json`` and imports nothing from asz; asz is imported only to be compared with it. The rules it applies come from shared/spec/runtimes/claude-code.md (section numbers are that
file's) and from the issue; each is written out where it is applied:

* Conversation: a main file ``<session>.jsonl`` and every agent file whose lines name that
  session (flat ``agent-<id>.jsonl`` next to it, ``<session>/subagents/agent-*.jsonl``). A main
  file holding lines that carry another main file's session id is a resume of it (§9.1): the
  two are one conversation, and lines are deduped by ``uuid`` (a resume copies lines with their
  uuid). Agent files whose session has no main file form a conversation of their own (G-*).
* Model call (§3, §9.5): a distinct ``(message.id, requestId)`` among ``assistant`` lines of all
  the conversation's files; ``<synthetic>`` lines are not calls. ``progress`` lines (2.1
  ``agent_progress`` copies of sub-agent lines) are never read as calls (§5b).
* Output known (§3, §11.2): some fragment has final-shape usage (``iterations`` in usage, 2.1)
  or a non-null ``stop_reason``, or ``output_tokens`` grew from the first fragment to the last
  (only the final ``message_delta`` usage makes it grow); or it is the last call of a sub-agent
  (any layout, inline blocks too) whose single starting Task result carries
  ``toolUseResult.usage`` with the same input side: that is the call's final usage (§5b).
  Otherwise unknown (never 0). The sum of the known outputs is checked too.
* Tool step (§11.6): a distinct ``tool_use`` id. Its status comes from the first
  ``tool_result`` with that ``tool_use_id``: failed when ``is_error`` is true or
  ``toolUseResult`` is a string starting "Error"; returned otherwise; no_result when none.
* Person input (§7, §5d), main stream only (not ``isSidechain``, not an agent file):
  - a ``user`` line that is not ``isMeta``, not ``isCompactSummary``, holds no ``tool_result``
    block, whose text (text blocks; image/document blocks count as content) is not empty, not a
    whole interrupt marker, and does not start with ``<task-notification>``,
    ``<local-command-stdout>``/``<local-command-stderr>`` (command output),
    ``<system-reminder>`` or ``<user-prompt-submit-hook>`` (hook output);
  - a slash command: a user line starting ``<command-name>`` (or 1.0.x ``<command-message>``
    holding ``<command-name>``), or a ``system/local_command`` line carrying it (§7);
  - a queued input: ``queue-operation`` ``enqueue`` whose content does not start with
    ``<task-notification>`` (§5c) nor ``/`` (a queued slash command is later written as the
    usual command lines, §5d: S-tool l.9 → l.21);
  - one input recorded twice is one: the same text (a command's text is its name and args)
    again with no model call between (S-tool ``/mcp`` as a user line and a local_command line).
* Main talks: each person prompt or command opens one; a queued input joins the talk it
  arrived in (it opens one only when none is open yet).
* Sub-agent streams (§5b): each agent file, and each inline sidechain block (opened by an
  ``isSidechain`` user line with ``parentUuid`` null). Its starting tool_use ids: the Task
  results whose ``toolUseResult.agentId`` names it, the ``agent_progress`` lines'
  ``parentToolUseID`` (2.1), or for an inline block the Task calls whose ``input.prompt`` is
  exactly the block's first text, called before the block and not yet returned (a block is
  written whole just before its Task's result). One id: attributed to it. None: "no starting
  step" (Warmup; ``acompact``: no record shows a step starting a compaction; G-* files, whose
  parent session is not in the corpus).
  Several: "several starting steps". A stream whose starting Task lies in an unattributed
  stream: "unattributed parent". A sub-agent seen only through ``agent_progress`` copies (its
  file is not there: S-sub's ``afb92ff``) is not a stream, and its copied messages are not
  counted: asz stores a progress line as one record and reads only its link from it.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pytest

# As in tests/conftest.py (not imported: this module stays free of project imports at load).
ROOT = Path(__file__).resolve().parents[2]
CLAUDE_CORPUS = Path(os.environ.get("ASZ_CORPUS") or ROOT.parent / "shared" / "corpus") / "claude-code"

INTERRUPTS = {"[Request interrupted by user]", "[Request interrupted by user for tool use]"}
NOT_PERSON_PREFIXES = ("<task-notification>", "<local-command-stdout>", "<local-command-stderr>",
                       "<system-reminder>", "<user-prompt-submit-hook>")
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


# --- the independent counter ---------------------------------------------------------------

@dataclass
class Expected:
    name: str
    sessions: set[str]
    calls: int = 0
    output_known: int = 0
    output_unknown: int = 0
    output_known_sum: int = 0
    tools: int = 0
    tool_status: Counter = field(default_factory=Counter)
    person: int = 0
    person_by_source: Counter = field(default_factory=Counter)
    main_talks: int = 0
    talks: int = 0
    """Main talks plus one talk per sub-agent stream."""
    streams: dict[str, str] = field(default_factory=dict)
    """stream key (agent-<id> / side-<root uuid>) -> starting tool_use id, or the reason it has none."""
    stream_kinds: dict[str, str] = field(default_factory=dict)
    """helper (Warmup, acompact: overhead calls, §5b) or child."""
    agent_calls: int = 0
    """Tool steps linked to the start of some stream."""


def _lines(path: Path) -> list[dict[str, Any]]:
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                out.append(json.loads(line))
    return out


def _text(content: Any) -> tuple[str, bool]:
    """Text of a user message and whether it holds media."""
    if isinstance(content, str):
        return content, False
    parts, media = [], False
    for b in content or []:
        if isinstance(b, dict) and b.get("type") == "text":
            parts.append(b.get("text") or "")
        elif isinstance(b, dict) and b.get("type") in ("image", "document"):
            media = True
    return "\n".join(parts), media


def _command(text: str) -> str | None:
    if not (text.startswith("<command-name>") or (text.startswith("<command-message>") and "<command-name>" in text)):
        return None
    name = re.search(r"<command-name>(.*?)</command-name>", text, re.S)
    args = re.search(r"<command-args>(.*?)</command-args>", text, re.S)
    out = name.group(1).strip() if name else text
    if args and args.group(1).strip():
        out += " " + args.group(1).strip()
    return out


def _has_tool_result(content: Any) -> bool:
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


@dataclass
class _File:
    path: Path
    agent: bool
    session: str
    lines: list[dict[str, Any]]


def _files(root: Path) -> list[_File]:
    out = []
    for p in sorted(root.rglob("*.jsonl")):
        lines = _lines(p)
        agent = p.name.startswith("agent-")
        if not agent:
            session = p.stem
        elif p.parent.name == "subagents":
            session = p.parent.parent.name
        else:
            session = next(o["sessionId"] for o in lines if o.get("sessionId"))
        if not agent and not UUID_RE.match(session):
            # A main file not named by its session (S-short, S-sub, S-tool): its lines say it.
            session = next(o["sessionId"] for o in lines if o.get("sessionId"))
        out.append(_File(p, agent, session, lines))
    return out


def _groups(files: list[_File]) -> list[tuple[list[_File], list[_File]]]:
    """(main files, origin first then its resumes; agent files) per conversation."""
    mains = {f.session: f for f in files if not f.agent}
    resumes: dict[str, str] = {}  # a resumed session -> the session it resumes
    for f in mains.values():
        for s in ({o.get("sessionId") for o in f.lines} - {f.session}) & set(mains):
            resumes[f.session] = s

    def chain(s: str) -> list[str]:  # s and the sessions it resumes, newest first
        out = [s]
        while out[-1] in resumes:
            out.append(resumes[out[-1]])
        return out

    grouped: dict[str, tuple[list[_File], list[_File]]] = {}
    for s in mains:
        if s not in resumes.values():  # the newest of its chain
            c = chain(s)
            grouped[c[-1]] = ([mains[x] for x in reversed(c)], [])
    for f in files:
        if f.agent:
            origin = chain(f.session)[-1]
            grouped.setdefault(origin, ([], []))[1].append(f)
    return list(grouped.values())


def _count(mains: list[_File], agents: list[_File]) -> Expected:
    sessions = {f.session for f in mains + agents}
    name = ("+".join(f.session[:8] if UUID_RE.match(f.path.stem) else f"{f.path.stem}-{f.session[:8]}" for f in mains)
            or f"{agents[0].session[:8]}-agents-only")
    exp = Expected(name, sessions)
    seen_uuid: set[str] = set()
    # (stream key, line) in reading order; main files first (origin before resume).
    ordered: list[tuple[str, dict[str, Any]]] = []
    for f in mains:
        side: str | None = None
        for o in f.lines:
            u = o.get("uuid")
            if u:
                if u in seen_uuid:
                    continue
                seen_uuid.add(u)
            if o.get("isSidechain"):
                if o.get("type") == "user" and o.get("parentUuid") is None:
                    side = f"side-{u}"
                ordered.append((side or f"side-{u}", o))
            else:
                ordered.append(("main", o))
    for f in agents:
        for o in f.lines:
            u = o.get("uuid")
            if u:
                if u in seen_uuid:
                    continue
                seen_uuid.add(u)
            ordered.append((f.path.stem, o))

    # Model calls and tool steps.
    calls: dict[tuple[str, str], list[dict[str, Any]]] = {}
    call_stream: dict[tuple[str, str], str] = {}
    tool_stream: dict[str, str] = {}
    results: dict[str, dict[str, Any]] = {}
    task_prompts: dict[str, list[str]] = defaultdict(list)
    tool_pos: dict[str, int] = {}
    result_pos: dict[str, int] = {}
    for pos, (stream, o) in enumerate(ordered):
        if o.get("type") == "assistant":
            msg = o.get("message") or {}
            if msg.get("model") == "<synthetic>":
                continue
            key = (msg.get("id"), o.get("requestId"))
            calls.setdefault(key, []).append(msg)
            call_stream.setdefault(key, stream)
            for b in msg.get("content") or []:
                if isinstance(b, dict) and b.get("type") == "tool_use":
                    tool_stream.setdefault(b["id"], stream)
                    tool_pos.setdefault(b["id"], pos)
                    if b.get("name") in ("Task", "Agent") and isinstance((b.get("input") or {}).get("prompt"), str):
                        task_prompts[b["input"]["prompt"]].append(b["id"])
        elif o.get("type") == "user" and _has_tool_result((o.get("message") or {}).get("content")):
            for b in o["message"]["content"]:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    results.setdefault(b.get("tool_use_id"), {"block": b, "tur": o.get("toolUseResult")})
                    result_pos.setdefault(b.get("tool_use_id"), pos)

    # Streams and what started them.
    starters: dict[str, set[str]] = defaultdict(set)
    agent_usage: dict[str, dict[str, Any]] = {}
    first_text: dict[str, str] = {}
    first_pos: dict[str, int] = {}
    stream_order: list[str] = []
    for pos, (stream, o) in enumerate(ordered):
        if stream != "main" and stream not in stream_order:
            stream_order.append(stream)
            first_pos[stream] = pos
        if stream != "main" and stream not in first_text and o.get("type") == "user":
            first_text[stream] = _text((o.get("message") or {}).get("content"))[0]
        if o.get("type") == "progress" and (o.get("data") or {}).get("type") == "agent_progress":
            starters[f"agent-{o['data']['agentId']}"].add(o["parentToolUseID"])
    for tid, r in results.items():
        tur = r["tur"]
        if isinstance(tur, dict) and tur.get("agentId"):
            starters[f"agent-{tur['agentId']}"].add(tid)
    for s in stream_order:
        if s.startswith("side-"):
            # An inline block is written whole just before its Task's result (§5b): the Tasks
            # with its prompt that were called before it and had not yet returned.
            i = first_pos[s]
            starters[s].update(t for t in task_prompts.get(first_text.get(s, ""), [])
                               if tool_pos[t] < i and result_pos.get(t, i + 1) > i)
    for s in stream_order:
        if len(starters.get(s, ())) == 1:
            tur = results.get(next(iter(starters[s])), {}).get("tur")
            if isinstance(tur, dict) and isinstance(tur.get("usage"), dict):
                agent_usage[s] = tur["usage"]  # the final usage of the stream's last call
    reason: dict[str, str] = {}
    for s in stream_order:
        ids = starters.get(s, set())
        reason[s] = "no starting step" if not ids else "several starting steps" if len(ids) > 1 else ""
    changed = True
    while changed:  # a stream started from inside an unattributed stream is unattributed too
        changed = False
        for s in stream_order:
            if not reason[s]:
                (tid,) = starters[s]
                parent = tool_stream.get(tid, "main")
                if parent != "main" and reason.get(parent):
                    reason[s] = "unattributed parent"
                    changed = True
    exp.streams = {s: (reason[s] or next(iter(starters[s]))) for s in stream_order}
    exp.stream_kinds = {s: "helper" if first_text.get(s, "").strip() == "Warmup" or s.startswith("agent-acompact-") else "child"
                        for s in stream_order}
    # A sub-agent known only from agent_progress copies (its file is missing: S-sub's afb92ff)
    # is no stream here; its copies are never calls (see the module docstring).
    exp.agent_calls = len({t for s in stream_order for t in starters.get(s, ()) if t in tool_stream})

    # Outputs.
    last_call_of: dict[str, tuple[str, str]] = {}
    for key, stream in call_stream.items():
        if stream != "main":
            last_call_of[stream] = key
    final_from_parent: dict[tuple[str, str], int] = {}
    for s, key in last_call_of.items():
        au = agent_usage.get(s)
        u = calls[key][0].get("usage") or {}
        if au and all(u.get(k) == au.get(k) for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")):
            final_from_parent[key] = au["output_tokens"]
    for key, frags in calls.items():
        outs = [(m.get("usage") or {}).get("output_tokens") for m in frags if isinstance(m.get("usage"), dict)]
        final = [(m.get("usage") or {}).get("output_tokens") for m in frags
                 if isinstance(m.get("usage"), dict) and ("iterations" in m["usage"] or m.get("stop_reason"))]
        if final:
            out = final[-1]
        elif len(outs) > 1 and outs[-1] > outs[0]:
            out = outs[-1]
        elif key in final_from_parent:
            out = final_from_parent[key]
        else:
            out = None
        if out is None:
            exp.output_unknown += 1
        else:
            exp.output_known += 1
            exp.output_known_sum += out
    exp.calls = len(calls)
    exp.tools = len(tool_stream)
    for tid in tool_stream:
        r = results.get(tid)
        if r is None:
            exp.tool_status["no_result"] += 1
        elif r["block"].get("is_error") or (isinstance(r["tur"], str) and r["tur"].startswith("Error")):
            exp.tool_status["failed"] += 1
        else:
            exp.tool_status["returned"] += 1

    # Person inputs and main talks.
    inputs: list[tuple[str, str]] = []  # (source, text)
    last_text: str | None = None
    seen_calls: set[tuple[str, str]] = set()
    for stream, o in ordered:
        if stream != "main":
            continue
        typ = o.get("type")
        src = text = None
        if typ == "assistant":
            msg = o.get("message") or {}
            key = (msg.get("id"), o.get("requestId"))
            if msg.get("model") != "<synthetic>" and key not in seen_calls:
                seen_calls.add(key)
                last_text = None
            continue
        if typ == "user":
            content = (o.get("message") or {}).get("content")
            if o.get("isMeta") or o.get("isCompactSummary") or _has_tool_result(content):
                continue
            raw, media = _text(content)
            t = raw.strip()
            if (not t and not media) or t in INTERRUPTS or t.startswith(NOT_PERSON_PREFIXES):
                continue
            cmd = _command(t)
            src, text = ("command", cmd) if cmd is not None else ("person", t)
        elif typ == "system" and o.get("subtype") == "local_command":
            cmd = _command((o.get("content") or "").strip())
            if cmd is None:
                continue
            src, text = "command", cmd
        elif typ == "queue-operation" and o.get("operation") == "enqueue":
            c = (o.get("content") or "").strip()
            if not c or c.startswith("<task-notification>") or c.startswith("/"):
                continue
            src, text = "queued", c
        else:
            continue
        if last_text is not None and last_text == text.strip():
            continue  # one input recorded twice
        last_text = text.strip()
        inputs.append((src, text))
    exp.person = len(inputs)
    exp.person_by_source = Counter(s for s, _ in inputs)
    open_talk = False
    for src, _ in inputs:
        if src != "queued" or not open_talk:
            exp.main_talks += 1
            open_talk = True
    exp.talks = exp.main_talks + len(stream_order)
    return exp


@cache
def expected_corpus() -> dict[str, Expected]:
    if not CLAUDE_CORPUS.is_dir():
        return {}
    out = {}
    for mains, agents in _groups(_files(CLAUDE_CORPUS)):
        e = _count(mains, agents)
        out[e.name] = e
    return out


# --- what asz gives -------------------------------------------------------------------------

def _asz_counts(store: Any, exp: Expected) -> dict[str, Any]:
    from asz_core import api

    cid = store.resolve(next(iter(sorted(exp.sessions))))
    conv = api.load(cid, store=store)
    calls = conv.model_calls()
    tools = [s for s in conv.steps if s.kind in ("tool", "agent_call")]
    person = conv.person_inputs()
    streams = {}
    for st in conv.streams:
        if st.key == "main":
            continue
        if st.unattributed:
            streams[st.key] = st.unattributed
        else:
            (sid,) = st.started_by
            streams[st.key] = conv.step(sid).tool_id
    return {
        "calls": len(calls),
        "output_known": sum(1 for c in calls if c.usage.output is not None),
        "output_unknown": sum(1 for c in calls if c.usage.output is None),
        "output_known_sum": sum(c.usage.output or 0 for c in calls),
        "tools": len(tools),
        "tool_status": Counter(s.status for s in tools),
        "person": len(person),
        "person_by_source": Counter(s.source for s in person),
        "main_talks": len(conv.main_talks),
        "talks": len(conv.talks),
        "streams": streams,
        "stream_kinds": {st.key: st.kind for st in conv.streams if st.key != "main"},
        "agent_calls": sum(1 for s in conv.steps if s.kind == "agent_call"),
        "sessions": set(next(r.sessions for r in store.conversations() if r.id == cid)),
    }


CORPUS = expected_corpus()


@pytest.mark.parametrize("name", sorted(CORPUS) or [pytest.param("none", marks=pytest.mark.skip("no corpus"))])
def test_conversation_counts(corpus_store: Any, name: str) -> None:
    exp = CORPUS[name]
    got = _asz_counts(corpus_store, exp)
    want = {k: getattr(exp, k) for k in got if k != "sessions"} | {"sessions": exp.sessions}
    diffs = {k: (want[k], got[k]) for k in want if want[k] != got[k]}
    assert not diffs, f"{name}: (expected, asz) differ: {diffs}"


# --- the whole corpus -----------------------------------------------------------------------

def test_corpus_collects_without_warnings_and_recollects_nothing(store: Any) -> None:
    from asz_core.collect import collect

    if not CLAUDE_CORPUS.is_dir():
        pytest.skip(f"corpus not found at {CLAUDE_CORPUS}")
    first = collect([CLAUDE_CORPUS], store)
    assert [str(p) for p in first.problems] == []
    assert first.files_read == len(list(CLAUDE_CORPUS.rglob("*.jsonl")))
    assert {r.conversation for r in first.rounds} == {c.id for c in store.conversations()}
    assert len(first.rounds) == len(CORPUS)
    again = collect([CLAUDE_CORPUS], store)
    assert (again.records_published, again.rounds, again.problems, again.files_read) == (0, (), (), 0)


MATCH = CLAUDE_CORPUS / "crypto590__personal-ai-infrastructure" / "projects" / "-Users-coreyyoung-Desktop-Projects-match"
B277, R9FDC = "b277cc60-6558-433f-92b8-95dd61c280e1", "9fdc1632-c430-4469-89bf-bfc9df7f12e6"


def test_resumed_pair_is_one_conversation(corpus_store: Any) -> None:
    if not MATCH.is_dir():
        pytest.skip("corpus not found")
    cid = corpus_store.resolve(R9FDC)
    assert corpus_store.resolve(B277) == cid
    (row,) = [r for r in corpus_store.conversations() if r.id == cid]
    assert set(row.sessions) == {B277, R9FDC}
    # The copies are not counted twice: fewer calls than the two files' calls added up.
    exp = CORPUS[f"{B277[:8]}+{R9FDC[:8]}"]
    alone = [_count([f], []) for f in _files(MATCH) if f.path.stem in (B277, R9FDC)]
    assert exp.calls < sum(e.calls for e in alone)


def test_resume_collected_before_its_origin(store: Any) -> None:
    """The resume read first, its origin in a later collect: still one conversation, same counts."""
    from asz_core.collect import collect

    if not MATCH.is_dir():
        pytest.skip("corpus not found")
    collect([MATCH / f"{R9FDC}.jsonl"], store)
    collect([MATCH / f"{B277}.jsonl"], store)
    collect([MATCH], store)
    exp = CORPUS[f"{B277[:8]}+{R9FDC[:8]}"]
    got = _asz_counts(store, exp)
    assert (got["calls"], got["tools"], got["person"], got["main_talks"], got["sessions"]) == \
        (exp.calls, exp.tools, exp.person, exp.main_talks, exp.sessions)


# --- hand-made: stream links the corpus lacks -------------------------------------------------

SID = "aaaaaaaa-1111-4222-8333-444444444444"


def _line(typ: str, uuid: str, parent: str | None, content: Any, **extra: Any) -> dict[str, Any]:
    o: dict[str, Any] = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/w",
                         "sessionId": SID, "version": "2.0.27", "type": typ, "uuid": uuid,
                         "timestamp": "2025-10-01T10:00:00.000Z"}
    if typ == "user":
        o["message"] = {"role": "user", "content": content}
    else:
        n = extra.pop("n")
        o["requestId"] = f"req_{n}"
        o["message"] = {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
                        "content": content, "stop_reason": None,
                        "usage": {"input_tokens": n, "output_tokens": 7, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 0}}
    o.update(extra)
    return o


def _task(tid: str, prompt: str) -> list[dict[str, Any]]:
    return [{"type": "tool_use", "id": tid, "name": "Task", "input": {"description": "d", "prompt": prompt, "subagent_type": "x"}}]


def _result(uuid: str, tid: str, usage_n: int | None = None, agent: str | None = None) -> dict[str, Any]:
    tur: dict[str, Any] = {"content": [{"type": "text", "text": "done"}], "totalTokens": 1}
    if usage_n is not None:
        tur["usage"] = {"input_tokens": usage_n, "output_tokens": 900, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 0}
    if agent:
        tur["agentId"] = agent
    return _line("user", uuid, None, [{"type": "tool_result", "tool_use_id": tid, "content": "done"}], toolUseResult=tur)


def _side(uuid: str, prompt: str, n: int) -> list[dict[str, Any]]:
    return [_line("user", uuid, None, prompt, isSidechain=True),
            _line("assistant", uuid + "r", uuid, [{"type": "text", "text": "sub answer"}], n=n, isSidechain=True)]


def _write(path: Path, lines: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(o) + "\n" for o in lines))


def _collect_and_compare(tmp_path: Path, store: Any) -> tuple[Expected, dict[str, Any]]:
    from asz_core.collect import collect

    r = collect([tmp_path / "proj"], store)
    assert [str(p) for p in r.problems] == []
    (exp,) = [_count(m, a) for m, a in _groups(_files(tmp_path / "proj"))]
    got = _asz_counts(store, exp)
    want = {k: getattr(exp, k) for k in got if k != "sessions"} | {"sessions": exp.sessions}
    assert want == got
    return exp, got


def test_inline_blocks_same_prompt(tmp_path: Path, store: Any) -> None:
    """Two parallel Tasks with one prompt: the first block cannot be told apart ("several");
    the second comes after one of them returned, so only the other can have started it. A Task
    re-run later with the same prompt starts its own block only. Each block's last call takes its
    final output from its Task's result (§5b)."""
    _write(tmp_path / "proj" / f"{SID}.jsonl", [
        _line("user", "u1", None, "go"),
        _line("assistant", "a1", "u1", _task("T1", "P"), n=1),
        _line("assistant", "a2", "a1", _task("T2", "P"), n=1),
        *_side("s1", "P", 11),
        _result("r1", "T1", usage_n=11),
        *_side("s2", "P", 12),
        _result("r2", "T2", usage_n=12),
        _line("assistant", "a3", "r2", _task("T3", "Q"), n=2),
        *_side("s3", "Q", 13),
        _result("r3", "T3", usage_n=13),
        _line("assistant", "a4", "r3", _task("T4", "Q"), n=3),
        *_side("s4", "Q", 14),
        _result("r4", "T4", usage_n=14),
        _line("assistant", "a5", "r4", [{"type": "text", "text": "all done"}], n=4),
    ])
    exp, got = _collect_and_compare(tmp_path, store)
    assert got["streams"] == {"side-s1": "several starting steps", "side-s2": "T2", "side-s3": "T3", "side-s4": "T4"}
    # Known outputs: the three attributed blocks' calls, from their Task results (900 each).
    assert (got["output_known"], got["output_known_sum"]) == (3, 2700)


def test_nested_agents_landing_before_their_parent(tmp_path: Path, store: Any) -> None:
    """Flat agent files (2.0.30+) land in name order, so a child may land before the agent that
    started it. agent-dd (started by the main Task T5) starts agent-cc: both attributed.
    agent-bb has no starting step (nothing names it) and starts agent-aa: "unattributed parent"."""
    main = [_line("user", "u1", None, "go"), _line("assistant", "a1", "u1", _task("T5", "P"), n=1),
            _result("r1", "T5", usage_n=None, agent="dd"), _line("assistant", "a2", "r1", [{"type": "text", "text": "ok"}], n=2)]

    def agent(aid: str, tid: str, child: str, n: int) -> list[dict[str, Any]]:
        extra = {"isSidechain": True, "agentId": aid}
        return [_line("user", f"{aid}1", None, "P", **extra),
                _line("assistant", f"{aid}2", f"{aid}1", _task(tid, "C"), n=n, **extra),
                _result(f"{aid}3", tid, agent=child) | extra,
                _line("assistant", f"{aid}4", f"{aid}3", [{"type": "text", "text": "sub done"}], n=n + 1, **extra)]

    def leaf(aid: str, n: int) -> list[dict[str, Any]]:
        extra = {"isSidechain": True, "agentId": aid}
        return [_line("user", f"{aid}1", None, "C", **extra),
                _line("assistant", f"{aid}2", f"{aid}1", [{"type": "text", "text": "leaf"}], n=n, **extra)]

    proj = tmp_path / "proj"
    _write(proj / f"{SID}.jsonl", main)
    _write(proj / "agent-dd.jsonl", agent("dd", "T6", "cc", 10))
    _write(proj / "agent-cc.jsonl", leaf("cc", 20))
    _write(proj / "agent-bb.jsonl", agent("bb", "T7", "aa", 30))
    _write(proj / "agent-aa.jsonl", leaf("aa", 40))
    exp, got = _collect_and_compare(tmp_path, store)
    assert got["streams"] == {"agent-aa": "unattributed parent", "agent-bb": "no starting step",
                              "agent-cc": "T6", "agent-dd": "T5"}


def test_running_agent_linked_by_agent_progress_only(tmp_path: Path, store: Any) -> None:
    """2.1: a Task still running when the session stopped has no result; only its agent_progress
    lines name the sub-agent (§5b). Their copies of the sub-agent's messages are not calls."""
    sub_user = _line("user", "x1", None, "P", isSidechain=True, agentId="a1234", version="2.1.39")
    sub_asst = _line("assistant", "x2", "x1", [{"type": "text", "text": "working"}], n=50,
                     isSidechain=True, agentId="a1234", version="2.1.39")
    progress = {"type": "progress", "uuid": "p1", "parentUuid": "a1", "sessionId": SID, "version": "2.1.39",
                "toolUseID": "agent_msg_1", "parentToolUseID": "T8", "timestamp": "2025-10-01T10:00:00.000Z",
                "data": {"type": "agent_progress", "agentId": "a1234", "prompt": "P", "message": sub_asst}}
    proj = tmp_path / "proj"
    _write(proj / f"{SID}.jsonl", [_line("user", "u1", None, "go"), _line("assistant", "a1", "u1", _task("T8", "P"), n=1), progress])
    _write(proj / SID / "subagents" / "agent-a1234.jsonl", [sub_user, sub_asst])
    exp, got = _collect_and_compare(tmp_path, store)
    assert got["streams"] == {"agent-a1234": "T8"}
    assert (got["calls"], got["tool_status"]) == (2, Counter({"no_result": 1}))
