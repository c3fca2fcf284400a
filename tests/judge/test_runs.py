"""`asz runs [CONV]`: the runs under ASZ_HOME newest first, closed or not (and then whether the
process that ran it lives), evaluators, what judging consumed, the scores once close writes them."""

from __future__ import annotations

import datetime as dt

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from asz_core.judge.runs import alive, list_runs
from asz_core.judge.runs_report import runs_text
from asz_core.judge.statement_text import statement_text
from asz_core.store import Store
from asz_core.tables import render

from .conftest import cid_with, entry, inputs_of, judge, plain_answer


@pytest.fixture
def home(corpus_store_copy):
    """A copy of the corpus store: its kept summaries and runs start empty."""
    return corpus_store_copy


def _two_runs(store: Store, tmp_path: Path) -> tuple[str, str, list[Any]]:
    convs = [r.id for r in store.conversations()]
    a = cid_with(store, 1)
    b = next(c for c in convs if c != a and inputs_of(store, c))
    results = []
    for cid in (a, b, a):
        res, _ = judge(store, tmp_path, cid, [entry(plain_answer(inputs_of(store, cid)))])
        results.append(res)
    return a, b, results


def test_runs_newest_first_with_what_they_consumed(home: Store, tmp_path: Path) -> None:
    a, b, results = _two_runs(home, tmp_path)
    rows = list_runs(home=home.path.parent, store=home)
    assert [r.run for r in rows] == [r.path.name for r in reversed(results)]
    first = rows[-1]
    close = json.loads((results[0].path / "close.json").read_text())
    run = json.loads((results[0].path / "run.json").read_text())
    assert first.status == "closed" and first.conversation == a and first.head == run["head"] and first.window == "all"
    assert first.consumed == close["consumed"] and first.consumed["input"] == 1000
    assert first.evaluators == (run["evaluators"]["targets"]["spec"],) and first.evaluators[0].startswith("scripted:")
    assert first.stages["targets"] == "complete"
    assert set(first.scores) == set(close["statement"]["scores"]) if close.get("statement") else first.scores == {}
    # one conversation's, by a prefix of its id
    mine = list_runs(a[:8], home=home.path.parent, store=home)
    assert [r.run for r in mine] == [results[2].path.name, results[0].path.name]
    assert list_runs("zzzz", home=home.path.parent, store=home) == []


def test_a_run_not_closed_says_whether_its_process_lives(home: Store, tmp_path: Path) -> None:
    _, _, results = _two_runs(home, tmp_path)
    path = results[0].path
    (path / "close.json").unlink()
    run = json.loads((path / "run.json").read_text())
    assert run["pid"] == os.getpid() and run["host"] == socket.gethostname()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        for pid, host, want in ((child.pid, socket.gethostname(), "running"), (child.pid, "another-machine", "stopped")):
            (path / "run.json").write_text(json.dumps({**run, "pid": pid, "host": host}))
            got = next(r for r in list_runs(home=home.path.parent, store=home) if r.run == path.name)
            assert got.status == want
            # not closed: what the stages written so far consumed
            assert got.consumed["requests"] == 1 and got.consumed["input"] == 1000
    finally:
        child.kill()
        child.wait()
    assert not alive(child.pid, socket.gethostname())  # gone
    got = next(r for r in list_runs(home=home.path.parent, store=home) if r.run == path.name)
    assert got.status == "stopped"
    assert not alive(None, socket.gethostname()) and not alive(-1, socket.gethostname())


def test_scores_once_the_close_writes_them(home: Store, tmp_path: Path) -> None:
    _, _, results = _two_runs(home, tmp_path)
    p = results[0].path / "close.json"
    close = json.loads(p.read_text())
    # two scores set by hand, the file still of close.json's shape (one that is not does not read)
    close["statement"]["scores"] |= {"achievement": {"value": "2/3", "rounded": "0.6667", "unit": "money"},
                                     "efficiency": {"value": None, "rounded": None, "unit": "money"}}
    p.write_text(json.dumps(close))
    got = next(r for r in list_runs(home=home.path.parent, store=home) if r.run == results[0].path.name)
    assert {k: got.scores[k] for k in ("achievement", "efficiency")} == {"achievement": "0.6667", "efficiency": None}
    assert {k: got.units[k] for k in ("achievement", "efficiency")} == {"achievement": "money", "efficiency": "money"}
    out = render(runs_text([got], {}), 160)
    assert "achievement 0.67," in out and "efficiency —" in out and "scores weigh money" in out
    assert "0.6667" not in out  # to 2 places, as `asz judge -show` says it; --json keeps close.json's 4
    shown = render(statement_text(close["statement"]), 160)
    assert "achievement 0.67 " in shown and "efficiency —" in shown


