"""asz's collect and ledger beside ccusage on one projects folder: interleaved runs, medians, ratios.

    python bench/vs_ccusage.py [--runs 5] [--copies 3] [--corpus DIR] [--ccusage BIN] [--before SRC]

The folder: the Claude Code corpus laid out as ~/.claude/projects (CLAUDE_CONFIG_DIR/projects),
``--copies`` times, each copy with its own ids (sessions, uuids, message and request ids), so a
copy is new work to both tools (default 3: about 95 MB, the size of the real folder issue 16 was
measured on). It is written into a temporary folder, never into the repository.

Each run, in turn (the order rotates, so the machine's load falls on every contender alike):

* ccusage 20.0.24 ``session --json --offline`` (what a person runs to see tokens and money);
* asz: a first ``asz collect FOLDER --json`` into an empty ASZ_HOME, then ``asz ledger --json``;
  then ``asz ledger --json`` again over the collected store; then ``asz collect`` with nothing new;
* with ``--before SRC`` (a checkout of another asz, e.g. ``git worktree``/``git archive`` of main),
  the same with that code, for before/after figures in the same run.

Each asz's modules are compiled to bytecode before the runs, as pip compiles a package it installs
(where nothing writes bytecode, PYTHONDONTWRITEBYTECODE or a read-only checkout, each command would
otherwise compile them again).

Printed: the median wall seconds and peak RSS (each command's own process, from wait4) of every
step, the ratios to ccusage and the goals of issue 16. ccusage is found with ``--ccusage``,
$ASZ_CCUSAGE, ``ccusage`` on the PATH, ../ccusage/node_modules/.bin/ccusage beside the checkout, or
the prefix bench/ccusage_compare.py installs into; without it, asz's figures alone are printed.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
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
CCUSAGE_VERSION = "20.0.24"
# The installed command's entry point (an older checkout, for --before, has only the full CLI's).
MAIN = ("import sys\ntry:\n    from asz_core.main import main\nexcept ImportError:\n    from asz_core.cli import main\n"
        "sys.argv[0] = 'asz'\nmain()")
DISTS = ("asz_core", "asz_adapters_claudecode", "asz_adapters_codex", "asz_adapters_kiro", "asz_adapters_langsmith",
         "asz_evaluators")

GOALS = {"first collect + ledger": 2.0, "ledger over the collected store": 0.5}
NOTHING_NEW_S = 0.15


# --- the folder --------------------------------------------------------------------------------

_IDS = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|(?:msg|req|toolu)_[A-Za-z0-9]{8,}|agent-a?[0-9a-f]{6,8}\b"
                  rb'|(?<="agentId":")a?[0-9a-f]{6,8}(?=")')
"""Every id a copy makes its own. A sub-agent's id is renamed alike where its file is named
(agent-a1b2c3d) and where the parent names it (a Task result's and a progress line's "agentId"),
so each copy's sub-agents stay joined to their parents."""


def _renamed(copy: int):  # type: ignore[no-untyped-def]
    """Every id made the copy's own, the same everywhere (file names too), so joins still hold."""
    def one_agent(bare: bytes) -> bytes:
        return one_bytes(b"agent-" + bare)[len(b"agent-"):]

    def one(m: re.Match[bytes]) -> bytes:
        return one_bytes(m.group(0))

    def one_bytes(old: bytes) -> bytes:
        if copy == 0:
            return old
        if b"_" not in old and b"-" not in old:  # a bare agentId: renamed as agent-<it> is
            return one_agent(old)
        h = hashlib.blake2b(old + bytes([copy]), digest_size=16).hexdigest().encode()
        if old[8:9] == b"-":
            return b"-".join((h[:8], h[8:12], h[12:16], h[16:20], h[20:32]))
        head, _, tail = old.partition(b"_") if b"_" in old else old.rpartition(b"-")
        sep = b"_" if b"_" in old else b"-"
        return head + sep + h[: len(tail)]
    return one


