"""Summaries kept between runs (ASZ_HOME/cache/ledger/, sixteen files by conversation): what is
read back is what the ledger computes, a summary is kept only for its head, price file and code,
and a new round writes its conversation's file alone."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from asz_core.errors import AszError
from asz_core.summary_keep import SHARDS, shard_of

from asz_core.api import load
from asz_core.ledger import for_all, load_prices, summaries, summarize
from asz_core.ledger_report import all_json


@pytest.fixture
def home(corpus_store_copy):
    """A copy of the corpus store: its kept summaries and runs start empty."""
    return corpus_store_copy


def kept(home) -> dict[str, dict[str, list]]:
    """Every kept summary: price file sha -> conversation -> [head, summary], from all files."""
    out: dict[str, dict[str, list]] = {}
    for f in (home.path.parent / "cache" / "ledger").glob("*.json"):
        for sha, convs in _read(home, f)["summaries"].items():
            out.setdefault(sha, {}).update(convs)
    return out


def _read(home, f: Path) -> dict:
    """A kept file's JSON, its signature checked (asz_core.signed)."""
    from asz_core import signed

    got = signed.read(home.path.parent, f, 1 << 30)
    assert got is not None, f
    return json.loads(got)


def _rewrite(home, f: Path, data: dict) -> None:
    """A kept file written again as asz writes it, signed: what the ledger then does with what it
    holds is its reading's, not the signature's (a kept file of asz's own that is damaged)."""
    from asz_core import signed

    assert signed.write(home.path.parent, f, json.dumps(data).encode())


def test_kept_summaries_give_what_the_ledger_computes(home) -> None:
    cache = home.path.parent / "cache" / "ledger"
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
    [n] = [len(v) for v in kept(home).values()]
    # the same data, written otherwise: another file, another SHA-256, its own summaries
    other = tmp_path / "p.json"
    doc = json.loads(Path(load_prices().file.path).read_text())
    other.write_text(json.dumps(doc, indent=1))
    got, file = summaries(store=home, prices=str(other))
    assert file.path == str(other)
    assert sorted(len(v) for v in kept(home).values()) == [n, n]
    # kept summaries of other code are never read
    for f in (home.path.parent / "cache" / "ledger").glob("*.json"):
        data = _read(home, f)
        for convs in data["summaries"].values():
            for _, e in convs.values():
                e["total"]["money"] = "999"
        data["code"] = "someone else's"
        _rewrite(home, f, data)
    again, _ = summaries(store=home)
    assert again and all(s.total.money != 999 for s in again)


def test_the_kept_summaries_are_written_whole_over_a_temp_file_a_killed_run_left(home) -> None:
    import os

    cache = home.path.parent / "cache" / "ledger"
    cache.mkdir(parents=True)
    stale = cache / f".3.json-{os.getpid()}.tmp"  # a killed run of the same process id left it (asz_core.signed)
    stale.write_text("half a file")
    (cache.parent / "ledger.json").write_text("{}")  # the one file earlier versions kept
    sums, _ = summaries(store=home)
    assert sum(len(v) for v in kept(home).values()) == len(sums) > 0
    written = sorted(p.name for p in cache.iterdir())
    assert written == sorted(f"{shard_of(s.conversation)}.json" for s in {shard_of(s.conversation): s for s in sums}.values())
    assert set(written) <= {f"{x}.json" for x in SHARDS}  # nothing else left behind
    assert not (cache.parent / "ledger.json").exists()


def test_a_new_round_computes_its_conversations_summary_again(tmp_path: Path) -> None:
    """A kept summary is of one head: a round that lands computes it again, with the new records."""
    from asz_core.collect import collect
    from asz_core.store import Store

    from .helpers import half_then_rest

    f, rest = half_then_rest(tmp_path / "p")
    st = Store.open(tmp_path / "home")
    collect([f], st)
    (first,), _ = summaries(store=st)
    assert (st.path.parent / "cache" / "ledger" / f"{shard_of(first.conversation)}.json").exists()
    with f.open("ab") as out:
        out.write(rest)
    collect([f], st)
    (again,), _ = summaries(store=st)
    (fresh,), _ = summaries(store=st, cache=False)
    assert again.round == 2 and again.total.calls > first.total.calls
    assert all_json([again], load_prices().file, None) == all_json([fresh], load_prices().file, None)
    st.close()


def test_a_new_round_writes_its_conversations_file_alone(tmp_path: Path) -> None:
    """A day's growth rewrites the kept file of the conversation that grew, not the history's:
    the others are left as they are (same file, same time), and the one that grew holds one
    summary of it, at its new head, in place of the old one."""
    from asz_core.collect import collect
    from asz_core.store import Store

    from .helpers import CLAUDE_CORPUS, half_then_rest

    f, rest = half_then_rest(tmp_path / "p")
    others = sorted((x for x in CLAUDE_CORPUS.rglob("*.jsonl") if x.name != f.name and x.parent.name != "subagents"),
                    key=lambda x: x.stat().st_size)[:8]
    st = Store.open(tmp_path / "home")
    collect([f, *others], st)
    sums, _ = summaries(store=st)
    grown = next((s.conversation for s in sums if s.conversation == f.stem), None)
    assert grown is not None, [s.conversation for s in sums]
    folder = st.path.parent / "cache" / "ledger"
    before = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in folder.glob("*.json")}
    assert len(before) > 1  # the conversations fall in several files
    with f.open("ab") as out:
        out.write(rest)
    collect([f, *others], st)
    after_sums, _ = summaries(store=st)
    after = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in folder.glob("*.json")}
    mine = f"{shard_of(grown)}.json"
    assert after[mine] != before[mine]
    assert {k: v for k, v in after.items() if k != mine} == {k: v for k, v in before.items() if k != mine}
    [(head, _)] = [v for sha in kept(st).values() for c, v in sha.items() if c == grown]
    now = {r.id: r.head.head for r in st.conversations() if r.head is not None}
    assert head == now[grown] != next(s.head for s in sums if s.conversation == grown)
    assert len(after_sums) == len(sums)
    st.close()


def test_a_damaged_kept_summary_is_computed_again_or_said(home) -> None:
    """What the cache holds is read as data: a kept summary of another shape is computed again;
    a damaged part read only when asked for (its models) is a clear error, never a traceback."""
    sums, _ = summaries(store=home)
    folder = home.path.parent / "cache" / "ledger"
    victim = sums[0].conversation
    path = folder / f"{shard_of(victim)}.json"
    data = _read(home, path)
    [convs] = data["summaries"].values()
    convs[victim][1]["total"] = {"calls": "many"}
    _rewrite(home, path, data)
    again, _ = summaries(store=home)
    assert [s.total for s in again] == [s.total for s in sums]  # computed again: the same figures
    data = _read(home, path)
    [convs] = data["summaries"].values()
    convs[victim][1]["by_model"] = "{not json"
    _rewrite(home, path, data)
    broken, _ = summaries(store=home)
    mine = next(s for s in broken if s.conversation == victim)
    assert mine.by_day == next(s for s in sums if s.conversation == victim).by_day
    with pytest.raises(AszError, match="cache/ledger is damaged"):
        dict(mine.by_model)
    convs[victim][1]["by_model"] = json.dumps({"a-model": {"calls": "many"}})  # JSON, of another shape
    _rewrite(home, path, data)
    broken, _ = summaries(store=home)
    with pytest.raises(AszError, match="cache/ledger is damaged"):
        dict(next(s for s in broken if s.conversation == victim).by_model)
