"""Reading a run's stage files back (asz_core.judge.stage_files): one policy for every reader.

Real runs of 258c7280 (the achievement story) with the scripted evaluator; between two stages a
stage file is broken the way a disk, a person or another program breaks one: truncated, a folder
or a FIFO in its place, ``[]``, another stage's file, a file of another head, a field of the wrong
type, a link that cannot be opened, deleted. Then every caller reads it: the later stage (its
reason and note), the close (statement.basis, the scores), ``asz runs``, ``asz judge -show``
(read_run and its table), cost per target of the run directory. None raises, none waits on the
FIFO, each says the same words, and what does read is still used.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from asz_core.judge import runner, stage_files
from asz_core.judge.stages import STAGE_FUNCTIONS
from asz_core.tables import render

from .achievement_story import CID, TARGETS, answers, script


def _truncate(p: Path, stage: str) -> None:
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 2])


def _folder(p: Path, stage: str) -> None:
    p.unlink()
    p.mkdir()
    (p / "x.json").write_text("{}")


def _fifo(p: Path, stage: str) -> None:
    p.unlink()
    os.mkfifo(p)


def _array(p: Path, stage: str) -> None:
    p.write_text("[]")


def _other_stage(p: Path, stage: str) -> None:
    """Another stage's file in its place: the targets stage's (or, for targets, the achievement
    stage's header on the targets stage's content)."""
    if stage != "targets":
        shutil.copyfile(p.parent / "targets.json", p)
    else:
        d = json.loads(p.read_text())
        p.write_text(json.dumps({**d, "stage": "achievement"}))


def _other_head(p: Path, stage: str) -> None:
    d = json.loads(p.read_text())
    p.write_text(json.dumps({**d, "head": "r99", "head_digest": "0" * 64}))


def _wrong_shape(p: Path, stage: str) -> None:
    d = json.loads(p.read_text())
    p.write_text(json.dumps({**d, "run": {**d["run"], "calls": ["many"]}}))


def _link_loop(p: Path, stage: str) -> None:
    """A file that cannot be opened even by root (the tests may run as root, whom a mode of 000
    does not stop): a symlink to itself."""
    p.unlink()
    os.symlink(p.name, p)


def _link_to_a_copy(p: Path, stage: str) -> None:
    """The very file, valid, moved out of the run and linked back: a link is never followed."""
    away = p.parent.parent.parent / (p.parent.parent.name + "-" + p.name)
    p.rename(away)
    os.symlink(away, p)


def _missing(p: Path, stage: str) -> None:
    p.unlink()


BREAKS: dict[str, tuple[Callable[[Path, str], None], str]] = {
    # how the file is broken: (the break, what every reader says of stages/<stage>.json)
    "truncated": (_truncate, "is not JSON (unexpected end of data"),
    "a folder": (_folder, "is not a regular file (a folder)"),
    "a FIFO": (_fifo, "is not a regular file (a named pipe)"),
    "[]": (_array, "is not a stage file (a JSON array, not an object)"),
    "another stage's file": (_other_stage, "is the {other} stage's file, not the {stage} stage's"),
    "another head": (_other_head, "is of another run (conversation"),
    "a field of the wrong type": (_wrong_shape, "is not a stage file ("),
    "a link to itself": (_link_loop, "is a symbolic link, never followed"),
    "a link to a valid file": (_link_to_a_copy, "is a symbolic link, never followed"),
    "missing": (_missing, "is missing"),
}


class Waited(BaseException):
    """Raised by the alarm: a BaseException, so no reader's ``except OSError`` (TimeoutError is
    one) or ``except Exception`` takes it for a file it could not read."""


@pytest.fixture(autouse=True)
def _never_hang() -> Iterator[None]:
    """A reader that opened the FIFO would wait for a writer forever: fail instead."""
    def stop(*_: Any) -> None:
        raise Waited("a stage file reader waited (on the FIFO?)")

    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def _run(store: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, breaks: dict[str, str], how: str,
         stages: tuple[str, ...]) -> Path:
    """Judge 258c7280 with ``stages``; before the stage ``s`` of each ``breaks[s] = victim`` runs,
    the victim's file is broken ``how``."""
    fn, _ = BREAKS[how]
    calls = script(TARGETS, list(answers().values()))["calls"]
    calls += [{"stage": "subtasks", "call": 1, "requests": [{"usage": {"input": 10, "output": 1, "cache_read": 0, "cache_write": 0}}],
               "answer": {"decisions": []}},
              {"stage": "efficiency", "call": 1, "requests": [{"usage": {"input": 10, "output": 1, "cache_read": 0, "cache_write": 0}}],
               "answer": {"talks": [], "findings": []}}]
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"calls": calls}))
    for stage, victim in breaks.items():
        real = STAGE_FUNCTIONS[stage]

        def broken_first(run: Any, spec: Any, backend: Any, real: Any = real, victim: str = victim) -> Any:
            p = run.path / "stages" / f"{victim}.json"
            shutil.copyfile(p, tmp_path / f"as-written-{victim}.json")  # what the stage wrote, before the break
            fn(p, victim)
            return real(run, spec, backend)

        monkeypatch.setitem(STAGE_FUNCTIONS, stage, broken_first)
    res = runner.judge(runner.JudgeOptions(CID, evaluator=f"scripted:{path}", stages=stages), store=store)
    assert (res.path / "close.json").is_file() and (res.path / "report.html").is_file()
    return res.path


