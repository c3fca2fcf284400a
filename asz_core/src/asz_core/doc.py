"""What a report is made of, without rich: :class:`Parts` (one thing under another), :class:`Line`
(text with styled words) and :class:`FitTable` (a table that fits the width it is printed at,
its layout and column widths chosen here). Each prints through a rich console exactly as the rich
objects it stands for (``__rich__`` and ``__rich_console__`` build them then, importing rich only
then), and :mod:`.plain_render` draws the same bytes without rich when it is sure to.

Tables that fit the terminal: each table names its layouts, from the fullest to the most
compact, and is drawn in the first that fits the width it is printed at (160 columns show
everything; 80 show a compact layout). Ids and money are never cut: their columns do not wrap,
and a layout is only chosen when they fit whole. Text columns wrap (and fold long words), except
a column of vocabulary words (``words``), drawn at least as wide as its longest word. FitTable
gives each column its width itself: every column at its floor, then what is left shared among
the wrapping ones (rich's own sharing narrows the widest below what its words need).

Notes are printed once under the table (what an unknown count means, what is left out), never
as a mark on every figure; a column's own ``note`` (what it means) only when it is drawn.
Cells are text as it is, never rich markup, and inert (:mod:`.terminal_text`).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from attrs import frozen

from .terminal_text import inert

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult
    from rich.table import Table

NARROW = frozenset("—–…≥≤×·→←↑↓✓✗")
"""Characters besides printable ASCII that the tables print, each one cell wide (as rich measures
them: tests/core/test_plain_render.py checks): a text made of these is measured without rich."""


def simple(s: str) -> bool:
    """Every character of ``s`` is one cell wide for sure (printable ASCII or :data:`NARROW`)."""
    return (s.isascii() and s.isprintable()) or all((" " <= c < "\x7f") or c in NARROW for c in s)


def cell_len(s: str) -> int:
    """``s``'s width in cells, as rich counts it (rich only for a character not surely one wide)."""
    if simple(s):
        return len(s)
    from rich.cells import cell_len as rich_len

    return rich_len(s)


class Line:
    """Text with styled parts (``dim``, ``bold``), inert as it comes in: printed as a
    :class:`~.tables.InertText` made the same way (``Line("x", style="dim")``,
    ``Line.assemble(("id", "bold"), " r3")``)."""

    __slots__ = ("parts", "style")

    def __init__(self, text: str = "", style: str = "") -> None:
        self.parts: list[tuple[str, str]] = [(inert(text), "")] if text else []
        self.style = style or ""

    @classmethod
    def assemble(cls, *pieces: str | tuple[str, str]) -> Line:
        line = cls()
        for p in pieces:
            text, style = (p, "") if isinstance(p, str) else p
            if text:
                line.parts.append((inert(text), style or ""))
        return line

    @property
    def plain(self) -> str:
        return "".join(t for t, _ in self.parts)

    def __str__(self) -> str:
        return self.plain

    def __rich__(self) -> Any:
        from .rich_text import InertText

        t = InertText(style=self.style)
        for text, style in self.parts:
            t.append(text, style or None)
        return t


class Parts:
    """Renderables one under the other, printed as a rich ``Group`` of them."""

    __slots__ = ("items",)

    def __init__(self, *items: Any) -> None:
        self.items = list(items)

    def __rich__(self) -> Any:
        from rich.console import Group

        return Group(*self.items)


TEXT_MIN = 16
"""The narrowest a wrapping text column is drawn (its words fold below that)."""


@frozen
class Col:
    header: str
    right: bool = False
    """Right-justified (numbers, money)."""
    wrap: bool = False
    """A text column that may wrap; others (ids, numbers, money) are never cut."""
    min: int = TEXT_MIN
    """For a wrapping column: the narrowest it is drawn."""
    words: bool = False
    """For a wrapping column: its words are never folded (labels from a vocabulary,
    ``necessary_exploration``): it is drawn at least as wide as its longest word."""
    note: str | None = None
    """What the column means, said under the table when the layout drawn holds the column."""
    one_line: bool = False
    """For a wrapping column: its cells are cut to one line with "…" at the width it is given
    (a listing of one line a row), never wrapped."""


def is_rich_text(v: Any) -> bool:
    """``v`` is a rich Text (a report of the full CLI's own made it: rich is imported then)."""
    text = sys.modules.get("rich.text")
    return text is not None and isinstance(v, text.Text)


