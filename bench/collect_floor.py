"""How fast any collect that keeps what asz's store keeps could be, in Python, on one folder.

    python bench/collect_floor.py [--runs 5] [--copies 3] [--corpus DIR] [--ccusage BIN]

(``python`` being the checkout's .venv/bin/python: some steps import asz_core.)

Issue 16 asks for a first ``asz collect`` + ``asz ledger --json`` within 2.0x of ccusage. This
bench measures the floor under that: stripped-down collects that do only part of the work, each a
fresh Python process (as a command is), over the same folder as bench/vs_ccusage.py (the Claude
Code corpus laid out as a projects folder, ``--copies`` times with their own ids). None of them
builds events, assigns streams, binds sessions, detects resumes, keeps rounds and heads or a files
table, checks a line's shape or says a warning: asz does all of that on top (the lazy design builds
events later, on a conversation's first view: not measured here). Every step runs with
Python's cycle collector off (asz's collect pauses it too, ``gcpause``).

One process, each step adding one thing a store of every record must do:

1. ``start``: the interpreter and the modules the steps need (sqlite3, hashlib, orjson, marshal).
2. ``read``: + every file read whole.
3. ``parse``: + every line decoded with orjson (asz must read a line to know its key and kind).
4. ``digest``: + the SHA-256 of every line (a round's head is the digest of its records' digests).
5. ``store``: + every record written to SQLite in one transaction, as small as a record can be:
   conversation, key, version and digest in a row with the unique index on (key, conversation,
   version) that finds a record again, and its bytes (the store keeps them: transcripts get deleted),
   16 KiB pages, a rollback journal synced at the commit (what a new store's first collect uses,
   with Linux told to start writing every 16 MiB, as asz's first collect does: writeback.py).
6. ``blocks``: ``store`` with the records written as fewer, larger rows: one row per about
   :data:`BLOCK` bytes of one file's consecutive records (their keys, their offsets, their digests
   concatenated, their bytes concatenated; the small columns first), plus the key table a later
   collect's resume look-up needs (WITHOUT ROWID, key + conversation + version -> block and place,
   inserted in key order at the end).

Steps 1-6 take a file's name as its conversation. They do not decode what a ledger needs.

The redesign issue 16 names (raw lines and a lean table at collect, events built later per
conversation on first view), at its floor:

7. ``lazy rows``: two processes, as asz's collect reader is (asz_core/collect_reader.py). A forked
   reader reads every file, decodes every line with orjson and takes from it only what a store
   decision and the ledger need: uuid, sessionId, and on an assistant line with usage (timestamp,
   isSidechain, message.model, message.id, requestId, message.usage's four token counts). It
   sends compact tuples, the line's bytes in them, in marshal frames of about :data:`FRAME`
   bytes over a pipe. The parent skips a (key, conversation) already taken (asz's first collect
   answers resume look-ups from memory), computes each record's SHA-256 and writes ``store``'s
   row per record, with the unique index built once before the commit (as asz's first collect
   does), and a lean table (one row per conversation: its usage tuples, marshalled), in one
   transaction, synced, with ``store``'s writeback.
8. ``lazy blocks``: the same, with ``blocks``' rows and key table; the reader cuts the blocks (a
   slice of the file each, with each line's start and end in it, at most one conversation each).
   A copy of a record already taken stays in its block and its usage in the lean table (the
   ledger counts a message once anyway), only left out of the key table: asz would leave it out
   of the block too, more work.
9. ``lazy rows shared``, 10. ``lazy blocks shared``: 7 and 8 with no record's bytes on the pipe:
   the parent maps shared memory the size of every file before the fork, the reader reads each
   file into its place in it, and a record (a block) is sent as its start and end there. (Memory:
   the map holds the whole input, 95 MB; a ring of a few MiB would bound it, at the cost of the
   parent telling the reader what it may overwrite, left out.)
11. ``lazy blocks shared nokeys``: 10 without the key table: a later collect's resume look-up
    would read the keys of one conversation's blocks (an index on blocks' conversation, built
    before the commit) instead of one key's row.
12. ``ledger``: a fresh process reading the lean table back (written by ``lazy blocks`` once
    before the runs) and summing the four token counts per conversation and model, a message
    (message.id + requestId) counted once by its line with the most output tokens (as ccusage
    counts: the totals are ccusage's over this folder), with each conversation's last timestamp;
    printed as JSON. Left out: prices and costs, time zones and --since/--until, streams and
    side-chains, rounds and heads, projects, checking that a count is a number.

Left out by 7-11, beyond what 1-6 leave out: a record's kind, timestamp, file and line in its
row; the sessions, conversations and files tables; warnings for bad lines (a line orjson refuses
fails the step); a file's last line without its newline (taken whole here); a reader that dies
(asz reads its file again).

And the cost of starting a command:

13. ``python``: the bare interpreter (``python -c pass``).
14. ``asz import``: ``python -c 'import asz_core.main'``, the least any asz command imports (the
    lean entry point; ``asz collect`` imports much more behind it), its bytecode compiled first as
    an installed asz's is. Steps 1-12 pay ``python`` but not this difference, so the sums below add
    it once per command: two commands, collect and ledger.
15. ``asz collect, 1 file`` and 16. ``asz ledger, 1 file``: today's ``asz collect --json`` (into a
    new store) and ``asz ledger --json`` (over it) on one small file of the folder: what each
    command costs beyond its work today (imports, plugins, the store's schema). The sums' last line
    adds them in place of the steps' own ``start``: the floor if the redesign's commands started
    no faster than today's.

Printed: each step's median wall and CPU (user + system of the process and the reader it waited
for, from wait4) seconds and their ratios to ccusage 20.0.24 ``session --json --offline`` run
interleaved with them (the order rotates each run): wall to its wall, half the CPU to its wall (the
wall on two idle cores at best), CPU to its CPU (the steadiest on a busy machine); then the sums
"lazy collect + ledger" (medians added), with asz's start and with today's fixed costs; then, for
the two-process steps, the wall they would take on two idle cores, estimated from their phases
(each run's writer writes them beside the store): the writer's CPU up to the fork, plus the busier
of the reader's CPU and the writer's CPU until the reader ended, plus the wall of the writer's
tail after that (the late index or key table, the lean rows, the synced commit). Where another
process holds a core, the two take turns on the other and their measured wall is their CPU: the
estimate is what the design would give a user whose machine is not busy (it leaves out the wait
for the reader's first frame and any stall on the pipe: a few milliseconds on an idle machine). Steps 1-12
run this script again (``--step NAME OUT FILE...``), which imports only os, sys and array before
its step.
"""