def projects_folder(corpus: Path, out: Path, copies: int) -> Path:
    """The corpus as CLAUDE_CONFIG_DIR/projects/<project>/<session>.jsonl (+ <session>/subagents/), ``copies`` times."""
    projects = out / "projects"
    for k in range(copies):
        rename = _renamed(k)
        for f in sorted(corpus.rglob("*.jsonl")):
            rel = f.relative_to(corpus)
            if f.parent.name == "subagents":
                session_dir = rel.parent.parent
                target = Path("-".join(session_dir.parent.parts)) / session_dir.name / "subagents" / f.name
            else:
                target = Path("-".join(rel.parent.parts)) / f.name
            target = projects / f"copy{k}-{target.parts[0]}" / _IDS.sub(rename, str(Path(*target.parts[1:])).encode()).decode()
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(_IDS.sub(rename, f.read_bytes()))
    return out


# --- running -------------------------------------------------------------------------------------

def find_ccusage(given: Path | None) -> Path | None:
    for cand in (given, os.environ.get("ASZ_CCUSAGE"), shutil.which("ccusage"),
                 ROOT.parent / "ccusage" / "node_modules" / ".bin" / "ccusage",
                 Path(tempfile.gettempdir()) / f"asz-bench-ccusage-{CCUSAGE_VERSION}" / "node_modules" / ".bin" / "ccusage"):
        if cand and Path(cand).is_file() and os.access(cand, os.X_OK):
            return Path(cand)
    return None


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, float, bytes]:
    """Wall seconds, peak RSS (MB) of the process, its stdout."""
    wall, _, mb, out = measure(cmd, env)
    return wall, mb, out


def measure(cmd: list[str], env: dict[str, str]) -> tuple[float, float, float, bytes]:
    """Wall seconds, CPU seconds (user + system, the process and the children it waited for),
    peak RSS (MB) of the process, its stdout."""
    fd, out = tempfile.mkstemp(prefix="asz-bench-out-")
    try:
        t = time.perf_counter()
        p = subprocess.Popen(cmd, env=env, stdout=fd, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"failed ({os.waitstatus_to_exitcode(status)}): {' '.join(cmd)}")
        return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, Path(out).read_bytes()
    finally:
        os.close(fd)
        os.unlink(out)


