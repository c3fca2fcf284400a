"""The lean entry point (main.py) prints the daily commands' tables byte for byte as the full CLI
(typer) does, over the whole corpus (every runtime): `asz collect` (a first collect and one with
nothing new), `asz ledger` of all and of each conversation (every --by, spans, filters),
`asz conversations`, `asz show` (talks, a talk's outline, file operations) and `asz runs`, at a
narrow and a wide terminal, and their errors alike. (Their JSON: test_lean_cli.py.)"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import ASZ_MAIN, CORPUS, asz_env

FULL = "import sys; from asz_core.cli import main; sys.argv[0] = 'asz'; main()"
WIDTHS = ("80", "400")


def _run(code: str, home: Path, args: list[str], columns: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code, *args], env=asz_env(home, COLUMNS=columns), capture_output=True,
                          text=True, timeout=300)


def _same(home: Path, args: list[str], columns: str = "80") -> str:
    lean, full = _run(ASZ_MAIN, home, args, columns), _run(FULL, home, args, columns)
    assert lean.returncode == full.returncode, (args, lean.stderr, full.stderr)
    assert lean.stdout == full.stdout, args
    # The full CLI's rich wraps an error or a warning to the width; the lean one writes each on one line.
    assert "".join(lean.stderr.split()) == "".join(full.stderr.split()), args
    return lean.stdout


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    """Every runtime's corpus collected, the first collect's table and the one with nothing new
    compared on the way (into two homes, one per entry point: the same rounds, the same heads)."""
    from tests.conftest import need_corpus

    need_corpus(CORPUS / "claude-code")
    base = tmp_path_factory.mktemp("lean-tables")
    src = base / "corpus"
    for runtime in ("claude-code", "codex", "kiro", "langsmith"):
        if (CORPUS / runtime).is_dir():
            shutil.copytree(CORPUS / runtime, src / runtime)
    (src / "claude-code" / "gone.jsonl").symlink_to("/nonexistent")  # a warning on every collect
    homes = base / "lean", base / "full"
    for _ in range(2):  # a first collect, then one with nothing new
        outs = [_run(code, h, ["collect", str(src)], "80") for code, h in zip((ASZ_MAIN, FULL), homes)]
        assert outs[0].returncode == outs[1].returncode == 0, outs[0].stderr
        assert outs[0].stdout == outs[1].stdout
        assert "warning" in outs[0].stderr and "".join(outs[0].stderr.split()) == "".join(outs[1].stderr.split())
    assert "published" not in outs[0].stdout and "0 new records" in outs[0].stdout
    rows = json.loads(_run(ASZ_MAIN, homes[0], ["ledger", "--json"], "80").stdout)["rows"]
    assert len({r["runtime"] for r in rows}) >= 3
    return homes[0], rows


def test_the_ledger_tables_are_the_full_clis(home: tuple[Path, list[dict]]) -> None:
    h, rows = home
    for columns in WIDTHS:
        for by in (None, "talk", "stream", "model", "day", "month", "block", "project"):
            args = ["ledger"] + (["--by", by] if by else [])
            out = _same(h, args, columns)
            assert "prices:" in out
            for extra in (["--timezone", "Asia/Kolkata"], ["--since", "2025-06-01", "--until", "2026-01-31", "--tz", "UTC"],
                          ["--runtime", "codex", "--runtime", "kiro"], ["--project", "match"]):
                _same(h, args + extra, columns)
    each = {r["runtime"]: r["key"] for r in rows}  # one conversation of each runtime: every cut of its ledger
    for cid in each.values():
        for by in ("stream", "model", "day", "month"):
            _same(h, ["ledger", cid[:12], "--by", by], "120")
    for r in rows:  # every conversation's own ledger
        _same(h, ["ledger", r["key"]], "120")
    _same(h, ["ledger", rows[0]["key"], "--head", "r1", "--by", "stream"])
    _same(h, ["ledger", "no-such-conversation"])  # an error, said alike
    _same(h, ["ledger", rows[0]["key"], "--by", "block"])  # a usage error, the full CLI's
    _same(h, ["ledger", "--since", "not a date"])


def test_conversations_show_and_runs_are_the_full_clis(home: tuple[Path, list[dict]]) -> None:
    h, rows = home
    for columns in WIDTHS:
        listing = _same(h, ["conversations"], columns)
        assert rows[0]["key"][:8] in listing
        for extra in (["--last", "3"], ["-n", "0"], ["--wide"], ["-w", "-n", "2"], ["--tz", "Pacific/Chatham"], ["--since", "2025-09-01", "--runtime", "claudecode"],
                      ["--project", "no such project"]):
            _same(h, ["conversations", *extra], columns)
    for r in rows:
        shown = _same(h, ["show", r["key"][:12], "--tz", "UTC"], "160")
        assert r["key"] in shown
    for cid in {r["runtime"]: r["key"] for r in rows}.values():
        _same(h, ["show", cid, "--operations"], "160")
    some = rows[0]["key"]
    for columns in WIDTHS:
        _same(h, ["show", some, "--timezone", "Europe/Paris"], columns)
        _same(h, ["show", some, "-k", "k1"], columns)
        _same(h, ["show", some, "--talk", "loose"], columns)
    _same(h, ["show", some, "--talk", "k9999"])  # errors
    _same(h, ["show", "zzzz-no-such"])
    assert "no runs yet" in _same(h, ["runs"])
    _same(h, ["runs", some[:8]])
    _same(h, ["runs", "zzzz-no-such"])
