"""asz's ledger beside ccusage's on the same Claude Code corpus: four token totals, money, wall time.

    python bench/ccusage_compare.py [--corpus DIR] [--runs 5] [--ccusage BIN] [--install]

ccusage is the one --ccusage names, or found as bench/vs_ccusage.py finds it; with --install, when
none is found, it is installed from npm into a temporary prefix (pinned: ccusage 20.0.24 with its
native package @ccusage/ccusage-linux-x64 20.0.24; 20.0.26 lacks the platform package). It reads
CLAUDE_CONFIG_DIR/projects, so the corpus files are copied (ccusage does not follow symlinks) into a temporary folder laid out as ~/.claude/projects; nothing is written in
the repository. ccusage runs with `claude session --json --offline --mode calculate -z UTC` (every
cost computed from tokens with its bundled prices); asz with `asz ledger --json` on a temporary
ASZ_HOME that collected the same files.

After the side-by-side table, each difference is taken apart by its cause (docs/ledger.md):

* output: calls whose final usage was never written. ccusage keeps the fragment with the largest
  token total, so it takes such a call's output from a streaming placeholder; asz counts it unknown.
  And a sub-agent's last call whose own final line is missing: asz takes its output from the
  parent's Task result (``toolUseResult.usage``); ccusage from the placeholder.
* money: the same output rule, priced; what is left is the price data (genai-prices' snapshot vs
  ccusage's bundled LiteLLM prices), shown per model.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from vs_ccusage import find_ccusage  # noqa: E402
ROOT = HERE.parent
CORPUS = Path(os.environ.get("ASZ_CORPUS") or ROOT.parent / "shared" / "corpus") / "claude-code"
CCUSAGE_VERSION = "20.0.24"
TYPES = ("input", "output", "cache_read", "cache_write")
CC_KEYS = {"input": "inputTokens", "output": "outputTokens", "cache_read": "cacheReadTokens", "cache_write": "cacheCreationTokens"}


def install_ccusage(prefix: Path) -> Path:
    binary = prefix / "node_modules" / ".bin" / "ccusage"
    if not binary.exists():
        subprocess.run(["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--silent",
                        f"ccusage@{CCUSAGE_VERSION}", f"@ccusage/ccusage-linux-x64@{CCUSAGE_VERSION}"], check=True)
    return binary


def claude_dir(corpus: Path, out: Path) -> Path:
    """The corpus laid out as CLAUDE_CONFIG_DIR/projects/<project>/<session>.jsonl (+ subagents/)."""
    projects = out / "projects"
    for f in sorted(corpus.rglob("*.jsonl")):
        rel = f.relative_to(corpus)
        if f.parent.name == "subagents":
            session_dir = rel.parent.parent
            target = projects / "-".join(session_dir.parent.parts) / session_dir.name / "subagents" / f.name
        else:
            target = projects / "-".join(rel.parent.parts) / f.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, target)
    return out


def timed(cmd: list[str], env: dict[str, str], runs: int, forget: Path | None = None) -> tuple[dict, float]:
    """The command's JSON and its median wall time; ``forget``: a folder removed before each run."""
    times, out = [], b""
    for _ in range(runs):
        if forget is not None:
            shutil.rmtree(forget, ignore_errors=True)
        t = time.perf_counter()
        out = subprocess.run(cmd, env=env, check=True, capture_output=True).stdout
        times.append(time.perf_counter() - t)
    return json.loads(out), statistics.median(times)


def largest_fragment_output(corpus: Path) -> dict[str, int]:
    """ccusage's rule, from the raw lines: per (message.id, requestId) the largest output seen."""
    out: dict[str, int] = {}
    for f in corpus.rglob("*.jsonl"):
        for line in f.read_text(encoding="utf-8").splitlines():
            try:
                o = json.loads(line)
            except ValueError:
                continue
            m = o.get("message") if isinstance(o, dict) and o.get("type") == "assistant" else None
            if not isinstance(m, dict) or not m.get("id") or not isinstance(m.get("usage"), dict):
                continue
            v = m["usage"].get("output_tokens")
            if isinstance(v, int):
                key = f"{m['id']}:{o.get('requestId') or ''}"
                out[key] = max(out.get(key, 0), v)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--ccusage", type=Path, help="a ccusage binary (default: found as bench/vs_ccusage.py finds it)")
    ap.add_argument("--install", action="store_true", help="when none is found, npm install it into a temporary prefix")
    args = ap.parse_args()
    asz = Path(sys.executable).parent / "asz"

    with tempfile.TemporaryDirectory(prefix="asz-ccusage-") as tmp:
        tmp_path = Path(tmp)
        ccusage = args.ccusage or find_ccusage(None)
        if ccusage is None and args.install:
            ccusage = install_ccusage(Path(tempfile.gettempdir()) / f"asz-bench-ccusage-{CCUSAGE_VERSION}")
        if ccusage is None:
            raise SystemExit(f"ccusage not found (--ccusage BIN, $ASZ_CCUSAGE, on the PATH or ../ccusage); "
                             f"--install gets ccusage {CCUSAGE_VERSION} from npm into a temporary prefix")
        cfg = claude_dir(args.corpus, tmp_path / "claude")
        env = {**os.environ, "CLAUDE_CONFIG_DIR": str(cfg), "NO_COLOR": "1"}
        cc, cc_time = timed([str(ccusage), "claude", "session", "--json", "--offline", "--mode", "calculate", "-z", "UTC",
                             "--breakdown"], env, args.runs)

        home = tmp_path / "asz-home"
        aenv = {**os.environ, "ASZ_HOME": str(home)}
        subprocess.run([str(asz), "collect", str(args.corpus), "--json"], env=aenv, check=True, capture_output=True)
        az, az_time = timed([str(asz), "ledger", "--json"], aenv, args.runs, forget=home / "cache")
        _, az_kept = timed([str(asz), "ledger", "--json"], aenv, args.runs)

        # Per call, in process, for the explanation.
        os.environ["ASZ_HOME"] = str(home)
        from asz_core.ledger import for_all, load_prices
        from asz_core.records import Usage

        prices = load_prices()
        ledgers = for_all(prices=prices)
        largest = largest_fragment_output(args.corpus)
        report(args, az, cc, (az_time, az_kept), cc_time, ledgers, largest, prices, Usage)


