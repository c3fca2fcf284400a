"""Summaries kept between runs (ASZ_HOME/cache/ledger.json): what is read back is what the
ledger computes, and a summary is kept only for its head, price file and code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from asz_core.api import load
from asz_core.ledger import for_all, load_prices, summaries, summarize
from asz_core.ledger_report import all_json


@pytest.fixture
def home(corpus_store_copy):
    """A copy of the corpus store: its kept summaries and runs start empty."""
    return corpus_store_copy


def test_kept_summaries_give_what_the_ledger_computes(home) -> None:
    cache = home.path.parent / "cache" / "ledger.json"
    assert not cache.exists()
    cold, file = summaries(store=home)
    assert cache.exists()
    warm, file2 = summaries(store=home)
    ledgers = for_all(store=home, prices=load_prices())
    # the ledger's summaries, with where each conversation happened (a ledger names no project)
    made = [summarize(led, load(led.conversation, store=home)) for led in ledgers]
    for by in (None, "model", "day", "project"):
        want = all_json(made, load_prices().file, by)
        assert all_json(cold, file, by) == want
        assert all_json(warm, file2, by) == want
        of_ledgers = all_json(ledgers, load_prices().file, by)
        if by in ("model", "day"):  # the ledgers themselves give the same
            assert of_ledgers == want
        else:  # the same figures, the rows of a project a ledger does not name aside
            assert {k: v for k, v in of_ledgers.items() if k != "rows"} == {k: v for k, v in want.items() if k != "rows"}
    rows = all_json(cold, file)["rows"]
    assert rows and all(r["project"] == s.project for r, s in zip(rows, cold, strict=True))
    assert any(r["project"] for r in rows)
    assert file2.sha256 == file.sha256 and file2.source == file.source and file2.path == file.path


def test_a_summary_is_kept_for_its_price_file_and_code(home, tmp_path: Path) -> None:
    summaries(store=home)
    cache = home.path.parent / "cache" / "ledger.json"
    n = len(json.loads(cache.read_text())["entries"])
    # the same data, written otherwise: another file, another SHA-256, its own summaries
    other = tmp_path / "p.json"
    doc = json.loads(Path(load_prices().file.path).read_text())
    other.write_text(json.dumps(doc, indent=1))
    got, file = summaries(store=home, prices=str(other))
    assert file.path == str(other)
    assert len(json.loads(cache.read_text())["entries"]) == 2 * n
    # kept summaries of other code are never read
    data = json.loads(cache.read_text())
    for e in data["entries"].values():
        e["total"]["money"] = "999"
    data["code"] = "someone else's"
    cache.write_text(json.dumps(data))
    again, _ = summaries(store=home)
    assert all(s.total.money != 999 for s in again)


def test_the_kept_summaries_are_written_whole_over_a_temp_file_a_killed_run_left(home) -> None:
    import os

    cache = home.path.parent / "cache"
    cache.mkdir()
    stale = cache / f".ledger-{os.getpid()}.tmp"  # a killed run of the same process id left it
    stale.write_text("half a file")
    sums, _ = summaries(store=home)
    data = json.loads((cache / "ledger.json").read_text())
    assert len(data["entries"]) == len(sums) > 0
    assert [p.name for p in cache.iterdir()] == ["ledger.json"]  # nothing else left behind


def test_a_new_round_computes_its_conversations_summary_again(tmp_path: Path) -> None:
    """A kept summary is of one head: a round that lands computes it again, with the new records."""
    from asz_core.collect import collect
    from asz_core.store import Store

    from .helpers import half_then_rest

    f, rest = half_then_rest(tmp_path / "p")
    st = Store.open(tmp_path / "home")
    collect([f], st)
    (first,), _ = summaries(store=st)
    assert (st.path.parent / "cache" / "ledger.json").exists()
    with f.open("ab") as out:
        out.write(rest)
    collect([f], st)
    (kept,), _ = summaries(store=st)
    (fresh,), _ = summaries(store=st, cache=False)
    assert kept.round == 2 and kept.total.calls > first.total.calls
    assert all_json([kept], load_prices().file, None) == all_json([fresh], load_prices().file, None)
    st.close()
