"""Tables that fit the terminal: each table names its layouts, from the fullest to the most
compact, and is drawn in the first that fits the width it is printed at (160 columns show
everything; 80 show a compact layout). Ids and money are never cut: their columns do not wrap,
and a layout is only chosen when they fit whole. Text columns wrap (and fold long words), except
a column of vocabulary words (``words``), drawn at least as wide as its longest word. FitTable
gives each column its width itself: every column at its floor, then what is left shared among
the wrapping ones (rich's own sharing narrows the widest below what its words need).

Notes are printed once under the table (what an unknown count means, what is left out), never
as a mark on every figure; a column's own ``note`` (what it means) only when it is drawn.
Cells are text as it is, never rich markup, and inert (:mod:`.terminal_text`: a control character
or a bidirectional override of a transcript is shown escaped, and measured as shown). Every
console asz prints to a person with is :func:`console`'s: it makes every segment it writes inert
(whatever renderable it came from), and never turns ``:100:`` into an emoji.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from typing import Any

from attrs import frozen
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from . import times
from .plain import plural  # noqa: F401 - here too, where the reports take it
from .terminal_text import UNSAFE, inert

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
        # a cell is text as it is, never rich markup: a path or an input may hold "[bold]" or "[/x]";
        # inert before it is measured, so a column is as wide as what it shows
        self.rows.append(({k: inert_text(v) if isinstance(v, Text) else Text(inert(v)) for k, v in cells.items()}, style))

    def needed(self, layout: Sequence[str]) -> int:
        """The narrowest this layout can be drawn with its ids and money whole."""
        return _edges(layout) + sum(self._floor(k) for k in layout)

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
        return max((cell_len(w) for c, _ in self.rows for w in _plain(c.get(k, "")).split()), default=0)

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
        t = Table(title=self.title, show_lines=self.lines)
        for k, w in self.widths(layout, width).items():
            col = self.columns[k]
            t.add_column(col.header, justify="right" if col.right else "left", no_wrap=not col.wrap or col.one_line,
                         overflow="fold" if col.wrap and not col.one_line else "ellipsis", width=w)
        for cells, style in self.rows:
            t.add_row(*(cells.get(k, "") for k in layout), style=style)
        return t

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lay = self.layout_for(options.max_width)
        need = self.needed(lay)
        if need <= options.max_width:
            yield self.table(lay, options.max_width)
        else:  # not even the most compact fits: wider than the terminal rather than an id or a figure cut
            yield from console.render(self.table(lay, need), options.update(width=need, max_width=need))
        for n in self.notes:
            yield Text(n, style="dim")
        said = [f"{self.columns[k].header}: {self.columns[k].note}" for k in lay if self.columns[k].note]
        if said:
            yield Text("; ".join(said), style="dim")


def _edges(layout: Sequence[str]) -> int:
    """What a table's lines take besides its cells: edges, separators, a space each side of a cell."""
    return 3 * len(layout) + 1


def _plain(cell: Cell) -> str:
    return cell.plain if isinstance(cell, Text) else cell


def _width(cell: Cell) -> int:
    return max((cell_len(line) for line in _plain(cell).split("\n")), default=0)


def inert_text(t: Text) -> Text:
    """A rich Text with each character of :data:`~.terminal_text.UNSAFE` shown as its escape, its
    styles kept on what they styled."""
    if UNSAFE.search(t.plain) is None:
        return t
    cuts = sorted({i for m in UNSAFE.finditer(t.plain) for i in (m.start(), m.end())})
    out = Text(style=t.style, justify=t.justify, overflow=t.overflow, no_wrap=t.no_wrap, end=t.end)
    for piece in t.divide(cuts):
        if UNSAFE.fullmatch(piece.plain):
            piece = Text(inert(piece.plain), style=piece.spans[0].style if piece.spans else "")
        out.append_text(piece)
    return out


class InertText(Text):
    """A rich Text whose words are inert as they come in (rich itself drops a BEL or a carriage
    return without a trace: here they are shown). What every report builds its text with."""

    def __init__(self, text: str = "", *args: Any, **kwargs: Any) -> None:
        super().__init__(inert(text), *args, **kwargs)

    def append(self, text: Any, style: Any = None) -> Text:
        return super().append(inert(text) if isinstance(text, str) else text, style)


class InertConsole(Console):
    """A console that writes nothing a terminal would act on: a plain string is made inert before
    rich reads it (:meth:`render_str`), and every segment but rich's own
    control ones (a progress bar's cursor moves) goes through :func:`~.terminal_text.inert`
    before it is written or recorded, and emoji shortcodes stay text (``file.jsonl:1234:``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("emoji", False)
        super().__init__(*args, **kwargs)

    def render_str(self, text: str, **kwargs: Any) -> Text:
        # rich's one way from a plain str (printed, a table's cell, a title) to a Text, whose making
        # drops a BEL, CR, BS, VT or FF without a trace: shown escaped before it can
        return super().render_str(inert(text), **kwargs)

    def _check_buffer(self) -> None:  # rich's one way from the buffer to the file and the record
        if not self._buffer_index:
            buf = self._buffer
            for i, seg in enumerate(buf):
                if not seg.control and UNSAFE.search(seg.text) is not None:
                    buf[i] = Segment(inert(seg.text), seg.style, seg.control)
        super()._check_buffer()


def console(*, stderr: bool = False, **kwargs: Any) -> Console:
    """The console asz prints to a person with (:class:`InertConsole`)."""
    return InertConsole(stderr=stderr, **kwargs)


def render(thing: Any, width: int) -> str:
    """What ``thing`` prints as at ``width`` columns, as plain text (for tests and --width)."""
    con = console(width=width, record=True, color_system=None, force_terminal=False, file=_Null())
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


def short_paths(paths: Sequence[str]) -> dict[str, str]:
    """Each path as its fewest last folders that no other path of ``paths`` ends with
    (``/home/me/src/asz`` -> ``asz``, or ``src/asz`` beside ``/srv/other/asz``); what is not a
    path (``(no project)``) as itself."""
    split = {p: [x for x in p.replace("\\", "/").split("/") if x] for p in paths if "/" in p or "\\" in p}
    out = {p: p for p in paths}
    for p, parts in split.items():
        for n in range(1, len(parts) + 1):
            tail = parts[-n:]
            if not any(q != p and other[-n:] == tail for q, other in split.items()):
                out[p] = ("…/" if n < len(parts) else "/") + "/".join(tail)
                break
    return out


def zone_label(tz: dt.tzinfo | None) -> str:
    """The zone times are shown in: ``local, CET`` or the name given."""
    if tz is None:
        return f"local, {dt.datetime.now().astimezone().tzname()}"
    return str(getattr(tz, "key", None) or tz)


def when(ts: str | dt.datetime | None, tz: dt.tzinfo | None, fmt: str = "%Y-%m-%d %H:%M") -> str:
    """A runtime's time (or an aware instant) on the wall clock of ``tz`` (None: local), as a person reads it."""
    t = ts if isinstance(ts, dt.datetime) else times.instant(ts)
    return "—" if t is None else times.local(t, tz).strftime(fmt)


