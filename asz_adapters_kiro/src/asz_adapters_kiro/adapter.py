"""Kiro CLI / Amazon Q Developer CLI conversations to asz entries and events.

Three shapes on disk (shared/spec/runtimes/kiro-codex-langsmith.md §1; section numbers are its):

* a ConversationState JSON document: a ``/save`` export (any name, any extension), and the
  same JSON in the ``value`` column of the SQLite store (§1.1, §1.2);
* the SQLite store itself (``data.sqlite3``: tables ``conversations`` and ``conversations_v2``);
* Kiro CLI 2.x session journals, ``~/.kiro/sessions/cli/<id>.jsonl`` next to ``<id>.json``
  (§1.6; known from third-party parsers only, no real file seen).

A ConversationState is a whole document rewritten on every save, so each of its records is keyed
by what identifies it in the conversation, never by where it sits in the file: a history entry
by its model response's ``message_id``; an entry without one (an interrupt's synthetic reply) by
the message id before it, its distance from it and its content. Re-reading a re-saved or grown
document therefore publishes only what is new.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import os
import re
import shutil
import sqlite3
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

import orjson

from asz_core.interfaces import RuntimeAdapter
from asz_core.jsonl import loads_line, mend, mended_document, read_objects
from asz_core import times
from asz_core.looks import is_regular, look, stat, walk
from asz_core.records import SHAPE_ERRORS, Cursor, Entry, Problem, said_bad_values
from asz_core.regular import open_regular, read_regular
from asz_core.textclip import clip_input, clip_text, kind_name

INTERRUPT_PROMPT = "The user interrupted the tool execution."
"""CancelledToolUses.prompt when the person pressed Ctrl-C during a tool run (§1.3)."""
SYNTHETIC_REPLY = "Tool uses were interrupted, waiting for the next user prompt"
"""The fake Response Q CLI writes after such an interrupt: no request_metadata, no message_id."""

# Editing tools and the request field naming the file: Q CLI fs_write, Kiro 2.x write, and the
# next-generation agent's camelCase fsWrite (seen in the recorded backend streams).
_EDIT_TOOLS = {"fs_write": "path", "write": "path", "fsWrite": "path"}
_APPROVALS = {"y", "n", "t"}  # "> y" / "> t" lines in a transcript approve a tool (§1.5)
_JOURNAL_KINDS = {"Prompt", "AssistantMessage", "ToolResults", "Clear"}
_SQLITE_MAGIC = b"SQLite format 3\x00"
_NAMES = (".json", ".jsonl", ".sqlite3")  # how Kiro's files end (a /save export may be named anything)
_FIRST_KEY = re.compile(rb'^\s*\{\s*"conversation_id"\s*:')
_TOOL_USES_TAIL = re.compile(r"\n?\[Tool uses: ([^\]\n]*)\]\s*$")
_FRACTION = re.compile(r"(\.\d{6})\d+")
_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
_SNIFF_BYTES = 4096
_DETECT_FILES = 200


class KiroAdapter(RuntimeAdapter):
    """Reads /save exports, the SQLite conversation store, and Kiro 2.x session journals."""

    name: ClassVar[str] = "kiro"

    # -- which files ----------------------------------------------------------------------
    def detect(self, path: Path) -> bool:
        if path.is_file():
            return _sniff(path) is not None
        if path.is_dir():
            for n, p in enumerate(_walk(path)):
                if n >= _DETECT_FILES:
                    break
                if _sniff(p) is not None:
                    return True
        return False

    def files(self, path: Path) -> list[Path]:
        found: dict[Path, str] = {}
        candidates = [str(path)] if path.is_file() else _walk(path)
        for name in candidates:
            if os.path.splitext(name)[1] in _NAMES and not is_regular(name):
                found[Path(name)] = "not regular"  # listed so collect says it skipped it (never opened)
                continue
            kind = _sniff(name)
            if kind == "meta":
                found[Path(name).with_suffix(".jsonl")] = "journal"
            elif kind is not None:
                found[Path(name)] = kind

        def order(p: Path) -> tuple[bool, int, str]:
            # Older saves first, so records land in the order they were written; a Kiro 2.x
            # sub-agent's journal after its parent's.
            sub = found[p] == "journal" and look("kiro.sub", p.with_suffix(".json"), _names_parent)
            try:
                mtime = stat(p).st_mtime_ns
            except OSError:
                mtime = 0
            return (sub, mtime, str(p))

        return sorted(found, key=order)

    def default_paths(self) -> list[Path]:
        share = Path.home() / ".local" / "share"
        mac = Path.home() / "Library" / "Application Support"
        return [Path.home() / ".kiro" / "sessions" / "cli",
                *(base / app / "data.sqlite3" for base in (share, mac) for app in ("kiro-cli", "amazon-q"))]

    def file_requests(self, tool: str, request: Mapping[str, Any]) -> list[str]:
        key = _EDIT_TOOLS.get(tool)
        value = request.get(key) if key else None
        return [value] if isinstance(value, str) and value else []

    # -- reading --------------------------------------------------------------------------
    def read(self, path: Path, cursor: Cursor) -> Iterator[Entry | Problem]:
        kind = _sniff(path)
        if kind == "meta":
            return  # read along with its journal
        if kind == "journal" or (kind is None and path.suffix == ".jsonl"):
            yield from self._read_journal(path, cursor)
            return
        if kind == "sqlite":
            yield from self._read_sqlite(path, cursor)
            return
        # A ConversationState document (or a file --runtime kiro forces on us): a whole
        # document, rewritten by every save. It is read whole when its bytes changed.
        try:
            data = read_regular(path)
        except OSError as exc:
            yield Problem(str(path), 0, f"cannot read ({exc})")
            return
        sig = hashlib.blake2b(data, digest_size=16).hexdigest()
        _rewritten(cursor)
        if cursor.state.get("sig") == sig:
            return
        yield from _document_entries(str(path), data, fallback_session=path.stem, said=_said(cursor.state))
        cursor.state["sig"] = sig

    # -- SQLite store ---------------------------------------------------------------------
    def _read_sqlite(self, path: Path, cursor: Cursor) -> Iterator[Entry | Problem]:
        fname = str(path)
        # The store changes in place (pages rewritten, often at the same size) and may hold
        # commits in its -wal file: it is read again when the file or its WAL changed.
        sig = [_stat_sig(path), _stat_sig(Path(fname + "-wal"))]
        _rewritten(cursor)
        if cursor.state.get("sig") == sig:
            return
        try:
            copy = _StoreCopy(path)
            db = copy.open()
        except (sqlite3.Error, OSError) as exc:
            yield Problem(fname, 0, f"cannot open SQLite store ({exc})")
            return
        try:
            tables = _conversation_tables(db)
            seen: set[str] = set()
            if "conversations_v2" in tables:
                # One row per conversation (key = cwd), several per folder (migration 008).
                q = "SELECT key, conversation_id, value FROM conversations_v2 ORDER BY created_at, updated_at, conversation_id"
                for key, cid, value in db.execute(q):
                    key, cid = _id_text(key), _id_text(cid)
                    label = f"{fname}#conversations_v2:{cid}"
                    seen.add(str(cid))
                    yield from _row_entries(label, value, str(cid), _said(cursor.state))
            if "conversations" in tables:
                # The older table (key = cwd, one conversation per folder). Migration 008 copied
                # its rows into conversations_v2; a conversation found there is read once.
                for key, value in db.execute("SELECT key, value FROM conversations ORDER BY rowid"):
                    key = _id_text(key)
                    label = f"{fname}#conversations:{key}"
                    cid = _peek_conversation_id(value)
                    if cid is not None and cid in seen:
                        continue
                    yield from _row_entries(label, value, cid or str(key), _said(cursor.state))
            if not tables:
                yield Problem(fname, 0, "SQLite file without Q CLI's conversations or conversations_v2 table")
        except sqlite3.Error as exc:
            yield Problem(fname, 0, f"cannot read SQLite store ({exc}); the rest of it is skipped")
        finally:
            copy.close()
        cursor.state["sig"] = sig

    # -- Kiro 2.x journals ----------------------------------------------------------------
    def _read_journal(self, path: Path, cursor: Cursor) -> Iterator[Entry | Problem]:
        fname = str(path)
        st = cursor.state
        meta_path = path.with_suffix(".json")
        meta, meta_raw, meta_problem = _load_meta(meta_path)
        if meta_problem and (meta_raw is None or _MENDED not in _said(st)):  # a mended one: said once
            if meta_raw is not None:
                _said(st).append(_MENDED)
            yield meta_problem
        if "session" not in st:
            sid = meta.get("session_id") if isinstance(meta.get("session_id"), str) else None
            sid = sid or path.stem
            parent = meta.get("parent_session_id")
            if isinstance(parent, str) and parent:
                st["session"], st["stream"] = parent, f"subagent-{sid}"
            else:
                st["session"], st["stream"] = sid, "main"
            st["sid"] = sid
        model = _meta_model(meta)
        if meta_raw is not None:
            # The session's metadata (title, cwd, model, per-turn token counts and credits) is
            # rewritten after every turn: one record, versioned.
            cwd = meta.get("cwd")
            events = ({"e": "project", "path": cwd},) if isinstance(cwd, str) and cwd else ()
            yield from said_bad_values(_said(st), str(meta_path), 1, stamps=(("updated_at", meta.get("updated_at")),),
                                       read_time=_iso)
            yield Entry(key=f"{st['sid']}:session", session=st["session"], stream=st["stream"], kind="session",
                        file=str(meta_path), line=1, raw=meta_raw, events=events, ts=_iso(meta.get("updated_at")),
                        versioned=True)
        for item in read_objects(path, cursor):
            if isinstance(item, Problem):
                yield item
            else:
                yield from self._journal_entry(fname, item[0], item[1], item[2], st, model)

    def _journal_entry(self, fname: str, lineno: int, body: bytes, obj: dict[str, Any], st: dict[str, Any],
                       model: str | None) -> Iterator[Entry | Problem]:
        kind = obj.get("kind")
        data = obj.get("data")
        mid = data.get("message_id") if isinstance(data, dict) else None
        digest = _digest(body)
        if isinstance(mid, str) and mid:
            key = f"{st['sid']}:{kind}:{mid}:{digest}"
        else:
            key = f"{st['sid']}:L{lineno}:{digest}"
        events: list[dict[str, Any]] = []
        if st["stream"] != "main" and not st.get("opened"):
            st["opened"] = True
            events.append({"e": "stream", "kind": "child", "by": []})
        if not isinstance(kind, str) or kind not in _JOURNAL_KINDS:  # a list or an object is no kind
            yield Problem(fname, lineno, f"unknown record kind {kind_name(kind)!r}; kept, no events")
        else:
            try:
                events.extend(_journal_events(kind, data, st, model, key))
            except SHAPE_ERRORS as exc:
                yield Problem(fname, lineno, f"{kind} record of unexpected shape ({exc}); kept, no events")
        meta = data.get("meta") if isinstance(data, dict) else None
        ts = _epoch_iso(meta.get("timestamp")) if isinstance(meta, dict) else None
        if isinstance(meta, dict):
            yield from said_bad_values(_said(st), fname, lineno, stamps=(("data.meta.timestamp", meta.get("timestamp")),),
                                       read_time=_epoch_iso)
        yield Entry(key=key, session=st["session"], stream=st["stream"], kind=kind_name(kind), file=fname, line=lineno,
                    raw=body, events=tuple(events), ts=ts)


# --- ConversationState documents ------------------------------------------------------------

class _Doc:
    """A ConversationState read with positions: each history and transcript item's span."""

    def __init__(self) -> None:
        self.fields: dict[str, Any] = {}
        self.history: list[tuple[int, int, Any]] = []
        self.transcript: list[tuple[int, int, Any]] = []
        self.history_span: tuple[int, int] | None = None
        self.error: tuple[int, str] | None = None
        self.is_object = True