def _words(how: str, stage: str) -> str:
    return BREAKS[how][1].format(stage=stage, other="achievement" if stage == "targets" else "targets")


def _stage(path: Path, name: str) -> dict[str, Any]:
    return json.loads((path / "stages" / f"{name}.json").read_text())


def _shown_everywhere(path: Path, store: Any, stage: str, how: str) -> dict[str, Any]:
    """``asz runs``, ``asz judge -show`` and the close say what the file is, without a traceback."""
    from asz_core.judge.report import run_text
    from asz_core.judge.runs import list_runs
    from asz_core.judge.runs_report import runs_text

    words = _words(how, stage)
    close = json.loads((path / "close.json").read_text())
    assert close["error"] is None and close["statement"] is not None
    basis = close["statement"]["basis"][stage]
    row = next(r for r in list_runs(home=Path(store.path).parent, store=store) if r.run == path.name)
    shown = runner.read_run(path)
    table = render(run_text(shown), 200)
    runs_table = render(runs_text([row], {}), 200)
    if how == "missing":
        assert basis.startswith("missing: ")
        assert stage not in close["stages"] and stage not in row.stages and stage not in shown["stages"]
    else:
        assert basis.startswith(f"unreadable (stages/{stage}.json ") and words in basis
        assert close["stages"][stage] == "unreadable"
        assert row.stages[stage] == "unreadable" and words in row.unreadable[stage]
        assert words in " ".join(runs_table.split()) and f"run {path.name}" in runs_table
        assert shown["stages"][stage]["status"] == "unreadable" and words in shown["stages"][stage]["reason"]
        assert "unreadable" in table
    runner.failures(path)  # what went wrong, read from the same files: no traceback
    return close


