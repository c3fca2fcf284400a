"""The run around the stages: configuration, run files, chunks, the catalogue's bound, progress,
the CLI, and what `asz judge mcp` reads of a run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from asz_core.judge import chunks as CH, context, runner
from asz_core.judge import config as C
from asz_core.errors import AszError, ConfigError
from asz_core.judge.stages.targets import bounded_catalogue

from .conftest import cid_with, entry, inputs_of, judge, plain_answer


def test_config_defaults_file_and_flags(tmp_path: Path) -> None:
    cfg = C.load()
    assert (cfg.judge.read_bytes, cfg.judge.single_bytes, cfg.judge.chunk_bytes, cfg.judge.state_bytes, cfg.judge.mode,
            cfg.judge.concurrency, cfg.judge.progress) == (131072, 49152, 32768, 16384, "auto", 4, 10.0)
    f = tmp_path / "asz.yaml"
    f.write_text("judge:\n  mode: stream\n  chunk_bytes: 1000\n  stages: {targets: scripted:s.yaml}\n"
                 "evaluators:\n  scripted: {script: s.yaml}\n")
    cfg = C.load(f, overrides={"judge.mode": "single"})
    assert cfg.judge.mode == "single" and cfg.judge.chunk_bytes == 1000 and cfg.evaluator_for("targets") == "scripted:s.yaml"
    assert cfg.source == str(f.resolve())
    sp = context.parse_evaluator("scripted", cfg)
    assert sp.options["script"] == str(tmp_path / "s.yaml")
    with pytest.raises(ConfigError, match="judge.mode must be one of auto, single, stream, got 'fast'"):
        C.load(f, overrides={"judge.mode": "fast"})
    with pytest.raises(ConfigError, match=r"extra fields found \(chunk\)"):
        C.load(f, overrides={"judge.chunk": 3})
    f.write_text("judge: [1, 2]\n")
    with pytest.raises(ConfigError):
        C.load(f)
    with pytest.raises(ConfigError, match="does not exist"):
        C.load(tmp_path / "missing.yaml")


def _item(name: str, sizes: list[int]) -> CH.Item:
    return CH.Item(name, tuple(b"x" * n for n in sizes), tuple(f"{name}.{k}" for k in range(len(sizes))))


def test_chunks() -> None:
    j = C.JudgeConfig(single_bytes=100, chunk_bytes=50)
    mode, chunks = CH.plan_chunks([_item("a", [20, 20]), _item("b", [30])], j)
    assert mode == "single" and len(chunks) == 1 and chunks[0].own == ("a.0", "a.1", "b.0")
    mode, chunks = CH.plan_chunks([_item("a", [20, 20]), _item("b", [30]), _item("c", [10, 10, 10])], j)
    assert mode == "stream" and [c.items for c in chunks] == [("a",), ("b",), ("c",)]
    assert all(c.bytes <= 50 for c in chunks)
    # an item larger than a chunk: alone, its rows past the limit named by count (and still its own)
    mode, chunks = CH.plan_chunks([_item("a", [10]), _item("big", [20, 20, 20, 20]), _item("c", [10])], j)
    assert [c.items for c in chunks] == [("a",), ("big",), ("c",)]
    assert chunks[1].past == (("big", 2, "big.2", "big.3"),) and len(chunks[1].rows) == 2
    assert chunks[1].own == ("big.0", "big.1", "big.2", "big.3")
    # forced ways
    assert CH.plan_chunks([_item("a", [10])], C.JudgeConfig(mode="stream"))[0] == "stream"
    assert CH.plan_chunks([_item("a", [10**6])], C.JudgeConfig(mode="single"))[0] == "single"


def test_the_catalogue_is_bounded() -> None:
    def t(n: int, state: str) -> dict[str, Any]:
        return {"id": f"t{n}", "statement": "s" * 300, "state": state, "goal": "g1", "talks": ["k1"],
                "criteria": [{"id": f"t{n}.c1", "text": "c" * 100, "dropped": False, "dropped_by": None}]}

    cat = [t(1, "closed"), t(2, "open"), t(3, "cancelled")]
    whole = bounded_catalogue(cat, 10**6)
    assert whole.count("s" * 300) == 3
    two = bounded_catalogue(cat, len(whole) - 10)  # open whole, the others shortened
    lines = [json.loads(x) for x in two.splitlines()]
    assert [x.get("shortened", False) for x in lines] == [True, False, True]
    assert len(two) <= len(whole) - 10
    short = [json.loads(x) for x in bounded_catalogue(cat, 900).splitlines()]
    assert all(x["shortened"] for x in short) and short[0]["criteria"] == "1 live, 0 dropped"
    ids = bounded_catalogue(cat * 40, 300)
    assert len(ids) <= 300 and ids.splitlines()[0] == '{"id":"t1","state":"closed"}'
    assert ids.splitlines()[-1].startswith("… and ") and "targets(id=…)" in ids
    assert bounded_catalogue([], 10) == "(none yet)"


def test_files_are_written_once(tmp_path: Path) -> None:
    context.write_once(tmp_path / "a.json", b"1")
    with pytest.raises(AszError, match="written once"):
        context.write_once(tmp_path / "a.json", b"2")
    assert (tmp_path / "a.json").read_bytes() == b"1" and [p.name for p in tmp_path.iterdir()] == ["a.json"]


def test_runs_are_never_merged_and_stages_can_be_chosen(corpus_store: Any, tmp_path: Path) -> None:
    cid = cid_with(corpus_store, 1)
    ans = plain_answer(inputs_of(corpus_store, cid))
    a, _ = judge(corpus_store, tmp_path, cid, [entry(ans)], stages=None)
    b, _ = judge(corpus_store, tmp_path, cid, [entry(ans)], stages=("targets", "reference"))
    assert a.path != b.path and a.path.parent == b.path.parent
    assert b.stages == {"targets": "complete", "achievement": "skipped", "subtasks": "skipped", "efficiency": "skipped",
                        "reference": "skipped", "divergence": "skipped"}
    sf = json.loads((b.path / "stages/achievement.json").read_text())
    assert sf["reason"] == "not asked for (--stages)"
    sf = json.loads((b.path / "stages/reference.json").read_text())
    assert sf["reason"] == "no sources were given"
    a_ach = json.loads((a.path / "stages/achievement.json").read_text())  # the script answers no achievement call
    assert a_ach["status"] == "failed" and a_ach["reason"].startswith("every call gave nothing readable twice")
    close = json.loads((a.path / "close.json").read_text())
    assert close["consumed"]["requests"] == 1 and close["stages"]["targets"] == "complete"
    with pytest.raises(ConfigError, match="no stage 'judging'"):
        judge(corpus_store, tmp_path, cid, [entry(ans)], stages=("judging",))


def test_no_evaluator_and_unknown_evaluator(corpus_store: Any, tmp_path: Path) -> None:
    cid = cid_with(corpus_store, 1)
    with pytest.raises(ConfigError, match="no evaluator for the targets stage.*installed: .*scripted"):
        runner.judge(runner.JudgeOptions(cid), store=corpus_store)
    with pytest.raises(AszError, match="no evaluator backend named 'gpt'"):
        runner.judge(runner.JudgeOptions(cid, evaluator="gpt"), store=corpus_store)


def test_progress_and_the_run_end(corpus_store: Any, tmp_path: Path) -> None:
    cid = cid_with(corpus_store, 1)
    lines: list[str] = []
    e = entry(plain_answer(inputs_of(corpus_store, cid)), pause=0.35)
    res, stage = judge(corpus_store, tmp_path, cid, [e], settings={"judge.progress": 0.1}, progress=lines.append,
                       stages=("targets",))
    running = [x for x in lines if "running" in x]
    assert running and running[0].startswith("targets: 0 calls ended, 1 running (reading ")
    assert "tokens" in running[0] and "per minute" in running[0]
    assert lines[-2].startswith("targets: complete; 1 call, 1 attempt; 1 request; in 1,000 · out 100")
    assert lines[-1].startswith("run closed: the evaluator stages consumed 1 request;")
    close = json.loads((res.path / "close.json").read_text())
    assert close["evaluator_seconds"] >= 0.3 and close["per_minute"]["input"] > 0


def test_progress_while_a_call_runs_counts_what_its_requests_reported(corpus_store: Any, tmp_path: Path) -> None:
    """The scripted call says its two requests, then thinks: every line while it runs counts both
    (requests and tokens) before the call has ended; after it, the stage's totals."""
    cid = cid_with(corpus_store, 1)
    lines: list[str] = []
    e = entry(plain_answer(inputs_of(corpus_store, cid)), pause=0.6)
    e["requests"] = [{"reads": [{"tool": "card"}], "usage": {"input": 300, "output": 20, "cache_read": 4000, "cache_write": 0}},
                     {"usage": {"input": 50, "output": 400, "cache_read": 4300, "cache_write": 30}}, {"usage": None}]
    judge(corpus_store, tmp_path, cid, [e], settings={"judge.progress": 0.1}, progress=lines.append, stages=("targets",))
    running = [x for x in lines if "0 calls ended, 1 running" in x]
    assert len(running) >= 3, lines
    for x in running:
        assert "; 2 requests (+1 unsaid), 9,100 tokens;" in x, x
    assert lines[-2].startswith("targets: complete; 1 call, 1 attempt; 2 requests (+1 whose usage was never said); "
                                "in 350 · out 420 · cache read 8,300 · cache write 30")


