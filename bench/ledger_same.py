"""Whether this checkout's `asz ledger --json` prints, byte for byte, what another checkout's does.

    python bench/ledger_same.py --before SRC [--folder DIR ...] [--no-corpus] [--no-each]

SRC is the root of another asz checkout (e.g. ``git worktree add /tmp/base main``). Each store
(the corpus's four runtimes, ../shared/corpus, one collect each; each ``--folder`` as a store of
its own) is collected by this asz and by the other; each asz then reads a copy of each, in an
ASZ_HOME at the same path, and prints the ledger of all with every ``--by``, with ``--since``/``--until`` (apart and together, as dates and
as instants) and ``--timezone`` (the system's, UTC, zones east and west of it), each twice (the
first computes the summaries, the second reads those kept), and the ledger of each conversation
(``--no-each``: not). Printed: how many outputs were compared, and each one that differs. Exit
status 1 when any differs. Nothing is timed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from vs_ccusage import DISTS, MAIN  # noqa: E402  (the distributions and the command's entry point, as there)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CORPUS = Path(os.environ.get("ASZ_CORPUS") or ROOT.parent / "shared" / "corpus")
RUNTIMES = ("claude-code", "codex", "kiro", "langsmith")

LEDGERS: tuple[tuple[str, ...], ...] = (
    (), ("--by", "talk"), ("--by", "stream"), ("--by", "model"), ("--by", "day"), ("--by", "project"),
    ("--since", "2025-08-01"), ("--until", "2025-08-01"), ("--since", "2025-07-01", "--until", "2025-10-15"),
    ("--since", "2025-09-03T10:00:00Z", "--until", "2025-09-20T18:30:00+02:00", "--by", "model"),
    ("--since", "2026-01-01", "--by", "day"), ("--until", "2020-01-01"),
    ("--by", "day", "--timezone", "UTC"), ("--by", "day", "--timezone", "Asia/Kolkata"),
    ("--by", "day", "--timezone", "America/Los_Angeles"), ("--by", "day", "--timezone", "local"),
    ("--since", "2025-08-01", "--by", "day", "--timezone", "Pacific/Kiritimati"),
    ("--by", "model", "--timezone", "-09:30"),
)


def env_of(src: Path | None, home: Path) -> dict[str, str]:
    env = dict(os.environ, ASZ_HOME=str(home), TZ=os.environ.get("TZ", "Europe/Paris"))
    if src is not None:
        paths = [str(src / d / "src") for d in DISTS if (src / d / "src").is_dir()]
        env["PYTHONPATH"] = os.pathsep.join([*paths, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def asz(env: dict[str, str], src: Path, *args: str) -> bytes:
    """What the command printed and its exit status, the checkout's own folder written ``<src>``
    (the shipped price file is named by its path)."""
    r = subprocess.run([sys.executable, "-c", MAIN, *args], env=env, capture_output=True)
    out = b"exit %d\n" % r.returncode + r.stdout + b"\nstderr:\n" + r.stderr
    return out.replace(str(src).encode(), b"<src>")


def collected(src: Path | None, folders: list[Path], home: Path) -> Path:
    """A store of ``folders`` collected by the asz at ``src`` (None: this one) into ``home``."""
    env = env_of(src, home)
    for f in folders:
        asz(env, src or ROOT, "collect", str(f), "--json")
    return home / "asz.db"


def outputs(src: Path | None, db: Path, home: Path, each: bool) -> dict[str, bytes]:
    """Every ledger the asz at ``src`` prints of a copy of the store ``db`` (its own kept summaries)."""
    if home.exists():
        shutil.rmtree(home)
    home.mkdir(parents=True)
    shutil.copyfile(db, home / "asz.db")
    env, root = env_of(src, home), src or ROOT
    out: dict[str, bytes] = {}
    for opts in LEDGERS:
        for time in ("first", "kept"):
            out[f"ledger {' '.join(opts)} ({time})"] = asz(env, root, "ledger", "--json", *opts)
    if each:
        import json

        listed = json.loads(asz(env, root, "ledger", "--json").split(b"\n", 1)[1].split(b"\nstderr:")[0])
        for row in listed["rows"]:
            out[f"ledger {row['key']}"] = asz(env, root, "ledger", row["key"], "--json")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", type=Path, required=True, help="the root of another asz checkout")
    ap.add_argument("--folder", type=Path, action="append", default=[], help="a folder collected as a store of its own")
    ap.add_argument("--no-corpus", action="store_true", help="not the corpus's four runtimes")
    ap.add_argument("--no-each", action="store_true", help="not each conversation's own ledger")
    args = ap.parse_args()
    stores: dict[str, list[Path]] = {}
    if not args.no_corpus:
        stores["corpus"] = [CORPUS / r for r in RUNTIMES]
    for f in args.folder:
        stores[str(f)] = [f]
    before_src = args.before.resolve()
    after: dict[str, bytes] = {}
    before: dict[str, bytes] = {}
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"  # every ledger runs at the same path: the outputs name none other
        for name, folders in stores.items():
            # Each store as either asz collected it (this one's holds the lean events the ledger
            # reads; the other's has none: read from the records), read by both. Not compared
            # across stores: conversations made in the same millisecond list in id order, so
            # two collects may list them otherwise.
            for by, src in (("this asz", None), ("the other asz", before_src)):
                db = collected(src, folders, Path(tmp) / "collect")
                kept = Path(tmp) / "asz.db"
                shutil.copyfile(db, kept)
                shutil.rmtree(Path(tmp) / "collect")
                for k, v in outputs(None, kept, home, not args.no_each).items():
                    after[f"{name}, collected by {by}: {k}"] = v
                for k, v in outputs(before_src, kept, home, not args.no_each).items():
                    before[f"{name}, collected by {by}: {k}"] = v
    differ = [k for k in after if after[k] != before.get(k)]
    import difflib

    for k in differ:
        lines = difflib.unified_diff(before.get(k, b"").decode(errors="replace").splitlines(),
                                     after[k].decode(errors="replace").splitlines(), "before", "after", n=2, lineterm="")
        print(f"DIFFERS: {k}\n  " + "\n  ".join(list(lines)[:30]))
    failed = [k for k in after if not after[k].startswith(b"exit 0\n")]
    print(f"{len(after)} outputs compared, {len(differ)} differ; {len(failed)} exited non-zero"
          + (f" (e.g. {failed[0]})" if failed else ""))
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
