"""Server load benchmark: prints figures (a script, not a timed test).

    python bench/server_load.py [--files 4] [--limit 300] [--postgres URL]

On loopback, an ``asz server`` on a new PostgreSQL database, and at once:

* 8 processes (``asz push``), each pushing a store of its own: ``--files`` Claude Code sessions of
  the corpus with ids of that process's own (different conversations), collected in rounds (each
  file in two halves, so a conversation has two rounds);
* 4 processes pushing the same store (the same conversations, the same rounds) at once;
* a reader in this process asking, over and over until the pushers end, for ``conversations`` and
  for the ledger of one conversation (each through ``ServerStore``, as ``--server`` reads: the
  ledger's requests are resolve, rounds, records and copied calls, its assembly here).

Bounded: every process is killed after ``--limit`` seconds, and the reader stops with them. Then
it checks on the database that every round of every store landed once and in chain order, and
prints the pushes' seconds and the server's p50/p95 for each read.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psycopg

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from push import ASZ, Database, common, start_server, token  # noqa: E402
from vs_ccusage import projects_folder  # noqa: E402


def store_of(folder: Path, copy: int, files: int, home: Path, work: Path) -> None:
    """A local SQLite store of ``files`` sessions of copy ``copy`` of the corpus, each in two rounds."""
    mine = sorted(p for p in folder.iterdir() if p.name.startswith(f"copy{copy}-"))
    by_size = sorted((f for p in mine for f in p.glob("*.jsonl")), key=lambda f: f.stat().st_size)
    sessions = by_size[len(by_size) // 2:][:files]  # middling ones (of the corpus's 38, from the median up)
    grow = work / f"grow{copy}"
    env = {k: v for k, v in os.environ.items() if k not in ("ASZ_STORE", "ASZ_TOKEN")}
    env["ASZ_HOME"] = str(home)
    for half in (0, 1):
        for f in sessions:
            lines = f.read_bytes().splitlines(keepends=True)
            cut = len(lines) // 2
            (grow / f.parent.name).mkdir(parents=True, exist_ok=True)
            (grow / f.parent.name / f.name).write_bytes(b"".join(lines[:cut] if half == 0 else lines))
        subprocess.run([str(ASZ), "collect", str(grow), "--json"], env=env, check=True, capture_output=True)


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--limit", type=float, default=300)
    args = common(ap)
    base = Path(tempfile.mkdtemp(prefix="asz-bench-load-"))
    db = Database(args.postgres, f"asz_bench_load_{os.getpid()}")
    server = None
    procs: list[subprocess.Popen[bytes]] = []
    try:
        homes = [base / f"home{i}" for i in range(9)]
        folder = projects_folder(args.corpus, base / "copies", len(homes)) / "projects"
        for i, home in enumerate(homes):
            store_of(folder, i, args.files, home, base / "work")
        shutil.rmtree(base / "copies")
        server, url = start_server(db.url, base / "server-home")
        toks = [token(db.url, f"m{i}", base / "server-home") for i in range(9)]
        reader = token(db.url, "reader", base / "server-home")
        # the conversation the reader's ledger asks for: the largest of the shared store
        from asz_core.store import Store

        shared = Store.open(homes[8])
        one = max(shared.conversations(), key=lambda c: c.head.records if c.head else 0).id
        local_rounds = {(r.conversation, r.number, r.head) for h in homes
                        for st in [Store.open(h)] for c in st.conversations() for r in st.rounds(c.id)}
        shared.close()

        lat: dict[str, list[float]] = {"conversations": [], "ledger": []}
        done = threading.Event()

        def read() -> None:
            from asz_core.errors import NotFound
            from asz_core.server_store import ServerStore

            while not done.is_set():
                os.environ["ASZ_HOME"] = str(base / "reader-home")
                st = ServerStore(url, reader)
                t = time.perf_counter()
                st.conversations()
                lat["conversations"].append(time.perf_counter() - t)
                t = time.perf_counter()
                try:
                    rnd = st.round(st.resolve(one))
                    # the requests the ledger of one conversation makes (no local cache: a new home each time)
                    recs = st.records(one, rnd.number)
                    st.copied_calls(one)
                    lat["ledger"].append(time.perf_counter() - t)
                    del recs
                except NotFound:
                    time.sleep(0.05)  # not pushed yet
                st.close()
                shutil.rmtree(base / "reader-home", ignore_errors=True)

        th = threading.Thread(target=read)
        t0 = time.perf_counter()
        env = {k: v for k, v in os.environ.items() if k not in ("ASZ_STORE",)}
        for i in range(8):
            procs.append(subprocess.Popen([str(ASZ), "push", "--server", url, "--json"],
                                          env={**env, "ASZ_HOME": str(homes[i]), "ASZ_TOKEN": toks[i]},
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE))
        for _ in range(4):
            procs.append(subprocess.Popen([str(ASZ), "push", "--server", url, "--json"],
                                          env={**env, "ASZ_HOME": str(homes[8]), "ASZ_TOKEN": toks[8]},
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE))
        th.start()
        ends: list[float] = []
        failed = 0
        for p in procs:
            left = max(1.0, args.limit - (time.perf_counter() - t0))
            try:
                _, err = p.communicate(timeout=left)
                failed += p.returncode != 0
                if p.returncode:
                    print(f"a push failed: {err.decode()[-300:]}")
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                failed += 1
            ends.append(time.perf_counter() - t0)
        done.set()
        th.join(60)
        with psycopg.connect(db.url) as c:
            landed = c.execute("SELECT conversation, number, parent, head FROM rounds ORDER BY conversation, number").fetchall()
            dup = c.execute("SELECT count(*) FROM (SELECT 1 FROM records GROUP BY conversation, key, version "
                            "HAVING count(*) > 1) d").fetchone()[0]
            nrec = c.execute("SELECT count(*) FROM records").fetchone()[0]
        chains_ok = all(b[2] == a[3] and b[1] == a[1] + 1 for a, b in zip(landed, landed[1:]) if a[0] == b[0])
        once = {(c, n, h) for c, n, _, h in landed} == local_rounds and len(landed) == len(local_rounds)
        print(f"python {sys.executable}")
        print(f"12 pushes (8 stores of {args.files} conversations each, 4 of one shared store), {len(local_rounds)} rounds, "
              f"{nrec} records: all done in {max(ends):.2f} s; {failed} failed")
        print(f"every round landed once and in chain order: {once and chains_ok and dup == 0} "
              f"(rounds landed {len(landed)} of {len(local_rounds)}, records doubled {dup})")
        for name, xs in lat.items():
            if xs:
                print(f"{name}: p50 {pct(xs, 50) * 1000:.0f} ms, p95 {pct(xs, 95) * 1000:.0f} ms over {len(xs)} reads under load")
            else:
                print(f"{name}: no read finished")
    except BaseException:
        log = base / "server.log"
        if log.exists():
            print(log.read_text()[-3000:])
        raise
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        if server is not None:
            server.terminate()
            server.wait(30)
        db.drop()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