def test_mcp_reads_the_run(corpus_store: Any, tmp_path: Path) -> None:
    """`asz judge mcp --run DIR` takes the conversation, head, window and budget from run.json."""
    cid = cid_with(corpus_store, 1)
    res, _ = judge(corpus_store, tmp_path, cid, [entry(plain_answer(inputs_of(corpus_store, cid)))],
                   settings={"judge.read_bytes": 5000})
    run = json.loads((res.path / "run.json").read_text())
    assert run["conversation"] == cid and run["head"].startswith("r") and run["window"] == "all"
    assert run["config"]["judge"]["read_bytes"] == 5000
    from asz_core.navigation import Navigator

    from asz_core import window

    nav = Navigator(window.build(corpus_store, cid), corpus_store, run_dir=res.path)
    got = json.loads(nav.call("targets"))
    assert got["targets"][0]["id"] == "t1" and got["targets"][0]["state"] == "open"


def test_cli_judge_and_show(corpus_store: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from asz_core import cli

    cid = cid_with(corpus_store, 1)
    monkeypatch.setenv("ASZ_HOME", str(Path(corpus_store.path).parent))
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"calls": [entry(plain_answer(inputs_of(corpus_store, cid)))]}))
    r = CliRunner().invoke(cli.app, ["judge", cid[:8], "--evaluator", f"scripted:{script}", "--stages", "targets"])
    assert r.exit_code == 0, r.output
    assert "targets: complete" in r.output and "t1" in r.output and "the outcome a" in r.output
    run_id = next(x for x in r.output.splitlines() if x.startswith("run /")).rsplit("/", 1)[-1]
    r2 = CliRunner().invoke(cli.app, ["judge", "-show", run_id, "--json"])
    assert r2.exit_code == 0, r2.output
    d = json.loads(r2.output)
    assert d["stages"]["targets"]["targets"][0]["statement"] == "the outcome a" and d["close"]["stages"]["targets"] == "complete"
    r3 = CliRunner().invoke(cli.app, ["judge", "-show", run_id])
    assert r3.exit_code == 0 and "the outcome a" in r3.output
    r4 = CliRunner().invoke(cli.app, ["judge", cid[:8], "--stage-evaluator", "targetz=scripted"])
    assert r4.exit_code != 0
    r5 = CliRunner().invoke(cli.app, ["judge", "mcp", "--help"])
    assert r5.exit_code == 0 and "navigation" in r5.output


