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
from asz_core.records import USAGE_TYPES
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


def _sums(steps) -> dict:
    """Counted from the steps themselves: the four types' known sums, the calls with each unknown."""
    calls = [s for s in steps if s.kind == "model_call"]
    here = [s for s in calls if not s.counted_elsewhere]
    return {"tokens": {k: sum(getattr(s.usage, k) or 0 for s in here) for k in USAGE_TYPES},
            "unknown_calls": {k: sum(getattr(s.usage, k) is None for s in here) for k in USAGE_TYPES},
            "model_calls": len(here), "counted_elsewhere": len(calls) - len(here)}


def _with_started(conv, talk_id: str) -> list:
    """A talk's steps and, through the streams its steps start (attributed ones), theirs, as deep as it goes."""
    steps = [conv.step(s) for s in conv.talk(talk_id).steps]
    for s in list(steps):
        for a in s.starts:
            if conv.stream(a).unattributed is None:
                for k in conv.stream(a).talks:
                    steps += _with_started(conv, k)
    return steps


def test_show_json_figures_are_the_steps_sums(corpus_store: Store) -> None:
    """Each talk's own figures, a main talk's with the sub-agents it started, and the totals:
    the ledger's tallies, equal to the steps counted one by one (the starts followed down)."""
    seen = {"unknown": 0, "subagents": 0}  # calls counted elsewhere: the corpus has none (test_claudecode_peer_bugs)
    for row in corpus_store.conversations():
        s = convs.show(row.id, store=corpus_store)
        conv, d = s.conversation, report.show_json(s.conversation, s.ledger)
        assert d["totals"] == _sums(conv.steps), conv.id
        for t in d["talks"]:
            assert t["own"] == _sums(conv.step(x) for x in conv.talk(t["id"]).steps), (conv.id, t["id"])
            if t["stream"] == "m":
                assert t["with_subagents"] == _sums(_with_started(conv, t["id"])), (conv.id, t["id"])
                seen["subagents"] += t["with_subagents"]["model_calls"] > t["own"]["model_calls"]
            else:
                assert t["with_subagents"] is None
        seen["unknown"] += d["totals"]["unknown_calls"]["output"]
    assert all(seen.values()), seen  # the corpus has unknown outputs and sub-agents
