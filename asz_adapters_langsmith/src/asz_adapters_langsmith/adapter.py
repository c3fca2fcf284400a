"""LangSmith / LangChain run trees to asz entries and events.

What is read, and why, is in docs/runtimes/langsmith.md; the evidence is
shared/spec/runtimes/kiro-codex-langsmith.md §3 and §4.4. In short:

* A file holds runs in one of the shapes LangSmith data takes on disk: SDK ingest payloads
  ``{"post": [...], "patch": [...]}``, a JSON array or JSONL of exported runs, an API answer
  ``{"runs": [...]}``, one run, runs nested in ``child_runs``, or a UI "copy run" object.
* One record (Entry) per run, keyed by the run id (from the tail of ``dotted_order`` when a JS
  update carries none); a run's create and updates are merged into one record, versioned (a
  run that gains outputs later lands as a new version). Records land in ``dotted_order``.
* A trace is a conversation (session = trace_id). ``llm`` runs are model calls and the only
  runs whose usage counts; ``tool`` runs are tool steps; nested agent chains are child streams.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar

import orjson

from asz_core.interfaces import RuntimeAdapter
from asz_core.jsonl import loads_line, mend, mended_document
from asz_core.looks import is_regular, look, walk
from asz_core.records import SHAPE_ERRORS, Cursor, Entry, Problem, count, said_bad_values
from asz_core.regular import open_regular, read_regular
from asz_core.textclip import clip_input, clip_text

SUFFIXES = (".json", ".jsonl", ".ndjson")
_HEAD_BYTES = 65536
_DETECT_FILES = 50

# Keys as keys, never inside a JSON string (there the quote is escaped): a Claude Code or Kiro
# transcript that talks about LangSmith does not look like a LangSmith export.
_RUN_TYPE_KEY = re.compile(rb'(?<!\\)"run_type"\s*:')
_TREE_KEY = re.compile(rb'(?<!\\)"(?:dotted_order|trace_id|parent_run_id)"\s*:')
_COPY_KEYS = (re.compile(rb'(?<!\\)"tracing_project"\s*:'), re.compile(rb'(?<!\\)"inputs"\s*:'))
_CODEX_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
_FOREIGN = (
    re.compile(rb'(?<!\\)"sessionId"\s*:'),  # Claude Code lines
    re.compile(rb'(?<!\\)"type"\s*:\s*"(?:session_meta|response_item|event_msg|turn_context)"'),  # Codex rollouts
    re.compile(rb'(?<!\\)"(?:valid_history_range|latest_summary)"\s*:'),  # Kiro / Q CLI saves
)

# Tools that edit files, by name, and where their request names the file (spec §3.2 "File edits").
_EDIT_TOOLS = {
    "Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path",  # claude-code
    "write_file": "file_path", "edit_file": "file_path",  # deepagents(-code)
}
_PATCH_PATH = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.M)

_ROLE = {
    "human": "human", "user": "human", "humanmessage": "human", "humanmessagechunk": "human",
    "ai": "ai", "assistant": "ai", "aimessage": "ai", "aimessagechunk": "ai", "model": "ai",
    "tool": "tool", "function": "tool", "toolmessage": "tool", "toolmessagechunk": "tool", "functionmessage": "tool",
    "system": "system", "developer": "system", "systemmessage": "system", "systemmessagechunk": "system",
}
# Where a run's inputs hold a prompt when they hold no messages, most telling first.
_PROMPT_KEYS = ("prompt", "input", "task", "query", "question", "description", "text", "message", "content")


class LangSmithAdapter(RuntimeAdapter):
    """Reads LangSmith run exports: a file, or every export file under a folder."""

    name: ClassVar[str] = "langsmith"

    # -- which files ----------------------------------------------------------------------
    def detect(self, path: Path) -> bool:
        if path.is_file():
            return _head_is_langsmith(path)
        if path.is_dir():
            return any(_head_is_langsmith(p) for p in _walk(path, limit=_DETECT_FILES))
        return False

    def files(self, path: Path) -> list[Path]:
        if path.is_file():
            return [path]
        # A FIFO or a device is listed without a look inside, so collect says it skipped it.
        return [Path(p) for p in _walk(path) if not is_regular(p) or _head_is_langsmith(p)]

    def file_requests(self, tool: str, request: Mapping[str, Any]) -> list[str]:
        if not isinstance(request, Mapping):
            return []
        inner = request.get("input")
        if len(request) == 1 and isinstance(inner, Mapping):
            request = inner  # plugins wrap tool args as {"input": args}
        key = _EDIT_TOOLS.get(tool)
        if key:
            value = request.get(key)
            return [value] if isinstance(value, str) and value else []
        if tool == "apply_patch":
            out: list[str] = []
            for s in _strings(request):
                for m in _PATCH_PATH.finditer(s):
                    p = m.group(1) or m.group(2)
                    if p and p not in out:
                        out.append(p)
            return out
        return []

    # -- reading --------------------------------------------------------------------------
    def read(self, path: Path, cursor: Cursor) -> Iterator[Entry | Problem]:
        """Read the whole file: a run's update may come long after its create, so a grown file is
        read again from its start (records already stored are not stored twice; a run that
        changed lands as a new version)."""
        fname = str(path)
        try:
            data = read_regular(path)
        except OSError as exc:
            yield Problem(fname, 0, f"cannot read ({exc}); file skipped")
            return
        parts, problems, consumed, lines = parse(fname, data)
        yield from problems
        said = cursor.state.get("bad_values")
        if not isinstance(said, list):
            said = cursor.state["bad_values"] = []  # kept: a file read again whole does not say them twice
        yield from entries_from_parts(parts, fname, said)
        cursor.offset, cursor.line = consumed, lines


# --- parsing files into parts ---------------------------------------------------------------

class Part:
    """One run object as found in a file: a create (``post``), an update (``patch``), a whole
    exported run (``run``) or a UI copy (``copy``), with the line it starts on."""

    __slots__ = ("line", "kind", "obj", "where")

    def __init__(self, line: int, kind: str, obj: dict[str, Any], where: str) -> None:
        self.line, self.kind, self.obj, self.where = line, kind, obj, where


def parse(fname: str, data: bytes) -> tuple[list[Part], list[Problem], int, int]:
    """Parts of a file, problems, bytes consumed (a JSONL line still being written is left) and lines.
    A lone surrogate escape (a string cut mid-pair) is read as U+FFFD, said once for the file:
    a JSONL line by :func:`asz_core.jsonl.loads_line`, a whole document before it is parsed
    (:func:`asz_core.jsonl.mend`: its parser would keep the lone half, which no record can be
    stored with)."""
    text = data.decode("utf-8", "replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    i = _ws(text, 0)
    if i >= len(text):
        return [], [], len(data), text.count("\n")
    if text[i] == "[" or (text[i] == "{" and not _first_line_is_json(text, i)):
        data, found, at = mend(data)
        mended = [Problem(fname, data.count(b"\n", 0, at) + 1, mended_document(found))] if found else []
        if found:
            text = data.decode("utf-8", "replace").removeprefix("\ufeff")
        parts, problems = _parse_document(fname, text, i)
        return parts, mended + problems, len(data), text.count("\n") + (0 if text.endswith("\n") else 1)
    return _parse_lines(fname, data)


def _first_line_is_json(text: str, i: int) -> bool:
    end = text.find("\n", i)
    line = text[i:] if end < 0 else text[i:end]
    try:
        return isinstance(loads_line(line.encode("utf-8", "surrogatepass"))[0], dict)
    except orjson.JSONDecodeError:
        return False


def _parse_lines(fname: str, data: bytes) -> tuple[list[Part], list[Problem], int, int]:
    parts: list[Part] = []
    problems: list[Problem] = []
    offset = lineno = consumed = done_lines = 0
    mended_said = False
    for raw in data.splitlines(keepends=True):
        lineno += 1
        complete = raw.endswith(b"\n")
        offset += len(raw)
        body = raw.strip()
        if body:
            try:
                obj, _, mended = loads_line(body)
            except orjson.JSONDecodeError as exc:
                if not complete:
                    problems.append(Problem(fname, lineno, f"truncated last line ({len(raw)} bytes), left for the next collect"))
                    break
                problems.append(Problem(fname, lineno, f"not JSON ({exc}); line skipped"))
                consumed, done_lines = offset, lineno
                continue
            if mended is not None and not mended_said:
                mended_said = True
                problems.append(Problem(fname, lineno, mended + "; the line is kept (and any later such line of this file)"))
            _collect_parts(obj, lineno, f"line {lineno}", fname, parts, problems)
        consumed, done_lines = offset, lineno
    return parts, problems, consumed, done_lines


def _number(text: str) -> int | float:
    # As orjson reads an integer: past 64 bits it is a float (so a run can be written back as
    # JSON, and such a count is no count).
    v = int(text)
    return v if -(2**63) <= v < 2**64 else float(v)


_DEC = json.JSONDecoder(parse_int=_number)
_LIST_DEPTH = 16  # runs are found in lists of lists this deep at most (exports nest one or two)
_WS = re.compile(r"[ \t\n\r]*")
_CONTAINERS = ("post", "patch", "runs")


def _ws(text: str, i: int) -> int:
    return _WS.match(text, i).end()  # type: ignore[union-attr]


def _parse_document(fname: str, text: str, i: int) -> tuple[list[Part], list[Problem]]:
    """One JSON document, scanned element by element so each run knows its line and a syntax
    error loses only what follows it."""
    nl = [m.start() for m in re.finditer("\n", text)]

    def line_of(off: int) -> int:
        return bisect_left(nl, off) + 1

    parts: list[Part] = []
    problems: list[Problem] = []
    try:
        if text[i] == "[":
            elems: list[tuple[int, Any]] = []
            try:
                end = _scan_array(text, i, elems)
            finally:
                for n, (off, val) in enumerate(elems):
                    _collect_parts(val, line_of(off), f"item {n + 1}", fname, parts, problems, kind="run")
        else:
            members: dict[str, Any] = {}
            arrays: dict[str, list[tuple[int, Any]]] = {}
            try:
                end = _scan_object(text, i, members, arrays)
            finally:
                if arrays:
                    for key in _CONTAINERS:
                        for n, (off, val) in enumerate(arrays.get(key, ())):
                            kind = {"runs": "run"}.get(key, key)
                            _collect_parts(val, line_of(off), f"{key}[{n}]", fname, parts, problems, kind=kind, container=True)
            if not arrays:
                _collect_parts(members, line_of(i), "document", fname, parts, problems)
        rest = _ws(text, end)
        if rest < len(text):
            problems.append(Problem(fname, line_of(rest), "text after the JSON document; ignored"))
    except json.JSONDecodeError as exc:
        problems.append(Problem(fname, exc.lineno, f"not valid JSON ({exc.msg}, column {exc.colno}); what came before it was read, the rest is skipped"))
    return parts, problems


def _expect(text: str, i: int, chars: str) -> str:
    if i >= len(text):
        raise json.JSONDecodeError("unexpected end of document", text, len(text))
    if text[i] not in chars:
        raise json.JSONDecodeError(f"expecting one of {chars!r}", text, i)
    return text[i]


def _decode(text: str, i: int) -> tuple[Any, int]:
    try:
        return _DEC.raw_decode(text, i)
    except RecursionError:  # nested deeper than the parser's stack goes: a syntax error here
        raise json.JSONDecodeError("nested too deeply", text, i) from None


def _scan_array(text: str, i: int, out: list[tuple[int, Any]]) -> int:
    i = _ws(text, i + 1)
    if _expect(text, i, "]\"{[-0123456789tfn") == "]":
        return i + 1
    while True:
        i = _ws(text, i)
        val, end = _decode(text, i)
        out.append((i, val))
        i = _ws(text, end)
        if _expect(text, i, ",]") == "]":
            return i + 1
        i += 1


def _scan_object(text: str, i: int, members: dict[str, Any], arrays: dict[str, list[tuple[int, Any]]]) -> int:
    i = _ws(text, i + 1)
    if _expect(text, i, "}\"") == "}":
        return i + 1
    while True:
        i = _ws(text, i)
        _expect(text, i, '"')
        key, i = _DEC.raw_decode(text, i)
        i = _ws(text, i)
        _expect(text, i, ":")
        i = _ws(text, i + 1)
        if key in _CONTAINERS and i < len(text) and text[i] == "[":
            elems: list[tuple[int, Any]] = []
            arrays[key] = elems
            i = _scan_array(text, i, elems)
            members[key] = [v for _, v in elems]
        else:
            members[key], i = _decode(text, i)
        i = _ws(text, i)
        if _expect(text, i, ",}") == "}":
            return i + 1
        i += 1


def _collect_parts(obj: Any, line: int, where: str, fname: str, parts: list[Part], problems: list[Problem],
                   kind: str | None = None, container: bool = False, depth: int = 0) -> None:
    """Turn one JSON value into parts: a run, a batch of runs, or a list of either."""
    if isinstance(obj, list):
        if depth >= _LIST_DEPTH:
            problems.append(Problem(fname, line, f"{where}: lists nested {_LIST_DEPTH} deep, not runs; skipped"))
            return
        for n, v in enumerate(obj):
            _collect_parts(v, line, f"{where}[{n}]", fname, parts, problems, kind, depth=depth + 1)
        return
    if not isinstance(obj, dict):
        problems.append(Problem(fname, line, f"{where}: a {type(obj).__name__}, not a run; skipped"))
        return
    if not container and any(isinstance(obj.get(k), list) for k in _CONTAINERS) and not _is_run(obj):
        for key in _CONTAINERS:
            for n, v in enumerate(obj.get(key) or ()):
                _collect_parts(v, line, f"{where}: {key}[{n}]", fname, parts, problems,
                               {"runs": "run"}.get(key, key), container=True)
        return
    if container and kind == "patch":
        parts.append(Part(line, "patch", obj, where))
    elif _is_run(obj) or (container and kind == "post"):
        parts.append(Part(line, kind if kind in ("post", "run") else "run", obj, where))
    elif _is_copy(obj):
        parts.append(Part(line, "copy", obj, where))
    else:
        keys = ", ".join(list(obj)[:6])
        problems.append(Problem(fname, line, f"{where}: not a LangSmith run (keys: {keys}); skipped"))


def _is_run(obj: dict[str, Any]) -> bool:
    if "run_type" in obj or "dotted_order" in obj:
        return True
    return "trace_id" in obj and ("id" in obj or "parent_run_id" in obj)


def _is_copy(obj: dict[str, Any]) -> bool:
    # The UI's "copy run": {inputs, outputs, metadata, langsmith: {organization, workspace, tracing_project}}.
    return "inputs" in obj and ("langsmith" in obj or "metadata" in obj) and "id" not in obj


# --- runs to entries --------------------------------------------------------------------------

class _Run:
    __slots__ = ("id", "data", "line", "created", "parent", "trace", "order", "stream", "opens", "by", "kind_of_stream")

    def __init__(self, rid: str, line: int) -> None:
        self.id, self.line = rid, line
        self.data: dict[str, Any] = {}
        self.created = False
        self.parent: str | None = None
        self.trace: str = rid
        self.order = ""
        self.stream = "main"
        self.opens = False
        self.by: list[str] = []
        self.kind_of_stream = "child"

    # convenient views
    @property
    def run_type(self) -> str | None:
        rt = self.data.get("run_type")
        return rt if isinstance(rt, str) and rt else None

    @property
    def meta(self) -> dict[str, Any]:
        extra = self.data.get("extra")
        md = extra.get("metadata") if isinstance(extra, dict) else None
        return md if isinstance(md, dict) else {}


def entries_from_parts(parts: Iterable[Part], fname: str, said: list[str] | None = None) -> Iterator[Entry | Problem]:
    """Merge parts into runs, order them by ``dotted_order``, and yield one entry per run.
    ``said``: the kinds of values that are no values already said for the file (records.said_bad_values)."""
    said = [] if said is None else said
    runs: dict[str, _Run] = {}
    hints: dict[str, tuple[str | None, str | None]] = {}  # run id -> (parent, trace) from child_runs nesting
    parts = list(parts)
    creates = [p for p in parts if p.kind != "patch"]
    patches = [p for p in parts if p.kind == "patch"]
    for p in creates + patches:  # creates first: an update completes a run wherever it stands
        stack: list[tuple[dict[str, Any], str | None, str | None]] = [(p.obj, None, None)]
        while stack:
            obj, parent_hint, trace_hint = stack.pop()
            rid = _run_id(obj)
            if rid is None and p.kind == "copy":
                rid = "copy-" + hashlib.blake2b(orjson.dumps(obj, option=orjson.OPT_SORT_KEYS), digest_size=12).hexdigest()
            if rid is None:
                yield Problem(fname, p.line, f"{p.where}: run without id or dotted_order; skipped")
                continue
            r = runs.get(rid)
            if r is None:
                r = runs[rid] = _Run(rid, p.line)
            if p.kind != "patch":
                r.created = True
            _merge(r.data, obj)
            if parent_hint or trace_hint:
                hints[rid] = (parent_hint, trace_hint)
            children = obj.get("child_runs")
            if isinstance(children, list):
                tr = _str(obj.get("trace_id")) or (trace_hint or None)
                for child in reversed(children):
                    if isinstance(child, dict):
                        stack.append((child, rid, tr))
                    else:
                        yield Problem(fname, p.line, f"{p.where}: a child run that is a {type(child).__name__}; skipped")

    # Tree links.
    for r in runs.values():
        d = r.data
        segs = _segments(d.get("dotted_order"))
        hp, ht = hints.get(r.id, (None, None))
        r.parent = _str(d.get("parent_run_id")) or (segs[-2][1] if len(segs) > 1 else None) or hp
        r.trace = _str(d.get("trace_id")) or (segs[0][1] if segs else None) or ht or ""
    for r in runs.values():
        if not r.trace:
            # No trace_id and no dotted_order: the top of its chain in this file is the trace.
            top, seen = r, {r.id}
            while top.parent and top.parent in runs and top.parent not in seen:
                seen.add(top.parent)
                top = runs[top.parent]
            r.trace = top.trace or top.parent or top.id
    _order_keys(runs)
    ordered = sorted(runs.values(), key=lambda r: (r.order, r.id))
    children: dict[str, list[_Run]] = {}
    for r in ordered:
        if r.parent and r.parent in runs:
            children.setdefault(r.parent, []).append(r)
    _assign_streams(ordered, runs, children)

    s3 = [r for r in ordered if not r.data.get("inputs") and (r.data.get("inputs_s3_urls") or r.data.get("outputs_s3_urls") or r.data.get("s3_urls"))]
    if s3:
        yield Problem(fname, s3[0].line, f"{len(s3)} run(s) keep their inputs or outputs in object storage (s3_urls); asz does not fetch them, so their texts are unknown")

    last_llm: dict[tuple[str, str], str] = {}
    for r in ordered:
        key, kind, events, problem = None, None, (), None
        counts: list[tuple[str, Any]] = []  # the token counts the run's usage was read from
        if not r.created and r.run_type is None:
            problem = f"update of run {r.id} whose create is not in this file; kept without events (read the create and its updates together)"
            key, kind = f"{r.id}:update", "run_update"
        elif r.run_type is None and r.data.get("run_type") is None and not _copy_like(r):
            problem = f"run {r.id} has no run_type; kept without events"
        else:
            try:
                events = tuple(_events(r, runs, last_llm, counts))
            except SHAPE_ERRORS as exc:
                problem = f"run {r.id} of unexpected shape ({exc}); kept without events"
        try:
            entry = _entry(r, fname, key=key, kind=kind, events=events)
        except RecursionError:
            yield Problem(fname, r.line, f"run {r.id} is nested too deeply to be written again (about 1,000 levels); skipped")
            continue
        if problem:
            yield Problem(fname, r.line, problem)
        yield from said_bad_values(said, fname, r.line, counts, _stamps(r.data), read_count=_int, read_time=_time_text)
        yield entry


def _stamps(d: dict[str, Any]) -> list[tuple[str, Any]]:
    """The times a run's record is read at: its start_time, else its dotted_order's own stamp."""
    if d.get("start_time") is not None:
        return [("start_time", d["start_time"])]
    segs = _segments(d.get("dotted_order"))
    return [("dotted_order", _Dotted(segs[-1][0]))] if segs else []


class _Dotted(str):
    """A dotted_order's stamp (``20260102T030405123456``), read by its own format."""

    __slots__ = ()


