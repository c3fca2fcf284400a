"""A run directory someone tampered with: a link in place of run.json, close.json, a stage file or
the stages folder is never followed; a closed run missing its stage files is never shown closed
with its scores; a closed run missing report.html says so and `asz judge -show RUN --html` writes
it again; a full disk names the file and leaves no temp file. The runs are made here, over a
hand-made transcript, with the scripted evaluator."""

from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from asz_core.errors import AszError
from asz_core.judge import runner
from asz_core.judge.run_files import RunFileError
from asz_core.judge.report import run_text
from asz_core.judge.runs import list_runs
from asz_core.judge.runs_report import runs_text
from asz_core.tables import render

from tests.adapters.cc_shapes import Session, text, usage
from tests.core.helpers import run_asz


@pytest.fixture
def two_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    from asz_core.collect import collect
    from asz_core.store import Store

    home = tmp_path / "home"
    monkeypatch.setenv("ASZ_HOME", str(home))
    s = Session("runs-1")
    s.user("u1", None, "make it work")
    s.assistant("a1", "u1", "msg_1", "req_1", text("done"), usage(10, 0, 0, 5, final=True))
    store = Store.open(home)
    collect([s.write(tmp_path / "t.jsonl")], store)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"calls": []}))
    paths = [runner.judge(runner.JudgeOptions("runs-1", evaluator=f"scripted:{script}", stages=("targets",)),
                          store=store).path for _ in range(2)]
    store.close()
    return home, paths[0], paths[1]


def _row(home: Path, path: Path) -> Any:
    return next(r for r in list_runs(home=home) if r.run == path.name)


def _secret(tmp_path: Path, data: bytes) -> Path:
    p = tmp_path / "shadow"
    p.write_bytes(data)
    return p


@pytest.mark.parametrize("name", ["run.json", "close.json"])
@pytest.mark.parametrize("target", ["secret", "other run"])
def test_a_link_in_place_of_a_run_file_is_not_followed(two_runs, tmp_path, name, target):
    home, run, other = two_runs
    dest = _secret(tmp_path, b'{"root":"x"}') if target == "secret" else other / name
    if target == "other run" and name == "run.json":
        dest = run.parent / "elsewhere.json"
        shutil.copy(run / name, dest)  # the very file, valid, moved: still a link
    (run / name).unlink()
    (run / name).symlink_to(dest)
    row = _row(home, run)
    assert row.status == "unreadable" and row.unreadable[name] == f"{name} is a symbolic link, never followed"
    assert row.scores == {}
    with pytest.raises(RunFileError, match=f"{name} is a symbolic link, never followed"):
        runner.read_run(run)


@pytest.mark.parametrize("how", ["linked", "missing", "a stage file linked"])
def test_a_closed_run_without_its_stage_files_is_not_shown_closed_with_scores(two_runs, how):
    home, run, other = two_runs
    assert _row(home, run).status in ("closed", "failed") and _row(home, run).scores
    if how == "linked":
        shutil.rmtree(run / "stages")
        (run / "stages").symlink_to(other / "stages")  # another run's valid files
        said = "is behind a symbolic link (stages), never followed"
    elif how == "missing":
        shutil.rmtree(run / "stages")
        said = "is missing"
    else:
        (run / "stages" / "targets.json").unlink()
        (run / "stages" / "targets.json").symlink_to(other / "stages" / "targets.json")
        said = "is a symbolic link, never followed"
    row = _row(home, run)
    assert row.status == "incomplete" and row.scores == {}
    assert f"stages/targets.json {said}: the run closed with it, so its scores are not shown" in row.problems
    d = runner.read_run(run)
    assert any(p.startswith("stages/targets.json") for p in d["problems"])
    shown = render(run_text(d), 160)
    assert f"stages/targets.json {said}" in shown and "the final statement is not shown" in shown
    assert "achievement " not in shown.split("stages")[0]  # no score line before the stages table
    listed = render(runs_text(list_runs(home=home), {}), 200)
    assert "incomplete" in listed and "stages/targets.json" in listed


def test_a_run_stopped_before_its_report_says_so_and_writes_it_again(two_runs):
    home, run, _ = two_runs
    (run / "report.html").unlink()
    row = _row(home, run)
    assert row.status in ("closed", "failed") and any("report.html is missing" in p for p in row.problems)
    got = run_asz("judge", "-show", run.name, home=home)
    assert got.returncode == 0 and "report.html is missing" in got.stdout and "--html" in got.stdout
    got = run_asz("judge", "-show", run.name, "--html", home=home)
    assert got.returncode == 0, got.stderr
    assert (run / "report.html").is_file() and "<html" in (run / "report.html").read_text().lower()
    assert _row(home, run).problems == ()
    again = run_asz("judge", "-show", run.name, "--html", home=home)
    assert again.returncode == 1 and "is there already" in again.stderr


