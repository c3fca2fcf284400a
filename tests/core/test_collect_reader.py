"""Collect's forked reader (asz_core.collect_reader): a collect read by the reader process stores
exactly what a collect read in this process stores (the same rows, byte for byte, so the same
rounds and heads), and gives the same warnings; a reader that dies mid-file loses nothing; an
adapter's failure in the reader is the same warning with file and line; a reader never outlives
its parent; what crosses the pipe is flat and in bounded frames."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from asz_core import collect_reader, workers
from asz_core.collect import collect, plan_files
from asz_core.records import Cursor
from asz_core.registry import Registry
from asz_core.store import Store

from .helpers import CLAUDE_CORPUS, MATCH, asz_env, db_rows

pytestmark = pytest.mark.usefixtures("corpus")

KILLPOINT = Path(__file__).with_name("killpoint.py")
BIG = "e720dd6e-5f22-41c5-b148-e7d65b7ddc58.jsonl"

TABLES = {
    "conversations": "SELECT id, runtime FROM conversations ORDER BY id",
    "sessions": "SELECT session, conversation FROM sessions ORDER BY rowid",
    "rounds": "SELECT conversation, number, parent, head, records FROM rounds ORDER BY conversation, number",
    "records": "SELECT seq, conversation, key, version, round, digest, stream, kind, file, line, ts, raw, events "
               "FROM records ORDER BY seq",
    "files": "SELECT path, runtime, size, mtime_ns, offset, line, tail, state FROM files ORDER BY path",
    "calls": "SELECT rowid, call, conversation FROM calls ORDER BY rowid",
    "leans": "SELECT conversation, round, part, rule, rows FROM leans ORDER BY conversation, round, part",
}


def _all(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    return {name: db_rows(db, sql) for name, sql in TABLES.items()}


@pytest.fixture
def forced(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reader process for any job, however small (on a machine that can fork)."""
    if not workers.can_fork():
        pytest.skip("no fork here (or one CPU): collect reads in its own process")
    monkeypatch.setattr(collect_reader, "MIN_BYTES", 0)
    monkeypatch.setenv("ASZ_PROCESSES", "2")  # whatever the machine's load


def _collect(paths: list[Path], home: Path, *, reader: bool, monkeypatch: pytest.MonkeyPatch,
             registry: Registry | None = None) -> tuple[Any, dict[str, list[tuple[Any, ...]]]]:
    with monkeypatch.context() as m:
        if not reader:
            m.setenv("ASZ_PROCESSES", "1")
        store = Store.open(home)
        calls = {"n": 0}
        enter = collect_reader.Reader.__enter__

        def counted(self):  # type: ignore[no-untyped-def]
            calls["n"] += 1
            return enter(self)

        m.setattr(collect_reader.Reader, "__enter__", counted)
        try:
            r = collect(paths, store, registry)
        finally:
            store.close()
        assert calls["n"] == (1 if reader else 0)
    return r, _all(home / "asz.db")


def _same_results(a: Any, b: Any) -> None:
    assert [str(p) for p in a.problems] == [str(p) for p in b.problems]
    assert (a.files_read, a.files_unchanged, a.bytes_read, a.records_seen, a.records_published) == \
        (b.files_read, b.files_unchanged, b.bytes_read, b.records_seen, b.records_published)
    assert [(r.conversation, r.number, r.parent, r.head, r.records) for r in a.rounds] == \
        [(r.conversation, r.number, r.parent, r.head, r.records) for r in b.rounds]


