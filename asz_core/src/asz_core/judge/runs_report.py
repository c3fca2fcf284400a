"""``asz runs``: the runs as a table for people and as JSON for programs."""

from __future__ import annotations

import datetime as dt
from typing import Any

from attrs import asdict
from ..money import of_amount
from ..tables import Col, FitTable, plural, when, zone_label
from ..doc import Line as Text  # every text of a report inert (terminal_text), drawn with or without rich
from ..doc import Parts as Group
from .runs import CONSUMED_KEYS, RunRow


def score_text(rounded: str | None) -> str:
    """A score (close.json's ``rounded``, 4 places) to 2 places, as every table of a run shows
    it (``asz judge -show``, ``asz runs``); —: nothing to weigh."""
    return "—" if rounded is None else f"{float(rounded):.2f}"


def runs_json(rows: list[RunRow]) -> list[dict[str, Any]]:
    return [asdict(r) for r in rows]


_COLS = {
    "run": Col("run"), "conv": Col("conversation"), "started": Col("started"), "head": Col("head"),
    "window": Col("window", wrap=True, min=8), "status": Col("status"), "evaluators": Col("evaluators", wrap=True, min=12),
    "consumed": Col("judging consumed", wrap=True, min=14), "tokens": Col("tokens", right=True),
    "cost": Col("judging cost", right=True),
    "scores": Col("scores", wrap=True, min=14),
}
_LAYOUTS = (
    ("run", "conv", "started", "head", "window", "status", "evaluators", "consumed", "cost", "scores"),
    ("run", "conv", "head", "window", "status", "evaluators", "tokens", "cost", "scores"),
    ("run", "conv", "status", "tokens", "cost", "scores"),
    ("run", "conv", "status", "tokens", "scores"),
    ("run", "status", "cost", "scores"),
    ("run", "status", "tokens"),
)


def runs_text(rows: list[RunRow], shorts: dict[str, str], tz: dt.tzinfo | None = None, of: str | None = None) -> Group | Text:
    if not rows:
        return Text(f"no runs of {of} yet: `asz judge {of}` makes one" if of else "no runs yet: `asz judge CONV` makes one",
                    style="dim")
    cols = {**_COLS, "started": Col("started", note=f"times are {zone_label(tz)}")}  # said where a time is drawn
    t = FitTable(cols, _LAYOUTS, title=f"{plural(len(rows), 'run')}, newest first",
                 notes=["`asz judge -show RUN` renders one; failed: closed, a stage failed "
                        "(-show says which and what to do); running: not closed and its process alive; stopped: not "
                        "closed and its process gone",
                        "scores weigh money (tokens where a call of the targets is unpriced; --json says which); "
                        "—: nothing to weigh" if any(r.scores for r in rows) else "",
                        *(f"run {r.run}: {why} (unreadable: not used)" for r in rows for why in r.unreadable.values()),
                        *(f"run {r.run}: {p}" for r in rows for p in r.problems)])
    for r in rows:
        c = r.consumed
        tokens = sum(int(c.get(k) or 0) for k in CONSUMED_KEYS)
        t.add_row({"run": r.run, "conv": shorts.get(r.conversation, r.conversation[:8]), "started": when(r.started, tz),
                   "head": r.head or "—", "window": r.window or "—", "status": r.status,
                   "evaluators": ", ".join(r.evaluators) or "—",
                   "consumed": f"{plural(c.get('requests', 0), 'request')}; in {c.get('input', 0):,} · out {c.get('output', 0):,} · "
                               f"cache r {c.get('cache_read', 0):,} · cache w {c.get('cache_write', 0):,}",
                   "tokens": f"{tokens:,}",
                   "cost": "—" if r.judging_cost is None else of_amount(r.judging_cost),
                   "scores": ", ".join(f"{k} {score_text(v)}" for k, v in r.scores.items()) or "—"})
    return Group(t)
