"""`asz judge --all`, `asz worker` and `asz runs --team` as a person types them: clear one-line
errors for missing setup, the team's runs listed from the team database."""

from __future__ import annotations

import json
from pathlib import Path

from tests.core.helpers import run_asz

from .conftest import EXAMPLE, SCRIPT


def test_without_a_team_database_each_says_how_to_give_one(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("ASZ_JOBS", raising=False)
    monkeypatch.delenv("ASZ_STORE", raising=False)
    home = tmp_path / "home"
    assert run_asz("collect", str(EXAMPLE), home=home).returncode == 0
    for args in (("runs", "--team"), ("worker", "--until-empty"), ("judge", "--all", "--evaluator", f"scripted:{SCRIPT}")):
        r = run_asz(*args, home=home)
        assert r.returncode == 1, (args, r.stdout, r.stderr)
        assert "ASZ_JOBS" in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)


def test_unreachable_team_database_is_said_without_its_password(tmp_path: Path) -> None:
    r = run_asz("runs", "--team", home=tmp_path / "home",
                ASZ_JOBS="postgresql://someone:hunter2@127.0.0.1:9/nowhere")
    assert r.returncode == 1 and "cannot reach the team database" in r.stderr
    assert "hunter2" not in r.stderr and "Traceback" not in r.stderr


def test_misused_options_are_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert run_asz("collect", str(EXAMPLE), home=home).returncode == 0
    for args in (("judge", "5e1f0c2a", "--all"), ("judge", "5e1f0c2a", "--since", "7d"), ("runs", "--by", "project"),
                 ("runs", "--html", str(tmp_path / "x.html")), ("judge", "--all")):
        r = run_asz(*args, home=home, ASZ_JOBS="postgresql://postgres@127.0.0.1:9/none")
        assert r.returncode != 0 and "Traceback" not in r.stderr, (args, r.stderr)


def test_queue_work_and_list_the_team(team_db: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "asz.yaml").write_text(json.dumps({"jobs": {"retry_wait": 0}}))
    assert run_asz("collect", str(EXAMPLE), home=home).returncode == 0
    q = run_asz("judge", "--all", "--project", "invoicer", "--evaluator", f"scripted:{SCRIPT}", "--json", home=home,
                ASZ_JOBS=team_db)
    assert q.returncode == 0, q.stderr
    assert [x["head"] for x in json.loads(q.stdout)["queued"]] == ["r1"]
    none = run_asz("judge", "--all", "--project", "no-such-project", "--evaluator", f"scripted:{SCRIPT}", home=home,
                   ASZ_JOBS=team_db)
    assert none.returncode == 0 and "nothing queued" in none.stdout
    w = run_asz("worker", "--until-empty", home=home, ASZ_JOBS=team_db)
    assert w.returncode == 0, w.stderr
    listed = run_asz("runs", "--team", "--json", home=home, ASZ_JOBS=team_db)
    (row,) = json.loads(listed.stdout)
    assert row["status"] == "closed" and row["attempts"] == 1
    table = run_asz("runs", "--team", home=home, ASZ_JOBS=team_db)
    assert "closed" in table.stdout and "5e1f0c2a" in table.stdout
    by = run_asz("runs", "--team", "--by", "week", "--json", home=home, ASZ_JOBS=team_db)
    (g,) = json.loads(by.stdout)["groups"]
    assert g["conversations"] == 1 and g["closed"] == 1 and g["unit"] == "money"
    page = tmp_path / "team.html"
    h = run_asz("runs", "--team", "--html", str(page), home=home, ASZ_JOBS=team_db)
    assert h.returncode == 0 and page.read_text().count("<svg") == 2
