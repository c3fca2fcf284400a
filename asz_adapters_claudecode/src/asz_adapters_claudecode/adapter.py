"""Claude Code transcripts (JSONL, versions 1.0.17 to 2.1.x) to asz entries and events.

The rules come from shared/spec/runtimes/claude-code.md; the section numbers below are its.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import orjson

from asz_core.interfaces import RuntimeAdapter
from asz_core.jsonl import read_objects, walk_jsonl as _walk_jsonl
from asz_core.looks import look
from asz_core.records import MAX_COUNT, SHAPE_ERRORS, Cursor, Entry, Problem, plainly_a_time, said_bad_values, str_id
from asz_core.regular import open_regular
from asz_core.textclip import clip_input, clip_text, kind_name

from .spool import is_spool_file, spool_dir

_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_INTERRUPTS = ("[Request interrupted by user]", "[Request interrupted by user for tool use]")
_EDIT_TOOLS = {"Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
# Types known to carry nothing a judge reads (§2). Anything else unknown gets a warning.
_QUIET = {"file-history-snapshot", "progress", "summary", "attachment", "custom-title"}
_KNOWN = _QUIET | {"user", "assistant", "system", "queue-operation"}
# Lines kept before the session id is known (a file may open with snapshots that carry none).
_SESSION_LOOKAHEAD = 200


class ClaudeCodeAdapter(RuntimeAdapter):
    """Reads ~/.claude/projects: a session file, a project folder, or the whole tree."""

    name: ClassVar[str] = "claudecode"

    # -- which files ----------------------------------------------------------------------
    def detect(self, path: Path) -> bool:
        if path.is_file():
            return path.suffix == ".jsonl" and (_head_is_claude(path) or _is_workflow_journal(path))
        if path.is_dir():
            for p in _walk_jsonl(path, limit=20):
                if _head_is_claude(p):
                    return True
        return False

    def files(self, path: Path) -> list[Path]:
        found = [path] if path.is_file() else list(_walk_jsonl(path))
        # Sub-agent files and workflow journals are read after every session file, so a session
        # (and the conversation it resumes) is known before the files that belong to it.
        mains = [p for p in found if not _is_side_file(p)]
        agents = [p for p in found if _is_side_file(p)]
        # A resumed session copies its origin's lines; reading sessions in the order they
        # ended makes the origin land first, so the resume continues its conversation.
        mains.sort(key=lambda p: (look("claudecode.last", p, _last_timestamp), str(p)))
        agents.sort(key=lambda p: str(p))
        return mains + agents

    def default_paths(self) -> list[Path]:
        """Where Claude Code keeps transcripts: CLAUDE_CONFIG_DIR's ``projects`` (several folders
        separated by commas, as ccusage reads it), else both ``~/.config/claude/projects`` (newer
        Claude Code, under XDG_CONFIG_HOME) and ``~/.claude/projects``."""
        config = os.environ.get("CLAUDE_CONFIG_DIR")
        if config:
            return [Path(c.strip()).expanduser() / "projects" for c in config.split(",") if c.strip()]
        xdg = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
        return [Path(xdg) / "claude" / "projects", Path.home() / ".claude" / "projects"]

    def companions(self) -> list[Path]:
        """The recorder plugin's spool (docs/recorder.md): change and execution records per tool call,
        read by every ``asz collect`` after the files it was given (an optional adapter method)."""
        d = spool_dir()
        return sorted(d.glob("*.jsonl")) if d.is_dir() else []

    def file_requests(self, tool: str, request: Mapping[str, Any]) -> list[str]:
        key = _EDIT_TOOLS.get(tool)
        value = request.get(key) if key else None
        return [value] if isinstance(value, str) and value else []

    # -- reading --------------------------------------------------------------------------
    def read(self, path: Path, cursor: Cursor) -> Iterator[Entry | Problem]:
        if is_spool_file(path):
            from .recorder import read_spool

            yield from read_spool(path, cursor)
            return
        fname = str(path)
        st = cursor.state
        if _is_workflow_journal(path):
            yield from _read_journal(path, cursor)
            return
        agent_file = _is_agent_file(path)
        if "session" not in st:
            st["session"] = _session_from_path(path)
        if agent_file and "stream" not in st:
            st["stream"] = path.stem  # agent-<id>, agent-acompact-<hex>
            run = _workflow_run(path)
            if run:
                st["group"] = run
        held: list[tuple[int, bytes, dict[str, Any]]] = []
        # Keys met in this file so far: those read now, and (when reading on from a cursor) all the
        # file held before it. A key met again is a line written twice (Entry.repeat).
        seen = _Seen(cursor.offset > 0)
        if st.get("skipped") or cursor.offset == 0:
            why = st.get("skipped") or _not_a_transcript(path)
            if why:
                # One warning for the whole file (not one per line), nothing stored from it; the
                # cursor moves past it so an unchanged file is not read (nor warned about) again.
                if not st.get("skipped"):
                    yield Problem(fname, 0 if why.startswith("empty") else 1, why)
                    if why.startswith("not readable"):
                        return  # try again next time
                    if not why.startswith("empty"):
                        st["skipped"] = why  # an empty file may still be written: read it when it grows
                if why.startswith("empty"):  # past its whole blank lines (at most 4 KiB), no further
                    with open_regular(path) as f:
                        head = f.read(4096)
                    blank = head[: len(head) - len(head.lstrip())]
                    blank = blank[: blank.rfind(b"\n") + 1]
                    cursor.offset, cursor.line = len(blank), blank.count(b"\n")
                else:
                    cursor.offset = _size(path)
                return
        # Each line's entry is made by plain calls that append to lists (its warnings to ``probs``,
        # its events to a list), not by nested generators: a generator per line and per event
        # kind was a third of reading's CPU. The items come out in the same order as before.
        probs: list[Problem] = []
        entry = self._entry
        for item in read_objects(path, cursor):
            if type(item) is not tuple:  # a Problem
                yield item
                continue
            if st["session"] is None:
                sid = item[2].get("sessionId")
                if isinstance(sid, str) and sid:
                    # A workflow agent's lines name "<session>#agent-<id>": the session is the part before.
                    st["session"] = sid.split("#agent-", 1)[0] or sid
                elif len(held) < _SESSION_LOOKAHEAD:
                    held.append(item)
                    continue
                else:
                    st["session"] = path.stem
            if held:
                yield from self._entries(fname, held, st, seen)
                held.clear()
            try:
                e = entry(fname, item[0], item[1], item[2], st, seen, probs)
            except BaseException:
                yield from probs  # what the line said before it failed, as when each was yielded at once
                raise
            if probs:
                yield from probs
                probs.clear()
            yield e
        if held:  # the file ended before naming its session: it is the file's own
            st["session"] = st["session"] or path.stem
            yield from self._entries(fname, held, st, seen)

    def _entries(self, fname: str, items: list[tuple[int, bytes, dict[str, Any]]], st: dict[str, Any],
                 seen: _Seen) -> Iterator[Entry | Problem]:
        """The entries (and warnings) of lines held until the session was known."""
        for lineno, body, obj in items:
            probs: list[Problem] = []
            try:
                e = self._entry(fname, lineno, body, obj, st, seen, probs)
            except BaseException:
                yield from probs
                raise
            yield from probs
            yield e

    @staticmethod
    def _said_bad_values(fname: str, lineno: int, obj: dict[str, Any], ts: Any, st: dict[str, Any],
                         probs: list[Problem]) -> None:
        """A token count or a timestamp that is there but no value (read as unknown, as the spec
        says): records.said_bad_values, once per kind and file. The counts are the message's usage
        (its cache_creation split too) and a sub-agent's usage in a Task result."""
        said = st.get("bad_values")
        if said is None:
            said = st["bad_values"] = []
        elif len(said) == 2:
            return  # both kinds said for this file: nothing left to look at
        msg = obj.get("message")
        usage = msg.get("usage") if type(msg) is dict else None
        tur = obj.get("toolUseResult")
        sub = tur.get("usage") if type(tur) is dict else None
        # Nearly every line: counts that are counts and a time in the usual form, known good at a
        # look (building the pairs and parsing the time for the one check was a fifth of reading).
        if (ts is None or plainly_a_time(ts)) and _counts_plain(usage) and _counts_plain(sub):
            return
        counts = _usage_counts("", usage)
        if sub is not None:
            counts += _usage_counts("toolUseResult.usage.", sub)
        found = said_bad_values(said, fname, lineno, counts, (("timestamp", ts),))
        if found:
            probs.extend(found)

    def _entry(self, fname: str, lineno: int, body: bytes, obj: dict[str, Any], st: dict[str, Any],
               seen: _Seen, probs: list[Problem]) -> Entry:
        """One line's entry; its warnings are appended to ``probs`` (they come before it)."""
        typ = obj.get("type")
        if isinstance(typ, str) and typ in _KNOWN:
            kind = typ  # kind_name of a known type is the type itself
        else:  # a list or an object is no type (and unhashable)
            # Newer Claude Code versions add entry types; one warning per type and file is enough
            # (the lines are kept whole, so a later asz can read them).
            kind = kind_name(typ)
            known = st.setdefault("unknown_types", [])
            if kind not in known:
                known.append(kind)
                probs.append(Problem(fname, lineno, f"unknown entry type {kind!r}; kept, no events (further lines of this type are not warned about)"))
        uuid = obj.get("uuid")
        if isinstance(uuid, str) and uuid:
            key = uuid
            if seen.all:
                repeat = True
            else:  # met before? (see _Seen)
                h, keys = hash(uuid), seen.keys
                repeat = h in keys
                if not repeat:
                    keys.add(h)
        else:
            key, repeat = "h:" + hashlib.blake2b(body, digest_size=12).hexdigest(), False
        if "stream" in st:
            stream = st["stream"]
        elif not obj.get("isSidechain"):
            stream = "main"
        else:
            stream = self._side_stream(obj, st)
        if typ == "assistant" and _unnamed_call(obj):
            probs.append(Problem(fname, lineno, "assistant line with usage but no message id; counted as a model call of its own (this line)"))
        try:
            events = tuple(self._events(typ, obj, st, stream))
        except SHAPE_ERRORS as exc:
            # A line of an unexpected shape is kept whole; it just says nothing to assembly.
            probs.append(Problem(fname, lineno, f"{typ} line of unexpected shape ({exc}); kept, no events"))
            events = ()
        cwd = obj.get("cwd")
        if stream == "main" and isinstance(cwd, str) and cwd and cwd != st.get("cwd"):
            st["cwd"] = cwd  # the working directory every line names: said once, and when it changes
            events = ({"e": "project", "path": cwd}, *events)
        ts = obj.get("timestamp")
        self._said_bad_values(fname, lineno, obj, ts, st, probs)
        # Positional, in Entry's field order (key, session, stream, kind, file, line, raw, events,
        # ts, versioned, repeat): matching eleven keywords took as long as the rest of making it.
        return Entry(key, st["session"], stream, kind, fname, lineno, body, events, ts if isinstance(ts, str) else None,
                     False, repeat)

    def _side_stream(self, obj: dict[str, Any], st: dict[str, Any]) -> str:
        """The stream of a sidechain line in a session file."""
        agent = obj.get("agentId")
        if isinstance(agent, str) and agent:
            return f"agent-{agent}"
        # Inline sidechain (<= 2.0.27): a contiguous block opened by a root user line (§5b), each
        # later line pointing (parentUuid) at a line before it in the block. A line that points at
        # none of them (a block whose opening line is missing) opens a block of its own, which the
        # lines pointing at it then join: one response is never split across streams.
        uuid, parent = obj.get("uuid"), obj.get("parentUuid")
        block = st.get("side_uuids") or []
        opener = parent is None and obj.get("type") == "user"
        if opener or not st.get("side") or parent not in block:
            st["side"] = f"side-{uuid}"
            st["side_new"] = st["side"]
            block = st["side_uuids"] = []
        if isinstance(uuid, str) and uuid:
            block.append(uuid)
        return st["side"]

    # -- events ---------------------------------------------------------------------------
    # Each kind's method appends the line's events to ``out`` (one list, no generator per kind).
    def _events(self, typ: Any, obj: dict[str, Any], st: dict[str, Any], stream: str) -> Sequence[dict[str, Any]]:
        if typ == "progress":
            # Nearly half of all lines: most are hook and bash progress, which say nothing here.
            data = obj.get("data") or {}
            if data.get("type") == "agent_progress":
                agent, tool = data.get("agentId"), obj.get("parentToolUseID")
                if isinstance(agent, str) and agent and isinstance(tool, str) and tool:
                    return ({"e": "starts", "id": tool, "stream": f"agent-{agent}"},)
            return ()
        out: list[dict[str, Any]] = []
        if typ == "user":
            self._user(obj, st, stream, out)
        elif typ == "assistant":
            self._assistant(obj, st, stream, out)
        elif typ == "system":
            self._system(obj, out)
        elif typ == "queue-operation":
            content = obj.get("content")
            if obj.get("operation") == "enqueue" and isinstance(content, str) and content.strip():
                if content.lstrip().startswith("<task-notification>"):
                    out.append(_task_notification(content))
                elif not content.lstrip().startswith("/"):
                    # Typed while the agent worked (§5d). A queued slash command shows up
                    # later as the usual command lines, which are the input.
                    out.append({"e": "input", "source": "queued", **clip_text(content)})
        return out

    def _first_in_stream(self, st: dict[str, Any], stream: str) -> bool:
        if stream == "main":
            return False
        if "stream" in st:  # an agent file: its first user or assistant line opens it
            if st.get("opened"):
                return False
            st["opened"] = True
            return True
        if st.get("side_new") == stream:
            del st["side_new"]
            return True
        return False

    def _user(self, obj: dict[str, Any], st: dict[str, Any], stream: str, out: list[dict[str, Any]]) -> None:
        msg = obj.get("message") or {}
        content = msg.get("content")
        first = stream != "main" and self._first_in_stream(st, stream)
        blocks = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"] if isinstance(content, list) else []
        if first:
            text = _text_of(content)
            ev: dict[str, Any] = {"e": "stream", "kind": _stream_kind(stream, text), "by": []}
            if st.get("group"):
                ev["group"] = st["group"]
            if stream.startswith("side-") and obj.get("parentUuid") is None:
                ev["by"] = list(st.get("tasks", {}).get(text, []))
                st.setdefault("side_by", {})[stream] = ev["by"]
            # No ``after``: the only first lines with a parent are agent-acompact's (§8), and that
            # parent is the tool result a hook reminder hung on (or the last line before the
            # compaction), not a step that started the compaction; no step can be shown to.
            out.append(ev)
            if not obj.get("isMeta") and not blocks:
                out.append({"e": "input", "source": "agent", **clip_text(text)})
                return
        if obj.get("isCompactSummary"):
            out.append({"e": "summary", **clip_text(_text_of(content))})
            return
        if blocks:
            tur = obj.get("toolUseResult")
            tur_dict = isinstance(tur, dict)
            # Some versions write the Task result's agentId at the top of the line, not inside
            # toolUseResult (inside a sub-agent's own file the top-level agentId is its own).
            top = obj.get("agentId")
            top = f"agent-{top}" if isinstance(top, str) and top and f"agent-{top}" != stream else None
            # The Tasks still waiting, before this line's results: only asked when ``top`` is set.
            pending = {t for ids in st.get("tasks", {}).values() for t in ids} if top else ()
            for b in blocks:
                tid = str_id(b.get("tool_use_id"))
                ev = {"e": "tool_result", "id": tid, "error": bool(b.get("is_error")), **clip_text(_text_of(b.get("content")))}
                side = _returned(st, tid) if "tasks" in st or "side_by" in st else None  # (no Task yet: nothing to return)
                agent = tur.get("agentId") if tur_dict else None
                if isinstance(agent, str) and agent:
                    ev["starts"] = f"agent-{agent}"
                elif tur_dict and ("runId" in tur or "transcriptDir" in tur) and _workflow_of(tur):
                    ev["starts"] = _workflow_of(tur)  # the run whose agents this Workflow call started
                elif side:
                    ev["starts"] = side  # the inline block this Task alone was linked to
                elif top and (len(blocks) == 1 or tid in pending):
                    ev["starts"] = top
                if "starts" in ev and tur_dict:
                    if tur.get("isAsync") is True or tur.get("status") == "async_launched":
                        ev["launch"] = True  # a background agent (or workflow): it reports by a <task-notification>
                    if isinstance(tur.get("usage"), dict):
                        ev["agent_usage"] = _usage(tur["usage"])
                if isinstance(tur, str) and tur.startswith("Error"):
                    ev["error"] = True
                out.append(ev)
            return
        text = _text_of(content)
        stripped = text.strip()
        if obj.get("isMeta"):
            kind = "skill" if obj.get("sourceToolUseID") else ("hook" if stripped.startswith("<system-reminder>") else "meta")
            out.append({"e": "notice", "kind": kind, **clip_text(text)})
        elif stripped in _INTERRUPTS:
            out.append({"e": "notice", "kind": "interrupt", **clip_text(text)})
        elif stripped.startswith("<task-notification>"):
            out.append(_task_notification(text))
        elif stripped.startswith(("<local-command-stdout>", "<local-command-stderr>")):
            out.append({"e": "notice", "kind": "command_output", **clip_text(text)})
        elif _is_command(stripped):
            out.append({"e": "input", "source": "command", **clip_text(_command_text(stripped))})
        elif stripped.startswith("<system-reminder>") or stripped.startswith("<user-prompt-submit-hook>"):
            out.append({"e": "notice", "kind": "hook", **clip_text(text)})
        elif not stripped and not _has_media(content):
            out.append({"e": "notice", "kind": "meta", **clip_text(text)})
        elif stream != "main":
            # A later text line inside a sub-agent: the parent re-prompting, never the person.
            out.append({"e": "input", "source": "agent", **clip_text(text)})
        else:
            out.append({"e": "input", "source": "person", **clip_text(text)})

    def _assistant(self, obj: dict[str, Any], st: dict[str, Any], stream: str, out: list[dict[str, Any]]) -> None:
        msg = obj.get("message") or {}
        content = msg.get("content")
        blocks = content if isinstance(content, list) else ([{"type": "text", "text": content}] if isinstance(content, str) else [])
        if stream != "main" and self._first_in_stream(st, stream):
            # A sub-agent file whose first written line is the model's (rare): still its start.
            ev: dict[str, Any] = {"e": "stream", "kind": _stream_kind(stream, ""), "by": []}
            if st.get("group"):
                ev["group"] = st["group"]
            out.append(ev)
        model = msg.get("model")
        mid, request = msg.get("id"), obj.get("requestId")
        if not (isinstance(mid, str) and mid):  # str_id, written out (as below)
            mid = None
        if not (isinstance(request, str) and request):
            request = None
        if model == "<synthetic>" or not (mid or _unnamed_call(obj)):
            # Not an API call (§9.5): an API error, a rate limit, "No response requested."
            text = "".join(b.get("text", "") for b in blocks if isinstance(b, dict))
            kind = "api_error" if (obj.get("isApiErrorMessage") or text.startswith("API Error")) else "synthetic"
            out.append({"e": "notice", "kind": kind, **clip_text(text)})
            return
        usage = msg.get("usage")
        used = isinstance(usage, dict)
        ev = {"e": "call", "id": "", "model": model if isinstance(model, str) else None,
              "usage": _usage(usage) if used else None,
              "final": used and "iterations" in usage or bool(msg.get("stop_reason"))}
        if mid and request:
            # The provider's own ids: the same response wherever it was copied, in any conversation.
            call = ev["id"] = f"{mid}:{request}"
            ev["response"], ev["global"] = mid, True
        elif mid:
            # No request id (a gateway answering every response with one id): scoped to its session.
            call = ev["id"] = f"{mid}@{st['session']}"
            ev["response"] = mid
        else:
            # Usage but no id at all: a call whose identity is its line (its uuid; else its content).
            uuid = obj.get("uuid")
            call = ev["id"] = f"line:{uuid}" if isinstance(uuid, str) and uuid else \
                "line:h:" + hashlib.blake2b(json.dumps(obj, sort_keys=True, default=str).encode(), digest_size=12).hexdigest()
        out.append(ev)
        for b in blocks:
            if not isinstance(b, dict):
                continue
            t = b.get("type")
            if t == "tool_use" or t == "server_tool_use":
                name, inp = b.get("name"), b.get("input")
                if not isinstance(inp, dict):
                    inp = {}
                tid = str_id(b.get("id"))
                if (name == "Task" or name == "Agent") and isinstance(inp.get("prompt"), str) and tid:
                    st.setdefault("tasks", {}).setdefault(inp["prompt"], []).append(tid)
                out.append({"e": "tool_use", "call": call, "id": tid, "name": name if isinstance(name, str) else None,
                            "input": clip_input(inp)})
            elif t == "text":
                text = b.get("text")
                if isinstance(text, str) and text and not text.isspace():  # text.strip(), without copying the text
                    out.append({"e": "text", "call": call, **clip_text(text)})
            elif t == "thinking":
                out.append({"e": "thinking", "call": call, **clip_text(b.get("thinking") or "")})

    def _system(self, obj: dict[str, Any], out: list[dict[str, Any]]) -> None:
        sub = obj.get("subtype")
        content = obj.get("content") if isinstance(obj.get("content"), str) else ""
        if sub == "local_command":
            stripped = content.strip()
            if _is_command(stripped):
                out.append({"e": "input", "source": "command", **clip_text(_command_text(stripped))})
            else:
                out.append({"e": "notice", "kind": "command_output", **clip_text(content)})
        elif sub == "api_error":
            err = obj.get("error")
            text = content or (orjson.dumps(err).decode() if err is not None else "api_error")
            out.append({"e": "notice", "kind": "api_error", **clip_text(text)})
        elif sub == "compact_boundary":
            out.append({"e": "notice", "kind": "compact_boundary", **clip_text(content or "Conversation compacted")})
        elif sub == "turn_duration":
            out.append({"e": "turn_end"})


