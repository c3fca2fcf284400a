"""What ``asz collect`` shows a person: a progress bar while it reads (on a terminal), then the
rounds it published as a table. Apart from the other reports so that a collect's table needs only
rich's console and table, not the modules that assemble and price conversations."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console, Group

from .collect import CollectResult
from .tables import Col, FitTable, plural
from .tables import InertText as Text  # every text of a report inert (terminal_text)


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


def collect_table(r: CollectResult, shorts: dict[str, str] | None = None) -> Group:
    cols = {"conv": Col("conversation"), "round": Col("round"), "records": Col("records", right=True), "head": Col("head")}
    t = FitTable(cols, (("conv", "round", "records", "head"), ("conv", "round", "records")), title="published")
    for x in r.rounds:
        t.add_row({"conv": (shorts or {}).get(x.conversation, x.conversation[:8]), "round": f"r{x.number}",
                   "records": x.records, "head": x.head[:12]})
    summary = Text(
        f"{plural(r.files_read, 'file')} read, {r.files_unchanged} unchanged; {plural(r.records_published, 'new record')} "
        f"in {plural(len(r.rounds), 'conversation')}" + (f"; {plural(len(r.problems), 'warning')}" if r.problems else "")
    )
    return Group(t, summary) if r.rounds else Group(summary)
