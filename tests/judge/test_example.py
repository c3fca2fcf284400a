"""The bundled example's judge run (kit/example's last command) works without a model."""

from __future__ import annotations

import json
import os
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from asz_core.judge import runner

ROOT = Path(__file__).resolve().parents[2]


def judge_example(store: Any) -> runner.RunResult:
    """kit/example's run: the bundled conversation collected, judged by its script."""
    from asz_core.collect import collect

    collect([ROOT / "examples" / "claude-code"], store)
    return runner.judge(runner.JudgeOptions("5e1f0c2a", evaluator=f"scripted:{ROOT / 'examples' / 'scripted-5e1f0c2a.yaml'}"),
                        store=store)


def test_the_example_script_judges_the_bundled_example(store: Any) -> None:
    res = judge_example(store)
    stage = json.loads((res.path / "stages" / "targets.json").read_text())
    assert stage["status"] == "complete", stage["note"]
    assert [(t["id"], t["kind"], t["state"], t["talks"]) for t in stage["targets"]] == [
        ("t1", "change", "closed", ["k1"]), ("t2", "question", "open", ["k2"])]
    assert [c["id"] for c in stage["targets"][1]["criteria"]] == ["t2.c1", "t2.c2", "t2.c3"]
    g = stage["goals"][0]
    assert (g["id"], g["members"], g["main_target"], g["main_basis"]) == ("g1", ["t1", "t2"], None, "undetermined")
    assert stage["run"]["consumed"]["requests"] == 3 and stage["run"]["consumed"]["model_window"] == 200000
    reads = (res.path / "calls/targets/1/1/reads.jsonl").read_text().splitlines()
    assert [json.loads(x)["tool"] for x in reads] == ["talks", "talk"]
    # the sub-task and efficiency stages: every answer kept, and the avoidable part priced
    sub = json.loads((res.path / "stages" / "subtasks.json").read_text())
    eff = json.loads((res.path / "stages" / "efficiency.json").read_text())
    assert sub["status"] == "complete" and eff["status"] == "complete", (sub["note"], eff["note"])
    [a1] = sub["subtasks"]
    assert (a1["stream"], a1["outcome"]["value"], a1["report"]["value"], a1["used"]["value"], a1["dispatch"]["value"],
            a1["label"]["label"], a1["targets"]) == ("a1", "completed", "accurate", "used", "right", "productive", ["t2"])
    assert [(p["start"], p["label"]["label"], p["calls"]) for t in eff["talks"] for p in t["parts"]] == [
        ("s1", "productive", ["s2", "s5"]), ("s9", "avoidable_error", ["s8", "s10"]), ("s13", "productive", ["s13", "s15"]),
        ("s17", "productive", ["s18", "s22", "s25"])]
    # findings are numbered across the run: the achievement stage's f1, then efficiency's
    assert [(f["id"], f["target"], f["anchor"]) for f in eff["findings"]] == [("f2", "t1", "s9")]
    from asz_core import ledger, window

    led = ledger.build(window.build(store, "5e1f0c2a").conv, ledger.load_prices(None))
    money = {c.step: c.price.money for c in led.calls}
    st = json.loads((res.path / "close.json").read_text())["statement"]
    t1, t2 = st["targets"]
    six = Decimal("0.000001")  # close rounds once, to 6 places
    assert Decimal(t1["cost"]["total"]["money"]) == sum(money[s] for s in ("s2", "s5", "s8", "s10", "s13", "s15")).quantize(six)
    assert Decimal(t1["cost"]["avoidable"]["money"]) == (money["s8"] + money["s10"]).quantize(six)
    assert t1["cost"]["avoidable_by_cause"]["main_agent"] == t1["cost"]["avoidable"]
    assert t2["cost"]["avoidable"]["calls"] == 0 and t2["cost"]["not_reviewed"]["calls"] == 0


