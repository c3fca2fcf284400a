"""``asz judge -show RUN`` at 80 and 160 columns, ``--json`` whole, and ``asz judge``'s exit status
when a stage it ran failed (the run written and closed all the same)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from asz_core.money import of_amount

from .test_close import SESSION, _script, conv_store  # noqa: F401 - the fixture

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def asz(home: Path, *args: str, columns: int = 80, colour: bool = False) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "TERM")}
    env.update(ASZ_HOME=str(home), COLUMNS=str(columns), LINES="50")
    if colour:
        env["FORCE_COLOR"] = "1"  # rich's way of being told it writes to a terminal
    return subprocess.run([sys.executable, "-c", "from asz_core.cli import main; main()", *args], capture_output=True,
                          text=True, env=env, timeout=300)


@pytest.fixture
def judged(conv_store: Any, tmp_path: Path) -> tuple[Path, Path]:  # noqa: F811
    from asz_core.judge import runner

    res = runner.judge(runner.JudgeOptions(SESSION, evaluator=f"scripted:{_script(tmp_path)}", stages=("targets",)), store=conv_store)
    return Path(conv_store.path).parent, res.path


@pytest.mark.parametrize("columns", [80, 160])
def test_show_puts_the_scores_first_and_never_cuts_money(judged: tuple[Path, Path], columns: int) -> None:
    home, path = judged
    got = asz(home, "judge", "-show", path.name, columns=columns)
    assert got.returncode == 0, got.stderr
    out = got.stdout
    assert not ANSI.search(out), "colours written to a pipe"
    lines = out.splitlines()
    assert max(len(x) for x in lines) <= columns
    st = json.loads((path / "close.json").read_text())["statement"]
    first_score = next(i for i, x in enumerate(lines) if x.startswith("achievement "))
    goal = next(i for i, x in enumerate(lines) if x.startswith("g1 "))
    stages = next(i for i, x in enumerate(lines) if x.strip() == "stages")  # the table's title
    assert first_score < goal < stages
    for t in st["targets"]:
        row = next(x for x in lines if x.startswith(f"│ {t['id']} ") and "$" in x)
        money = of_amount(t["cost"]["total"])
        assert money in row, (money, row)  # whole, on the target's own row
        assert t["outcome"]["class"] in row and f"{t['times']['observed_seconds'] / 60:.1f} min" in row or \
            f"{t['times']['observed_seconds']:.0f} s" in row
    assert "every criterion unknown: levels unverified" in out.replace("\n", " ")


def test_show_colours_only_a_terminal_and_json_prints_it_whole(judged: tuple[Path, Path]) -> None:
    home, path = judged
    assert ANSI.search(asz(home, "judge", "-show", path.name, colour=True).stdout)
    got = asz(home, "judge", "-show", path.name, "--json")
    d = json.loads(got.stdout)
    assert d["close"] == json.loads((path / "close.json").read_text())
    assert set(d["stages"]) == {"targets", "achievement", "subtasks", "efficiency", "reference", "divergence"}


def test_a_failed_stage_exits_3_after_the_run_is_written(conv_store: Any, tmp_path: Path) -> None:  # noqa: F811
    home = Path(conv_store.path).parent
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"calls": []}))
    got = asz(home, "judge", SESSION, "--evaluator", f"scripted:{empty}")
    assert got.returncode == 3, (got.stdout, got.stderr)
    err = " ".join(got.stderr.split())
    assert "the targets stage failed:" in err and "judge again" in err and "calls/targets" in err
    run = Path(re.search(r"^run (\S+)", got.stdout, re.M).group(1))  # type: ignore[union-attr]
    assert (run / "close.json").is_file() and (run / "report.html").is_file()
    assert json.loads((run / "stages/targets.json").read_text())["status"] == "failed"
    # A run whose stages all ran: exit 0.
    ok = asz(home, "judge", SESSION, "--evaluator", f"scripted:{_every_stage(tmp_path)}", "--json")
    assert ok.returncode == 0, ok.stderr


def _every_stage(tmp_path: Path) -> Path:
    every = tmp_path / "every-stage.json"  # answers for every stage built, each empty but readable
    every.write_text(json.dumps({"calls": [*json.loads(_script(tmp_path).read_text())["calls"],
                                           *({"stage": "achievement", "call": n, "answer": {"targets": []}} for n in (1, 2)),
                                           {"stage": "subtasks", "answer": {"decisions": []}},
                                           {"stage": "efficiency", "answer": {"talks": []}}]}))
    return every


def test_judging_at_80_columns_says_its_progress_within_them(conv_store: Any, tmp_path: Path) -> None:  # noqa: F811
    """What asz judge says while it runs (each stage's calls and tokens) and the run it shows
    fit the terminal, and a count of one is said in the singular."""
    from rich.cells import cell_len

    got = asz(Path(conv_store.path).parent, "judge", SESSION, "--evaluator", f"scripted:{_every_stage(tmp_path)}", columns=80)
    assert got.returncode == 0, got.stderr
    assert "targets: complete; 1 call, 1 attempt;" in " ".join(got.stderr.split())
    lines = got.stdout.splitlines() + got.stderr.splitlines()
    wide = [x for x in lines if cell_len(x) > 80 and not x.startswith(("run /", "report /"))]  # a path is never broken
    assert not wide, wide[:3]
    assert not re.search(r"\b1 (calls|attempts|goals|findings|parts|conversations|checks|requests)\b", got.stdout + got.stderr)


def test_claude_names_the_failure_and_what_to_do() -> None:
    from asz_evaluators.claude import _what_to_do

    assert "/login" in _what_to_do("Not logged in · Please run /login") and "--evaluator" in _what_to_do("Invalid API key")
    assert _what_to_do("the model refused") == ""


def test_show_gives_the_stages_findings(conv_store: Any, tmp_path: Path) -> None:  # noqa: F811
    from .test_close import ACHIEVEMENT, run_with

    path = run_with(conv_store, tmp_path, achievement=ACHIEVEMENT)
    got = asz(Path(conv_store.path).parent, "judge", "-show", str(path), columns=160)
    assert got.returncode == 0, got.stderr
    assert "achievement finding f1 for t1 at s224: the build failed" in got.stdout
    assert "f1 criterion_not_met at s224" in got.stdout and "contradicted" in got.stdout
