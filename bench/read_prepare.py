"""What reading costs before the store: an adapter's ``read`` of every file, and ``store.prepare``
of every entry it gave (read + prepare, less the read), in this process (a script that prints figures).

    python bench/read_prepare.py [PATH] [-n 5] [--runtime claudecode] [--profile OUT]

PATH defaults to /tmp/s21/projects (the benchmark projects folder). Prints the medians (min, max)
of ``-n`` repeats of CPU seconds (user + system) and wall seconds for each half, with the load
average beside them. ``--profile OUT`` writes a cProfile of one more repeat of both halves.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path
from typing import Any

from asz_core.registry import Registry
from asz_core.records import Cursor, Entry
from asz_core.store import prepare


def once(adapter: Any, files: list[Path]) -> tuple[float, float, float, float, int]:
    """(read CPU, read wall, prepare CPU, prepare wall, entries). Each entry is dropped once
    handled, as collect does (holding them all would make the collector's passes the cost
    measured): the read is timed alone, and prepare as what read + prepare costs more."""
    n = 0
    c0, w0 = time.process_time(), time.perf_counter()
    for f in files:
        for e in adapter.read(f, Cursor()):
            n += 1
    c1, w1 = time.process_time(), time.perf_counter()
    for f in files:
        for e in adapter.read(f, Cursor()):
            if type(e) is Entry:
                prepare(e)
    c2, w2 = time.process_time(), time.perf_counter()
    return c1 - c0, w1 - w0, (c2 - c1) - (c1 - c0), (w2 - w1) - (w1 - w0), n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("path", nargs="?", type=Path, default=Path("/tmp/s21/projects"))
    ap.add_argument("-n", type=int, default=5)
    ap.add_argument("--runtime", default="claudecode")
    ap.add_argument("--profile", type=Path)
    a = ap.parse_args()
    adapter = Registry().runtime(a.runtime)
    files = adapter.files(a.path)
    runs = [once(adapter, files) for _ in range(a.n)]
    n = runs[0][4]
    print(f"{a.path}: {len(files)} files, {n} items read (entries and warnings); load average {os.getloadavg()[0]:.2f}")
    for i, name in enumerate(("read CPU", "read wall", "prepare CPU", "prepare wall")):
        vals = [r[i] for r in runs]
        print(f"  {name:13} median {statistics.median(vals):.3f} s  (min {min(vals):.3f}, max {max(vals):.3f})")
    if a.profile:
        import cProfile

        cProfile.runctx("once(adapter, files)", globals(), {"adapter": adapter, "files": files}, str(a.profile))
        print(f"profile written to {a.profile}")


if __name__ == "__main__":
    main()
