"""A report (:mod:`.doc`'s parts, lines and tables) drawn as the very bytes rich writes for it,
without rich: importing rich and building its console is a good part of a table command's time.
Only what it is sure to draw as rich does: a table that fits the width, its text cells and
lines wrapped between words and long words folded as rich does, characters one cell wide (:func:`~.doc.simple`), the styles ``bold``,
``dim`` and ``italic``. Anything else (an id or a figure rich would cut, a table wider than the
width, a tab, a rich Text, a wider character, markup) gives None, and the caller prints through rich;
but a one-line cell (``Col.one_line``: a listing's first input, a project's folder) too long for its
column is cut with "…" here exactly as rich cuts it.

On a terminal the styles are rich's SGR codes, one pair around each of the segments rich makes
(a cell's padding apart from its text, a title's line whole); elsewhere, no codes. Whether it is
a terminal and how wide it is are decided as rich's Console decides them.
"""

from __future__ import annotations

from .digits import whole

import os
import re
import sys
from typing import Any

from .doc import FitTable, Line, Parts, edges, plain_of, simple
from .plain import PlainLine
from .terminal_text import UNSAFE

_CODES = {"bold": "1", "dim": "2", "italic": "3"}
_WORD = re.compile(r"\s*\S+\s*")

Seg = tuple[str, frozenset[str]]


class Unsure(Exception):
    """What is being drawn needs something of rich's that is not reproduced here."""


def _style(name: str | None) -> frozenset[str]:
    if not name:
        return frozenset()
    codes = set()
    for word in name.split():
        if word not in _CODES:
            raise Unsure(name)
        codes.add(_CODES[word])
    return frozenset(codes)


def render(thing: Any, width: int, color: bool) -> str | None:
    """The bytes rich prints ``thing`` as at ``width`` columns (``color``: on a terminal that
    takes styles), or None when that is not sure."""
    if width < 1:
        return None
    try:
        lines = _lines(thing, width)
    except Unsure:
        return None
    out = []
    for line in lines:
        for text, codes in line:
            if codes and color and text:
                out.append(f"\x1b[{';'.join(sorted(codes))}m{text}\x1b[0m")
            else:
                out.append(text)
        out.append("\n")
    return "".join(out)


def _lines(thing: Any, width: int) -> list[list[Seg]]:
    if isinstance(thing, Parts):
        return [line for item in thing.items for line in _lines(item, width)]
    if isinstance(thing, Line):
        return _text(thing.parts, thing.style, width)
    if isinstance(thing, PlainLine):
        return _text([(str(thing), "")], "", width)
    if isinstance(thing, FitTable):
        return _table(thing, width)
    raise Unsure(type(thing).__name__)


def _text(parts: list[tuple[str, str]], base: str, width: int) -> list[list[Seg]]:
    """A rich Text's lines: split at newlines, each wrapped between words at ``width``; a
    segment each run of one style (rich cuts at every styled part's edges)."""
    plain = "".join(t for t, _ in parts)
    if not simple(plain.replace("\n", "")):
        raise Unsure("width")
    base_codes = _style(base)
    cuts, pos = [], 0  # (start, end, codes) of each styled part
    for text, style in parts:
        if style:
            cuts.append((pos, pos + len(text), _style(style)))
        pos += len(text)
    out, start = [], 0
    for raw in plain.split("\n"):
        for a, b in _wrap(raw, width):
            out.append(_pieces(start + a, start + b, cuts, base_codes, plain))
        start += len(raw) + 1
    return out


def _pieces(a: int, b: int, cuts: list[tuple[int, int, frozenset[str]]], base: frozenset[str], plain: str) -> list[Seg]:
    edges_at = sorted({a, b, *(x for s, e, _ in cuts for x in (s, e) if a < x < b)})
    segs = []
    for x, y in zip(edges_at, edges_at[1:]):
        codes = base.union(*(c for s, e, c in cuts if s <= x and y <= e))
        segs.append((plain[x:y], codes))
    return segs


def _wrap(s: str, width: int) -> list[tuple[int, int]]:
    """Where rich's word wrap cuts ``s``: a word (with the spaces after it) goes to the next line
    when it does not fit, a word wider than the line is folded in pieces of the width, and the
    spaces beyond the width at a line's end are dropped."""
    breaks, offset = [], 0
    for m in _WORD.finditer(s):
        start, word = m.start(), m.group()
        need = len(word.rstrip())
        if width - offset >= need:
            offset += len(word)
        elif need > width:
            pieces = [word[i:i + width] for i in range(0, len(word), width)]
            for i, piece in enumerate(pieces):
                if start:
                    breaks.append(start)
                if i == len(pieces) - 1:
                    offset = len(piece)
                else:
                    start += len(piece)
        elif offset and start:
            breaks.append(start)
            offset = len(word)
    bounds = [0, *breaks, len(s)]
    out = []
    for a, b in zip(bounds, bounds[1:]):
        if b - a > width:
            b -= min(len(s[a:b]) - len(s[a:b].rstrip()), b - a - width)
            if b - a > width:
                raise Unsure("crop")
        out.append((a, b))
    return out


