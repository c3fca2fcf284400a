"""How fast a day's growth (``asz collect`` + ``asz ledger --by day``) could be, in Python, on the
design asz is built on, beside ccusage ``daily`` and asz itself.

    python bench/growth_floor.py [--runs 7] [--copies 3] [--corpus DIR] [--ccusage BIN]

Issue 28 asks for a day's growth in at most 0.5x ccusage ``daily``. The folder and the growth are
bench/daily.py's (the Claude Code corpus laid out ``--copies`` times; the largest main-stream
transcript's last 20% of lines appended). Each step is two fresh Python processes, as the two
commands are, and each adds one thing to the one before:

1. ``bare``: ``python -c pass``, twice: the interpreter (this checkout's venv, site included).
2. ``imports``: each process imports what any asz command on this design loads before its own code:
   attrs (the design card: records are frozen attrs classes, the adapters' Entry included), orjson
   (the store's JSON), sqlite3 (the store) and hashlib (records' digests).
3. ``work``: + the least a growth's two commands do. The first opens the store, reads the grown
   file from its cursor (the size it had), decodes each new line with orjson, takes its SHA-256 and
   writes one row per line (key, digest, bytes) in a transaction synced at the commit. The second
   reads the kept ledger summaries (asz's 16 files) with orjson, sums every conversation's calls
   per day from them, decodes the grown file's new lines again to count their usage, and prints
   one line per day. No events, sessions, resumes, rounds, pricing or tables: asz does all of that
   on top.
4. ``asz``: this checkout's ``asz collect FOLDER`` + ``asz ledger --by day`` (tables), over a
   copy of the store as it was before the growth (bench/daily.py's growth).

Printed: the median wall and CPU seconds of each step and of ccusage ``daily --offline``, the
ratio to ccusage's median and issue 28's goal (<= 0.5x). What lies between ``work`` and ``asz`` is
asz's own code and imports; what lies below ``work`` no change of asz's own code can take away.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from daily import Day  # noqa: E402
from vs_ccusage import Asz, find_ccusage, folder_args, measure  # noqa: E402

IMPORTS = "import attrs, orjson, sqlite3, hashlib, hmac\n"

COLLECT = IMPORTS + r"""
import os, sys
home, grown, start = sys.argv[1], sys.argv[2], int(sys.argv[3])
db = sqlite3.connect(os.path.join(home, "floor.db"), isolation_level=None)
db.execute("PRAGMA journal_mode=WAL"); db.execute("PRAGMA synchronous=NORMAL")
db.execute("CREATE TABLE IF NOT EXISTS records(key TEXT, digest BLOB, raw BLOB)")
rows = []
with open(grown, "rb") as f:
    f.seek(start)
    for line in f:
        obj = orjson.loads(line)
        rows.append((obj.get("uuid"), hashlib.sha256(line).digest(), line))
db.execute("BEGIN")
db.executemany("INSERT INTO records VALUES(?, ?, ?)", rows)
db.execute("COMMIT")
print(f"{len(rows)} new records")
"""

LEDGER = IMPORTS + r"""
import os, sys
home, grown, start = sys.argv[1], sys.argv[2], int(sys.argv[3])
days = {}
folder = os.path.join(home, "cache", "ledger")
with open(os.path.join(home, "cache", "assembly.key"), "rb") as f:
    key = f.read()
for name in sorted(os.listdir(folder)):
    with open(os.path.join(folder, name), "rb") as f:
        data = f.read()
    # signed as asz signs its cache (asz_core/signed.py): an HMAC-SHA256 tag, then the JSON
    tag, body = data[:32], data[32:]
    if not hmac.compare_digest(tag, hmac.new(key, body, hashlib.sha256).digest()):
        continue
    kept = orjson.loads(body)
    # whatever the kept file's shape: every number under it is summed, by the key it sits under
    stack = [kept]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            for k, w in v.items():
                if isinstance(w, (int, float)):
                    days[k[:10]] = days.get(k[:10], 0) + w
                else:
                    stack.append(w)
        elif isinstance(v, list):
            stack.extend(v)
