"""Store-content check: collect the whole corpus (and hostile copies of it) and dump every table.

    python bench/store_check.py --save /tmp/base.dump            # with the code to compare against
    python bench/store_check.py --against /tmp/base.dump         # after a change: same content?

A speed change to reading (adapters, jsonl, textclip, store.prepare) must leave the store
byte-identical. This script builds, in fresh ASZ_HOMEs under ``--work`` (default
/tmp/store-check), stores from:

* ``corpus``: every runtime's corpus folder (../shared/corpus) plus hostile files (each field of
  real lines replaced in turn by a list, an object, deep nesting, null, numbers, strings, as
  tests/adapters/test_hostile_shapes.py builds them, and more of the same over one file of each
  Claude Code corpus project), in one collect (``ASZ_PROCESSES=1``), then the benchmark projects
  folder (``--projects``, copies of the same sessions) collected into the same store;
* ``projects``: the projects folder alone, with the forked reader (``ASZ_PROCESSES=2``);
* ``grown``: hostile and corpus files collected in two halves, the first cut in the middle of a
  line (a cursor, a file read on from it, a truncated last line).

and dumps, per store, every table (records with their events, raw bytes as sha256; files;
calls; sessions; conversations and rounds without their landing times; any other table whole) and what each collect
printed with ``--json`` (its warnings) without times. ``--save`` writes the dump; ``--against``
compares and prints the first differing lines of each part (exit 1 on any difference).
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("ASZ_CORPUS") or ROOT.parent / "shared" / "corpus")
MTIME = 1_700_000_000  # files written here get this mtime, so the files table compares

# Values each field of a real line is replaced with, beyond the test's list/object/deep ones.
SCALARS = [None, 0, -1, 1.5, True, "", "x", [], {}]


def asz() -> str:
    return str(Path(sys.executable).parent / "asz")


def collect(home: Path, paths: list[Path], jobs: str) -> dict[str, Any]:
    env = {**os.environ, "ASZ_HOME": str(home), "ASZ_PROCESSES": jobs}
    p = subprocess.run([asz(), "collect", *map(str, paths), "--json"], env=env, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        raise SystemExit(f"collect failed ({p.returncode}): {p.stderr[-2000:]}")
    out = json.loads(p.stdout)
    for r in out.get("rounds", []):
        r.pop("landed", None)
    out.pop("seconds", None)
    return out


def dump(home: Path) -> list[str]:
    db = sqlite3.connect(home / "asz.db")
    lines: list[str] = []

    def q(title: str, sql: str, fix: Any = None) -> None:
        lines.append(f"## {title}")
        for row in db.execute(sql):
            row = list(row)
            if fix:
                row = fix(row)
            lines.append(json.dumps([x.hex() if isinstance(x, bytes) else x for x in row], ensure_ascii=False))

    def rec(row: list[Any]) -> list[Any]:
        row[11] = hashlib.sha256(row[11]).hexdigest()  # raw
        row[12] = row[12].decode()  # events, as stored
        return row

    q("meta", "SELECT * FROM meta ORDER BY key")
    q("conversations", "SELECT id, runtime FROM conversations ORDER BY id")
    q("sessions", "SELECT rowid, session, conversation FROM sessions ORDER BY rowid")
    q("rounds", "SELECT conversation, number, parent, head, records FROM rounds ORDER BY conversation, number")
    q("records", "SELECT seq, conversation, key, version, round, digest, stream, kind, file, line, ts, raw, events "
                 "FROM records ORDER BY seq", rec)
    q("files", "SELECT path, runtime, size, mtime_ns, offset, line, tail, state FROM files ORDER BY path")
    q("calls", "SELECT rowid, call, conversation FROM calls ORDER BY rowid")
    # Any other table (one added since this script was written), every column, in rowid order.
    known = {"meta", "conversations", "sessions", "rounds", "records", "files", "calls"}
    for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").fetchall():
        if name not in known and not name.startswith("sqlite_"):
            q(name, f'SELECT * FROM "{name}" ORDER BY rowid')
    db.close()
    return lines


# --- hostile files ---------------------------------------------------------------------------------

def _hostile_module() -> Any:
    sys.path.insert(0, str(ROOT / "tests" / "adapters"))
    import test_hostile_shapes as th  # noqa: PLC0415 - the test's own builders of hostile lines

    return th


def _cc_key(o: dict[str, Any]) -> Any:
    msg = o.get("message") if isinstance(o.get("message"), dict) else {}
    content = msg.get("content")
    blocks = tuple(sorted({str(b.get("type")) for b in content if isinstance(b, dict)})) if isinstance(content, list) else type(content).__name__
    return (o.get("type"), o.get("subtype"), blocks, bool(o.get("isSidechain")), bool(o.get("isMeta")),
            type(o.get("toolUseResult")).__name__, "usage" in msg, "requestId" in o, o.get("operation"))


def build_hostile(dest: Path) -> list[Path]:
    th = _hostile_module()
    made = []
    for name, (build, _src) in th.BUILD.items():
        d = dest / name
        d.mkdir(parents=True)
        made.append(build(d)[0])
    # More Claude Code shapes: of one file per corpus project, the first line of each shape, with
    # each field replaced by every hostile value in turn (the test's and the scalars above).
    values = list(th.HOSTILE.values()) + SCALARS
    cc = dest / "cc-more"
    cc.mkdir()
    for i, project in enumerate(sorted((CORPUS / "claude-code").iterdir())):
        if not project.is_dir():
            continue
        files = sorted(project.rglob("*.jsonl"), key=lambda p: (-p.stat().st_size, str(p)))
        if not files:
            continue
        src = files[0]
        objs = []
        for x in src.read_text(encoding="utf-8").splitlines():
            try:
                o = json.loads(x)
            except ValueError:
                continue
            if isinstance(o, dict):
                objs.append(o)
        picks = th._firsts(objs, _cc_key)
        out = []
        n = 0
        for o in picks:
            for p in th.paths(o, depth=4):
                for v in values:
                    n += 1
                    m = copy.deepcopy(o)
                    m["uuid"] = f"hostile-{i}-{n}"
                    if isinstance(m.get("message"), dict) and "id" in m["message"]:
                        m["message"]["id"] = f"msg_hostile_{i}_{n}"
                    out.append(th.dumps(th.replaced(m, p, v)))
        f = cc / f"{src.stem}.jsonl"
        f.write_text("\n".join(out) + "\n", encoding="utf-8")
        made.append(f)
    for f in dest.rglob("*"):
        if f.is_file():
            os.utime(f, (MTIME, MTIME))
    return made


# --- the runs --------------------------------------------------------------------------------------

def run(work: Path, projects: Path) -> dict[str, list[str]]:
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    hostile = work / "hostile"
    made = build_hostile(hostile)
    out: dict[str, list[str]] = {}

    home = work / "h-corpus"
    runtimes = sorted(p for p in CORPUS.iterdir() if p.is_dir())
    printed = [collect(home, [*runtimes, hostile], "1"), collect(home, [projects], "1")]
    out["corpus"] = [json.dumps(p, ensure_ascii=False, sort_keys=True) for p in printed] + dump(home)

    home = work / "h-projects"
    out["projects"] = [json.dumps(collect(home, [projects], "2"), ensure_ascii=False, sort_keys=True)] + dump(home)

    # Grown files: the first half (cut inside a line), collected, then the whole.
    home, grow = work / "h-grown", work / "grown"
    grow.mkdir()
    cc = CORPUS / "claude-code"
    picks = [f for f in made if f.suffix == ".jsonl" and "codex" not in str(f) and "langsmith" not in str(f)]
    picks += sorted(cc.rglob("*.jsonl"), key=lambda p: (-p.stat().st_size, str(p)))[:3]
    pairs = []
    for i, src in enumerate(picks):
        d = grow / f"{i:02d}"
        d.mkdir()
        data = src.read_bytes()
        cut = data[: len(data) // 2]
        cut = cut[: cut.rfind(b"\n") + 1 + 7]  # seven bytes into a line: a truncated last line
        dst = d / src.name
        dst.write_bytes(cut)
        os.utime(dst, (MTIME, MTIME))
        pairs.append((dst, data))
    printed = [collect(home, [grow], "1")]
    for dst, data in pairs:
        dst.write_bytes(data)
        os.utime(dst, (MTIME + 1, MTIME + 1))
    printed.append(collect(home, [grow], "1"))
    out["grown"] = [json.dumps(p, ensure_ascii=False, sort_keys=True) for p in printed] + dump(home)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--save", type=Path)
    g.add_argument("--against", type=Path)
    ap.add_argument("--projects", type=Path, default=Path("/tmp/s21/projects"))
    ap.add_argument("--work", type=Path, default=Path("/tmp/store-check"))
    a = ap.parse_args()
    got = run(a.work, a.projects)
    for part, lines in got.items():
        print(f"{part}: {len(lines)} lines, sha256 {hashlib.sha256(chr(10).join(lines).encode()).hexdigest()[:16]}")
    if a.save:
        a.save.write_text(json.dumps(got, ensure_ascii=False))
        print(f"saved {a.save}")
        return
    want = json.loads(a.against.read_text())
    bad = 0
    for part in want.keys() | got.keys():
        w, g2 = want.get(part, []), got.get(part, [])
        if w == g2:
            print(f"{part}: identical")
            continue
        bad += 1
        print(f"{part}: DIFFERENT ({len(w)} lines before, {len(g2)} now)")
        shown = 0
        for i in range(max(len(w), len(g2))):
            x, y = (w[i] if i < len(w) else None), (g2[i] if i < len(g2) else None)
            if x != y:
                x, y = str(x), str(y)
                at = next((j for j, (c, d) in enumerate(zip(x, y)) if c != d), min(len(x), len(y)))
                cut = max(0, at - 300)  # where the two first differ, with what comes before it
                print(f"  line {i}, from character {cut}:\n   before {x[cut:at + 300]}\n   now    {y[cut:at + 300]}")
                shown += 1
                if shown >= 5:
                    break
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
