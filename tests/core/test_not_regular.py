"""Only regular files are opened: a FIFO named like a transcript, or a symlink to a device, in a
Claude Code, Codex, Kiro or LangSmith folder is skipped with a warning naming it, the collect ends
promptly, and every other file is published as without it.

The collects run in a child process with a timeout, so a regression fails instead of hanging the
suite; the adapter-level checks run in a thread that the test unblocks (by opening the FIFO's
other end) when it waited too long, for the same reason.
"""

from __future__ import annotations

import json
import os
import sys
import shutil
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from asz_core.records import Cursor, Problem
from asz_core.registry import Registry
from asz_core.regular import NotRegularFile, open_regular, read_regular

from .helpers import CORPUS, MATCH, OneRuntime, run_asz

CODEX = CORPUS / "codex" / "langchain-ai__langsmith-codex-plugins/plugins/tracing/test/sessions/2026/04/23"
KIRO = CORPUS / "kiro" / "PRO-HUNTER-X__team03-aws-hackathon"
KIRO_DB_SAVE = CORPUS / "kiro" / "namd0ng__team27-aws-hackathon" / "C_UsersChangwooDesktopDreamHack.json"
LANGSMITH = CORPUS / "langsmith" / "langchain-ai__langsmith-sdk" / "python" / "tests" / "integration_tests" / "test_data"
WAIT = 10.0  # seconds an adapter call may take on these small folders before it counts as hung


def _kiro_db(path: Path, save: Path) -> None:
    """A data.sqlite3 in Q CLI's schema holding one corpus conversation."""
    value = json.dumps(json.loads(save.read_text(encoding="utf-8")), ensure_ascii=False)
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE conversations (key TEXT PRIMARY KEY, value TEXT);
        CREATE TABLE conversations_v2 (key TEXT NOT NULL, conversation_id TEXT NOT NULL, value TEXT NOT NULL,
            created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, PRIMARY KEY (key, conversation_id));
    """)
    db.execute("INSERT INTO conversations_v2 VALUES (?,?,?,?,?)",
               ("/home/u/dream", json.loads(value)["conversation_id"], value, 1757000000000, 1757000000000))
    db.commit()
    db.close()


def _folder(runtime: str, dest: Path) -> Path:
    """A copy of real corpus files of ``runtime`` (the Kiro SQLite store built from a corpus save)."""
    src = {"claudecode": MATCH, "codex": CODEX, "kiro": KIRO, "langsmith": LANGSMITH}[runtime]
    if not src.is_dir():
        pytest.skip(f"corpus not found at {src}")
    shutil.copytree(src, dest)
    if runtime == "kiro":
        _kiro_db(dest / "data.sqlite3", KIRO_DB_SAVE)
    return dest


# Names each runtime's folder may hold; the hostile ones reuse them.
HOSTILE = {
    "claudecode": ["x.jsonl", "sub/agent-x.jsonl"],
    "codex": ["rollout-x.jsonl"],
    "kiro": ["x.json", "x.jsonl", "store.sqlite3"],
    "langsmith": ["x.json", "x.jsonl"],
}


def _plant(folder: Path, runtime: str) -> tuple[list[Path], list[Path]]:
    """FIFOs under the runtime's own names, and symlinks named the same way to /dev/zero."""
    fifos, devices = [], []
    for name in HOSTILE[runtime]:
        p = folder / name
        p.parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(p)
        fifos.append(p)
        z = p.with_name("zero-" + p.name)
        z.symlink_to("/dev/zero")
        devices.append(z)
    return fifos, devices


def _collect(folder: Path, home: Path) -> dict[str, Any]:
    res = run_asz("collect", str(folder), "--json", home=home, timeout=120)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


