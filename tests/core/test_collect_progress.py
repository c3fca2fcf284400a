"""collect's progress bar is drawn only once a collect has run a while: a day's collect (a few
tenths of a second) shows no bar and needs no rich; a long one shows it as before."""

from __future__ import annotations

import io
import time

from asz_core.collect_report import late_progress_bar
from asz_core.tables import console


def _terminal() -> tuple[object, io.StringIO]:
    buf = io.StringIO()
    return console(file=buf, force_terminal=True, width=80), buf


def test_a_short_collect_draws_no_bar_and_makes_no_console() -> None:
    made: list[object] = []

    def make() -> object:
        made.append(1)
        return _terminal()[0]

    with late_progress_bar(make, after=60) as update:
        for i in range(50):
            update(i * 1000, 50_000, f"f{i}.jsonl")
    assert made == []


def test_a_long_collect_draws_its_bar() -> None:
    con, buf = _terminal()
    with late_progress_bar(lambda: con, after=0.05) as update:
        update(0, 10_000_000, "a.jsonl")  # before the wait: nothing drawn
        time.sleep(0.1)
        update(5_000_000, 10_000_000, "b.jsonl")
        update(10_000_000, 10_000_000, "c.jsonl")
    out = buf.getvalue()
    assert "collect" in out and "10.0 MB" in out, out


def test_a_long_collect_to_no_terminal_makes_no_console(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Output to a file or a pipe (a test's, a script's): however long the collect, no bar, and no
    rich console made to find that out (test_lean_cli's import check failed when a loaded machine
    made its collect pass the bar's quarter second)."""
    import subprocess
    import sys

    from asz_core.collect_report import could_be_a_terminal

    for name in ("TTY_COMPATIBLE", "FORCE_COLOR", "FORCE_TERMINAL", "TTY_INTERACTIVE"):
        monkeypatch.delenv(name, raising=False)
    made: list[object] = []

    def make() -> object:
        made.append(1)
        return _terminal()[0]

    with late_progress_bar(make, after=0.0, terminal=lambda: False) as update:
        time.sleep(0.01)
        update(5_000_000, 10_000_000, "b.jsonl")
    assert made == []
    probe = "import sys; from asz_core.collect_report import could_be_a_terminal as c; sys.stdout.write(str(c()))"
    piped = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    assert piped.stdout == "False", piped.stderr
    forced = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env={"FORCE_COLOR": "1"})
    assert forced.stdout == "True"
    assert isinstance(could_be_a_terminal(), bool)
    # asz collect itself, its bar due at once, its output a pipe: no rich imported
    from pathlib import Path

    example = Path(__file__).resolve().parents[2] / "examples" / "claude-code"
    run = ("import sys, atexit; import asz_core.collect_report as c; c.BAR_AFTER = 0.0\n"
           "atexit.register(lambda: sys.stderr.write('RICH %s\\n' % ('rich' in sys.modules)))\n"
           "from asz_core.main import main; sys.argv[0] = 'asz'; main()")
    r = subprocess.run([sys.executable, "-c", run, "collect", str(example)], capture_output=True, text=True,
                       env={"PATH": "/usr/bin:/bin", "ASZ_HOME": str(tmp_path / "home")})
    assert r.returncode == 0 and "published" in r.stdout and r.stderr.splitlines()[-1] == "RICH False", r.stderr
