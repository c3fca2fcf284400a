"""A saved source for the terminal: its manifest (``asz sources fetch``, ``asz judge -show``).
Every value from a source or a fetcher is data: its control characters are shown escaped,
never sent to the terminal."""

from __future__ import annotations

import re
from typing import Any

from rich.console import Group
from ..tables import InertText as Text  # every text of a report inert (terminal_text)

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def shown(v: Any) -> str:
    """``v`` as text a terminal prints as it is: control characters escaped (``\\x1b``)."""
    s = v if isinstance(v, str) else str(v)
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256 else f"\\u{ord(m.group()):04x}", s)


def manifest_lines(m: dict[str, Any]) -> list[tuple[str, str]]:
    """(what, value) rows of a manifest (its JSON), the failed ones saying why first."""
    rows: list[tuple[str, str]] = [("source", m.get("source", "")), ("status", m.get("status", ""))]
    if m.get("why"):
        rows.append(("why", m["why"]))
    if m.get("status") == "failed" and not m.get("sha256"):
        rows.append(("comparison", "unavailable (not the same as no contradiction found)"))
    rows.append(("taken", f"{m.get('taken')} (when asz took the copy, never when what it says was knowable)"))
    for k in ("fetcher", "how", "location"):
        if m.get(k):
            rows.append((k, m[k]))
    if m.get("content_type"):
        rows.append(("content type", m["content_type"] + ("" if m.get("content_type_said") else " (from its name or bytes)")))
    if m.get("sha256"):
        size = f"{m.get('bytes'):,} bytes saved"
        if m.get("cut"):
            size += " (cut: the source is larger" + (f", {m['size']:,} bytes" if m.get("size") else "") + ")"
        rows += [("size", size), ("sha256", m["sha256"])]
    t = m.get("text")
    if isinstance(t, dict):
        rows.append(("text", f"{t.get('lines'):,} lines, {t.get('bytes'):,} bytes, {t.get('kind')} by {t.get('extractor')}"
                             + (" (cut)" if t.get("cut") else "")))
        rows.append(("text sha256", t.get("sha256", "")))
    says = m.get("says") or {}
    for k in ("title", "author", "published", "revision"):
        if says.get(k):
            rows.append((f"says: {k}", says[k]))
    return rows


def manifest_text(m: dict[str, Any], text: str | None = None, head: int = 10) -> Group:
    """A manifest for the terminal, and the first ``head`` numbered lines of its text."""
    out = [Text.assemble((f"{m.get('id', 'source')}", "bold"), " ", shown(m.get("source", "")))]
    width = max(len(k) for k, _ in manifest_lines(m))
    for k, v in manifest_lines(m)[1:]:
        out.append(Text.assemble((f"  {k:<{width}}  ", "dim"), shown(v)))
    if text:
        lines = text.splitlines()
        out.append(Text(f"  first {min(head, len(lines))} of {len(lines):,} lines of its text:", style="dim"))
        for n, line in enumerate(lines[:head], 1):
            out.append(Text.assemble((f"  {n:>4}  ", "dim"), shown(line[:200])))
    return Group(*out)


__all__ = ["manifest_text", "manifest_lines", "shown"]
