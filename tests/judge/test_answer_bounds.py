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


ROOT = Path(__file__).resolve().parents[2]


def test_an_answer_past_the_bounds_in_all_is_cut_though_every_list_is_within(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Every list within ANSWER_ITEMS and every string within ANSWER_TEXT, but hundreds of 16 KB
    claims, findings and readings and tens of thousands of citations in one achievement answer
    (the bundled example, its other calls as scripted): the stage keeps the answer's beginning,
    is partial saying what was cut, and its file, -show and report.html stay small."""
    from ruamel.yaml import YAML

    from asz_core.collect import collect
    from asz_core.judge.context import ANSWER_ALL_ITEMS, ANSWER_ALL_TEXT, ANSWER_SHORT
    from asz_core.store import Store

    from tests.core.helpers import run_asz

    home = tmp_path / "home"
    monkeypatch.setenv("ASZ_HOME", str(home))
    store = Store.open(home)
    collect([ROOT / "examples" / "claude-code"], store)
    calls = YAML(typ="safe").load((ROOT / "examples" / "scripted-5e1f0c2a.yaml").read_text())["calls"]
    for c in calls:
        c.pop("pause", None)
    t1, t2 = (next(c for c in calls if c["stage"] == "achievement" and c["call"] == k)["answer"]["targets"][0]
              for k in (1, 2))
    steps = [f"s{i}" for i in range(1, 31)]
    n, long = 150, ANSWER_TEXT - 20  # within every bound one by one
    # the first target's answer: text past the bound in all, the second's: citations past it
    t1["claims"] = [{"claim": f"claim {i} " + "x" * long, "said": "s16", "check": "supported", "cites": ["s14"],
                     "criteria": ["t1.c1"]} for i in range(n)]
    t1["findings"] = [{"anchor": "s7", "what": f"finding {i} " + "w" * long, "why": "y" * long, "avoid": "a" * long,
                       "cites": ["s9"]} for i in range(n)]
    t2["claims"] = [{"claim": f"claim {i}", "said": "s30", "check": "supported", "cites": steps * 60,
                     "criteria": ["t2.c1"]} for i in range(n)]
    assert len(steps * 60) <= ANSWER_ITEMS and n * len(steps * 60) > ANSWER_ALL_ITEMS
    assert n * 4 * long > ANSWER_ALL_TEXT
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"calls": calls}))
    res = runner.judge(runner.JudgeOptions("5e1f", evaluator=f"scripted:{script}"), store=store)
    store.close()
    sf = json.loads((res.path / "stages" / "achievement.json").read_text())
    assert sf["status"] == "partial"
    said = " ".join(sf["note"])
    assert f"the answer holds {ANSWER_ALL_TEXT:,} characters in all" in said
    assert f"the answer holds {ANSWER_ALL_ITEMS:,} list items in all" in said
    assert "more cuts" in said and "and every later one of the answer" in said
    kept = json.dumps(sf)
    assert "claim 0 xxx" in kept  # the beginning is kept whole
    assert (res.path / "stages" / "achievement.json").stat().st_size < 3 * ANSWER_ALL_TEXT
    assert (res.path / "report.html").stat().st_size < 3 * ANSWER_ALL_TEXT
    shown = run_asz("judge", "-show", res.path.name, home=home)
    assert shown.returncode == 0 and len(shown.stdout) < 3 * ANSWER_ALL_TEXT
    assert ANSWER_SHORT < ANSWER_TEXT


def test_bound_answer_in_all() -> None:
    from asz_core.judge.context import ANSWER_ALL_ITEMS, ANSWER_ALL_TEXT, ANSWER_SHORT

    lists = ANSWER_ALL_ITEMS // ANSWER_ITEMS + 2
    got, cuts, why = bound_answer({"a": [list(range(ANSWER_ITEMS)) for _ in range(lists)], "z": "first"})
    assert why is None and sum(len(x) for x in got["a"]) + lists == ANSWER_ALL_ITEMS  # (the outer list's items count)
    assert got["a"][0] == list(range(ANSWER_ITEMS)) and got["a"][-1] == [] and got["z"] == "first"
    texts = ANSWER_ALL_TEXT // ANSWER_TEXT + 3
    got, cuts, why = bound_answer([f"{i}:" + "t" * (ANSWER_TEXT - 10) for i in range(texts)] + ["id-1"])
    assert got[0].startswith("0:") and len(got[0]) == ANSWER_TEXT - 8
    assert len(got[-2]) < ANSWER_SHORT + 50 and got[-2].endswith("characters in all)") and got[-1] == "id-1"
    assert sum(len(s) for s in got) < ANSWER_ALL_TEXT + ANSWER_TEXT + 100 * texts
    assert len(cuts) == 2 and cuts[-1] == f"{texts - 2 - ANSWER_ALL_TEXT // ANSWER_TEXT + 1:,} more cuts" or print(cuts)