@pytest.mark.parametrize("width", [80, 160])
def test_the_table_at_80_and_160(home: Store, tmp_path: Path, width: int) -> None:
    _two_runs(home, tmp_path)
    rows = list_runs(home=home.path.parent, store=home)
    out = render(runs_text(rows, {}), width)
    assert all(len(line) <= width for line in out.splitlines())
    assert all(r.run in out for r in rows) and "closed" in out
    if width == 160:
        assert "evaluators" in out and "judging consumed" in out and "started" in out


def test_the_command(home: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from asz_core import cli

    a, _, results = _two_runs(home, tmp_path)
    monkeypatch.setenv("ASZ_HOME", str(home.path.parent))
    r = CliRunner().invoke(cli.app, ["runs", "--json"])
    assert r.exit_code == 0, r.output
    assert [x["run"] for x in json.loads(r.stdout)] == [x.path.name for x in reversed(results)]
    r = CliRunner().invoke(cli.app, ["runs", a[:10]], env={"COLUMNS": "160"})
    assert r.exit_code == 0 and "2 runs, newest first" in r.stdout
    empty = tmp_path / "empty"
    monkeypatch.setenv("ASZ_HOME", str(empty))
    r = CliRunner().invoke(cli.app, ["runs"])
    assert r.exit_code == 0 and "no runs yet" in r.stdout


@pytest.mark.parametrize("width", [80, 160])
def test_a_run_shown_at_80_and_160(home: Store, tmp_path: Path, width: int) -> None:
    from asz_core.judge import report as judge_report
    from asz_core.judge.runner import read_run

    _, _, results = _two_runs(home, tmp_path)
    d = read_run(results[0].path)
    out = render(judge_report.run_text(d), width)
    assert all(len(line) <= width for line in out.splitlines())
    targets = d["stages"]["targets"]["targets"]
    assert targets and all(t["id"] in out for t in targets)
    assert all(s in out for s in ("targets", "achievement", "divergence", "complete", "skipped"))


def test_a_prefix_of_a_session_id_names_its_conversation_to_judge_runs_and_the_mcp_server(
        home: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """9fdc1632 is a session resumed from b277cc60 (one conversation, b277cc60's id): a prefix of
    the resumed session's id is judged, listed and served as that conversation."""
    from asz_core import cli

    from tests.core.helpers import ORIGIN, RESUMED

    session = RESUMED.stem[:10]
    assert not ORIGIN.stem.startswith(session)
    monkeypatch.setenv("ASZ_HOME", str(home.path.parent))
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"calls": [entry(plain_answer(inputs_of(home, ORIGIN.stem)))]}))
    r = CliRunner().invoke(cli.app, ["judge", session, "--evaluator", f"scripted:{script}", "--stages", "targets"])
    assert r.exit_code == 0, r.output
    run = next(x for x in r.output.splitlines() if x.startswith("run /")).split()[-1]
    assert Path(run).parent.name == ORIGIN.stem
    r = CliRunner().invoke(cli.app, ["runs", session, "--json"])
    assert r.exit_code == 0 and [x["run"] for x in json.loads(r.stdout)] == [Path(run).name]
    r = CliRunner().invoke(cli.app, ["judge", "-show", Path(run).name[:17], "--json"])  # a run id's prefix too
    assert r.exit_code == 0 and json.loads(r.stdout)["run"]["conversation"] == ORIGIN.stem
    import anyio

    from tests.core.test_mcp import _params, _session

    async def card(sess: Any) -> str:
        return (await sess.call_tool("card", {})).content[0].text

    got = anyio.run(_session, _params(home.path.parent, session), card)
    assert json.loads(got)["conversation"] == ORIGIN.stem, got[:300]  # the card of the conversation the session is in


def test_a_run_whose_stage_failed_is_listed_failed_never_closed(home: Store, tmp_path: Path) -> None:
    cid = cid_with(home, 1)
    ans = plain_answer(inputs_of(home, cid))
    ok, _ = judge(home, tmp_path, cid, [entry(ans)])
    bad, _ = judge(home, tmp_path, cid, [entry(ans)], stages=None)  # the script answers no achievement call
    assert bad.stages["achievement"] == "failed" and ok.stages["targets"] == "complete"
    rows = {r.run: r for r in list_runs(home=home.path.parent, store=home)}
    assert rows[bad.path.name].status == "failed" and rows[ok.path.name].status == "closed"
    text = render(runs_text(list(rows.values()), {}), 160)
    assert "failed: closed, a stage failed" in " ".join(text.split())
    # the zone of the times is said where a time is drawn: not under a table with no time in it
    for width in (200, 80):
        text = render(runs_text(list(rows.values()), {}, dt.UTC), width)
        head = next(x for x in text.splitlines() if x.startswith("┃ run "))
        assert ("┃ started " in head) == ("times are UTC" in " ".join(text.split())), (width, text)


def test_runs_and_show_name_coverage_alike() -> None:
    st = {"scores": {k: {"rounded": "0.50", "unit": "money"} for k in ("achievement", "efficiency", "coverage", "delivered")}}
    text = render(statement_text(st), 160)
    assert "coverage 0.50" in text and "reviewed" not in text
