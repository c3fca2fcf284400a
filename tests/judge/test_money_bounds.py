"""The lower bound beside the known money in close.json (docs/ledger.md, "Money"): each target's
cost and the judging's (each stage's and the run's) carry ``at_least`` where some call's count is
unknown or known only as a streaming floor, priced as the ledger prices it (``CallPrice.at_least``),
and -show, --brief, ``asz runs`` and report.html write both figures in the one format."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from asz_core import ledger, window
from asz_core.judge import runner
from asz_core.money import bound, dollars
from asz_core.records import USAGE_TYPES, Usage

from .conftest import inputs_of
from .test_target_cost import SPOTTER, plausible_answer, run_targets

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "scripted-5e1f0c2a.yaml"
HAIKU = "claude-haiku-4-5-20251001"


def _same(written: str, exact: Decimal) -> bool:
    """close.json's money (rounded once, half-even, to its places) is the exact sum's."""
    return Decimal(written) == exact.quantize(Decimal(written))


def _close(run: Path) -> dict[str, Any]:
    return json.loads((run / "close.json").read_text())


def _ledger_sums(store: Any, cid: str, steps: set[str]) -> tuple[Decimal, Decimal, bool]:
    """The ledger's own figures for these calls: known money, lower bound, whole."""
    led = ledger.build(window.build(store, cid).conv, ledger.load_prices(None))
    t = ledger.Tally()
    for c in led.calls:
        if c.step in steps:
            t.add(c)
    return t.money, t.money_bound, t.money_complete


def test_a_targets_cost_carries_the_ledgers_bound_on_the_example(store: Any) -> None:
    from asz_core.collect import collect

    collect([ROOT / "examples" / "claude-code"], store)
    run = runner.judge(runner.JudgeOptions("5e1f0c2a", evaluator=f"scripted:{EXAMPLE}"), store=store).path
    st = _close(run)["statement"]
    calls = json.loads((run / "call-costs.json").read_text())["calls"]
    for t in st["targets"]:
        mine = {c["step"] for c in calls if any(x["target"] == t["id"] for x in c["to"])}
        money, at_least, whole = _ledger_sums(store, "5e1f0c2a", mine)
        cost = t["cost"]["total"]
        assert Decimal(cost["money"]) == money.quantize(Decimal(cost["money"]))
        if whole:  # t1: every count known, the money exact and no bound
            assert cost["at_least"] is None
        else:  # t2: s28's output known only by its floor of 4 tokens
            assert Decimal(cost["at_least"]) == at_least.quantize(Decimal(cost["at_least"])) and at_least > money
    assert {t["id"]: t["cost"]["total"]["at_least"] is None for t in st["targets"]} == {"t1": True, "t2": False}
    # what a person reads: the known figure and the bound beside it, in the one format
    t2 = next(t for t in st["targets"] if t["id"] == "t2")["cost"]["total"]
    shown = f"{dollars(t2['money'])} ({bound(t2['at_least'])})"
    from asz_core.judge import report_html
    from asz_core.judge.statement_text import statement_text
    from asz_core.tables import render

    assert shown in render(statement_text(st), 160)
    page = (run / "report.html").read_text() if (run / "report.html").exists() else report_html.write(run, store).read_text()
    assert f'data-at-least="{t2["at_least"]}"' in page and shown in page


def _priced_script(tmp_path: Path, cut: str) -> Path:
    """The example's script with its calls made by a priced model: the first request's output
    unknown (``cut=output``), or its usage never said (``cut=usage``)."""
    y = YAML()
    d = y.load(EXAMPLE.read_text())
    for e in d["calls"]:
        e["model"] = HAIKU
    first = d["calls"][0]["requests"][0]
    if cut == "output":
        del first["usage"]["output"]
    else:
        first["usage"] = None
    out = tmp_path / f"priced-{cut}.yaml"
    with out.open("w") as f:
        y.dump(d, f)
    return out


def _requests(run: Path) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for f in sorted((run / "calls").rglob("requests.jsonl")):
        stage = f.relative_to(run / "calls").parts[0]
        out += [(stage, json.loads(line)) for line in f.read_text().splitlines()]
    return out


def _priced(q: dict[str, Any], prices: Any, ts: str) -> Any:
    if not q.get("said", True):
        return None
    return prices.price(q["model"], Usage(**{k: q.get(k) for k in USAGE_TYPES}), ts)


