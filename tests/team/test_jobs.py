"""Judge runs on the job engine: queued once, run by workers, retried, given back when a worker
dies, bounded per evaluator, summarised in the team database (asz_core.team)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from asz_core.collect import collect
from asz_core.conversations import Filter
from asz_core.store import Store

from .conftest import EXAMPLE, EXAMPLE_ID, SCRIPT

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _config(home: Path, **jobs) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    p = home / "asz.yaml"
    p.write_text(json.dumps({"jobs": {"retry_wait": 0, **jobs}}), encoding="utf-8")
    return p


def _script(tmp: Path, pause: float | None = None, stage: str = "achievement") -> Path:
    data = YAML(typ="safe", pure=True).load(SCRIPT.read_text(encoding="utf-8"))
    if pause:
        for c in data["calls"]:
            if c.get("stage") == stage:
                c["pause"] = pause
    p = tmp / "script.json"
    p.write_text(json.dumps(data), encoding="utf-8")
    return p


def _rows(url: str) -> list[dict]:
    import psycopg

    from asz_core.team import summaries

    with psycopg.connect(url, autocommit=True) as conn:
        return summaries.rows(conn)


def _collect(home: Path, *paths: Path) -> None:
    st = Store.open(home)
    try:
        collect(list(paths), st)
    finally:
        st.close()


def test_queued_once_run_closed_and_summarised(team_db: str, asz_home: Path, tmp_path: Path) -> None:
    from asz_core.team import jobs

    _collect(asz_home, EXAMPLE)
    cfg = _config(asz_home)
    script = _script(tmp_path)
    queued = jobs.judge_all(Filter(), f"scripted:{script}", config=cfg).queued
    assert [q.conversation for q in queued] == [EXAMPLE_ID] and queued[0].job is not None
    # the same run again, while it waits: not queued twice
    again = jobs.judge_all(Filter(), f"scripted:{script}", config=cfg).queued
    assert again[0].job is None and again[0].skipped == "already queued"
    assert [r["status"] for r in _rows(team_db)] == ["queued"]

    jobs.work(until_empty=True, config=cfg)
    (row,) = _rows(team_db)
    assert row["status"] == "closed" and row["attempts"] == 1 and row["head"] == "r1"
    run = Path(row["path"])
    close = json.loads((run / "close.json").read_text())
    assert row["summary"]["scores"]["achievement"] == close["statement"]["scores"]["achievement"]["rounded"]
    # the targets' cost adds up what close.json gives each target
    from decimal import Decimal

    total = sum(Decimal(t["cost"]["total"]["money"]) for t in close["statement"]["targets"])
    assert Decimal(row["summary"]["cost"]["total"]["money"]) == total > 0
    # the run is a whole run, written as `asz judge` writes one
    assert (run / "report.html").is_file() and (run / "run.json").is_file()


def test_a_failing_run_is_retried_then_failed_and_listed_once(team_db: str, asz_home: Path, tmp_path: Path) -> None:
    from asz_core.team import jobs

    _collect(asz_home, EXAMPLE)
    cfg = _config(asz_home, attempts=2)
    bad = tmp_path / "empty.json"
    bad.write_text(json.dumps({"calls": []}), encoding="utf-8")  # answers nothing: every stage fails
    jobs.judge_all(Filter(), f"scripted:{bad}", config=cfg)
    jobs.work(until_empty=True, config=cfg)
    (row,) = _rows(team_db)
    assert row["status"] == "failed" and row["attempts"] == 2
    assert "targets" in row["summary"]["failed_stages"]
    runs = sorted((asz_home / "runs" / EXAMPLE_ID).iterdir())
    assert len(runs) == 2  # one run directory per attempt, each complete on its own
    assert all((r / "close.json").is_file() for r in runs)


def test_bounded_runs_per_evaluator(team_db: str, asz_home: Path, tmp_path: Path) -> None:
    """Two runs of one evaluator with one slot never overlap, even with a worker that could run both."""
    from asz_core.team import jobs

    _collect(asz_home, two_examples(tmp_path))
    script = _script(tmp_path, pause=1.5, stage="targets")
    spans = {}
    for slots, name in ((1, "one"), (2, "two")):
        cfg = _config(asz_home, slots={"scripted": slots})
        jobs.judge_all(Filter(), f"scripted:{script}", config=cfg, window=None)
        jobs.work(concurrency=2, until_empty=True, config=cfg)
        rows = [r for r in _rows(team_db) if r["summary"] and r["job_id"] not in {x for v in spans.values() for x in v}]
        assert len(rows) == 2 and all(r["status"] == "closed" for r in rows)
        spans[name] = {r["job_id"]: (json.loads((Path(r["path"]) / "run.json").read_text())["started"],
                                     json.loads((Path(r["path"]) / "close.json").read_text())["ended"]) for r in rows}
    (a1, b1), (a2, b2) = spans["one"].values()
    assert b1 <= a2 or b2 <= a1, f"one slot, yet the runs overlapped: {spans['one']}"
    (a1, b1), (a2, b2) = spans["two"].values()
    assert a1 < b2 and a2 < b1, f"two slots and two at once, yet one waited for the other: {spans['two']}"


def two_examples(tmp: Path) -> Path:
    """The example conversation twice, the second with ids of its own (as bench/vs_ccusage.py lays
    out copies): two conversations the example's script judges alike."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    try:
        from vs_ccusage import projects_folder
    finally:
        sys.path.pop(0)
    return projects_folder(EXAMPLE, tmp / "two", 2) / "projects"


