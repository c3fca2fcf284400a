"""Benchmark of the close: close.json (the final statement) and report.html, per conversation.

    python bench/close.py [--corpus DIR] [--synthetic DIR] [--repeat 3]

Every Claude Code conversation of the corpus (and the ~90 MB synthetic one bench/make_synthetic.py
builds, when --synthetic names its folder) is collected into a temporary ASZ_HOME and judged,
targets stage only, with bench/targets.py's stand-in evaluator (a target per talk). Then, for
each run: the median seconds of computing close.json again (``close_file``: the window and ledger
rebuilt, the cut, every target's outcome, prices and times) and of rendering report.html
(``report_html.render(model(...))``), and the sizes of both files. Quote medians and ratios: the
machine is shared.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=Path(os.environ.get("ASZ_CORPUS") or ROOT.parent / "shared" / "corpus") / "claude-code")
    ap.add_argument("--synthetic", type=Path, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from targets import registry  # bench/targets.py's stand-in evaluator

    from asz_core.collect import collect
    from asz_core.convert import dumps
    from asz_core.judge import report_html, runner
    from asz_core.judge.close import close_file, load_view
    from asz_core.store import Store

    home = Path(tempfile.mkdtemp(prefix="asz-bench-close-"))
    os.environ["ASZ_HOME"] = str(home)
    store = Store.open(home)
    collect([args.corpus] + ([args.synthetic] if args.synthetic else []), store)
    reg = registry()
    print(f"{'conversation':<12} {'talks':>5} {'targets':>7} {'run s':>7} {'close s':>8} {'view s':>7} "
          f"{'report s':>8} {'close.json':>10} {'report':>10}")
    for conv in store.conversations():
        t0 = time.perf_counter()
        res = runner.judge(runner.JudgeOptions(conv.id, evaluator="bench-stand-in", stages=("targets",)), store=store, registry=reg)
        run_s = time.perf_counter() - t0
        closes, views, reports = [], [], []
        for _ in range(args.repeat):
            t = time.perf_counter()
            v = load_view(res.path, store)
            views.append(time.perf_counter() - t)
            t = time.perf_counter()
            cf = close_file(res.path, store, reg, v)
            closes.append(time.perf_counter() - t)
            t = time.perf_counter()
            report_html.render(report_html.model(res.path, store, v))
            reports.append(time.perf_counter() - t)
        st = cf.statement
        print(f"{conv.id[:8]:<12} {len(v.window.judged):>5} {len(st.targets) if st else 0:>7} {run_s:>7.2f} "
              f"{statistics.median(closes):>8.3f} {statistics.median(views):>7.3f} {statistics.median(reports):>8.3f} "
              f"{len(dumps(cf, indent=True)):>10,} {(res.path / 'report.html').stat().st_size:>10,}")
    store.close()


if __name__ == "__main__":
    sys.exit(main())
