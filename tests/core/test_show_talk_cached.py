"""``asz show CONV --talk K`` reads the whole conversation's window from the assembly cache
(window.whole) that ``asz show`` keeps: the same window and the same output as assembling it
again from the store (window.build), on every corpus conversation; and a whole window shows a
record rewritten after the last new one at its newest version, as its conversation does."""

from __future__ import annotations

import json
from pathlib import Path

from asz_core import ledger, report, window
from asz_core.collect import collect
from asz_core.navigation import Navigator
from asz_core.store import Store
from asz_core.tables import render

from .test_store import _kv, kv  # noqa: F401 - the fixture


def _fields(w: window.Window) -> tuple:
    return (w.spec, w.round, w.cut, w.whole, w.judged, w.before, w.roots, w.streams, w.talks, w.steps, w.cut_records,
            w.captures)


def test_the_cached_window_is_the_assembled_one_and_prints_the_same(mixed) -> None:
    prices = ledger.load_prices()
    shown = 0
    for row in mixed.conversations():
        built, cached = window.build(mixed, row.id), window.whole(mixed, row.id)
        assert _fields(built) == _fields(cached), row.id
        talks = [t.id for t in built.conv.main_talks]
        for k in talks:
            outs = []
            for w in (built, cached):
                head, steps = Navigator(w, mixed).outline(k)
                led = ledger.build(w.conv, prices)
                outs.append((render(report.outline_text(w.conv, head, steps, led), 80),
                             json.dumps(report.outline_json(w.conv, head, steps, led), sort_keys=True, default=str)))
            assert outs[0] == outs[1], (row.id, k)
            shown += 1
    assert shown > 50, shown


def test_a_whole_window_shows_a_record_rewritten_after_the_last_new_one_at_its_newest(tmp_path: Path, kv) -> None:  # noqa: F811
    store = Store.open(tmp_path / "home")
    f = _kv(tmp_path / "c.kv", ("a", 1), ("b", 1))
    collect([f], store, kv)
    _kv(f, ("a", 2), ("b", 1), ("c", 1))
    collect([f], store, kv)
    _kv(f, ("a", 3), ("b", 1), ("c", 1))  # a rewritten again; nothing new after c
    collect([f], store, kv)
    a = next(r for r in store.records("c", 3) if r.key == "a")
    for w in (window.build(store, "c"), window.whole(store, "c")):
        assert window.raw_at(store, "c", a.seq, w.round.number, w.cut, w.captures) == b'{"id": "a", "v": 3}'
    w2 = window.whole(store, "c", "r2")  # the head before: its own newest
    assert window.raw_at(store, "c", a.seq, 2, w2.cut, w2.captures) == b'{"id": "a", "v": 2}'