from __future__ import annotations

import os
import sys
from array import array

BLOCK = 64 << 10
"""A block row holds one file's consecutive records up to about this many bytes (a longer record is a block alone)."""

FRAME = 1 << 20
"""The reader sends frames of about this many bytes (asz's collect reader's CHUNK_BYTES)."""

PIPE = 1 << 20
"""The pipe holds this much (asz's collect reader's PIPE_BYTES; more than /proc/sys/fs/pipe-max-size is refused)."""


# --- the steps, each in its own process ----------------------------------------------------------

def _modules():  # type: ignore[no-untyped-def]
    import gc
    import hashlib
    import marshal
    import sqlite3

    import orjson

    gc.disable()
    return sqlite3, hashlib.sha256, orjson.loads, marshal


def _lines(f: str) -> list[bytes]:
    with open(f, "rb") as fh:
        return fh.read().split(b"\n")


def step_start(files: list[str], out: str) -> None:
    _modules()


def step_read(files: list[str], out: str) -> None:
    _modules()
    for f in files:
        with open(f, "rb") as fh:
            fh.read()


def step_parse(files: list[str], out: str) -> None:
    _, _, loads, _ = _modules()
    for f in files:
        for line in _lines(f):
            if line:
                loads(line)


def step_digest(files: list[str], out: str) -> None:
    _, sha, loads, _ = _modules()
    for f in files:
        for line in _lines(f):
            if line:
                loads(line)
                sha(line).digest()


