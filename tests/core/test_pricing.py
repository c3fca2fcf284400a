"""Prices: calls priced by hand from the shipped snapshot's own numbers, the price in force at
the call's time, tiers per call, 5-minute and 1-hour cache writes apart, unpriced calls, a
person's own price file (JSON or YAML), and `asz prices update`."""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from asz_core.pricing import PriceFileError, Prices, default_price_file, package_data, update_snapshot
from asz_core.records import Usage

M = Decimal(1_000_000)


def _snapshot_model(provider: str, model_id: str) -> dict:
    """A model's entry in the shipped snapshot, read with plain json (nothing of asz)."""
    doc = json.loads(default_price_file().read_text(), parse_float=Decimal)
    prov = next(p for p in doc["providers"] if p["id"] == provider)
    return next(m for m in prov["models"] if m["id"] == model_id)


def _price_at(entry: dict, day: str) -> dict:
    """The price set in force on a day: the last conditional price whose start date has come."""
    prices = entry["prices"]
    if isinstance(prices, dict):
        return prices
    chosen = prices[0]["prices"]
    for p in prices:
        start = (p.get("constraint") or {}).get("start_date")
        if start is None or start <= day:
            chosen = p["prices"]
    return chosen


def _rate(v, total_in: int) -> Decimal:
    """A per-million rate, with its tier when the call's whole input side passes a tier start."""
    if not isinstance(v, dict):
        return Decimal(v)
    rate = Decimal(v["base"])
    for t in v["tiers"]:
        if total_in > t["start"]:
            rate = Decimal(t["price"])
    return rate


@pytest.fixture(scope="module")
def prices() -> Prices:
    return Prices.load()


def test_a_call_priced_by_hand_from_the_snapshot(prices: Prices) -> None:
    # sonnet 4.5, a call past 200k tokens of input side: every token at the tier rate,
    # 1-hour cache writes at their own rate.
    entry = _snapshot_model("anthropic", "claude-sonnet-4-5")
    p = _price_at(entry, "2026-01-15")
    u = Usage(input=1_200, output=3_000, cache_read=190_000, cache_write=20_000, cache_write_5m=15_000, cache_write_1h=5_000)
    total_in = 1_200 + 190_000 + 20_000
    assert total_in > 200_000
    want = (_rate(p["input_mtok"], total_in) * 1_200 + _rate(p["cache_read_mtok"], total_in) * 190_000
            + _rate(p["cache_write_mtok"], total_in) * 15_000 + _rate(p["cache_write_1h_mtok"], total_in) * 5_000
            + _rate(p["output_mtok"], total_in) * 3_000) / M
    got = prices.price("claude-sonnet-4-5-20250929", u, "2026-01-15T08:00:00Z")
    assert got.money == want and got.complete and got.model_id == "claude-sonnet-4-5"
    parts = dict(got.parts)
    assert parts["cache_write_1h"] == _rate(p["cache_write_1h_mtok"], total_in) * 5_000 / M
    assert parts["cache_write_5m"] == _rate(p["cache_write_mtok"], total_in) * 15_000 / M
    assert parts["cache_write_1h"] != parts["cache_write_5m"] / 3  # 1h writes are not priced as 5m writes


def test_the_same_call_below_the_tier(prices: Prices) -> None:
    entry = _snapshot_model("anthropic", "claude-sonnet-4-5")
    p = _price_at(entry, "2026-01-15")
    u = Usage(input=100, output=500, cache_read=50_000, cache_write=2_000)  # no 5m/1h split recorded
    total_in = 52_100
    want = (_rate(p["input_mtok"], total_in) * 100 + _rate(p["cache_read_mtok"], total_in) * 50_000
            + _rate(p["cache_write_mtok"], total_in) * 2_000 + _rate(p["output_mtok"], total_in) * 500) / M
    assert prices.price("claude-sonnet-4-5-20250929", u, "2026-01-15T08:00:00Z").money == want


def test_the_price_in_force_at_the_calls_time(prices: Prices) -> None:
    entry = _snapshot_model("anthropic", "claude-opus-4-6")
    assert isinstance(entry["prices"], list)  # the snapshot holds a price change for it
    u = Usage(input=5_000, output=1_000, cache_read=240_000, cache_write=0, cache_write_5m=0, cache_write_1h=0)
    total_in = 245_000
    for day in ("2026-02-20", "2026-05-01"):
        p = _price_at(entry, day)
        want = (_rate(p["input_mtok"], total_in) * 5_000 + _rate(p["cache_read_mtok"], total_in) * 240_000
                + _rate(p["output_mtok"], total_in) * 1_000) / M
        assert prices.price("claude-opus-4-6", u, f"{day}T12:00:00Z").money == want, day
    before = prices.price("claude-opus-4-6", u, "2026-02-20T12:00:00Z").money
    after = prices.price("claude-opus-4-6", u, "2026-05-01T12:00:00Z").money
    assert before > after


