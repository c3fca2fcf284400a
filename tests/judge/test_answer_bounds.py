"""An evaluator's answer past asz's bounds: a 10 MB statement is cut (saying so), a list of
thousands of criteria or citations keeps the first ANSWER_ITEMS (the stage partial, its note
saying what was cut), and an answer nested past ANSWER_DEPTH is refused with that reason, not a
converter's "Recursion limit reached". The conversation and the answers are made here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from asz_core.judge import runner
from asz_core.judge.context import ANSWER_DEPTH, ANSWER_ITEMS, ANSWER_TEXT, bound_answer

from tests.adapters.cc_shapes import Session, text, usage


@pytest.fixture
def conv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    from asz_core.collect import collect
    from asz_core.store import Store

    home = tmp_path / "home"
    monkeypatch.setenv("ASZ_HOME", str(home))
    s = Session("bounds-1")
    s.user("u1", None, "make the parser faster")
    s.assistant("a1", "u1", "msg_1", "req_1", text("done: it is faster"), usage(10, 0, 0, 5, final=True))
    store = Store.open(home)
    collect([s.write(tmp_path / "t.jsonl")], store)
    yield store
    store.close()


def _judge(store: Any, tmp_path: Path, entry: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    from tests.judge.conftest import inputs_of

    if "answer" in entry:
        entry["answer"]["inputs"][0]["input"] = inputs_of(store, "bounds-1")[0].input
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"calls": [{"stage": "targets", "call": 1, **entry},
                                            {"stage": "targets", "call": 1, **entry}]}))
    res = runner.judge(runner.JudgeOptions("bounds-1", evaluator=f"scripted:{script}", stages=("targets",)), store=store)
    return res, json.loads((res.path / "stages" / "targets.json").read_text())


def _answer(statement: str = "the parser is faster", criteria: int = 1) -> dict[str, Any]:
    return {"inputs": [{"input": "?", "actions": [{"target": "new:a", "action": "create"}],
                        "relations": [{"relation": "new", "goal": "new:A", "statement": "speed"}]}],
            "targets": [{"target": "new:a", "statement": statement, "kind": "change",
                         "criteria": [{"text": f"criterion {i}"} for i in range(criteria)], "state": "open"}],
            "goals": []}


def test_a_huge_statement_and_list_are_cut_and_the_stage_says_so(conv: Any, tmp_path: Path) -> None:
    res, sf = _judge(conv, tmp_path, {"answer": _answer("x" * 10_000_000, criteria=ANSWER_ITEMS * 3)})
    assert sf["status"] == "partial", sf.get("reason")
    said = " ".join(sf["note"])
    assert "10,000,000 characters" in said and f"{ANSWER_ITEMS * 3:,} items" in said
    (target,) = sf["targets"]
    assert len(target["statement"]) < ANSWER_TEXT + 100 and target["statement"].endswith("characters in all)")
    assert len(target["criteria"]) <= ANSWER_ITEMS
    assert (res.path / "stages" / "targets.json").stat().st_size < 2_000_000
    shown = runner.read_run(res.path)  # -show reads it back at once
    assert shown["stages"]["targets"]["status"] == "partial"


@pytest.mark.parametrize("levels", [500, 5000])  # within what orjson reads, and past it
def test_an_answer_nested_too_deep_is_refused_with_that_reason(conv: Any, tmp_path: Path, levels: int) -> None:
    deep = '{"inputs": [], "targets": [], "goals": [], "x": ' + "[" * levels + "]" * levels + "}"
    res, sf = _judge(conv, tmp_path, {"raw": deep})
    assert sf["status"] == "failed"
    assert f"nested deeper than {ANSWER_DEPTH} levels" in sf["reason"], sf["reason"]
    assert "Recursion" not in json.dumps(sf)


def test_bound_answer_on_values() -> None:
    v: Any = "leaf"
    for _ in range(ANSWER_DEPTH + 5):
        v = {"a": [v]}
    got, cuts, why = bound_answer(v)
    assert got is None and why and "nested deeper" in why
    ok = {"a": [{"b": "s" * 10}] * 3}
    assert bound_answer(ok) == (ok, [], None)
    got, cuts, why = bound_answer({"cites": list(range(ANSWER_ITEMS + 1)), "t": "é" * (ANSWER_TEXT + 1)})
    assert why is None and len(got["cites"]) == ANSWER_ITEMS and len(cuts) == 2
    assert any("$.cites" in c for c in cuts) and any("$.t" in c for c in cuts)