class _Stop(Exception):
    def __init__(self, pos: int, msg: str) -> None:
        self.pos, self.msg = pos, msg


def _skip(text: str, pos: int) -> int:
    return _WS.match(text, pos).end()  # type: ignore[union-attr]


def _value(text: str, pos: int) -> tuple[Any, int]:
    try:
        return _DECODER.raw_decode(text, pos)
    except json.JSONDecodeError as exc:
        raise _Stop(exc.pos, exc.msg) from None
    except RecursionError:
        raise _Stop(pos, "nested too deeply") from None


def _parse_doc(text: str) -> _Doc:
    """Walk the top-level object, decoding each value; history and transcript item by item, so
    each item's place is known and a document cut short still yields its complete items."""
    doc = _Doc()
    n = len(text)
    pos = _skip(text, 1 if text.startswith("\ufeff") else 0)
    try:
        if pos >= n or text[pos] != "{":
            doc.is_object = False
            raise _Stop(pos, "not a JSON object")
        pos = _skip(text, pos + 1)
        if pos < n and text[pos] == "}":
            pos += 1
        else:
            while True:
                key, pos = _value(text, pos)
                if not isinstance(key, str):
                    raise _Stop(pos, "expected a key")
                pos = _skip(text, pos)
                if pos >= n or text[pos] != ":":
                    raise _Stop(pos, "expected ':'")
                pos = _skip(text, pos + 1)
                if key in ("history", "transcript") and pos < n and text[pos] == "[":
                    start = pos
                    items = doc.history if key == "history" else doc.transcript
                    pos = _array(text, pos, items)
                    if key == "history":
                        doc.history_span = (start, pos)
                    doc.fields[key] = None
                else:
                    doc.fields[key], pos = _value(text, pos)
                pos = _skip(text, pos)
                if pos < n and text[pos] == ",":
                    pos = _skip(text, pos + 1)
                    continue
                if pos < n and text[pos] == "}":
                    pos += 1
                    break
                raise _Stop(pos, "expected ',' or '}'" if pos < n else "document ends early")
        pos = _skip(text, pos)
        if pos < n:
            raise _Stop(pos, "extra data after the document")
    except _Stop as stop:
        doc.error = (stop.pos, stop.msg)
    return doc