class FitTable:
    """Rows of cells by column key, drawn in the first layout that fits (a rich renderable, and
    drawn by :mod:`.plain_render` without rich). A cell is a plain string (made a :class:`Line`),
    a :class:`Line`, or a rich Text."""

    def __init__(self, columns: dict[str, Col], layouts: Sequence[Sequence[str]], *, title: str | None = None,
                 notes: Iterable[str] = (), lines: bool = False) -> None:
        for lay in layouts:
            missing = [k for k in lay if k not in columns]
            if missing:
                raise ValueError(f"layout names columns {missing} not defined")
        self.columns, self.layouts, self.title = columns, [list(x) for x in layouts], title
        self.notes = [n for n in notes if n]
        self.lines = lines
        """A rule between rows (rows of several lines)."""
        self.rows: list[tuple[dict[str, Any], str | None]] = []

    def add_row(self, cells: dict[str, Any], style: str | None = None) -> None:
        # a cell is text as it is, never rich markup: a path or an input may hold "[bold]" or "[/x]";
        # inert before it is measured, so a column is as wide as what it shows
        self.rows.append(({k: _cell(v) for k, v in cells.items()}, style))

    def needed(self, layout: Sequence[str]) -> int:
        """The narrowest this layout can be drawn with its ids and money whole."""
        return edges(layout) + sum(self._floor(k) for k in layout)

    def _floor(self, k: str) -> int:
        """The narrowest column ``k`` is drawn: a column that never wraps at its widest cell (and its
        header whole), a wrapping one at its ``min`` (or narrower when its cells and header are), never
        narrower than a word of its header or, for ``words``, of its cells."""
        col = self.columns[k]
        if not col.wrap:
            return max([cell_len(col.header)] + [_width(c.get(k, "")) for c, _ in self.rows])
        head = max((cell_len(w) for w in col.header.split()), default=0)
        return max(head, min(col.min, self._natural(k)), self._word(k))

    def _natural(self, k: str) -> int:
        """The widest column ``k`` needs: every cell and its header on one line."""
        if not self.columns[k].wrap:
            return self._floor(k)
        return max([cell_len(self.columns[k].header)] + [_width(c.get(k, "")) for c, _ in self.rows])

    def _word(self, k: str) -> int:
        """The longest word of a column whose words are never folded (0 for others)."""
        if not self.columns[k].words:
            return 0
        return max((cell_len(w) for c, _ in self.rows for w in plain_of(c.get(k, "")).split()), default=0)

    def layout_for(self, width: int) -> list[str]:
        for lay in self.layouts:
            if self.needed(lay) <= width:
                return lay
        return self.layouts[-1]

    def widths(self, layout: Sequence[str], width: int) -> dict[str, int]:
        """Each column's width when ``layout`` is drawn in ``width`` columns: every column at its
        floor, then what is left shared evenly among the wrapping columns that want more, so a
        short one is whole before a long one grows (rich's own sharing would narrow a column
        below the floor its words need)."""
        w = {k: self._floor(k) for k in layout}
        spare = width - self.needed(layout)
        want = {k: self._natural(k) for k in layout if self.columns[k].wrap}
        while spare > 0:
            growing = [k for k in want if w[k] < want[k]]
            if not growing:
                break
            share = max(1, spare // len(growing))
            for k in growing:
                add = min(share, want[k] - w[k], spare)
                w[k] += add
                spare -= add
        return w

    def table(self, layout: Sequence[str], width: int) -> Table:
        from rich.table import Table

        t = Table(title=self.title, show_lines=self.lines)
        for k, w in self.widths(layout, width).items():
            col = self.columns[k]
            t.add_column(col.header, justify="right" if col.right else "left", no_wrap=not col.wrap or col.one_line,
                         overflow="fold" if col.wrap and not col.one_line else "ellipsis", width=w)
        for cells, style in self.rows:
            t.add_row(*(_rich(cells.get(k, "")) for k in layout), style=style)
        return t

    def notes_for(self, layout: Sequence[str]) -> list[str]:
        """The lines said under the table drawn in ``layout`` (each printed dim)."""
        said = [f"{self.columns[k].header}: {self.columns[k].note}" for k in layout if self.columns[k].note]
        return self.notes + (["; ".join(said)] if said else [])

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from .rich_text import InertText as Text  # a note as every report text is: inert

        lay = self.layout_for(options.max_width)
        need = self.needed(lay)
        if need <= options.max_width:
            yield self.table(lay, options.max_width)
        else:  # not even the most compact fits: wider than the terminal rather than an id or a figure cut
            yield from console.render(self.table(lay, need), options.update(width=need, max_width=need))
        for n in self.notes_for(lay):
            yield Text(n, style="dim")


def _cell(v: Any) -> Any:
    if isinstance(v, Line):
        return v
    if is_rich_text(v):
        from .rich_text import inert_text

        return inert_text(v)
    return Line(v if isinstance(v, str) else str(v))


def _rich(cell: Any) -> Any:
    return cell.__rich__() if isinstance(cell, Line) else cell


def edges(layout: Sequence[str]) -> int:
    """What a table's lines take besides its cells: edges, separators, a space each side of a cell."""
    return 3 * len(layout) + 1


def plain_of(cell: Any) -> str:
    return cell if isinstance(cell, str) else cell.plain


def _width(cell: Any) -> int:
    return max((cell_len(line) for line in plain_of(cell).split("\n")), default=0)
