"""Model ids as runtimes write them, priced under the spellings providers give the same model
(issue 32; docs/ledger.md, "Model ids"): a test per rule, each rule the only way its example is
priced, in both readings of the snapshot (lean, and genai-prices' own), through the ledger
commands; an id that has a price of its own keeps it; one no spelling finds stays unpriced."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from asz_core import model_ids
from asz_core.model_ids import RULES, spellings
from asz_core.pricing import Prices, default_price_file
from asz_core.records import Usage

from .helpers import run_asz

DOCS = Path(__file__).resolve().parents[2] / "docs" / "ledger.md"
WHEN = "2026-06-01T12:00:00Z"
USAGE = Usage(input=12000, output=900, cache_read=40000, cache_write=0)

# Each rule's example, the genai-prices model it is priced as, and an id of that model as the
# price data writes it (to price alike).
PRICED_AS = {
    "a provider before the name": ("gpt-5.4", "gpt-5.4"),
    "Amazon's model enum": ("claude-sonnet-4-0", "claude-sonnet-4-20250514"),
    "a snapshot's date after the name": ("gpt-5.1", "gpt-5.1-codex"),
    "dashes for the dots of a version": ("gpt-4.1-mini", "gpt-4.1-mini"),
    "dots for the dashes of a version": ("claude-sonnet-4-0", "claude-sonnet-4-20250514"),
}


@pytest.fixture(scope="module")
def readings() -> dict[str, Prices]:
    lean = Prices.load()
    assert lean._lean is not None
    doc = json.loads(default_price_file().read_bytes(), parse_float=Decimal)
    whole = Prices(doc["providers"], lean.file)
    assert whole._lean is None
    return {"lean": lean, "genai-prices": whole}


def test_every_rule_has_its_expectation() -> None:
    assert [r.name for r in RULES] == list(PRICED_AS)


@pytest.mark.parametrize("reading", ["lean", "genai-prices"])
@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
def test_each_rule_prices_its_example(rule: model_ids.Rule, reading: str, readings: dict[str, Prices]) -> None:
    prices = readings[reading]
    assert rule.apply(rule.written) == rule.looked_up
    assert prices._find_as_written(rule.written) is None, "the example has no price as written"
    model, alike = PRICED_AS[rule.name]
    got = prices.price(rule.written, USAGE, WHEN)
    assert got.money is not None and got.unpriced is None and got.model_id == model
    assert got == prices.price(alike, USAGE, WHEN)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
def test_each_rule_is_the_only_way_its_example_is_priced(rule: model_ids.Rule, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_ids, "RULES", tuple(r for r in RULES if r is not rule))
    got = Prices.load().price(rule.written, USAGE, WHEN)
    assert got.money is None and got.unpriced == f"no price for {rule.written}"


def test_the_issue_example_is_priced_as_gpt_5_1_codex(readings: dict[str, Prices]) -> None:
    for prices in readings.values():
        got = prices.price("gpt-5-1-codex-2025-11-13", USAGE, WHEN)
        assert got.complete and got.money == prices.price("gpt-5.1-codex", USAGE, WHEN).money > 0


def test_rules_combine(readings: dict[str, Prices]) -> None:
    for prices in readings.values():
        got = prices.price("us.anthropic.claude-sonnet-4-5-20250929-v1:0", USAGE, WHEN)
        assert got.model_id == "claude-sonnet-4-5"
        assert got.money == prices.price("claude-sonnet-4-5-20250929", USAGE, WHEN).money


def test_an_id_with_a_price_of_its_own_keeps_it(readings: dict[str, Prices]) -> None:
    """The id as written is looked up first: a dated snapshot priced apart is not its alias."""
    for prices in readings.values():
        own = prices.price("gpt-4o-2024-05-13", USAGE, WHEN)
        assert own.model_id == "gpt-4o-2024-05-13"
        assert own.money != prices.price("gpt-4o", USAGE, WHEN).money
        assert spellings("gpt-4o-2024-05-13")[0] == "gpt-4o-2024-05-13"


@pytest.mark.parametrize("model", ["model-nobody-prices-2025-11-13", "openai/gpt-99-9", "CLAUDE_NOTHING_1_V1_0", "x"])
def test_an_id_no_spelling_finds_stays_unpriced_with_the_reason(model: str, readings: dict[str, Prices]) -> None:
    for prices in readings.values():
        got = prices.price(model, USAGE, WHEN)
        assert got.money is None and got.unpriced == f"no price for {model}"


@pytest.mark.parametrize(("written", "not_among"), [
    ("gpt-5-1-codex-2025-11-13", "gpt-5-1-codex-2025-11.13"),  # a date's parts are no version
    ("model-2025-13-45", "model"),  # no such day: no date
    ("gpt-4-0613", "gpt-4.0613"),  # a long number is no version
    ("claude-sonnet-4-20250514", "claude-sonnet-4.20250514"),
])
def test_what_is_not_respelled(written: str, not_among: str) -> None:
    assert not_among not in spellings(written)


def test_fewest_changes_first() -> None:
    got = spellings("openai/gpt-5-1-codex-2025-11-13")
    assert got[0] == "openai/gpt-5-1-codex-2025-11-13"
    assert got.index("gpt-5-1-codex-2025-11-13") < got.index("gpt-5-1-codex") < got.index("gpt-5.1-codex")
    assert len(got) == len(set(got))


def test_the_docs_table_lists_every_rule() -> None:
    text = DOCS.read_text()
    for r in RULES:
        assert f"| `{r.written}` | `{r.looked_up}` |" in text, r.name


def test_the_ledger_commands_price_a_respelled_model(tmp_path: Path) -> None:
    """A Codex rollout whose model is written as a dated, dashed id: priced by `asz ledger
    --json` (the lean command path) and by the table (the full CLI), as gpt-5.1-codex is."""
    def rollout(path: Path, model: str, tid: str) -> None:
        t = "2026-05-03T10:00:0"
        usage = {"input_tokens": 5000, "cached_input_tokens": 1000, "output_tokens": 200, "total_tokens": 5200}
        lines = [("0.000", "session_meta", {"id": tid, "cwd": "/w", "cli_version": "0.123.0", "source": "cli"}),
                 ("0.001", "event_msg", {"type": "task_started", "turn_id": "1"}),
                 ("0.002", "event_msg", {"type": "user_message", "message": "hi"}),
                 ("0.003", "turn_context", {"cwd": "/w", "model": model}),
                 ("1.000", "response_item", {"type": "message", "role": "assistant",
                                             "content": [{"type": "output_text", "text": "hello"}]}),
                 ("1.100", "event_msg", {"type": "token_count", "info": {"total_token_usage": usage, "last_token_usage": usage}}),
                 ("1.200", "event_msg", {"type": "task_complete", "turn_id": "1"})]
        path.parent.mkdir(parents=True)
        path.write_text("".join(json.dumps({"timestamp": f"{t}{at}Z", "type": typ, "payload": p}) + "\n" for at, typ, p in lines))

    folder = tmp_path / "sessions"
    rollout(folder / "a" / "rollout-a.jsonl", "gpt-5-1-codex-2025-11-13", "m-dated")
    rollout(folder / "b" / "rollout-b.jsonl", "gpt-5.1-codex", "m-plain")
    home = tmp_path / "home"
    r = run_asz("collect", str(folder), home=home)
    assert r.returncode == 0, r.stderr
    r = run_asz("ledger", "--json", "--by", "model", home=home)
    assert r.returncode == 0, r.stderr
    rows = {row["key"]: row["tally"] for row in json.loads(r.stdout)["rows"]}
    dated, plain = rows["gpt-5-1-codex-2025-11-13"], rows["gpt-5.1-codex"]
    assert dated["unpriced_calls"] == 0 and dated["money"] == plain["money"] != "0"
    r = run_asz("ledger", "--by", "model", home=home, COLUMNS="200")
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if "gpt-5-1-codex-2025-11-13" in x)
    assert "unpriced" not in line and "$" in line