def test_a_full_disk_names_the_file_and_leaves_no_temp_file(tmp_path, monkeypatch):
    from asz_core.judge.context import write_once

    real = Path.write_bytes

    def full(self: Path, data: bytes) -> int:
        real(self, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_bytes", full)
    target = tmp_path / "run" / "run.json"
    with pytest.raises(OSError) as got:
        write_once(target, b"x" * 1000)
    assert got.value.errno == errno.ENOSPC and got.value.filename == str(target)
    assert "No space left on device" in str(got.value) and str(target) in str(got.value)
    assert os.listdir(target.parent) == []


def test_write_report_refuses_a_run_not_closed(two_runs):
    _, run, _ = two_runs
    (run / "close.json").unlink()
    with pytest.raises(AszError, match="has not closed"):
        runner.write_report(run)


# --- a run's later files: regroups, saved sources, an attempt's requests ------------------------------

def _example_run(store: Any, tmp_path: Path, name: str, sources: tuple[str, ...] = ()) -> Path:
    from ruamel.yaml import YAML

    from asz_core.collect import collect

    root = Path(__file__).resolve().parents[2]
    collect([root / "examples" / "claude-code"], store)
    calls = YAML(typ="safe").load((root / "examples" / "scripted-5e1f0c2a.yaml").read_text())["calls"]
    calls = [c for c in calls if c["stage"] not in ("reference", "divergence")]
    calls.append({"stage": "regroup", "call": 1, "requests": [{"usage": {"input": 9, "output": 1}}],
                  "answer": {"targets": [{"target": "t1", "goal": "P1", "cites": ["i1"]}],
                             "goals": [{"goal": "P1", "worked_on": True, "cites": ["i1"]}], "notes": None}})
    script = tmp_path / f"{name}.json"
    script.write_text(json.dumps({"calls": calls}))
    return runner.judge(runner.JudgeOptions("5e1f0c2a", evaluator=f"scripted:{script}", sources=sources,
                                            stages=("targets", "achievement", "subtasks", "efficiency")), store=store).path


def test_a_regroups_folder_that_is_a_link_is_neither_read_nor_written_through(store: Any, tmp_path: Path) -> None:
    """regroups/ replaced by a link to another run's: that run's regroup is not shown as this run's,
    and a new regroup of this run is refused rather than written into the other run."""
    from asz_core.judge import person_goals, regroup

    goals = tmp_path / "goals.yaml"
    goals.write_text("goals:\n  - Invoice totals right to the cent\n")
    mine, other = _example_run(store, tmp_path, "a"), _example_run(store, tmp_path, "b")
    done = regroup.make(other, person_goals.read(goals), store=store)
    assert done.file.comparison is not None and runner.read_run(other)["regroup"] is not None
    (mine / "regroups").symlink_to(other / "regroups")
    assert runner.read_run(mine)["regroup"] is None
    before = sorted(p.name for p in (other / "regroups").iterdir())
    with pytest.raises(AszError, match="regroups is a symbolic link, not the run's own folder"):
        regroup.make(mine, person_goals.read(goals), store=store)
    assert sorted(p.name for p in (other / "regroups").iterdir()) == before
    (mine / "regroups").unlink()
    (mine / "regroups").mkdir()
    (mine / "regroups" / "v1").symlink_to(other / "regroups" / "v1")  # a version that is a link: not this run's
    assert runner.read_run(mine)["regroup"] is None


def test_a_saved_source_reached_through_a_link_is_not_read(store: Any, tmp_path: Path) -> None:
    from asz_core.judge.source_files import SOURCES_DIR, read_saved, text_of

    note = tmp_path / "note.md"
    note.write_text("Incident: the totals were rounded wrong.\n")
    run = _example_run(store, tmp_path, "s", sources=(str(note),))
    (saved,) = read_saved(run)
    assert saved.usable and "rounded wrong" in text_of(run, "src1")
    other = tmp_path / "other-src"
    shutil.copytree(run / SOURCES_DIR / "src1", other)
    (other / "text.txt").write_text("planted")
    (run / SOURCES_DIR / "src1" / "text.txt").unlink()
    (run / SOURCES_DIR / "src1" / "text.txt").symlink_to(other / "text.txt")
    with pytest.raises(OSError, match="symbolic link"):
        text_of(run, "src1")
    shutil.rmtree(run / SOURCES_DIR / "src1")
    (run / SOURCES_DIR / "src1").symlink_to(other)  # the source's folder a link: its manifest not read
    (gone,) = read_saved(run)
    assert gone.manifest is None and "symbolic link" in (gone.problem or "")


def test_an_attempts_requests_reached_through_a_link_are_not_counted(store: Any, tmp_path: Path) -> None:
    """The close counts what each evaluator request consumed from the attempt's requests.jsonl,
    read from the run's folder down: one that is a link (to a file of a thousand requests) is not
    read, the attempt's requests counted unknown."""
    from asz_core.judge.close import close_file, load_view
    from asz_core.registry import Registry

    run = _example_run(store, tmp_path, "r", ())
    view = load_view(run, store)
    want = close_file(run, store, Registry(), view).statement.judging
    attempt = run / "calls" / "targets" / "1" / "1"
    fake = tmp_path / "requests.jsonl"
    fake.write_bytes((attempt / "requests.jsonl").read_bytes() * 1000)
    (attempt / "requests.jsonl").unlink()
    (attempt / "requests.jsonl").symlink_to(fake)
    got = close_file(run, store, Registry(), load_view(run, store)).statement.judging
    assert got.total.calls < want.total.calls and got.total.tokens < want.total.tokens  # no thousand copies
    assert got.total.unknown == want.total.unknown + 1  # the attempt's requests are unknown now