with open(grown, "rb") as f:
    f.seek(start)
    for line in f:
        obj = orjson.loads(line)
        u = (obj.get("message") or {}).get("usage") if isinstance(obj.get("message"), dict) else None
        if isinstance(u, dict):
            day = str(obj.get("timestamp", ""))[:10]
            days[day] = days.get(day, 0) + sum(v for v in u.values() if type(v) is int)
for day in sorted(days)[-40:]:
    print(day, days[day])
"""


def main() -> None:
    ap = folder_args(__doc__)
    ap.set_defaults(runs=7)
    args = ap.parse_args()
    ccusage = find_ccusage(args.ccusage)
    asz = Asz("asz", None)
    py = sys.executable
    walls: dict[str, list[float]] = {}
    cpus: dict[str, list[float]] = {}

    def note(key: str, wall: float, cpu: float) -> None:
        walls.setdefault(key, []).append(wall)
        cpus.setdefault(key, []).append(cpu)

    with tempfile.TemporaryDirectory(prefix="asz-growth-floor-") as tmp:
        day = Day(Path(tmp), args.corpus, args.copies, asz)
        grown, start = str(day.grows), len(day.before)
        env = dict(os.environ)
        print(f"folder: {day.files} files, {day.size / 1e6:.1f} MB; the day's growth: {len(day.rest) / 1e6:.2f} MB "
              f"appended to one {(len(day.before) + len(day.rest)) / 1e6:.2f} MB conversation")
        print(f"ccusage: {ccusage or 'not found: no ratios'}; {args.runs} runs, interleaved; "
              f"load average before {os.getloadavg()[0]:.2f}; {os.cpu_count()} cpus")

        def two(key: str, first: list[str], second: list[str], home: Path | None = None) -> None:
            e = env if home is None else dict(asz.env, ASZ_HOME=str(home))
            w1, c1, _, _ = measure(first, e)
            w2, c2, _, _ = measure(second, e)
            note(key, w1 + w2, c1 + c2)

        def bare(i: int) -> None:
            two("1 bare", [py, "-c", "pass"], [py, "-c", "pass"])

        def imports(i: int) -> None:
            two("2 imports", [py, "-c", IMPORTS], [py, "-c", IMPORTS])

        def work(i: int) -> None:
            home = day.grow()  # the store of before (its kept summaries) and the grown file
            two("3 work", [py, "-c", COLLECT, str(home), grown, str(start)],
                [py, "-c", LEDGER, str(home), grown, str(start)])

        def real(i: int) -> None:
            home = day.grow()
            two("4 asz", asz.command("collect", str(day.folder)), asz.command("ledger", "--by", "day"), home)

        def cc(i: int) -> None:
            w, c, _, _ = measure([str(ccusage), "daily", "--offline"], day.cc_env)
            note("ccusage daily", w, c)

        jobs = [bare, imports, work, real] + ([cc] if ccusage else [])
        for i in range(args.runs):
            k = i % len(jobs)
            for job in jobs[k:] + jobs[:k]:
                job(i)
        print(f"load average after {os.getloadavg()[0]:.2f}")
        shutil.rmtree(Path(tmp) / "home-growing", ignore_errors=True)

    cc_med = statistics.median(walls["ccusage daily"]) if "ccusage daily" in walls else None
    print(f"\n{'':16}  {'wall s':>7}  {'min s':>6}  {'cpu s':>6}  {'x ccusage':>9}  goal <= 0.5x")
    for key in sorted(walls):
        med = statistics.median(walls[key])
        ratio = f"{med / cc_med:9.2f}" if cc_med and key != "ccusage daily" else f"{'':9}"
        goal = ("met" if med / cc_med <= 0.5 else "MISSED") if cc_med and key != "ccusage daily" else ""
        print(f"{key:16}  {med:7.3f}  {min(walls[key]):6.3f}  {statistics.median(cpus[key]):6.3f}  {ratio}  {goal}")


if __name__ == "__main__":
    main()
