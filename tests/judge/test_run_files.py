"""A run's own files read back (asz_core.judge.run_files), and the navigation reading the stage
files by the stages' policy (asz_core.navigation through asz_core.judge.stage_files).

Over a real scripted run of 258c7280 (the achievement story), each of run.json and close.json is
broken the way a disk, a person or another program breaks one: truncated, a folder or a FIFO in
its place, ``[]``, a field of the wrong type or missing, a link that cannot be opened, another
run's file. Then every reader reads it: ``asz judge -show`` (read_run, and the CLI's exit status),
``asz runs``, the report, the close, cost per target of the run directory, ``asz judge mcp
--run``. None raises anything but the one-line error naming the file, none waits on the FIFO, and
what does read is still used (the other runs listed, the stage files still read).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from asz_core.judge import runner, stage_files
from asz_core.judge.run_files import RunFileError
from asz_core.tables import render

from .achievement_story import CID
from .test_stage_files import BREAKS as STAGE_BREAKS, _never_hang, _run, _words as stage_words  # noqa: F401 - the alarm
from .test_show import asz


def _edit(change: Callable[[dict[str, Any]], dict[str, Any]]) -> Callable[[Path], None]:
    def brk(p: Path) -> None:
        p.write_text(json.dumps(change(json.loads(p.read_text()))))
    return brk


def _truncate(p: Path) -> None:
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 2])


def _folder(p: Path) -> None:
    p.unlink()
    p.mkdir()


def _fifo(p: Path) -> None:
    p.unlink()
    os.mkfifo(p)


def _link_loop(p: Path) -> None:
    p.unlink()
    os.symlink(p.name, p)


def _link_to_a_copy(p: Path) -> None:
    """The very file, valid, moved beside the run and linked back: a link is never followed."""
    away = p.parent.parent / (p.parent.name + "-" + p.name)
    p.rename(away)
    os.symlink(away, p)


def _without(key: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda d: {k: v for k, v in d.items() if k != key}


def _huge(p: Path) -> None:
    from asz_core.judge.stage_files import RUN_FILE_BYTES

    os.truncate(p, RUN_FILE_BYTES + 1)  # its JSON, then nothing (sparse): refused by its size, never read


COMMON: dict[str, tuple[Callable[[Path], None], str]] = {
    "huge": (_huge, "is larger than 268,435,456 bytes (268,435,457)"),
    "truncated": (_truncate, "is not JSON (unexpected end of data"),
    "a folder": (_folder, "is not a regular file (a folder)"),
    "a FIFO": (_fifo, "is not a regular file (a named pipe)"),
    "a link to itself": (_link_loop, "is a symbolic link, never followed"),
    "a link to a valid file": (_link_to_a_copy, "is a symbolic link, never followed"),
    "[]": (lambda p: p.write_text("[]"), "is not a {what} (a JSON array, not an object)"),
}
RUN_BREAKS = COMMON | {
    "a field of the wrong type": (_edit(lambda d: {**d, "head": 3}), "is not a run.json (expected a string @ $.head)"),
    "a record of the wrong type": (_edit(lambda d: {**d, "prices": "x"}), "is not a run.json ("),
    "a field missing": (_edit(_without("conversation")), "is not a run.json (required field missing @ $.conversation)"),
}
def _score(value: str) -> Callable[[Path], None]:
    def brk(p: Path) -> None:
        d = json.loads(p.read_text())
        d["statement"]["targets"][0]["outcome"]["final_score"] = value
        p.write_text(json.dumps(d))
    return brk


CLOSE_BREAKS = COMMON | {
    # a final score is read as a fraction (a regroup's goals' outcomes): 1e99999999 never ended
    "a score of a billion digits": (_score("1e99999999"),
                                    "is not a close.json (a score that is no fraction from 0 to 1 @ $.statement.targets[0].outcome.final_score)"),
    "a score over 1": (_score("3/2"), "is not a close.json (a score that is no fraction from 0 to 1 @ $.statement.targets[0].outcome.final_score)"),
    "a score 1/0": (_score("1/0"), "is not a close.json (a score that is no fraction from 0 to 1 @ $.statement.targets[0].outcome.final_score)"),
    "a field of the wrong type": (_edit(lambda d: {**d, "consumed": "many"}), "is not a close.json ("),
    "a field missing": (_edit(_without("stages")), "is not a close.json (required field missing @ $.stages)"),
    "another run's file": (_edit(lambda d: {**d, "run": "20990101T000000Z-beef"}),
                           "is of another run (run 20990101T000000Z-beef; this run is "),
}


@pytest.fixture
def judged(corpus_store: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return _run(corpus_store, tmp_path, monkeypatch, {}, "missing", ("targets", "achievement"))


def _broken_copies(path: Path, name: str, breaks: dict[str, tuple[Callable[[Path], None], str]]) -> Iterator[tuple[str, Path, str]]:
    """A copy of the run beside it (so ``asz runs`` lists it) per break, ``name`` broken; with the
    words every reader says of it."""
    for i, (how, (fn, words)) in enumerate(breaks.items()):
        copy = path.parent / f"{path.name}-{i}"
        shutil.copytree(path, copy, symlinks=True)
        fn(copy / name)
        try:
            yield how, copy, f"{name} " + words.format(what=name)
        finally:  # the runs folder is the shared corpus store's: leave no broken run behind
            shutil.rmtree(copy)


def _raises(words: str, copy: Path, name: str, call: Callable[[], Any]) -> str:
    with pytest.raises(RunFileError) as got:
        call()
    said = str(got.value)
    assert said.startswith(f"{copy}{os.sep}{name} ") and words in said and "\n" not in said, said
    return said


def test_a_run_json_that_does_not_read(corpus_store: Any, judged: Path) -> None:
    from asz_core.judge.close import load_view
    from asz_core.judge.runs import list_runs
    from asz_core.judge.runs_report import runs_text
    from asz_core.judge.target_cost import for_run
    from asz_core.mcp_server import serve

    home = Path(corpus_store.path).parent
    good = runner.read_run(judged)
    for how, copy, words in _broken_copies(judged, "run.json", RUN_BREAKS):
        for call in (lambda: runner.read_run(copy), lambda: runner.read_run(runner.find_run(copy.name, home)),
                     lambda: runner.failures(copy), lambda: for_run(copy, corpus_store),
                     lambda: load_view(copy, corpus_store), lambda: serve(None, run=copy)):
            _raises(words, copy, "run.json", call)
        rows = {r.run: r for r in list_runs(home=home, store=corpus_store)}
        row = rows[copy.name]  # listed, whatever its run.json is
        assert row.status == "unreadable" and words in row.unreadable["run.json"], (how, row)
        assert judged.name in rows and rows[judged.name].status == "closed"  # the other runs still listed
        table = " ".join(render(runs_text([row], {}), 200).split())
        assert f"run {copy.name}: {words}" in table, (how, table)
    assert runner.read_run(judged) == good


def test_a_close_json_that_does_not_read(corpus_store: Any, judged: Path) -> None:
    from asz_core.judge import report_html
    from asz_core.judge.runs import list_runs

    home = Path(corpus_store.path).parent
    head = json.loads((judged / "run.json").read_text())["head"]
    for how, copy, words in _broken_copies(judged, "close.json", CLOSE_BREAKS):
        if how == "another run's file":
            words += f"{judged.name})"  # the copy's run.json names the run its directory was copied from
        for call in (lambda: runner.read_run(copy), lambda: runner.failures(copy),
                     lambda: report_html.model(copy, corpus_store)):
            _raises(words, copy, "close.json", call)
        row = next(r for r in list_runs(home=home, store=corpus_store) if r.run == copy.name)
        assert row.status == "unreadable" and words in row.unreadable["close.json"], (how, row)
        # nothing else lost: its stage files still read, and what they consumed is counted
        assert row.stages == {"targets": "complete", "achievement": "complete", "subtasks": "skipped",
                              "efficiency": "skipped", "reference": "skipped", "divergence": "skipped"}
        assert row.consumed["requests"] > 0 and row.head == head
    # a run not closed yet is no error: no close
    (judged / "close.json").unlink()
    assert runner.read_run(judged)["close"] is None


def test_the_cli_says_one_line_with_the_exit_status_of_bad_input(corpus_store: Any, judged: Path) -> None:
    home = Path(corpus_store.path).parent
    ok = asz(home, "judge", "-show", judged.name)
    assert ok.returncode == 0, ok.stderr
    for name, breaks in (("close.json", {"truncated": CLOSE_BREAKS["truncated"]}), ("run.json", {"a FIFO": RUN_BREAKS["a FIFO"]})):
        for _, copy, words in _broken_copies(judged, name, breaks):
            got = asz(home, "judge", "-show", str(copy))
            assert got.returncode == 1 and "Traceback" not in got.stderr, got.stderr
            err = " ".join(got.stderr.split())
            assert err.startswith(f"error: {copy}{os.sep}{words}") and got.stdout == "", got.stderr
            runs = asz(home, "runs", "--json")
            assert runs.returncode == 0 and "Traceback" not in runs.stderr, runs.stderr
            row = next(r for r in json.loads(runs.stdout) if r["run"] == copy.name)
            assert row["status"] == "unreadable" and words in row["unreadable"][name]


# --- the navigation reads the stage files as the stages do --------------------------------------

def _nav(store: Any, run_dir: Path, window: str | None = None) -> Any:
    from asz_core.navigation import open_navigator

    return open_navigator(CID, None, window, run_dir=run_dir, store=store)


def _answer(nav: Any, tool: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    text = nav.call(tool, args or {})
    assert "Traceback" not in text
    return json.loads(text)


def test_the_navigation_of_a_good_run(corpus_store: Any, judged: Path, tmp_path: Path) -> None:
    for window in (None, "all", "whole"):  # a window that means the run's is the run's
        got = _answer(_nav(corpus_store, judged, window), "targets")
        assert [t["id"] for t in got["targets"]] == ["t1", "t2", "t3"] and "achievement" not in got, got
        assert all("level" in t for t in got["targets"])
    # a run asked for --window whole wrote "whole" in its files: the navigator of the window all
    # (as `asz judge mcp` is given it, k3..k7 for k3-k7) reads them as its own
    copy = tmp_path / "whole"
    shutil.copytree(judged, copy)
    for f in (copy / "stages").iterdir():
        f.write_text(json.dumps({**json.loads(f.read_text()), "window": "whole"}))
    got = _answer(_nav(corpus_store, copy), "targets")
    assert [t["id"] for t in got["targets"]] == ["t1", "t2", "t3"] and all("level" in t for t in got["targets"]), got
    # the navigator of another window does not use this run's files: they are of another run
    got = _answer(_nav(corpus_store, judged, "k2"), "targets")
    assert got["targets"] == [] and got["note"].startswith(
        "the targets stage's file could not be read (stages/targets.json is of another run ("), got
    assert "no target 't1': the targets stage's file could not be read" in _answer(
        _nav(corpus_store, judged, "k2"), "targets", {"id": "t1"})["error"]


@pytest.mark.parametrize("how", list(STAGE_BREAKS))
def test_the_navigation_says_a_targets_file_it_cannot_use_as_the_stage_after_it_says_it(
        corpus_store: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    """The achievement stage ran on the broken targets file: its note is what the navigator of
    the run says of that file, word for word (nothing of the file is shown)."""
    path = _run(corpus_store, tmp_path, monkeypatch, {"achievement": "targets"}, how, ("targets", "achievement"))
    ach = json.loads((path / "stages" / "achievement.json").read_text())
    got = _answer(_nav(corpus_store, path), "targets")
    assert got["targets"] == []
    if how == "missing":
        assert got["note"] == "the targets stage has not run"
    else:
        assert got["note"] == ach["note"][0] and stage_words(how, "targets") in got["note"], (got, ach["note"])
    one = _answer(_nav(corpus_store, path), "targets", {"id": "t1"})
    assert one["error"].startswith(f"no target 't1': {got['note']}")


@pytest.mark.parametrize("how", [h for h in STAGE_BREAKS if h != "missing"])
def test_the_navigation_with_an_achievement_or_subtasks_file_it_cannot_use(corpus_store: Any, judged: Path,
                                                                            tmp_path: Path, how: str) -> None:
    fn, _ = STAGE_BREAKS[how]
    copy = tmp_path / "copy"
    shutil.copytree(judged, copy)
    fn(copy / "stages" / "achievement.json", "achievement")
    got = _answer(_nav(corpus_store, copy), "targets")
    # the targets still read; no level of the achievement stage is shown, and the answer says why
    assert [t["id"] for t in got["targets"]] == ["t1", "t2", "t3"] and not any("level" in t for t in got["targets"])
    said = stage_files.read(copy, "achievement").problem if how != "another head" else None
    assert got["achievement"].startswith("the achievement stage's file could not be read (stages/achievement.json ")
    assert stage_words(how, "achievement") in got["achievement"] and (said is None or said in got["achievement"])
    assert '"achievement":' not in _answer(_nav(corpus_store, copy), "targets", {"id": "t1"})["text"]
    # a sub-task stage's file of the wrong kind: no decision shown, and the answer says why
    fn(copy / "stages" / "subtasks.json", "subtasks")
    sub = _answer(_nav(corpus_store, copy), "subtasks")
    assert sub["decisions"].startswith("the subtasks stage's file could not be read (stages/subtasks.json ")
    assert stage_words(how, "subtasks") in sub["decisions"]
    assert sub["subtasks"] and not any("decision" in r for r in sub["subtasks"])


def test_the_navigation_of_a_failed_or_skipped_stage(corpus_store: Any, judged: Path) -> None:
    sub = _answer(_nav(corpus_store, judged), "subtasks")
    assert sub["decisions"] == "the subtasks stage is skipped (not asked for (--stages))"


def test_a_later_call_of_the_targets_stage_reads_the_targets_so_far_as_a_stage_file(corpus_store: Any,
                                                                                       tmp_path: Path) -> None:
    """Each call of a chunked targets stage navigates its own state directory, whose
    stages/targets.json is the catalogue so far: read by the same policy, so it is a stage file of
    the run (partial), pinned to its conversation, head and window."""
    from asz_core import window
    from asz_core.navigation import Navigator

    from .conftest import cid_with, entry, inputs_of, judge, plain_answer

    cid = cid_with(corpus_store, 6)
    steps = inputs_of(corpus_store, cid)
    w = window.build(corpus_store, cid)
    talks = [k for k in w.judged if any(w.conv.step(s).input in {x.input for x in steps} for s in w.conv.talk(k).inputs)]
    own = [[s for s in steps if s.talk == k] for k in talks]
    calls = [entry(plain_answer(own[0]), call=1)]
    calls += [entry({"inputs": [{"input": s.input, "actions": [{"action": "none"}], "relations": [{"relation": "unclear"}]}
                                for s in o], "targets": [], "goals": []}, call=n) for n, o in enumerate(own[1:], 2)]
    res, stage = judge(corpus_store, tmp_path, cid, calls, settings={"judge.mode": "stream", "judge.chunk_bytes": 1})
    assert stage["status"] == "complete" and stage["run"]["calls"] == len(talks) >= 2
    state = res.path / "calls" / "targets" / "2" / "state"
    got = stage_files.read(state, "targets", stage_files.Pin.of_window(w))
    assert got.status == "partial" and [t.id for t in got.record.targets] == ["t1"]  # type: ignore[union-attr]
    answer = json.loads(Navigator(w, corpus_store, run_dir=state).call("targets"))
    assert [t["id"] for t in answer["targets"]] == ["t1"], answer