def test_the_example_script_answers_the_achievement_stage(store: Any) -> None:
    from rich.console import Console

    from asz_core.judge.report import run_text

    res = judge_example(store)
    st = json.loads((res.path / "stages" / "achievement.json").read_text())
    assert st["status"] == "complete", st["note"]
    assert [(t["target"], t["level"], t["basis"], [(c["id"], c["state"]) for c in t["criteria"]]) for t in st["achievement"]] == [
        ("t1", "achieved", "observed_result", [("t1.c1", "met"), ("t1.c2", "met")]),
        ("t2", "unverified", "delivered_answer", [("t2.c1", "met"), ("t2.c2", "met"), ("t2.c3", "not_captured")])]
    t1 = st["achievement"][0]
    assert t1["account"]["own_operations"] == ["o1", "o2"] and t1["rework"][0]["id"] == "t1.r1"
    assert t1["findings"][0]["anchor"] == "s7" and t1["standing"] == ["t1.e1"]
    con = Console(width=140, record=True)
    con.print(run_text(runner.read_run(res.path)))
    out = con.export_text()
    assert "achievement: 2 of 2 targets judged: 1 achieved, 1 unverified" in out
    assert "t2.c3 not_captured" in out and "observed_result" in out


def test_kit_example_prints_the_runs_summary_and_where_the_report_is(tmp_path: Path) -> None:
    """kit/example, run as a person runs it: short (the run's summary and where report.html is, not
    every table), and a scripted evaluator's rate said once, at the end."""
    import subprocess

    root = Path(__file__).resolve().parents[2]
    if not (root / ".venv" / "bin" / "asz").exists():
        pytest.skip("no .venv/bin/asz: kit/setup makes it")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASZ_")}
    env.update(ASZ_HOME=str(tmp_path / "home"), COLUMNS="100", NO_COLOR="1")
    # kit/example's commands after kit/install-asz (which only installs)
    lines = [ln for ln in (root / "kit" / "example").read_text().splitlines() if ln.startswith(".venv/bin/asz ")]
    assert len(lines) == 2, lines  # collect, then judge --brief
    out, err = "", ""
    for ln in lines:
        r = subprocess.run(ln.split(), cwd=root, env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        out, err = out + r.stdout, err + r.stderr
    assert len(out.splitlines()) < 60, out
    assert re.search(r"^report .*report\.html$", out, re.M) and re.search(r"achievement \d\.\d\d", out)
    assert "┃ stage " not in out and "┃ input " not in out  # no stage table, no inputs table
    assert err.count("tokens/min") == 1 and "run closed" in err[err.index("tokens/min") - 300:]


def test_a_whole_judge_run_says_its_rate_once_and_its_evaluator_once(tmp_path: Path) -> None:
    """``asz judge`` without --brief: the run's progress, then every table. The scripted evaluator's
    tokens a minute said once, as the run closes (the report under it was saying it again, in other
    words and other figures); one evaluator judging every stage named once. ``-show`` alone still
    says the rate, in the same words."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("ASZ_")}
    env.update(ASZ_HOME=str(tmp_path / "home"), COLUMNS="120", NO_COLOR="1")
    cli = [sys.executable, "-c", "from asz_core.cli import main; main()"]
    script = f"scripted:{ROOT / 'examples' / 'scripted-5e1f0c2a.yaml'}"
    subprocess.run([*cli, "collect", str(ROOT / "examples" / "claude-code")], env=env, check=True, capture_output=True)
    r = subprocess.run([*cli, "judge", "5e1f0c2a", "--evaluator", script], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    both = " ".join((r.stderr + r.stdout).split())
    assert both.count("tokens/min") == 1 and "per minute" not in both, both
    assert both.count(script) == 1 and f"evaluator {script} (every stage)" in both
    run = re.search(r"^run (\S+)", r.stdout, re.M)
    assert run
    shown = subprocess.run([*cli, "judge", "-show", Path(run.group(1)).name], env=env, capture_output=True, text=True, timeout=300)
    said = " ".join(shown.stdout.split())
    rate = re.search(r"run closed: .*?; ([\d,]+ input-side and [\d,]+ output tokens/min)", " ".join(r.stderr.split()))
    assert rate and said.count("tokens/min") == 1 and rate.group(1) in said, (rate, said[-400:])
    # -show --brief: the run's summary again, not every table
    brief = subprocess.run([*cli, "judge", "-show", Path(run.group(1)).name, "--brief"], env=env, capture_output=True,
                           text=True, timeout=300)
    assert brief.returncode == 0 and "achievement " in brief.stdout and "┃ stage " not in brief.stdout, brief.stdout[-600:]
    assert f"every table of the run: asz judge -show {Path(run.group(1)).name}" in brief.stdout