def test_the_reader_process_stores_what_reading_here_stores(tmp_path: Path, forced: None,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    here, here_rows = _collect([CLAUDE_CORPUS], tmp_path / "here", reader=False, monkeypatch=monkeypatch)
    there, there_rows = _collect([CLAUDE_CORPUS], tmp_path / "there", reader=True, monkeypatch=monkeypatch)
    assert len(here_rows["records"]) > 10_000 and len(here_rows["rounds"]) > 20 and here_rows["calls"]
    for name in TABLES:
        assert there_rows[name] == here_rows[name], name
    _same_results(there, here)


def test_a_grown_and_a_resumed_file_read_by_the_reader(tmp_path: Path, forced: None,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Files read on from a cursor, and a resume joining a stored conversation, the same both ways."""
    results = {}
    for way in ("here", "there"):
        project = tmp_path / way / "project"
        shutil.copytree(MATCH, project)
        resumed = project / "9fdc1632-c430-4469-89bf-bfc9df7f12e6.jsonl"
        big = project / BIG
        lines = big.read_bytes().splitlines(keepends=True)
        whole_resumed = resumed.read_bytes()
        resumed.unlink()
        big.write_bytes(b"".join(lines[:200]))
        first, _ = _collect([project], tmp_path / way / "home", reader=way == "there", monkeypatch=monkeypatch)
        big.write_bytes(b"".join(lines))
        resumed.write_bytes(whole_resumed)
        second, rows = _collect([project], tmp_path / way / "home", reader=way == "there", monkeypatch=monkeypatch)
        assert second.records_published > 300 and any(r.number == 2 for r in second.rounds)
        results[way] = (first, second, rows)
    _same_results(results["there"][0], results["here"][0])
    _same_results(results["there"][1], results["here"][1])
    for name in ("conversations", "sessions", "rounds", "records", "calls"):
        strip = (lambda rows: [tuple(x for x in r if not (isinstance(x, str) and str(tmp_path) in x)) for r in rows])
        assert strip(results["there"][2][name]) == strip(results["here"][2][name]), name


def test_an_adapter_error_in_the_reader_is_the_same_warning(tmp_path: Path, forced: None,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from asz_adapters_claudecode.adapter import ClaudeCodeAdapter

    lines = (MATCH / BIG).read_bytes().splitlines()
    uuid = json.loads(lines[399])["uuid"]
    events = ClaudeCodeAdapter._events

    def failing(self, typ, obj, st, stream):  # type: ignore[no-untyped-def]
        if obj.get("uuid") == uuid:
            raise RuntimeError("an adapter bug on this line")
        return events(self, typ, obj, st, stream)

    monkeypatch.setattr(ClaudeCodeAdapter, "_events", failing)
    here, here_rows = _collect([MATCH], tmp_path / "here", reader=False, monkeypatch=monkeypatch)
    there, there_rows = _collect([MATCH], tmp_path / "there", reader=True, monkeypatch=monkeypatch)
    (p,) = there.problems
    assert str(p).startswith(f"{MATCH / BIG}:400: reading stopped (RuntimeError: an adapter bug on this line)")
    _same_results(there, here)
    assert there_rows == here_rows
    assert all(f != str(MATCH / BIG) for f, *_ in there_rows["files"])  # its read position did not move


@pytest.mark.parametrize("frames", [0, 1, 7])
def test_a_reader_that_dies_loses_nothing(tmp_path: Path, forced: None, monkeypatch: pytest.MonkeyPatch,
                                          frames: int) -> None:
    """The reader killed after some frames (mid-file): the file is read again here, what was taken
    skipped, and the rest read here: the same store, the same warnings."""
    here, here_rows = _collect([MATCH], tmp_path / "here", reader=False, monkeypatch=monkeypatch)
    monkeypatch.setattr(collect_reader, "CHUNK_BYTES", 64 * 1024)
    real = collect_reader._serve

    def dying(jobs, w, parent):  # type: ignore[no-untyped-def]
        sent = {"n": 0}
        write = os.write

        class Out:
            def __init__(self, fd: int) -> None:
                self.fd = fd

            def write(self, data: bytes) -> None:
                if sent["n"] >= frames:
                    os.kill(os.getpid(), signal.SIGKILL)
                sent["n"] += 1
                while data:
                    data = data[write(self.fd, data):]

            def close(self) -> None:
                os.close(self.fd)

        monkeypatch.setattr(collect_reader.os, "fdopen", lambda fd, *a, **k: Out(fd))
        real(jobs, w, parent)

    monkeypatch.setattr(collect_reader, "_serve", dying)
    got = {"frames": 0}
    real_frames = collect_reader._frames

    def counted(file):  # type: ignore[no-untyped-def]
        for frame in real_frames(file):
            got["frames"] += 1
            yield frame

    monkeypatch.setattr(collect_reader, "_frames", counted)
    there, there_rows = _collect([MATCH], tmp_path / "there", reader=True, monkeypatch=monkeypatch)
    # The reader sent that many frames, then died (a reader that failed before its first frame, for
    # any reason, would leave everything to this process and pass the comparison below unchecked).
    assert got["frames"] == frames
    _same_results(there, here)
    assert there_rows == here_rows


def test_a_busy_machine_reads_in_its_own_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """A load average at the CPU count: no reader (the two would only take turns), unless asked for.
    The gate is workers.fork_pays, which the ledger's split asks too (tests/core/test_workers.py)."""
    monkeypatch.delenv("ASZ_PROCESSES", raising=False)
    monkeypatch.setattr(workers, "can_fork", lambda: True)
    monkeypatch.setattr(workers, "cpus", lambda: 2)
    monkeypatch.setattr(workers, "_load", lambda: 2.0)
    assert not collect_reader.worth_forking(100 << 20)
    monkeypatch.setattr(workers, "_load", lambda: 0.7)
    assert collect_reader.worth_forking(100 << 20)
    assert not collect_reader.worth_forking(collect_reader.MIN_BYTES - 1)
    monkeypatch.setattr(workers, "_load", lambda: 3.0)
    monkeypatch.setenv("ASZ_PROCESSES", "2")
    assert collect_reader.worth_forking(100 << 20)


def test_a_small_collect_reads_in_its_own_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Below MIN_BYTES a fork costs more than it saves: no reader process."""
    assert sum(f.stat().st_size for f in MATCH.glob("*.jsonl")) < collect_reader.MIN_BYTES
    forks = []
    monkeypatch.setattr(collect_reader._Child, "start", lambda self: forks.append(self))
    r = collect([MATCH], Store.open(tmp_path / "home"))
    assert r.records_published > 1000 and forks == []


def test_frames_are_flat_and_bounded(tmp_path: Path, forced: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """One big file is sent in many frames, none much past CHUNK_BYTES, of str/bytes/int tuples only."""
    monkeypatch.setattr(collect_reader, "CHUNK_BYTES", 64 * 1024)
    registry = Registry()
    plan = plan_files([MATCH / BIG], registry, None, [])
    jobs = [(a, f, Cursor()) for a, f in plan]
    sizes: list[int] = []
    loads = collect_reader.marshal.loads

    def measured(data: bytes) -> Any:
        sizes.append(len(data))
        return loads(data)

    monkeypatch.setattr(collect_reader.marshal, "loads", measured)
    with collect_reader.Reader(jobs) as reader:
        items = list(reader.items(0))
    assert items[-1][0] == "end" and len(sizes) > 5
    biggest_line = max(len(x) for x in (MATCH / BIG).read_bytes().splitlines())
    assert max(sizes) < 64 * 1024 + 3 * biggest_line + 64 * 1024
    for item in items:
        assert type(item) is tuple
        for x in item:
            assert x is None or type(x) in (str, bytes, int) or (type(x) is tuple and all(type(c) is str for c in x)), x
    here = list(collect_reader.read_items(plan[0][0], plan[0][1], Cursor()))
    assert items == here


def test_a_killed_collect_leaves_no_reader_running(tmp_path: Path, forced: None) -> None:
    """The parent killed mid-collect (SIGKILL, no clean-up): its reader process ends too. (The
    whole corpus: enough to read for a collect to fork its reader.)"""
    project = tmp_path / "project"
    shutil.copytree(CLAUDE_CORPUS, project)
    assert sum(f.stat().st_size for f in project.rglob("*.jsonl")) > collect_reader.MIN_BYTES
    children = tmp_path / "children"
    killed = subprocess.run([sys.executable, str(KILLPOINT), "collect", str(project), "--json"],
                            env=asz_env(tmp_path / "home", ASZ_TEST_KILL_AT="add:5", ASZ_TEST_KILL_CHILDREN=str(children),
                                        ASZ_PROCESSES="2"),
                            capture_output=True, text=True, timeout=300)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    pids = [int(p) for p in children.read_text().split()]
    assert pids, "the collect had no reader process when it was killed"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.05)
    assert not any(_alive(p) for p in pids), "a reader outlived its parent"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False



def test_a_python_warning_an_adapter_raises_is_the_file_s_warning_both_ways(tmp_path: Path, forced: None,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The reader's stderr goes nowhere: a `warnings.warn` inside an adapter's read would be lost there
    (and only printed, not reported, here). Both ways it is a collect warning naming the file and the
    line, and everything is stored as without it."""
    import warnings

    from asz_adapters_claudecode.adapter import ClaudeCodeAdapter

    lines = (MATCH / BIG).read_bytes().splitlines()
    uuids = {json.loads(lines[n])["uuid"]: n + 1 for n in (101, 399)}
    events = ClaudeCodeAdapter._events

    def warning(self, typ, obj, st, stream):  # type: ignore[no-untyped-def]
        if obj.get("uuid") in uuids:
            warnings.warn(f"an odd field on line {uuids[obj['uuid']]}", UserWarning, stacklevel=1)
        return events(self, typ, obj, st, stream)

    clean, clean_rows = _collect([MATCH], tmp_path / "clean", reader=False, monkeypatch=monkeypatch)
    monkeypatch.setattr(ClaudeCodeAdapter, "_events", warning)
    with warnings.catch_warnings():
        warnings.simplefilter("always")  # each one, as a plugin's own filter may say
        here, here_rows = _collect([MATCH], tmp_path / "here", reader=False, monkeypatch=monkeypatch)
        there, there_rows = _collect([MATCH], tmp_path / "there", reader=True, monkeypatch=monkeypatch)
    want = [f"{MATCH / BIG}:{n}: UserWarning: an odd field on line {n}" for n in (102, 400)]
    assert [str(p) for p in there.problems] == want
    _same_results(there, here)
    assert there_rows == here_rows
    assert there.records_published == clean.records_published and len(there_rows["records"]) == len(clean_rows["records"])


def test_the_reader_runs_frames_ahead_of_a_busy_writer(tmp_path: Path, forced: None) -> None:
    """While collect's own process is busy writing (here: reads nothing), the reader goes on: the
    pipe holds several whole frames, so each process takes up the other's slower stretches instead
    of the two waiting for each other at every frame (a frame of the pipe's size, 1 MiB, cost a
    first collect of 95 MB 0.1 s of wall time so)."""
    import fcntl
    import termios

    registry = Registry()
    plan = plan_files([MATCH], registry, None, [])
    jobs = [(a, f, Cursor()) for a, f in plan]
    with collect_reader.Reader(jobs) as reader:
        fd = reader.child.file.fileno()
        held, deadline = -1, time.monotonic() + 20
        while time.monotonic() < deadline:  # until the reader, blocked on a full pipe, adds nothing
            time.sleep(0.2)
            now = int.from_bytes(fcntl.ioctl(fd, termios.FIONREAD, b"\0" * 4), sys.byteorder)
            if now == held:
                break
            held = now
        os.set_blocking(fd, False)
        data = b""
        while True:
            try:
                got = os.read(fd, 1 << 20)
            except BlockingIOError:
                break
            if not got:
                break
            data += got
    frames, at = 0, 0
    while at + 4 <= len(data):
        size = int.from_bytes(data[at:at + 4], "little")
        if at + 4 + size > len(data):
            break
        frames += 1
        at += 4 + size
    assert frames >= 4, f"the pipe held {frames} whole frames ({len(data)} bytes)"