def _time_text(v: Any) -> str | None:
    return _dotted_time(v) if isinstance(v, _Dotted) else _iso(v)


def _copy_like(r: _Run) -> bool:
    return r.id.startswith("copy-")


def _entry(r: _Run, fname: str, *, events: tuple[dict[str, Any], ...], key: str | None = None, kind: str | None = None) -> Entry:
    d = r.data
    ts = _iso(d.get("start_time"))
    if ts is None:
        segs = _segments(d.get("dotted_order"))
        ts = _dotted_time(segs[-1][0]) if segs else None
    return Entry(
        key=key or r.id,
        session=r.trace,
        stream=r.stream,
        kind=kind or (r.run_type or "run"),
        file=fname,
        line=r.line,
        raw=_raw(d),
        events=events,
        ts=ts,
        versioned=True,
    )


def _raw(d: dict[str, Any]) -> bytes:
    """A run as JSON. orjson writes at most 255 levels; a run nested deeper (its inputs, say) is
    written by the standard library, up to about 1,000 levels (past that: RecursionError)."""
    try:
        return orjson.dumps(d)
    except TypeError:
        return json.dumps(d, ensure_ascii=False, separators=(",", ":"), default=str).encode("utf-8", "surrogatepass")


def _merge(dst: dict[str, Any], src: dict[str, Any]) -> None:
    """Later parts win, but never erase: a null or empty value leaves what an earlier part said."""
    for k, v in src.items():
        if k == "child_runs":
            continue
        old = dst.get(k)
        if v is None and old is not None:
            continue
        if v in ({}, []) and old:
            continue
        if k == "extra" and isinstance(v, dict) and isinstance(old, dict):
            merged = dict(old)
            for kk, vv in v.items():
                if kk == "metadata" and isinstance(vv, dict) and isinstance(merged.get(kk), dict):
                    merged[kk] = {**merged[kk], **vv}
                elif vv is not None:
                    merged[kk] = vv
            dst[k] = merged
        else:
            dst[k] = v


