"""What a person meets every day, asz beside ccusage: every figure of issue 28's table in one
interleaved run, with the ratios and the goals beside them.

    python bench/daily.py [--runs 5] [--copies 3] [--corpus DIR] [--ccusage BIN]

The folder: the Claude Code corpus laid out as ~/.claude/projects ``--copies`` times, each copy
with its own ids (bench/vs_ccusage.py's; 3 copies: 114 files, about 95 MB), in a temporary folder.
A day's growth: the largest main-stream transcript's last 20% of lines (about 0.8 MB of a 3.5 MB
conversation) held back, then appended. ccusage always sees the whole folder.

Each run, in an order that rotates (so the machine's load falls on every contender alike):

* ccusage 20.0.24 ``daily --offline`` and ``session --json --offline``;
* over a store that holds the whole folder and has kept its ledger summaries (a person's store
  after yesterday's look): ``asz collect FOLDER`` with nothing new (the table, and ``--json``),
  ``asz ledger --by day``, ``asz ledger --json``;
* a day's growth: the store as it was before the growth (copied back, not timed), the lines
  appended, then ``asz collect FOLDER`` + ``asz ledger --by day`` (tables, as a person types them);
* a first ``asz collect FOLDER --json`` into an empty ASZ_HOME, then ``asz ledger --json``.

Printed: each command's median wall seconds (and min, median CPU seconds and peak RSS, from
wait4), ccusage's median beside it, the ratio of wall medians and the goal of issue 28, met or
MISSED; the load average before and after (on a busy machine wall time is mostly waiting: the CPU
column says what the command itself cost).
Each asz command is a fresh process of this checkout's asz, its modules compiled to bytecode first.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from vs_ccusage import Asz, find_ccusage, folder_args, measure, projects_folder  # noqa: E402

GROWTH = 0.2
"""The share of the largest conversation's lines a day adds."""


class Day:
    """A projects folder whose largest main-stream transcript can grow by its held-back lines,
    and the asz homes the daily commands run over."""

    def __init__(self, tmp: Path, corpus: Path, copies: int, asz: Asz) -> None:
        self.tmp, self.asz = tmp, asz
        self.cfg = projects_folder(corpus, tmp / "claude", copies)
        self.folder = self.cfg / "projects"
        files = [f for f in self.folder.rglob("*.jsonl")]
        self.size = sum(f.stat().st_size for f in files)
        self.files = len(files)
        main = [f for f in files if f.parent.name != "subagents"]
        self.grows = max(main, key=lambda f: f.stat().st_size)
        lines = self.grows.read_bytes().splitlines(keepends=True)
        keep = len(lines) - int(len(lines) * GROWTH)
        self.before, self.rest = b"".join(lines[:keep]), b"".join(lines[keep:])
        # The store before the growth, with its ledger summaries kept (yesterday's look) ...
        self.grows.write_bytes(self.before)
        self.base = tmp / "home-before-growth"
        asz(self.base, "collect", str(self.folder), "--json")
        asz(self.base, "ledger", "--by", "day")
        self.grows.write_bytes(self.before + self.rest)
        self.stamp = self.grows.stat().st_mtime_ns
        # ... and the store of the whole folder, looked at once.
        self.home = tmp / "home"
        asz(self.home, "collect", str(self.folder), "--json")
        asz(self.home, "ledger", "--by", "day")
        asz(self.home, "ledger", "--json")
        self.cc_env = dict(os.environ, CLAUDE_CONFIG_DIR=str(self.cfg), NO_COLOR="1")

    def grow(self) -> Path:
        """The folder as it was before the growth and a copy of the store of then; then the day's
        lines appended (the file's time set back to the whole folder's, so the other store finds
        it unchanged). Returns that store's home."""
        home = self.tmp / "home-growing"
        shutil.rmtree(home, ignore_errors=True)
        shutil.copytree(self.base, home)
        self.grows.write_bytes(self.before)
        with open(self.grows, "ab") as fh:
            fh.write(self.rest)
        os.utime(self.grows, ns=(self.stamp, self.stamp))
        # The copy on disk before the collect: else its commit's fsync waits for the whole copy
        # to be written back (1.6 GB of a 1 GB history's store: half a second no person waits).
        os.sync()
        return home


class Figures:
    def __init__(self) -> None:
        self.wall: dict[str, list[float]] = {}
        self.cpu: dict[str, list[float]] = {}
        self.rss: dict[str, list[float]] = {}

    def note(self, key: str, wall: float, cpu: float, mb: float) -> None:
        self.wall.setdefault(key, []).append(wall)
        self.cpu.setdefault(key, []).append(cpu)
        self.rss.setdefault(key, []).append(mb)

    def med(self, key: str) -> float | None:
        return statistics.median(self.wall[key]) if key in self.wall else None