def _array(text: str, pos: int, items: list[tuple[int, int, Any]]) -> int:
    n = len(text)
    pos = _skip(text, pos + 1)
    if pos < n and text[pos] == "]":
        return pos + 1
    while True:
        start = pos
        obj, pos = _value(text, pos)
        items.append((start, pos, obj))
        pos = _skip(text, pos)
        if pos < n and text[pos] == ",":
            pos = _skip(text, pos + 1)
            continue
        if pos < n and text[pos] == "]":
            return pos + 1
        raise _Stop(pos, "expected ',' or ']'" if pos < n else "document ends early")


class _Lines:
    def __init__(self, text: str) -> None:
        self.nl = [m.start() for m in re.finditer("\n", text)]

    def at(self, pos: int) -> int:
        return bisect.bisect_left(self.nl, pos) + 1


def _id_text(v: Any) -> Any:
    """A key or id read from the store as text that can be kept (bytes that are no UTF-8 as U+FFFD)."""
    if isinstance(v, str):
        try:
            v.encode("utf-8")
        except UnicodeEncodeError:
            return v.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return v


def _row_entries(label: str, value: Any, fallback: str, said: list[str]) -> Iterator[Entry | Problem]:
    if isinstance(value, bytes):
        data = value
    elif isinstance(value, str):
        try:
            data = value.encode("utf-8", "surrogateescape")  # a value's own bytes, those no UTF-8 included
        except UnicodeEncodeError:
            data = value.encode("utf-8", "surrogatepass")
    else:
        yield Problem(label, 0, f"value is {type(value).__name__}, not a ConversationState; row skipped")
        return
    yield from _document_entries(label, data, fallback_session=fallback, said=said)


def _peek_conversation_id(value: Any) -> str | None:
    try:
        obj = loads_line(value.encode("utf-8", "surrogatepass") if isinstance(value, str) else value)[0]
    except (orjson.JSONDecodeError, TypeError):
        return None
    cid = obj.get("conversation_id") if isinstance(obj, dict) else None
    return cid if isinstance(cid, str) and cid else None