def _run_id(obj: dict[str, Any]) -> str | None:
    rid = _str(obj.get("id"))
    if rid:
        return rid
    segs = _segments(obj.get("dotted_order"))
    return segs[-1][1] if segs else None  # JS SDK updates carry no id: the tail of dotted_order is it


def _segments(dotted: Any) -> list[tuple[str, str]]:
    """``dotted_order`` as (timestamp, run id) pairs, root first."""
    if not isinstance(dotted, str) or not dotted:
        return []
    out = []
    for seg in dotted.split("."):
        z = seg.find("Z")
        if z < 0 or not seg[z + 1:]:
            return []
        out.append((seg[:z], seg[z + 1:]))
    return out


def _order_keys(runs: dict[str, _Run]) -> None:
    """Each run's place: its ``dotted_order``, or one built like it from start time and parents."""
    def key(r: _Run, depth: int = 0) -> str:
        if r.order:
            return r.order
        dotted = r.data.get("dotted_order")
        if isinstance(dotted, str) and _segments(dotted):
            r.order = dotted
            return r.order
        ts = _iso(r.data.get("start_time")) or ""
        seg = re.sub(r"[-:.]", "", ts) + "Z" + r.id if ts else "Z" + r.id
        parent = runs.get(r.parent) if r.parent else None
        if parent is not None and depth < 1000 and parent is not r:
            r.order = key(parent, depth + 1) + "." + seg
        else:
            r.order = seg
        return r.order

    for r in runs.values():
        key(r)