_PAGES = "PRAGMA page_size=16384", "PRAGMA synchronous=FULL"
_RECORDS = "CREATE TABLE records(seq INTEGER PRIMARY KEY, conversation TEXT, key TEXT, version INTEGER, digest BLOB, raw BLOB)"
_RECORDS_KEY = "CREATE UNIQUE INDEX records_key ON records(key, conversation, version)"
_INSERT_RECORD = "INSERT OR IGNORE INTO records(conversation, key, version, digest, raw) VALUES(?,?,?,?,?)"
# The small columns first: reading a block's keys then never walks the overflow pages of its bytes.
_BLOCKS = "CREATE TABLE blocks(id INTEGER PRIMARY KEY, conversation TEXT, keys TEXT, offsets BLOB, digests BLOB, raws BLOB)"
_BLOCKS_CONVERSATION = "CREATE INDEX blocks_conversation ON blocks(conversation)"
_KEYS = ("CREATE TABLE keys(key TEXT, conversation TEXT, version INTEGER, block INTEGER, place INTEGER, "
         "PRIMARY KEY(key, conversation, version)) WITHOUT ROWID")
_LEANS = "CREATE TABLE leans(conversation TEXT, part INTEGER, rows BLOB, PRIMARY KEY(conversation, part))"


def _open(sqlite3, out: str, *schema: str):  # type: ignore[no-untyped-def]
    db = sqlite3.connect(out, isolation_level=None)
    for sql in (*_PAGES, *schema):
        db.execute(sql)
    db.execute("BEGIN")
    return db


class _Writeback:
    """Has Linux start writing the store's pages to disk every 16 MiB written, so that the commit's
    sync waits for the last few only: what asz's first collect does (store.Writer, writeback.py)."""

    def __init__(self, out: str) -> None:
        from pathlib import Path

        from asz_core.writeback import Writeback

        self.writeback, self.unpushed = Writeback(Path(out)), 0

    def wrote(self, n: int) -> None:
        self.unpushed += n
        if self.unpushed >= 16 << 20:
            self.writeback.push()
            self.unpushed = 0


def _key(o: object, n: int) -> str:
    key = o.get("uuid") if type(o) is dict else None
    return key if type(key) is str else str(n)


def step_store(files: list[str], out: str) -> None:
    sqlite3, sha, loads, _ = _modules()
    db = _open(sqlite3, out, _RECORDS, _RECORDS_KEY)
    writeback = _Writeback(out)
    rows = []
    for f in files:
        conv = os.path.basename(f)[:36]
        for n, line in enumerate(_lines(f)):
            if line:
                rows.append((conv, _key(loads(line), n), 1, sha(line).digest(), line))
                writeback.wrote(len(line))
                if len(rows) == 512:
                    db.executemany(_INSERT_RECORD, rows)
                    rows.clear()
    db.executemany(_INSERT_RECORD, rows)
    db.execute("COMMIT")


def step_blocks(files: list[str], out: str) -> None:
    sqlite3, sha, loads, _ = _modules()
    db = _open(sqlite3, out, _BLOCKS, _KEYS)
    writeback = _Writeback(out)
    blocks, keys = [], []
    insert = "INSERT INTO blocks(conversation, keys, offsets, digests, raws) VALUES(?,?,?,?,?)"
    number = 0
    for f in files:
        conv = os.path.basename(f)[:36]
        raws, offs, digs, ks, size = [], array("I"), [], [], 0
        for n, line in enumerate(_lines(f)):
            if not line:
                continue
            key = _key(loads(line), n)
            keys.append((key, conv, 1, number + 1, len(ks)))
            raws.append(line)
            size += len(line)
            offs.append(size)  # each record's end in the block (its start is the one before's end)
            digs.append(sha(line).digest())
            ks.append(key)
            if size >= BLOCK:
                blocks.append((conv, "\n".join(ks), offs.tobytes(), b"".join(digs), b"".join(raws)))
                raws, offs, digs, ks, size = [], array("I"), [], [], 0
                number += 1
        if ks:
            blocks.append((conv, "\n".join(ks), offs.tobytes(), b"".join(digs), b"".join(raws)))
            number += 1
        if len(blocks) >= 64:
            db.executemany(insert, blocks)
            writeback.wrote(sum(len(b[-1]) for b in blocks))
            blocks.clear()
    db.executemany(insert, blocks)
    keys.sort()  # in key order SQLite appends to the table's B-tree instead of splitting it all over
    db.executemany("INSERT OR IGNORE INTO keys VALUES(?,?,?,?,?)", keys)
    db.execute("COMMIT")