# --- helpers ------------------------------------------------------------------------------

class _Seen:
    """The uuids one read of a file has met (their hashes: a 90 MB file holds 80,000). Reading on
    from a cursor, the file's earlier lines are still in it, so any uuid may already be there:
    every one counts as met. (ClaudeCodeAdapter._entry asks and adds, written out: asked of nearly
    every line, a method call was a cost of its own.)"""

    __slots__ = ("keys", "all")

    def __init__(self, all_met: bool) -> None:
        self.keys: set[int] = set()
        self.all = all_met


def _unnamed_call(obj: dict[str, Any]) -> bool:
    """An assistant line with usage but no message id, not a <synthetic> notice: a call all the same."""
    msg = obj.get("message")
    if not isinstance(msg, dict):
        return False
    mid = msg.get("id")
    if isinstance(mid, str) and mid:  # str_id, written out: most assistant lines name their id, asked of every one
        return False
    return isinstance(msg.get("usage"), dict) and msg.get("model") != "<synthetic>"


def _stream_kind(stream: str, first_text: str) -> str:
    """helper: compaction, warm-up and /btw side questions (no Task started them); child: a sub-agent."""
    if first_text.strip() == "Warmup" or stream.startswith(("agent-acompact", "agent-aside_question")):
        return "helper"
    return "child"


