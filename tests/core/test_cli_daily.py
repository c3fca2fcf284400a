"""The command line a daily user meets: -h on every command, --version, filters through the CLI,
show --talk, and no traceback for a mistake or a machine that says no."""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from asz_core.cli import app
from asz_core.navigation import Navigator
from asz_core.registry import Registry
from asz_core.window import build

from tests.conftest import need_corpus

from .helpers import ORIGIN, RESUMED, ROOT, run_asz

runner = CliRunner()


def _commands(cmd: typer.core.TyperCommand | typer.core.TyperGroup, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = [path]
    if isinstance(getattr(cmd, "commands", None), dict):
        for name, sub in cmd.commands.items():
            out += _commands(sub, (*path, name))
    return out


COMMANDS = _commands(typer.main.get_command(app))


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "asz")
@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_help_everywhere(path: tuple[str, ...], flag: str) -> None:
    r = runner.invoke(app, [*path, flag])
    assert r.exit_code == 0, (path, r.output)
    assert "Usage" in r.stdout and "Traceback" not in r.stdout


def test_there_are_many_commands_to_ask() -> None:
    names = {" ".join(p) for p in COMMANDS}
    assert {"collect", "conversations", "show", "ledger", "judge", "judge mcp", "prices update", "plugins"} <= names


def test_version_names_asz_and_every_plugin() -> None:
    r = runner.invoke(app, ["--version"])
    assert r.exit_code == 0
    assert r.stdout.startswith(f"asz {version('asz-core')}")
    dists = {p.distribution for p in Registry().plugins()}
    assert len(dists) >= 5
    for d in dists:
        assert f"{d} {version(d)}" in r.stdout
    assert runner.invoke(app, ["-V"]).stdout == r.stdout