def _usage(o: dict) -> tuple | None:  # type: ignore[type-arg]
    """What the ledger needs of a line: (timestamp, isSidechain, model, message.id, requestId,
    input, output, cache creation, cache read), on an assistant line with usage; else None."""
    m = o.get("message")
    if o.get("type") != "assistant" or type(m) is not dict:
        return None
    u = m.get("usage")
    if type(u) is not dict:
        return None
    return (o.get("timestamp"), o.get("isSidechain") is True, m.get("model"), m.get("id"), o.get("requestId"),
            u.get("input_tokens") or 0, u.get("output_tokens") or 0,
            u.get("cache_creation_input_tokens") or 0, u.get("cache_read_input_tokens") or 0)


def _reader(files: list[str], w: int, blocks: bool, shared, loads, marshal) -> None:  # type: ignore[no-untyped-def]
    """The forked reader: every file's records as tuples, in marshal frames on ``w``.

    A record is (key, conversation, usage, its bytes); a block, one file's consecutive records of one
    conversation, is (conversation, the file's slice, each line's start and end in it, keys,
    usages). With ``shared`` (a shared memory map the size of every file, made before the fork),
    each file is read into its place in the map and the bytes are not sent: a record sends the
    start and end of its line in the map instead, a block its start and end."""
    pipe = os.fdopen(w, "wb", buffering=0)
    frame: list[tuple] = []  # type: ignore[type-arg]
    sent = 0
    view = memoryview(shared) if shared is not None else None
    place = 0  # of this file in the map
    for f in files:
        stem = os.path.basename(f)[:-6]
        with open(f, "rb") as fh:
            if view is None:
                data = text = fh.read()
                place, end = 0, len(data)
            else:
                end = place + fh.readinto(view[place:place + os.fstat(fh.fileno()).st_size])
                data, text = view, shared  # slices of the view are not copies; the map can find
        at, n = place, 0
        start, block_conv, offs, ks, uses = 0, None, [], [], []
        while at < end:
            nl = text.find(b"\n", at, end)
            nl = end if nl < 0 else nl
            begin, at, n = at, nl + 1, n + 1
            if nl == begin:
                continue
            line = data[begin:nl]
            o = loads(line)
            if type(o) is dict:
                key, conv, use = o.get("uuid"), o.get("sessionId"), _usage(o)
                key = key if type(key) is str else str(n)
                conv = conv if type(conv) is str else stem
            else:
                key, conv, use = str(n), stem, None
            if not blocks:
                frame.append((key, conv, use, line) if view is None else (key, conv, use, begin, nl))
                sent += nl - begin
            else:
                if ks and (conv != block_conv or begin - start >= BLOCK):
                    frame.append(_block(data, view, block_conv, start, offs, ks, uses))
                    sent += offs[-1]
                    ks, offs, uses = [], [], []
                if not ks:
                    start, block_conv = begin, conv
                offs += (begin - start, nl - start)
                ks.append(key)
                if use is not None:
                    uses.append(use)
            if sent >= FRAME:  # (with ``shared``, of bytes read: the parent has work as soon)
                _send(pipe, marshal.dumps(frame, 4))
                frame, sent = [], 0
        if ks:
            frame.append(_block(data, view, block_conv, start, offs, ks, uses))
            sent += offs[-1]
        place = end
    if frame:
        _send(pipe, marshal.dumps(frame, 4))
    pipe.close()


def _block(data, view, conv: str, start: int, offs: list[int], ks: list[str], uses: list[tuple]) -> tuple:  # type: ignore[no-untyped-def, type-arg]
    if view is None:
        return conv, data[start:start + offs[-1]], offs, ks, uses
    return conv, start, offs, ks, uses


def _send(pipe, data: bytes) -> None:  # type: ignore[no-untyped-def]
    pipe.write(len(data).to_bytes(4, "little") + data)


