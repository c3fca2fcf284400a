"""Benchmark of the targets stage's prompts: bytes per call and number of calls.

    python bench/targets.py [--corpus DIR] [--synthetic DIR] [--set judge.mode=stream ...]

Every Claude Code conversation of the corpus (and the synthetic ~90 MB one bench/make_synthetic.py
builds, when --synthetic names its folder) is collected into a temporary ASZ_HOME and judged with
the default settings (judge.single_bytes 49152, judge.chunk_bytes 32768, judge.state_bytes
16384), targets stage only, through the real runner. The evaluator is an in-process stand-in
that reads nothing and answers every call validly: the first input of each talk creates a
target in a goal of its own and the talk's other inputs refine it, so the catalogue later calls
are given grows as a real scan's would. Printed per conversation: inputs, the mode, the number
of calls, and the prompt bytes of each call (the prompt as sent: the shared and the stage's
prompt, the card, the rows, the context, the catalogue and the goals). So later prompt work can
be compared: run it before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, ClassVar

ROOT = Path(__file__).resolve().parent.parent



def make_backend() -> Any:
    from asz_core.interfaces import EvaluatorBackend
    from asz_core.judge.judgment import CallResult, EvaluatorCall, Request

    class StandIn(EvaluatorBackend):
        name: ClassVar[str] = "bench-stand-in"

        def judge(self, call: EvaluatorCall) -> CallResult:
            own = call.prompt.split("### Your inputs", 1)[1].split("### Context", 1)[0]
            rows = [json.loads(x) for x in re.findall(r"^\{.*\}$", own, re.M)]
            ans: dict[str, Any] = {"inputs": [], "targets": [], "goals": []}
            last: dict[str, str] = {}
            for r in rows:
                k = r["talk"]
                if k not in last:
                    key = f"new:{k}"
                    ans["inputs"].append({"input": r["input"], "actions": [{"target": key, "action": "create"}],
                                          "relations": [{"relation": "new", "goal": f"new:g{k}", "statement": r["text"]}]})
                    ans["targets"].append({"target": key, "statement": r["text"], "kind": "change",
                                           "criteria": [{"text": (r["text"] or "")[:120]}], "talks": [k], "state": "open"})
                else:
                    ans["inputs"].append({"input": r["input"], "actions": [{"target": f"new:{k}", "action": "refine"}],
                                          "relations": [{"relation": "continue", "goal": f"new:g{k}", "follows": last[k]}]})
                last[k] = r["input"]
            return CallResult(answer=ans, raw=json.dumps(ans), requests=(Request(said=False),))

    return StandIn


def registry(backends: list[Any] | None = None, name: str = "bench-targets") -> Any:
    """A registry with the installed plugins and ``backends`` (default: this stand-in) registered
    in-process, as a plugin named ``name``."""
    from asz_core import hookimpl
    from asz_core.plugins import make_plugin_manager
    from asz_core.registry import Registry

    found = backends if backends is not None else [make_backend()]

    class Plugin:
        @staticmethod
        @hookimpl
        def asz_evaluator_backends() -> list[Any]:
            return found

    pm = make_plugin_manager()
    pm.register(Plugin(), name=name)
    return Registry(pm)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=Path(os.environ.get("ASZ_CORPUS") or ROOT.parent / "shared" / "corpus") / "claude-code")
    ap.add_argument("--synthetic", type=Path, default=None, help="a folder bench/make_synthetic.py wrote (optional)")
    ap.add_argument("--set", action="append", default=[], help="a setting, such as judge.mode=stream (default: none)")
    args = ap.parse_args()
    settings = {}
    for s in args.set:
        k, _, v = s.partition("=")
        settings[k] = int(v) if v.isdigit() else v
    from asz_core.judge import runner
    from asz_core.collect import collect
    from asz_core.store import Store

    home = Path(tempfile.mkdtemp(prefix="asz-bench-targets-"))
    os.environ["ASZ_HOME"] = str(home)
    store = Store.open(home)
    paths = [args.corpus] + ([args.synthetic] if args.synthetic else [])
    collect(paths, store)
    reg = registry()
    rows = []
    for conv in store.conversations():
        t0 = time.perf_counter()
        res = runner.judge(runner.JudgeOptions(conv.id, evaluator="bench-stand-in", stages=("targets",), settings=settings),
                           store=store, registry=reg)
        secs = time.perf_counter() - t0
        st = json.loads((res.path / "stages" / "targets.json").read_text())
        per = [a["prompt_bytes"] for a in st["run"]["attempt_log"]]
        rows.append((conv.id[:8], st["header"]["inputs"] if st["header"] else 0, st["run"]["mode"], st["run"]["calls"], per,
                     st["status"], secs))
    rows.sort(key=lambda r: (-r[1], r[0]))
    print(f"targets stage prompts, default settings{' + ' + ', '.join(args.set) if args.set else ''} "
          f"(single_bytes 49152, chunk_bytes 32768, state_bytes 16384)")
    print(f"{'conversation':<12} {'inputs':>6} {'mode':<7} {'calls':>5} {'largest':>8} {'total':>8}  prompt bytes per call")
    for cid, n, mode, calls, per, status, secs in rows:
        shown = ", ".join(f"{p:,}" for p in per[:8]) + (f", … ({len(per)})" if len(per) > 8 else "")
        print(f"{cid:<12} {n:>6} {mode:<7} {calls:>5} {max(per, default=0):>8,} {sum(per):>8,}  {shown or '—'}"
              + ("" if status in ("complete", "partial") else f"  [{status}]"))
    allp = [p for r in rows for p in r[4]]
    print(f"{len(rows)} conversations, {sum(r[3] for r in rows)} calls, prompt bytes: largest {max(allp, default=0):,}, "
          f"total {sum(allp):,}")
    store.close()


if __name__ == "__main__":
    sys.exit(main())
