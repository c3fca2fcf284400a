"""Benchmark of hostile evaluator answers: how long a judge run takes, and how large its stage
files grow, when an answer is enormous.

    python bench/hostile_answers.py [--corpus DIR] [--repeat N]

258c7280 (marot/spotter, from the corpus) is judged through the real runner, every evaluator
stage by the scripted evaluator, from the plausible answers of tests/judge/achievement_story.py
with one part made enormous: thousands of distinct criteria for one target, a hundred targets
created by one input, tens of thousands of citations for one criterion, a 10 MB id and
excerpt, and thousands of observations of one large step (its records were read and folded for
each: 1,000 took 3.3 s, 0.3 s once they are read once). Printed per case: the median seconds of the whole run over ``--repeat`` runs and the
bytes of the largest stage file. What it is for: a check that scans what an answer gave for each
thing it gave grows with the square of the answer (8,000 criteria took 21.6 s before the
targets stage looked them up by dict, 0.45 s after, one run each on a shared 2-core machine), and a check that quotes a huge value copies it.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus" / "claude-code")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    os.environ["ASZ_HOME"] = tempfile.mkdtemp(prefix="asz-bench-hostile-")

    from asz_core.collect import collect
    from asz_core.judge import runner
    from asz_core.store import Store
    from tests.judge.achievement_story import CID, T1, T2, T3, TARGETS

    store = Store.open(Path(os.environ["ASZ_HOME"]))
    src = next(args.corpus.rglob("258c7280*.jsonl"), None)
    if src is None:
        sys.exit(f"258c7280 not found under {args.corpus}")
    collect([src.parent], store)
    usage = {"input": 100, "output": 10, "cache_read": 0, "cache_write": 0}
    base: dict[str, list[Any]] = {"targets": [TARGETS], "achievement": [{"targets": [t]} for t in (T1, T2, T3)]}

    def case(name: str, change: Any) -> None:
        answers = copy.deepcopy(base)
        change(answers)
        calls = [{"stage": s, "call": n, "answer": a, "requests": [{"usage": usage}]}
                 for s, per in answers.items() for n, a in enumerate(per, 1)]
        script = Path(tempfile.mkdtemp()) / "script.json"
        script.write_text(json.dumps({"calls": calls}))
        secs, largest = [], 0
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            res = runner.judge(runner.JudgeOptions(CID, evaluator=f"scripted:{script}"), store=store)
            secs.append(time.perf_counter() - t0)
            largest = max(f.stat().st_size for f in (res.path / "stages").iterdir())
        print(f"{name:<44} {statistics.median(secs):7.2f} s   largest stage file {largest:>12,} bytes")

    def criteria(n: int) -> Any:
        return lambda a: a["targets"][0]["targets"][0].__setitem__("criteria", [{"text": f"criterion {k}"} for k in range(n)])

    print(f"hostile answers over {CID}, all stages, median of {args.repeat} runs")
    case("plausible answers", lambda a: None)
    for n in (2_000, 8_000, 20_000):
        case(f"{n:,} distinct criteria for one target", criteria(n))
    case("100 targets created by one input", lambda a: a["targets"][0]["inputs"][0]["actions"].extend(
        {"target": f"new:x{k}", "action": "create"} for k in range(100)))
    case("40,000 citations of one criterion", lambda a: a["achievement"][0]["targets"][0]["criteria"][0].__setitem__(
        "cites", [f"s{k}" for k in range(1, 40_001)]))

    def huge(a: Any) -> None:
        t1 = a["achievement"][0]["targets"][0]
        t1["criteria"].append({"id": "t" * 10_000_000, "state": "met", "cites": ["s117"]})
        t1["criteria"][1]["observations"][0]["excerpt"] = "65 tests, " * 1_000_000

    case("a 10 MB id and a 10 MB excerpt", huge)

    def observations(a: Any) -> None:  # s441: a 78 KB WebFetch result, its records read past the kept text
        c = a["achievement"][0]["targets"][0]["criteria"][1]
        c["cites"] = ["s441"]
        c["observations"] = [{"step": "s441", "excerpt": f"not in it {k}", "reading": "x"} for k in range(2_000)]

    case("2,000 observations of a 78 KB step", observations)


if __name__ == "__main__":
    main()
