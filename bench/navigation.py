"""Benchmark of the navigation tools: latency per tool and peak memory of the server.

    python bench/navigation.py [--calls 300] [--corpus DIR] [--synthetic DIR] [--seed 1]

Two conversations, each collected once into its own temporary ASZ_HOME (nothing in the repository):

* the largest conversation of the Claude Code corpus (by records);
* the synthetic ~90 MB conversation bench/make_synthetic.py builds (bench/out/ unless --synthetic
  names another folder; made into a temporary folder when it is missing), whole, and through a
  window of 100 main talks from its middle (built from the head's view, then assembled again at
  the window's end).

Each runs in a fresh process, as `asz judge mcp` does: the window (the whole conversation) is
built, the navigator opened and warmed (its caches and the search index built, as the server
does before it serves), then every tool is called with varied arguments (pages, talk and step
ids, parts, offsets, queries, ids that do not exist), ``--calls`` times in all, in a seeded
random order. Reported per tool: median and p95 latency of ``Navigator.call`` (what the server
does per request, JSON-RPC framing aside); and the process's peak RSS (ru_maxrss) after all
calls, with the time to open. Targets: p95 < 20 ms on the corpus, < 50 ms on the 90 MB one,
peak < 300 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CORPUS = Path(os.environ.get("ASZ_CORPUS") or ROOT.parent / "shared" / "corpus") / "claude-code"
WORDS = ["error", "test", "import", "README", "function", "failed", "the", "TODO", "zzzznotfound", "def main",
         "npm install", "git commit", "permission denied", "config.json"]


def child(conversation: str, calls: int, seed: int, window: str | None = None) -> dict:
    """In the measured process: open, warm, call every tool, report."""
    from asz_core.navigation import TOOLS, open_navigator

    t0 = time.perf_counter()
    nav = open_navigator(conversation, window=window, budget=10**15)
    opened = time.perf_counter() - t0
    t1 = time.perf_counter()
    nav.warm()
    warmed = time.perf_counter() - t1
    plan = plan_calls(nav, calls, seed)
    conv, w = nav.conv, nav.w
    lat: dict[str, list[float]] = {t: [] for t in TOOLS}
    for tool, a in plan:
        t = time.perf_counter()
        nav.call(tool, a)
        lat[tool].append((time.perf_counter() - t) * 1000)
    return {
        "window": w.spec.to_json(), "judged": len(w.judged), "before": len(w.before), "shown_steps": len(w.steps),
        "conversation": conv.id, "steps": len(conv.steps), "talks": len(conv.talks), "streams": len(conv.streams),
        "open_s": round(opened, 3), "warm_s": round(warmed, 3),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "tools": stats(lat),
    }


def plan_calls(nav, calls: int, seed: int) -> list[tuple[str, dict]]:
    """``calls`` tool calls with varied arguments, every tool as often, in a seeded random order."""
    from asz_core.navigation import TOOLS

    rng = random.Random(seed)
    w = nav.w
    talks = [t.id for t in w.shown_talks()]
    steps = [s for s in w.shown_steps()]
    big_steps = sorted(steps, key=lambda s: s.size)[-50:]
    subs = sorted(s for s in w.streams if s != "m")

    def pages(tool: str, args: dict) -> int:
        return json.loads(nav.call(tool, {**args, "page": 1})).get("pages", 1)

    n_talks, n_subs, n_ops = pages("talks", {}), pages("subtasks", {}), pages("operations", {})

    def args_for(tool: str) -> dict:
        if tool == "talks":
            return {"page": rng.randint(1, n_talks)}
        if tool == "talk":
            return {"id": rng.choice(talks + ["k999999"]), "page": rng.choice([1, 1, 2])}
        if tool == "step":
            s = rng.choice(big_steps if rng.random() < 0.3 else steps)
            part = rng.randint(1, len(s.records))
            return {"id": s.id, "part": part, "offset": rng.choice([0, 0, 9000, 40000])}
        if tool == "records":
            return {"step": rng.choice(steps).id}
        if tool == "diff":
            return {"record": "c1"}
        if tool == "operations":
            return {"page": rng.randint(1, n_ops)}
        if tool == "search":
            a = {"query": rng.choice(WORDS), "page": rng.choice([1, 1, 2, 5])}
            if rng.random() < 0.3:
                a["step"] = rng.choice(big_steps).id
            return a
        if tool == "subtasks":
            return {"item": rng.choice(subs), "offset": 0} if subs and rng.random() < 0.3 else {"page": rng.randint(1, n_subs)}
        if tool == "targets":
            return {}
        if tool == "sources":
            return {}
        return {}

    order = [TOOLS[i % len(TOOLS)] for i in range(calls)]
    rng.shuffle(order)
    return [(tool, args_for(tool)) for tool in order]


def stats(lat: dict[str, list[float]]) -> dict:
    return {t: {"calls": len(v), "median_ms": round(statistics.median(v), 3),
                "p95_ms": round(sorted(v)[max(0, int(len(v) * 0.95) - 1)], 3), "max_ms": round(max(v), 3)}
            for t, v in lat.items() if v}


def mcp_child(conversation: str, calls: int, seed: int) -> dict:
    """In a wrapper process: the same calls sent to `asz judge mcp` over stdio with the SDK's
    client; the round trip per call, and the server process's peak RSS once it ended."""
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    from asz_core.navigation import open_navigator

    plan = plan_calls(open_navigator(conversation, budget=10**15), calls, seed)
    asz = Path(sys.executable).parent / "asz"
    params = StdioServerParameters(command=str(asz), args=["judge", "mcp", conversation, "--budget", str(10**15)],
                                   env=dict(os.environ))
    lat: dict[str, list[float]] = {}
    started: dict[str, float] = {}

    async def run() -> None:
        t0 = time.perf_counter()
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as sess:
                await sess.initialize()
                started["ready_s"] = time.perf_counter() - t0
                for tool, a in plan:
                    t = time.perf_counter()
                    await sess.call_tool(tool, a)
                    lat.setdefault(tool, []).append((time.perf_counter() - t) * 1000)

    anyio.run(run)
    time.sleep(0.5)
    return {"ready_s": round(started["ready_s"], 3),
            "server_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1),
            "tools": stats(lat)}


