"""An oversized argument (a 1 MB search, a 1 MB argument name, a 1 MB list, too many arguments) is a
bad argument: answered as the navigator's tool error, logged, and charged against the call's budget
like any answer (it was answered "internal: answer ... exceeds a page; report this", uncounted)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from asz_core import navigation as N

from .test_mcp import _Raw


def test_an_oversized_argument_is_a_bad_argument_charged_and_logged(corpus_store: Any, tmp_path: Path) -> None:
    home = Path(corpus_store.path).parent
    log = tmp_path / "reads.jsonl"
    raw = _Raw(home, "fa812bfe", "--window", "k2", "--log", str(log))
    big = "x" * 1_000_000
    cases = [("search", {"query": big}), ("step", {"id": "s3", big: 1}), ("talk", {"id": ["k2"] * 200_000}),
             ("talks", {f"a{i}": i for i in range(40)}), ("search", {"query": "y" * (N.ARG_BYTES + 1)})]
    texts = []
    try:
        for n, (tool, args) in enumerate(cases, 1):
            res = raw.call(n, tool, args)["result"]
            assert res["isError"], (tool, list(args)[:2])
            text = res["content"][0]["text"]
            err = json.loads(text)["error"]
            assert "internal" not in err and ("at most" in err), err
            assert len(text) < 1000  # the argument is not echoed back
            texts.append(text)
        ok = raw.call(9, "search", {"query": "y" * N.ARG_BYTES})["result"]  # at the bound: read
        assert not ok["isError"] or "at most" not in ok["content"][0]["text"]
        texts.append(ok["content"][0]["text"])
    finally:
        raw.close()
    entries = [json.loads(x) for x in log.read_text().splitlines()]
    assert [e["status"] for e in entries][:5] == ["error"] * 5
    assert [e["bytes"] for e in entries] == [len(t.encode()) for t in texts]
    assert entries[-1]["used"] == sum(len(t.encode()) for t in texts)  # every answer counted
    assert all(len(json.dumps(e)) < 5000 for e in entries)  # the log keeps the arguments clipped


def test_an_argument_nested_too_deep_is_a_bad_argument_charged_and_logged(corpus_store: Any, tmp_path: Path) -> None:
    """An argument nested deeper than any tool's (a list in a list, twelve or six hundred levels;
    the SDK's reader refuses the latter as no JSON-RPC message, which nothing counted) is the
    navigator's counted tool error, as an oversized one is."""
    home = Path(corpus_store.path).parent
    log = tmp_path / "reads.jsonl"
    raw = _Raw(home, "fa812bfe", "--window", "k2", "--log", str(log))
    texts = []
    try:
        for n, levels in enumerate((N.ARG_DEPTH + 4, 600), 1):
            deep: Any = "s3"
            for _ in range(levels):
                deep = [deep]
            res = raw.call(n, "step", {"id": deep})
            assert "result" in res, res  # a tool's answer, not a protocol error
            text = res["result"]["content"][0]["text"]
            assert res["result"]["isError"] and f"nested more than {N.ARG_DEPTH} levels deep" in json.loads(text)["error"]
            texts.append(text)
    finally:
        raw.close()
    entries = [json.loads(x) for x in log.read_text().splitlines()]
    assert [e["status"] for e in entries] == ["error", "error"]
    assert entries[-1]["used"] == sum(len(t.encode()) for t in texts)