def _document_entries(fname: str, data: bytes, *, fallback_session: str, said: list[str]) -> Iterator[Entry | Problem]:
    """A ConversationState's records. ``said``: the kinds of values that are no values already
    said for the file (records.said_bad_values; the file's cursor state keeps it). A lone surrogate
    escape (a string cut mid-pair) is read as U+FFFD before the document is parsed (the parser
    would keep the lone half, and no record can be stored with one), said once per file."""
    data, found, at = mend(data)
    if found and _MENDED not in said:
        said.append(_MENDED)
        yield Problem(fname, data.count(b"\n", 0, at) + 1, mended_document(found))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        yield Problem(fname, data.count(b"\n", 0, exc.start) + 1, "not UTF-8; undecodable bytes replaced")
        text = data.decode("utf-8", "replace")
    doc = _parse_doc(text)
    lines = _Lines(text)
    if doc.error:
        pos, msg = doc.error
        if not doc.is_object:
            yield Problem(fname, lines.at(pos), "not a Kiro / Q CLI conversation (a JSON object with conversation_id); skipped")
            return
        kept = f"{len(doc.history)} history items before it are kept" if doc.history else "nothing before it was usable"
        yield Problem(fname, lines.at(pos), f"JSON breaks here ({msg}); {kept}, the rest is lost")
    f = doc.fields
    cid = f.get("conversation_id")
    if not (isinstance(cid, str) and cid):
        if "conversation_id" in f or not doc.error:
            yield Problem(fname, 1, "no conversation_id; the file name stands in for it")
        cid = fallback_session
    model = _doc_model(f)
    summary = f.get("latest_summary")
    summary_items = list(_summary_entry(fname, summary, cid, model, said)) if summary is not None else []
    if doc.history:
        yield from _history_entries(fname, text, lines, doc, cid, model, said)
    elif doc.transcript:
        # After /compact (older builds) history is [] and only the display transcript is left;
        # the summary lands after the /compact line that asked for it.
        yield from _transcript_entries(fname, text, lines, doc, cid, model, summary_items)
        summary_items = []
    yield from summary_items
    if doc.error is None or f:
        yield _state_entry(fname, doc, cid)


def _doc_model(f: dict[str, Any]) -> str | None:
    info = f.get("model_info")
    if isinstance(info, dict) and isinstance(info.get("model_id"), str):
        return info["model_id"]
    legacy = f.get("model")
    return legacy if isinstance(legacy, str) and legacy else None


def _history_entries(fname: str, text: str, lines: _Lines, doc: _Doc, cid: str, model: str | None,
                     said: list[str]) -> Iterator[Entry | Problem]:
    anchor, since = "start", 0
    for i, (start, end, item) in enumerate(doc.history):
        raw = text[start:end].encode("utf-8", "surrogatepass")
        line = lines.at(start)
        user, assistant, rm, shape = _entry_parts(item)
        mid = _message_id(assistant)
        if mid:
            key = f"m:{mid}"
            anchor, since = mid, 0
        else:
            # Canonical JSON: the same entry from a pretty /save and a compact SQLite value is one.
            since += 1
            key = f"{cid}:after:{anchor}:{since}:{_digest(_canonical(item))}"
        if shape is None:
            yield Problem(fname, line, f"history item {i} is {type(item).__name__}, not an entry; kept, no events")
            yield Entry(key=key, session=cid, stream="main", kind="unknown", file=fname, line=line, raw=raw)
            continue
        kind = f"{_variant(user.get('content') if isinstance(user, dict) else None)}/{_variant(assistant)}"
        try:
            events = tuple(_entry_events(user, assistant, rm, key, model))
        except SHAPE_ERRORS as exc:
            yield Problem(fname, line, f"history item {i} of unexpected shape ({exc}); kept, no events")
            events = ()
        else:
            for what in _unknown_variants(user, assistant):
                yield Problem(fname, line, f"history item {i}: unknown {what}; kept, read as far as known")
        if isinstance(user, dict):
            yield from said_bad_values(said, fname, line, stamps=(("user.timestamp", user.get("timestamp")),), read_time=_iso)
        if isinstance(rm, dict):
            yield from _said_ms(said, fname, line, rm)
        yield Entry(key=key, session=cid, stream="main", kind=kind, file=fname, line=line, raw=raw,
                    events=events, ts=_entry_ts(user, rm))


def _entry_parts(item: Any) -> tuple[Any, Any, Any, str | None]:
    """(user, assistant, request_metadata, shape): the current dict form or the [user, assistant]
    array of builds before 2025-07-22 (§1.5)."""
    if isinstance(item, dict):
        return item.get("user"), item.get("assistant"), item.get("request_metadata"), "entry"
    if isinstance(item, list) and len(item) == 2:
        return item[0], item[1], None, "pair"
    return None, None, None, None


def _variant(obj: Any) -> str:
    if isinstance(obj, dict) and len(obj) == 1:
        return str(next(iter(obj)))
    return "?"


def _unknown_variants(user: Any, assistant: Any) -> list[str]:
    out = []
    content = user.get("content") if isinstance(user, dict) else None
    if _variant(content) not in ("Prompt", "ToolUseResults", "CancelledToolUses"):
        out.append(f"user content {_variant(content)!r}")
    if _variant(assistant) not in ("Response", "ToolUse"):
        out.append(f"assistant message {_variant(assistant)!r}")
    return out


def _message_id(assistant: Any) -> str | None:
    if isinstance(assistant, dict) and len(assistant) == 1:
        body = next(iter(assistant.values()))
        if isinstance(body, dict) and isinstance(body.get("message_id"), str) and body["message_id"]:
            return body["message_id"]
    return None