def _lazy(files: list[str], out: str, blocks: bool, shared: bool = False, keys_table: bool = True) -> None:
    import time

    sqlite3, sha, loads, marshal = _modules()
    shm = None
    if shared:
        import mmap

        shm = mmap.mmap(-1, max(1, sum(os.path.getsize(f) for f in files)))  # MAP_SHARED: the reader's reads land here
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(r)
            _reader(files, w, blocks, shm, loads, marshal)
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    forked = _cpu()
    try:
        import fcntl

        fcntl.fcntl(r, 1031, PIPE)  # F_SETPIPE_SZ, as asz's reader sets it
    except (ImportError, OSError):
        pass
    pipe = os.fdopen(r, "rb", buffering=1 << 16)
    schema = ((_BLOCKS, _KEYS) if keys_table else (_BLOCKS,)) if blocks else (_RECORDS,)
    db = _open(sqlite3, out, *schema, _LEANS)
    writeback = _Writeback(out)
    view = memoryview(shm) if shm is not None else None
    seen: set[tuple[str, str]] = set()
    leans: dict[str, list[tuple]] = {}  # type: ignore[type-arg]
    rows, keys = [], []
    block = 0
    while head := pipe.read(4):
        for item in marshal.loads(pipe.read(int.from_bytes(head, "little"))):
            if not blocks:
                if view is None:
                    key, conv, use, raw = item
                else:
                    key, conv, use, begin, end = item
                    raw = view[begin:end]
                if (key, conv) in seen:
                    continue
                seen.add((key, conv))
                rows.append((conv, key, 1, sha(raw).digest(), raw))
                writeback.wrote(len(raw))
                if use is not None:
                    leans.setdefault(conv, []).append(use)
                if len(rows) == 512:
                    db.executemany(_INSERT_RECORD, rows)
                    rows.clear()
            else:
                conv, raws, offs, ks, uses = item
                raws = memoryview(raws) if view is None else view[raws:raws + offs[-1]]
                block += 1
                digests = b"".join([sha(raws[offs[i]:offs[i + 1]]).digest() for i in range(0, len(offs), 2)])
                for place, key in enumerate(ks):
                    if (key, conv) not in seen:
                        seen.add((key, conv))
                        if keys_table:
                            keys.append((key, conv, 1, block, place))
                rows.append((block, conv, "\n".join(ks), array("I", offs).tobytes(), digests, raws))
                writeback.wrote(len(raws))
                if uses:
                    leans.setdefault(conv, []).extend(uses)
                if len(rows) == 64:
                    db.executemany("INSERT INTO blocks VALUES(?,?,?,?,?,?)", rows)
                    rows.clear()
    _, status, ru = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit("the reader failed")
    written, tail = _cpu() - forked, time.perf_counter()
    if blocks:
        db.executemany("INSERT INTO blocks VALUES(?,?,?,?,?,?)", rows)
        if keys_table:
            keys.sort()
            db.executemany("INSERT INTO keys VALUES(?,?,?,?,?)", keys)
        else:
            db.execute(_BLOCKS_CONVERSATION)
    else:
        db.executemany(_INSERT_RECORD, rows)
        db.execute(_RECORDS_KEY)
    db.executemany("INSERT INTO leans VALUES(?,0,?)", [(c, marshal.dumps(u, 4)) for c, u in leans.items()])
    db.execute("COMMIT")
    with open(out + ".phases", "w") as fh:  # for main's estimate on two idle cores
        fh.write(f"{forked} {ru.ru_utime + ru.ru_stime} {written} {time.perf_counter() - tail}")


def _cpu() -> float:
    """This process's own CPU seconds (user + system) so far."""
    import resource

    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def step_lazy_rows(files: list[str], out: str) -> None:
    _lazy(files, out, blocks=False)


def step_lazy_blocks(files: list[str], out: str) -> None:
    _lazy(files, out, blocks=True)


def step_lazy_rows_shared(files: list[str], out: str) -> None:
    _lazy(files, out, blocks=False, shared=True)


def step_lazy_blocks_shared(files: list[str], out: str) -> None:
    _lazy(files, out, blocks=True, shared=True)


def step_lazy_blocks_shared_nokeys(files: list[str], out: str) -> None:
    _lazy(files, out, blocks=True, shared=True, keys_table=False)


