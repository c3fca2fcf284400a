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