def _assign_streams(ordered: list[_Run], runs: dict[str, _Run], children: dict[str, list[_Run]]) -> None:
    """Main stream for the trace's own agent; a new child stream for each nested agent.

    A run opens a child stream when its metadata says it is a sub-agent (``ls_agent_type:
    "subagent"`` on a chain, the coding-agent-v1 contract), or when it is a chain started by a
    tool run and holds model calls (deepagents' ``task`` tool, any agent-as-tool). A
    ``compaction`` chain opens a helper stream. The stream's ``by`` is the tool run above it
    when there is one; else it is left unattributed.
    """
    has_llm: dict[str, bool] = {}

    def holds_llm(r: _Run) -> bool:
        if r.id in has_llm:
            return has_llm[r.id]
        has_llm[r.id] = False  # cycles end here
        v = any(c.run_type == "llm" or holds_llm(c) for c in children.get(r.id, ()))
        has_llm[r.id] = v
        return v

    subagent_of: dict[str, str | None] = {"main": None}
    for r in ordered:  # parents come first in dotted order
        parent = runs.get(r.parent) if r.parent else None
        pstream = parent.stream if parent is not None else "main"
        r.stream = pstream
        if parent is None or r.run_type in ("llm", "tool"):
            continue
        at = r.meta.get("ls_agent_type")
        opens, kind = False, "child"
        if at == "subagent":
            # Every run of a sub-agent says "subagent"; the one entering it is the run under a
            # tool, under a run of another agent type, or naming another sub-agent id.
            sid = r.meta.get("ls_subagent_id")
            opens = (parent.run_type == "tool" or parent.meta.get("ls_agent_type") != "subagent"
                     or (isinstance(sid, str) and bool(sid) and sid != subagent_of.get(pstream)))
        elif at == "compaction":
            opens, kind = True, "helper"
        elif at is None:
            opens = parent.run_type == "tool" and holds_llm(r)
        if opens:
            r.stream, r.opens, r.kind_of_stream = r.id, True, kind
            r.by = [parent.id] if parent.run_type == "tool" else []
            sid = r.meta.get("ls_subagent_id")
            subagent_of[r.id] = sid if isinstance(sid, str) and sid else r.id