@pytest.mark.parametrize("runtime", ["claudecode", "codex", "kiro", "langsmith"])
def test_a_fifo_or_a_device_in_a_runtime_folder_is_skipped_by_name(runtime: str, tmp_path: Path) -> None:
    clean = _collect(_folder(runtime, tmp_path / "clean"), tmp_path / "home-clean")
    assert clean["records_published"] > 0 and not clean["warnings"]
    hostile = _folder(runtime, tmp_path / "hostile")
    fifos, devices = _plant(hostile, runtime)
    got = _collect(hostile, tmp_path / "home-hostile")  # a hang fails here, at run_asz's timeout
    for p in fifos:
        assert any(w.startswith(f"{p}:") and "named pipe" in w for w in got["warnings"]), (p, got["warnings"])
    for p in devices:
        assert any(w.startswith(f"{p}:") and "character device" in w for w in got["warnings"]), (p, got["warnings"])
    assert len(got["warnings"]) == len(fifos) + len(devices), got["warnings"]
    # Everything else is published as it is without them.
    assert got["records_published"] == clean["records_published"]
    assert sorted(r["records"] for r in got["rounds"]) == sorted(r["records"] for r in clean["rounds"])


def test_a_fifo_beside_a_kiro_store_is_never_opened_by_sqlite(tmp_path: Path) -> None:
    """SQLite opens a store's -wal and -shm files itself: a FIFO there would hold it forever."""
    if not KIRO_DB_SAVE.is_file():
        pytest.skip(f"corpus not found at {KIRO_DB_SAVE}")
    folder = tmp_path / "kiro"
    folder.mkdir()
    _kiro_db(folder / "data.sqlite3", KIRO_DB_SAVE)
    shutil.copyfile(KIRO / "tdd-admin-backend.json", folder / "tdd-admin-backend.json")
    os.mkfifo(folder / "data.sqlite3-wal")
    res = run_asz("collect", str(folder), "--json", home=tmp_path / "home", timeout=120)
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout)
    [w] = got["warnings"]
    assert w.startswith(f"{folder / 'data.sqlite3'}:") and "data.sqlite3-wal" in w and "named pipe" in w
    assert len(got["rounds"]) == 1  # the save beside it is published


def test_a_fifo_given_by_name_is_a_clear_error_not_a_wait(tmp_path: Path) -> None:
    fifo = tmp_path / "x.jsonl"
    os.mkfifo(fifo)
    res = run_asz("collect", str(fifo), home=tmp_path / "home", timeout=60)
    assert res.returncode == 1
    assert f"{fifo}:0: not a regular file (a named pipe)" in res.stderr
    assert "Traceback" not in res.stderr


# --- each adapter on its own, every way it opens a file ------------------------------------------