def _workflow_of(tur: dict[str, Any]) -> str | None:
    """The workflow run a Workflow tool result launched (its ``runId``, or the run folder its
    ``transcriptDir`` names), as the group its agents' streams declare."""
    run = tur.get("runId")
    if not (isinstance(run, str) and run):
        folder = tur.get("transcriptDir")
        run = Path(folder.rstrip("/\\")).name if isinstance(folder, str) and folder.strip("/\\") else None
    return f"workflow:{run}" if run else None


def _returned(st: dict[str, Any], tid: str | None) -> str | None:
    """A Task's result arrived: it no longer waits for an inline block (its block, if any, was
    written before the result, §5b). Returns the inline stream linked to this Task alone."""
    if not tid:
        return None
    for prompt, ids in list(st.get("tasks", {}).items()):
        if tid in ids:
            ids.remove(tid)
            if not ids:
                del st["tasks"][prompt]
    for key, ids in list(st.get("side_by", {}).items()):
        if tid in ids:
            del st["side_by"][key]
            return key if ids == [tid] else None
    return None


def _size(p: Path) -> int:
    try:
        return p.stat().st_size
    except OSError:
        return 0


def _not_a_transcript(p: Path) -> str | None:
    """Why a whole file is not read (empty, binary, not Claude Code), or None to read it."""
    try:
        with open_regular(p) as f:
            head = f.read(4096)
    except OSError as exc:
        return f"not readable ({exc}); file skipped"
    if not head.strip():
        return "empty file; nothing to read" if _size(p) <= len(head) else None
    if _looks_like_claude(p):
        return None
    try:
        head.decode("utf-8")
        binary = b"\x00" in head
    except UnicodeDecodeError as exc:
        binary = exc.start < len(head) - 3  # not just a character cut at the 4 KiB edge
    if binary:
        return "binary data, not a Claude Code transcript; file skipped"
    if b"\n" not in head:
        return None  # one line still being written: judge it when whole (read warns it truncated)
    return "not a Claude Code transcript (no Claude Code fields in its first 4 KiB); file skipped"