def test_judging_money_has_its_bound_where_a_request_count_is_unknown(store: Any, tmp_path: Path) -> None:
    from asz_core.collect import collect

    collect([ROOT / "examples" / "claude-code"], store)
    prices = ledger.load_prices(None)
    for cut in ("output", "usage"):
        run = runner.judge(runner.JudgeOptions("5e1f0c2a", evaluator=f"scripted:{_priced_script(tmp_path, cut)}"),
                           store=store).path
        close = _close(run)
        j = close["statement"]["judging"]
        started = {s: json.loads((run / "stages" / f"{s}.json").read_text())["run"]["started"] for s in j["stages"]}
        got = [(s, _priced(q, prices, started[s])) for s, q in _requests(run)]
        for s, a in j["stages"].items():
            mine = [p for t, p in got if t == s]
            whole = all(p is not None and p.complete for p in mine)
            if whole:
                assert a["at_least"] is None and _same(a["money"], sum(p.money for p in mine))
                continue
            assert s == "targets"  # the script's first call is the targets stage's
            bound_by_hand = sum(p.at_least for p in mine if p is not None)
            assert Decimal(a["at_least"]) == bound_by_hand.quantize(Decimal(a["at_least"]))
            if cut == "usage":  # a request never said: no exact money, the bound of the others
                assert a["money"] is None and a["unpriced"] == 1
            else:
                assert _same(a["money"], sum(p.money for p in mine))
        assert j["total"]["at_least"] is not None
        from asz_core.judge.runs import list_one
        from asz_core.judge.runs_report import runs_text
        from asz_core.tables import render

        row = list_one(run)
        assert row.judging_cost == j["total"]
        assert bound(j["total"]["at_least"]) in render(runs_text([row], {}), 200)


def test_a_corpus_targets_cost_carries_the_ledgers_output_floors(corpus_store: Any, tmp_path: Path) -> None:
    led = ledger.build(window.build(corpus_store, SPOTTER).conv, ledger.load_prices(None))
    assert any(c.price.floor_money for c in led.calls), "the conversation has calls with output floors"
    path = run_targets(corpus_store, tmp_path, SPOTTER, plausible_answer(inputs_of(corpus_store, SPOTTER)))
    st = _close(path)["statement"]
    calls = json.loads((path / "call-costs.json").read_text())["calls"]
    floored = 0
    for t in st["targets"]:
        mine = {c["step"] for c in calls if c["to"] and all(x["target"] == t["id"] for x in c["to"])}
        if any(len(c["to"]) > 1 and any(x["target"] == t["id"] for x in c["to"]) for c in calls):
            continue  # a shared call's share is not a whole call of the ledger
        money, at_least, whole = _ledger_sums(corpus_store, SPOTTER, mine)
        cost = t["cost"]["total"]
        assert Decimal(cost["money"]) == money.quantize(Decimal(cost["money"])), t["id"]
        if whole:
            assert cost["at_least"] is None, t["id"]
        else:
            assert Decimal(cost["at_least"]) == at_least.quantize(Decimal(cost["at_least"])), t["id"]
            floored += at_least > money
    assert floored, "some target's calls have output floors"


def test_compare_writes_the_judgings_bound_beside_its_money(store: Any, tmp_path: Path) -> None:
    """``asz compare`` of two runs whose judging has an output unknown: each run's judging cost, and
    each stage's, as the known money with ``≥`` the bound beside it, where close.json has one."""
    from asz_core.collect import collect
    from asz_core.judge.compare import compare
    from asz_core.judge.compare_report import compare_text
    from asz_core.tables import render

    collect([ROOT / "examples" / "claude-code"], store)
    runs = [runner.judge(runner.JudgeOptions("5e1f0c2a", evaluator=f"scripted:{_priced_script(tmp_path, 'output')}"),
                         store=store).path for _ in range(2)]
    text = " ".join(render(compare_text(compare(runs)), 240).split())
    for run in runs:
        j = _close(run)["statement"]["judging"]
        assert j["total"]["at_least"] is not None and Decimal(j["total"]["at_least"]) >= Decimal(j["total"]["money"])
        assert f"{dollars(j['total']['money'])} ({bound(j['total']['at_least'])}), {j['total']['tokens']:,} tokens" in text
        t = j["stages"]["targets"]
        assert f"targets: {dollars(t['money'])} ({bound(t['at_least'])})" in text
        whole = j["stages"]["achievement"]
        assert whole["at_least"] is None and f"achievement: {dollars(whole['money'])}, " in text  # whole: unmarked