def report(args, az, cc, az_time, cc_time, ledgers, largest, prices, Usage) -> None:  # noqa: N803
    t = az["total"]
    c = cc["totals"]
    print(f"corpus: {args.corpus} ({az['conversations']} conversations, {t['calls']} model calls)")
    print(f"ccusage {CCUSAGE_VERSION}: claude session --offline --mode calculate; asz: ledger --json, "
          f"prices {Path(az['prices']['file']).name} sha256 {az['prices']['sha256'][:16]}")
    print()
    print(f"{'':14}{'asz':>16}{'ccusage':>16}{'difference':>14}")
    for k in TYPES:
        a, b = t["tokens"][k], c[CC_KEYS[k]]
        unk = t["unknown_calls"][k]
        print(f"{k:14}{a:>16,}{b:>16,}{b - a:>+14,}" + (f"   asz: +{unk} calls unknown" if unk else ""))
    am, cm = Decimal(t["money"]), Decimal(str(c["totalCost"]))
    print(f"{'money $':14}{am:>16.4f}{cm:>16.4f}{cm - am:>+14.4f}" + ("   asz: money of known counts" if not t["money_complete"] else ""))
    print(f"{'wall s (med)':14}{az_time[0]:>16.3f}{cc_time:>16.3f}   asz: computed; {az_time[1]:.3f} s with the "
          "summaries an earlier run kept")
    print()

    # --- output, taken apart --------------------------------------------------------------
    unknown_floor = task_result = 0
    n_unknown = n_task = 0
    as_cc: dict[str, Decimal] = defaultdict(Decimal)
    asz_by_model: dict[str, Decimal] = defaultdict(Decimal)
    for led in ledgers:
        for call in led.calls:
            big = largest.get(call.call or "", 0)
            u = call.usage
            if u.output is None:
                n_unknown += 1
                unknown_floor += big
            elif u.output != big:
                n_task += 1
                task_result += u.output - big
            model = call.model or "(no model)"
            asz_by_model[model] += call.price.money or 0
            cc_usage = Usage(u.input, big, u.cache_read, u.cache_write, u.cache_write_5m, u.cache_write_1h)
            as_cc[model] += prices.price(call.model, cc_usage, call.ts).money or 0
    known = t["tokens"]["output"]
    print("output, by cause:")
    print(f"  asz known output                                   {known:>12,}")
    print(f"  + {n_unknown} calls asz counts unknown, at the largest")
    print(f"    streaming value ccusage keeps                    {unknown_floor:>+12,}")
    print(f"  - {n_task} sub-agent last calls asz takes from the")
    print(f"    Task result (ccusage: the placeholder)           {-task_result:>+12,}")
    print(f"  = {known + unknown_floor - task_result:,} (ccusage: {c['outputTokens']:,})")
    print()
    cc_models: dict[str, Decimal] = defaultdict(Decimal)
    for s in cc["sessions"]:
        for b in s.get("modelBreakdowns", []):
            cc_models[b["modelName"]] += Decimal(str(b["cost"]))
    print("money by model: asz | asz with ccusage's output rule | ccusage | left (price data)")
    for m in sorted(set(as_cc) | set(cc_models)):
        left = cc_models[m] - as_cc[m]
        print(f"  {m:32}{asz_by_model[m]:>11.4f}{as_cc[m]:>11.4f}{cc_models[m]:>11.4f}{left:>+10.4f}")
    tot_as_cc = sum(as_cc.values(), Decimal(0))
    print(f"  {'total':32}{am:>11.4f}{tot_as_cc:>11.4f}{cm:>11.4f}{cm - tot_as_cc:>+10.4f}")


if __name__ == "__main__":
    main()
