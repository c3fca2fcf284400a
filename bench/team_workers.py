"""Team runs through the job engine: 40 scripted judge runs through 1, 2 and 4 workers, against
the same 40 made one after another in one process (docs/team.md).

The runs: the bundled example conversation 32 times (each copy with ids of its own, as
bench/vs_ccusage.py lays copies out), all four built stages through its script; and 8 small
conversations of the corpus, their targets stage through a script made for each. Each worker is
`asz worker --until-empty` in a process of its own (concurrency 1), on a team database made for
the measure and dropped after it. Prints the wall time of each way, the speed-up, and the engine's
overhead per job: (one worker's wall - one process's) / runs.

    python bench/team_workers.py [--pg postgresql://postgres@127.0.0.1:5432/postgres] [--workers 1,2,4]
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from vs_ccusage import projects_folder  # noqa: E402

EXAMPLE = ROOT / "examples" / "claude-code"
SCRIPT = ROOT / "examples" / "scripted-5e1f0c2a.yaml"
CORPUS = Path(os.environ.get("ASZ_CORPUS") or ROOT.parent / "shared" / "corpus") / "claude-code"


def _targets_script(store, cid: str, out: Path) -> Path | None:  # type: ignore[no-untyped-def]
    """A script answering the targets stage of one conversation: its first input creates one target,
    each later one refines it (a valid answer, as tests/judge/conftest.py's plain_answer)."""
    from asz_core import window
    from asz_core.assembly import PERSON_SOURCES

    w = window.build(store, cid)
    inputs = [w.conv.step(s) for k in w.judged for s in w.conv.talk(k).inputs]
    inputs = [s for s in inputs if s.source in PERSON_SOURCES and s.input]
    if not 1 <= len(inputs) <= 6:
        return None
    ans = {"inputs": [], "targets": [{"target": "new:a", "statement": "the outcome", "kind": "change",
                                      "criteria": [{"text": "it works"}], "state": "open"}], "goals": []}
    for k, s in enumerate(inputs):
        ans["inputs"].append({"input": s.input, "actions": [{"target": "new:a", "action": "create" if k == 0 else "refine"}],
                              "relations": [{"relation": "new", "goal": "new:A", "statement": "do it"}] if k == 0 else
                              [{"relation": "continue", "goal": "new:A", "follows": inputs[k - 1].input}]})
    out.write_text(json.dumps({"calls": [{"stage": "targets", "requests": [{"reads": [{"tool": "talks"}],
                                                                             "usage": {"input": 1000, "output": 100}}],
                                          "answer": ans}]}))
    return out


def prepare(home: Path) -> list[tuple[str, str, tuple[str, ...] | None]]:
    """Collect the 40 conversations into ``home``; each run as (conversation, evaluator, stages)."""
    from asz_core.collect import collect
    from asz_core.store import Store

    st = Store.open(home)
    try:
        collect([projects_folder(EXAMPLE, home / "ex", 32) / "projects"], st)
        example_ids = [r.id for r in st.conversations()]
        runs: list[tuple[str, str, tuple[str, ...] | None]] = [(c, f"scripted:{SCRIPT}", None) for c in example_ids]
        collect([CORPUS], st)
        for r in st.conversations():
            if len(runs) == 40:
                break
            if r.id in example_ids or r.runtime != "claudecode":
                continue
            s = _targets_script(st, r.id, home / f"script-{r.id[:8]}.json")
            if s:
                runs.append((r.id, f"scripted:{s}", ("targets",)))
    finally:
        st.close()
    return runs


def sequential(runs, home: Path) -> float:  # type: ignore[no-untyped-def]
    code = ("import json,sys,time\nfrom asz_core.judge import runner\nruns=json.loads(sys.argv[1])\nt=time.perf_counter()\n"
            "for c,e,s in runs:\n    runner.judge(runner.JudgeOptions(c, evaluator=e, stages=tuple(s) if s else None))\n"
            "print(time.perf_counter()-t)")
    out = subprocess.run([sys.executable, "-c", code, json.dumps(runs)], env={**os.environ, "ASZ_HOME": str(home)},
                         capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def through_workers(runs, home: Path, pg: str, n: int) -> tuple[float, int, int, list[str]]:  # type: ignore[no-untyped-def]
    import psycopg

    from asz_core.conversations import Filter, Listing, listing
    from asz_core.store import Store
    from asz_core.judge.config import JobsConfig
    from asz_core.team import jobs

    name = "asz_bench_" + secrets.token_hex(4)
    with psycopg.connect(pg, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    url = pg.rsplit("/", 1)[0] + "/" + name
    try:
        cfg = JobsConfig(slots={"default": 8}, attempts=3, retry_wait=0)
        st = Store.open(home)
        try:
            rows = {r.id: r for r in listing(store=st).rows}
        finally:
            st.close()
        for c, e, s in runs:
            jobs.enqueue(Listing((rows[c],), Filter()), e, stages=tuple(s) if s else None,
                         address=url, jobs=cfg)
        asz = str(Path(sys.executable).parent / "asz")
        env = {**os.environ, "ASZ_HOME": str(home), "ASZ_JOBS": url}
        t = time.perf_counter()
        procs = [subprocess.Popen([asz, "worker", "--until-empty"], env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL) for _ in range(n)]
        for p in procs:
            p.wait(timeout=3600)
        wall = time.perf_counter() - t
        with psycopg.connect(url, autocommit=True) as conn:
            closed = conn.execute("SELECT count(*) FROM asz_team_runs WHERE status = 'closed'").fetchone()[0]
            tries = conn.execute("SELECT coalesce(sum(attempts), 0) FROM asz_team_runs").fetchone()[0]
            errors = [r[0] for r in conn.execute("SELECT DISTINCT left(coalesce(summary->>'error', summary->>'failed_stages'), 160) "
                                                  "FROM asz_team_runs WHERE status <> 'closed'").fetchall()]
        return wall, closed, tries, errors
    finally:
        with psycopg.connect(pg, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/postgres")
    ap.add_argument("--workers", default="1,2,4")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="asz-team-bench-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        os.environ["ASZ_HOME"] = str(home)
        runs = prepare(home)
        print(f"{len(runs)} runs: {sum(s is None for _, _, s in runs)} of the example (four stages), "
              f"{sum(s is not None for _, _, s in runs)} of the corpus (targets); load {os.getloadavg()[0]:.2f}")
        one = sequential(runs, home)
        print(f"one process, one after another: {one:7.2f} s  ({one / len(runs):.3f} s a run)")
        first = None
        for n in [int(x) for x in args.workers.split(",")]:
            wall, closed, tries, errors = through_workers(runs, home, args.pg, n)
            first = first if first is not None else wall
            print(f"{n} worker(s): {wall:7.2f} s  closed {closed}/{len(runs)} in {tries} tries  x{one / wall:.2f} of one process"
                  + (f"  (engine overhead {max(0.0, wall - one) / len(runs):.3f} s a job)" if n == 1 else "")
                  + f"  load {os.getloadavg()[0]:.2f}")
            for e in errors:
                print(f"    not closed: {e}")


if __name__ == "__main__":
    main()