def step_ledger(files: list[str], out: str) -> None:
    sqlite3, _, _, marshal = _modules()
    import orjson

    db = sqlite3.connect(out)
    # A message streamed over several lines is counted once, by its line with the most output
    # tokens (what ccusage counts: its totals match these over the bench's folder).
    best: dict[tuple[str, str], tuple] = {}  # type: ignore[type-arg]
    uses = []
    for conv, rows in db.execute("SELECT conversation, rows FROM leans"):
        for use in marshal.loads(rows):
            mid, rid = use[3], use[4]
            if mid and rid:
                had = best.get((mid, rid))
                if had is None or use[6] > had[1][6]:
                    best[mid, rid] = conv, use
            else:
                uses.append((conv, use))
    talks: dict[str, dict] = {}  # type: ignore[type-arg]
    for conv, (ts, _side, model, _mid, _rid, i, o, cc, cr) in [*best.values(), *uses]:
        talk = talks.get(conv)
        if talk is None:
            talk = talks[conv] = {"models": {}, "last": ""}
        t = talk["models"].get(model)
        if t is None:
            t = talk["models"][model] = [0, 0, 0, 0]
        t[0] += i
        t[1] += o
        t[2] += cc
        t[3] += cr
        if type(ts) is str and ts > talk["last"]:
            talk["last"] = ts
    sessions = []
    for conv, talk in talks.items():
        per = [{"model": m, "input": v[0], "output": v[1], "cacheCreation": v[2], "cacheRead": v[3]}
               for m, v in talk["models"].items()]
        sessions.append({"conversation": conv, "lastActivity": talk["last"], "models": per,
                         **{k: sum(p[k] for p in per) for k in ("input", "output", "cacheCreation", "cacheRead")}})
    sys.stdout.buffer.write(orjson.dumps({"sessions": sessions}))


STEPS = {name[5:].replace("_", " "): fn for name, fn in list(globals().items()) if name.startswith("step_")}


# --- the runs --------------------------------------------------------------------------------------

