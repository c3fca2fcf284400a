"""The ledger over the whole Claude Code corpus: the four token totals against an independent
computation from the raw files, owners that add up on every conversation, every call counted
once, money that is Decimal and exact, and the same numbers for the same head and price file."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest

from asz_core import api
from asz_core.ledger import Tally, build, check_owners, for_all, load_prices, rows
from asz_core.ledger_report import ledger_json
from asz_core.pricing import Prices

from tests.conftest import CLAUDE_CORPUS, skip_without_corpus  # the files its corpus_store fixture collects

from .helpers import MATCH


# --- the independent computation (plain json; nothing of asz) ---------------------------------

def _independent_totals(root: Path) -> tuple[dict[str, int], int, int]:
    """The four totals over every Claude Code file under ``root``, computed from the raw lines.

    * One call per (message.id, requestId): a response is written as one line per content block,
      every line repeating the usage; a resumed session copies earlier lines. `<synthetic>`
      lines (API errors, "No response requested.") are not calls.
    * The input side (input, cache read, cache write) from the call's first line with usage.
    * The output only when the record shows the final value: a line whose usage has
      `iterations` or whose `stop_reason` is set is final (the last such wins); else an output
      that grew after the first line's value (the final usage arrived, the largest is it). Else
      the output is unknown, never taken from a streaming placeholder.
    * A sub-agent's call whose final line was never written takes its output from the parent's
      record of the sub-agent's last response (a Task result's `toolUseResult.usage`) when its
      input side is that record's: found here by the input side alone among sub-agent lines
      (`isSidechain`, or an agent-*.jsonl file), however the sub-agent is linked to its Task.

    Returns the totals, the calls whose output is unknown, and the calls counted.
    """
    side = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    calls: dict[tuple[str, str], dict] = {}
    sidechain: set[tuple[str, str]] = set()
    task_usage: list[dict] = []
    for f in sorted(root.rglob("*.jsonl")):
        agent_file = f.name.startswith("agent-")
        for line in f.read_text(encoding="utf-8").splitlines():
            try:
                o = json.loads(line)
            except ValueError:
                continue
            if not isinstance(o, dict):
                continue
            tur = o.get("toolUseResult")
            if o.get("type") == "user" and isinstance(tur, dict) and isinstance(tur.get("usage"), dict):
                task_usage.append(tur["usage"])
            if o.get("type") != "assistant":
                continue
            m = o.get("message") or {}
            if not m.get("id") or m.get("model") == "<synthetic>":
                continue
            key = (m["id"], o.get("requestId") or "")
            c = calls.setdefault(key, {"usage": None, "outs": [], "final": None})
            if agent_file or o.get("isSidechain"):
                sidechain.add(key)
            u = m.get("usage")
            if not isinstance(u, dict):
                continue
            if c["usage"] is None:
                c["usage"] = u
            out = u.get("output_tokens")
            if isinstance(out, int) and out >= 0:
                c["outs"].append(out)
                if "iterations" in u or m.get("stop_reason"):
                    c["final"] = out
    by_side = defaultdict(list)
    for key in sidechain:
        u = calls[key]["usage"]
        if u:
            by_side[tuple(u.get(k) for k in side)].append(key)
    for au in task_usage:
        for key in by_side.get(tuple(au.get(k) for k in side), ()):
            c = calls[key]
            if c["final"] is None and isinstance(au.get("output_tokens"), int):
                c["final"] = au["output_tokens"]
    tot = {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}
    unknown = 0
    for c in calls.values():
        u = c["usage"] or {}
        tot["input"] += u.get("input_tokens") or 0
        tot["cache_read"] += u.get("cache_read_input_tokens") or 0
        tot["cache_write"] += u.get("cache_creation_input_tokens") or 0
        if c["final"] is not None:
            tot["output"] += c["final"]
        elif len(c["outs"]) > 1 and c["outs"][-1] > c["outs"][0]:
            tot["output"] += max(c["outs"])
        else:
            unknown += 1
    return tot, unknown, len(calls)


@pytest.fixture(scope="module")
def corpus_ledgers(corpus_store):
    return for_all(store=corpus_store, prices=load_prices())


def test_four_totals_equal_an_independent_computation(corpus_ledgers) -> None:
    want, unknown_output, n_calls = _independent_totals(CLAUDE_CORPUS)
    total = Tally.sum(led.total for led in corpus_ledgers)
    assert total.calls == n_calls
    assert {k: total.tokens[k] for k in want} == want
    assert total.unknown == {"input": 0, "output": unknown_output, "cache_read": 0, "cache_write": 0}
    assert unknown_output > 0  # the corpus holds calls whose final usage was never written


def test_owners_add_up_on_every_corpus_conversation(corpus_store, corpus_ledgers) -> None:
    assert len(corpus_ledgers) == len(api.conversations(corpus_store))
    for led in corpus_ledgers:
        assert list(check_owners(led)) == [], led.conversation
        conv = api.load(led.conversation, store=corpus_store)
        # every model call counted once, under one owner
        assert sorted(c.step for c in led.calls) == sorted(s.id for s in conv.model_calls())
        assert sum(o.tally.calls for o in led.owners) == led.total.calls
        assert sum((o.tally.money for o in led.owners), Decimal(0)) == led.total.money
        # main talks with their sub-agents + loose + unattributed = the conversation
        roll = Tally.sum([r.tally for r in rows(led, "talk")])
        assert (roll.calls, roll.tokens, roll.unknown, roll.money) == (led.total.calls, led.total.tokens, led.total.unknown, led.total.money)
        for by in ("stream", "model", "day"):
            t = Tally.sum(r.tally for r in rows(led, by))
            assert (t.calls, t.tokens, t.money) == (led.total.calls, led.total.tokens, led.total.money), by


def test_sub_agents_roll_up_to_the_talk_that_started_them(corpus_store, corpus_ledgers) -> None:
    for led in corpus_ledgers:
        conv = api.load(led.conversation, store=corpus_store)
        for s in led.streams:
            st = conv.stream(s.id)
            if s.kind == "main":
                continue
            if st.unattributed is not None:
                assert s.root == "unattributed"
            else:
                starter = conv.step(st.started_by[0])
                if starter.stream == "m":
                    assert s.root == starter.talk
    # the corpus has both: sub-agents a talk started, and streams no step can be shown to start
    roots = {s.root for led in corpus_ledgers for s in led.streams if s.kind != "main"}
    assert "unattributed" in roots and any(r.startswith("k") for r in roots)


def test_money_is_decimal_and_exact(corpus_ledgers) -> None:
    for led in corpus_ledgers:
        per_call = Decimal(0)
        for c in led.calls:
            assert c.price.money is None or type(c.price.money) is Decimal
            assert all(type(v) is Decimal for _, v in c.price.parts)
            if c.price.money is not None:
                assert sum((v for _, v in c.price.parts), Decimal(0)) == c.price.money
                per_call += c.price.money
        assert type(led.total.money) is Decimal and led.total.money == per_call
        assert Decimal(ledger_json(led)["total"]["money"]) == led.total.money


def test_every_corpus_call_is_priced_as_genai_prices_prices_it(corpus_ledgers) -> None:
    """asz prices unit by unit (to show the parts); the sum must be what genai-prices' public
    calc_price gives for the same call, model and time."""
    from genai_prices import Usage, calc_price

    checked = 0
    for led in corpus_ledgers:
        for c in led.calls:
            u = c.usage
            if c.price.money is None or not c.price.complete:
                continue
            kw = dict(input_tokens=u.input + u.cache_read + u.cache_write, cache_read_tokens=u.cache_read,
                      cache_write_tokens=u.cache_write, output_tokens=u.output)
            if u.cache_write_1h is not None and (u.cache_write_5m or 0) + u.cache_write_1h == u.cache_write:
                kw.update(cache_write_1h_tokens=u.cache_write_1h, cache_write_5m_tokens=u.cache_write_5m or 0)
            want = calc_price(Usage(**kw), c.model, genai_request_timestamp=datetime.fromisoformat(c.ts)).total_price
            assert c.price.money == want, (led.conversation, c.step)
            checked += 1
    assert checked > 700


def test_the_shipped_snapshot_is_the_installed_package_data() -> None:
    from genai_prices.data import providers
    from genai_prices.types import _providers_from_raw

    from asz_core.pricing import default_price_file, package_data

    doc = json.loads(default_price_file().read_text(), parse_float=Decimal)
    source, raw = package_data()
    if doc["source"] != source:
        pytest.skip(f"snapshot is {doc['source']}, the installed package is {source}: `asz prices update`")
    assert _providers_from_raw(doc["providers"]) == providers


@skip_without_corpus(MATCH)
def test_same_head_and_same_price_file_give_the_same_numbers_in_two_separate_processes(tmp_path: Path) -> None:
    """Two processes (other hash seeds), each collecting the same files into a store of its own and
    pricing with the same price file: the same head, and the same ledger to the last digit."""
    from .helpers import run_asz

    own = tmp_path / "my-prices.json"
    shutil.copyfile(load_prices().file.path, own)
    out = []
    for seed in ("1", "2"):
        home = tmp_path / f"home-{seed}"
        r = run_asz("collect", str(MATCH), "--json", home=home, PYTHONHASHSEED=seed)
        assert r.returncode == 0, r.stderr
        got = {}
        for rnd in json.loads(r.stdout)["rounds"]:
            r = run_asz("ledger", rnd["conversation"], "--prices", str(own), "--json", home=home, PYTHONHASHSEED=seed)
            assert r.returncode == 0, r.stderr
            got[rnd["conversation"]] = json.loads(r.stdout)
        out.append(got)
    a, b = out
    assert len(a) >= 2 and all(x["total"]["calls"] > 0 and Decimal(x["total"]["money"]) > 0 for x in a.values())
    assert a == b


def test_same_head_and_same_price_file_give_the_same_numbers(corpus_store, tmp_path: Path) -> None:
    own = tmp_path / "my-prices.json"
    shutil.copyfile(load_prices().file.path, own)
    cid = api.conversations(corpus_store)[-1].id
    a = ledger_json(build(api.load(cid, "r1", store=corpus_store), load_prices()))
    b = ledger_json(build(api.load(cid, "r1", store=corpus_store), Prices.load(own)))
    assert a["prices"]["sha256"] == b["prices"]["sha256"]
    a.pop("prices"), b.pop("prices")
    assert a == b