@pytest.fixture
def home(mixed, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ASZ_HOME", str(mixed.path.parent))
    return mixed.path.parent


def _json(*args: str):
    r = runner.invoke(app, [*args, "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_conversations_filters_through_the_cli(home: Path) -> None:
    every = _json("conversations")
    codex = _json("conversations", "--runtime", "codex")
    assert codex and {r["runtime"] for r in codex} == {"codex"}
    assert len(_json("conversations", "--runtime", "codex", "--runtime", "claudecode")) == len(every)
    assert [r["id"] for r in _json("conversations", "-n", "2")] == [r["id"] for r in every[-2:]]
    day = _json("conversations", "--since", "2025-11-01", "--until", "2025-11-01", "--tz", "UTC")
    assert day and all(r["last_activity"] >= "2025-11-01" and r["started"] < "2025-11-02" for r in day)
    match = _json("conversations", "--project", "match")
    assert match and all("match" in r["project"].lower() for r in match)
    led = _json("ledger", "--by", "project", "--project", "match")
    assert [r["key"] for r in led["rows"]] == ["/Users/coreyyoung/Desktop/Projects/match"]
    assert led["filter"]["projects"] == ["match"]


def test_show_talk_prints_the_navigations_outline(home: Path, mixed) -> None:
    d = _json("show", RESUMED.stem[:12], "--talk", "k2")  # a prefix of the resumed session's id
    assert d["conversation"] == ORIGIN.stem and d["talk"]["id"] == "k2"
    nav = Navigator(build(mixed, ORIGIN.stem), mixed)
    tool = json.loads(nav.call("talk", {"id": "k2"}))
    got = [{k: v for k, v in s.items() if k != "money"} for s in d["steps"]]
    assert got[: len(tool["steps"])] == tool["steps"]
    assert all("money" in s for s in d["steps"] if s["kind"] == "model_call")
    text = runner.invoke(app, ["show", ORIGIN.stem[:8], "--talk", "k2"], env={"COLUMNS": "160"})
    assert text.exit_code == 0 and "talk k2" in text.stdout and "returned" in text.stdout
    r = runner.invoke(app, ["show", ORIGIN.stem[:8], "--talk", "k99"])
    assert r.exit_code == 1 and "no talk k99" in str(r.exception)
    assert "see talks and subtasks" not in str(r.exception)  # the evaluator's tools, not a person's commands
    assert f"`asz show {ORIGIN.stem[:8]}` lists its talks" in str(r.exception)


def test_show_gives_each_talk_start_duration_and_money(home: Path) -> None:
    d = _json("show", ORIGIN.stem[:8])
    main = [t for t in d["talks"] if t["stream"] == "m"]
    assert all(t["start"] and t["seconds"] is not None and t["seconds"] >= 0 for t in main)
    assert any(float(t["money"]) > 0 for t in main)
    led = _json("ledger", ORIGIN.stem[:8])
    by_talk = {r["key"]: r["tally"]["money"] for r in led["rows"]}
    assert all(t["money"] == by_talk[t["id"]] for t in main)  # the ledger's figure, with the sub-agents


@pytest.mark.parametrize("args,message", [
    (["conversations", "--since", "last tuesday"], "'last tuesday' is neither a date"),
    (["ledger", "--tz", "Mars/Olympus"], "unknown time zone 'Mars/Olympus'"),
    (["conversations", "--since", "2025-02-01", "--until", "2025-01-01"], "is not after"),
    # a mistyped conversation or head is said as such, before any evaluator is looked for
    (["judge", "nope-not-there"], "no conversation 'nope-not-there'"),
    (["judge", ORIGIN.stem[:8], "--head", "r99"], "has no round 'r99'"),
    (["runs", "nope-not-there"], "no conversation 'nope-not-there'"),
    # what a person typed is said as typed, never read as rich markup (a closing tag crashed it)
    (["show", "[/x]"], "no conversation '[/x]'"),
    (["ledger", "a[bold]b"], "no conversation 'a[bold]b'"),
])
def test_a_mistake_is_one_line(home: Path, args: list[str], message: str) -> None:
    r = run_asz(*args, home=home)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith("error: ") and message in r.stderr and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("args", [["conversations"], ["ledger"], ["collect", "."], ["show", "x"]])
def test_an_asz_home_that_cannot_be_made_is_one_line_naming_it(tmp_path: Path, args: list[str]) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    home = blocker / "home"  # under a regular file: no one can make it, root included
    r = run_asz(*args, home=home)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and str(home) in r.stderr and "ASZ_HOME" in r.stderr


def test_a_store_that_cannot_be_opened_is_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "asz.db").mkdir(parents=True)  # a folder where the store file should be
    r = run_asz("conversations", home=home)
    assert r.returncode == 1 and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert str(home / "asz.db") in r.stderr


@pytest.mark.parametrize("args", [["judge", "--help"], ["judge", "-h"], ["judge"], ["judge", "-show", "--help"],
                                  ["judge", "abc123", "--window", "k1..k2", "-h"]])
def test_judge_help_lists_the_runs_options(args: list[str]) -> None:
    r = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    for opt in ("--evaluator", "--window", "--head", "-show", "--stages", "--stage-evaluator", "--json"):
        assert opt in r.stdout, opt
    assert " judge [OPTIONS] [conversation]" in r.stdout and "judge run" not in r.stdout
    assert "asz judge mcp" in r.stdout and "asz runs" in r.stdout


def test_judge_mcp_help_is_its_own() -> None:
    r = runner.invoke(app, ["judge", "mcp", "-h"], env={"COLUMNS": "200"})
    assert r.exit_code == 0 and "--budget" in r.stdout and "--evaluator" not in r.stdout


def test_a_warning_names_a_file_whose_path_looks_like_markup_as_it_is(tmp_path: Path) -> None:
    src = next((ROOT / "examples" / "claude-code").glob("*/*.jsonl"))
    folder = tmp_path / "-home-me-x[bold]"
    folder.mkdir()
    f = folder / src.name
    f.write_bytes(src.read_bytes() + b"garbage line\n")
    r = run_asz("collect", str(tmp_path), home=tmp_path / "home")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert f"warning: {f}:" in " ".join(r.stderr.split()), r.stderr


def test_a_time_at_the_calendars_end_is_no_traceback_in_any_zone(tmp_path: Path) -> None:
    # A real transcript with one line's time put a few minutes before year 10000 and one's just
    # after year 1 began (UTC): in +02:00 or -02:00 their day does not exist. They are no instant
    # (their calls are timed by their other lines), and bounds at the calendar's ends keep all or nothing.
    need_corpus(ORIGIN)
    lines = ORIGIN.read_bytes().splitlines(keepends=True)
    calls = [i for i, ln in enumerate(lines) if b'"type":"assistant"' in ln and b'"usage"' in ln and b'"timestamp":"' in ln]
    for i, ts in ((calls[1], b"9999-12-31T23:50:00.000Z"), (calls[-1], b"0001-01-01T00:10:00.000Z")):
        head, _, rest = lines[i].partition(b'"timestamp":"')
        lines[i] = head + b'"timestamp":"' + ts + rest[rest.index(b'"'):]
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / ORIGIN.name).write_bytes(b"".join(lines))
    home = tmp_path / "home"
    assert run_asz("collect", str(folder), home=home).returncode == 0
    base = json.loads(run_asz("ledger", "--json", home=home).stdout)
    for args in (["ledger", "--by", "day", "--timezone", "+02:00"], ["ledger", "--timezone", "-02:00"],
                 ["ledger", "--json", "--by", "day", "--timezone", "+02:00"],
                 ["conversations", "--timezone", "+02:00"], ["conversations", "--json", "--timezone", "-02:00"],
                 ["ledger", "--json", "--until", "9999-12-31", "--since", "0001-01-01", "--timezone", "+02:00"]):
        r = run_asz(*args, home=home)
        assert r.returncode == 0 and "Traceback" not in r.stderr, (args, r.stderr)
    def ledger(*bounds: str) -> dict:  # type: ignore[type-arg]
        return json.loads(run_asz("ledger", "--json", *bounds, "--timezone", "+02:00", home=home).stdout)

    whole, wide = ledger("--since", "0001-01-01", "--until", "9999-12-31"), ledger("--since", "2000-01-01", "--until", "2100-01-01")
    assert whole["total"] == wide["total"] and whole["untimed_calls_left_out"] == wide["untimed_calls_left_out"]
    assert base["total"]["calls"] >= whole["total"]["calls"] > 0
    assert ledger("--until", "0001-01-01")["total"]["calls"] == 0
