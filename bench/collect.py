"""Collect benchmark: prints figures (a script, not a timed test).

    python bench/collect.py [-n 5] [--n-synthetic 3] [--corpus DIR] [--synthetic DIR] [--skip-synthetic]

Measures, each in a fresh subprocess (so peak RSS is that measurement's own, read with
``os.wait4``) with ASZ_HOME in a fresh temporary folder:

* corpus, first collect into an empty store: seconds, MB/s, peak RSS, and the CPU time of
  collect's own process (the writing, while a reader process, when forked, reads);
* corpus, collect again with nothing new: seconds (in the process, and the whole ``asz collect``
  command from start to exit);
* synthetic conversation (bench/make_synthetic.py, built first when missing), first collect:
  seconds, MB/s, peak RSS;
* assembling it (``asz_core.api.load``): seconds, peak RSS.

Prints the median (and min, max) of the repeats, as wall seconds and as CPU seconds of the
measured call (user + system, collect's reader process included; steadier when other work shares the machine). MB is 10^6 bytes. Files are read where they
lie (the corpus is never copied); after the first repeat they are in the page cache.
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
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
CORPUS = Path("/work/shared/corpus/claude-code")
SYNTHETIC = HERE / "out"

TARGET_MBS = 50.0
TARGET_RSS_MB = 500.0
TARGET_NOTHING_NEW_S = 1.0


# --- worker (runs in the subprocess) -------------------------------------------------------

def _worker(mode: str, path: str, out: str) -> None:
    import resource

    def own() -> float:
        ru = resource.getrusage(resource.RUSAGE_SELF)
        return ru.ru_utime + ru.ru_stime

    def cpu() -> float:
        # This process and the children it waited for (collect's reader process, once it ended).
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        return own() + ru.ru_utime + ru.ru_stime

    t0 = time.perf_counter()
    from asz_core.store import Store
    res: dict[str, Any] = {}
    if mode == "noop":
        import asz_core.api  # noqa: F401  (what every measurement pays before it starts)
    elif mode == "collect":
        from asz_core.api import collect_paths
        c1, o1, t1 = cpu(), own(), time.perf_counter()
        store = Store.open()
        r = collect_paths([Path(path)], store=store)
        res = {"seconds": time.perf_counter() - t1, "cpu": cpu() - c1, "own_cpu": own() - o1, "bytes": r.bytes_read,
               "files_read": r.files_read,
               "files_unchanged": r.files_unchanged, "records": r.records_published, "problems": len(r.problems)}
        store.close()
    elif mode == "load":
        from asz_core.api import conversations, load
        store = Store.open()
        rows = conversations(store)
        cid = max(rows, key=lambda c: c.head.records if c.head else 0).id
        c1, t1 = cpu(), time.perf_counter()
        conv = load(cid, store=store)
        res = {"seconds": time.perf_counter() - t1, "cpu": cpu() - c1, "steps": len(conv.steps), "talks": len(conv.talks),
               "streams": len(conv.streams)}
    res["process_s"] = time.perf_counter() - t0
    res["self_maxrss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    Path(out).write_bytes(orjson.dumps(res))


# --- driver --------------------------------------------------------------------------------

def _run(argv: list[str], home: Path, *, worker: bool = True) -> tuple[dict[str, Any], float, float]:
    """Run one measurement process: (its report, wall seconds, its peak RSS in MB from wait4)."""
    fd, out = tempfile.mkstemp(prefix="asz-bench-", suffix=".json")
    os.close(fd)
    env = dict(os.environ, ASZ_HOME=str(home))
    try:
        t = time.perf_counter()
        p = subprocess.Popen([*argv, out] if worker else argv, env=env,
                             stdout=None if worker else subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            raise SystemExit(f"measurement failed ({p.returncode}): {' '.join(argv)}")
        rep = orjson.loads(Path(out).read_bytes()) if worker else {}
    finally:
        os.unlink(out)
    return rep, wall, ru.ru_maxrss / 1024  # ru_maxrss is in KiB on Linux


def _me(mode: str, path: Path) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "--worker", mode, str(path)]


def _asz_cli() -> str | None:
    cand = Path(sys.executable).parent / "asz"
    return str(cand) if cand.exists() else shutil.which("asz")


def _tree_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*.jsonl"))


class Rows:
    def __init__(self) -> None:
        self.rows: list[tuple[str, str, list[float], str]] = []

    def add(self, name: str, unit: str, values: list[float], target: str = "") -> None:
        self.rows.append((name, unit, values, target))

    def print(self) -> None:
        head = ("measurement", "median", "min", "max", "unit", "target")
        lines = [head]
        for name, unit, vals, target in self.rows:
            fmt = "{:.3f}" if unit == "s" else "{:.1f}"
            lines.append((name, fmt.format(statistics.median(vals)), fmt.format(min(vals)), fmt.format(max(vals)), unit, target))
        w = [max(len(r[i]) for r in lines) for i in range(len(head))]
        for i, r in enumerate(lines):
            print("  ".join(c.ljust(w[j]) if j in (0, 4, 5) else c.rjust(w[j]) for j, c in enumerate(r)))
            if i == 0:
                print("  ".join("-" * x for x in w))


def _verdict(value: float, limit: float, above: bool) -> str:
    ok = value >= limit if above else value < limit
    return ("met" if ok else "MISSED") + f" ({'>=' if above else '<'} {limit:g})"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=5, help="repeats for the corpus (default 5)")
    ap.add_argument("--n-synthetic", type=int, default=3, help="repeats for the synthetic conversation (default 3)")
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--synthetic", type=Path, default=SYNTHETIC, help="folder bench/make_synthetic.py wrote (default bench/out)")
    ap.add_argument("--skip-synthetic", action="store_true")
    ap.add_argument("--worker", nargs=3, metavar=("MODE", "PATH", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        _worker(*args.worker)
        return

    tmp = Path(tempfile.mkdtemp(prefix="asz-bench-"))
    rows = Rows()
    try:
        corpus_mb = _tree_bytes(args.corpus) / 1e6
        print(f"load average at start {os.getloadavg()[0]:.1f} (wall times are only fair near 0; CPU times less sensitive)")
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus; corpus {args.corpus} ({corpus_mb:.1f} MB)")
        base = [_run(_me("noop", args.corpus), tmp / "noop")[2] for _ in range(3)]
        rows.add("baseline: python + asz imports, peak RSS", "MB", base)

        first_own: list[float] = []
        first_s, first_cpu, first_mbs, first_rss, again_s, again_wall, cli_wall = [], [], [], [], [], [], []
        cli = _asz_cli()
        for i in range(args.n):
            home = tmp / f"corpus-{i}"
            rep, _, rss = _run(_me("collect", args.corpus), home)
            first_s.append(rep["seconds"])
            first_cpu.append(rep["cpu"])
            first_own.append(rep["own_cpu"])
            first_mbs.append(rep["bytes"] / 1e6 / rep["seconds"])
            first_rss.append(rss)
            rep2, wall2, _ = _run(_me("collect", args.corpus), home)
            assert rep2["files_read"] == 0 and rep2["records"] == 0, rep2
            again_s.append(rep2["seconds"])
            again_wall.append(wall2)
            if cli:
                _, wall3, _ = _run([cli, "collect", str(args.corpus), "--json"], home, worker=False)
                cli_wall.append(wall3)
            shutil.rmtree(home)
        corpus_read = rep["bytes"] / 1e6
        print(f"corpus: {rep['files_read']} files, {rep['bytes'] / 1e6:.1f} MB, {rep['records']} records")
        rows.add("corpus first collect", "s", first_s)
        rows.add("corpus first collect", "MB/s", first_mbs, _verdict(statistics.median(first_mbs), TARGET_MBS, True))
        rows.add("corpus first collect, CPU time", "s", first_cpu)
        rows.add("corpus first collect, CPU time of collect's own process", "s", first_own)
        rows.add("corpus first collect, MB per CPU second", "MB/s", [corpus_read / c for c in first_cpu])
        rows.add("corpus first collect, peak RSS", "MB", first_rss)
        rows.add("corpus nothing new (in process)", "s", again_s, _verdict(statistics.median(again_s), TARGET_NOTHING_NEW_S, False))
        rows.add("corpus nothing new (process wall)", "s", again_wall)
        if cli_wall:
            rows.add("corpus nothing new (`asz collect` wall)", "s", cli_wall,
                     _verdict(statistics.median(cli_wall), TARGET_NOTHING_NEW_S, False))

        if not args.skip_synthetic:
            syn = args.synthetic
            if not any(syn.glob("*.jsonl")):
                print(f"building the synthetic conversation in {syn} ...", flush=True)
                subprocess.run([sys.executable, str(HERE / "make_synthetic.py"), str(syn)], check=True)
            s_s, s_cpu, s_mbs, s_rss, l_s, l_cpu, l_rss = [], [], [], [], [], [], []
            for i in range(args.n_synthetic):
                home = tmp / f"synthetic-{i}"
                rep, _, rss = _run(_me("collect", syn), home)
                s_s.append(rep["seconds"])
                s_cpu.append(rep["cpu"])
                s_mbs.append(rep["bytes"] / 1e6 / rep["seconds"])
                s_rss.append(rss)
                lrep, _, lrss = _run(_me("load", syn), home)
                l_s.append(lrep["seconds"])
                l_cpu.append(lrep["cpu"])
                l_rss.append(lrss)
                shutil.rmtree(home)
            print(f"synthetic: {rep['files_read']} files, {rep['bytes'] / 1e6:.1f} MB, {rep['records']} records; "
                  f"{lrep['steps']} steps, {lrep['talks']} talks, {lrep['streams']} streams")
            rows.add("synthetic first collect", "s", s_s)
            rows.add("synthetic first collect", "MB/s", s_mbs, _verdict(statistics.median(s_mbs), TARGET_MBS, True))
            rows.add("synthetic first collect, CPU time", "s", s_cpu)
            rows.add("synthetic first collect, MB per CPU second", "MB/s", [rep["bytes"] / 1e6 / c for c in s_cpu])
            rows.add("synthetic first collect, peak RSS", "MB", s_rss, _verdict(statistics.median(s_rss), TARGET_RSS_MB, False))
            rows.add("synthetic load (assemble)", "s", l_s)
            rows.add("synthetic load (assemble), CPU time", "s", l_cpu)
            rows.add("synthetic load, peak RSS", "MB", l_rss, _verdict(statistics.median(l_rss), TARGET_RSS_MB, False))
        print(f"load average at end {os.getloadavg()[0]:.1f}")
        print()
        rows.print()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
