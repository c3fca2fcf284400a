"""File names inside Codex ``apply_patch`` text, and the requests that carry such text."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

# The patch grammar (codex-rs apply-patch): each file section opens with one of these lines,
# between "*** Begin Patch" and "*** End Patch". A move adds "*** Move to: <new path>".
_HEADER = re.compile(r"^\*\*\* (?:(?:Add|Update|Delete) File|Move to): (.+?)[ \t]*\r?$", re.M)
_BEGIN = "*** Begin Patch"
PATCH_TOOLS = frozenset({"apply_patch", "applypatch"})
PATCH_FILES_KEY = "patch_files"
"""Key the adapter adds to a tool request that carries a patch: the file names it names, kept
whole when the patch text itself is clipped in the event (the raw record keeps the patch)."""


def patch_files(text: str) -> list[str]:
    """The files a patch text names, in order, once each (a move names old and new path)."""
    out: list[str] = []
    for m in _HEADER.finditer(text):
        name = m.group(1).strip()
        if name and name not in out:
            out.append(name)
    return out


def _strings(value: Any) -> Iterator[str]:
    """Every string in a request, in order; walked with a stack of its own, so a request nested a
    thousand levels deep is read like any other."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            yield v
        elif isinstance(v, Mapping):
            stack.extend(reversed([x for k, x in v.items() if k != PATCH_FILES_KEY]))
        elif isinstance(v, (list, tuple)):
            stack.extend(reversed(v))


def request_files(tool: str, request: Mapping[str, Any]) -> list[str]:
    """Files an editing request names: an ``apply_patch`` call (custom tool ``input``, or the
    older function form ``{"input": patch}``), a shell call that runs ``apply_patch`` with the
    patch as an argument or a heredoc, or a ``codex exec --json`` ``file_change`` item."""
    out: list[str] = []

    def add(names: Any) -> None:
        for n in names if isinstance(names, (list, tuple)) else ():
            if isinstance(n, str) and n and n not in out:
                out.append(n)

    if not isinstance(request, Mapping):
        return out
    add(request.get(PATCH_FILES_KEY))
    if tool == "file_change":
        changes = request.get("changes")
        if isinstance(changes, Mapping):
            add(list(changes))
        elif isinstance(changes, list):
            add([c.get("path") for c in changes if isinstance(c, Mapping)])
        return out
    texts = list(_strings(request))
    if tool in PATCH_TOOLS:
        for t in texts:
            add(patch_files(t))
        return out
    joined = "\n".join(texts)
    if _BEGIN in joined and ("apply_patch" in joined or "applypatch" in joined):
        for t in texts:
            if _BEGIN in t:
                add(patch_files(t))
    return out
