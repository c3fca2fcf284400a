"""collect's progress bar is drawn only once a collect has run a while: a day's collect (a few
tenths of a second) shows no bar and needs no rich; a long one shows it as before."""

from __future__ import annotations

import io
import time

from asz_core.collect_report import late_progress_bar
from asz_core.tables import console


def _terminal() -> tuple[object, io.StringIO]:
    buf = io.StringIO()
    return console(file=buf, force_terminal=True, width=80), buf


def test_a_short_collect_draws_no_bar_and_makes_no_console() -> None:
    made: list[object] = []

    def make() -> object:
        made.append(1)
        return _terminal()[0]

    with late_progress_bar(make, after=60) as update:
        for i in range(50):
            update(i * 1000, 50_000, f"f{i}.jsonl")
    assert made == []


def test_a_long_collect_draws_its_bar() -> None:
    con, buf = _terminal()
    with late_progress_bar(lambda: con, after=0.05) as update:
        update(0, 10_000_000, "a.jsonl")  # before the wait: nothing drawn
        time.sleep(0.1)
        update(5_000_000, 10_000_000, "b.jsonl")
        update(10_000_000, 10_000_000, "c.jsonl")
    out = buf.getvalue()
    assert "collect" in out and "10.0 MB" in out, out
