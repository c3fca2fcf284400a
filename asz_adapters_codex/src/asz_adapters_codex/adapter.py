"""Codex CLI rollouts (``~/.codex/sessions/**/rollout-*.jsonl``) and ``codex exec --json``
streams to asz entries and events.

The rules come from shared/spec/runtimes/kiro-codex-langsmith.md §2 and §4.3; docs/runtimes/codex.md
says what is read and what Codex does not record.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

import orjson

from asz_core.interfaces import RuntimeAdapter
from asz_core.jsonl import loads_line, read_objects, walk_jsonl as _walk_jsonl
from asz_core.looks import is_regular, look
from asz_core.records import BAD_COUNT, SHAPE_ERRORS, Cursor, Entry, Problem, count, said_bad_values, str_id
from asz_core.regular import open_regular
from asz_core.textclip import clip_input, clip_text, kind_name

from .patch import PATCH_FILES_KEY, request_files

# Rollout lines: {"timestamp", "type", "payload"} (some newer lines add "ordinal").
_ROLLOUT_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
_QUIET_TYPES = frozenset({"world_state", "inter_agent_communication_metadata"})
# `codex exec --json` lines: {"type": "thread.started" | "turn.*" | "item.*" | "error", ...}.
_EXEC_PREFIXES = ("thread.", "turn.", "item.")
# Response items a model writes (the output of one sampling request).
_TOOL_CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call", "web_search_call",
                         "tool_search_call", "image_generation_call"})
_TOOL_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output", "tool_search_output"})
_SHELL_TOOLS = frozenset({"exec_command", "write_stdin", "shell", "shell_command", "local_shell", "container.exec"})
_EXEC_TOOL_ITEMS = frozenset({"command_execution", "file_change", "mcp_tool_call", "web_search",
                              "collab_tool_call", "todo_list", "image_generation"})
_EXIT_CODE = re.compile(r"^(?:Process exited with code|Exit code:)\s*(-?[0-9]{1,18})", re.M)
"""(At most 18 digits read: a longer run is its first 18, not zero, and int() takes no more than 4,300.)"""
_UUID_TAIL = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$")
_ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d")
# A forked rollout copies its parent's history in one burst at the fork instant; the child's
# own records come after a real model turn. Lines at least this far apart end the burst.
REPLAY_GAP_SECONDS = 1.0
_HEAD_BYTES = 1 << 20
# Where a request's token_count stands among its output items (docs/runtimes/codex.md, "Model
# calls and usage"). Up to 0.60.x Codex wrote a request's output items (reasoning, messages, tool
# calls with their outputs) after the request had ended, so its token_count comes first; from
# the release that records each item as it completes (0.123.0 in the corpus) the items come
# first. Between the two, and without a cli_version, the file itself says which (READ_ORDER).
COUNT_FIRST, ITEMS_FIRST, READ_ORDER = "count first", "items first", "read from the file"
LAST_COUNT_FIRST = (0, 60)
"""The newest release (major, minor) known to write the token_count before the items."""
FIRST_ITEMS_FIRST = (0, 123)
"""The oldest release known to write the items before the token_count."""
_USAGE_KEYS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens", "total_tokens",
               "cache_write_input_tokens", "prompt_tokens", "completion_tokens")
_STATE_CAP = 500  # pending tool calls remembered across reads (bounded)


class CodexAdapter(RuntimeAdapter):
    """Reads Codex CLI rollout files (a file, a day folder, or ``~/.codex/sessions``) and
    ``codex exec --json`` output saved to a file."""

    name: ClassVar[str] = "codex"

    def __init__(self) -> None:
        self._roots: dict[str, str] = {}

    # -- which files ----------------------------------------------------------------------
    def detect(self, path: Path) -> bool:
        if path.is_file():
            return _listed(path) is not None
        if path.is_dir():
            return any(_listed(p) is not None for p in _walk_jsonl(path, limit=50))
        return False

    def files(self, path: Path) -> list[Path]:
        if path.is_file():
            return [path]
        found = []
        for p in _walk_jsonl(path):
            if not is_regular(p):
                found.append((0, str(p), p))  # listed so collect says it skipped it (never opened)
                continue
            got = _listed(p)
            if got is not None:
                found.append((got[1], str(p), p))
        # Parents land before their sub-agents (depth 0 first), each level in name order
        # (rollout names start with their creation time).
        found.sort(key=lambda t: (t[0], t[1]))
        return [p for _, _, p in found]

    def default_paths(self) -> list[Path]:
        home = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
        return [home / "sessions"]

    def file_requests(self, tool: str, request: Mapping[str, Any]) -> list[str]:
        return request_files(tool, request)

    # -- reading --------------------------------------------------------------------------
    def read(self, path: Path, cursor: Cursor) -> Iterator[Entry | Problem]:
        fname = str(path)
        st = cursor.state
        for item in read_objects(path, cursor):
            if isinstance(item, Problem):
                yield item
            else:
                yield from self._entry(path, fname, item[0], item[1], item[2], st)

    def _entry(self, path: Path, fname: str, lineno: int, body: bytes, obj: dict[str, Any], st: dict[str, Any]) -> Iterator[Entry | Problem]:
        if "fmt" not in st:
            self._start(path, obj, st)
        elif "order" not in st:
            _upgrade(st, path)
        fmt = st["fmt"]
        typ = obj.get("type")
        payload = obj.get("payload") if isinstance(obj.get("payload"), dict) else None
        if fmt == "exec":
            kind = kind_name(typ)
        elif payload is not None and isinstance(payload.get("type"), str) and typ in ("event_msg", "response_item"):
            kind = f"{typ}:{kind_name(payload['type'])}"
        else:
            kind = kind_name(typ) if typ is not None else ("record_type:" + kind_name(obj.get("record_type")) if "record_type" in obj else "legacy")
        try:
            if fmt == "exec":
                events = list(self._exec_events(obj, st, fname, lineno))
            else:
                events = list(self._rollout_events(path, fname, lineno, obj, payload, st))
        except SHAPE_ERRORS as exc:
            # A line of an unexpected shape is kept whole; it just says nothing to assembly.
            yield Problem(fname, lineno, f"{kind} line of unexpected shape ({exc}); kept, no events")
            events = []
        problems = [e for e in events if isinstance(e, Problem)]
        yield from problems
        st["lines"] += 1
        ts = obj.get("timestamp")
        yield from said_bad_values(_said(st), fname, lineno, stamps=(("timestamp", ts),))
        yield Entry(
            key=f"{st['thread']}:{lineno}:{hashlib.blake2b(body, digest_size=8).hexdigest()}",
            session=st["session"],
            stream=st["stream"],
            kind=kind,
            file=fname,
            line=lineno,
            raw=body,
            events=tuple(e for e in events if not isinstance(e, Problem)),
            ts=ts if isinstance(ts, str) and _ISO.match(ts) else None,
        )

    def _start(self, path: Path, obj: dict[str, Any], st: dict[str, Any]) -> None:
        """First record of a file: its format, thread, session and stream."""
        typ = obj.get("type")
        payload = obj.get("payload")
        thread = None
        if isinstance(typ, str) and typ.startswith(_EXEC_PREFIXES) or typ == "error" and "payload" not in obj:
            st["fmt"] = "exec"
            if typ == "thread.started" and isinstance(obj.get("thread_id"), str):
                thread = obj["thread_id"]
        elif _among(typ, _ROLLOUT_TYPES) or _among(typ, _QUIET_TYPES) or isinstance(payload, dict):
            st["fmt"] = "rollout"
            if typ == "session_meta" and isinstance(payload, dict):
                thread = _meta_id(payload)
        else:
            st["fmt"] = "legacy"  # ≤ 0.3x: bare meta line, unwrapped response items
            if isinstance(obj.get("id"), str) and "type" not in obj:
                thread = obj["id"]
        if not thread:
            m = _UUID_TAIL.search(path.stem)
            thread = m.group(1) if m else path.stem
        st.update(thread=thread, session=thread, stream="main", child=False, model=None, n=0, open=None,
                  texts={}, prev=None, turn=False, had=False, pend=False, tools={}, fail={}, replay=None,
                  check_replay=False, metas=0, lines=0, t=0, order=ITEMS_FIRST if st["fmt"] == "exec" else READ_ORDER,
                  counted=None, unreadable=False, counts=0)

    # -- rollout --------------------------------------------------------------------------
    def _rollout_events(self, path: Path, fname: str, lineno: int, obj: dict[str, Any], p: dict[str, Any] | None,
                        st: dict[str, Any]) -> Iterator[dict[str, Any] | Problem]:
        typ = obj.get("type")
        if st["fmt"] == "legacy" and not _among(typ, _ROLLOUT_TYPES):
            yield from self._legacy(obj, st, lineno)
            return
        if typ == "session_meta" and p is not None:
            st["metas"] += 1
            if st["metas"] == 1:
                yield from self._meta(path, obj, p, st)
                return
        if st.pop("check_replay", False) and typ == "session_meta":
            # A sub-agent file whose second line is another session_meta: the ancestors'
            # metas and history copied in (a full-history fork).
            st["replay"] = {"last": _seconds(obj.get("timestamp")), "open": []}
        if st.get("replay") is not None and self._replayed(obj, p, st):
            return
        if _among(typ, _QUIET_TYPES) or typ == "session_meta":
            return
        if not _among(typ, _ROLLOUT_TYPES):
            yield Problem(fname, lineno, f"unknown record type {kind_name(typ)!r}; kept, no events")
            return
        if p is None:
            yield Problem(fname, lineno, f"{typ} line without a payload object; kept, no events")
            return
        if typ == "turn_context":
            st["counted"] = None  # a new request begins: no later item is the counted one's
            model = p.get("model") or ((p.get("collaboration_mode") or {}).get("settings") or {}).get("model")
            if isinstance(model, str) and model:
                st["model"] = model
            yield from _project(p, st)
        elif typ == "compacted":
            msg = p.get("message")
            if isinstance(msg, str) and msg.strip():
                yield {"e": "summary", **clip_text(msg)}
            else:
                yield {"e": "notice", "kind": "compact_boundary", **clip_text("history replaced by compaction")}
        elif typ == "event_msg":
            yield from self._event_msg(p, st, fname, lineno)
        elif typ == "response_item":
            yield from self._response_item(p, st, lineno)

    def _meta(self, path: Path, obj: dict[str, Any], p: dict[str, Any], st: dict[str, Any]) -> Iterator[dict[str, Any]]:
        yield from _project(p, st)
        st["order"] = order_of(p.get("cli_version"))
        parent, kind = _parent_of(p)
        model = p.get("model")
        if isinstance(model, str) and model:
            st["model"] = model
        forked = p.get("forked_from_id")
        if parent and st["lines"] == 0:
            # Only a meta that opens the file decides its session and stream (they never change).
            thread = _meta_id(p) or st["thread"]
            st["session"] = self._root_session(path, parent, _depth_of(p))
            st["stream"] = thread
            st["child"] = True
            yield {"e": "stream", "kind": kind, "by": []}
            st["check_replay"] = True
        if isinstance(forked, str) and forked:
            st["replay"] = {"last": _seconds(obj.get("timestamp")), "open": []}
            st["check_replay"] = False
            yield {"e": "notice", "kind": "fork", **clip_text(
                f"forked from thread {forked}: the history copied from it is kept in the records but not counted again")}

    def _replayed(self, obj: dict[str, Any], p: dict[str, Any] | None, st: dict[str, Any]) -> bool:
        """Whether a line belongs to a fork's copied history (then it says nothing: the parent's
        own file has it, token counts included). The copy ends at the child's own first turn:
        a ``task_started`` while a copied turn is still open (a spawn forks mid-turn), or a line
        written a real turn's time after the burst."""
        r = st["replay"]
        sub = p.get("type") if p is not None else None
        ts = _seconds(obj.get("timestamp"))
        is_start = obj.get("type") == "event_msg" and sub == "task_started"
        if obj.get("type") == "session_meta":  # the ancestors' metas open the copy, whenever written
            r["last"] = ts if ts is not None else r["last"]
            return True
        if (is_start and r["open"]) or (ts is not None and r["last"] is not None and ts - r["last"] >= REPLAY_GAP_SECONDS):
            st["replay"] = None
            st.update(turn=False, had=False, pend=False, open=None, counted=None, texts={})
            return False
        if ts is not None:
            r["last"] = ts
        if p is not None and obj.get("type") == "event_msg":
            if is_start:
                r["open"].append(str(p.get("turn_id")))
            elif sub in ("task_complete", "turn_aborted"):
                tid = str(p.get("turn_id"))
                if tid in r["open"]:
                    r["open"].remove(tid)
                elif r["open"]:
                    r["open"].pop()
            elif sub == "token_count" and isinstance(p.get("info"), dict):
                total = p["info"].get("total_token_usage")
                if isinstance(total, dict):
                    st["prev"] = total
        return True

    def _event_msg(self, p: dict[str, Any], st: dict[str, Any], fname: str, lineno: int) -> Iterator[dict[str, Any] | Problem]:
        sub = p.get("type")
        if sub == "token_count":
            yield from self._token_count(p, st, fname, lineno)
        elif sub == "user_message":
            yield from self._user_message(p, st)
        elif sub == "agent_message":
            msg = p.get("message")
            if isinstance(msg, str) and msg.strip():
                yield from self._text(msg, st, item=False)
        elif sub == "agent_reasoning":
            st["counted"] = None  # the next request is being sampled: later items are not the counted one's
        elif sub == "task_started":
            self._close(st)
            st["turn"], st["had"], st["pend"] = True, st["pend"], False
        elif sub == "task_complete":
            self._close(st)
            st["turn"] = st["had"] = st["pend"] = False
            yield {"e": "turn_end"}
        elif sub == "turn_aborted":
            self._close(st)
            st["turn"] = st["had"] = st["pend"] = False
            yield {"e": "notice", "kind": "interrupt", **clip_text(f"turn aborted: {p.get('reason') or 'unknown reason'}")}
        elif sub in ("exec_command_end", "patch_apply_end", "mcp_tool_call_end"):
            tid = p.get("call_id")
            # Count first, a tool ran (and ended) before its call item is written: remember it.
            if isinstance(tid, str) and (tid in st["tools"] or st["order"] != ITEMS_FIRST) and _end_failed(sub, p):
                st["fail"][tid] = True
                _cap(st["fail"])
        elif sub == "collab_agent_spawn_end":
            tid, child = p.get("call_id"), p.get("new_thread_id")
            if isinstance(tid, str) and tid and isinstance(child, str) and child:
                yield {"e": "starts", "id": tid, "stream": child}
        elif sub == "context_compacted":
            yield {"e": "notice", "kind": "compact_boundary", **clip_text("context compacted")}
        elif sub == "thread_rolled_back":
            yield {"e": "notice", "kind": "rollback", **clip_text(f"thread rolled back {p.get('num_turns')} turn(s)")}
        elif sub == "undo_completed":
            yield {"e": "notice", "kind": "undo", **clip_text(str(p.get("message") or "undo"))}
        elif sub in ("error", "stream_error"):
            msg = p.get("message")
            if not isinstance(msg, str):
                msg = orjson.dumps(p.get("error") if "error" in p else p).decode()
            yield {"e": "notice", "kind": "api_error", **clip_text(msg)}
        elif sub in ("entered_review_mode", "exited_review_mode"):
            yield {"e": "notice", "kind": "review", **clip_text(sub.replace("_", " "))}

    def _user_message(self, p: dict[str, Any], st: dict[str, Any]) -> Iterator[dict[str, Any]]:
        msg = p.get("message")
        text = msg if isinstance(msg, str) else ""
        kind = p.get("kind")
        if kind not in (None, "plain"):
            # Older builds wrote instructions and environment context as user_message too.
            yield {"e": "notice", "kind": "meta", **clip_text(text)}
            return
        n_images = sum(len(p.get(k) or []) for k in ("images", "local_images") if isinstance(p.get(k) or [], list))
        if n_images and "[Image #" not in text:
            text = "\n".join([text] * bool(text) + ["[image]"] * n_images)
        if not text.strip():
            yield {"e": "notice", "kind": "meta", **clip_text(text)}
            return
        if not st["turn"]:
            self._close(st)
        if st["child"]:
            source = "agent"  # a sub-agent's prompt, from the agent that spawned it
        elif st["turn"] and st["had"]:
            source = "queued"  # typed while the agent worked, injected into the running turn
        else:
            source = "person"
        if st["turn"]:
            st["had"] = True
        else:
            st["pend"] = True
        yield {"e": "input", "source": source, **clip_text(text)}

    def _token_count(self, p: dict[str, Any], st: dict[str, Any], fname: str, lineno: int) -> Iterator[dict[str, Any] | Problem]:
        info = p.get("info")
        if not isinstance(info, dict):
            return  # rate limits only: no model call
        total, last = info.get("total_token_usage"), info.get("last_token_usage")
        bad = _not_numbers(last) or _not_numbers(total)
        said = _said(st)
        if bad and not st["unreadable"]:
            st["unreadable"] = True  # said once per file (the state lasts across collects)
            if BAD_COUNT not in said:
                said.append(BAD_COUNT)  # this warning says it: no second one for the line
            yield Problem(fname, lineno, f"a token count that is no count, token_count with values that are not numbers "
                          f"({bad}): that usage is unknown, and a count that cannot be told from a repeat of the one "
                          "before is not taken for a request (how many requests there were is not known); said once "
                          "for this file")
        # Numbers that are no counts (negative, past 64 bits, a fraction): unknown, said once per file.
        yield from said_bad_values(said, fname, lineno, _counts("last_token_usage", last) + _counts("total_token_usage", total))
        readable = isinstance(total, dict) and not _not_numbers(total)
        fresh = self._fresh(st)
        st["counts"] += 1
        if readable and st["prev"] is not None and _same(total, st["prev"]):
            return  # the same count written again: no new call
        if bad and not readable and not fresh:
            # Nothing of a new request since the last count, and no running total to compare:
            # a repeat of that count or a request of its own. Not taken for a request.
            yield {"e": "notice", "kind": "requests_unknown", **clip_text(
                "a token count that cannot be read and may repeat the one before: the number of model requests is not known")}
            return
        raw = last if isinstance(last, dict) else (_diff(total, st["prev"]) if readable else None)
        if isinstance(total, dict):
            st["prev"] = total
        elif total is not None:
            st["prev"] = _UNREAD  # a later running total cannot be diffed against this one
        if isinstance(raw, dict) and _all_zero(raw):
            return  # nothing consumed: no model call
        model = info.get("model") or p.get("model") or st["model"]
        if st["order"] == READ_ORDER and _said_before_written(st):
            # A message shown before this count but written after it: this file writes each
            # request's count before its items (an older build without a known cli_version).
            st["order"] = COUNT_FIRST
        # No output item before it: this event alone is the call (its opening event is dropped).
        cid = st["open"] or self._call(st)[0]
        yield {"e": "call", "id": cid, "model": model if isinstance(model, str) else None,
               "usage": _usage(raw) if isinstance(raw, dict) else None, "final": True}
        # Count first, the items written next are this request's.
        st["open"], st["counted"] = None, cid

    def _fresh(self, st: dict[str, Any]) -> bool:
        """Whether a new request shows since the last count (or there was none before):
        output items of an uncounted call, or (count first) a request begun (``turn_context``,
        reasoning shown, a turn's start)."""
        return not st["counts"] or bool(st["open"]) or (st["order"] == COUNT_FIRST and st["counted"] is None)

    def _response_item(self, p: dict[str, Any], st: dict[str, Any], lineno: int) -> Iterator[dict[str, Any]]:
        sub = p.get("type")
        if sub == "message":
            role = p.get("role")
            text = _content_text(p.get("content"))
            if role == "assistant":
                if text.strip():
                    yield from self._text(text, st, item=True)
            elif role == "user" and text.lstrip().startswith("<subagent_notification>"):
                ev = {"e": "notice", "kind": "task_notification", **clip_text(text)}
                ended = _notified_agent(text)
                if ended:
                    ev["ended"] = ended
                yield ev
            elif role == "user" and st["fmt"] == "legacy" and text.strip() and not text.lstrip().startswith("<"):
                yield {"e": "input", "source": "agent" if st["child"] else "person", **clip_text(text)}
        elif sub == "reasoning":
            cid, evs = self._target(st)
            yield from evs
            yield {"e": "thinking", "call": cid, **clip_text(_reasoning_text(p))}
        elif _among(sub, _TOOL_CALLS):
            yield from self._tool_call(sub, p, st, lineno)
        elif _among(sub, _TOOL_OUTPUTS):
            yield from self._tool_output(sub, p, st)
        elif sub == "agent_message":
            # Multi-agent v2: a message from another agent placed in this thread's history.
            yield {"e": "notice", "kind": "agent_message", **clip_text(_content_text(p.get("content")))}

    def _tool_call(self, sub: str, p: dict[str, Any], st: dict[str, Any], lineno: int) -> Iterator[dict[str, Any]]:
        tid = str_id(p.get("call_id")) or str_id(p.get("id")) or f"{st['thread']}:L{lineno}"
        result: dict[str, Any] | None = None
        if sub == "function_call":
            name = p.get("name")
            args = p.get("arguments")
            request: Any = args
            if isinstance(args, str):
                try:
                    request = orjson.loads(args)
                except orjson.JSONDecodeError:
                    request = args
            if not isinstance(request, dict):
                request = {"arguments": request}
        elif sub == "custom_tool_call":
            name = p.get("name")
            request = {"input": p.get("input")}
        elif sub == "local_shell_call":
            name = "local_shell"
            request = p.get("action") if isinstance(p.get("action"), dict) else {}
        elif sub == "tool_search_call":
            name = "tool_search"
            request = p.get("arguments") if isinstance(p.get("arguments"), dict) else {}
        else:  # web_search_call, image_generation_call: run by the provider, the result is implicit
            name = sub.removesuffix("_call")
            request = p.get("action") if isinstance(p.get("action"), dict) else {
                k: v for k, v in p.items() if k in ("revised_prompt", "status")}
            status = p.get("status")
            if status in ("completed", "failed", "incomplete"):
                text = _web_text(p) if sub == "web_search_call" else str(p.get("revised_prompt") or status)
                result = {"e": "tool_result", "id": tid, "error": status != "completed", **clip_text(text)}
        name = name if isinstance(name, str) else kind_name(name)
        cid, evs = self._target(st)
        yield from evs
        ev_input = clip_input(request)
        files = request_files(name, request)
        if files:
            ev_input[PATCH_FILES_KEY] = files
        yield {"e": "tool_use", "call": cid, "id": tid, "name": name, "input": ev_input}
        if result is not None:
            yield result
        else:
            st["tools"][tid] = name
            _cap(st["tools"])

    def _tool_output(self, sub: str, p: dict[str, Any], st: dict[str, Any]) -> Iterator[dict[str, Any]]:
        tid = str_id(p.get("call_id"))
        name = st["tools"].pop(tid, None) if tid else None
        end_failed = st["fail"].pop(tid, False) if isinstance(tid, str) else False
        if sub == "tool_search_output":
            tools = p.get("tools")
            text = f"{len(tools)} tool group(s) found" if isinstance(tools, list) else str(p.get("status") or "")
            yield {"e": "tool_result", "id": tid, "error": bool(end_failed), **clip_text(text)}
            return
        out = p.get("output")
        text, parsed, success = _output_text(out)
        failed = bool(end_failed) or success is False
        if isinstance(parsed, dict):
            meta = parsed.get("metadata")
            code = meta.get("exit_code") if isinstance(meta, dict) else None
            if isinstance(code, int) and code != 0:
                failed = True
        if name in _SHELL_TOOLS:
            m = _EXIT_CODE.search(text)
            if m and int(m.group(1)) != 0:
                failed = True
        ev: dict[str, Any] = {"e": "tool_result", "id": tid, "error": False, **clip_text(text)}
        if name == "spawn_agent":
            agent = parsed.get("agent_id") if isinstance(parsed, dict) else None
            if isinstance(agent, str) and agent:
                ev["starts"] = agent
                ev["launch"] = True  # spawn_agent answers at once; the child reports by a notification
            elif parsed is None:
                failed = True  # a rejected spawn answers in plain words, not with an agent id
        ev["error"] = failed
        yield ev

    def _text(self, text: str, st: dict[str, Any], *, item: bool) -> Iterator[dict[str, Any]]:
        """The model's words: written twice (event_msg agent_message, shown as they stream, and
        the response_item message, an output item), kept once per call. Which copies a call had
        tells the order of a file whose version does not (``_said_before_written``)."""
        cid, evs = self._target(st) if item else self._call(st)
        yield from evs
        digest = hashlib.blake2b(text.strip().encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
        seen = st["texts"].setdefault(cid, {})
        mark = "i" if item else "e"
        had = seen.get(digest)
        seen[digest] = mark if had is None or mark in had else had + mark
        if had is None:
            yield {"e": "text", "call": cid, **clip_text(text)}

    def _target(self, st: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
        """The model call an output item (response_item) belongs to. Count first, the items
        written after a request's count are that request's, until the next request begins."""
        if st["order"] == COUNT_FIRST and st["counted"] and not st["open"]:
            return st["counted"], []
        return self._call(st)

    def _call(self, st: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
        """The model call the next output item belongs to: the open one, or a new one."""
        if st["open"]:
            return st["open"], []
        st["n"] += 1
        cid = f"{st['thread']}:c{st['n']}"
        st["open"] = cid
        # Texts are remembered for the calls items can still reach: this one and the counted one.
        st["texts"] = {k: v for k, v in st["texts"].items() if k == st["counted"]}
        return cid, [{"e": "call", "id": cid, "model": st["model"], "usage": None, "final": False}]

    def _close(self, st: dict[str, Any]) -> None:
        st["open"], st["counted"], st["texts"] = None, None, {}

    def _legacy(self, obj: dict[str, Any], st: dict[str, Any], lineno: int) -> Iterator[dict[str, Any] | Problem]:
        if "record_type" in obj:
            return  # {"record_type": "state"} lines
        if "type" not in obj and "id" in obj:
            st["order"] = order_of(obj.get("cli_version"))
            yield from _project(obj, st)  # the bare session meta line
            return
        sub = obj.get("type")
        if isinstance(sub, str):
            yield from self._response_item(obj, st, lineno)

    def _root_session(self, path: Path, parent: str, depth: int | None) -> str:
        """The root thread of a sub-agent: its conversation. A depth-1 sub-agent's parent is the
        root; deeper ones follow parent links through the rollout files found beside it."""
        cur, seen = parent, set()
        while depth != 1 and cur not in seen:
            seen.add(cur)
            if cur in self._roots:
                return self._roots[cur]
            f = _find_rollout(path, cur)
            meta = _first_meta(f) if f else None
            up, _ = _parent_of(meta) if meta else (None, "")
            if not up:
                break
            cur, depth = up, _depth_of(meta)
        self._roots[parent] = cur
        return cur

    # -- codex exec --json ----------------------------------------------------------------
    def _exec_events(self, obj: dict[str, Any], st: dict[str, Any], fname: str, lineno: int) -> Iterator[dict[str, Any] | Problem]:
        typ = obj.get("type")
        if typ == "turn.started":
            self._close(st)
            st["turn"] = True
            st["t"] += 1
        elif typ in ("item.started", "item.updated", "item.completed"):
            item = obj.get("item")
            if not isinstance(item, dict):
                return
            it = item.get("type") or item.get("item_type")
            iid = f"{st['thread']}:t{st['t']}:{item.get('id')}"
            if it in ("agent_message", "assistant_message"):
                if typ == "item.completed" and isinstance(item.get("text"), str) and item["text"].strip():
                    yield from self._text(item["text"], st, item=True)
            elif it == "reasoning":
                if typ == "item.completed":
                    cid, evs = self._call(st)
                    yield from evs
                    yield {"e": "thinking", "call": cid, **clip_text(str(item.get("text") or ""))}
            elif _among(it, _EXEC_TOOL_ITEMS):
                started = st.setdefault("started", {})
                if iid not in started:
                    cid, evs = self._call(st)
                    yield from evs
                    name = it
                    if it == "mcp_tool_call":
                        name = f"{item.get('server')}.{item.get('tool')}"
                    request = {k: v for k, v in item.items() if k not in ("id", "type", "aggregated_output", "status", "exit_code", "result", "error")}
                    yield {"e": "tool_use", "call": cid, "id": iid, "name": name, "input": clip_input(request)}
                    started[iid] = True
                    _cap(started)
                if typ == "item.completed":
                    started.pop(iid, None)
                    status = item.get("status")
                    code = item.get("exit_code")
                    failed = status in ("failed", "declined") or (isinstance(code, int) and code != 0) or bool(item.get("error"))
                    text = item.get("aggregated_output")
                    if not isinstance(text, str):
                        res = item.get("result") if item.get("result") is not None else item.get("error")
                        text = res if isinstance(res, str) else (orjson.dumps(res).decode() if res is not None else str(status or ""))
                    yield {"e": "tool_result", "id": iid, "error": failed, **clip_text(text)}
            elif it == "error" and typ == "item.completed":
                yield {"e": "notice", "kind": "api_error", **clip_text(str(item.get("message") or ""))}
        elif typ == "turn.completed":
            usage = obj.get("usage")
            yield from said_bad_values(_said(st), fname, lineno, _counts("usage", usage))
            cid = st["open"] or self._call(st)[0]
            yield {"e": "call", "id": cid, "model": st["model"], "usage": _usage(usage) if isinstance(usage, dict) else None, "final": True}
            self._close(st)
            st["turn"] = False
            yield {"e": "turn_end"}
        elif typ in ("turn.failed", "error"):
            err = obj.get("error") if isinstance(obj.get("error"), dict) else obj
            self._close(st)
            yield {"e": "notice", "kind": "api_error", **clip_text(str(err.get("message") or typ))}


# --- helpers ------------------------------------------------------------------------------

def _project(p: Mapping[str, Any], st: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The session's working directory (session_meta, each turn_context): said once, and when it changes."""
    cwd = p.get("cwd")
    if isinstance(cwd, str) and cwd and cwd != st.get("cwd"):
        st["cwd"] = cwd
        yield {"e": "project", "path": cwd}


def _usage(u: Mapping[str, Any]) -> dict[str, Any]:
    """OpenAI dialect -> asz usage: input counts cached input, take it out once; reasoning is
    inside output. OpenAI prompt caching has no cache write (nothing is charged for writing):
    the dialect has no such count, so cache write is 0 by dialect, not unknown, unless the
    runtime recorded one (``cache_write_input_tokens``)."""
    inp, cached, out = _int(u.get("input_tokens")), _int(u.get("cached_input_tokens")), _int(u.get("output_tokens"))
    if inp is None and out is None:
        inp, out = _int(u.get("prompt_tokens")), _int(u.get("completion_tokens"))
    cw = _int(u.get("cache_write_input_tokens")) if "cache_write_input_tokens" in u else 0
    fresh = inp
    if inp is not None and cached is not None:
        fresh = inp - cached
        if cw and fresh - cw >= 0:
            fresh -= cw
        if fresh < 0:
            fresh = None  # a record that does not add up: unknown, never a guess
    return {"input": fresh, "output": out, "cache_read": cached, "cache_write": cw}


def _int(v: Any) -> int | None:
    return count(v)  # negative or out of range (2**64-1): unknown


def _counts(where: str, u: Any) -> list[tuple[str, Any]]:
    """The token counts of a usage object the adapter reads, as (field, value) pairs."""
    return [(f"{where}.{k}", u.get(k)) for k in _USAGE_KEYS] if isinstance(u, dict) else []


def _said(st: dict[str, Any]) -> list[str]:
    """The kinds of values that are no values already said for this file (records.said_bad_values)."""
    said = st.get("bad_values")
    if said is None:
        said = st["bad_values"] = []
    return said


def _upgrade(st: dict[str, Any], path: Path) -> None:
    """The state an earlier asz kept for a file it read part of (a file grown since): what this
    one adds (the order from the file's first line again); the texts of the open call (a list)
    dropped."""
    meta = _first_meta(path) if st["fmt"] == "rollout" else None
    order = ITEMS_FIRST if st["fmt"] == "exec" else order_of(meta.get("cli_version")) if meta else READ_ORDER
    st.update(order=order, counted=None, unreadable=False, counts=int(st.get("prev") is not None or bool(st.get("n"))),
              texts={})


def order_of(version: Any) -> str:
    """The order a Codex release writes a request's token_count and its output items in, by the
    session_meta's ``cli_version`` (``0.60.1``, ``0.123.0``, ``0.61.0-alpha.2``)."""
    m = re.match(r"^\s*v?([0-9]{1,9})\.([0-9]{1,9})(?![0-9])", version) if isinstance(version, str) else None
    if m is None:
        return READ_ORDER
    release = (int(m.group(1)), int(m.group(2)))
    if release <= LAST_COUNT_FIRST:
        return COUNT_FIRST
    if release >= FIRST_ITEMS_FIRST:
        return ITEMS_FIRST
    return READ_ORDER


def _said_before_written(st: dict[str, Any]) -> bool:
    """Whether the call being counted had a message shown (``agent_message``) and none written
    (a ``message`` item): items first, a request's message is written on both sides before its
    count; count first, its item comes after. A written message that differs from the shown one
    (markup the event leaves out) says nothing."""
    seen = st["texts"].get(st["open"]) if st["open"] else None
    return bool(seen) and "e" in seen.values() and "i" not in seen.values()


_UNREAD: dict[str, Any] = dict.fromkeys(_USAGE_KEYS)


def _not_numbers(u: Any) -> str:
    """What of a usage object is there but is no number (``'[REDACTED]'``, ``true``, an object),
    for the warning; empty when all of it is numbers (or it is absent)."""
    if u is None:
        return ""
    if not isinstance(u, dict):
        return f"the usage is {_show(u)}"
    for k in _USAGE_KEYS:
        v = u.get(k)
        # A number out of range (negative, past 64 bits: read as a float) is a number: its
        # count is unknown (records.count), but it still tells a repeat from a new total.
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
            return f"{k} is {_show(v)}"
    return ""


def _show(v: Any) -> str:
    """A value of the record, short, for a warning (a string as its repr: no control character)."""
    if isinstance(v, str):
        text = repr(v)
    else:
        try:
            text = orjson.dumps(v).decode()
        except (TypeError, orjson.JSONEncodeError):
            text = kind_name(type(v).__name__)
    return text if len(text) <= 40 else text[:37] + "..."


def _same(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    keys = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens", "total_tokens")
    return all(a.get(k) == b.get(k) for k in keys)


def _diff(total: Mapping[str, Any], prev: Mapping[str, Any] | None) -> dict[str, Any]:
    prev = prev or {}
    out = {}
    for k, v in total.items():
        if isinstance(v, int) and not isinstance(v, bool):
            p = prev.get(k, 0)
            out[k] = v - p if isinstance(p, int) and v >= p else None
    return out


def _all_zero(u: Mapping[str, Any]) -> bool:
    vals = [v for v in u.values() if isinstance(v, int) and not isinstance(v, bool)]
    return bool(vals) and all(v == 0 for v in vals)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    if isinstance(content, list):
        for b in content:
            if isinstance(b, dict):
                t = b.get("type")
                if t in ("input_text", "output_text", "text", "refusal") and isinstance(b.get("text") or b.get("refusal"), str):
                    parts.append(b.get("text") or b.get("refusal"))
                elif t in ("input_image", "image"):
                    parts.append("[image]")
            elif isinstance(b, str):
                parts.append(b)
    return "\n".join(parts)


def _reasoning_text(p: dict[str, Any]) -> str:
    for key in ("summary", "content"):
        v = p.get(key)
        if isinstance(v, list):
            text = "\n".join(b.get("text", "") for b in v if isinstance(b, dict) and isinstance(b.get("text"), str))
            if text.strip():
                return text
    return ""


def _web_text(p: dict[str, Any]) -> str:
    action = p.get("action") if isinstance(p.get("action"), dict) else {}
    return str(action.get("query") or action.get("url") or p.get("status") or "")


def _output_text(out: Any) -> tuple[str, Any, bool | None]:
    """A tool output as text, its parsed JSON (when it is a JSON document), and the success
    flag when the record carries one."""
    success = None
    if isinstance(out, dict):  # {"content", "success"} (older) or one content item (0.146)
        if isinstance(out.get("success"), bool):
            success = out["success"]
        inner = out.get("content") if "content" in out else out.get("text", "")
        text = inner if isinstance(inner, str) else _content_text(inner if isinstance(inner, list) else [out])
        return text, None, success
    if isinstance(out, list):
        return _content_text(out), None, None
    if not isinstance(out, str):
        return ("" if out is None else str(out)), None, None
    parsed = None
    s = out.lstrip()
    if s.startswith("{"):
        try:
            parsed = orjson.loads(out)
        except orjson.JSONDecodeError:
            parsed = None
    if isinstance(parsed, dict) and isinstance(parsed.get("output"), str):
        return parsed["output"], parsed, success
    return out, parsed, success


def _end_failed(sub: str, p: dict[str, Any]) -> bool:
    if sub == "exec_command_end":
        code = p.get("exit_code")
        return (isinstance(code, int) and code != 0) or p.get("status") == "failed"
    if sub == "patch_apply_end":
        return p.get("success") is False
    result = p.get("result")
    if isinstance(result, dict):
        if "Err" in result:
            return True
        ok = result.get("Ok")
        return isinstance(ok, dict) and ok.get("isError") is True
    return False


def _among(v: Any, names: frozenset[str]) -> bool:
    """Whether a record's type field is one of ``names``: a list or an object (unhashable) never is."""
    return isinstance(v, str) and v in names


def _cap(d: dict[str, Any]) -> None:
    while len(d) > _STATE_CAP:
        d.pop(next(iter(d)))


def _seconds(ts: Any) -> float | None:
    if not isinstance(ts, str) or not _ISO.match(ts):
        return None
    try:
        return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _meta_id(p: Mapping[str, Any]) -> str | None:
    for k in ("id", "session_id"):
        v = p.get(k)
        if isinstance(v, str) and v:
            return v
    return None


def _parent_of(p: Mapping[str, Any] | None) -> tuple[str | None, str]:
    """(parent thread id, stream kind) of a session_meta payload; (None, "") for a root thread."""
    if not isinstance(p, Mapping):
        return None, ""
    src = p.get("source")
    sub = src.get("subagent") if isinstance(src, dict) else None
    if isinstance(sub, dict):
        spawn = sub.get("thread_spawn")
        if isinstance(spawn, dict) and isinstance(spawn.get("parent_thread_id"), str) and spawn["parent_thread_id"]:
            return spawn["parent_thread_id"], "child"
    parent = p.get("parent_thread_id")
    if isinstance(parent, str) and parent:
        spawned = isinstance(sub, dict) and "thread_spawn" in sub
        return parent, "child" if spawned else "helper"
    return None, ""


def _depth_of(p: Mapping[str, Any] | None) -> int | None:
    src = p.get("source") if isinstance(p, Mapping) else None
    spawn = (src.get("subagent") or {}).get("thread_spawn") if isinstance(src, dict) and isinstance(src.get("subagent"), dict) else None
    d = spawn.get("depth") if isinstance(spawn, dict) else None
    return d if isinstance(d, int) and not isinstance(d, bool) else None


def _first_line(p: Path) -> bytes:
    try:
        with open_regular(p) as f:
            while True:
                line = f.readline(_HEAD_BYTES)
                if not line:
                    return b""
                if line.strip():
                    return line.strip()
    except OSError:
        return b""


def _first_obj(p: Path) -> dict[str, Any] | None:
    line = _first_line(p)
    if not line.startswith(b"{"):
        return None
    try:
        obj = loads_line(line)[0]  # a lone surrogate escape in it (a string cut mid-pair) is still this file's first line
    except orjson.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


def _first_meta(p: Path) -> dict[str, Any] | None:
    return _meta_of(_first_obj(p))


def _meta_of(obj: dict[str, Any] | None) -> dict[str, Any] | None:
    if obj and obj.get("type") == "session_meta" and isinstance(obj.get("payload"), dict):
        return obj["payload"]
    return None


def _listed(p: Path) -> list[Any] | None:
    """``[kind, depth]`` of a Codex file (:func:`_listing`), kept for a collect while the file is
    the same (:mod:`asz_core.looks`); None for another runtime's."""
    return look("codex.listing", p, _listing)


def _listing(p: Path) -> list[Any] | None:
    """``[kind, depth]``: depth 0 for a root thread, else its sub-agent depth (1 when
    unsaid), by which a parent is read before its sub-agents; None when not a Codex file."""
    obj = _first_obj(p)
    kind = _kind_of(obj, p.name)
    if kind is None:
        return None
    meta = _meta_of(obj)
    parent, _ = _parent_of(meta) if meta else (None, "")
    depth = (_depth_of(meta) or 1) if parent else 0
    return [kind, max(-_INT64, min(depth, _INT64))]  # (JSON's integers: an order no real depth reaches)


_INT64 = 2**63 - 1


def _kind_of(obj: dict[str, Any] | None, name: str) -> str | None:
    """``rollout``, ``exec`` or ``legacy`` when a file's first record ``obj`` is a Codex one."""
    if obj is None:
        return None
    typ = obj.get("type")
    if _among(typ, _ROLLOUT_TYPES) and isinstance(obj.get("payload"), dict):
        return "rollout"
    if typ == "thread.started" and isinstance(obj.get("thread_id"), str):
        return "exec"
    if isinstance(typ, str) and typ.startswith(("turn.", "item.")) and ("item" in obj or "usage" in obj or typ == "turn.started"):
        return "exec"
    if name.startswith("rollout-") and "type" not in obj and isinstance(obj.get("id"), str) and "timestamp" in obj:
        return "legacy"
    return None


def _find_rollout(near: Path, thread: str) -> Path | None:
    """The rollout file of ``thread``: beside ``near``, else under its sessions folder."""
    for cand in sorted(near.parent.glob(f"*{thread}.jsonl")):
        return cand
    for anc in list(near.parents)[:5]:
        if anc.name in ("sessions", "archived_sessions"):
            for cand in sorted(anc.rglob(f"rollout-*{thread}.jsonl")):
                return cand
    return None


def _notified_agent(text: str) -> str | None:
    """The child thread a ``<subagent_notification>`` reports on (its JSON body's ``agent_path``)."""
    body = text.strip().removeprefix("<subagent_notification>").rsplit("</subagent_notification>", 1)[0].strip()
    try:
        obj = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    path = obj.get("agent_path") if isinstance(obj, dict) else None
    return path if isinstance(path, str) and path else None