def _entry_events(user: Any, assistant: Any, rm: Any, key: str, model: str | None) -> Iterator[dict[str, Any]]:
    # The person's side (or the tool results) first: they come before the model call.
    content = user.get("content") if isinstance(user, dict) else None
    env = ((user.get("env_context") or {}).get("env_state") or {}) if isinstance(user, dict) else {}
    cwd = env.get("current_working_directory") if isinstance(env, dict) else None
    if isinstance(cwd, str) and cwd:
        yield {"e": "project", "path": cwd}  # each prompt names the folder Q CLI ran in
    variant = _variant(content)
    interrupted = False
    if variant == "Prompt":
        yield {"e": "input", "source": "person", **clip_text(_prompt_text(content["Prompt"].get("prompt"), user))}
    elif variant in ("ToolUseResults", "CancelledToolUses"):
        body = content[variant] or {}
        for r in body.get("tool_use_results") or []:
            yield _result_event(r)
        if variant == "CancelledToolUses":
            prompt = body.get("prompt")
            if isinstance(prompt, str) and prompt.strip() == INTERRUPT_PROMPT:
                interrupted = True
                yield {"e": "notice", "kind": "interrupt", **clip_text(prompt)}
            elif isinstance(prompt, str) and prompt.strip():
                # The person typed a new prompt instead of approving the tool.
                yield {"e": "input", "source": "person", **clip_text(_prompt_text(prompt, user))}
    # The model's side.
    av = _variant(assistant)
    body = assistant[av] if av in ("Response", "ToolUse") else None
    if not isinstance(body, dict):
        return
    mid = body.get("message_id") if isinstance(body.get("message_id"), str) else None
    text = body.get("content") if isinstance(body.get("content"), str) else ""
    if not isinstance(rm, dict) and not mid:
        # No request and no response id: nothing was asked of the model. Q CLI writes this
        # after an interrupt (its fixed text is not the agent's words), and for MCP prompts.
        if not interrupted and text.strip():
            yield {"e": "notice", "kind": "synthetic", **clip_text(text)}
        return
    rm = rm if isinstance(rm, dict) else {}
    call = mid or (rm.get("request_id") if isinstance(rm.get("request_id"), str) else None) or key
    call_model = rm.get("model_id") if isinstance(rm.get("model_id"), str) and rm.get("model_id") else model
    # Q CLI records no token counts per call (§1.4): usage is unknown, never 0.
    yield {"e": "call", "id": call, "model": call_model, "usage": None, "final": False}
    if text.strip():
        yield {"e": "text", "call": call, **clip_text(text)}
    uses = body.get("tool_uses") if av == "ToolUse" else None
    for u in uses if isinstance(uses, list) else []:
        args = u.get("args")
        yield {"e": "tool_use", "call": call, "id": _str(u.get("id")), "name": _str(u.get("name")),
               "input": clip_input(args if isinstance(args, dict) else {})}


def _prompt_text(prompt: Any, user: Any) -> str:
    text = prompt if isinstance(prompt, str) else ""
    images = user.get("images") if isinstance(user, dict) else None
    if isinstance(images, list) and images:
        note = f"[{len(images)} image{'s' if len(images) > 1 else ''}]"
        text = f"{text}\n{note}" if text else note
    return text


def _result_event(r: Any) -> dict[str, Any]:
    parts = []
    for block in r.get("content") or []:
        if isinstance(block, dict) and "Text" in block and isinstance(block["Text"], str):
            parts.append(block["Text"])
        elif isinstance(block, dict) and "Json" in block:
            parts.append(orjson.dumps(block["Json"]).decode())
        elif isinstance(block, dict) and "Image" in block:
            parts.append("[image]")
    status = r.get("status")
    return {"e": "tool_result", "id": _str(r.get("tool_use_id")), "error": isinstance(status, str) and status.lower() == "error",
            **clip_text("\n".join(parts))}


def _entry_ts(user: Any, rm: Any) -> str | None:
    if isinstance(user, dict):
        ts = _iso(user.get("timestamp"))
        if ts:
            return ts
    if isinstance(rm, dict):
        return _ms_iso(rm.get("request_start_timestamp_ms"))
    return None


def _transcript_entries(fname: str, text: str, lines: _Lines, doc: _Doc, cid: str, model: str | None,
                        summary: list[Entry | Problem]) -> Iterator[Entry | Problem]:
    """The display transcript of a compacted save: each model response is one line ending in
    '[Tool uses: …]' ('none' for a final reply); '> ' lines are the person's (tool approvals and
    slash commands among them); anything else is a line Q CLI posted itself ('[Forgot last 1
    message]', an error). It names tools but not their requests or results: no tool steps."""
    prev: list[str] = ["", ""]
    seen: dict[str, int] = {}
    # Builds that did not yet tag responses with '[Tool uses: …]': every other line is one.
    tagged = any(isinstance(x, str) and _TOOL_USES_TAIL.search(x) for _, _, x in doc.transcript)
    compact_at = max((i for i, (_, _, item) in enumerate(doc.transcript)
                      if isinstance(item, str) and item.startswith("> /compact")), default=None)
    for i, (start, end, item) in enumerate(doc.transcript):
        if i - 1 == compact_at:
            yield from summary
            summary = []
        raw = text[start:end].encode("utf-8", "surrogatepass")
        line = lines.at(start)
        if not isinstance(item, str):
            yield Problem(fname, line, f"transcript item is {type(item).__name__}, not text; skipped")
            continue
        # Keyed by the line and the two before it, so a re-save whose transcript lost lines at
        # its front (it keeps the last 250) still finds the same keys for the rest.
        h = _digest("\x00".join([*prev, item]).encode("utf-8", "surrogatepass"))
        seen[h] = seen.get(h, 0) + 1
        key = f"{cid}:t:{h}:{seen[h]}"
        prev = [prev[1], item]
        events: list[dict[str, Any]] = []
        m = _TOOL_USES_TAIL.search(item)
        if not m and item.startswith(">"):
            said = item[1:].removeprefix(" ").replace("> \n", "\n")
            stripped = said.strip()
            if stripped.lower() in _APPROVALS:
                events.append({"e": "notice", "kind": "tool_approval", **clip_text(said)})
            elif stripped.startswith(("/", "!")):
                events.append({"e": "input", "source": "command", **clip_text(stripped)})
            elif stripped:
                events.append({"e": "input", "source": "person", **clip_text(said)})
            kind = "transcript_user"
        elif tagged and not m:
            events.append({"e": "notice", "kind": "meta", **clip_text(item)})
            kind = "transcript_other"
        else:
            words = item[: m.start()] if m else item
            kind = "transcript_agent"
            if words.strip() == SYNTHETIC_REPLY:
                events.append({"e": "notice", "kind": "interrupt", **clip_text(words.strip())})
            else:
                events.append({"e": "call", "id": key, "model": model, "usage": None, "final": False})
                if words.strip():
                    events.append({"e": "text", "call": key, **clip_text(words.strip("\n"))})
        yield Entry(key=key, session=cid, stream="main", kind=kind, file=fname, line=line, raw=raw, events=tuple(events))
    yield from summary


