"""The commands a person types daily and programs run (`asz collect`, `asz ledger`, `asz
conversations`, `asz show`, `asz runs`, tables and --json) run without typer and pydantic (issues
16 and 28: the lean path), the JSON of collect and ledger without rich either, and print exactly
what the full CLI prints for the same arguments; whatever the lean parser does not take goes to
the full CLI."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from asz_core.main import parse

from .helpers import ASZ_MAIN, MATCH, asz_env

pytestmark = pytest.mark.usefixtures("corpus")

FULL = "import sys; from asz_core.cli import main; sys.argv[0] = 'asz'; main()"
HEAVY = ("typer", "rich", "pydantic", "cattrs", "click")


def test_the_lean_parser_takes_the_daily_commands_and_nothing_else() -> None:
    assert parse(["collect", "--json"]) == ("collect", {"--json": True}, [])
    assert parse(["collect"]) == ("collect", {}, [])
    assert parse(["collect", "a", "--runtime=kiro", "b", "--json", "--", "--c"]) == \
        ("collect", {"--runtime": "kiro", "--json": True}, ["a", "b", "--c"])
    assert parse(["ledger", "abc", "--by", "talk", "--tz", "UTC", "--project", "x", "--project=y", "--json",
                  "--timezone", "Europe/Paris"]) == \
        ("ledger", {"--by": "talk", "--timezone": "Europe/Paris", "--project": ["x", "y"], "--json": True}, ["abc"])
    assert parse(["ledger", "--by", "day"]) == ("ledger", {"--by": "day"}, [])
    assert parse(["conversations", "-n", "3", "--runtime", "codex", "--since=3d", "-w"]) == \
        ("conversations", {"--last": 3, "--runtime": ["codex"], "--since": "3d", "--wide": True}, [])
    assert parse(["ledger", "--by", "block", "--json"]) == ("ledger", {"--by": "block", "--json": True}, [])
    assert parse(["show", "abc", "-k", "k2", "--head", "r1", "--tz", "UTC"]) == \
        ("show", {"--talk": "k2", "--head": "r1", "--timezone": "UTC"}, ["abc"])
    assert parse(["show", "abc", "--operations", "--json"]) == ("show", {"--operations": True, "--json": True}, ["abc"])
    assert parse(["runs"]) == ("runs", {}, [])
    assert parse(["runs", "abc", "--timezone", "UTC"]) == ("runs", {"--timezone": "UTC"}, ["abc"])
    for argv in (["ledger", "--json", "-h"], ["collect", "--json", "--help"], ["collect", "-h"],
                 ["ledger", "--json", "--by", "week"], ["ledger", "--by", "week"], ["ledger", "--json", "--head", "r1"],
                 ["ledger", "c", "--json", "--by", "project"], ["ledger", "a", "b", "--json"],
                 ["ledger", "--json", "--since"], ["ledger", "--json", "--since", "--until", "x"],
                 ["collect", "--json", "--bogus"], ["collect", "--tz", "UTC"], ["show"], ["show", "a", "b"],
                 ["show", "a", "--by", "day"], ["show", "a", "-n", "3"], ["conversations", "x"],
                 ["conversations", "--last", "x"], ["conversations", "--last", "-1"], ["conversations", "-n=3"],
                 ["conversations", "-n", "0"], ["ledger", "c", "--by", "block"], ["runs", "--team"], ["runs", "--by", "week"],
                 ["conversations", "--last", "\u0663"], ["conversations", "-k", "k1"], ["runs", "a", "b"],
                 ["runs", "--json=1"], ["plugins"], ["judge", "x"], ["prices", "update"], ["--version"], []):
        assert parse(argv) is None, argv  # the full CLI: another command, help, or its own usage error


def _run(code: str, home: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code, *args], env={**asz_env(home), **(env or {})}, capture_output=True,
                          text=True, timeout=300)


def _same(a: subprocess.CompletedProcess[str], b: subprocess.CompletedProcess[str]) -> None:
    assert a.returncode == b.returncode, (a.stderr, b.stderr)
    # The very output, but for the time a round landed (two collects land at two times).
    landed = re.compile(r'"landed": "[^"]*"')
    assert landed.sub("", a.stdout) == landed.sub("", b.stdout)
    # The full CLI's rich wraps warnings to the width; the lean one writes each on one line.
    assert "".join(a.stderr.split()) == "".join(b.stderr.split())


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("lean") / "project"
    shutil.copytree(MATCH, p)
    (p / "gone.jsonl").symlink_to("/nonexistent")  # a warning on every collect
    return p


def test_collect_prints_what_the_full_cli_prints(project: Path, tmp_path: Path) -> None:
    for args in ([str(project), "--json"], [str(project), "--json", "--runtime", "claudecode"],
                 [str(tmp_path / "missing"), "--json"]):
        lean_home, full_home = tmp_path / "lean", tmp_path / "full"
        for _ in range(2):  # a first collect, then one with nothing new
            lean, full = _run(ASZ_MAIN, lean_home, "collect", *args), _run(FULL, full_home, "collect", *args)
            _same(lean, full)
        shutil.rmtree(lean_home, ignore_errors=True)
        shutil.rmtree(full_home, ignore_errors=True)


def test_collects_table_and_line_are_the_full_clis(project: Path, tmp_path: Path) -> None:
    """A collect that published rounds prints its table; one with nothing new, the line alone,
    without rich where it fits the width and through rich where it must wrap: the same bytes as
    the full CLI's rich console in each case."""
    for width in ("120", "80", "30"):
        lean_home, full_home = tmp_path / f"lean{width}", tmp_path / f"full{width}"
        for turn in range(2):
            env = {"COLUMNS": width}
            lean = _run(ASZ_MAIN, lean_home, "collect", str(project), env=env)
            full = _run(FULL, full_home, "collect", str(project), env=env)
            _same(lean, full)
            assert ("published" in lean.stdout) == (turn == 0), lean.stdout
            if turn == 1:
                line = lean.stdout.rstrip("\n")
                assert "0 new records in 0 conversations" in " ".join(line.split())
                assert ("\n" in line) == (width == "30"), line  # wrapped only where it does not fit