def _bounded(fifos: list[Path], fn: Callable[[], Any]) -> Any:
    """``fn()`` in a thread; when it is still running after WAIT seconds, the FIFOs get a writer
    (so a blocked open returns) and the test fails."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - reported below
            out["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(WAIT)
    hung = t.is_alive()
    if hung:
        for f in fifos:
            try:
                os.close(os.open(f, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
        t.join(WAIT)
    assert not hung, f"{fn} waited on a FIFO"
    if "error" in out:
        raise out["error"]
    return out["value"]


@pytest.mark.parametrize("runtime", ["claudecode", "codex", "kiro", "langsmith"])
def test_no_adapter_call_opens_a_fifo(runtime: str, tmp_path: Path) -> None:
    folder = _folder(runtime, tmp_path / "f")
    fifos, devices = _plant(folder, runtime)
    adapter = Registry().runtime(runtime)
    assert _bounded(fifos, lambda: adapter.detect(folder))
    listed = _bounded(fifos, lambda: adapter.files(folder))
    assert set(fifos + devices) <= set(listed)  # listed, so collect can name them
    for p in fifos + devices:
        assert not _bounded(fifos, lambda p=p: adapter.detect(p))
        items = _bounded(fifos, lambda p=p: list(adapter.read(p, Cursor())))
        assert all(isinstance(i, Problem) for i in items)
        assert items and all(i.file == str(p) for i in items)


def test_open_regular_takes_files_and_symlinks_to_them_only(tmp_path: Path) -> None:
    f = tmp_path / "a.jsonl"
    f.write_bytes(b'{"a": 1}\n')
    link = tmp_path / "link.jsonl"
    link.symlink_to(f)
    assert read_regular(link) == f.read_bytes() and read_regular(f, 4) == b'{"a"'
    fifo = tmp_path / "p.jsonl"
    os.mkfifo(fifo)
    for p, kind in [(fifo, "a named pipe"), (Path("/dev/zero"), "a character device"), (tmp_path, "a folder")]:
        with pytest.raises(NotRegularFile) as e:
            _bounded([fifo], lambda p=p: open_regular(p))
        assert str(e.value) == f"not a regular file ({kind})" and e.value.filename == str(p)
    with pytest.raises(FileNotFoundError):
        open_regular(tmp_path / "none")


class _NaiveAdapter:
    """A third-party adapter that opens whatever it lists with plain ``open``: collect itself must
    keep FIFOs and devices away from it (its folder's files and its companion files alike)."""

    name = "naive"

    def __init__(self, companions: list[Path]) -> None:
        self._companions = companions

    def detect(self, path: Path) -> bool:
        return path.is_dir()

    def files(self, path: Path) -> list[Path]:
        return sorted(p for p in path.iterdir())

    def companions(self) -> list[Path]:
        return self._companions

    def read(self, path: Path, cursor: Cursor):
        from asz_core.records import Entry

        with open(path, "rb") as f:  # noqa: PTH123 - naive on purpose
            for n, line in enumerate(f.read(1 << 20).splitlines(), 1):
                yield Entry(key=f"{path.name}:{n}", session=path.stem, stream="main", kind="line",
                            file=str(path), line=n, raw=line)
        cursor.offset = path.stat().st_size


def test_collect_keeps_fifos_and_devices_from_an_adapter_that_would_open_them(tmp_path: Path, store) -> None:
    from asz_core.collect import collect

    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "a.jsonl").write_bytes(b'{"n": 1}\n{"n": 2}\n')
    os.mkfifo(folder / "p.jsonl")
    (folder / "z.jsonl").symlink_to("/dev/zero")
    spool_fifo = tmp_path / "spool.jsonl"
    os.mkfifo(spool_fifo)
    reg = OneRuntime(_NaiveAdapter([spool_fifo]))
    res = _bounded([folder / "p.jsonl", spool_fifo], lambda: collect([folder], store, reg))  # type: ignore[arg-type]
    assert sorted(str(p) for p in res.problems) == sorted([
        f"{folder / 'p.jsonl'}:0: not a regular file (a named pipe); skipped",
        f"{folder / 'z.jsonl'}:0: not a regular file (a character device); skipped",
        f"{spool_fifo}:0: not a regular file (a named pipe); skipped"])
    assert res.records_published == 2


# --- Kiro's SQLite store: a FIFO swapped in between the check and the open -------------------------

def _kiro_wal_store(folder: Path) -> sqlite3.Connection:
    """A store in WAL mode whose conversation is committed in its -wal only, and the writer that
    holds it there (closing it would fold the WAL back into the store)."""
    _kiro_db(folder / "data.sqlite3", KIRO_DB_SAVE)
    w = sqlite3.connect(folder / "data.sqlite3")
    w.execute("PRAGMA journal_mode=WAL")
    w.execute("PRAGMA wal_autocheckpoint=0")
    row = w.execute("SELECT key, conversation_id, value, created_at, updated_at FROM conversations_v2").fetchone()
    w.execute("DELETE FROM conversations_v2")
    w.commit()
    w.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the store itself without the row
    w.execute("INSERT INTO conversations_v2 VALUES (?,?,?,?,?)", row)
    w.commit()
    assert (folder / "data.sqlite3-wal").stat().st_size > 0
    return w


def _swap_for_fifo(p: Path) -> None:
    os.rename(p, p.with_name(p.name + ".moved"))  # the file lives on (whoever has it open keeps it)
    os.mkfifo(p)


def test_kiro_s_store_is_read_from_a_copy_holding_its_wal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    if not KIRO_DB_SAVE.is_file():
        pytest.skip(f"corpus not found at {KIRO_DB_SAVE}")
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    w = _kiro_wal_store(tmp_path)
    try:
        adapter = Registry().runtime("kiro")
        items = list(adapter.read(tmp_path / "data.sqlite3", Cursor()))
    finally:
        w.close()
    assert items and not [i for i in items if isinstance(i, Problem)]
    assert not list(temp.iterdir())  # the copy is gone


@pytest.mark.parametrize("swap", ["the store, before it is opened", "the store, once opened",
                                  "its WAL, once the store is opened"])
