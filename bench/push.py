"""Push benchmark: prints figures (a script, not a timed test).

    python bench/push.py [-n 3] [--copies 3] [--corpus DIR] [--postgres URL]

The Claude Code corpus laid out ``--copies`` times with ids of each copy's own (about 95 MB at 3,
bench/vs_ccusage.projects_folder), then, each repeat from nothing:

* ``asz collect`` of it into a new SQLite store (the embedded default): seconds, records/s;
* ``asz push`` of that store to an ``asz server`` on a new PostgreSQL database on this machine
  (loopback): seconds, records/s, MB sent, requests;
* for comparison, ``asz collect`` of the same folder straight into a PostgreSQL store.

Prints medians (min, max) and the ratio of push to the SQLite collect. The PostgreSQL server is
the machine's (``--postgres``, default postgres@127.0.0.1:5432); each repeat makes a database and
drops it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
import psycopg

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from vs_ccusage import projects_folder  # noqa: E402

ASZ = Path(sys.executable).parent / "asz"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Database:
    """A PostgreSQL database of the benchmark's own, dropped on exit."""

    def __init__(self, admin: str, name: str) -> None:
        self.admin, self.name = admin, name
        with psycopg.connect(admin, autocommit=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            c.execute(f'CREATE DATABASE "{name}"')
        self.url = admin.rsplit("/", 1)[0] + "/" + name

    def drop(self) -> None:
        with psycopg.connect(self.admin, autocommit=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')


def start_server(url: str, home: Path) -> tuple[subprocess.Popen[bytes], str]:
    from asz_core.server_store import wait_until_up

    port = free_port()
    env = {**os.environ, "ASZ_STORE": url, "ASZ_HOME": str(home)}
    with open(home.parent / "server.log", "ab") as log:  # (kept for a failure's traceback)
        p = subprocess.Popen([str(ASZ), "server", "--port", str(port)], env=env, stdout=subprocess.DEVNULL, stderr=log)
    wait_until_up(f"http://127.0.0.1:{port}", None, 60)
    return p, f"http://127.0.0.1:{port}"


def token(url: str, name: str, home: Path) -> str:
    env = {**os.environ, "ASZ_STORE": url, "ASZ_HOME": str(home)}
    return subprocess.run([str(ASZ), "server", "token", "add", name], env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, dict]:
    t = time.perf_counter()
    r = subprocess.run(cmd, env=env, capture_output=True)
    wall = time.perf_counter() - t
    if r.returncode not in (0,):
        raise SystemExit(f"failed: {' '.join(cmd)}\n{r.stderr.decode()[-2000:]}")
    return wall, orjson.loads(r.stdout)


def fig(xs: list[float]) -> str:
    return f"{statistics.median(xs):.2f} s (min {min(xs):.2f}, max {max(xs):.2f})"


def common(ap: argparse.ArgumentParser) -> argparse.Namespace:
    """The corpus and the PostgreSQL server, as both benchmarks take them."""
    ap.add_argument("--corpus", type=Path, default=Path("/work/shared/corpus/claude-code"))
    ap.add_argument("--postgres", default=os.environ.get("ASZ_TEST_POSTGRES") or "postgresql://postgres@127.0.0.1:5432/postgres")
    return ap.parse_args()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=3)
    ap.add_argument("--copies", type=int, default=3)
    args = common(ap)
    base = Path(tempfile.mkdtemp(prefix="asz-bench-push-"))
    try:
        folder = projects_folder(args.corpus, base / "claude", args.copies) / "projects"
        size = sum(f.stat().st_size for f in folder.rglob("*.jsonl"))
        print(f"python {sys.executable}; corpus x{args.copies}: {size / 1e6:.1f} MB in {sum(1 for _ in folder.rglob('*.jsonl'))} files")
        lite, push, pgc = [], [], []
        records = sent = requests = 0
        for i in range(args.n):
            home = base / f"home{i}"
            env = {k: v for k, v in os.environ.items() if k not in ("ASZ_STORE", "ASZ_TOKEN")}
            env["ASZ_HOME"] = str(home)
            wall, got = timed([str(ASZ), "collect", str(folder), "--json"], env)
            lite.append(wall)
            records = got["records_published"]
            db = Database(args.postgres, f"asz_bench_push_{os.getpid()}")
            server = None
            try:
                server, url = start_server(db.url, base / "server-home")
                tok = token(db.url, "bench", base / "server-home")
                wall, got = timed([str(ASZ), "push", "--server", url, "--json"], {**env, "ASZ_TOKEN": tok})
                push.append(wall)
                assert got["records"] == records and got["rounds"] > 0, got
                sent, requests = got["bytes"], got["requests"]
            finally:
                if server is not None:
                    server.terminate()
                    server.wait(30)
                db.drop()
            db = Database(args.postgres, f"asz_bench_pgc_{os.getpid()}")
            try:
                wall, got = timed([str(ASZ), "collect", str(folder), "--json"],
                                  {**env, "ASZ_HOME": str(base / f"pghome{i}"), "ASZ_STORE": db.url})
                pgc.append(wall)
            finally:
                db.drop()
            shutil.rmtree(home, ignore_errors=True)
        m_lite, m_push, m_pgc = (statistics.median(x) for x in (lite, push, pgc))
        print(f"records: {records}")
        print(f"collect into SQLite:        {fig(lite)}; {records / m_lite:,.0f} records/s; {size / 1e6 / m_lite:.1f} MB/s")
        print(f"push to asz server (PG):    {fig(push)}; {records / m_push:,.0f} records/s; {sent / 1e6:.1f} MB sent in "
              f"{requests} requests")
        print(f"collect into PostgreSQL:    {fig(pgc)}; {records / m_pgc:,.0f} records/s")
        print(f"push / SQLite collect: {m_push / m_lite:.2f}x; PostgreSQL collect / SQLite collect: {m_pgc / m_lite:.2f}x")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