def test_cache_writes_split_only_when_the_split_adds_up(prices: Prices) -> None:
    # 1-hour writes are priced apart only when the runtime's 5m/1h split adds up to the writes
    # (or only the 1h part is given: the rest is 5-minute); otherwise every write is priced at
    # the plain (5-minute) rate, as with no split at all. A 1h part above the writes is no count
    # genai-prices can decompose: the call is unpriced, with the reason.
    p = _price_at(_snapshot_model("anthropic", "claude-sonnet-4-5"), "2026-01-15")
    w5, w1 = _rate(p["cache_write_mtok"], 0), _rate(p["cache_write_1h_mtok"], 0)
    assert w1 != w5
    base = (_rate(p["input_mtok"], 0) * 100 + _rate(p["output_mtok"], 0) * 10) / M

    def money(**split: int | None) -> Decimal | None:
        u = Usage(input=100, output=10, cache_read=0, cache_write=1_000, **split)
        return prices.price("claude-sonnet-4-5-20250929", u, "2026-01-15T08:00:00Z").money

    assert money(cache_write_5m=600, cache_write_1h=400) == base + (w5 * 600 + w1 * 400) / M
    assert money(cache_write_1h=400) == base + (w5 * 600 + w1 * 400) / M  # the rest is 5-minute
    assert money(cache_write_5m=700, cache_write_1h=400) == base + w5 * 1_000 / M  # 1,100 is not 1,000
    assert money(cache_write_5m=600) == base + w5 * 1_000 / M  # no 1h part: no split
    assert money() == base + w5 * 1_000 / M
    unknown_writes = Usage(input=100, output=10, cache_read=0, cache_write=None, cache_write_1h=400)
    got = prices.price("claude-sonnet-4-5-20250929", unknown_writes, "2026-01-15T08:00:00Z")
    assert got.money == base and not got.complete  # a split of writes not known: nothing of them priced
    over = Usage(input=100, output=10, cache_read=0, cache_write=1_000, cache_write_1h=1_400)
    got = prices.price("claude-sonnet-4-5-20250929", over, "2026-01-15T08:00:00Z")
    assert got.money is None and got.unpriced == "usage genai-prices cannot price (more-specific counts exceed cache_write_tokens (1000))"


def test_money_is_decimal_never_float(prices: Prices) -> None:
    got = prices.price("claude-haiku-4-5-20251001", Usage(input=1, output=1, cache_read=1, cache_write=1), "2026-01-01T00:00:00Z")
    assert type(got.money) is Decimal and all(type(v) is Decimal for _, v in got.parts)
    assert got.money == Decimal("0.00000735")  # 1 + 5 + 0.1 + 1.25 dollars per million


def test_unpriced_and_partly_known_calls(prices: Prices) -> None:
    u = Usage(input=10, output=None, cache_read=100, cache_write=0)
    assert prices.price(None, u, "2026-01-01T00:00:00Z").unpriced == "no model"
    nothing = prices.price("model-nobody-prices-xyz", u, "2026-01-01T00:00:00Z")
    assert nothing.money is None and nothing.unpriced == "no price for model-nobody-prices-xyz"
    partial = prices.price("claude-haiku-4-5-20251001", u, "2026-01-01T00:00:00Z")
    assert not partial.complete and partial.money == (Decimal(10) * 1 + Decimal(100) * Decimal("0.1")) / M
    # a model whose price changes over time cannot be priced without the call's time
    assert prices.price("claude-opus-4-6", u, None).unpriced.startswith("no time")
    assert prices.price("claude-haiku-4-5-20251001", u, None).money == partial.money


def test_a_persons_own_price_file_in_yaml(tmp_path: Path) -> None:
    own = tmp_path / "prices.yaml"
    own.write_text("""
- id: mine
  name: My provider
  api_pattern: 'https://example\\.invalid'
  model_match: {starts_with: 'my-'}
  models:
    - id: my-model
      match: {equals: 'my-model'}
      prices: {input_mtok: 0.3, output_mtok: 1.1, cache_read_mtok: 0.03}
""")
    p = Prices.load(own)
    assert p.file.path == str(own) and len(p.file.sha256) == 64 and not p.file.shipped
    got = p.price("my-model", Usage(input=1_000, output=1_000, cache_read=1_000, cache_write=0), None)
    assert got.money == (Decimal("0.3") * 1_000 + Decimal("1.1") * 1_000 + Decimal("0.03") * 1_000) / M
    assert p.price("claude-opus-4-6", Usage(), "2026-01-01T00:00:00Z").unpriced == "no price for claude-opus-4-6"


def test_a_price_file_that_is_not_genai_prices_data(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"providers": [{"id": 3}]}')
    with pytest.raises(PriceFileError):
        Prices.load(bad)
    with pytest.raises(PriceFileError):
        Prices.load(tmp_path / "missing.json")


def test_prices_update_writes_a_dated_snapshot_once(tmp_path: Path) -> None:
    first = update_snapshot(tmp_path, today=date(2026, 1, 2))
    assert first.changed and Path(first.file.path).name == "genai-prices-2026-01-02.json"
    again = update_snapshot(tmp_path, today=date(2026, 1, 3))
    assert not again.changed and again.file.sha256 == first.file.sha256
    written = json.loads(Path(first.file.path).read_text())
    source, providers = package_data()
    assert written["source"] == source and written["providers"] == json.loads(json.dumps(providers))
    shipped = json.loads(default_price_file().read_text())
    if shipped["source"] == source:  # the installed package is the one asz's snapshot was taken from
        assert written["providers"] == shipped["providers"]
    # an older snapshot with other data is replaced
    old = tmp_path / "genai-prices-2026-01-02.json"
    doc = json.loads(old.read_text())
    doc["providers"] = doc["providers"][:1]
    old.write_text(json.dumps(doc))
    newer = update_snapshot(tmp_path, today=date(2026, 1, 4))
    assert newer.changed and newer.removed == ("genai-prices-2026-01-02.json",)
    assert sorted(x.name for x in tmp_path.glob("genai-prices-*.json")) == ["genai-prices-2026-01-04.json"]


def test_prices_update_into_a_folder_that_cannot_be_written(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    with pytest.raises(PriceFileError, match="--to"):
        update_snapshot(blocked / "sub")