def _table(t: FitTable, width: int) -> list[list[Seg]]:
    lay = t.layout_for(width)
    if t.needed(lay) > width:
        raise Unsure("wider than the width")  # rich crops the line: not drawn here
    widths = t.widths(lay, width)
    cols = [t.columns[k] for k in lay]
    ws = [widths[k] for k in lay]
    total = sum(ws) + edges(lay)
    out: list[list[Seg]] = []
    if t.title:
        out += _title(t.title, total)
    bold = frozenset("1")
    out.append([("┏" + "┳".join("━" * (w + 2) for w in ws) + "┓", frozenset())])
    out += _row([_header(c.header) for c in cols], cols, ws, bold, "┃", bottom=True)
    out.append([("┡" + "╇".join("━" * (w + 2) for w in ws) + "┩", frozenset())])
    for i, (cells, style) in enumerate(t.rows):
        if i and t.lines:
            out.append([("├" + "┼".join("─" * (w + 2) for w in ws) + "┤", frozenset())])
        out += _row([_cell_lines(cells.get(k, "")) for k in lay], cols, ws, _style(style), "│")
    out.append([("└" + "┴".join("─" * (w + 2) for w in ws) + "┘", frozenset())])
    for n in t.notes_for(lay):
        if UNSAFE.search(n) or "\t" in n:
            raise Unsure("note")  # rich's own Text drops some controls: its way, not redone here
        out += _text([(n, "")], "dim", width)
    return out


def _title(title: str, total: int) -> list[list[Seg]]:
    if "[" in title or UNSAFE.search(title) or not simple(title) or title != title.strip() or len(title) > total:
        raise Unsure("title")  # markup, or wrapped
    left = (total - len(title)) // 2
    return [[(" " * left + title + " " * (total - len(title) - left), frozenset("3"))]]


def _header(h: str) -> list[str]:
    if "[" in h or UNSAFE.search(h):
        raise Unsure("header")  # rich reads a header as markup
    return [h]


def _cell_lines(cell: Any) -> list[str]:
    if isinstance(cell, Line):
        if any(style for _, style in cell.parts) or cell.style:
            raise Unsure("styled cell")
    elif not isinstance(cell, str):
        raise Unsure("rich cell")
    text = plain_of(cell)
    if "[" in text and isinstance(cell, str):
        raise Unsure("markup")
    return text.split("\n")


def _row(cells: list[list[str]], cols: list[Any], ws: list[int], style: frozenset[str], bar: str,
         bottom: bool = False) -> list[list[Seg]]:
    drawn = []
    for lines, col, w in zip(cells, cols, ws):
        segs = []
        for raw in lines:
            if not simple(raw):
                raise Unsure("cell")  # measured otherwise by rich
            if col.wrap and not col.one_line:  # wrapped, long words folded
                parts = [raw[a:b] for a, b in _wrap(raw, w)]
            elif len(raw) > w and col.one_line and not col.right and w > 1:
                parts = [raw[:w - 1] + "…"]  # a one-line cell cut as rich cuts it (Text.truncate, "ellipsis")
            elif len(raw) > w:
                raise Unsure("cut")
            else:
                parts = [raw]
            for part in parts:
                body = part.rstrip().rjust(w) if col.right else part.ljust(w)
                segs.append([(" ", style), (body, style), (" ", style)])
        drawn.append(segs)
    height = max(len(c) for c in drawn)
    for i, (segs, w) in enumerate(zip(drawn, ws)):
        blank = [[(" " * (w + 2), style)]] * (height - len(segs))
        drawn[i] = blank + segs if bottom else segs + blank
    out = []
    for n in range(height):
        line: list[Seg] = [(bar, frozenset())]
        for i, c in enumerate(drawn):
            if i:
                line.append((bar, frozenset()))
            line += c[n]
        line.append((bar, frozenset()))
        out.append(line)
    return out


def terminal() -> tuple[bool, bool]:
    """(rich writes escape codes, rich sees a terminal) for stdout, as rich's Console decides."""
    env = os.environ
    tty = env.get("TTY_COMPATIBLE", "")
    if tty in ("0", "1"):
        is_term = tty == "1"
    elif env.get("FORCE_COLOR") is not None:
        is_term = env["FORCE_COLOR"] != ""
    else:
        try:
            is_term = sys.stdout.isatty()
        except ValueError:
            is_term = False
    dumb = is_term and env.get("TERM", "").lower() in ("dumb", "unknown")
    return is_term and not dumb, is_term


def width(is_term: bool) -> int:
    """The width rich's console gives itself: COLUMNS, else 80 on a dumb terminal, else the first
    of stdin, stdout and stderr that is a terminal, else 80."""
    columns = os.environ.get("COLUMNS")
    n = whole(columns, most=6)  # as rich_text gives rich: a width of at most six digits
    if n is not None:
        return n
    if is_term and os.environ.get("TERM", "").lower() in ("dumb", "unknown"):
        return 80
    for fd in (0, 1, 2):
        try:
            return os.get_terminal_size(fd).columns or 80
        except (AttributeError, ValueError, OSError):
            continue
    return 80


def emit(thing: Any) -> bool:
    """``thing`` written to stdout as rich would write it, when that is sure; False (nothing
    written) otherwise: then the caller prints it through rich."""
    if sys.platform == "win32" or "idlelib" in sys.modules or "ipykernel" in sys.modules:
        return False
    encoding = (getattr(sys.stdout, "encoding", None) or "utf-8").lower()
    if not encoding.startswith("utf"):
        return False  # rich draws its boxes in ASCII then
    color, is_term = terminal()
    text = render(thing, width(is_term), color)
    if text is None:
        return False
    sys.stdout.write(text)
    sys.stdout.flush()
    return True
