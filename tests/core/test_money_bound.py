"""Money a person can compare (issue 27): the exact price of the known counts, and beside it, in
the same line of every table and total, the lower bound that prices the output floors (the
streaming values of responses whose final usage was never written), marked ``≥``; a count that
is unknown never shows as 0."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path

import pytest
from typer.testing import CliRunner

from asz_core import ledger as L
from asz_core.ledger_report import bound_cell, count_cell, ledger_text, money, tokens_cell
from asz_core.records import Usage
from asz_core.tables import render
from tests.conftest import CLAUDE_CORPUS, need_corpus

# 85 calls, 78 of them with their output known only as a streaming floor (21,090 tokens)
FLOORS = CLAUDE_CORPUS / "crypto590__personal-ai-infrastructure/projects/-Users-coreyyoung-Desktop-Projects-RecruitAI/7273a00d-405b-4bb9-8c9a-933b15b38e44.jsonl"


@pytest.fixture(scope="module")
def floors(tmp_path_factory: pytest.TempPathFactory):
    from asz_core.collect import collect
    from asz_core.store import Store

    need_corpus(FLOORS)
    home = tmp_path_factory.mktemp("bound-home")
    s = Store.open(home)
    collect([FLOORS], s)
    [row] = s.conversations()
    yield s, row.id, home
    s.close()


def test_the_bound_prices_each_floor_as_output(floors) -> None:
    store, cid, _ = floors
    prices = L.load_prices()
    led = L.for_conversation(cid, prices=prices, store=store)
    # Independently of how the ledger prices a floor: each such call priced again with the floor
    # as its output, less its price without it.
    extra = Decimal(0)
    n = 0
    for c in led.calls:
        if c.usage.output is None and c.output_floor:
            u = c.usage
            whole = prices.price(c.model, Usage(u.input, c.output_floor, u.cache_read, u.cache_write, u.cache_write_5m,
                                                u.cache_write_1h), c.ts)
            extra += whole.money - prices.price(c.model, u, c.ts).money
            n += 1
    assert n > 50 and extra > 0
    t = led.total
    assert t.floor_money == extra
    assert t.money_bound == t.money + extra > t.money
    # the known money is untouched by the floors: the sum of the calls priced without them
    assert t.money == sum(prices.price(c.model, c.usage, c.ts).money for c in led.calls)
    # and a summary (the ledger of all) carries the same bound
    [s] = L.summaries(store=store, cache=False)[0]
    assert s.total.money_bound == t.money_bound


def test_every_table_and_total_shows_both_figures_in_one_line(floors) -> None:
    store, cid, _ = floors
    led = L.for_conversation(cid, store=store)
    t = led.total
    want = (money(t.money), f"≥ {money(t.money_bound)}")
    for by in ("talk", "stream", "model", "day", "month"):
        for width in (200, 80):
            text = render(ledger_text(led, by), width)
            total = [ln for ln in text.splitlines() if "total" in ln and "$" in ln]
            assert total and all(w in total[0] for w in want), (by, width, text)
            # what the money figures are, and how many calls' money is of known counts only, said in one note
            said = [ln for ln in text.splitlines() if ln.startswith("money")]
            assert len(said) == 1 and f"({t.incomplete} priced calls with a count unknown)" in " ".join(text.split()), (by, said)
    # a row whose output is all unknown shows its floor marked, never 0
    text = render(ledger_text(led, "talk"), 200)
    k4 = next(ln for ln in text.splitlines() if re.match(r"\W*k4\b", ln))
    assert "≥ 2 " in k4 and " 0 " not in k4.replace("1h 0", "")


def test_cells_never_say_zero_for_what_is_unknown() -> None:
    def tally(*calls: tuple[Usage, int | None]) -> L.Tally:
        t = L.Tally()
        for u, floor in calls:
            t.count(u, floor, _unpriced())
        return t

    unknown = tally((Usage(10, None, 0, 0), None))
    assert count_cell(unknown, "output") == "?" and tokens_cell(unknown) == "≥ 10"
    floored = tally((Usage(10, None, 0, 0), 7), (Usage(1, 5, 0, 0), None))
    assert count_cell(floored, "output") == "≥ 12" and tokens_cell(floored) == "≥ 23"
    known = tally((Usage(10, 0, 0, 0), None))
    assert count_cell(known, "output") == "0"  # a known 0 is a 0
    nothing = tally((Usage(), None))
    assert all(count_cell(nothing, k) == "?" for k in ("input", "output", "cache_read", "cache_write"))
    assert tokens_cell(nothing) == "?" and bound_cell(nothing) == "?"


def test_whole_money_is_shown_unmarked() -> None:
    from asz_core.pricing import CallPrice

    t = L.Tally()
    t.count(Usage(10, 5, 0, 0), None, CallPrice(Decimal("0.5"), (), True))
    assert bound_cell(t) == "$0.50"
    t.count(Usage(10, None, 0, 0), 3, CallPrice(Decimal("0.25"), (), False, floor_money=Decimal("0.125")))
    assert bound_cell(t) == "≥ $0.88"


def _unpriced():
    from asz_core.pricing import CallPrice

    return CallPrice(None, unpriced="no model")


def test_json_and_the_listing_carry_the_bound(floors, monkeypatch: pytest.MonkeyPatch) -> None:
    from asz_core.cli import app

    store, cid, home = floors
    monkeypatch.setenv("ASZ_HOME", str(home))
    led = L.for_conversation(cid, store=store)
    r = CliRunner().invoke(app, ["ledger", cid[:8], "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert Decimal(d["total"]["money_lower_bound"]) == led.total.money_bound
    assert Decimal(d["total"]["unknown_output_floor_money"]) == led.total.floor_money
    r = CliRunner().invoke(app, ["conversations", "--json"])
    [row] = json.loads(r.stdout)
    assert Decimal(row["money_lower_bound"]) == led.total.money_bound
    r = CliRunner().invoke(app, ["show", cid[:8]], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    total = next(ln for ln in r.stdout.splitlines() if ln.startswith("total:"))
    assert f"{money(led.total.money)} (≥ {money(led.total.money_bound)})" in total and "out 0" not in r.stdout
    r = CliRunner().invoke(app, ["ledger"], env={"COLUMNS": "100"})
    assert f"≥ {money(led.total.money_bound)}" in r.stdout, r.stdout


def test_docs_say_the_two_figures_first() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "ledger.md").read_text()
    first = text.split("\n\n")[1]
    assert "lower bound" in first and "≥" in first and "ccusage" in first


def test_the_ledger_of_all_its_blocks_and_a_talks_calls_show_both_figures(floors) -> None:
    """Across all conversations too (by conversation, project, day, month, block) the total holds the
    known money and ``≥`` the bound in one line; and a call of ``asz show --talk`` whose output is
    known only as a floor says ``out ?``, never ``out 0``."""
    from asz_core.blocks import ledger_blocks
    from asz_core.conversations import Filter, ledger_of_all
    from asz_core.ledger_report import all_text, blocks_text
    from asz_core.navigation import outline_of
    from asz_core.report import outline_text

    store, cid, _ = floors
    t = L.for_conversation(cid, store=store).total
    want = (money(t.money), f"≥ {money(t.money_bound)}")
    assert t.money_bound > t.money
    tables = {by: all_text(ledger_of_all(Filter(), by, store=store)) for by in (None, "project", "day", "month", "model")}
    tables["block"] = blocks_text(ledger_blocks(Filter(), store=store))
    for by, thing in tables.items():
        for width in (200, 80):
            text = render(thing, width)
            total = [ln for ln in text.splitlines() if re.match(r"│ total ", ln)]
            assert total and all(w in total[0] for w in want), (by, width, text)
    led = L.for_conversation(cid, store=store)
    floored = next(c for c in led.calls if c.usage.output is None and c.output_floor)
    conv, head, steps = outline_of(cid, floored.talk, store=store)
    text = render(outline_text(conv, head, steps, led), 200)
    row = next(ln for ln in text.splitlines() if f"│ {floored.step} " in ln)
    assert "out ?" in row and "out 0" not in text, row
    assert f"{money(floored.price.money)} (≥ {money(floored.price.money + floored.price.floor_money)})" in row, row  # its bound beside it