def _summary_entry(fname: str, summary: Any, cid: str, model: str | None, said: list[str]) -> Iterator[Entry | Problem]:
    """latest_summary: [text, RequestMetadata] in current builds, a plain string in older ones.
    The request that wrote it is a model call of its own."""
    text, rm = None, None
    if isinstance(summary, str):
        text = summary
    elif isinstance(summary, list) and summary and isinstance(summary[0], str):
        text = summary[0]
        rm = summary[1] if len(summary) > 1 and isinstance(summary[1], dict) else None
    if text is None:
        yield Problem(fname, 1, f"latest_summary of unexpected shape ({type(summary).__name__}); kept in the state record")
        return
    raw = orjson.dumps(summary)
    ident = None
    if rm:
        ident = rm.get("message_id") or rm.get("request_id")
    ident = ident if isinstance(ident, str) and ident else _digest(text.encode("utf-8", "surrogatepass"))
    key = f"{cid}:summary:{ident}"
    events: list[dict[str, Any]] = []
    if rm:
        call_model = rm.get("model_id") if isinstance(rm.get("model_id"), str) and rm.get("model_id") else model
        events.append({"e": "call", "id": f"summary:{ident}", "model": call_model, "usage": None, "final": False})
    events.append({"e": "summary", **clip_text(text)})
    if rm:
        yield from _said_ms(said, fname, 1, rm)
    yield Entry(key=key, session=cid, stream="main", kind="summary", file=fname, line=1, raw=raw,
                events=tuple(events), ts=_ms_iso(rm.get("request_start_timestamp_ms")) if rm else None)


def _state_entry(fname: str, doc: _Doc, cid: str) -> Entry:
    """Everything but the history (transcript, tools, context, file_line_tracker, model,
    Kiro's user_turn_metadata): rewritten on every save, so one versioned record. Its raw is
    canonical JSON, so the same state saved by /save and by the SQLite store is one version."""
    state = {k: v for k, v in doc.fields.items() if k not in ("history", "transcript")}
    state["transcript"] = [item for _, _, item in doc.transcript]
    state["history_items"] = len(doc.history)
    return Entry(key=f"{cid}:state", session=cid, stream="main", kind="state", file=fname, line=1,
                 raw=_canonical(state), events=(), versioned=True)


# --- Kiro 2.x journals ----------------------------------------------------------------------

def _journal_events(kind: str, data: Any, st: dict[str, Any], model: str | None, key: str) -> Iterator[dict[str, Any]]:
    if kind == "Clear":
        yield {"e": "notice", "kind": "clear", **clip_text("/clear")}
        return
    blocks = data.get("content") if isinstance(data, dict) else None
    blocks = blocks if isinstance(blocks, list) else []
    if kind == "Prompt":
        text = _blocks_text(blocks)
        yield {"e": "input", "source": "person" if st["stream"] == "main" else "agent", **clip_text(text)}
    elif kind == "AssistantMessage":
        mid = data.get("message_id") if isinstance(data.get("message_id"), str) and data.get("message_id") else key
        call_model = model
        for b in blocks:
            if isinstance(b, dict) and b.get("kind") == "thinking" and isinstance(b.get("data"), dict):
                m = b["data"].get("modelId")
                if isinstance(m, str) and m:
                    call_model = m
        # Kiro 2.x counts tokens per user turn, not per call (§1.6): usage unknown here.
        yield {"e": "call", "id": mid, "model": call_model, "usage": None, "final": False}
        for b in blocks:
            if not isinstance(b, dict):
                continue
            bk, bd = b.get("kind"), b.get("data")
            if bk == "text" and isinstance(bd, str) and bd.strip():
                yield {"e": "text", "call": mid, **clip_text(bd)}
            elif bk == "thinking" and isinstance(bd, dict):
                yield {"e": "thinking", "call": mid, **clip_text(bd.get("text") or "")}
            elif bk == "toolUse" and isinstance(bd, dict):
                inp = bd.get("input")
                yield {"e": "tool_use", "call": mid, "id": _str(bd.get("toolUseId")), "name": _str(bd.get("name")),
                       "input": clip_input(inp if isinstance(inp, dict) else {})}
    elif kind == "ToolResults":
        for b in blocks:
            if not isinstance(b, dict) or b.get("kind") != "toolResult" or not isinstance(b.get("data"), dict):
                continue
            bd = b["data"]
            status = bd.get("status")
            content = bd.get("content") if isinstance(bd.get("content"), list) else []
            yield {"e": "tool_result", "id": _str(bd.get("toolUseId")),
                   "error": isinstance(status, str) and status.lower() == "error", **clip_text(_blocks_text(content))}


def _blocks_text(blocks: list[Any]) -> str:
    parts = []
    for b in blocks:
        if not isinstance(b, dict):
            continue
        bk, bd = b.get("kind"), b.get("data")
        if bk == "text" and isinstance(bd, str):
            parts.append(bd)
        elif bk == "json":
            parts.append(orjson.dumps(bd).decode())
        elif bk == "image":
            parts.append("[image]")
    return "\n".join(parts)


