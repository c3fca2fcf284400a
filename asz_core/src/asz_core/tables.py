"""Tables that fit the terminal: each table names its layouts, from the fullest to the most
compact, and is drawn in the first that fits the width it is printed at (160 columns show
everything; 80 show a compact layout). Ids and money are never cut: their columns do not wrap,
and a layout is only chosen when they fit whole. Text columns wrap (and fold long words).

Notes are printed once under the table (what an unknown count means, what is left out), never
as a mark on every figure.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from typing import Any

from attrs import frozen
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from . import times

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


Cell = str | Text


class FitTable:
    """A rich renderable: rows of cells by column key, drawn in the first layout that fits."""

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
        self.rows: list[tuple[dict[str, Cell], str | None]] = []

    def add_row(self, cells: dict[str, Any], style: str | None = None) -> None:
        self.rows.append(({k: v if isinstance(v, Text) else str(v) for k, v in cells.items()}, style))

    def needed(self, layout: Sequence[str]) -> int:
        """The narrowest this layout can be drawn with its ids and money whole."""
        total = 3 * len(layout) + 1  # edges, separators and one space of padding each side
        for k in layout:
            col = self.columns[k]
            head = max((cell_len(w) for w in col.header.split()), default=0)
            if col.wrap:
                longest = max((_width(c.get(k, "")) for c, _ in self.rows), default=0)
                total += max(head, min(col.min, longest))
            else:
                total += max([cell_len(col.header)] + [_width(c.get(k, "")) for c, _ in self.rows])
        return total

    def layout_for(self, width: int) -> list[str]:
        for lay in self.layouts:
            if self.needed(lay) <= width:
                return lay
        return self.layouts[-1]

    def table(self, layout: Sequence[str]) -> Table:
        t = Table(title=self.title, show_lines=self.lines)
        for k in layout:
            col = self.columns[k]
            t.add_column(col.header, justify="right" if col.right else "left", no_wrap=not col.wrap,
                         overflow="fold" if col.wrap else "ellipsis", min_width=None if not col.wrap else min(col.min, 8))
        for cells, style in self.rows:
            t.add_row(*(cells.get(k, "") for k in layout), style=style)
        return t

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lay = self.layout_for(options.max_width)
        need = self.needed(lay)
        if need <= options.max_width:
            yield self.table(lay)
        else:  # not even the most compact fits: wider than the terminal rather than an id or a figure cut
            yield from console.render(self.table(lay), options.update(width=need, max_width=need))
        for n in self.notes:
            yield Text(n, style="dim")


def _width(cell: Cell) -> int:
    text = cell.plain if isinstance(cell, Text) else cell
    return max((cell_len(line) for line in text.split("\n")), default=0)


def render(thing: Any, width: int) -> str:
    """What ``thing`` prints as at ``width`` columns, as plain text (for tests and --width)."""
    con = Console(width=width, record=True, color_system=None, force_terminal=False, file=_Null())
    con.print(thing)
    return con.export_text()


class _Null:
    def write(self, _s: str) -> int:
        return 0

    def flush(self) -> None:
        pass


def folder(path: Any) -> str:
    """A project's last folder name (``/home/me/src/asz`` -> ``asz``), for narrow tables."""
    if not isinstance(path, str) or not path:
        return "—"
    parts = [p for p in path.replace("\\", "/").split("/") if p]
    return parts[-1] if parts else path


def zone_label(tz: dt.tzinfo | None) -> str:
    """The zone times are shown in: ``local, CET`` or the name given."""
    if tz is None:
        return f"local, {dt.datetime.now().astimezone().tzname()}"
    return str(getattr(tz, "key", None) or tz)


def when(ts: str | None, tz: dt.tzinfo | None, fmt: str = "%Y-%m-%d %H:%M") -> str:
    """A runtime's time on the wall clock of ``tz`` (None: local), as a person reads it."""
    t = times.instant(ts)
    return "—" if t is None else times.local(t, tz).strftime(fmt)


def plural(n: int, what: str) -> str:
    return f"{n:,} {what}" + ("" if n == 1 else "s")
