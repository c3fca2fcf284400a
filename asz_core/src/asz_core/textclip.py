"""Clipping text kept in events: the raw record keeps everything, events keep what is searched."""

from __future__ import annotations

from typing import Any

EVENT_TEXT_BYTES = 2000
"""Events keep each text's first 2,000 bytes (what conversation-wide search covers)."""


def clip_text(text: str, limit: int = EVENT_TEXT_BYTES) -> dict[str, Any]:
    """``{"text": first limit bytes, "size": whole size in bytes}`` (cut on a character boundary)."""
    # isascii is a flag Python keeps on the string: no need to encode a big text to count it. (A
    # value that is no string goes on to fail at encode, as callers' warnings have always said.)
    if type(text) is str and text.isascii():
        return {"text": text if len(text) <= limit else text[:limit], "size": len(text)}
    b = text.encode("utf-8", "surrogatepass")
    if len(b) <= limit:
        return {"text": text, "size": len(b)}
    return {"text": b[:limit].decode("utf-8", "ignore"), "size": len(b)}


INPUT_DEPTH = 32
"""Events keep a tool request's first 32 levels of nesting; deeper values are replaced by a note
(the raw record keeps them). A hostile or broken request nested hundreds of levels deep would
otherwise overflow Python's stack, and orjson writes no more than 255 levels."""


_cuts = [0]


def depth_cuts() -> int:
    """How many times :func:`clip_input` cut a request's nesting in this process: a reader (collect)
    compares it before and after an entry to warn about that entry's line. A counter, not a flag
    on each result, so the clipping itself stays one cheap pass."""
    return _cuts[0]


def clip_input(value: Any, limit: int = EVENT_TEXT_BYTES, _depth: int = 0) -> Any:
    """A tool request with every long string clipped, keys kept (file paths stay whole), lists cut
    to 200 items and nesting to :data:`INPUT_DEPTH` levels."""
    if isinstance(value, str):
        return _clip_str(value, limit)
    if isinstance(value, dict | list) and _depth >= INPUT_DEPTH:
        _cuts[0] += 1
        return f"…[nested deeper than {INPUT_DEPTH} levels; the record keeps it]"
    # A short plain string (most values of a request) is kept as is without a call for it.
    if isinstance(value, dict):
        return {k: v if type(v) is str and len(v) <= limit and v.isascii() else clip_input(v, limit, _depth + 1)
                for k, v in value.items()}
    if isinstance(value, list):
        return [v if type(v) is str and len(v) <= limit and v.isascii() else clip_input(v, limit, _depth + 1)
                for v in value[:200]]
    return value


def _clip_str(value: str, limit: int) -> str:
    if value.isascii():  # one byte a character: no need to encode it to measure it
        return value if len(value) <= limit else value[:limit] + f"…[{len(value)} bytes]"
    b = value.encode("utf-8", "surrogatepass")
    return value if len(b) <= limit else b[:limit].decode("utf-8", "ignore") + f"…[{len(b)} bytes]"


KIND_CHARS = 80


def kind_name(value: Any) -> str:
    """A record's own type field as a short kind: a string as is (its first 80 characters),
    anything else by its JSON type (``<list>``, ``<object>``), so a broken or hostile line whose
    type is a list or an object of any size gives a kind of a few characters."""
    if isinstance(value, str):
        return value[:KIND_CHARS]
    if value is None or isinstance(value, bool | int | float):
        return repr(value)[:KIND_CHARS]
    return "<object>" if isinstance(value, dict) else f"<{type(value).__name__}>"


def one_line(text: str, limit: int = 200) -> str:
    """A text shown in a row: its whitespace runs made one space, cut to ``limit`` bytes with ``…``."""
    one = " ".join(text.split())
    b = one.encode()
    return one if len(b) <= limit else b[: limit - 1].decode("utf-8", "ignore") + "…"