def _load_meta(path: Path) -> tuple[dict[str, Any], bytes | None, Problem | None]:
    try:
        raw = read_regular(path)
    except OSError:
        return {}, None, None
    raw, found, at = mend(raw.strip())
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return {}, None, Problem(str(path), 1, f"session metadata is not JSON ({exc}); read the journal without it")
    if not isinstance(obj, dict):
        return {}, None, Problem(str(path), 1, "session metadata is not a JSON object; read the journal without it")
    return obj, raw, Problem(str(path), raw.count(b"\n", 0, at) + 1, mended_document(found)) if found else None


def _names_parent(meta: Path) -> bool:
    """Whether a Kiro 2.x session's metadata names a parent session (its journal is a sub-agent's)."""
    return bool(_load_meta(meta)[0].get("parent_session_id"))


def _session_meta(journal: Path) -> dict[str, Any]:
    return _load_meta(journal.with_suffix(".json"))[0]


def _meta_model(meta: dict[str, Any]) -> str | None:
    state = meta.get("session_state")
    rts = state.get("rts_model_state") if isinstance(state, dict) else None
    info = rts.get("model_info") if isinstance(rts, dict) else None
    if isinstance(info, dict):
        for k in ("model_id", "model_name"):
            if isinstance(info.get(k), str) and info[k]:
                return info[k]
    return None


# --- sniffing -------------------------------------------------------------------------------

def _sniff(p: str | Path) -> str | None:
    """What Kiro file ``p`` is: ``save`` (a ConversationState document), ``sqlite``,
    ``journal`` (Kiro 2.x .jsonl), ``meta`` (its .json), or None. Reads a few KiB (an SQLite
    file: a copy of its schema's pages). What its own first bytes say is kept for a collect while
    the file is the same (:mod:`asz_core.looks`); what rests on another file (a database's
    tables, with its WAL; a metadata file's journal) is looked at again."""
    kind = look("kiro.head", p, _sniff_head)
    if kind == "sqlite?":
        return "sqlite" if _has_conversation_tables(Path(p)) else None
    if kind == "meta?":
        # A Kiro 2.x session's metadata: it stands for its journal.
        journal = Path(p).with_suffix(".jsonl")
        return "meta" if journal.is_file() and _sniff(journal) == "journal" else None
    return kind


def _sniff_head(p: Path) -> str | None:
    """:func:`_sniff` by ``p``'s first bytes alone: ``sqlite?`` and ``meta?`` for what the
    database's tables or the journal beside it decide."""
    try:
        with open_regular(p) as f:
            head = f.read(_SNIFF_BYTES)
    except OSError:
        return None
    if head.startswith(_SQLITE_MAGIC):
        return "sqlite?"
    body = head.removeprefix(b"\xef\xbb\xbf")
    if not body.lstrip().startswith(b"{"):
        return None
    if _FIRST_KEY.match(body):
        return "save"
    if p.suffix == ".jsonl":
        first = body.split(b"\n", 1)[0]
        if b'"kind"' in first and b'"data"' in first:
            try:
                with open_regular(p) as f:
                    obj = loads_line(f.readline(1 << 20).strip())[0]
            except (OSError, orjson.JSONDecodeError):
                return None
            if isinstance(obj, dict) and isinstance(obj.get("kind"), str) and obj["kind"] in _JOURNAL_KINDS and "data" in obj:
                return "journal"
        return None
    if p.suffix == ".json" and b'"session_id"' in body:
        return "meta?"
    return None


_STORE_COLUMNS = {"conversations": {"key", "value"}, "conversations_v2": {"key", "conversation_id", "value"}}


