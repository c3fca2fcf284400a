"""Benchmark of cost per target and of the sub-task and efficiency stages: time, memory, calls and
prompt bytes.

    python bench/work_stages.py [--corpus DIR] [--synthetic DIR] [--repeat 5] [--set judge.read_bytes=65536 ...]

Every Claude Code conversation of the corpus (and the synthetic ~90 MB one bench/make_synthetic.py
builds, when --synthetic names its folder) is collected into a temporary ASZ_HOME and judged
through the real runner, targets, subtasks and efficiency, by in-process stand-ins that read
nothing: the targets stand-in is bench/targets.py's (a target per talk), the sub-task one gives
every sub-task a decision resting on its first own tool result, the efficiency one labels each
talk from its first step. Printed per conversation: sub-tasks and talks of targets, the calls
each stage made (cut so the outlines of what a call labels fit three quarters of
judge.read_bytes) with the largest prompt, each stage's seconds, and the median seconds of
the cut alone (cost_per_target over the window's ledger) over --repeat runs with the peak memory it
allocated (tracemalloc), and ``for_run`` from the run directory (the window and ledger built too).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any, ClassVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))


def backends() -> list[Any]:
    from targets import make_backend  # bench/targets.py's stand-in for the targets stage

    from asz_core.interfaces import EvaluatorBackend
    from asz_core.judge.judgment import CallResult, EvaluatorCall, Request

    targets = make_backend()

    class StandIn(EvaluatorBackend):
        name: ClassVar[str] = "bench-work"

        def judge(self, call: EvaluatorCall) -> CallResult:
            if call.stage == "targets":
                return targets().judge(call)
            own = call.prompt.split("### Your ", 1)[1].split("###", 1)[0]
            rows = [json.loads(x) for x in re.findall(r"^\{.*\}$", own, re.M)]
            conv = call.navigator.conv
            if call.stage == "subtasks":
                ans: dict[str, Any] = {"decisions": []}
                for r in rows:
                    steps = [s for s in conv.steps if s.stream == r["id"]]
                    res = next((s.id for s in steps if s.kind == "tool" and s.status == "returned"), None)
                    ans["decisions"].append({"subtasks": [r["id"]], "outcome": {"value": "completed" if res else "unknown",
                                                                               "cites": [res] if res else []},
                                             "label": {"label": "productive", "step": steps[0].id if steps else None}})
            else:
                ans = {"talks": [{"talk": r["id"], "parts": [{"from": conv.talk(r["id"]).steps[0], "label": "productive",
                                                               "step": conv.talk(r["id"]).steps[0]}]} for r in rows]}
            return CallResult(answer=ans, raw=json.dumps(ans), requests=(Request(said=False),))

    return [StandIn]


def registry() -> Any:
    from targets import registry as with_backends  # bench/targets.py's

    return with_backends(backends(), name="bench-work")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=Path(os.environ.get("ASZ_CORPUS") or ROOT.parent / "shared" / "corpus") / "claude-code")
    ap.add_argument("--synthetic", type=Path, default=None, help="a folder bench/make_synthetic.py wrote (optional)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--set", action="append", default=[], help="a setting, such as judge.read_bytes=65536")
    args = ap.parse_args()
    settings = {k: int(v) if v.isdigit() else v for k, _, v in (s.partition("=") for s in args.set)}
    from asz_core import ledger, window
    from asz_core.collect import collect
    from asz_core.judge import runner
    from asz_core.convert import structure
    from asz_core.judge.judgment import StageFile
    from asz_core.judge.target_cost import cost_per_target, for_run
    from asz_core.store import Store

    home = Path(tempfile.mkdtemp(prefix="asz-bench-work-"))
    os.environ["ASZ_HOME"] = str(home)
    store = Store.open(home)
    collect([args.corpus] + ([args.synthetic] if args.synthetic else []), store)
    reg = registry()
    print(f"sub-task and efficiency stages and cost per target, settings: {', '.join(args.set) or 'default'}")
    print(f"{'conversation':<12} {'subtasks':>8} {'talks':>5}  {'sub calls':>9} {'largest':>8} {'s':>6}  "
          f"{'eff calls':>9} {'largest':>8} {'s':>6}  {'cut s':>7} {'peak MB':>7} {'for_run s':>9}")
    for conv in store.conversations():
        if conv.head is None:
            continue
        res = runner.judge(runner.JudgeOptions(conv.id, evaluator="bench-work", stages=("targets", "subtasks", "efficiency"),
                                               settings=settings), store=store, registry=reg)
        st = {s: json.loads((res.path / "stages" / f"{s}.json").read_text()) for s in ("subtasks", "efficiency")}
        w = window.build(store, conv.id)
        led = ledger.build(w.conv, ledger.load_prices(None))
        tg = structure(json.loads((res.path / "stages" / "targets.json").read_text()), StageFile)
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            cost_per_target(w, led, tg.targets, tg.inputs)
            times.append(time.perf_counter() - t0)
        tracemalloc.start()
        cost_per_target(w, led, tg.targets, tg.inputs)
        peak = tracemalloc.get_traced_memory()[1] / 1e6
        tracemalloc.stop()
        t0 = time.perf_counter()
        for_run(res.path, store)
        whole = time.perf_counter() - t0
        del led

        def cols(s: dict[str, Any]) -> str:
            r = s["run"]
            return f"{r['calls']:>9} {r['largest_prompt_bytes']:>8,} {r['seconds']:>6.2f}"

        print(f"{conv.id[:8]:<12} {st['subtasks']['header']['subtasks'] if st['subtasks']['header'] else 0:>8} "
              f"{st['efficiency']['header']['talks'] if st['efficiency']['header'] else 0:>5}  {cols(st['subtasks'])}  "
              f"{cols(st['efficiency'])}  {statistics.median(times):>7.3f} {peak:>7.1f} {whole:>9.2f}")
    store.close()


if __name__ == "__main__":
    sys.exit(main())