class Asz:
    """One asz to measure: this checkout's, or another's sources (``--before``)."""

    def __init__(self, label: str, src: Path | None) -> None:
        self.label = label
        self.env = dict(os.environ, NO_COLOR="1")
        self.env.pop("ASZ_DISABLE_PLUGINS", None)
        paths = [str((src or ROOT) / d / "src") for d in DISTS if ((src or ROOT) / d / "src").is_dir()]
        if src is not None:
            self.env["PYTHONPATH"] = os.pathsep.join([*paths, self.env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        # Compiled once, as an installed asz is (pip compiles a package's modules when it installs
        # it): where nothing writes bytecode (PYTHONDONTWRITEBYTECODE, a read-only checkout) every
        # command would compile the sources again, 0.04-0.05 s of each command that no user pays.
        subprocess.run([sys.executable, "-m", "compileall", "-q", *paths], check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def __call__(self, home: Path, *args: str) -> tuple[float, float, bytes]:
        return run(self.command(*args), dict(self.env, ASZ_HOME=str(home)))

    def command(self, *args: str) -> list[str]:
        return [sys.executable, "-c", MAIN, *args]


def folder_args(doc: str | None) -> argparse.ArgumentParser:
    """The options of a bench over the projects folder beside ccusage (this one's and collect_floor's)."""
    ap = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--copies", type=int, default=3)
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--ccusage", type=Path)
    return ap


def main() -> None:
    ap = folder_args(__doc__)
    ap.add_argument("--before", type=Path, help="the root of another asz checkout, measured beside this one")
    args = ap.parse_args()

    ccusage = find_ccusage(args.ccusage)
    contenders = [Asz("asz", None)] + ([Asz("asz before", args.before)] if args.before else [])
    with tempfile.TemporaryDirectory(prefix="asz-vs-ccusage-") as tmp:
        tmp_path = Path(tmp)
        cfg = projects_folder(args.corpus, tmp_path / "claude", args.copies)
        folder = cfg / "projects"
        files = list(folder.rglob("*.jsonl"))
        size = sum(f.stat().st_size for f in files)
        print(f"folder: {len(files)} files, {size / 1e6:.1f} MB ({args.copies} copies of {args.corpus}); "
              f"{args.runs} runs, interleaved; load average {os.getloadavg()[0]:.1f}; {os.cpu_count()} cpus")
        print(f"ccusage: {ccusage or 'not found (install: npm install --prefix ../ccusage ccusage@' + CCUSAGE_VERSION + ')'}")
        cc_env = dict(os.environ, CLAUDE_CONFIG_DIR=str(cfg), NO_COLOR="1")
        times: dict[str, list[float]] = {}
        rss: dict[str, list[float]] = {}
        outputs: dict[str, bytes] = {}

        def note(key: str, wall: float, mb: float) -> None:
            times.setdefault(key, []).append(wall)
            rss.setdefault(key, []).append(mb)

        jobs: list[tuple[str, object]] = [(a.label, a) for a in contenders]
        if ccusage:
            jobs.append(("ccusage", None))
        for i in range(args.runs):
            for label, a in jobs[i % len(jobs):] + jobs[: i % len(jobs)]:
                if a is None:
                    w, m, _ = run([str(ccusage), "session", "--json", "--offline"], cc_env)
                    note("ccusage session --json --offline", w, m)
                    continue
                home = tmp_path / f"home-{label.replace(' ', '-')}-{i}"
                w1, m1, _ = a(home, "collect", str(folder), "--json")  # type: ignore[operator]
                w2, m2, out = a(home, "ledger", "--json")  # type: ignore[operator]
                note(f"{label}: first collect", w1, m1)
                note(f"{label}: ledger after it", w2, m2)
                note(f"{label}: first collect + ledger", w1 + w2, max(m1, m2))
                outputs[label] = out
                w3, m3, again = a(home, "ledger", "--json")  # type: ignore[operator]
                assert again == out, "a second ledger differs from the first"
                note(f"{label}: ledger over the collected store", w3, m3)
                w4, m4, _ = a(home, "collect", str(folder), "--json")  # type: ignore[operator]
                note(f"{label}: collect, nothing new", w4, m4)
                shutil.rmtree(home)

    cc = statistics.median(times["ccusage session --json --offline"]) if ccusage else None
    width = max(len(k) for k in times)
    print(f"\n{'':{width}}  {'median s':>9}  {'min s':>7}  {'peak RSS MB':>11}  {'x ccusage':>9}  goal")
    for key, vals in times.items():
        med = statistics.median(vals)
        ratio = f"{med / cc:9.2f}" if cc else f"{'-':>9}"
        goal = ""
        step = key.partition(": ")[2]
        if cc and step in GOALS:
            goal = f"<= {GOALS[step]}x: {'met' if med / cc <= GOALS[step] else 'MISSED'}"
        elif step == "collect, nothing new":
            goal = f"<= {NOTHING_NEW_S} s: {'met' if med <= NOTHING_NEW_S else 'MISSED'}"
        print(f"{key:{width}}  {med:9.3f}  {min(vals):7.3f}  {statistics.median(rss[key]):11.1f}  {ratio}  {goal}")
    if "asz before" in outputs:
        same = _figures(outputs["asz"]) == _figures(outputs["asz before"])
        print(f"\nledger JSON of asz and asz before: {'the same figures' if same else 'DIFFERENT FIGURES'}")


def _figures(out: bytes) -> object:
    """The figures of `asz ledger --json`: totals and each conversation's tally (not the JSON's
    other fields, which another checkout may not have; not the order of its rows, by creation
    time to the millisecond)."""
    import json

    data = json.loads(out)
    return ({k: data[k] for k in ("conversations", "total", "subagents", "helpers")},
            {r["key"]: r["tally"] for r in data.get("rows", [])})


if __name__ == "__main__":
    main()
