"""`asz show`'s library functions (``convs.show``, ``convs.show_talk``) on the corpus: the conversation
at the round asked, with the ledger of that round, and the command prints what they give."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from asz_core import conversations as convs
from asz_core import report
from asz_core.cli import app
from asz_core.collect import collect
from asz_core.ledger import load_prices
from asz_core.store import Store

from .helpers import ORIGIN, RESUMED

runner = CliRunner()


@pytest.fixture(scope="module")
def two_rounds(tmp_path_factory: pytest.TempPathFactory, corpus) -> Store:
    """A conversation collected in two rounds: its first session (r1), then its resume (r2)."""
    st = Store.open(tmp_path_factory.mktemp("show-home"))
    collect([ORIGIN], st)
    collect([RESUMED], st)
    yield st
    st.close()


def _priced_steps(shown: convs.Shown) -> set[str]:
    return {c.step for c in shown.ledger.calls}


def test_show_gives_the_round_asked_with_that_rounds_ledger(two_rounds: Store) -> None:
    newest = convs.show(ORIGIN.stem[:8], store=two_rounds)
    first = convs.show(ORIGIN.stem[:8], "r1", store=two_rounds)
    assert (newest.conversation.round.number, first.conversation.round.number) == (2, 1)
    for s in (newest, first):
        conv, led = s.conversation, s.ledger
        assert (led.conversation, led.round, led.head) == (conv.id, conv.round.number, conv.round.head)
        # every model call of the round shown is in its ledger once, but those counted elsewhere
        assert _priced_steps(s) == {c.id for c in conv.model_calls() if not c.counted_elsewhere}
        assert len(led.calls) == len(_priced_steps(s))
    assert _priced_steps(first) < _priced_steps(newest)  # the resume's calls are r2's only
    assert newest.ledger.total.money > first.ledger.total.money > 0
    assert newest.ledger.prices.sha256 == load_prices().file.sha256


def test_show_prices_with_the_price_file_given(two_rounds: Store, tmp_path: Path) -> None:
    own = tmp_path / "own-prices.json"
    shutil.copyfile(load_prices().file.path, own)
    s = convs.show(ORIGIN.stem[:8], store=two_rounds, prices=str(own))
    assert s.ledger.prices.path == str(own)
    assert s.ledger.total.money == convs.show(ORIGIN.stem[:8], store=two_rounds).ledger.total.money


def test_show_talk_prices_the_talks_calls_with_the_conversations_ledger(two_rounds: Store) -> None:
    o = convs.show_talk(RESUMED.stem[:12], "k2", store=two_rounds)
    whole = convs.show(ORIGIN.stem[:8], store=two_rounds)
    assert o.conversation.id == ORIGIN.stem and o.talk["id"] == "k2"
    assert o.ledger.total.money == whole.ledger.total.money and _priced_steps(whole) == {c.step for c in o.ledger.calls}
    calls = [r["id"] for r in o.steps if r["kind"] == "model_call"]
    assert calls and set(calls) <= {c.step for c in o.ledger.calls}
    at_r1 = convs.show_talk(ORIGIN.stem[:8], "k2", "r1", store=two_rounds)
    assert at_r1.ledger.round == 1 and at_r1.ledger.head == at_r1.conversation.round.head


def test_the_command_prints_what_the_library_gives(two_rounds: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASZ_HOME", str(two_rounds.path.parent))
    s = convs.show(ORIGIN.stem[:8], "r1", store=two_rounds)
    o = convs.show_talk(ORIGIN.stem[:8], "k2", "r1", store=two_rounds)
    for args, made in ((["--head", "r1"], report.show_json(s.conversation, s.ledger)),
                       (["--head", "r1", "--talk", "k2"], report.outline_json(o.conversation, o.talk, o.steps, o.ledger))):
        r = runner.invoke(app, ["show", ORIGIN.stem[:8], *args, "--json"])
        assert r.exit_code == 0, r.output
        assert json.loads(r.stdout) == json.loads(orjson.dumps(made))
