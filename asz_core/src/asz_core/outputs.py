"""What the commands people type daily print, from their parsed options: ``asz collect``, ``asz
ledger``, ``asz conversations``, ``asz show`` and ``asz runs``, each one function giving the
table (a rich renderable) or the JSON (plain data) to print.

Both entry points call these: the full CLI (``cli.py``, typer) after its own parsing, and the
lean one (``main.py``), which parses these commands without typer and pydantic. So the two print
the same bytes by construction, and a renderer's change reaches both. Each function imports what
its own output needs when it is called (a table: rich and that table's renderer; JSON: no rich),
so a command pays only for its own imports.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    from .collect import CollectResult


def collect(paths: Sequence[Path] | None, runtime: str | None, json: bool,
            out: Console | None = None) -> tuple[CollectResult, Any]:
    """Collect, then what ``asz collect`` prints. ``out``: the console a table goes to (its
    progress bar is shown there while collect reads, on a terminal)."""
    from .api import collect_paths

    if json:
        from .collect import collect_json

        result = collect_paths(paths or None, runtime=runtime)
        return result, collect_json(result)
    from .collect_report import collect_line, collect_table, could_be_a_terminal, late_progress_bar

    def bar_console() -> Console:
        from .tables import console

        return out or console()

    with late_progress_bar(bar_console, terminal=(lambda: True) if out is not None else could_be_a_terminal) as progress:
        result = collect_paths(paths or None, runtime=runtime, progress=progress)
    if not result.rounds:  # nothing published: one line, no table (and no rich, where it fits: plain.emit)
        from .plain import PlainLine

        return result, PlainLine(collect_line(result))
    from .short_ids import short_ids_of

    return result, collect_table(result, short_ids_of([x.conversation for x in result.rounds]))


def ledger(conversation: str | None, head: str | None, by: str | None, since: str | None, until: str | None,
           timezone: str | None, projects: Sequence[str], runtimes: Sequence[str], json: bool,
           prices: str | None) -> Any:
    """What ``asz ledger`` prints: one conversation's ledger, or the ledger of all, cut ``by`` (``block``:
    the ledger of all in billing blocks)."""
    from . import conversations as convs
    from .gcpause import no_gc

    f = convs.Filter.of(since, until, timezone, projects, runtimes)
    with no_gc():  # many objects, few cycles: the cycle collector only costs time here
        if conversation:
            led = convs.ledger_of_one(conversation, head, f, prices=prices)
            if json:
                from .ledger_data import ledger_json

                return ledger_json(led, by, f.tz)
            from .ledger_report import ledger_text

            return ledger_text(led, by, f.tz)
        if by == "block":
            from . import blocks

            bl = blocks.ledger_blocks(f, prices=prices)
            if json:
                from .ledger_data import blocks_json

                return blocks_json(bl)
            from .ledger_report import blocks_text

            return blocks_text(bl, f.tz)
        al = convs.ledger_of_all(f, by, prices=prices)
        if json:
            from .ledger_data import all_ledger_json

            return all_ledger_json(al)
        from .ledger_report import all_text

        return all_text(al)


def conversations(since: str | None, until: str | None, timezone: str | None, projects: Sequence[str],
                  runtimes: Sequence[str], last: int | None, json: bool, wide: bool = False) -> Any:
    """What ``asz conversations`` prints (``wide``: every word of each project and first input)."""
    from . import conversations as convs
    from . import report

    lst = convs.listing(convs.Filter.of(since, until, timezone, projects, runtimes), last=last)
    return report.listing_json(lst) if json else report.listing_table(lst, wide)


def show(conversation: str, head: str | None, talk: str | None, timezone: str | None, json: bool,
         operations: bool) -> Any:
    """What ``asz show`` prints: a conversation's talks, one talk's outline (``talk``), or its file
    operations (``operations``)."""
    from . import conversations as convs
    from . import report, times

    tz = times.zone(timezone)
    if talk:
        o = convs.show_talk(conversation, talk, head)
        return (report.outline_json(o.conversation, o.talk, o.steps, o.ledger) if json
                else report.outline_text(o.conversation, o.talk, o.steps, o.ledger, tz))
    if operations:
        from .api import load
        from .operations import of_conversation

        conv = load(conversation, head)
        ops = of_conversation(conv)
        return report.operations_json(conv, ops) if json else report.operations_text(conv, ops)
    s = convs.show(conversation, head)
    return report.show_json(s.conversation, s.ledger) if json else report.show_text(s.conversation, s.ledger, tz)


def runs(conversation: str | None, timezone: str | None, json: bool) -> Any:
    """What ``asz runs`` prints: the runs under ASZ_HOME, newest first."""
    from . import times
    from .judge import runs as judge_runs
    from .judge import runs_report

    rows = judge_runs.list_runs(conversation)
    if conversation and not rows:  # a conversation the store does not hold is said, not listed as having no runs
        from .store import Store

        st = Store.open()
        try:
            st.resolve(conversation)
        finally:
            st.close()
    if json:
        return runs_report.runs_json(rows)
    return runs_report.runs_text(rows, _short_ids(), times.zone(timezone), conversation)


def _short_ids() -> dict[str, str]:
    from .short_ids import short_ids  # the store alone, not assembly and the ledger

    return short_ids()
