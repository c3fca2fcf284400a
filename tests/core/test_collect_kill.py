"""Writes are transactional: a collect killed at any point leaves the store as it was before the
collect or as it is after it, never half; and the next collect completes normally."""

from __future__ import annotations

import json
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from asz_core.collect import CollectResult, collect
from asz_core.registry import Registry
from asz_core.store import Store

from .helpers import CLAUDE_CORPUS, MATCH, asz_env, db_rows, fingerprint, run_asz

pytestmark = pytest.mark.usefixtures("corpus")

KILLPOINT = Path(__file__).with_name("killpoint.py")
EMPTY = fingerprint(Path("/nonexistent/asz.db"))


def _asz_collect(home: Path, paths: list[Path]) -> dict[str, Any]:
    """`asz collect PATHS --json` in a child process."""
    r = run_asz("collect", *map(str, paths), "--json", home=home)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def registry() -> Registry:
    return Registry()


def _collect_here(home: Path, paths: list[Path], registry: Registry) -> CollectResult:
    """The same collect in this process (quicker than a child, for the collects that follow a kill)."""
    store = Store.open(home)
    try:
        return collect(paths, store, registry)
    finally:
        store.close()


def _assert_whole(db: Path) -> None:
    """Every round holds exactly the records it counts, and every record belongs to a round."""
    if not fingerprint(db)["rounds"]:
        return
    counted = db_rows(db, "SELECT conversation, number, records FROM rounds ORDER BY 1, 2")
    held = db_rows(db, "SELECT conversation, round, COUNT(*) FROM records GROUP BY 1, 2 ORDER BY 1, 2")
    assert counted == held
    orphans = db_rows(db, "SELECT COUNT(*) FROM records r LEFT JOIN rounds o ON o.conversation = r.conversation "
                          "AND o.number = r.round WHERE o.number IS NULL")
    assert orphans == [(0,)]


def _same(state: dict[str, Any], expected: dict[str, Any]) -> bool:
    """Equal, or False with what differs printed (the whole states are too long for an assert)."""
    for k in expected:
        if state[k] != expected[k]:
            a, b = set(state[k]), set(expected[k])
            print(f"{k}: {len(state[k])} rows, expected {len(expected[k])}; extra {sorted(a - b)[:3]}; "
                  f"missing {sorted(b - a)[:3]}")
    return state == expected


def _cut(folder: Path, fraction: float) -> None:
    """Cut every transcript in ``folder`` to its first lines: an earlier state of it."""
    for f in folder.rglob("*.jsonl"):
        lines = f.read_bytes().splitlines(keepends=True)
        f.write_bytes(b"".join(lines[: int(len(lines) * fraction)]))


def _counts(result: dict[str, Any]) -> dict[str, int]:
    """How many times each kill point is reached by a collect that gave ``result``."""
    return {"schema": 1, "begin": 1, "add": result["records_published"], "save_file": result["files_read"],
            "round": len(result["rounds"]), "commit-before": 1, "commit-after": 1}