def jobs(day: Day, ccusage: Path | None, fig: Figures, prefix: str = "") -> list[Callable[[int], None]]:
    """The day's commands, one job each (a job is run once per run, in rotating order)."""
    asz, folder = day.asz, str(day.folder)

    def a(home: Path, *args: str) -> tuple[float, float, float, bytes]:
        return measure(asz.command(*args), dict(asz.env, ASZ_HOME=str(home)))

    def cc(i: int) -> None:
        for name, args in (("ccusage daily", ["daily", "--offline"]),
                           ("ccusage session --json", ["session", "--json", "--offline"])):
            fig.note(prefix + name, *measure([str(ccusage), *args], day.cc_env)[:3])

    def settled(i: int) -> None:
        for name, args in (("asz collect, nothing new", ["collect", folder]),
                           ("asz collect --json, nothing new", ["collect", folder, "--json"]),
                           ("asz ledger --by day", ["ledger", "--by", "day"]),
                           ("asz ledger --json", ["ledger", "--json"])):
            fig.note(prefix + name, *a(day.home, *args)[:3])

    def growth(i: int) -> None:
        home = day.grow()
        w1, c1, m1, out = a(home, "collect", folder)
        assert b"1 file read" in out, out
        w2, c2, m2, _ = a(home, "ledger", "--by", "day")
        fig.note(prefix + "growth: asz collect", w1, c1, m1)
        fig.note(prefix + "growth: asz ledger --by day", w2, c2, m2)
        fig.note(prefix + "growth: asz collect + ledger --by day", w1 + w2, c1 + c2, max(m1, m2))

    def first(i: int) -> None:
        home = day.tmp / f"home-first-{i}"
        w1, c1, m1, _ = a(home, "collect", folder, "--json")
        w2, c2, m2, _ = a(home, "ledger", "--json")
        fig.note(prefix + "first asz collect", w1, c1, m1)
        fig.note(prefix + "first asz collect + ledger", w1 + w2, c1 + c2, max(m1, m2))
        shutil.rmtree(home)

    return ([cc] if ccusage else []) + [settled, growth, first]


# (asz figure, ccusage figure it is compared with or None, goal: a ratio, or seconds when no ccusage figure)
TABLE = (
    ("asz collect, nothing new", None, 0.12),
    ("asz collect --json, nothing new", None, None),
    ("asz ledger --by day", "ccusage daily", 0.5),
    ("asz ledger --json", "ccusage session --json", 0.3),
    ("growth: asz collect + ledger --by day", "ccusage daily", 0.5),
    ("growth: asz collect", None, None),
    ("growth: asz ledger --by day", None, None),
    ("first asz collect + ledger", "ccusage session --json", 3.0),
    ("first asz collect", None, None),
    ("ccusage daily", None, None),
    ("ccusage session --json", None, None),
)


def report(fig: Figures, table=TABLE, prefix: str = "") -> None:  # type: ignore[no-untyped-def]
    width = max(len(k) for k, _, _ in table) + len(prefix)
    print(f"\n{'':{width}}  {'median s':>8}  {'min s':>6}  {'cpu s':>6}  {'peak MB':>7}  {'vs (median)':>28}  {'ratio':>6}  goal")
    for key, versus, goal in table:
        med = fig.med(prefix + key)
        if med is None:
            continue
        cc = fig.med(prefix + versus) if versus else None
        ratio = f"{med / cc:6.2f}" if cc else f"{'':6}"
        said = ""
        if goal is not None and versus is None:
            said = f"<= {goal} s: {'met' if med <= goal else 'MISSED'}"
        elif goal is not None and cc:
            said = f"<= {goal}x: {'met' if med / cc <= goal else 'MISSED'}"
        vs = f"{versus} {cc:.3f} s" if cc else ""
        print(f"{prefix + key:{width}}  {med:8.3f}  {min(fig.wall[prefix + key]):6.3f}  "
              f"{statistics.median(fig.cpu[prefix + key]):6.3f}  {statistics.median(fig.rss[prefix + key]):7.1f}  "
              f"{vs:>28}  {ratio}  {said}")


def rotate(work: list[Callable[[int], None]], runs: int) -> None:
    for i in range(runs):
        k = i % len(work)
        for job in work[k:] + work[:k]:
            job(i)


def main() -> None:
    ap = folder_args(__doc__)
    args = ap.parse_args()
    ccusage = find_ccusage(args.ccusage)
    asz = Asz("asz", None)
    with tempfile.TemporaryDirectory(prefix="asz-daily-") as tmp:
        day = Day(Path(tmp), args.corpus, args.copies, asz)
        print(f"folder: {day.files} files, {day.size / 1e6:.1f} MB ({args.copies} copies of {args.corpus}); the day's "
              f"growth: {len(day.rest) / 1e6:.2f} MB appended to {day.grows.name} "
              f"({(len(day.before) + len(day.rest)) / 1e6:.2f} MB then)")
        print(f"ccusage: {ccusage or 'not found: asz figures only'}; python {sys.executable}")
        print(f"{args.runs} runs, interleaved; load average before {os.getloadavg()[0]:.2f}; {os.cpu_count()} cpus")
        fig = Figures()
        rotate(jobs(day, ccusage, fig), args.runs)
        print(f"load average after {os.getloadavg()[0]:.2f}")
    report(fig)


if __name__ == "__main__":
    main()
