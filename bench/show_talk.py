"""Benchmark of ``asz show CONV --talk K`` on the synthetic ~90 MB conversation: the talk's
outline read from the assembly cache ``asz show`` keeps (today's path) against the conversation
assembled again from the store (``window.build``, the path before).

    python bench/show_talk.py [-n 5] [--synthetic DIR] [--talk k3]

The synthetic conversation (bench/make_synthetic.py; made into DIR when missing, default
bench/out/) is collected once into a temporary ASZ_HOME and shown once (which keeps its
assembly). Then, in a fresh process each time, alternating: the two ways of making the window
(``window.whole`` vs ``window.build``), the outline, the ledger and the rendered text, timed
inside the process (wall) with the process's peak RSS; and the command itself
(``asz show CONV --talk K``, whole process, wall). Prints medians and the ratio; the two
ways' outputs are compared byte for byte.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SYNTHETIC = HERE / "out"

CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
from asz_core import ledger, report, window
from asz_core.navigation import Navigator
from asz_core.store import Store
from asz_core.tables import render
mode, conv, talk = sys.argv[1:4]
st = Store.open()
t1 = time.perf_counter()
w = window.whole(st, conv) if mode == "cached" else window.build(st, conv)
t2 = time.perf_counter()
head, steps = Navigator(w, st).outline(talk)
led = ledger.build(w.conv, ledger.load_prices())
text = render(report.outline_text(w.conv, head, steps, led), 80)
t3 = time.perf_counter()
print(json.dumps({"window": t2 - t1, "total": t3 - t0, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "text": text}))
"""


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=5, help="repeats of each (default 5)")
    ap.add_argument("--synthetic", type=Path, default=SYNTHETIC)
    ap.add_argument("--talk", default="k3")
    args = ap.parse_args(argv)
    syn = args.synthetic
    if not any(syn.glob("*.jsonl")):
        print(f"building the synthetic conversation in {syn} ...", flush=True)
        subprocess.run([sys.executable, str(HERE / "make_synthetic.py"), str(syn)], check=True)
    main_file = max(syn.glob("*.jsonl"), key=lambda p: p.stat().st_size)
    conv = main_file.stem
    asz = str(Path(sys.executable).with_name("asz"))
    with tempfile.TemporaryDirectory(prefix="asz-bench-show-talk-") as home:
        env = dict(os.environ, ASZ_HOME=home, COLUMNS="80")
        subprocess.run([asz, "collect", str(syn)], env=env, check=True, capture_output=True)
        subprocess.run([asz, "show", conv], env=env, check=True, capture_output=True)  # keeps the assembly
        got: dict[str, list[dict]] = {"cached": [], "assembled": []}
        cli: list[float] = []
        for _ in range(args.n):
            for mode in got:
                r = subprocess.run([sys.executable, "-c", CHILD, mode, conv, args.talk], env=env, check=True,
                                   capture_output=True, text=True)
                got[mode].append(json.loads(r.stdout))
            t = time.perf_counter()
            subprocess.run([asz, "show", conv, "--talk", args.talk], env=env, check=True, capture_output=True)
            cli.append(time.perf_counter() - t)
    same = len({x["text"] for m in got.values() for x in m}) == 1
    print(f"{conv} ({sum(p.stat().st_size for p in syn.rglob('*.jsonl')) / 1e6:.1f} MB), talk {args.talk}, "
          f"{args.n} runs each, medians:")
    med = {m: {k: statistics.median(x[k] for x in v) for k in ("window", "total", "rss_mb")} for m, v in got.items()}
    for m, v in med.items():
        label = "from the assembly cache (window.whole)" if m == "cached" else "assembled again (window.build)"
        print(f"  {label:42} window {v['window']:.3f} s   outline+ledger+text {v['total']:.3f} s   "
              f"peak RSS {v['rss_mb']:.0f} MB")
    print(f"  ratio (assembled / cached): window {med['assembled']['window'] / med['cached']['window']:.1f}x, "
          f"whole {med['assembled']['total'] / med['cached']['total']:.1f}x")
    print(f"  asz show {conv[:8]} --talk {args.talk} (whole process): {statistics.median(cli):.3f} s")
    print(f"  outputs identical both ways: {same}")


if __name__ == "__main__":
    main()
