"""The file operations a conversation's record shows (spec: "The files a target changed").

An operation is a file a workspace change record captured, or a file that the request of a tool
step names and no change record of that step names (the runtime's adapter says which requests
name files: ``RuntimeAdapter.file_requests``). A change record whose file list was taken out to
fit is one operation, unlisted. The list is history, not a net diff: a repeated edit, two
captures of one change and a later revert are operations of their own. Operations take ids
``o1…`` in the order they landed: a capture where its change record landed, a request where its
tool step landed (a file in the same record in the record's order). docs/operations.md.

This is the one list: ``asz show CONV --operations`` prints it and the navigation's
``operations`` tool reads it (``operations(conv, adapter.file_requests)``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from .assembly import Conversation, Step

FileRequests = Callable[[str, Mapping[str, Any]], list[str]]


@attrs.frozen
class Operation:
    id: str
    """o1, o2, … in landing order."""
    seq: int
    """Landing position of what shows it: the change record, or the tool step's first record."""
    shows: str
    """``capture`` (a change record names the file), ``request`` (only the tool's request names it)
    or ``unlisted`` (a change record whose file list was taken out to fit)."""
    step: str | None
    """The tool step (None when the view holds no step with the record's tool call id)."""
    talk: str | None
    stream: str | None
    tool: str | None
    """The tool's name."""
    tool_id: str | None
    status: str | None
    """Whether the tool returned, failed or never returned (``no_result``)."""
    path: str | None
    """The file: absolute for a capture (within its workspace); as the request names it, resolved
    within the record's workspace when relative. None for an unlisted operation."""
    kind: str | None = None
    """Captures: added, modified or deleted."""
    before: str | None = None
    after: str | None = None
    record: int | None = None
    """``seq`` of the change record (captures and unlisted operations)."""
    count: int | None = None
    """Unlisted: how many files the record counted."""
    flags: tuple[str, ...] = ()
    """binary, ignored (matched by .gitignore: named and hashed, never inlined), oversized,
    diff_cut; ``diff`` when the record holds a diff."""

    def to_json(self) -> dict[str, Any]:
        d = attrs.asdict(self)
        d["flags"] = list(self.flags)
        return d


def operations(conv: Conversation, file_requests: FileRequests | None = None) -> list[Operation]:
    """Every file operation of ``conv``'s view, in landing order, with ids ``o1…``.

    ``file_requests`` is the runtime adapter's (``Registry().runtime(conv.runtime).file_requests``);
    without it only captures are listed.
    """
    found: list[tuple[int, int, dict[str, Any]]] = []  # (seq, order within, fields)

    def capture(step: Step | None, ev: dict[str, Any]) -> set[str]:
        named: set[str] = set()
        base = _base(step, ev)
        if ev.get("cut"):
            found.append((ev["seq"], 0, {**base, "shows": "unlisted", "path": None, "record": ev["seq"],
                                         "count": ev.get("count")}))
            return named
        for i, f in enumerate(ev.get("files") or ()):
            path = _norm(f.get("path"))
            named.add(path)
            flags = tuple(k for k in ("binary", "ignored", "oversized", "diff_cut", "outside") if f.get(k))
            if f.get("diff_lines"):
                flags += ("diff",)
            found.append((ev["seq"], i, {**base, "shows": "capture", "path": path, "kind": f.get("kind"),
                                         "before": f.get("before"), "after": f.get("after"), "record": ev["seq"],
                                         "flags": flags}))
        return named

    for s in conv.steps:
        if s.kind not in ("tool", "agent_call"):
            continue
        named: set[str] = set()
        workspace = None
        for ev in s.changes:
            named |= capture(s, ev)
            workspace = workspace or ev.get("workspace")
        if not file_requests or not s.name or not isinstance(s.request, dict):
            continue
        try:
            paths = file_requests(s.name, s.request)
        except Exception:  # noqa: BLE001 - an adapter's fault on one odd request names nothing
            paths = []
        for i, p in enumerate(paths):
            resolved = _norm(os.path.join(workspace, p)) if workspace and not os.path.isabs(p) else _norm(p)
            if resolved in named or p in named:
                continue
            found.append((s.seq, 1000 + i, {**_base(s, None), "shows": "request", "path": resolved if workspace else p}))
    for ev in conv.unattached:
        if ev.get("e") == "change":
            capture(None, ev)
    found.sort(key=lambda x: (x[0], x[1]))
    return [Operation(id=f"o{n}", seq=seq, **fields) for n, (seq, _, fields) in enumerate(found, 1)]


def of_conversation(conv: Conversation, registry: Any = None) -> list[Operation]:
    """:func:`operations` read with the conversation's own runtime adapter (captures only when
    that adapter is not installed)."""
    from .errors import AszError
    from .registry import Registry

    try:
        adapter = (registry or Registry()).runtime(conv.runtime)
    except AszError:
        adapter = None
    return operations(conv, adapter.file_requests if adapter else None)


def record_files(raw: bytes) -> list[dict[str, Any]]:
    """The files of a change record as the recorder wrote them (diffs included), each with
    ``path`` made absolute within the record's workspace, from the record's raw bytes
    (``Store.raw(conversation, op.record, upto=round)``): what a ``diff`` tool pages through."""
    import orjson

    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return []
    if not isinstance(obj, dict):
        return []
    root = str(obj.get("workspace") or "")
    out = []
    for f in obj.get("files") or ():
        if isinstance(f, dict) and isinstance(f.get("path"), str):
            p = f["path"]
            out.append({**f, "rel": p, "path": _norm(p if os.path.isabs(p) or not root else os.path.join(root, p))})
    return out


def diff_of(raw: bytes, path: str) -> str | None:
    """The diff a change record holds for the file ``path`` (an operation's path), or None."""
    for f in record_files(raw):
        if f["path"] == _norm(path):
            d = f.get("diff")
            return d if isinstance(d, str) else None
    return None


def _base(step: Step | None, ev: dict[str, Any] | None) -> dict[str, Any]:
    if step is not None:
        return {"step": step.id, "talk": step.talk, "stream": step.stream, "tool": step.name, "tool_id": step.tool_id,
                "status": step.status}
    ev = ev or {}
    return {"step": None, "talk": None, "stream": None, "tool": ev.get("name"), "tool_id": ev.get("tool"),
            "status": ev.get("status")}


def _norm(p: Any) -> str:
    return os.path.normpath(p) if isinstance(p, str) and p else str(p)
