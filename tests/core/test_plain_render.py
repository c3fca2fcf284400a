"""The table commands drawn without rich (plain_render) print the very bytes rich prints for
them (issue 28): over the corpus, every lean table command at several widths, off a terminal and
on one (rich's SGR codes), and the plain path is taken (rich not imported) where it can be."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CLAUDE_CORPUS, need_corpus

WIDTHS = (80, 120, 160, 200)


def _rich(thing: object, width: int, terminal: bool) -> str:
    from asz_core.plain import PlainLine
    from asz_core.tables import InertText, console

    if isinstance(thing, PlainLine):  # as main prints it
        thing = InertText(thing)
    buf = io.StringIO()
    con = console(file=buf, width=width, force_terminal=terminal, color_system="standard" if terminal else None)
    con.print(thing)
    return buf.getvalue()


@pytest.fixture(scope="module")
def things(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """What each lean table command returns, over a store of the corpus."""
    need_corpus(CLAUDE_CORPUS)
    from asz_core import outputs

    home = tmp_path_factory.mktemp("plain-home")
    old = os.environ.get("ASZ_HOME")
    os.environ["ASZ_HOME"] = str(home)
    try:
        out: dict[str, object] = {}
        out["collect new"] = outputs.collect([CLAUDE_CORPUS], None, False)[1]
        out["collect nothing new"] = outputs.collect([CLAUDE_CORPUS], None, False)[1]
        out["ledger"] = outputs.ledger(None, None, None, None, None, "UTC", (), (), False, None)
        for by in ("talk", "stream", "model", "day", "month", "block", "project"):
            out[f"ledger --by {by}"] = outputs.ledger(None, None, by, None, None, "UTC", (), (), False, None)
        conv = outputs.conversations(None, None, "UTC", (), (), None, True)[-1]["id"]
        out["ledger CONV"] = outputs.ledger(conv, None, None, None, None, "UTC", (), (), False, None)
        out["ledger CONV --by day"] = outputs.ledger(conv, None, "day", None, None, "UTC", (), (), False, None)
        out["conversations"] = outputs.conversations(None, None, "UTC", (), (), None, False)
        out["conversations --wide"] = outputs.conversations(None, None, "UTC", (), (), None, False, True)
        out["show"] = outputs.show(conv, None, None, "UTC", False, False)
        out["show --talk"] = outputs.show(conv, None, "k1", "UTC", False, False)
        out["show --operations"] = outputs.show(conv, None, None, "UTC", False, True)
        out["runs"] = outputs.runs(None, "UTC", False)
        yield out
    finally:
        if old is None:
            os.environ.pop("ASZ_HOME", None)
        else:
            os.environ["ASZ_HOME"] = old


@pytest.mark.parametrize("terminal,widths", [(False, WIDTHS), (True, (80, 160))])
def test_same_bytes_as_rich(things: dict[str, object], terminal: bool, widths: tuple[int, ...]) -> None:
    from asz_core.plain_render import render

    drawn = set()
    for name, thing in things.items():
        for w in widths:
            mine = render(thing, w, terminal)
            if mine is not None:
                assert mine == _rich(thing, w, terminal), (name, w, terminal)
                drawn.add((name, w))
    for name in ("ledger", "ledger --by day", "collect new", "collect nothing new"):
        for w in (80, 160):
            assert (name, w) in drawn, f"{name} at {w} not drawn plainly"
    assert len(drawn) >= len(things) * len(widths) // 2, sorted(set(things) - {n for n, _ in drawn})


def test_terminal_codes_are_rich_s(things: dict[str, object]) -> None:
    """On a terminal the header, title, total row and notes carry codes (not the plain bytes)."""
    from asz_core.plain_render import render

    on = render(things["ledger --by day"], 160, True)
    assert on is not None and "\x1b[1m" in on and "\x1b[3m" in on and "\x1b[2m" in on
    assert on != render(things["ledger --by day"], 160, False)


def _run(args: list[str], home: str, columns: int, **env: str) -> tuple[str, bool]:
    """``asz ARGS`` as a person runs it (the lean path): what it printed, and whether rich was imported."""
    code = ("import atexit, sys\n"
            "atexit.register(lambda: sys.stderr.write('RICH' if 'rich' in sys.modules else 'NORICH'))\n"
            f"sys.argv = ['asz', *{args!r}]\n"
            "from asz_core.main import main\nmain()\n")
    e = {**os.environ, "ASZ_HOME": home, "COLUMNS": str(columns), **env}
    e.pop("FORCE_COLOR", None) if "FORCE_COLOR" not in env else None
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e, timeout=120)
    assert p.returncode in (0, 1), p.stderr
    return p.stdout, p.stderr.endswith("RICH") and not p.stderr.endswith("NORICH")


@pytest.fixture(scope="module")
def home(things: dict[str, object], tmp_path_factory: pytest.TempPathFactory) -> str:
    return os.environ.get("ASZ_HOME_PLAIN") or str(next(Path(tmp_path_factory.getbasetemp()).glob("plain-home*")))


@pytest.mark.parametrize("args", [["ledger", "--by", "day", "--tz", "UTC"], ["ledger", "--tz", "UTC"],
                                  ["collect", str(CLAUDE_CORPUS)]])
@pytest.mark.parametrize("columns", [80, 160])
def test_plain_path_taken(args: list[str], columns: int, home: str, things: dict[str, object]) -> None:
    """No rich imported, and the bytes rich prints (off a terminal and, forced, on one)."""
    out, used_rich = _run(args, home, columns)
    assert not used_rich
    key = {"ledger": "ledger --by day" if "--by" in args else "ledger", "collect": "collect nothing new"}[args[0]]
    assert out == _rich(things[key], columns, False)
    out, used_rich = _run(args, home, columns, FORCE_COLOR="1", TERM="xterm")
    assert not used_rich and out == _rich(things[key], columns, True)


def test_a_cell_that_wraps_goes_through_rich(home: str, things: dict[str, object]) -> None:
    """At 40 columns the by-day table's lines do not fit: rich draws it, the same bytes as ever."""
    from asz_core.plain_render import render

    assert render(things["ledger --by day"], 40, False) is None
    out, used_rich = _run(["ledger", "--by", "day", "--tz", "UTC"], home, 40)
    assert used_rich and out == _rich(things["ledger --by day"], 40, False)


def test_narrow_characters_are_one_cell() -> None:
    from rich.cells import cell_len

    from asz_core.doc import NARROW

    assert all(cell_len(c) == 1 for c in NARROW)
