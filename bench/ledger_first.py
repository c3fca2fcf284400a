"""Where the first `asz ledger --json` after a collect spends its time, part by part.

    python bench/ledger_first.py --home DIR [--runs 5]

DIR is a collected ASZ_HOME (e.g. one `bench/vs_ccusage.py`'s folder was collected into); each
run works on a fresh copy of its store, so nothing is kept from an earlier run. Printed: the
median CPU seconds (this process, one CPU: no forked child) of each part of computing every
conversation's summary: importing the command's modules, loading the prices, reading the records
back (``Store.records(lean=True)``), the lean view (``assembly.calls_of``), pricing and counting
(``ledger.summary_of``); then the command itself as a new process, wall and CPU (its forked child
included), medians. CPU times vary less than wall times on a shared machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PARTS = r"""
import time, gc, json, sys
t = time.process_time()
from asz_core import conversations, ledger_data  # what `asz ledger --json` imports
from asz_core.assembly import calls_of
from asz_core.ledger import _summary_dump, load_prices, summary_of
from asz_core.store import Store
out = {"imports": time.process_time() - t}
t = time.process_time(); book = load_prices(None); out["prices"] = time.process_time() - t
st = Store.open()
rows = [r for r in st.conversations() if r.head is not None]
gc.disable()
for k in ("records", "lean view", "summaries"):
    out[k] = 0.0
for r in rows:
    a = time.process_time(); recs = st.records(r.id, r.head.number, lean=True); copies = st.copied_calls(r.id)
    b = time.process_time(); view = calls_of(r.id, r.runtime, r.head, recs, copies)
    c = time.process_time(); _summary_dump(summary_of(view, book))
    d = time.process_time()
    out["records"] += b - a; out["lean view"] += c - b; out["summaries"] += d - c
out["conversations"] = len(rows); out["records read"] = sum(r.head.records for r in rows)
print(json.dumps(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", type=Path, required=True, help="a collected ASZ_HOME (its asz.db is copied for each run)")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    db = args.home / "asz.db"
    if not db.is_file():
        raise SystemExit(f"no store at {db}")
    parts: list[dict[str, float]] = []
    walls: list[float] = []
    cpus: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        for _ in range(args.runs):
            for name in os.listdir(home):
                os.unlink(home / name) if (home / name).is_file() else shutil.rmtree(home / name)
            shutil.copyfile(db, home / "asz.db")
            env = dict(os.environ, ASZ_HOME=str(home))
            r = subprocess.run([sys.executable, "-c", PARTS], env=env, capture_output=True, text=True, check=True)
            parts.append(__import__("json").loads(r.stdout))
            for name in os.listdir(home):  # the store again as collected: no cache, no journal of the run before
                os.unlink(home / name) if (home / name).is_file() else shutil.rmtree(home / name)
            shutil.copyfile(db, home / "asz.db")
            t0, c0 = time.perf_counter(), os.times()
            subprocess.run([sys.executable, "-c", "import sys; sys.argv[0] = 'asz'\nfrom asz_core.main import main\nmain()",
                            "ledger", "--json"], env=env, capture_output=True, check=True)
            c1 = os.times()
            walls.append(time.perf_counter() - t0)
            cpus.append((c1.children_user - c0.children_user) + (c1.children_system - c0.children_system))
    p0 = parts[0]
    print(f"{p0['conversations']} conversations, {p0['records read']} records; medians of {args.runs}, "
          f"load average {os.getloadavg()[0]:.1f}")
    for k in ("imports", "prices", "records", "lean view", "summaries"):
        print(f"  {k:<10} {statistics.median(p[k] for p in parts):.3f} s CPU")
    print(f"  {'all':<10} {statistics.median(sum(p[k] for k in ('imports', 'prices', 'records', 'lean view', 'summaries')) for p in parts):.3f} s CPU")
    print(f"`asz ledger --json` as a command: {statistics.median(walls):.3f} s wall, {statistics.median(cpus):.3f} s CPU")


if __name__ == "__main__":
    main()