def main() -> None:
    import shutil
    import statistics
    import subprocess
    import tempfile
    import time
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from vs_ccusage import MAIN, Asz, find_ccusage, folder_args, projects_folder

    def run(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
        """Wall and CPU (user + system, with the children it waited for) seconds of one process."""
        t = time.perf_counter()
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"failed: {' '.join(cmd[:4])} …")
        return wall, ru.ru_utime + ru.ru_stime

    args = folder_args(__doc__).parse_args()
    ccusage = find_ccusage(args.ccusage)
    asz = Asz("now", None)  # compiles this checkout's bytecode
    me = str(Path(__file__).resolve())
    with tempfile.TemporaryDirectory(prefix="asz-floor-") as tmp:
        cfg = projects_folder(args.corpus, Path(tmp) / "claude", args.copies)
        files = sorted(str(f) for f in (cfg / "projects").rglob("*.jsonl"))
        size = sum(os.path.getsize(f) for f in files)
        print(f"folder: {len(files)} files, {size / 1e6:.1f} MB; {args.runs} runs, interleaved; "
              f"load average {os.getloadavg()[0]:.1f}; {os.cpu_count()} cpus; ccusage: {ccusage or 'not found'}")
        db, lean = str(Path(tmp) / "floor.db"), str(Path(tmp) / "lean.db")
        run([sys.executable, me, "--step", "lazy blocks", lean, *files])  # what "ledger" reads
        commands = {name: [sys.executable, me, "--step", name, lean if name == "ledger" else db, *files] for name in STEPS}
        commands["python"] = [sys.executable, "-c", "pass"]
        commands["asz import"] = [sys.executable, "-c", "import asz_core.main"]
        # Today's asz commands on one small file: what each costs beyond its work.
        one = min((f for f in files if os.path.getsize(f) >= 16 << 10), key=os.path.getsize)
        small = Path(tmp) / "small"
        (small / "p").mkdir(parents=True)
        shutil.copy(one, small / "p")
        homes = {"asz collect, 1 file": Path(tmp) / "home-collect", "asz ledger, 1 file": Path(tmp) / "home-ledger"}
        commands["asz collect, 1 file"] = [sys.executable, "-c", MAIN, "collect", str(small), "--json"]
        commands["asz ledger, 1 file"] = [sys.executable, "-c", MAIN, "ledger", "--json"]
        run(commands["asz collect, 1 file"], dict(asz.env, ASZ_HOME=str(homes["asz ledger, 1 file"])))
        jobs = list(commands) + (["ccusage"] if ccusage else [])
        wall: dict[str, list[float]] = {j: [] for j in jobs}
        cpu: dict[str, list[float]] = {j: [] for j in jobs}
        phases: dict[str, list[list[float]]] = {j: [] for j in jobs if j.startswith("lazy")}
        for i in range(args.runs):
            for job in jobs[i % len(jobs):] + jobs[: i % len(jobs)]:
                if job == "ccusage":
                    w, c = run([str(ccusage), "session", "--json", "--offline"],
                               dict(os.environ, CLAUDE_CONFIG_DIR=str(cfg), NO_COLOR="1"))
                else:
                    for old in (db, db + ".phases"):
                        if os.path.exists(old):
                            os.unlink(old)
                    shutil.rmtree(homes["asz collect, 1 file"], ignore_errors=True)
                    w, c = run(commands[job], dict(asz.env, ASZ_HOME=str(homes.get(job, Path(tmp) / "home-none"))))
                    if job.startswith("lazy"):
                        with open(db + ".phases") as fh:
                            phases[job].append([float(x) for x in fh.read().split()])
                wall[job].append(w)
                cpu[job].append(c)
        print(f"load average after: {os.getloadavg()[0]:.1f}")
    med = {j: (statistics.median(wall[j]), statistics.median(cpu[j])) for j in jobs}
    cc, cc_cpu = med["ccusage"] if ccusage else (None, None)

    def line(label: str, w: float, c: float) -> None:
        r = (f"{w / cc:14.2f}  {c / 2 / cc:15.2f}  {c / cc_cpu:13.2f}" if cc and cc_cpu
             else f"{'-':>14}  {'-':>15}  {'-':>13}")
        print(f"{label:34}  {w:7.3f}  {c:6.3f}  {r}")

    print(f"\n{'step (medians)':34}  {'wall s':>7}  {'CPU s':>6}  {'wall x ccusage':>14}  {'CPU/2 x ccusage':>15}"
          f"  {'CPU x its CPU':>13}")
    for job in jobs:
        line(job, *med[job])
    start = [med["asz import"][k] - med["python"][k] for k in (0, 1)]
    today = [med["asz collect, 1 file"][k] + med["asz ledger, 1 file"][k] - 2 * med["start"][k] for k in (0, 1)]
    print(f"\nasz's start beyond the bare interpreter: {start[0]:.3f} s wall, {start[1]:.3f} s CPU per command;"
          f"\ntoday's collect and ledger on one file beyond the steps' start: {today[0]:.3f} s wall, {today[1]:.3f} s CPU")
    for variant in (j for j in jobs if j.startswith("lazy")):
        w, c = med[variant][0] + med["ledger"][0], med[variant][1] + med["ledger"][1]
        line(f"{variant} + ledger", w, c)
        line("  + 2 asz starts", w + 2 * start[0], c + 2 * start[1])
        line("  + today's fixed costs instead", w + today[0], c + today[1])
    # Where another process holds a core, the reader and the writer take turns on the other and
    # their wall is their CPU: the wall two idle cores would give is estimated from the phases.
    print("\nOn two idle cores, estimated: the writer's start to the fork (its CPU) + the busier of "
          "reader and writer after it (CPU) + the writer's tail after the reader ends (wall), medians:")
    best = min(wall["ccusage"]) if ccusage else None
    print(f"{'':26}  {'start':>6}  {'reader':>6}  {'writer':>6}  {'tail':>6}  {'est.':>6}  "
          f"{'+ ledger CPU + 2 starts':>23}  {'x ccusage':>9}  {'x its best':>10}")
    for variant, got in phases.items():
        start_, reader, writer, tail_ = (statistics.median(p[k] for p in got) for k in range(4))
        est = statistics.median(p[0] + max(p[1], p[2]) + p[3] for p in got)
        total = est + med["ledger"][1] + 2 * start[1]
        print(f"{variant:26}  {start_:6.3f}  {reader:6.3f}  {writer:6.3f}  {tail_:6.3f}  {est:6.3f}  {total:23.3f}  "
              f"{total / cc if cc else float('nan'):9.2f}  {total / best if best else float('nan'):10.2f}")
    if best:
        print(f"(ccusage: median {cc:.3f} s, best {best:.3f} s: its best run is the nearest to it on idle cores)")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--step"]:
        STEPS[sys.argv[2]](sys.argv[4:], sys.argv[3])
    else:
        main()