def _usage(u: dict[str, Any]) -> dict[str, Any]:
    g = u.get
    cc = g("cache_creation")
    c5, c1 = (cc.get("ephemeral_5m_input_tokens"), cc.get("ephemeral_1h_input_tokens")) if isinstance(cc, dict) else (None, None)
    i, o, r, w = g("input_tokens"), g("output_tokens"), g("cache_read_input_tokens"), g("cache_creation_input_tokens")
    # Each count as recorded, for Usage to judge (a negative one is unknown there); a list, an
    # object or a bool is no count and is not carried into the events. By exact type, with no
    # call per count (those were a third of this): JSON decodes numbers to int and float only.
    return {
        "input": i if type(i) in _NUMBERS else None,
        "output": o if type(o) in _NUMBERS else None,
        "cache_read": r if type(r) in _NUMBERS else None,
        "cache_write": w if type(w) in _NUMBERS else None,
        "cache_write_5m": c5 if type(c5) in _NUMBERS else None,
        "cache_write_1h": c1 if type(c1) in _NUMBERS else None,
    }


_NUMBERS = frozenset((int, float))


def _counts_plain(u: Any) -> bool:
    """Whether a usage object (or None, or no object) holds no token count that is no count: each
    ``*_tokens`` value, its ``cache_creation`` split's too, an int in range. True only where
    :func:`_usage_counts` gives nothing :func:`asz_core.records.count` refuses."""
    if type(u) is not dict:
        return True
    for k, v in u.items():
        if type(v) is int:
            if v < 0 or v > MAX_COUNT:
                return False
        elif k == "cache_creation":
            if not _counts_plain(v):
                return False
        elif k.endswith("_tokens") and v is not None:
            return False
    return True