def test_ledger_prints_what_the_full_cli_prints(project: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert _run(ASZ_MAIN, home, "collect", str(project), "--json").returncode == 0
    cid = json.loads(_run(ASZ_MAIN, home, "ledger", "--json").stdout)["rows"][0]["key"]
    cases = [["--json"], ["--json", "--by", "model"], ["--json", "--by=day", "--tz", "UTC"], ["--json", "--by", "project"],
             ["--json", "--by", "talk"], ["--json", "--since", "2025-10-01", "--until", "2025-11-30", "--timezone", "UTC"],
             ["--json", "--project", "match", "--runtime", "claudecode"], ["--json", "--runtime", "codex"],
             [cid, "--json"], [cid[:8], "--json", "--by", "stream", "--head", "r1"], ["--json", "--since", "not a date"],
             ["no-such-conversation", "--json"], ["--json", "--prices", str(tmp_path / "no-prices.json")]]
    for args in cases:
        _same(_run(ASZ_MAIN, home, "ledger", *args), _run(FULL, home, "ledger", *args))


def test_the_hot_commands_import_no_typer_rich_or_pydantic(project: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    probe = ("import sys, atexit\n"
             "atexit.register(lambda: sys.stderr.write('HEAVY ' + ' '.join(m for m in %r if m in sys.modules) + '\\n'))\n"
             % (HEAVY,)) + ASZ_MAIN.replace("; ", "\n")
    # A first ledger prices the calls with the shipped snapshot, read lean (genai-prices' types,
    # built on pydantic, are not needed); the next reads the summaries it kept. A table needs
    # nothing of the list (plain_render draws rich's bytes); `asz runs` reads the run
    # files through the one converter (cattrs). Tables that fit are drawn without rich (plain_render).
    for args, heavy in ((["collect", str(project), "--json"], ""), (["ledger", "--json"], ""),
                        (["ledger", "--json"], ""), (["collect", str(project), "--json"], ""),
                        (["collect", str(project)], ""), (["ledger"], ""), (["ledger", "--by", "day"], ""),
                        (["conversations"], ""), (["runs"], " cattrs")):
        r = _run(probe, home, *args)
        assert r.returncode == 0, r.stderr
        assert r.stderr.splitlines()[-1].rstrip() == "HEAVY" + heavy, (args, r.stderr)
    cid = json.loads(_run(ASZ_MAIN, home, "ledger", "--json").stdout)["rows"][0]["key"]
    shown = _run(probe, home, "show", cid[:8])
    assert shown.returncode == 0 and shown.stderr.splitlines()[-1].rstrip() == "HEAVY rich", shown.stderr  # plain_render declines this one: rich draws it
    # collect's table names the rounds it published by their short ids: the store alone, not the
    # modules that assemble and price conversations
    probe2 = probe.replace(repr(HEAVY), repr(HEAVY + ("asz_core.assembly", "asz_core.ledger")))
    first = _run(probe2, tmp_path / "new-home", "collect", str(project))
    assert first.returncode == 0 and "published" in first.stdout, first.stderr
    assert first.stderr.splitlines()[-1].rstrip() == "HEAVY", first.stderr
    # The ledger of all, by day and by month in a zone off UTC (a half-hour one too), reads the
    # kept summaries alone: no conversation assembled, priced or loaded from the assembly cache.
    probe3 = probe.replace(repr(HEAVY), repr(HEAVY + ("asz_core.assembly", "asz_core.assembly_cache", "genai_prices")))
    for zone in ("America/New_York", "Asia/Kolkata"):
        for args in (["ledger", "--by", "day"], ["ledger", "--by", "month", "--json"], ["ledger", "--json"]):
            r = _run(probe3, home, *args, env={"TZ": zone})
            assert r.returncode == 0, r.stderr
            assert r.stderr.splitlines()[-1].rstrip() in ("HEAVY", "HEAVY rich"), (zone, args, r.stderr)
    # A collect of transcripts (no recorder spool) loads none of the recorder's installing
    # (subprocess, shlex, locale): where the spool is and which file is of it is asked of spool.py.
    probe4 = probe.replace(repr(HEAVY), repr(HEAVY + ("asz_adapters_claudecode.recorder", "subprocess", "shlex")))
    for args in (["collect", str(project)], ["collect", str(project), "--json"]):
        r = _run(probe4, home, *args)
        assert r.returncode == 0 and r.stderr.splitlines()[-1].rstrip() == "HEAVY", (args, r.stderr)
    full = _run(probe, home, "plugins")  # a command this path does not take: the full CLI's
    assert full.returncode == 0 and "typer" in full.stderr.splitlines()[-1]