def test_a_fifo_swapped_in_while_kiro_s_store_is_read_is_never_waited_on(swap: str, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The store is listed and sniffed as a regular file, then swapped for a FIFO (or its WAL is)
    right before, or right after, it is opened for reading: nothing waits, a FIFO opened is named
    in a warning, and a store swapped once it was opened is read whole."""
    from asz_adapters_kiro import adapter as kiro

    if not KIRO_DB_SAVE.is_file():
        pytest.skip(f"corpus not found at {KIRO_DB_SAVE}")
    db = tmp_path / "data.sqlite3"
    wal = tmp_path / "data.sqlite3-wal"
    w = _kiro_wal_store(tmp_path)
    adapter = Registry().runtime("kiro")
    try:
        clean = list(adapter.read(db, Cursor()))
        assert clean and adapter.files(tmp_path) == [db]
        real_open, real_regular = kiro._StoreCopy.open, kiro.open_regular
        armed = {"on": False}

        def opening(self):  # type: ignore[no-untyped-def]
            if self.limit is None:  # reading, the store already checked (listed, sniffed)
                if swap.startswith("the store, before"):
                    _swap_for_fifo(db)
                armed["on"] = True
            try:
                return real_open(self)
            finally:
                armed["on"] = False

        def regular(path):  # type: ignore[no-untyped-def]
            f = real_regular(path)
            if armed["on"] and Path(path) == db:
                armed["on"] = False
                _swap_for_fifo(db if swap.startswith("the store, once") else wal)
            return f

        monkeypatch.setattr(kiro._StoreCopy, "open", opening)
        monkeypatch.setattr(kiro, "open_regular", regular)
        got = _bounded([db, wal], lambda: list(adapter.read(db, Cursor())))
    finally:
        w.close()
    problems = [str(i) for i in got if isinstance(i, Problem)]
    if swap == "the store, once opened":
        assert not problems and len(got) == len(clean)  # what was opened is what was checked: read whole
    else:
        fifo = db if swap.startswith("the store") else wal
        assert problems == [f"{db}:0: cannot open SQLite store ("
                            f"{'' if fifo == db else f'{wal}: '}not a regular file (a named pipe))"], problems


# --- files named by an option -----------------------------------------------------------------------

def test_a_fifo_named_by_an_option_is_refused_not_waited_on(tmp_path: Path) -> None:
    """Every file a command is pointed at (a price file, a configuration, the scripted evaluator's
    script, asz judge mcp's log, the settings file asz recorder install declares the plugin in) is
    opened only when it is a regular file: a named pipe there made the command wait forever."""
    from tests.adapters.cc_shapes import Session, text, usage

    home = tmp_path / "home"
    s = Session("fifo-opt")
    s.user("u1", None, "go")
    s.assistant("a1", "u1", "msg_1", "req_1", text("done"), usage(10, 0, 0, 5, final=True))
    assert run_asz("collect", str(s.write(tmp_path / "t.jsonl")), home=home).returncode == 0
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    os.mkfifo(project / ".claude" / "settings.json")
    pipe = "not a regular file (a named pipe)"
    cases = [(("ledger", "--prices", str(fifo)), f"cannot read price file {fifo}: {pipe}"),
             (("judge", "fifo-opt", "--config", str(fifo), "--evaluator", "scripted:x"),
              f"configuration file {fifo} is {pipe}"),
             (("judge", "fifo-opt", "--evaluator", f"scripted:{fifo}", "--stages", "targets"),
              f"scripted evaluator: cannot read the script {fifo} ({pipe})"),
             (("judge", "mcp", "fifo-opt", "--log", str(fifo)), f"{pipe}: {fifo}"),
             (("recorder", "install", "--project", str(project)),
              f"{project / '.claude' / 'settings.json'} cannot be read ({pipe}); not changed")]
    for args, says in cases:
        # (no claude on the PATH: the recorder declares its plugin in the settings file itself)
        got = run_asz(*args, home=home, timeout=60, PATH=os.path.dirname(sys.executable), ASZ_CLAUDE="")
        assert got.returncode == 1 and "Traceback" not in got.stderr, (args, got.stderr)
        assert f"error: {says}" in got.stderr, (args, got.stderr)
