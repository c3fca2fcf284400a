"""A history ten times larger: asz and ccusage on a 1 GB projects folder beside the 95 MB one.

    python bench/history.py [--runs 3] [--copies 32] [--base-copies 3] [--corpus DIR] [--ccusage BIN]

Two folders, each the Claude Code corpus laid out ``--copies`` times with new ids (bench/vs_ccusage.py's):
``--base-copies`` 3 (114 files, 95 MB) and ``--copies`` 32 (about 1 GB). In each, a day's growth
is bench/daily.py's: the largest main-stream transcript's last 20% of lines appended (0.8 MB).

Each run, the two folders' jobs in rotating order, each job bench/daily.py's: ccusage ``daily``
and ``session --json``; over the collected store, ``asz collect`` with nothing new and ``asz ledger
--by day``/``--json``; the day's growth (``asz collect`` + ``asz ledger --by day`` over the store
as it was before it); a first ``asz collect --json`` + ``asz ledger --json`` into an empty home.

Printed: bench/daily.py's table for each folder, then issue 28's goals for the larger one:
first collect's time <= 11x the 95 MB one's and its peak memory <= 150 MB; the day's growth the
same as at 95 MB (within noise) while ccusage's ``daily`` grows about tenfold; ``asz ledger --by
day`` <= 0.1x ``ccusage daily``.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from daily import Day, Figures, jobs, report, rotate  # noqa: E402
from vs_ccusage import Asz, find_ccusage, folder_args  # noqa: E402


def main() -> None:
    ap = folder_args(__doc__)
    ap.set_defaults(runs=3, copies=32)
    ap.add_argument("--base-copies", type=int, default=3)
    args = ap.parse_args()
    ccusage = find_ccusage(args.ccusage)
    asz = Asz("asz", None)
    fig = Figures()
    with tempfile.TemporaryDirectory(prefix="asz-history-") as tmp:
        days = {}
        for label, copies in (("small", args.base_copies), ("large", args.copies)):
            (Path(tmp) / label).mkdir()
            day = days[label] = Day(Path(tmp) / label, args.corpus, copies, asz)
            print(f"{label}: {day.files} files, {day.size / 1e6:.1f} MB ({copies} copies); the day's growth "
                  f"{len(day.rest) / 1e6:.2f} MB appended to one {(len(day.before) + len(day.rest)) / 1e6:.2f} MB conversation")
        print(f"ccusage: {ccusage or 'not found: asz figures only'}; python {sys.executable}")
        print(f"{args.runs} runs, interleaved; load average before {os.getloadavg()[0]:.2f}; {os.cpu_count()} cpus")
        work = [j for label, day in days.items() for j in jobs(day, ccusage, fig, prefix=f"{label}: ")]
        rotate(work, args.runs)
        print(f"load average after {os.getloadavg()[0]:.2f}")
        sizes = {label: day.size for label, day in days.items()}
    for label in days:
        print(f"\n{label} folder, {sizes[label] / 1e6:.0f} MB:", end="")
        report(fig, prefix=f"{label}: ")

    def med(key: str) -> float | None:
        return fig.med(key)

    def peak(key: str) -> float:
        return statistics.median(fig.rss[key])

    print(f"\ngoals, {sizes['large'] / 1e6:.0f} MB against {sizes['small'] / 1e6:.0f} MB (x{sizes['large'] / sizes['small']:.1f} the bytes):")
    small, large = med("small: first asz collect"), med("large: first asz collect")
    if small and large:
        r = large / small
        print(f"  first collect: {large:.2f} s, {r:.1f}x the smaller's {small:.2f} s (goal <= 11x: {'met' if r <= 11 else 'MISSED'}); "
              f"peak memory {peak('large: first asz collect'):.0f} MB (goal <= 150 MB: "
              f"{'met' if peak('large: first asz collect') <= 150 else 'MISSED'})")
    small, large = med("small: growth: asz collect + ledger --by day"), med("large: growth: asz collect + ledger --by day")
    if small and large:
        cs, cl = med("small: ccusage daily"), med("large: ccusage daily")
        cc = f"; ccusage daily {cs:.2f} s -> {cl:.2f} s ({cl / cs:.1f}x)" if cs and cl else ""
        print(f"  a day's growth (collect + ledger --by day): {small:.3f} s -> {large:.3f} s ({large / small:.2f}x; goal: "
              f"the same within noise){cc}")
    day_large, cl = med("large: asz ledger --by day"), med("large: ccusage daily")
    if day_large and cl:
        r = day_large / cl
        print(f"  asz ledger --by day {day_large:.3f} s against ccusage daily {cl:.3f} s: {r:.2f}x "
              f"(goal <= 0.1x: {'met' if r <= 0.1 else 'MISSED'})")


if __name__ == "__main__":
    main()
