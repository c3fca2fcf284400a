"""`asz ledger --by block` (5-hour usage windows, as ccusage's blocks) and `--by month`."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pytest
from typer.testing import CliRunner

from asz_core.blocks import TimedCall, blocks, burn
from asz_core.pricing import CallPrice
from asz_core.records import Usage

T0 = dt.datetime(2025, 3, 1, 9, 37, tzinfo=dt.UTC)


def call(minutes: float, tokens: int = 100, money: str = "0.01", output: int | None = 10, floor: int | None = None,
         model: str = "m") -> TimedCall:
    return TimedCall(T0 + dt.timedelta(minutes=minutes), model, Usage(tokens, output, 0, 0), floor,
                     CallPrice(Decimal(money), (), output is not None,
                               floor_money=Decimal("0.001") if floor and output is None else Decimal(0)))


def test_a_block_is_five_hours_from_the_hour_of_its_first_call() -> None:
    got = blocks([call(0), call(200), call(5 * 60 - 37 + 1)], T0 + dt.timedelta(days=9))  # 14:01: past 14:00
    assert [(b.start.hour, b.gap, b.tally.calls) for b in got] == [(9, False, 2), (14, False, 1)]
    assert got[0].end == dt.datetime(2025, 3, 1, 14, 0, tzinfo=dt.UTC) and got[0].last == T0 + dt.timedelta(minutes=200)


def test_a_call_more_than_five_hours_after_the_last_opens_a_block_after_a_gap() -> None:
    got = blocks([call(0), call(60), call(60 + 5 * 60 + 1), call(60 + 5 * 60)], T0 + dt.timedelta(days=9))  # any order
    # 10:37 then 15:37 (exactly five hours after: the same gap rule) and 15:38: the start rule opens a block at 15:00
    assert [(b.start.strftime("%H:%M"), b.gap) for b in got] == [("09:00", False), ("15:00", False)]
    got = blocks([call(0), call(60), call(60 + 6 * 60)], T0 + dt.timedelta(days=9))
    assert [(b.start.strftime("%H:%M"), b.end.strftime("%H:%M"), b.gap) for b in got] == [
        ("09:00", "14:00", False), ("15:37", "16:37", True), ("16:00", "21:00", False)]
    assert got[1].tally.calls == 0


def test_the_active_block_has_a_burn_rate_and_a_projection() -> None:
    calls = [call(0, 1000, "0.10"), call(30, 1000, "0.10", output=None, floor=50), call(60, 1000, "0.10")]
    now = T0 + dt.timedelta(minutes=90)  # 11:07; the block runs 09:00-14:00
    [b] = blocks(calls, now)
    assert b.active
    r = burn(b, now)
    assert r is not None
    tokens = 3000 + 20 + 50  # inputs, known outputs, the floor
    assert b.tokens() == tokens and r.tokens_per_minute == pytest.approx(tokens / 60)
    assert r.money_per_hour == Decimal("0.30") and r.bound_per_hour == Decimal("0.301")
    left = (b.end - now).total_seconds() / 60
    assert r.remaining_minutes == round(left) == 173
    assert r.projected_tokens == round(tokens + tokens / 60 * 173)
    assert r.projected_money == Decimal("0.30") + Decimal("0.30") / 60 * 173
    # five hours after its last call, or once its end passed, it is no longer active: no rate
    for later in (T0 + dt.timedelta(minutes=60 + 5 * 60), b.end + dt.timedelta(seconds=1)):
        [b] = blocks(calls, later)
        assert not b.active and burn(b, later) is None


def test_blocks_of_the_corpus_hold_every_timed_call_once(corpus_store, monkeypatch: pytest.MonkeyPatch) -> None:
    from asz_core.cli import app

    monkeypatch.setenv("ASZ_HOME", str(corpus_store.path.parent))
    run = CliRunner()
    r = run.invoke(app, ["ledger", "--by", "block", "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    real = [b for b in d["blocks"] if not b["gap"]]
    total = json.loads(run.invoke(app, ["ledger", "--json", "--by", "day"]).stdout)
    timed = [x for x in total["rows"] if x["key"] != "(no time)"]
    assert sum(b["tally"]["calls"] for b in real) == sum(x["tally"]["calls"] for x in timed)
    assert sum(Decimal(b["tally"]["money"]) for b in real) == sum(Decimal(x["tally"]["money"]) for x in timed)
    for a, b in zip(real, real[1:]):
        assert a["end"] <= b["start"] and a["last_call"] < b["first_call"]
    assert all(b["start"][14:] == "00:00.000000Z" for b in real)  # each from the hour of its first call
    # the corpus is old: no block is active
    assert not any(b["active"] for b in d["blocks"])
    text = run.invoke(app, ["ledger", "--by", "block"], env={"COLUMNS": "80"}).stdout
    assert "blocks of 5 hours" in text and "gap, " in text
    assert all(len(line) <= 80 for line in text.splitlines())
    bad = run.invoke(app, ["ledger", "b277", "--by", "block"])
    assert bad.exit_code != 0 and "all conversations" in bad.output


def test_by_month_adds_up_the_days(corpus_store, monkeypatch: pytest.MonkeyPatch) -> None:
    from asz_core.cli import app

    monkeypatch.setenv("ASZ_HOME", str(corpus_store.path.parent))
    run = CliRunner()
    for tz in ("UTC", "Pacific/Kiritimati"):  # +14:00: days and months move
        days = json.loads(run.invoke(app, ["ledger", "--json", "--by", "day", "--tz", tz]).stdout)["rows"]
        months = json.loads(run.invoke(app, ["ledger", "--json", "--by", "month", "--tz", tz]).stdout)["rows"]
        want: dict[str, Decimal] = {}
        for x in days:
            k = x["key"] if x["key"] == "(no time)" else x["key"][:7]
            want[k] = want.get(k, Decimal(0)) + Decimal(x["tally"]["money"])
        assert {x["key"]: Decimal(x["tally"]["money"]) for x in months} == want
    one = json.loads(run.invoke(app, ["ledger", "b277", "--json", "--by", "month"]).stdout)
    assert [r["key"] for r in one["rows"]] and all(len(r["key"]) == 7 for r in one["rows"])


def test_the_table_says_the_active_blocks_rate_and_projection() -> None:
    from asz_core.blocks import BlockLedger
    from asz_core.conversations import Filter
    from asz_core.ledger import load_prices
    from asz_core.ledger_report import blocks_text
    from asz_core.tables import render

    calls = [call(0, 1000, "0.10"), call(30, 1000, "0.10", output=None, floor=50), call(60, 1000, "0.10"), call(-60 * 24)]
    now = T0 + dt.timedelta(minutes=90)
    bl = BlockLedger(tuple(blocks(calls, now)), now, load_prices().file, Filter.of(timezone="UTC"))
    text = " ".join(render(blocks_text(bl, dt.UTC), 200).split())
    assert "ACTIVE, 2h 07m in, 2h 53m left" in text and "gap, " in text
    r = burn(bl.blocks[-1], now)
    assert r is not None
    assert f"active block: {r.tokens_per_minute:,.0f} tokens a minute, $0.30 an hour (≥ $0.30)" in text
    assert f"{r.remaining_minutes} min left): {r.projected_tokens:,} tokens" in text