def _descendants(pid: int) -> list[str]:
    """Every process below ``pid`` (the worker's forkserver and the runs forked from it)."""
    out, todo = [], [str(pid)]
    while todo:
        kids = subprocess.run(["pgrep", "-P", todo.pop()], capture_output=True, text=True).stdout.split()
        out += kids
        todo += kids
    return out


def _worker(cfg: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([str(Path(sys.executable).parent / "asz"), "worker", "--config", str(cfg), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=os.environ.copy())


def test_a_worker_killed_mid_stage_is_finished_by_another_and_listed_once(team_db: str, asz_home: Path,
                                                                           tmp_path: Path) -> None:
    from asz_core.team import jobs

    _collect(asz_home, EXAMPLE)
    cfg = _config(asz_home, stalled_after=2)
    script = _script(tmp_path, pause=20)  # the achievement stage waits: the worker dies inside it
    jobs.judge_all(Filter(), f"scripted:{script}", config=cfg)
    first = _worker(cfg)
    deadline = time.monotonic() + 60
    run_dir = None
    while time.monotonic() < deadline:
        runs = list((asz_home / "runs").glob("*/*/stages/targets.json"))
        if runs:
            run_dir = runs[0].parent.parent
            break
        time.sleep(0.2)
    assert run_dir is not None, "the first worker never reached the achievement stage"
    children = _descendants(first.pid)
    first.send_signal(signal.SIGKILL)
    first.wait(10)
    # its run's process ends with it, rather than go on behind the engine's back
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(Path(f"/proc/{c}").exists() for c in children):
        time.sleep(0.2)
    assert children and not any(Path(f"/proc/{c}").exists() and b"zombie" not in Path(f"/proc/{c}/status").read_bytes().lower()
                                for c in children)
    (row,) = _rows(team_db)
    assert row["status"] == "running"  # never closed by the run the kill cut
    time.sleep(3)  # the dead worker's heartbeat is older than stalled_after
    fast = _script(tmp_path)  # the second worker's run answers at once (the same script path, rewritten)
    assert fast == script
    second = _worker(cfg, "--until-empty")
    out, _ = second.communicate(timeout=120)
    assert second.returncode == 0, out.decode()
    assert b"gave back 1 job" in out
    (row,) = _rows(team_db)
    assert row["status"] == "closed" and row["attempts"] == 2
    assert Path(row["path"]) != run_dir and (Path(row["path"]) / "close.json").is_file()
    from asz_core.judge.runs import list_runs

    statuses = sorted(r.status for r in list_runs(home=asz_home))
    assert statuses == ["closed", "stopped"]  # the cut run is listed stopped, never closed