# --- events -------------------------------------------------------------------------------------

def _events(r: _Run, runs: dict[str, _Run], last_llm: dict[tuple[str, str], str],
            counts: list[tuple[str, Any]]) -> Iterator[dict[str, Any]]:
    d = r.data
    rt = r.run_type
    is_root = r.parent is None
    cwd = r.meta.get("cwd")  # coding-agent traces stamp the working directory on every run
    if is_root and isinstance(cwd, str) and cwd:
        yield {"e": "project", "path": cwd}
    if r.opens:
        yield {"e": "stream", "kind": r.kind_of_stream, "by": list(r.by)}
        prompt = prompt_text(d.get("inputs"))
        if prompt:
            yield {"e": "input", "source": "agent", **clip_text(prompt)}
    elif is_root:
        prompt = prompt_text(d.get("inputs"))
        if prompt:
            yield {"e": "input", "source": "person", **clip_text(prompt)}
    if rt == "llm":
        yield from _llm_events(r, counts)
        last_llm[(r.trace, r.stream)] = r.id
    elif rt == "tool":
        yield from _tool_events(r, last_llm.get((r.trace, r.stream)))
    if (is_root or r.opens) and rt not in ("llm", "tool"):
        err = _error_text(d.get("error"))
        if err:
            kind = "interrupt" if "interrupt" in err.lower() else "error"
            yield {"e": "notice", "kind": kind, **clip_text(err)}
        outputs = d.get("outputs")
        if isinstance(outputs, dict) and outputs.get("__interrupt__"):
            yield {"e": "notice", "kind": "interrupt", **clip_text(_dump_text(outputs["__interrupt__"]))}


def _llm_events(r: _Run, counts: list[tuple[str, Any]]) -> Iterator[dict[str, Any]]:
    d = r.data
    md = r.meta
    outputs = d.get("outputs")
    msgs = output_messages(outputs)
    if md.get("synthetic"):
        # Not a model request (Claude Code's <synthetic> replies, traced as llm runs by its plugin).
        text = "\n".join(t for t in (content_text(m.get("content")) for m in msgs) if t)
        yield {"e": "notice", "kind": "synthetic", **clip_text(text)}
        return
    ended = bool(d.get("end_time")) or bool(outputs) or bool(d.get("error")) or d.get("status") in ("success", "error")
    usage = run_usage(d, counts) if ended else None
    yield {"e": "call", "id": r.id, "model": _model(d, msgs), "usage": usage, "final": ended}
    for m in msgs:
        thinking = _thinking(m)
        if thinking:
            yield {"e": "thinking", "call": r.id, **clip_text(thinking)}
        text = content_text(m.get("content"))
        if text.strip():
            yield {"e": "text", "call": r.id, **clip_text(text)}
    err = _error_text(d.get("error"))
    if err:
        yield {"e": "notice", "kind": "api_error", **clip_text(err)}


def _tool_events(r: _Run, call: str | None) -> Iterator[dict[str, Any]]:
    d = r.data
    md = r.meta
    name = md.get("ls_tool_name") if isinstance(md.get("ls_tool_name"), str) else d.get("name")
    name = name if isinstance(name, str) else None  # a list or an object names no tool
    inputs = d.get("inputs")
    if isinstance(inputs, dict) and len(inputs) == 1 and isinstance(inputs.get("input"), dict):
        inputs = inputs["input"]  # plugins wrap tool args as {"input": args}
    yield {"e": "tool_use", "call": call, "id": r.id, "name": name, "input": clip_input(inputs if inputs is not None else {})}
    outputs = d.get("outputs")
    err = _error_text(d.get("error"))
    if d.get("end_time") or outputs or err or d.get("status") in ("success", "error"):
        text, failed = _tool_output(outputs)
        if err:
            text = err if not text else f"{err}\n{text}"
        yield {"e": "tool_result", "id": r.id, "error": bool(err) or failed or d.get("status") == "error", **clip_text(text)}


# --- reading LangChain shapes ----------------------------------------------------------------

def message(m: Any) -> dict[str, Any] | None:
    """A chat message in any of the shapes LangSmith stores, as ``{role, content, kw}``.

    Shapes: LangChain serialized (``{"lc": 1, "type": "constructor", "id": [..., "HumanMessage"],
    "kwargs": {...}}``), LangChain dicts (``{"type": "human", "content": ...}``, or with
    ``"data"``), OpenAI/Anthropic dicts (``{"role": "user", "content": ...}``) and tuples
    (``["user", "text"]``). ``role`` is human, ai, tool, system or other.
    """
    if isinstance(m, (list, tuple)) and len(m) == 2 and isinstance(m[0], str) and m[0].lower() in _ROLE:
        return {"role": _ROLE[m[0].lower()], "content": m[1], "kw": {}}
    if isinstance(m, str):
        return {"role": "human", "content": m, "kw": {}}
    if not isinstance(m, dict):
        return None
    if m.get("lc") == 1 and isinstance(m.get("kwargs"), dict):
        ident = m.get("id")
        cls = ident[-1] if isinstance(ident, list) and ident and isinstance(ident[-1], str) else ""
        kw = m["kwargs"]
        role = _ROLE.get(cls.lower()) or (_ROLE.get(str(kw.get("role", "")).lower(), "other") if cls.lower().startswith("chatmessage") else "other")
        return {"role": role, "content": kw.get("content"), "kw": kw}
    if isinstance(m.get("data"), dict) and isinstance(m.get("type"), str):
        kw = m["data"]
        return {"role": _ROLE.get(m["type"].lower(), "other"), "content": kw.get("content"), "kw": kw}
    for key in ("type", "role"):
        v = m.get(key)
        if isinstance(v, str) and v.lower() in _ROLE:
            return {"role": _ROLE[v.lower()], "content": m.get("content"), "kw": m}
    if isinstance(m.get("role"), str):
        return {"role": "other", "content": m.get("content"), "kw": m}
    return None