def _conversation_tables(db: sqlite3.Connection) -> set[str]:
    """The tables of Q CLI's store schema (migrations 007, 008) this database has."""
    found = set()
    for table, need in _STORE_COLUMNS.items():
        cols = {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
        if need <= cols:
            found.add(table)
    return found


def _has_conversation_tables(p: Path) -> bool:
    """Whether SQLite file ``p`` has Q CLI's tables, read from a copy of its first pages (the
    schema is written first; the rest of the copy is a hole) and, when that is not enough to
    tell, from a whole copy. A side file that is no regular file: listed, for reading to name."""
    for limit in (_SCHEMA_BYTES, None):
        copy = _StoreCopy(p, limit)
        try:
            return bool(_conversation_tables(copy.open()))
        except sqlite3.DatabaseError:
            continue  # the schema reaches past the first pages (or the file is no database)
        except OSError:
            return copy.side_failed
        finally:
            copy.close()
    return False


_SCHEMA_BYTES = 1 << 20
_SIDES = ("-wal", "-journal")
_COPY_TRIES = 3


class _StoreCopy:
    """The store as it stands, read by SQLite from a private copy, so SQLite never opens a file of
    the user's folder by name: it would wait forever on a FIFO, and a check by name before it
    opens leaves a moment to swap one in. The store and the side files holding its latest commits
    (``-wal``, or a ``-journal`` left mid-write) are opened here as regular files (checked on the
    descriptor, never waiting) and copied, byte for byte, into a folder only this process uses;
    SQLite then opens the copy, applying the WAL or rolling the journal back as it would on the
    real one (``-shm`` is only an index it rebuilds from the WAL). A copy taken while Kiro wrote
    (a file's size or time moved during it) is taken again; the folder is removed on close.

    With ``limit``, only the first ``limit`` bytes of the store and its WAL are copied (the store's
    copy keeps its size, the rest a hole): enough to read the schema, not the rows."""

    def __init__(self, store: Path, limit: int | None = None) -> None:
        self.store, self.limit = store, limit
        self.folder: Path | None = None
        self.db: sqlite3.Connection | None = None
        self.side_failed = False
        """Whether what could not be opened was a side file (the store itself opened)."""

    def open(self) -> sqlite3.Connection:
        import tempfile

        self.folder = Path(tempfile.mkdtemp(prefix="asz-kiro-"))
        try:
            dest = self.folder / "data.sqlite3"
            for _ in range(_COPY_TRIES):
                if self._copy(dest):
                    break
            else:
                raise OSError(f"it changed while being read, {_COPY_TRIES} times; it is read again at the next collect")
            self.db = sqlite3.connect(dest)
            # A value that is no UTF-8 stops sqlite3's reading of the whole query (every other
            # conversation of the store was lost): its bytes kept (surrogateescape), read on as text
            # with a warning naming the row (_document_entries), an id made text.
            self.db.text_factory = lambda b: b.decode("utf-8", "surrogateescape")
            return self.db
        except BaseException:
            self.close()
            raise

    def _copy(self, dest: Path) -> bool:
        """One copy of the store and its side files; False when one moved while it was taken."""
        files = []
        try:
            files.append((open_regular(self.store), dest))
            for side in _SIDES if self.limit is None else _SIDES[:1]:
                src = Path(f"{self.store}{side}")
                try:
                    files.append((open_regular(src), Path(f"{dest}{side}")))
                except FileNotFoundError:
                    Path(f"{dest}{side}").unlink(missing_ok=True)
                except OSError as exc:
                    self.side_failed = True
                    raise OSError(f"{src}: {exc}") from None
            before = [_fd_sig(f) for f, _ in files]
            for n, (f, to) in enumerate(files):
                with open(to, "wb") as out:
                    if self.limit is None:
                        shutil.copyfileobj(f, out, 1 << 20)
                    else:
                        out.write(f.read(self.limit))
                        if n == 0:
                            out.truncate(before[0][1])
            return [_fd_sig(f) for f, _ in files] == before
        finally:
            for f, _ in files:
                f.close()

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None


def _fd_sig(f: Any) -> tuple[int, int, int, int]:
    st = os.fstat(f.fileno())
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


_PASSED = (".git", "node_modules", "__pycache__")


def _walk(root: Path) -> Iterator[str]:
    passed: set[str] = set()  # folders not walked into, and those below them
    for dirpath, dirnames, filenames in walk(root):
        if dirpath in passed:
            passed.update(os.path.join(dirpath, d) for d in dirnames)
            continue
        passed.update(os.path.join(dirpath, d) for d in dirnames if d in _PASSED)
        for fn in filenames:
            if fn.endswith(("-wal", "-shm", "-journal", ".lock")):
                continue
            yield os.path.join(dirpath, fn)


# --- small helpers --------------------------------------------------------------------------

def _str(v: Any) -> str | None:
    """A tool's id or name is a string; a list or an object (a broken record) is none."""
    return v if isinstance(v, str) else None


_MENDED = "lone surrogate"
"""Kept with the kinds of :func:`_said`: a lone surrogate escape was said for the file."""


def _said(st: dict[str, Any]) -> list[str]:
    """The kinds of values that are no values already said for a file (records.said_bad_values),
    kept in its cursor state: a document saved again is read again without saying them twice."""
    said = st.get("bad_values")
    if not isinstance(said, list):
        said = st["bad_values"] = []
    return said


def _said_ms(said: list[str], fname: str, line: int, rm: dict[str, Any]) -> list[Problem]:
    """A request's start (epoch milliseconds) that is no time: said once per file."""
    return said_bad_values(said, fname, line, stamps=(("request_metadata.request_start_timestamp_ms",
                                                       rm.get("request_start_timestamp_ms")),), read_time=_ms_iso)


def _rewritten(cursor: Cursor) -> None:
    """A whole document or database is rewritten in place, not appended to. Collect trusts a
    file whose size and last bytes stand where the cursor left them to be unchanged; a cursor
    left at 0 makes it hand the file back on every collect, and the adapter compares the
    signature it kept in ``cursor.state`` instead (a same-size rewrite is not missed)."""
    cursor.offset, cursor.line = 0, 0


def _stat_sig(p: Path) -> list[int] | None:
    try:
        st = p.stat()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


def _canonical(obj: Any) -> bytes:
    try:
        return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(obj, sort_keys=True, ensure_ascii=False).encode("utf-8", "surrogatepass")


def _digest(b: bytes) -> str:
    return hashlib.blake2b(b, digest_size=8).hexdigest()


def _utc(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _iso(ts: Any) -> str | None:
    """An ISO-8601 time (9 fractional digits on Linux, a local offset) as UTC, like Claude Code's;
    None for one that is no time (asz_core.times.instant: year 1 at +05:00 is before year 1 in UTC)."""
    if not isinstance(ts, str) or not ts:
        return None
    dt = times.instant(_FRACTION.sub(r"\1", ts))
    return _utc(dt) if dt is not None else None


def _ms_iso(ms: Any) -> str | None:
    if isinstance(ms, bool) or not isinstance(ms, int | float) or ms <= 0:
        return None
    try:
        return _utc(datetime.fromtimestamp(ms / 1000, UTC))
    except (OverflowError, OSError, ValueError):
        return None


def _epoch_iso(v: Any) -> str | None:
    """Kiro 2.x meta.timestamp: epoch seconds (maybe fractional); milliseconds if huge."""
    if isinstance(v, bool) or not isinstance(v, int | float) or v <= 0:
        return _iso(v) if isinstance(v, str) else None
    return _ms_iso(v if v > 1e11 else v * 1000)
