"""No figure of the ledger changes when collect and the ledger are made faster (issue 16): every
conversation of the corpus (all four runtimes), each of its cuts (talk, stream, model, day) and
the totals of all, against ledger_figures.json, written by the code before that work (commit
7c9d9c7, and the same at dc14df1). The figures are the tallies (calls, tokens, unknown counts, money and its parts,
unpriced calls), not the JSON's layout; the ledger of all (each conversation's summary, computed
or kept) gives the same as each conversation's own.

A change that is meant to change figures (a runtime's rule fixed) writes the file again, and its
diff shows every figure that moved:

    python tests/core/test_ledger_figures.py --write
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import orjson
import pytest

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "ledger_figures.json"
CORPUS = Path(os.environ.get("ASZ_CORPUS") or HERE.parents[1].parent / "shared" / "corpus")
RUNTIMES = ("claude-code", "codex", "kiro", "langsmith")
CUTS = ("talk", "stream", "model", "day")


def _collected(home: Path) -> Any:
    from asz_core.collect import collect
    from asz_core.store import Store

    store = Store.open(home)
    for folder in RUNTIMES:
        collect([CORPUS / folder], store)
    return store


def figures(store: Any) -> dict[str, Any]:
    """Every figure the ledger shows of the store's conversations, by conversation and cut."""
    from asz_core import ledger as L

    prices = L.load_prices()
    out: dict[str, Any] = {}
    for row in store.conversations():
        if row.head is None:
            continue
        led = L.for_conversation(row.id, prices=prices, store=store)
        d: dict[str, Any] = {"round": led.round, "head": led.head, "total": L._tally_dump(led.total)}
        for cut in CUTS:
            d[cut] = {r.key: L._tally_dump(r.tally) for r in L.rows(led, cut)}
        out[row.id] = d
    return out


def _dump(figs: dict[str, Any]) -> bytes:
    # One conversation a line, so a diff of the file names what moved.
    lines = [orjson.dumps(k) + b": " + orjson.dumps(v, option=orjson.OPT_SORT_KEYS) for k, v in sorted(figs.items())]
    return b"{\n" + b",\n".join(lines) + b"\n}\n"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    if not all((CORPUS / f).is_dir() for f in RUNTIMES):
        pytest.skip(f"corpus not found at {CORPUS}")
    s = _collected(tmp_path_factory.mktemp("figures"))
    yield s
    s.close()


def test_every_figure_of_the_ledger_is_what_it_was(store: Any) -> None:
    want = orjson.loads(GOLDEN.read_bytes())
    got = orjson.loads(_dump(figures(store)))
    assert set(got) == set(want)
    moved = [k for k in want if got[k] != want[k]]
    assert not moved, f"figures moved in {len(moved)} conversations, e.g. {moved[:3]}"


def _summary_figures(store: Any, cache: bool) -> dict[str, Any]:
    from asz_core import ledger as L

    sums, _ = L.summaries(store=store, cache=cache)
    return {s.conversation: {"total": L._tally_dump(s.total), "model": {k: L._tally_dump(v) for k, v in s.by_model.items()},
                             "day": {k: L._tally_dump(v) for k, v in s.by_day.items()}} for s in sums}


def test_the_summaries_computed_kept_and_read_back_give_the_same_figures(store: Any) -> None:
    # The ledger of all reads each conversation's summary (computed, or kept by an earlier run):
    # the same figures as the conversation's own ledger.
    want = {k: {"total": v["total"], "model": v["model"], "day": v["day"]} for k, v in orjson.loads(GOLDEN.read_bytes()).items()}
    assert _summary_figures(store, cache=False) == want
    assert _summary_figures(store, cache=True) == want  # computed and kept
    assert _summary_figures(store, cache=True) == want  # read back


def test_summaries_split_with_a_forked_child_give_the_same_figures(store: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from asz_core import ledger, workers

    if not workers.can_fork():
        pytest.skip("no fork here (or one CPU): the summaries are computed in one process")
    monkeypatch.setattr(ledger, "PARALLEL_RECORDS", 0)
    monkeypatch.setenv("ASZ_PROCESSES", "2")  # split whatever the machine's load
    pids: set[int] = set()
    real = ledger.summary_of

    def noting(view: Any, prices: Any) -> Any:
        pids.add(os.getpid())
        return real(view, prices)

    monkeypatch.setattr(ledger, "summary_of", noting)
    want = {k: {"total": v["total"], "model": v["model"], "day": v["day"]} for k, v in orjson.loads(GOLDEN.read_bytes()).items()}
    assert _summary_figures(store, cache=False) == want
    assert pids == {os.getpid()}  # the parent did its half; the child's half came back through the pipe
    assert len(ledger.summaries(store=store, cache=False)[0]) == len(want)


if __name__ == "__main__":
    if "--write" not in sys.argv:
        raise SystemExit(__doc__)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["ASZ_HOME"] = tmp
        s = _collected(Path(tmp))
        GOLDEN.write_bytes(_dump(figures(s)))
        s.close()
    print(f"wrote {GOLDEN}")
