"""What ``asz collect`` shows a person: a progress bar while it reads (on a terminal), then the
rounds it published as a table. Apart from the other reports so that a collect's table needs only
rich's console and table, not the modules that assemble and price conversations."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING, Any

from .plain import plural

if TYPE_CHECKING:  # rich only for a table or a bar: a collect with nothing new prints a plain line
    from rich.console import Console

    from .collect import CollectResult


@contextmanager
def progress_bar(console: Console, enabled: bool = True, what: str = "collect") -> Iterator[Any]:
    """A progress bar's update function (``update(done, total, _item)``), or None when there is no
    terminal to show it on. ``collect`` counts bytes; anything else (``push``) counts records."""
    if not enabled or not console.is_terminal:
        yield None
        return
    # rich's progress (and its live display) only when there is a terminal to draw it on
    from rich.progress import BarColumn, DownloadColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

    counts = (DownloadColumn(), TransferSpeedColumn()) if what == "collect" else (MofNCompleteColumn(), TextColumn("records"))
    with Progress(TextColumn(what), BarColumn(), *counts, TimeRemainingColumn(), console=console, transient=True) as p:
        task = p.add_task(what, total=None)

        def update(done: int, total: int, _file: str) -> None:
            p.update(task, completed=done, total=total)

        yield update


BAR_AFTER = 0.25
"""Seconds a collect runs before its progress bar is drawn: a shorter one (a day's collect) has
nothing to watch, and needs neither rich nor a console built for a bar."""


def could_be_a_terminal() -> bool:
    """False where rich's console of stdout would surely say it is no terminal (rich's own test:
    TTY_COMPATIBLE, FORCE_COLOR, then the file's isatty), asked without importing rich: a collect
    whose output goes to a file or a pipe draws no bar and needs no rich, however long it runs."""
    import os
    import sys

    env = os.environ
    if env.get("TTY_COMPATIBLE") == "1" or env.get("FORCE_COLOR") or env.get("FORCE_TERMINAL") or env.get("TTY_INTERACTIVE") == "1":
        return True
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


@contextmanager
def late_progress_bar(console: Callable[[], Console], what: str = "collect", after: float | None = None,
                      terminal: Callable[[], bool] = lambda: True) -> Iterator[Callable[[int, int, str], None]]:
    """:func:`progress_bar` drawn only once the work has taken ``after`` seconds (its console
    made then, by ``console``), where ``terminal()`` says a terminal may show it."""
    start = time.monotonic()
    after = BAR_AFTER if after is None else after
    with ExitStack() as stack:
        bar: list[Any] = []

        def update(done: int, total: int, item: str) -> None:
            if not bar:
                if time.monotonic() - start < after:
                    return
                if not terminal():
                    bar.append(None)  # no bar to draw, and no rich imported to find that out
                    return
                bar.append(stack.enter_context(progress_bar(console(), what=what)))
            if bar[0] is not None:
                bar[0](done, total, item)

        yield update


def collect_table(r: CollectResult, shorts: dict[str, str] | None = None) -> Any:
    from .doc import Col, FitTable
    from .doc import Line as Text  # every text of a report inert (terminal_text), drawn with or without rich
    from .doc import Parts as Group

    cols = {"conv": Col("conversation"), "round": Col("round"), "records": Col("records", right=True), "head": Col("head")}
    t = FitTable(cols, (("conv", "round", "records", "head"), ("conv", "round", "records")), title="published")
    for x in r.rounds:
        t.add_row({"conv": (shorts or {}).get(x.conversation, x.conversation[:8]), "round": f"r{x.number}",
                   "records": x.records, "head": x.head[:12]})
    summary = Text(collect_line(r))
    return Group(t, summary) if r.rounds else Group(summary)


def collect_line(r: CollectResult) -> str:
    """The line under collect's table (all it prints when nothing was published)."""
    return (f"{plural(r.files_read, 'file')} read, {r.files_unchanged} unchanged; {plural(r.records_published, 'new record')} "
            f"in {plural(len(r.rounds), 'conversation')}" + (f"; {plural(len(r.problems), 'warning')}" if r.problems else ""))
