"""The shipped snapshot is read lean (pricing._LeanBook: the model, the price in force and its
Decimals taken from the raw data as genai-prices takes them, without its pydantic types): both
readings must agree on every model of the snapshot (found by its id, its match clauses' own
names, other spellings), at every start date of its prices and on each side of every tier, and
on every call of the corpus. What the lean reading does not take, genai-prices reads."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

import pytest

from asz_core import pricing
from asz_core.pricing import Prices, default_price_file
from asz_core.records import Usage


@pytest.fixture(scope="module")
def books() -> tuple[Prices, Prices]:
    lean = Prices.load()
    assert lean._lean is not None, "the shipped snapshot is read lean"
    doc = json.loads(default_price_file().read_bytes(), parse_float=Decimal)
    whole = Prices(doc["providers"], lean.file)  # genai-prices reads everything
    assert whole._lean is None
    return lean, whole


def _names(clause: Any) -> list[str]:
    """The names a match clause is written with (each a name it may take)."""
    if isinstance(clause, dict):
        return [n for k, v in clause.items() for n in (_names(v) if k in ("or", "and") else [v] if isinstance(v, str) else [])]
    if isinstance(clause, list):
        return [n for c in clause for n in _names(c)]
    return []


def _refs() -> list[str]:
    doc = json.loads(default_price_file().read_bytes())
    refs: set[str] = set()
    for p in doc["providers"]:
        for m in p.get("models") or ():
            for n in [m["id"], *_names(m.get("match"))]:
                refs.update({n, n.upper(), f"{n}-20250929", f"{p['id']}/{n}", f"{n}:latest"})
    refs.update({"claude-sonnet-4-5-20250929", "claude-opus-4-6", "gpt-5.2-20251211", "", "x", "anthropic.claude-3"})
    return sorted(refs)


def _lean_found(lean: Prices, ref: str) -> Any:
    try:
        return lean._lean.find(ref)  # type: ignore[union-attr]
    except (pricing._Unsure, re.error):  # what the lean reading leaves to genai-prices
        return "unsure"


def test_every_model_of_the_snapshot_is_found_as_genai_prices_finds_it(books: tuple[Prices, Prices]) -> None:
    lean, whole = books
    refs = _refs()
    taken = 0
    for ref in refs:
        got = _lean_found(lean, ref)
        if got == "unsure":
            continue
        taken += 1
        want = whole._find_as_written(ref) if ref else None
        assert (None if got is None else (got[0].id, got[1].id)) == (None if want is None else (want[0].id, want[1].id)), ref
    assert taken > 0.9 * len(refs)  # the lean reading takes nearly all of it


def test_other_spellings_are_found_alike_by_both_readings(books: tuple[Prices, Prices]) -> None:
    """The respelling of an id (model_ids) is above both readings: a name found only under
    another spelling is found as the same model by each."""
    lean, whole = books
    refs = [r for r in _refs() if r][::7] + ["gpt-5-1-codex-2025-11-13", "CLAUDE_SONNET_4_20250514_V1_0", "openai/gpt-5-4",
                                            "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-opus-4.5@20251101"]
    respelled = 0
    for ref in refs:
        got, want = lean.find(ref), whole.find(ref)
        assert (None if got is None else (got[0].id, got[1].id)) == (None if want is None else (want[0].id, want[1].id)), ref
        respelled += got is not None and whole._find_as_written(ref) is None
    assert respelled >= 5


def _usages(plan_tiers: list[int]) -> list[Usage]:
    out = [Usage(10, 20, 30, 40), Usage(0, 0, 0, 0), Usage(7, None, 1000, 300, 100, 200), Usage(5, 9, None, None),
           Usage(1, 2, 3, 40, 40, 0)]
    for start in plan_tiers:
        out += [Usage(start, 10, 0, 0), Usage(start + 1, 10, 0, 0), Usage(1, 3, start - 100, 100, 0, 100)]
    return out


def _tier_starts(raw: Any) -> list[int]:
    if isinstance(raw, dict):
        return [t["start"] for t in raw.get("tiers") or () if isinstance(t, dict)] + [s for v in raw.values() for s in _tier_starts(v)]
    if isinstance(raw, list):
        return [s for v in raw for s in _tier_starts(v)]
    return []


def _dates(raw: Any) -> list[str]:
    if isinstance(raw, dict):
        return ([raw["start_date"]] if isinstance(raw.get("start_date"), str) else []) + [d for v in raw.values() for d in _dates(v)]
    if isinstance(raw, list):
        return [d for v in raw for d in _dates(v)]
    return []


def _priced(p: Any) -> tuple[Any, ...]:
    return (str(p.money), tuple((k, str(v)) for k, v in p.parts), p.complete, p.unpriced, p.model_id, p.provider_id)


def test_every_model_is_priced_as_genai_prices_prices_it_at_every_start_date_and_tier(books: tuple[Prices, Prices]) -> None:
    lean, whole = books
    doc = json.loads(default_price_file().read_bytes())
    checked = 0
    for prov in doc["providers"]:
        for m in prov.get("models") or ():
            got = _lean_found(lean, m["id"])
            if got in ("unsure", None) or got[1].id != m["id"]:
                continue  # another model takes its id first, or genai-prices reads it
            assert type(got[1]) is pricing._LeanModel
            days = {"2020-01-01", "2099-12-31"}
            for d in _dates(m.get("prices")):
                day = date.fromisoformat(d)
                days.update({d, (day - timedelta(days=1)).isoformat()})
            for day in sorted(days):
                for u in _usages(_tier_starts(m.get("prices"))):
                    for ts in (f"{day}T00:00:00Z", f"{day}T23:59:59.5+00:00", None):
                        a, b = lean.price(m["id"], u, ts), whole.price(m["id"], u, ts)
                        assert _priced(a) == _priced(b), (prov["id"], m["id"], day, u, ts)
                        checked += 1
    assert checked > 10_000


def test_what_the_lean_reading_does_not_take_genai_prices_prices(books: tuple[Prices, Prices]) -> None:
    lean, whole = books
    # deepseek's off-peak prices go by time of day: genai-prices' own reading
    with pytest.raises(pricing._Unsure):
        lean._lean.find("deepseek-chat")  # type: ignore[union-attr]
    u = Usage(1000, 1000, 0, 0)
    for ts in ("2026-01-10T01:00:00Z", "2026-01-10T18:00:00Z"):
        assert _priced(lean.price("deepseek-chat", u, ts)) == _priced(whole.price("deepseek-chat", u, ts))
    assert lean.price("deepseek-chat", u, "2026-01-10T01:00:00Z").money != lean.price("deepseek-chat", u, "2026-01-10T18:00:00Z").money


def test_a_value_of_another_shape_is_left_to_genai_prices() -> None:
    for bad in ({"input_mtok": 1.5}, {"input_mtok": "1e-3"}, {"input_mtok": -1}, {"input_mtok": True},
                {"not_a_price_key": "1"}, {"input_mtok": {"base": "1", "tiers": [{"start": "5", "price": "2"}]}}):
        with pytest.raises(pricing._Unsure):
            pricing._lean_plan(bad)
    with pytest.raises(pricing._Unsure):
        pricing._lean_match({"starts_with": "a", "equals": "b"}, "a")
    with pytest.raises(pricing._Unsure):
        pricing._start_date({"start_time": "01:00:00", "end_time": "02:00:00"})


def test_a_ledger_of_the_shipped_snapshot_imports_no_pydantic() -> None:
    code = ("import sys\nfrom asz_core.pricing import Prices\nfrom asz_core.records import Usage\n"
            "p = Prices.load()\nprint(p.price('claude-opus-4-6', Usage(1, 2, 3, 4), '2026-05-01T00:00:00Z').money)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'pydantic_core')))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    money, mods = r.stdout.splitlines()
    assert Decimal(money) > 0 and mods == "[]"


def _hand_made() -> list[dict[str, Any]]:
    """Providers written for the lean reading's odd cases: clauses in capitals, a model found
    through a fallback provider, tiers out of order, a price that starts on a date."""
    return [
        {"id": "acme", "name": "Acme", "api_pattern": "https://acme", "model_match": {"starts_with": "ACME-"},
         "fallback_model_providers": ["other"],
         "models": [{"id": "acme-one", "match": {"or": [{"equals": "ACME-One"}, {"regex": "^acme-one-v[0-9]+$"}]},
                     "prices": {"input_mtok": {"base": "1", "tiers": [{"start": 500, "price": "3"}, {"start": 100, "price": "2"}]},
                                "output_mtok": "4.50", "cache_read_mtok": None}},
                    {"id": "acme-dated", "match": {"and": [{"starts_with": "acme-dated"}, {"contains": "-2025-"}]},
                     "prices": [{"prices": {"input_mtok": "1", "output_mtok": "2"}},
                                {"constraint": {"start_date": "2026-02-01"}, "prices": {"input_mtok": "0.5", "output_mtok": "1"}}]}]},
        {"id": "other", "name": "Other", "api_pattern": "https://other", "model_match": {"ends_with": "-OTHER"},
         "models": [{"id": "acme-borrowed", "match": {"equals": "acme-borrowed"},
                     "prices": {"input_mtok": "7", "output_mtok": "8.0000000000", "cache_write_mtok": "9", "cache_read_mtok": "0.7"}}]},
    ]


def test_hand_made_providers_are_read_lean_as_genai_prices_reads_them() -> None:
    from copy import deepcopy

    file = pricing.PriceFile("hand-made.json", "0" * 64, None, None, False)
    lean = Prices(lambda: deepcopy(_hand_made()), file, lean=_hand_made())
    whole = Prices(_hand_made(), file)
    names = ["acme-one", "ACME-ONE", "acme-one-v2", "acme-one-vx", "acme-borrowed", "acme-dated-2025-01-01",
             "acme-dated-20250101", "acme-dated-20251399", "x-other", "nothing"]
    seen = set()
    for name in names:
        got = lean._lean.find(name)  # type: ignore[union-attr]
        want = whole.find(name)
        assert (None if got is None else (got[0].id, got[1].id)) == (None if want is None else (want[0].id, want[1].id)), name
        seen.add(None if got is None else got[1].id)
        for u in (Usage(50, 10, 0, 0), Usage(150, 10, 0, 0), Usage(101, 10, 400, 0), Usage(5, 6, 7, 8)):
            for ts in ("2026-01-31T23:59:59Z", "2026-02-01T00:00:00Z", None):
                assert _priced(lean.price(name, u, ts)) == _priced(whole.price(name, u, ts)), (name, u, ts)
    assert seen == {"acme-one", "acme-borrowed", "acme-dated", None}
    assert lean._headers is None  # all of it read lean: genai-prices' types never needed


def _shipped_copy(tmp_path: Any, monkeypatch: Any, body: bytes, name: str = "prices") -> Any:
    """A snapshot with ``body`` where asz ships its snapshot (so it is read as the shipped one)."""
    folder = tmp_path / name
    folder.mkdir()
    monkeypatch.setattr(pricing, "PRICES_DIR", folder.resolve())
    p = folder / default_price_file().name
    p.write_bytes(body)
    return p


def _claude_and_gpt(book: Prices) -> list[Any]:
    u = Usage(input=1_200, output=300, cache_read=250_000, cache_write=4_000, cache_write_5m=1_000, cache_write_1h=3_000)
    return [(c.money, c.parts) for c in (book.price("claude-opus-4-6", u, "2026-02-20T10:00:00Z"),
                                         book.price("claude-sonnet-4-5-20250929", u, "2025-10-01T00:00:00Z"),
                                         book.price("gpt-5", u, "2025-10-01T00:00:00Z"))]


def test_the_shipped_snapshot_is_read_a_provider_line_at_a_time(tmp_path: Any, monkeypatch: Any) -> None:
    # `asz prices update` writes one provider a line; a ledger reads the lines its models need
    # (Anthropic's is the first), not the whole 800 KB. A line it never reaches is never read: a
    # broken last line does not stop Claude calls being priced, and the prices are the same.
    shipped = default_price_file().read_bytes()
    expected = _claude_and_gpt(Prices.load())
    lines = shipped.split(b"\n")
    assert lines[1].startswith(b'{"id":"anthropic"') and lines[-2] == b"]}", "the layout pricing._dump writes"
    broken = b"\n".join([*lines[:-3], b'{"id": "zhipuai", "models": [', *lines[-2:]])
    book = Prices.load(_shipped_copy(tmp_path, monkeypatch, broken))
    assert book._lean is not None and book.file.shipped
    assert _claude_and_gpt(book) == expected
    # a model no provider takes is looked for on every line: the broken one is said, by file and line
    with pytest.raises(pricing.PriceFileError, match=rf"{default_price_file().name}, line {len(lines) - 2}: not JSON"):
        book.price("no-such-model-anywhere", Usage(1, 1, 0, 0), "2025-10-01T00:00:00Z")


def test_a_snapshot_line_that_is_not_a_provider_is_said(tmp_path: Any, monkeypatch: Any) -> None:
    lines = default_price_file().read_bytes().split(b"\n")
    odd = b"\n".join([*lines[:2], b"[1, 2],", *lines[2:]])  # JSON, but no provider
    book = Prices.load(_shipped_copy(tmp_path, monkeypatch, odd))
    assert book.price("claude-opus-4-6", Usage(1, 1, 0, 0), "2026-05-01T00:00:00Z").money is not None  # Anthropic's line comes first
    with pytest.raises(pricing.PriceFileError, match=r"line 3: expected a provider"):
        book.price("no-such-model-anywhere", Usage(1, 1, 0, 0), None)


def test_a_snapshot_in_another_layout_is_read_whole(tmp_path: Any, monkeypatch: Any) -> None:
    doc = json.loads(default_price_file().read_bytes())
    one_line = json.dumps(doc).encode()  # not the layout of `asz prices update`: read whole, as before
    assert _claude_and_gpt(Prices.load(_shipped_copy(tmp_path, monkeypatch, one_line))) == _claude_and_gpt(Prices.load())
    bad = one_line.replace(b'"id": "zhipuai"', b'"id": zhipuai', 1)  # broken anywhere: said at once
    with pytest.raises(pricing.PriceFileError, match="neither JSON nor YAML"):
        Prices.load(_shipped_copy(tmp_path, monkeypatch, bad, "again"))
