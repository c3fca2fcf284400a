"""Text from transcripts, sources and evaluator answers made inert before a terminal sees it.

A transcript is written by an agent that read the web; an evaluator's answer is a model's words.
Either may hold an escape sequence that clears the screen, sets the window's title or draws an
OSC 8 hyperlink, a NUL, a carriage return that prints over what came before, or a bidirectional
override (U+202E) that shows a line in another order than it reads. Everything asz prints for a
person goes through :func:`inert` (tables' cells, ``show``, ``show --talk``, ``judge``, ``judge
-show``, warnings with their file names), which shows each such character as an escape you can
read (``\\x1b``, ``\\u202e``); a newline and a tab stay what they are. ``--json`` output goes
through :func:`json_inert`, which writes the same characters as JSON escapes (``\\u001b``), so a
program reads the very same text back.

No rich here: the lean command path (``main.py``) uses it too.
"""

from __future__ import annotations

import re

# C0 controls but newline and tab, DEL and the C1 controls (CSI is \x9b: an escape on its own);
# the bidirectional marks, embeddings, overrides and isolates; line and paragraph separators;
# invisible format characters (zero-width space, word joiner, BOM, interlinear annotation, the tag
# characters that hide ASCII from the eye); lone surrogates (text that was cut mid-pair).
_UNSAFE = ("\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064"
           "\u2066-\u206f\ufeff\ufff9-\ufffb\ud800-\udfff\U000e0000-\U000e007f")
UNSAFE = re.compile(f"[{_UNSAFE}]")
"""One character a terminal must not be given as it is."""


def _shown(m: re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}" if c < 0x10000 else f"\\U{c:08x}"


_LINE = re.compile(f"[{_UNSAFE}\n\t]")


def inert(text: object, *, one_line: bool = False) -> str:
    """``text`` (made a string) with every character of :data:`UNSAFE` shown as its escape; with
    ``one_line`` (a warning: one line each, so none can be forged by a file name) the newline and
    the tab too."""
    s = text if type(text) is str else str(text)
    pattern = _LINE if one_line else UNSAFE
    if pattern.search(s) is None:  # the usual case: nothing to do, no copy
        return s
    return pattern.sub(_shown, s)


def _json_escape(m: re.Match[str]) -> str:
    c = ord(m.group())
    if c < 0x10000:
        return f"\\u{c:04x}"
    c -= 0x10000
    return f"\\u{0xD800 + (c >> 10):04x}\\u{0xDC00 + (c & 0x3FF):04x}"


def json_inert(text: str) -> str:
    """JSON text with the characters of :data:`UNSAFE` a JSON writer leaves as they are (DEL, the C1
    controls, the bidirectional overrides; the C0 ones are escaped already) written as JSON
    escapes: the same JSON value, inert on a terminal. Only for JSON text, where such a character
    can only stand inside a string."""
    if UNSAFE.search(text) is None:
        return text
    return UNSAFE.sub(_json_escape, text)
