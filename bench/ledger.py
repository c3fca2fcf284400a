"""Benchmark of `asz ledger --json`: the corpus totals, and the 90 MB conversation's per-talk ledger.

    python bench/ledger.py [--runs 7] [--corpus DIR] [--synthetic DIR]

Two inputs, each collected once into its own temporary ASZ_HOME (nothing in the repository):

* every conversation of the Claude Code corpus: `asz ledger --json` (totals per conversation);
* the synthetic ~90 MB conversation bench/make_synthetic.py builds (made into a temporary folder
  unless --synthetic names one): `asz ledger <id> --json --by talk`.

For each: the median wall time of the command as a new process (what a person waits for; it
includes starting Python and importing asz, and genai-prices when a price is computed), the median
CPU time of that process, and the median of the same work in one warm process, split into
assembly (api.load: records read from the store and assembled), the ledger (owners and per-call
prices) and the JSON. The corpus totals are timed computed (no summaries kept: every conversation
assembled and priced) and with the summaries an earlier run kept in ASZ_HOME/cache (by head,
price file and code). The targets: corpus totals under 0.3 s, the 90 MB per-talk breakdown under
1 s. Wall times on a shared machine vary with its load; the CPU times much less.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CORPUS = Path(os.environ.get("ASZ_CORPUS") or ROOT.parent / "shared" / "corpus") / "claude-code"
ASZ = Path(sys.executable).parent / "asz"


def run_cli(args: list[str], home: Path, runs: int, *, cold: bool = False) -> tuple[float, float]:
    """Median wall and CPU (user + sys) seconds of `asz ARGS` as a new process; ``cold``: with
    no summaries kept from an earlier run."""
    env = {**os.environ, "ASZ_HOME": str(home)}
    walls, cpus = [], []
    for _ in range(runs):
        if cold:
            shutil.rmtree(home / "cache", ignore_errors=True)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run([str(ASZ), *args], env=env, check=True, stdout=subprocess.DEVNULL)
        walls.append(time.perf_counter() - t)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def in_process(home: Path, conversation: str | None, runs: int) -> dict[str, float]:
    """Median seconds of each part in one warm process (modules imported, prices loaded)."""
    import orjson

    from asz_core import api, ledger_report
    from asz_core.ledger import build, load_prices, no_gc
    from asz_core.store import Store

    store = Store.open(home)
    prices = load_prices()
    names = [conversation] if conversation else [r.id for r in api.conversations(store)]
    parts: dict[str, list[float]] = {"assembly": [], "ledger": [], "json": [], "total": []}
    for _ in range(runs):
        t0 = time.perf_counter()
        with no_gc():  # as the command does (asz ledger runs without the cycle collector)
            convs = [api.load(n, store=store) for n in names]
            t1 = time.perf_counter()
            leds = [build(c, prices) for c in convs]
            t2 = time.perf_counter()
            data = ledger_report.ledger_json(leds[0], "talk") if conversation else ledger_report.all_json(leds, prices.file)
            orjson.dumps(data, option=orjson.OPT_INDENT_2)
            t3 = time.perf_counter()
        del convs, leds, data
        for k, v in (("assembly", t1 - t0), ("ledger", t2 - t1), ("json", t3 - t2), ("total", t3 - t0)):
            parts[k].append(v)
    store.close()
    return {k: statistics.median(v) for k, v in parts.items()}


def collect(paths: list[Path], home: Path) -> None:
    subprocess.run([str(ASZ), "collect", *map(str, paths), "--json"], env={**os.environ, "ASZ_HOME": str(home)},
                   check=True, capture_output=True)


def only_conversation(home: Path) -> str:
    from asz_core.store import Store

    s = Store.open(home)
    rows = s.conversations()
    s.close()
    return max(rows, key=lambda r: r.head.records if r.head else 0).id


def report(name: str, target: float, commands: list[tuple[str, float, float]], warm: dict[str, float]) -> None:
    print(f"{name}   (target {target} s)")
    for label, wall, cpu in commands:
        ok = "meets" if wall < target else "misses"
        print(f"  {label:28} wall {wall:.3f} s (median), CPU {cpu:.3f} s   {ok} the target")
    ok = "meets" if warm["total"] < target else "misses"
    print(f"  {'in a warm process':28} {warm['total']:.3f} s = assembly {warm['assembly']:.3f} + ledger {warm['ledger']:.3f} "
          f"+ json {warm['json']:.3f}   {ok} the target")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--synthetic", type=Path, help="folder holding the synthetic session (default: build one)")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="asz-bench-ledger-") as tmp:
        tmp_path = Path(tmp)
        home = tmp_path / "corpus-home"
        collect([args.corpus], home)
        cold = run_cli(["ledger", "--json"], home, args.runs, cold=True)  # nothing kept: all assembled
        warm = run_cli(["ledger", "--json"], home, args.runs)
        report(f"corpus totals: asz ledger --json ({args.corpus})", 0.3,
               [("command, computed", *cold), ("command, summaries kept", *warm)], in_process(home, None, args.runs))

        synth = args.synthetic
        if synth is None:
            synth = tmp_path / "synthetic"
            subprocess.run([sys.executable, str(HERE / "make_synthetic.py"), str(synth)], check=True, capture_output=True)
        size = sum(f.stat().st_size for f in synth.rglob("*.jsonl"))
        home2 = tmp_path / "synthetic-home"
        collect([synth], home2)
        cid = only_conversation(home2)
        first = run_cli(["ledger", cid, "--json", "--by", "talk"], home2, args.runs, cold=True)
        kept = run_cli(["ledger", cid, "--json", "--by", "talk"], home2, args.runs)
        report(f"{size / 1e6:.0f} MB conversation per talk: asz ledger {cid[:8]} --json --by talk", 1.0,
               [("command, first look at the head", *first), ("command, assembly kept", *kept)],
               in_process(home2, cid, args.runs))


if __name__ == "__main__":
    main()