def _usage_counts(prefix: str, u: Any) -> list[tuple[str, Any]]:
    """The token counts of a usage object as (field, value) pairs: its ``*_tokens`` and those of
    its ``cache_creation`` split (what ``_usage`` reads, and any count a later version adds)."""
    if type(u) is not dict:
        return []
    out = [(prefix + k, v) for k, v in u.items() if k.endswith("_tokens")]
    cc = u.get("cache_creation")
    if type(cc) is dict:
        out += [(f"{prefix}cache_creation.{k}", v) for k, v in cc.items() if k.endswith("_tokens")]
    return out


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for b in content:
            if isinstance(b, dict):
                if b.get("type") == "text" and isinstance(b.get("text"), str):
                    parts.append(b["text"])
                elif b.get("type") in ("image", "document"):
                    parts.append(f"[{b['type']}]")
            elif isinstance(b, str):
                parts.append(b)
        return "\n".join(parts)
    return ""


def _has_media(content: Any) -> bool:
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") in ("image", "document") for b in content)


def _is_command(text: str) -> bool:
    return text.startswith("<command-name>") or (text.startswith("<command-message>") and "<command-name>" in text)


def _command_text(text: str) -> str:
    name = re.search(r"<command-name>(.*?)</command-name>", text, re.S)
    args = re.search(r"<command-args>(.*?)</command-args>", text, re.S)
    out = (name.group(1).strip() if name else text)
    if args and args.group(1).strip():
        out += " " + args.group(1).strip()
    return out


