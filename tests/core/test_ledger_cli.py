"""`asz ledger` and `asz prices update` through typer's CliRunner, on the collected corpus."""

from __future__ import annotations

import json
import shutil
from decimal import Decimal
from pathlib import Path

import pytest
from typer.testing import CliRunner

from asz_core.cli import app
from asz_core.ledger import load_prices

runner = CliRunner()


@pytest.fixture
def corpus_home(corpus_store, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = corpus_store.path.parent
    monkeypatch.setenv("ASZ_HOME", str(home))
    return home


def _json(args: list[str]) -> dict:
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_ledger_all_conversations(corpus_home: Path, corpus_store) -> None:
    data = _json(["ledger", "--json"])
    assert data["conversations"] == len(corpus_store.conversations()) == len(data["rows"])
    assert data["prices"]["sha256"] == load_prices().file.sha256
    total = sum(Decimal(r["tally"]["money"]) for r in data["rows"])
    assert total == Decimal(data["total"]["money"])
    assert data["total"]["unknown_calls"]["output"] > 0 and data["total"]["money_complete"] is False
    for by in ("model", "day", "talk", "stream"):
        d = _json(["ledger", "--json", "--by", by])
        assert sum(Decimal(r["tally"]["money"]) for r in d["rows"]) == Decimal(data["total"]["money"]), by
        assert sum(r["tally"]["calls"] for r in d["rows"]) == data["total"]["calls"], by


def test_ledger_one_conversation(corpus_home: Path, corpus_store) -> None:
    cid = next(c.id for c in corpus_store.conversations() if c.id.startswith("b277"))
    d = _json(["ledger", cid[:8], "--json", "--head", "r1"])
    assert d["conversation"] == cid and d["round"] == "r1" and d["by"] == "talk"
    assert sum(r["tally"]["calls"] for r in d["rows"]) == d["total"]["calls"]
    kinds = {s["kind"] for s in d["subagent_streams"]}
    assert "child" in kinds
    assert Decimal(d["subagents"]["tally"]["money"]) > 0
    r = runner.invoke(app, ["ledger", cid[:8]])
    assert r.exit_code == 0 and "per sub-agent" in r.stdout and "sub-agents:" in r.stdout
    r = runner.invoke(app, ["ledger", cid[:8], "--by", "model"])
    assert r.exit_code == 0 and "claude-sonnet-4-5" in r.stdout


def test_ledger_with_a_persons_price_file(corpus_home: Path, tmp_path: Path) -> None:
    own = tmp_path / "p.json"
    shutil.copyfile(load_prices().file.path, own)
    a = _json(["ledger", "--json"])
    b = _json(["ledger", "--json", "--prices", str(own)])
    assert b["prices"]["file"] == str(own) and b["prices"]["sha256"] == a["prices"]["sha256"]
    assert a["total"] == b["total"]


def test_ledger_errors(corpus_home: Path, tmp_path: Path) -> None:
    assert runner.invoke(app, ["ledger", "--head", "r1"]).exit_code != 0
    assert runner.invoke(app, ["ledger", "--by", "week"]).exit_code != 0
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    r = runner.invoke(app, ["ledger", "--prices", str(bad)])
    assert r.exit_code != 0


def test_prices_update(tmp_path: Path) -> None:
    r = runner.invoke(app, ["prices", "update", "--to", str(tmp_path), "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["changed"] is True and Path(d["file"]).parent == tmp_path and d["source"].startswith("genai-prices ")
    d2 = json.loads(runner.invoke(app, ["prices", "update", "--to", str(tmp_path), "--json"]).stdout)
    assert d2["changed"] is False and d2["sha256"] == d["sha256"]