def prompt_text(inputs: Any) -> str | None:
    """The prompt a run was given: its last block of human messages, else a prompt-like string.

    Earlier human messages in the same inputs are history (turns recorded in other traces),
    never this run's input.
    """
    if isinstance(inputs, str):
        return inputs if inputs.strip() else None
    if not isinstance(inputs, dict):
        return None
    msgs = inputs.get("messages")
    if isinstance(msgs, str) and msgs.strip():
        return msgs
    if isinstance(msgs, list):
        if msgs and all(isinstance(x, list) for x in msgs) and not _is_tuple_message(msgs[0]):
            msgs = msgs[0]  # a batch of message lists (LangChain chat model inputs): the first
        norm = [message(x) for x in msgs]
        block: list[str] = []
        found = False
        for m in reversed(norm):
            if m is None or m["role"] == "system":
                continue
            if m["role"] == "human":
                t = content_text(m["content"])
                if t.strip():
                    block.append(t)
                found = True
            elif found:
                break
            else:
                continue  # ai/tool messages after the last human ones: the run went on from it
        if block:
            return "\n\n".join(reversed(block))
    for key in _PROMPT_KEYS:
        v = inputs.get(key)
        if isinstance(v, str) and v.strip():
            return v
        if isinstance(v, dict):
            inner = prompt_text(v)
            if inner:
                return inner
    prompts = inputs.get("prompts")
    if isinstance(prompts, list) and prompts and isinstance(prompts[-1], str):
        return prompts[-1]
    strings = [v for v in inputs.values() if isinstance(v, str) and v.strip()]
    if len(inputs) == 1 and strings:
        return strings[0]
    return None


def _is_tuple_message(x: Any) -> bool:
    return isinstance(x, list) and len(x) == 2 and isinstance(x[0], str) and x[0].lower() in _ROLE


def content_text(c: Any) -> str:
    """The words in a message content: a string, or the text blocks of a block list."""
    if isinstance(c, str):
        return c
    if isinstance(c, dict):
        c = [c]
    if not isinstance(c, list):
        return ""
    parts = []
    for b in c:
        if isinstance(b, str):
            parts.append(b)
        elif isinstance(b, dict):
            t = b.get("type")
            if t in (None, "text", "input_text", "output_text") and isinstance(b.get("text"), str):
                parts.append(b["text"])
            elif t in ("image", "image_url", "input_image", "document", "file", "input_file"):
                parts.append(f"[{t}]")
    return "\n".join(p for p in parts if p)


def _thinking(m: dict[str, Any]) -> str:
    parts = []
    kw = m.get("kw") or {}
    ak = kw.get("additional_kwargs") if isinstance(kw.get("additional_kwargs"), dict) else {}
    if isinstance(ak.get("reasoning_content"), str):
        parts.append(ak["reasoning_content"])
    c = m.get("content")
    for b in c if isinstance(c, list) else ():
        if not isinstance(b, dict):
            continue
        if b.get("type") == "thinking" and isinstance(b.get("thinking"), str):
            parts.append(b["thinking"])
        elif b.get("type") == "reasoning":
            if isinstance(b.get("reasoning"), str):
                parts.append(b["reasoning"])
            for s in b.get("summary") or ():
                if isinstance(s, dict) and isinstance(s.get("text"), str):
                    parts.append(s["text"])
    return "\n".join(p for p in parts if p)


def output_messages(outputs: Any) -> list[dict[str, Any]]:
    """The model's messages in an llm run's outputs, in the shapes LangSmith stores them."""
    found: list[dict[str, Any]] = []

    def add(x: Any) -> None:
        m = message(x)
        if m is not None and m["role"] in ("ai", "other"):
            found.append(m)

    if isinstance(outputs, str):
        return [{"role": "ai", "content": outputs, "kw": {}}]
    if not isinstance(outputs, dict):
        return found
    gens = outputs.get("generations")
    if isinstance(gens, list):
        for g in _flatten(gens):
            if isinstance(g, dict):
                if g.get("message") is not None:
                    add(g["message"])
                elif isinstance(g.get("text"), str):
                    found.append({"role": "ai", "content": g["text"], "kw": {}})
        return found
    choices = outputs.get("choices")
    if isinstance(choices, list):  # OpenAI chat completion (wrap_openai)
        for ch in choices:
            if isinstance(ch, dict) and isinstance(ch.get("message"), dict):
                found.append({"role": "ai", "content": ch["message"].get("content"), "kw": ch["message"]})
            elif isinstance(ch, dict) and isinstance(ch.get("text"), str):
                found.append({"role": "ai", "content": ch["text"], "kw": {}})
        return found
    msgs = outputs.get("messages")
    if isinstance(msgs, list):  # coding-agent plugins: {"messages": [{"role": "assistant", ...}]}
        for x in msgs:
            add(x)
        return found
    out = outputs.get("output")
    if isinstance(out, list) and any(isinstance(i, dict) and i.get("type") in ("message", "reasoning") for i in out):
        for item in out:  # OpenAI Responses API
            if isinstance(item, dict) and item.get("type") == "message":
                found.append({"role": "ai", "content": item.get("content"), "kw": item})
            elif isinstance(item, dict) and item.get("type") == "reasoning":
                found.append({"role": "ai", "content": [], "kw": {}, "reasoning": item})
        for m in found:
            if "reasoning" in m:
                m["content"] = [{"type": "reasoning", "summary": m.pop("reasoning").get("summary") or []}]
        return found
    if out is not None and not isinstance(out, list):
        if isinstance(out, str):
            return [{"role": "ai", "content": out, "kw": {}}]
        add(out)
        return found
    if outputs.get("type") in ("ai", "AIMessage", "AIMessageChunk") or outputs.get("role") == "assistant" or "lc" in outputs:
        add(outputs)
        return found
    if "content" in outputs:  # Anthropic message (wrap_anthropic: type "message")
        found.append({"role": "ai", "content": outputs.get("content"), "kw": outputs})
    return found


def _flatten(xs: list[Any]) -> Iterator[Any]:
    for x in xs:
        if isinstance(x, list):
            yield from _flatten(x)
        else:
            yield x