@pytest.mark.parametrize("how", list(BREAKS))
def test_an_earlier_stage_the_achievement_stage_cannot_read(corpus_store: Any, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    from asz_core.judge.target_cost import for_run

    path = _run(corpus_store, tmp_path, monkeypatch, {"achievement": "targets"}, how, ("targets", "achievement"))
    words = _words(how, "targets")
    ach = _stage(path, "achievement")
    line = f"the targets stage's file could not be read (stages/targets.json {words}"
    assert ach["status"] == "skipped" and ach["reason"].startswith(f"no target to judge: {line}"), ach["reason"]
    assert len(ach["note"]) == 1 and ach["note"][0].startswith(line)
    close = _shown_everywhere(path, corpus_store, "targets", how)
    st = close["statement"]
    assert st["basis"]["targets"].endswith(": no targets, goals or shares") and st["targets"] == []
    assert st["basis"]["achievement"].startswith("skipped (no target to judge: the targets stage's file could not be read")
    assert all(v["value"] is None for k, v in st["scores"].items() if k in ("achievement", "delivered"))
    assert "no target: every cost of the window is unassigned" in st["notes"]
    # what the targets stage consumed is not known once its file does not read; the rest still is
    assert close["consumed"]["requests"] == 0
    costing = for_run(path, corpus_store)
    assert costing.record.targets == () and costing.record.unassigned
    assert costing.targets_stage == ("missing" if how == "missing" else f"unreadable (stages/targets.json {words}"
                                     + costing.targets_stage.split(words, 1)[1])


@pytest.mark.parametrize("how", list(BREAKS))
def test_the_later_stages_and_the_close_with_an_achievement_or_subtasks_file_that_does_not_read(
        corpus_store: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    path = _run(corpus_store, tmp_path, monkeypatch, {"subtasks": "achievement", "efficiency": "subtasks"}, how,
                ("targets", "achievement", "subtasks", "efficiency"))
    ach_line = f"the achievement stage's file could not be read (stages/achievement.json {_words(how, 'achievement')}"
    sub_line = f"the subtasks stage's file could not be read (stages/subtasks.json {_words(how, 'subtasks')}"
    sub, eff = json.loads((tmp_path / "as-written-subtasks.json").read_text()), _stage(path, "efficiency")
    assert sub["status"] == "partial" and sub["note"][0].startswith(ach_line), sub["note"]
    assert eff["status"] == "partial" and eff["note"][0].startswith(ach_line), eff["note"]
    assert any(n.startswith(sub_line) and n.endswith(": every sub-task's work is not reviewed") for n in eff["note"]), eff["note"]
    close = _shown_everywhere(path, corpus_store, "achievement", how)
    _shown_everywhere(path, corpus_store, "subtasks", how)
    st = close["statement"]
    assert st["basis"]["achievement"].endswith(": every criterion unknown: levels unverified")
    assert st["basis"]["subtasks"].endswith(": sub-agents' work not reviewed")
    # no achievement read: nothing measured, never 0; the targets and the efficiency stage still used
    assert st["scores"]["achievement"]["value"] is None and st["scores"]["delivered"]["value"] is None
    assert st["basis"]["targets"] == "used" and st["basis"]["efficiency"].startswith("used")
    assert [t["id"] for t in st["targets"]] == ["t1", "t2", "t3"]
    assert all(t["outcome"]["level"] == "unverified" and t["outcome"]["final_score"] is None for t in st["targets"])
    assert close["stages"]["targets"] == "complete" and close["stages"]["efficiency"] == "partial"
    # the stages that read still count what they consumed (targets, efficiency; the two others do not read)
    assert close["consumed"]["requests"] == 2


def test_a_failed_or_skipped_earlier_stage_is_read_for_what_it_is(corpus_store: Any, tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"calls": []}))
    for stages, status in ((("targets", "achievement"), "failed"), (("achievement",), "skipped")):
        res = runner.judge(runner.JudgeOptions(CID, evaluator=f"scripted:{empty}", stages=stages), store=corpus_store)
        ach, tg = _stage(res.path, "achievement"), _stage(res.path, "targets")
        assert tg["status"] == status
        said = f"{status} ({tg['reason']})"
        assert ach["reason"] == f"no target to judge: the targets stage is {said}" and ach["note"] == []
        close = json.loads((res.path / "close.json").read_text())
        assert close["statement"]["basis"]["targets"] == f"{said}: no targets, goals or shares"
        assert close["stages"]["targets"] == status


def test_the_reader_alone(corpus_store: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each case read directly: the record only when it reads, the same words as its callers."""
    path = _run(corpus_store, tmp_path, monkeypatch, {}, "missing", ("targets", "achievement"))
    pin = stage_files.Pin.of_json(json.loads((path / "run.json").read_text()))
    good = stage_files.read(path, "achievement", pin)
    assert good.usable and good.record is not None and good.record.stage == "achievement" and good.said == "complete"
    assert stage_files.read(path, "efficiency", pin).said == "skipped (not asked for (--stages))"
    for how, (fn, _) in BREAKS.items():
        copy = tmp_path / f"copy-{len(list(tmp_path.glob('copy-*')))}"
        shutil.copytree(path, copy, symlinks=True)
        fn(copy / "stages" / "achievement.json", "achievement")
        got = stage_files.read(copy, "achievement", pin)
        assert got.record is None and got.data is None and not got.usable, how
        assert got.problem and got.problem.startswith("stages/achievement.json ") and _words(how, "achievement") in got.problem
        assert got.status == ("missing" if how == "missing" else "unreadable")
        assert got.said == ("missing" if how == "missing" else f"unreadable ({got.problem})")
    # the wrong type is named by its path in the file
    copy = tmp_path / "wrong"
    shutil.copytree(path, copy)
    _wrong_shape(copy / "stages" / "targets.json", "targets")
    assert "$.run.calls" in (stage_files.read(copy, "targets", pin).problem or "")
    # without a pin (run.json itself broken) another head is not told apart; the rest is
    _other_head(copy / "stages" / "achievement.json", "achievement")
    assert stage_files.read(copy, "achievement").usable and not stage_files.read(copy, "achievement", pin).usable
