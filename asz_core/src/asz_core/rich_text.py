"""The rich side of asz's printing: the console every person-facing print goes through, and the
rich Text reports are built with when rich prints them. Imported only when something is printed
through rich (:mod:`.tables` names these lazily)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from rich.console import Console
from rich.segment import Segment
from rich.text import Text

from .terminal_text import UNSAFE, inert


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
        kwargs.setdefault("_environ", _sizes_that_are_numbers())
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


class _SizesThatAreNumbers(Mapping[str, str]):
    """The environment rich reads its size from, as it is when read (rich reads COLUMNS at each
    print: a person may resize), without a COLUMNS or LINES that is no number: rich takes any text
    ``isdigit`` passes (``'²'``, 5,000 digits) and ``int`` raises on it."""

    SIZES = ("COLUMNS", "LINES", "JUPYTER_COLUMNS", "JUPYTER_LINES")

    def __getitem__(self, name: str) -> str:
        import os

        from .digits import whole

        value = os.environ[name]
        if name in self.SIZES and whole(value, most=6) is None:
            raise KeyError(name)
        return value

    def __iter__(self) -> Iterator[str]:
        import os

        return (k for k in list(os.environ) if k in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _sizes_that_are_numbers() -> Mapping[str, str]:
    return _SizesThatAreNumbers()


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