def _model(d: dict[str, Any], msgs: list[dict[str, Any]]) -> str | None:
    outputs = d.get("outputs") if isinstance(d.get("outputs"), dict) else {}
    extra = d.get("extra") if isinstance(d.get("extra"), dict) else {}
    md = extra.get("metadata") if isinstance(extra.get("metadata"), dict) else {}
    inv = extra.get("invocation_params") if isinstance(extra.get("invocation_params"), dict) else {}
    lsinv = md.get("ls_invocation_params") if isinstance(md.get("ls_invocation_params"), dict) else {}
    inputs = d.get("inputs") if isinstance(d.get("inputs"), dict) else {}
    cands: list[Any] = [outputs.get("model")]
    for m in msgs:
        rm = (m.get("kw") or {}).get("response_metadata")
        if isinstance(rm, dict):
            cands += [rm.get("model_name"), rm.get("model")]
    llm_output = outputs.get("llm_output") if isinstance(outputs.get("llm_output"), dict) else {}
    cands += [llm_output.get("model_name"), llm_output.get("model"), inv.get("model"), inv.get("model_name"),
              lsinv.get("model"), md.get("ls_model_name"), inputs.get("model")]
    return next((c for c in cands if isinstance(c, str) and c), None)


# --- usage --------------------------------------------------------------------------------------

def run_usage(d: dict[str, Any], counts: list[tuple[str, Any]] | None = None) -> dict[str, Any] | None:
    """The four token types of one llm run, from ONE place it is recorded (never summed across:
    the JS SDK writes the same usage into outputs and metadata). None when nothing records it.
    ``counts`` is given the (field, value) of each count read there, for the warning of one
    that is no count."""
    outputs = d.get("outputs") if isinstance(d.get("outputs"), dict) else {}
    extra = d.get("extra") if isinstance(d.get("extra"), dict) else {}
    md = extra.get("metadata") if isinstance(extra.get("metadata"), dict) else {}
    codex = md.get("ls_integration") == "openai-codex"
    for um in (outputs.get("usage_metadata"), d.get("usage_metadata"), md.get("usage_metadata")):
        if isinstance(um, dict) and _has_counts(um):
            _read_counts(counts, "usage_metadata", um, _LANGCHAIN_COUNTS)
            return usage_from_langchain(um, codex=codex)
    for m in output_messages(outputs):
        um = (m.get("kw") or {}).get("usage_metadata")
        if isinstance(um, dict) and _has_counts(um):
            _read_counts(counts, "usage_metadata", um, _LANGCHAIN_COUNTS)
            return usage_from_langchain(um, codex=codex)
    if isinstance(d.get("prompt_tokens"), int) or isinstance(d.get("completion_tokens"), int):
        # API runs: the same counts flattened (on llm runs they are that run's own).
        _read_counts(counts, "", d, (("prompt_tokens",), ("completion_tokens",), ("prompt_token_details", "cache_read"),
                                     *(("prompt_token_details", k) for k in _CACHE_WRITES)))
        return usage_from_langchain({"input_tokens": d.get("prompt_tokens"), "output_tokens": d.get("completion_tokens"),
                                     "input_token_details": d.get("prompt_token_details")}, codex=codex)
    llm_output = outputs.get("llm_output") if isinstance(outputs.get("llm_output"), dict) else {}
    for name, raw in (("token_usage", llm_output.get("token_usage")), ("usage", llm_output.get("usage"))):
        if isinstance(raw, dict) and raw:
            _read_counts(counts, f"llm_output.{name}", raw, _PROVIDER_COUNTS)
            return usage_from_provider(raw)
    return None


_CACHE_WRITES = ("ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens", "ephemeral_1hr_input_tokens", "cache_creation")
_LANGCHAIN_COUNTS = (("input_tokens",), ("output_tokens",), ("input_token_details", "cache_read"),
                     *(("input_token_details", k) for k in _CACHE_WRITES))
_PROVIDER_COUNTS = (("prompt_tokens",), ("completion_tokens",), ("prompt_tokens_details", "cached_tokens"),
                    ("input_tokens",), ("output_tokens",), ("cache_read_input_tokens",), ("cache_creation_input_tokens",))
"""Where each dialect's reading (usage_from_langchain, usage_from_provider) takes a count."""


def _read_counts(counts: list[tuple[str, Any]] | None, where: str, u: dict[str, Any], paths: tuple[tuple[str, ...], ...]) -> None:
    """The (field, value) of each count ``u`` holds at ``paths``, added to ``counts``."""
    if counts is None:
        return
    for path in paths:
        v: Any = u
        for k in path:
            v = v.get(k) if isinstance(v, dict) else None
        if v is not None:
            counts.append((".".join((where, *path)) if where else ".".join(path), v))


def _has_counts(um: dict[str, Any]) -> bool:
    # A number recorded here, even one that is no count (negative, out of range): this is where usage is.
    return any(isinstance(um.get(k), (int, float)) and not isinstance(um.get(k), bool) for k in ("input_tokens", "output_tokens", "total_tokens"))


def usage_from_langchain(um: dict[str, Any], *, codex: bool = False) -> dict[str, Any]:
    """LangChain ``usage_metadata`` to asz usage (docs/events.md ``call``).

    ``input_tokens`` counts every input token, cache reads and cache writes included, so fresh
    input is ``input_tokens - cache_read - cache_write``, taken out once. Cache writes are
    spelled ``cache_creation`` or ``ephemeral_5m_input_tokens`` + ``ephemeral_1h_input_tokens``
    (``ephemeral_1hr_input_tokens`` in one helper); when both spellings are there they describe
    the same tokens, so the larger is taken, never the sum. The Codex plugin writes reasoning
    tokens into ``cache_creation``: for its runs cache writes are 0. Without
    ``input_token_details`` the cache counts are unknown (None), never 0.
    """
    inp = _int(um.get("input_tokens"))
    out = _int(um.get("output_tokens"))
    itd = um.get("input_token_details")
    cr = cw = w5 = w1 = None
    if isinstance(itd, dict):
        cr = _int(itd.get("cache_read")) or 0
        e5 = _int(itd.get("ephemeral_5m_input_tokens"))
        e1 = _int(itd.get("ephemeral_1h_input_tokens"))
        if e1 is None:
            e1 = _int(itd.get("ephemeral_1hr_input_tokens"))
        cc = _int(itd.get("cache_creation"))
        if codex:
            cw = 0
        elif e5 is not None or e1 is not None:
            eph = (e5 or 0) + (e1 or 0)
            cw = max(eph, cc or 0)
            if cw == eph:
                w5, w1 = e5 or 0, e1 or 0
        else:
            cw = cc or 0
    fresh = inp
    if inp is not None:
        fresh = inp - (cr or 0) - (cw or 0)
        if fresh < 0:
            fresh = inp  # this producer did not count cache tokens into input_tokens
    u: dict[str, Any] = {"input": fresh, "output": out, "cache_read": cr, "cache_write": cw}
    if w5 is not None:
        u["cache_write_5m"], u["cache_write_1h"] = w5, w1
    return u