def _is_agent_file(p: Path) -> bool:
    return p.name.startswith("agent-")


def _workflow_run(p: Path) -> str | None:
    """``workflow:<run>`` for a file in ``<session>/subagents/workflows/<run>/``."""
    if p.parent.parent.name == "workflows" and p.parent.parent.parent.name == "subagents":
        return f"workflow:{p.parent.name}"
    return None


def _is_workflow_journal(p: Path) -> bool:
    return p.name == "journal.jsonl" and _workflow_run(p) is not None


def _is_side_file(p: Path) -> bool:
    return _is_agent_file(p) or _is_workflow_journal(p)


def _read_journal(path: Path, cursor: Cursor) -> Iterator[Entry | Problem]:
    """A workflow run's journal (``launched``, ``started`` and ``result`` lines, no ids, no
    times): kept whole in the session's conversation. It joins nothing: the run's agent files lie
    beside it, and the parent's Workflow result names the run."""
    st = cursor.state
    if "session" not in st:
        st["session"] = _session_from_path(path)
    if st["session"] is None:
        if cursor.offset == 0:
            yield Problem(str(path), 0, "workflow journal outside a session's folder (nothing names its conversation); file skipped")
        cursor.offset = _size(path)
        return
    run = _workflow_run(path) or ""
    for item in read_objects(path, cursor):
        if isinstance(item, Problem):
            yield item
            continue
        lineno, body, obj = item
        # Journal lines repeat across runs ({"type":"launched"}): the key holds session and run.
        key = "wf:" + hashlib.blake2b(f"{st['session']}/{run}\n".encode() + body, digest_size=12).hexdigest()
        typ = obj.get("type")
        yield Entry(key=key, session=st["session"], stream="main", kind=f"workflow-journal/{typ if isinstance(typ, str) else '?'}",
                    file=str(path), line=lineno, raw=body)


