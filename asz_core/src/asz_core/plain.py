"""A line of words printed without rich: what a command says when it has no table to show (``asz
collect`` with nothing new). Importing rich and building its console is most of such a command's
time, and the line prints the very same bytes without them, as long as it fits the console's
width: rich wraps a longer one, so that one still goes through rich (:func:`emit` says).

No rich here: the lean command path (``main.py``) uses it.
"""

from __future__ import annotations

from .digits import whole

import os
import sys

from .terminal_text import inert


class PlainLine(str):
    """Words to print as one line, as rich prints a :class:`~.tables.InertText` of them."""


def plural(n: int, what: str) -> str:
    return f"{n:,} {what}" + ("" if n == 1 else "s")


def width() -> int:
    """The width rich gives its console here (``rich.console.Console.size``): a dumb terminal's 80;
    else the first of stdin, stdout and stderr that is a terminal, overridden by COLUMNS; 80."""
    if os.environ.get("TERM", "").lower() in ("dumb", "unknown"):
        return 80
    w = None
    for fd in (0, 1, 2):
        try:
            w = os.get_terminal_size(fd).columns
        except (AttributeError, ValueError, OSError):
            continue
        break
    columns = os.environ.get("COLUMNS")
    if whole(columns, most=6) is not None:  # as rich_text gives rich: a width of at most six digits
        w = whole(columns, most=6)
    return w or 80


def fits(line: str) -> bool:
    """Rich prints ``line`` as it is (no wrap, one cell a character)."""
    return line.isascii() and line.isprintable() and len(line) < width()


def emit(line: str) -> bool:
    """``line`` printed as rich would print it, when it fits; False (nothing printed) when it
    would wrap: then the caller prints it through rich, as a :class:`~.tables.InertText`."""
    text = inert(line)
    if not fits(text):
        return False
    sys.stdout.write(text + "\n")
    return True