def collect(paths: list[Path], home: Path) -> None:
    env = {**os.environ, "ASZ_HOME": str(home)}
    subprocess.run([sys.executable, "-c", "import sys; from asz_core.cli import main; sys.argv[0]='asz'; main()",
                    "collect", "--json", *map(str, paths)], env=env, check=True, stdout=subprocess.DEVNULL)


def largest(home: Path) -> str:
    env = {**os.environ, "ASZ_HOME": str(home)}
    code = ("import json; from asz_core.store import Store; s = Store.open(); "
            "rows = s.db.execute('SELECT conversation, count(*) n FROM records GROUP BY conversation ORDER BY n DESC LIMIT 1').fetchall(); "
            "print(rows[0][0])")
    return subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True).stdout.strip()


def middle(home: Path, conversation: str) -> str:
    """A hundred main talks from the middle of the conversation (chosen in a process of its own,
    so the measured one holds nothing else)."""
    env = {**os.environ, "ASZ_HOME": str(home)}
    code = ("import sys; from asz_core.api import load; m = [t.id for t in load(sys.argv[1]).main_talks]; "
            "a = max(0, len(m) // 2 - 50); print(f'{m[a]}..{m[min(len(m) - 1, a + 99)]}')")
    return subprocess.run([sys.executable, "-c", code, conversation], env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def measure(home: Path, conversation: str, calls: int, seed: int, window: str | None = None) -> dict:
    env = {**os.environ, "ASZ_HOME": str(home)}
    if window == "middle":
        window = middle(home, conversation)
    extra = ["--window", window] if window else []
    out = subprocess.run([sys.executable, __file__, "--child", conversation, "--calls", str(calls), "--seed", str(seed), *extra],
                         env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def measure_mcp(home: Path, conversation: str, calls: int, seed: int) -> dict:
    env = {**os.environ, "ASZ_HOME": str(home)}
    out = subprocess.run([sys.executable, __file__, "--mcp-child", conversation, "--calls", str(calls), "--seed", str(seed)],
                         env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def show_mcp(name: str, r: dict, target_ms: float) -> None:
    print(f"\n{name}, over stdio (`asz judge mcp`, the SDK's client): ready in {r['ready_s']} s (start, window, warm); "
          f"server peak RSS {r['server_peak_rss_mb']} MB")
    print(f"  {'tool':<11} {'calls':>5} {'median ms':>10} {'p95 ms':>8} {'max ms':>8}")
    worst = 0.0
    for t, v in r["tools"].items():
        worst = max(worst, v["p95_ms"])
        print(f"  {t:<11} {v['calls']:>5} {v['median_ms']:>10.3f} {v['p95_ms']:>8.3f} {v['max_ms']:>8.3f}")
    print(f"  worst p95 round trip {worst:.3f} ms (target < {target_ms:g} ms): {'ok' if worst < target_ms else 'MISSED'}")


def show(name: str, r: dict, target_ms: float) -> None:
    print(f"\n{name}: {r['conversation'][:8]}  steps {r['steps']}  talks {r['talks']}  streams {r['streams']}")
    print(f"  window {r['window']}: {r['judged']} main talks judged, {r['before']} before, {r['shown_steps']} steps shown")
    print(f"  open {r['open_s']} s (window built), warm {r['warm_s']} s (caches, search index); "
          f"peak RSS {r['peak_rss_mb']} MB (target < 300)")
    print(f"  {'tool':<11} {'calls':>5} {'median ms':>10} {'p95 ms':>8} {'max ms':>8}")
    worst = 0.0
    for t, v in r["tools"].items():
        worst = max(worst, v["p95_ms"])
        print(f"  {t:<11} {v['calls']:>5} {v['median_ms']:>10.3f} {v['p95_ms']:>8.3f} {v['max_ms']:>8.3f}")
    print(f"  worst p95 {worst:.3f} ms (target < {target_ms:g} ms): {'ok' if worst < target_ms else 'MISSED'}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=330)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--synthetic", type=Path, default=HERE / "out")
    ap.add_argument("--child")
    ap.add_argument("--window")
    ap.add_argument("--mcp-child")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if a.mcp_child:
        print(json.dumps(mcp_child(a.mcp_child, a.calls, a.seed)))
        return
    if a.child:
        print(json.dumps(child(a.child, a.calls, a.seed, a.window)))
        return
    results = {}
    with tempfile.TemporaryDirectory(prefix="asz-bench-nav-") as tmp:
        home = Path(tmp) / "corpus"
        collect([a.corpus], home)
        results["corpus"] = measure(home, largest(home), a.calls, a.seed)
        results["corpus_mcp"] = measure_mcp(home, largest(home), a.calls, a.seed)
        syn = a.synthetic
        if not any(syn.glob("*.jsonl")):
            syn = Path(tmp) / "synthetic"
            subprocess.run([sys.executable, str(HERE / "make_synthetic.py"), str(syn)], check=True, stdout=subprocess.DEVNULL)
        home2 = Path(tmp) / "synthetic-home"
        collect([syn], home2)
        results["synthetic"] = measure(home2, largest(home2), a.calls, a.seed)
        results["synthetic_window"] = measure(home2, largest(home2), a.calls, a.seed, "middle")
        results["synthetic_mcp"] = measure_mcp(home2, largest(home2), a.calls, a.seed)
    if a.json:
        print(json.dumps(results, indent=2))
        return
    show("largest corpus conversation", results["corpus"], 20)
    show_mcp("largest corpus conversation", results["corpus_mcp"], 20)
    show("synthetic ~90 MB conversation", results["synthetic"], 50)
    show("synthetic ~90 MB conversation, a window of 100 main talks", results["synthetic_window"], 50)
    show_mcp("synthetic ~90 MB conversation", results["synthetic_mcp"], 50)


if __name__ == "__main__":
    main()
