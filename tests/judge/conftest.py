"""Helpers of the judge tests: scripts for the scripted evaluator, and runs over corpus conversations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from asz_core.judge import runner
from asz_core.assembly import PERSON_SOURCES

from tests.conftest import CORPUS

RUNTIMES = ("claude-code", "codex", "kiro", "langsmith")


@pytest.fixture(scope="session")
def every_corpus_store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Every runtime's corpus collected once into one store shared by read-only tests."""
    from asz_core.collect import collect
    from asz_core.store import Store

    dirs = [CORPUS / r for r in RUNTIMES if (CORPUS / r).is_dir()]
    if not dirs:
        pytest.skip(f"corpus not found at {CORPUS}")
    s = Store.open(tmp_path_factory.mktemp("every-corpus-home"))
    collect(dirs, s)
    yield s
    s.close()


@pytest.fixture(autouse=True)
def _plugins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ASZ_HOME", str(tmp_path / "home"))  # no asz.yaml of the machine's is read
    for name in ("ASZ_DISABLE_PLUGINS", "ASZ_DISABLE_PLUGIN_AUTOLOAD", "ASZ_KIT"):
        monkeypatch.delenv(name, raising=False)


def inputs_of(store: Any, cid: str) -> list[Any]:
    """The input steps the targets stage answers for (whole conversation), in order."""
    from asz_core import window

    w = window.build(store, cid)
    conv = w.conv
    out = []
    for kid in w.judged:
        for s in conv.talk(kid).inputs:
            st = conv.step(s)
            if st.source in PERSON_SOURCES and st.input:
                out.append(st)
    return out


def cid_with(store: Any, n: int) -> str:
    """A corpus conversation with at least ``n`` inputs."""
    for r in store.conversations():
        if len(inputs_of(store, r.id)) >= n:
            return r.id
    pytest.skip(f"no corpus conversation with {n} inputs")


def plain_answer(inputs: list[Any]) -> dict[str, Any]:
    """A valid answer: the first input starts goal A and creates target A; each later input
    continues the goal after the input before it."""
    ans: dict[str, Any] = {"inputs": [], "targets": [], "goals": []}
    for k, s in enumerate(inputs):
        if k == 0:
            ans["inputs"].append({"input": s.input, "actions": [{"target": "new:a", "action": "create"}],
                                  "relations": [{"relation": "new", "goal": "new:A", "statement": "do a"}]})
        else:
            ans["inputs"].append({"input": s.input, "actions": [{"target": "new:a", "action": "refine"}],
                                  "relations": [{"relation": "continue", "goal": "new:A", "follows": inputs[k - 1].input}]})
    ans["targets"].append({"target": "new:a", "statement": "the outcome a", "kind": "change",
                           "criteria": [{"text": "a works"}], "state": "open"})
    return ans


def judge(store: Any, tmp_path: Path, cid: str, calls: list[dict[str, Any]], **kw: Any) -> tuple[runner.RunResult, dict[str, Any]]:
    """Run the targets stage with a script of ``calls`` (``stages=None`` runs every stage);
    returns the result and the targets stage file."""
    kw.setdefault("stages", ("targets",))
    script = tmp_path / f"script-{len(list(tmp_path.glob('script-*')))}.json"
    script.write_text(json.dumps({"calls": calls}))
    settings = kw.pop("settings", {})
    progress = kw.pop("progress", None)
    opts = runner.JudgeOptions(cid, evaluator=f"scripted:{script}", settings=settings, config=kw.pop("config", None), **kw)
    res = runner.judge(opts, store=store, progress=progress)
    stage = json.loads((res.path / "stages" / "targets.json").read_text())
    return res, stage


def entry(answer: Any = None, call: int = 1, **kw: Any) -> dict[str, Any]:
    e = {"stage": "targets", "call": call, "requests": [{"reads": [{"tool": "talks"}],
                                                         "usage": {"input": 1000, "output": 100, "cache_read": 50, "cache_write": 0}}]}
    if answer is not None:
        e["answer"] = answer
    e.update(kw)
    return e