def test_calls_side_by_side_keep_their_order() -> None:
    import threading
    import time
    import types

    sc = context.StageCalls.__new__(context.StageCalls)
    sc.run = types.SimpleNamespace(cfg=C.Config(judge=C.JudgeConfig(concurrency=3)))
    seen: set[int] = set()
    at_once = []
    lock = threading.Lock()
    running = [0]

    def job(n: int) -> Any:
        def f() -> int:
            with lock:
                running[0] += 1
                at_once.append(running[0])
                seen.add(threading.get_ident())
            time.sleep(0.05 * (4 - n))
            with lock:
                running[0] -= 1
            return n
        return f

    assert sc.side_by_side([job(n) for n in range(4)]) == [0, 1, 2, 3]
    assert max(at_once) == 3 and len(seen) == 3


def test_the_goals_are_bounded() -> None:
    from asz_core.judge.judgment import Evolution
    from asz_core.judge.stages.targets import Scan, _Goal, goals_text

    scan = Scan([], set(), set())
    scan.order = [f"i{n}" for n in range(1, 201)]
    scan.pos = {i: k for k, i in enumerate(scan.order)}
    for n in range(1, 101):
        scan.goals[f"g{n}"] = _Goal(f"g{n}", inputs=[f"i{2 * n}"], evolution=[Evolution(f"i{2 * n}", "new", "x" * 150)])
    whole = goals_text(scan, 10**6)
    assert len(whole.splitlines()) == 100 and '"asks":"' in whole
    short = goals_text(scan, len(whole) - 1)
    assert '"asks"' not in short and len(short.splitlines()) == 100
    few = goals_text(scan, 1000)
    assert len(few.encode()) <= 1000
    lines = few.splitlines()
    assert json.loads(lines[0])["id"] == "g100" and lines[-1].startswith("… and ")
