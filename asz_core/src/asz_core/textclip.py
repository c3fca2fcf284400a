"""Clipping text kept in events: the raw record keeps everything, events keep what is searched."""

from __future__ import annotations

from typing import Any

EVENT_TEXT_BYTES = 2000
"""Events keep each text's first 2,000 bytes (what conversation-wide search covers)."""


def clip_text(text: str, limit: int = EVENT_TEXT_BYTES) -> dict[str, Any]:
    """``{"text": first limit bytes, "size": whole size in bytes}`` (cut on a character boundary)."""
    b = text.encode("utf-8", "surrogatepass")
    if len(b) <= limit:
        return {"text": text, "size": len(b)}
    return {"text": b[:limit].decode("utf-8", "ignore"), "size": len(b)}


def clip_input(value: Any, limit: int = EVENT_TEXT_BYTES) -> Any:
    """A tool request with every long string clipped, keys kept (file paths stay whole)."""
    if isinstance(value, str):
        b = value.encode("utf-8", "surrogatepass")
        return value if len(b) <= limit else b[:limit].decode("utf-8", "ignore") + f"…[{len(b)} bytes]"
    if isinstance(value, dict):
        return {k: clip_input(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [clip_input(v, limit) for v in value[:200]]
    return value