def _session_from_path(p: Path) -> str | None:
    if p.parent.name == "subagents" and _UUID.match(p.parent.parent.name):
        return p.parent.parent.name
    if _workflow_run(p) and _UUID.match(p.parent.parent.parent.parent.name):
        return p.parent.parent.parent.parent.name
    if not _is_agent_file(p) and _UUID.match(p.stem):
        return p.stem
    return None  # agent-*.jsonl next to sessions, or a file not named by its session


def _head_is_claude(p: Path) -> bool:
    """:func:`_looks_like_claude`, kept for a collect while the file is the same (:mod:`asz_core.looks`)."""
    return look("claudecode.head", p, _looks_like_claude)


def _looks_like_claude(p: Path) -> bool:
    try:
        with open_regular(p) as f:
            head = f.read(4096)
    except OSError:
        return False
    return (b'"sessionId"' in head or b'"type":"summary"' in head or b'"leafUuid"' in head
            or b'"type":"file-history-snapshot"' in head or b'"parentUuid"' in head)


def _last_timestamp(p: Path) -> str:
    """The newest timestamp near a file's end, read backwards 16 KiB at a time (at most 256 KiB):
    cheap, since collect asks it of every session file that is new or changed (the others' is kept)."""
    try:
        with open_regular(p) as f:
            end = f.seek(0, os.SEEK_END)
            pos, tail = end, b""
            while pos > 0 and end - pos < 262144:
                step = min(16384, pos)
                pos -= step
                f.seek(pos)
                tail = f.read(step) + tail
                stamps = re.findall(rb'"timestamp":"([^"]+)"', tail)
                if stamps:
                    return max(stamps).decode()
    except OSError:
        pass
    return ""


_TASK_ID = re.compile(r"<task-id>\s*([A-Za-z0-9_-]+)\s*</task-id>")


def _task_notification(text: str) -> dict[str, Any]:
    """A ``<task-notification>`` notice, with the agent stream whose end it reports (its
    ``<task-id>``, read as ``agent-<id>``; a background command's id names no stream)."""
    ev: dict[str, Any] = {"e": "notice", "kind": "task_notification", **clip_text(text)}
    m = _TASK_ID.search(text[:4000])
    if m:
        ev["ended"] = f"agent-{m.group(1)}"
    return ev
