"""The `asz` command: collect / conversations / show / plugins, their --json, ids by prefix,
and main() turning an AszError into a message and exit code 1."""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from asz_core import cli
from asz_core.cli import app
from asz_core.errors import AszError, NotFound, UnknownPlugin

from .helpers import MATCH, ORIGIN, RESUMED, copy, run_asz

pytestmark = pytest.mark.usefixtures("corpus")

runner = CliRunner()


def _ok(*args: str) -> Any:
    r = runner.invoke(app, list(args))
    assert r.exit_code == 0, (r.output, r.exception)
    return json.loads(r.stdout) if "--json" in args else r.stdout


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy(MATCH, tmp_path_factory.mktemp("cli"))


@pytest.fixture(scope="module")
def collected(project: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding the copied project, collected once through the CLI: ASZ_HOME for read-only tests."""
    home = tmp_path_factory.mktemp("cli-home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ASZ_HOME", str(home))
        _ok("collect", str(project), "--json")
    return home


@pytest.fixture
def home(collected: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ASZ_HOME", str(collected))
    return collected


# -- collect -------------------------------------------------------------------------------------

def test_collect_json_then_again(asz_home: Path, tmp_path: Path) -> None:
    folder = tmp_path / "files"
    copy(ORIGIN, folder)
    first = _ok("collect", str(folder), "--json")
    assert set(first) == {"files_read", "files_unchanged", "bytes_looked_at", "bytes_read", "records_seen",
                          "records_published", "rounds", "warnings"}
    assert (first["files_read"], first["files_unchanged"], first["bytes_read"], first["bytes_looked_at"]) == \
        (1, 0, ORIGIN.stat().st_size, ORIGIN.stat().st_size)
    (rnd,) = first["rounds"]
    assert rnd["conversation"] == ORIGIN.stem and rnd["number"] == 1 and rnd["parent"] == ""
    assert rnd["records"] == first["records_published"] == 189 and len(rnd["head"]) == 64
    assert (asz_home / "asz.db").is_file()
    # the resumed session continues it, as round 2; then nothing is new
    copy(RESUMED, folder)
    second = _ok("collect", str(folder), "--json")
    assert [(r["conversation"], r["number"], r["parent"]) for r in second["rounds"]] == [(ORIGIN.stem, 2, rnd["head"])]
    # what it read (the new file) apart from what it looked at (the unchanged one too)
    sizes = ORIGIN.stat().st_size + RESUMED.stat().st_size
    assert (second["bytes_read"], second["bytes_looked_at"]) == (RESUMED.stat().st_size, sizes)
    third = _ok("collect", str(folder), "--json")
    assert (third["rounds"], third["records_published"], third["files_unchanged"]) == ([], 0, 2)
    assert (third["bytes_read"], third["bytes_looked_at"]) == (0, sizes)
    # a grown file: its new bytes read, every byte of both looked at
    with open(folder / RESUMED.name, "ab") as fh:
        fh.write(ORIGIN.read_bytes().splitlines(keepends=True)[-1])
    grown = _ok("collect", str(folder), "--json")
    extra = len(ORIGIN.read_bytes().splitlines(keepends=True)[-1])
    assert (grown["files_read"], grown["bytes_read"], grown["bytes_looked_at"]) == (1, extra, sizes + extra)


def test_collect_prints_a_table_for_people(asz_home: Path, tmp_path: Path) -> None:
    out = _ok("collect", str(copy(ORIGIN, tmp_path)))
    assert "1 file read, 0 unchanged; 189 new records in 1 conversation" in " ".join(out.split())
    assert ORIGIN.stem[:8] in out and "r1" in out


def test_collect_warnings_go_to_stderr_and_json_stays_clean(asz_home: Path, tmp_path: Path) -> None:
    f = copy(ORIGIN, tmp_path)
    with open(f, "ab") as fh:
        fh.write(b'{"type":"user","uuid":"half-writ')  # a last line still being written
    r = runner.invoke(app, ["collect", str(f), "--json"])
    assert r.exit_code == 0
    out = json.loads(r.stdout)
    assert out["records_published"] == 189 and any("truncated last line" in w for w in out["warnings"])
    assert "warning:" in r.stderr and "truncated last line" in r.stderr


def test_collect_of_nothing_readable_is_an_error(asz_home: Path, tmp_path: Path) -> None:
    r = runner.invoke(app, ["collect", str(tmp_path / "missing"), "--json"])
    assert r.exit_code == 1 and isinstance(r.exception, AszError)
    assert str(r.exception) == f"nothing to read: {tmp_path / 'missing'}:0: no such file or folder"
    r = runner.invoke(app, ["collect", str(copy(ORIGIN, tmp_path)), "--runtime", "nope"])
    assert r.exit_code == 1 and isinstance(r.exception, UnknownPlugin)
    assert "no runtime adapter named 'nope'; available: " in str(r.exception) and "claudecode" in str(r.exception)


# -- conversations and show ------------------------------------------------------------------------

def test_conversations_json(home: Path) -> None:
    rows = _ok("conversations", "--json")
    by_id = {r["id"]: r for r in rows}
    assert ORIGIN.stem in by_id and RESUMED.stem not in by_id  # the resume is not a conversation of its own
    origin = by_id[ORIGIN.stem]
    assert origin["sessions"] == [ORIGIN.stem, RESUMED.stem]
    assert origin["runtime"] == "claudecode" and origin["head"] == "r1" and len(origin["head_digest"]) == 64
    assert origin["talks"] > 0 and origin["model_calls"] > 0
    for r in rows:
        assert set(r) == {"id", "short", "runtime", "sessions", "project", "projects", "started", "last_activity",
                          "first_input", "talks", "subagents", "model_calls", "money", "money_complete", "money_lower_bound",
                          "head", "head_digest"}
    table = _ok("conversations")
    assert f"{len(rows)} conversations" in table and all(r["short"] in table for r in rows)


def test_show_by_whole_id_unique_prefix_and_session(home: Path) -> None:
    whole = _ok("show", ORIGIN.stem, "--json")
    assert whole["id"] == ORIGIN.stem and whole["round"] == "r1" and whole["talks"]
    assert _ok("show", ORIGIN.stem[:8], "--json") == whole
    assert _ok("show", ORIGIN.stem[:4], "--json") == whole
    assert _ok("show", RESUMED.stem, "--json") == whole  # a session id names its conversation
    assert _ok("show", ORIGIN.stem[:8], "--head", "r1", "--json") == whole
    assert _ok("show", ORIGIN.stem[:8], "--head", whole["head"][:8], "--json") == whole
    text = _ok("show", ORIGIN.stem[:8])
    assert f"conversation {ORIGIN.stem}" in text and "total:" in text


def _ambiguous_prefix(ids: list[str]) -> tuple[str, list[str]]:
    groups: dict[str, list[str]] = defaultdict(list)
    for i in ids:
        groups[i[0]].append(i)
    prefix, shared = next((p, g) for p, g in sorted(groups.items()) if len(g) > 1)
    return prefix, sorted(shared)


def test_show_with_an_ambiguous_or_unknown_prefix_is_an_error(home: Path) -> None:
    prefix, shared = _ambiguous_prefix([r["id"] for r in _ok("conversations", "--json")])
    r = runner.invoke(app, ["show", prefix, "--json"])
    assert r.exit_code == 1 and isinstance(r.exception, NotFound)
    assert str(r.exception).startswith(f"'{prefix}' names {len(shared)} conversations (")
    assert all(s[:12] in str(r.exception) for s in shared) and "give more of the id" in str(r.exception)
    r = runner.invoke(app, ["show", "zzzz"])
    assert r.exit_code == 1 and isinstance(r.exception, NotFound)
    assert str(r.exception).startswith("no conversation 'zzzz' in ")
    r = runner.invoke(app, ["show", ORIGIN.stem[:8], "--head", "r7"])
    assert r.exit_code == 1 and "has no round 'r7' (rounds r1…r1)" in str(r.exception)


def test_main_prints_the_error_and_exits_1(home: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    prefix, shared = _ambiguous_prefix([r["id"] for r in _ok("conversations", "--json")])
    for args, message in ((["show", prefix], f"error: '{prefix}' names {len(shared)} conversations"),
                          (["show", "zzzz"], "error: no conversation 'zzzz'")):
        monkeypatch.setattr(sys, "argv", ["asz", *args])
        with pytest.raises(SystemExit) as exit_:
            cli.main()
        assert exit_.value.code == 1
        err = capsys.readouterr().err
        assert " ".join(err.split()).startswith(message) and "Traceback" not in err


def test_main_exit_codes_in_a_real_process(home: Path) -> None:
    r = run_asz("show", "zzzz", home=home)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr.startswith("error: no conversation 'zzzz'") and "Traceback" not in r.stderr
    r = run_asz("show", ORIGIN.stem[:8], "--json", home=home)
    assert r.returncode == 0 and json.loads(r.stdout)["id"] == ORIGIN.stem


def test_main_keeps_the_traceback_of_a_bug(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("a bug, not a user error")

    from asz_core import conversations

    monkeypatch.setattr(conversations, "listing", broken)
    monkeypatch.setattr(sys, "argv", ["asz", "conversations"])
    with pytest.raises(RuntimeError, match="a bug"):
        cli.main()


# -- plugins -------------------------------------------------------------------------------------

def test_plugins_json_and_table() -> None:
    rows = _ok("plugins", "--json")
    claude = next(r for r in rows if r["name"] == "claudecode")
    assert claude == {"kind": "runtime adapter", "name": "claudecode",
                      "cls": "asz_adapters_claudecode.adapter.ClaudeCodeAdapter", "plugin": "claudecode",
                      "distribution": "asz-adapters-claudecode", "version": claude["version"]}
    from importlib.metadata import version

    assert claude["version"] == version("asz-adapters-claudecode")
    table = _ok("plugins")
    assert "installed asz plugins" in table and "claudecode" in table