def usage_from_provider(raw: dict[str, Any]) -> dict[str, Any]:
    """Provider usage kept by older LangChain runs in ``llm_output``: OpenAI (prompt_tokens
    includes cached_tokens) or Anthropic (input_tokens excludes cache reads and writes)."""
    if "prompt_tokens" in raw or "completion_tokens" in raw:
        det = raw.get("prompt_tokens_details") if isinstance(raw.get("prompt_tokens_details"), dict) else None
        inp = _int(raw.get("prompt_tokens"))
        cr = _int(det.get("cached_tokens")) if det else None
        return {"input": inp - (cr or 0) if inp is not None else None, "output": _int(raw.get("completion_tokens")),
                "cache_read": cr, "cache_write": 0 if det else None}
    return {"input": _int(raw.get("input_tokens")), "output": _int(raw.get("output_tokens")),
            "cache_read": _int(raw.get("cache_read_input_tokens")), "cache_write": _int(raw.get("cache_creation_input_tokens"))}


# --- small helpers ------------------------------------------------------------------------------

def _int(v: Any) -> int | None:
    """A count (asz_core.records.count: negative or out of range is unknown); a whole float too."""
    if isinstance(v, float) and v.is_integer():
        return count(int(v))
    return count(v)


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) and v else (str(v) if v is not None and not isinstance(v, (str, dict, list, bool)) else None)


def _error_text(v: Any) -> str:
    if v is None or v is False or v == "":
        return ""
    return v if isinstance(v, str) else _dump_text(v)


def _dump_text(v: Any) -> str:
    if isinstance(v, str):
        return v
    try:
        return orjson.dumps(v, default=str).decode()
    except TypeError:
        return str(v)


def _tool_output(outputs: Any) -> tuple[str, bool]:
    """A tool run's result text, and whether the result itself says it failed."""
    if outputs is None or outputs == {} or outputs == []:
        return "", False
    if isinstance(outputs, str):
        return outputs, False
    if isinstance(outputs, dict):
        if "output" in outputs:
            v = outputs["output"]
        elif isinstance(outputs.get("messages"), list) and outputs["messages"]:
            v = outputs["messages"][-1]
        else:
            v = outputs
    else:
        v = outputs
    m = message(v) if isinstance(v, dict) else None
    if m is not None and m["role"] in ("tool", "other", "ai"):
        kw = m.get("kw") or {}
        return content_text(m["content"]) or _dump_text(m["content"] or ""), kw.get("status") == "error"
    return ("" if v is None else _dump_text(v)), False


def _strings(v: Any) -> Iterator[str]:
    if isinstance(v, str):
        yield v
    elif isinstance(v, Mapping):
        for x in v.values():
            yield from _strings(x)
    elif isinstance(v, (list, tuple)):
        for x in v:
            yield from _strings(x)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _iso(v: Any) -> str | None:
    """A LangSmith time as ISO-8601 UTC with microseconds: ISO strings (Python SDK) and epoch
    milliseconds (JS SDK ingest) alike, so times from both compare as text."""
    if isinstance(v, bool) or v is None:
        return None
    try:
        if isinstance(v, str) and re.fullmatch(r"\s*\d+(\.\d+)?\s*", v):
            v = float(v) if "." in v else int(v)
        if isinstance(v, int):
            dt = _EPOCH + (timedelta(milliseconds=v) if v >= 10**11 else timedelta(seconds=v))
        elif isinstance(v, float):
            dt = _EPOCH + (timedelta(milliseconds=v) if v >= 1e11 else timedelta(seconds=v))
        elif isinstance(v, str):
            dt = datetime.fromisoformat(v.strip().replace("Z", "+00:00"))
            if dt.tzinfo is None:
                dt = dt.replace(tzinfo=UTC)  # the API writes naive UTC times
        else:
            return None
        return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    except (ValueError, OverflowError):  # OverflowError: before year 1 or after 9999 in UTC
        return None


def _dotted_time(stamp: str) -> str | None:
    try:
        dt = datetime.strptime(stamp, "%Y%m%dT%H%M%S%f").replace(tzinfo=UTC)
    except ValueError:
        return None
    return dt.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _walk(root: Path, limit: int | None = None) -> Iterator[str]:
    n = 0
    for dirpath, _, filenames in walk(root):
        for fn in filenames:
            if fn.lower().endswith(SUFFIXES):
                yield os.path.join(dirpath, fn)
                n += 1
                if limit and n >= limit:
                    return


def _head_is_langsmith(p: str | Path) -> bool:
    """:func:`_looks_like_langsmith`, kept for a collect while the file is the same (:mod:`asz_core.looks`)."""
    return os.fspath(p).lower().endswith(SUFFIXES) and look("langsmith.head", p, _looks_like_langsmith)


def _looks_like_langsmith(p: Path) -> bool:
    """By content: the first record parsed when it fits the head, else keys seen in the head."""
    if not p.name.lower().endswith(SUFFIXES):
        return False
    try:
        with open_regular(p) as f:
            head = f.read(_HEAD_BYTES)
    except OSError:
        return False
    body = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    first = body.split(b"\n", 1)[0]
    try:
        obj = loads_line(first)[0]  # (a lone surrogate escape in it is no reason to pass it by)
    except orjson.JSONDecodeError:
        obj = None
    if isinstance(obj, dict):
        if "sessionId" in obj or (isinstance(obj.get("type"), str) and obj["type"] in _CODEX_TYPES) or ("conversation_id" in obj and "history" in obj):
            return False  # a Claude Code line, a Codex rollout line, a Kiro save
        if _is_run(obj) or _is_copy(obj):
            return True
        return any(isinstance(obj.get(k), list) for k in _CONTAINERS) and bool(_RUN_TYPE_KEY.search(head) or _TREE_KEY.search(head))
    if isinstance(obj, list):
        return bool(obj) and isinstance(obj[0], dict) and (_is_run(obj[0]) or any(k in obj[0] for k in _CONTAINERS))
    if not body.startswith((b"{", b"[")):
        return False
    if any(rx.search(head) for rx in _FOREIGN):
        return False
    if _RUN_TYPE_KEY.search(head) and _TREE_KEY.search(head):
        return True
    return all(rx.search(head) for rx in _COPY_KEYS)