@pytest.fixture(scope="module")
def histories(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """A project folder (a copy of one corpus project), and for each history the store before the
    collect under test and the store a clean collect leaves after it."""
    base = tmp_path_factory.mktemp("kill")
    project = base / "project"
    shutil.copytree(MATCH, project)

    fresh = _asz_collect(base / "fresh", [project])
    # a store that holds an earlier state of the same files (each cut to half) as its first rounds
    _cut(project, 0.5)
    _asz_collect(base / "earlier", [project])
    earlier_db = base / "earlier-before.db"
    shutil.copy(base / "earlier" / "asz.db", earlier_db)
    shutil.rmtree(project)
    shutil.copytree(MATCH, project)
    grown = _asz_collect(base / "earlier", [project])
    assert fresh["records_published"] > 1000 and grown["records_published"] > 100 and grown["rounds"]
    return {
        "fresh store": {"project": project, "db": None, "before": EMPTY, "after": fingerprint(base / "fresh" / "asz.db"),
                        "counts": _counts(fresh)},
        "store with earlier rounds": {"project": project, "db": earlier_db, "before": fingerprint(earlier_db),
                                      "after": fingerprint(base / "earlier" / "asz.db"), "counts": _counts(grown)},
    }


POINTS = [("fresh store", at) for at in ("schema:1", "begin:1", "add:1", "add:mid", "add:last", "save_file:1",
                                          "save_file:last", "round:1", "round:last", "commit-before:1",
                                          "commit-after:1")]
POINTS += [("store with earlier rounds", at) for at in ("begin:1", "add:mid", "save_file:mid", "round:last",
                                                        "commit-before:1", "commit-after:1")]


@pytest.mark.parametrize(("history", "at"), POINTS)
def test_a_collect_killed_at_a_point_leaves_the_store_before_or_after(histories: dict[str, dict[str, Any]],
                                                                    registry: Registry, tmp_path: Path,
                                                                    history: str, at: str) -> None:
    h = histories[history]
    point, _, nth = at.partition(":")
    home = tmp_path / "home"
    home.mkdir()
    if h["db"] is not None:
        shutil.copy(h["db"], home / "asz.db")
    n = {"mid": h["counts"][point] // 2, "last": h["counts"][point]}.get(nth) or int(nth)
    assert n >= 1

    killed = subprocess.run([sys.executable, str(KILLPOINT), "collect", str(h["project"]), "--json"],
                            env=asz_env(home, ASZ_TEST_KILL_AT=f"{point}:{n}"), capture_output=True, text=True,
                            timeout=300)
    assert killed.returncode == -signal.SIGKILL, f"{point}:{n} was never reached ({killed.returncode}): {killed.stderr}"
    db = home / "asz.db"
    expected = h["after"] if point == "commit-after" else h["before"]
    assert _same(fingerprint(db), expected), f"killed at {point}:{n}, the store is neither as before nor as after"
    _assert_whole(db)

    # the next collect completes normally and leaves what an unkilled collect leaves
    _collect_here(home, [h["project"]], registry)
    assert _same(fingerprint(db), h["after"])
    _assert_whole(db)
    again = _collect_here(home, [h["project"]], registry)
    assert (again.rounds, again.records_published) == ((), 0)


@pytest.mark.slow
def test_collects_of_the_whole_corpus_killed_after_random_delays(tmp_path: Path, registry: Registry) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(CLAUDE_CORPUS, corpus)
    reference = tmp_path / "reference"
    start = time.monotonic()
    _asz_collect(reference, [corpus])
    took = time.monotonic() - start
    after = fingerprint(reference / "asz.db")
    assert len(after["records"]) > 10_000

    rng = random.Random(20261130)
    outcomes = []
    for i in range(6):
        home = tmp_path / f"home{i}"
        delay = took * (i + rng.random()) / 5  # spread over the whole run, from start-up to commit
        proc = subprocess.Popen([sys.executable, "-c", "import sys; from asz_core.main import main; "
                                 "sys.argv[0] = 'asz'; main()", "collect", str(corpus), "--json"],
                                env=asz_env(home), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        code = proc.wait(timeout=300)
        state = fingerprint(home / "asz.db")
        assert state in (EMPTY, after), f"killed after {delay:.2f}s: the store is half written"
        _assert_whole(home / "asz.db")
        outcomes.append("finished" if code == 0 else "before" if state == EMPTY else "after")
        _collect_here(home, [corpus], registry)
        assert _same(fingerprint(home / "asz.db"), after)
    # the delays did stop collects in the middle (and the last ones may have finished)
    assert outcomes.count("before") >= 2, outcomes


@pytest.mark.parametrize("json_out", [False, True])
def test_ctrl_c_during_a_collect_says_it_stopped_and_nothing_was_published(tmp_path: Path, json_out: bool) -> None:
    home = tmp_path / "home"
    home.mkdir()
    args = ["collect", str(CLAUDE_CORPUS), *(["--json"] if json_out else [])]
    stopped = subprocess.run([sys.executable, str(KILLPOINT), *args], capture_output=True, text=True, timeout=300,
                             env=asz_env(home, ASZ_TEST_KILL_AT="add:40", ASZ_TEST_KILL_SIGNAL="INT"))
    assert stopped.returncode == 130, stopped.stderr
    assert stopped.stderr.strip().splitlines() == [
        "collect stopped (interrupted) before it published: nothing of it is in the store, which is as it was; "
        "`asz collect` again reads it all"], stopped.stderr
    assert "Traceback" not in stopped.stderr and stopped.stdout == ""
    listed = run_asz("conversations", "--json", home=home)
    assert listed.returncode == 0 and json.loads(listed.stdout) == []
