"""How fast any collect that keeps what asz's store keeps could be, in Python, on one folder.

    python bench/collect_floor.py [--runs 5] [--copies 3] [--corpus DIR] [--ccusage BIN]

Issue 16 asks for a first ``asz collect`` + ``asz ledger --json`` within 2.0x of ccusage. This
bench measures the floor under that: stripped-down collects that do only part of the work, each
step adding one thing a store of every record must do, each a fresh Python process (as a command
is), over the same folder as bench/vs_ccusage.py (the Claude Code corpus laid out as a projects
folder, ``--copies`` times with their own ids). None of them builds events, assigns streams,
detects resumes, prices or sums anything: asz does all of that on top.

1. ``start``: the interpreter and the three modules every step needs (sqlite3, hashlib, orjson).
2. ``read``: + every file read whole.
3. ``parse``: + every line decoded with orjson (asz must read a line to know its key and kind).
4. ``digest``: + the SHA-256 of every line (a round's head is the digest of its records' digests).
5. ``store``: + every record written to SQLite in one transaction, as small as a record can be:
   conversation, key, version and digest in a row with the unique index on (key, conversation,
   version) that finds a record again, and its bytes (the store keeps them: transcripts get deleted),
   16 KiB pages, a rollback journal synced at the commit (what a new store's first collect uses).

Printed: each step's median wall and CPU (user + system, from wait4) seconds and their ratio to
ccusage 20.0.24 ``session --json --offline`` run interleaved with them. On two cores a collect split
over two processes cannot take less wall time than half its CPU.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from vs_ccusage import find_ccusage, folder_args, projects_folder  # noqa: E402

_STEPS = {
    "start": "",
    "read": "for f in files:\n    data = open(f, 'rb').read()\n",
    "parse": "for f in files:\n    for line in open(f, 'rb').read().split(b'\\n'):\n        if line:\n            loads(line)\n",
    "digest": "for f in files:\n    for line in open(f, 'rb').read().split(b'\\n'):\n        if line:\n            loads(line); sha(line).digest()\n",
    "store": """
db = sqlite3.connect(out, isolation_level=None)
db.execute('PRAGMA page_size=16384'); db.execute('PRAGMA synchronous=FULL')
db.execute('CREATE TABLE records(seq INTEGER PRIMARY KEY, conversation TEXT, key TEXT, version INTEGER, digest BLOB, raw BLOB)')
db.execute('CREATE UNIQUE INDEX records_key ON records(key, conversation, version)')
db.execute('BEGIN')
q = 'INSERT OR IGNORE INTO records(conversation, key, version, digest, raw) VALUES(?,?,?,?,?)'
rows = []
for f in files:
    conv = os.path.basename(f)[:36]
    for n, line in enumerate(open(f, 'rb').read().split(b'\\n')):
        if line:
            o = loads(line)
            key = o.get('uuid') if type(o) is dict else None
            rows.append((conv, key if isinstance(key, str) else str(n), 1, sha(line).digest(), line))
            if len(rows) == 512:
                db.executemany(q, rows); rows.clear()
db.executemany(q, rows)
db.execute('COMMIT')
""",
}

_HEAD = "import sys, os, sqlite3, hashlib, orjson\nloads, sha = orjson.loads, hashlib.sha256\nfiles = sys.argv[1:-1]\nout = sys.argv[-1]\n"


def _run(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one process."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {cmd[:3]} …")
    return wall, ru.ru_utime + ru.ru_stime


def main() -> None:
    args = folder_args(__doc__).parse_args()
    ccusage = find_ccusage(args.ccusage)
    with tempfile.TemporaryDirectory(prefix="asz-floor-") as tmp:
        cfg = projects_folder(args.corpus, Path(tmp) / "claude", args.copies)
        files = sorted(str(f) for f in (cfg / "projects").rglob("*.jsonl"))
        size = sum(os.path.getsize(f) for f in files)
        print(f"folder: {len(files)} files, {size / 1e6:.1f} MB; {args.runs} runs, interleaved; "
              f"load average {os.getloadavg()[0]:.1f}; {os.cpu_count()} cpus; ccusage: {ccusage or 'not found'}")
        jobs = list(_STEPS) + (["ccusage"] if ccusage else [])
        wall: dict[str, list[float]] = {j: [] for j in jobs}
        cpu: dict[str, list[float]] = {j: [] for j in jobs}
        db = str(Path(tmp) / "floor.db")
        for i in range(args.runs):
            for job in jobs[i % len(jobs):] + jobs[: i % len(jobs)]:
                if job == "ccusage":
                    env = dict(os.environ, CLAUDE_CONFIG_DIR=str(cfg), NO_COLOR="1")
                    w, c = _run([str(ccusage), "session", "--json", "--offline"], env)
                else:
                    if os.path.exists(db):
                        os.unlink(db)
                    w, c = _run([sys.executable, "-c", _HEAD + _STEPS[job], *files, db])
                wall[job].append(w)
                cpu[job].append(c)
    cc = statistics.median(wall["ccusage"]) if ccusage else None
    print(f"\n{'step':8}  {'wall s':>7}  {'CPU s':>6}  {'wall x ccusage':>14}  {'CPU/2 x ccusage':>15}")
    for job in jobs:
        w, c = statistics.median(wall[job]), statistics.median(cpu[job])
        r1 = f"{w / cc:14.2f}" if cc else f"{'-':>14}"
        r2 = f"{c / 2 / cc:15.2f}" if cc else f"{'-':>15}"
        print(f"{job:8}  {w:7.3f}  {c:6.3f}  {r1}  {r2}")


if __name__ == "__main__":
    main()
