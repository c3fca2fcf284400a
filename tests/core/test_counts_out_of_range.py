"""A token count no runtime could have written (2**64-1, 2**63, above a trillion, or past 64 bits)
is unknown, exactly as a negative one is, in every runtime with counts; the ledger never crashes
on what the store holds (issue 12). Over copies of real corpus files whose every token count is
replaced."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from asz_core import ledger as ledgers
from asz_core import ledger_report
from asz_core.collect import collect
from asz_core.records import MAX_COUNT, Usage
from asz_core.store import Store

from .helpers import CORPUS, db_rows, run_asz

pytestmark = pytest.mark.usefixtures("corpus")

FILES = {
    "claudecode": ["claude-code/marot__spotter/test/fixtures/transcripts/tool_heavy.jsonl",
                   "claude-code/marot__spotter/test/fixtures/transcripts/subagent.jsonl"],
    "codex": ["codex/langchain-ai__langsmith-codex-plugins/plugins/tracing/test/sessions/2026/04/23/rollout-editing.jsonl",
              "codex/ryoppippi__ccusage/apps/ccusage/test/fixtures/codex/sessions/project-alpha/session-alpha.jsonl"],
    "langsmith": ["langsmith/langchain-ai__langsmith-sdk/python/tests/integration_tests/test_data/langsmith_py_wrap_openai_stream.json",
                  "langsmith/langchain-ai__langsmith-sdk/js/src/tests/test_data/langsmith_js_wrap_openai_default.json"],
}
# Kiro records no token counts (credits only): nothing to put out of range.

OUT_OF_RANGE = {"2**64-1": str(2**64 - 1), "2**63": str(2**63), "a trillion and one": str(MAX_COUNT + 1),
                "past 64 bits": str(2**64 + 7)}
_COUNT = re.compile(rb'("[A-Za-z_]*[Tt]okens?[A-Za-z_]*"\s*:\s*)(\d+)')


def _every_count(data: bytes, value: str) -> tuple[bytes, int]:
    """``data`` with every integer under a key naming tokens replaced by ``value`` (as text, so
    numbers JSON libraries cannot hold are written as a runtime would)."""
    return _COUNT.subn(lambda m: m.group(1) + value.encode(), data)


def _variant(tmp_path: Path, runtime: str, name: str, value: str | None) -> Path:
    folder = tmp_path / name.replace(" ", "-") / runtime
    for rel in FILES[runtime]:
        src = CORPUS / rel
        dst = folder / src.name
        dst.parent.mkdir(parents=True, exist_ok=True)
        data = src.read_bytes()
        if value is not None:
            data, n = _every_count(data, value)
            assert n > 0, f"no token counts in {src}"
        dst.write_bytes(data)
    return folder


def _ledger(folder: Path, home: Path) -> dict[str, Any]:
    store = Store.open(home)
    try:
        collect([folder], store)
        items, file = ledgers.summaries(store=store, cache=False)
        out = ledger_report.all_json(items, file)
        per = [ledger_report.ledger_json(ledgers.for_conversation(row.id, store=store), by)
               for row in store.conversations() for by in ("talk", "stream", "model", "day")]
        return _no_heads({"all": out, "each": per})
    finally:
        store.close()


def _no_heads(v: Any) -> Any:
    # The heads digest the records' bytes, which the replaced numbers change; nothing else may differ.
    if isinstance(v, dict):
        return {k: _no_heads(x) for k, x in v.items() if k != "head"}
    if isinstance(v, list):
        return [_no_heads(x) for x in v]
    return v


@pytest.mark.parametrize("runtime", sorted(FILES))
def test_an_out_of_range_count_is_unknown_as_a_negative_one_is(tmp_path: Path, runtime: str) -> None:
    clean = _ledger(_variant(tmp_path, runtime, "clean", None), tmp_path / "h-clean")
    negative = _ledger(_variant(tmp_path, runtime, "negative", "-1"), tmp_path / "h-negative")
    # the replacement reaches the counts: with all of them negative, every one is unknown
    assert clean["all"]["total"]["unknown_calls"] != negative["all"]["total"]["unknown_calls"]
    assert negative["all"]["total"]["tokens"]["output"] == 0 and negative["all"]["total"]["calls"] > 0
    for name, value in OUT_OF_RANGE.items():
        got = _ledger(_variant(tmp_path, runtime, name, value), tmp_path / f"h-{name}")
        assert got == negative, f"{runtime}: a count of {name} is not taken as unknown"


def test_the_ledger_commands_read_a_store_holding_2_64_minus_1(tmp_path: Path) -> None:
    folder = _variant(tmp_path, "claudecode", "max", str(2**64 - 1))
    home = tmp_path / "home"
    r = run_asz("collect", str(folder), "--json", home=home)
    assert r.returncode == 0, r.stderr
    # the store keeps the record as written (the count among its events): the ledger reads stored data
    stored = [e for (e,) in db_rows(home / "asz.db", "SELECT events FROM records") if b"18446744073709551615" in e]
    assert stored
    for args in (["ledger", "--json"], ["ledger"], ["ledger", "--by", "model"], ["ledger", "--by", "day"],
                 ["ledger", "--by", "talk", "--json"], ["ledger", "--json"]):  # the last: from kept summaries
        r = run_asz(*args, home=home)
        assert r.returncode == 0 and "Traceback" not in r.stderr, (args, r.stderr)
    total = json.loads(run_asz("ledger", "--json", home=home).stdout)["total"]
    assert total["tokens"]["output"] == 0 and total["unknown_calls"]["output"] == total["calls"]
    orjson.dumps(total)  # every figure fits JSON's integers


def test_usage_takes_a_count_in_range_and_nothing_else() -> None:
    assert Usage.from_event({"input": MAX_COUNT, "output": 0}) == Usage(input=MAX_COUNT, output=0)
    for bad in (MAX_COUNT + 1, 2**63, 2**64 - 1, -1, True, 3.0, "5", None):
        assert Usage.from_event({"input": bad, "cache_read": 2}) == Usage(cache_read=2), bad
