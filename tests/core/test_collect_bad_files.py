"""One bad file never stops a collect (issue 12): a dangling symlink, a symlink loop, a file that
cannot be read, an error while reading one file, an entry the store cannot hold. Each is skipped
(or ends its file) with a warning naming it; every other file is published; `asz collect` exits
0, and non-zero only when it published nothing of what it was given; no traceback reaches the
user. Over copies of a real corpus project."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from asz_core import hookimpl
from asz_core.collect import collect
from asz_core.interfaces import RuntimeAdapter
from asz_core.plugins import make_plugin_manager
from asz_core.records import Cursor, Entry, Problem
from asz_core.registry import Registry
from asz_core.store import Store

from .helpers import ASZ_MAIN, MATCH, asz_env, db_rows, fingerprint, run_asz

pytestmark = pytest.mark.usefixtures("corpus")

BIG = "e720dd6e-5f22-41c5-b148-e7d65b7ddc58.jsonl"
"""A session of the project (583 lines), the one the faults below are put in."""


@pytest.fixture(scope="module")
def registry() -> Registry:
    return Registry()


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What a collect of the untouched project leaves (conversations, sessions, rounds, records)."""
    base = tmp_path_factory.mktemp("clean")
    project = base / "project"
    shutil.copytree(MATCH, project)
    r = run_asz("collect", str(project), "--json", home=base / "home")
    assert r.returncode == 0, r.stderr
    return _contents(base / "home" / "asz.db")


def _contents(db: Path) -> dict[str, Any]:
    """A store's conversations, rounds and records, without file paths (the copies lie elsewhere)."""
    fp = fingerprint(db)
    fp.pop("files")
    return fp


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    shutil.copytree(MATCH, project)
    return project


def _warnings(stderr: str) -> str:
    return " ".join(stderr.split())


# --- files that cannot be opened ---------------------------------------------------------------

def test_dangling_and_looping_symlinks_are_skipped_and_everything_else_published(tmp_path: Path, clean: dict[str, Any]) -> None:
    project = _project(tmp_path)
    gone = project / "gone.jsonl"
    gone.symlink_to("/nonexistent")
    loop = project / "self.jsonl"
    loop.symlink_to(loop.name)
    (project / "deeper").mkdir()
    (project / "deeper" / "a.jsonl").symlink_to("b.jsonl")
    (project / "deeper" / "b.jsonl").symlink_to("a.jsonl")
    home = tmp_path / "home"
    r = run_asz("collect", str(project), "--json", home=home)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    out = json.loads(r.stdout)
    warned = {w.split(":")[0]: w for w in out["warnings"]}
    assert set(warned) == {str(gone), str(loop), str(project / "deeper" / "a.jsonl"), str(project / "deeper" / "b.jsonl")}
    assert "/nonexistent" in warned[str(gone)] and "does not exist" in warned[str(gone)]
    assert "loops" in warned[str(loop)]
    assert _contents(home / "asz.db") == clean
    # given by name among good files: warned, the rest published; given alone: an error, no traceback
    other = tmp_path / "home2"
    r = run_asz("collect", str(gone), str(project / BIG), home=other)
    assert r.returncode == 0 and str(gone) in _warnings(r.stderr), r.stderr
    r = run_asz("collect", str(gone), home=tmp_path / "home3")
    assert r.returncode == 1 and str(gone) in _warnings(r.stderr) and "Traceback" not in r.stderr


def _unreadable_command(path: Path) -> list[str]:
    """A command prefix under which ``path`` (mode 000) really cannot be opened: as is for a user
    other than root; for root, setpriv without the capabilities that let root read anything."""
    path.chmod(0)
    prefix: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: no way to make a file unreadable")
        prefix = [setpriv, "--bounding-set=-dac_override,-dac_read_search"]
    probe = subprocess.run([*prefix, sys.executable, "-c", f"open({str(path)!r}, 'rb')"], capture_output=True, text=True)
    if probe.returncode == 0:
        pytest.skip("this machine lets the test process read a file of mode 000")
    assert "PermissionError" in probe.stderr
    return prefix


def test_a_file_that_cannot_be_read_is_skipped_and_everything_else_published(tmp_path: Path, clean: dict[str, Any]) -> None:
    project = _project(tmp_path)
    locked = project / "00000000-0000-4000-8000-000000000000.jsonl"
    shutil.copyfile(project / BIG, locked)
    prefix = _unreadable_command(locked)
    home = tmp_path / "home"
    r = subprocess.run([*prefix, sys.executable, "-c", ASZ_MAIN, "collect", str(project), "--json"],
                       env=asz_env(home), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    (w,) = json.loads(r.stdout)["warnings"]
    assert w.startswith(f"{locked}:0: ") and "Permission denied" in w
    assert _contents(home / "asz.db") == clean
    # once it can be read, the next collect reads it (a copy of BIG: nothing new but its session)
    locked.chmod(0o644)
    r = run_asz("collect", str(project), "--json", home=home)
    assert r.returncode == 0 and json.loads(r.stdout)["files_read"] == 1, r.stderr
    assert ("00000000-0000-4000-8000-000000000000", "e720dd6e-5f22-41c5-b148-e7d65b7ddc58") in \
        db_rows(home / "asz.db", "SELECT session, conversation FROM sessions")


def test_a_named_pipe_in_the_plan_is_skipped_by_collect_unopened(tmp_path: Path, registry: Registry,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # The adapters' own listing never opens one (their part); collect itself never reads one either.
    from asz_core import collect as collect_mod

    project = _project(tmp_path)
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    store = Store.open(tmp_path / "home")
    claude = registry.runtime("claudecode")
    monkeypatch.setattr(collect_mod, "plan_files", lambda *a, **k: [(claude, project / BIG), (claude, fifo)])
    r = collect([project], store, registry)
    assert [str(p) for p in r.problems] == [f"{fifo}:0: not a regular file (a named pipe); skipped"]
    assert r.records_published > 500


# --- an error while reading one file -------------------------------------------------------------

def test_an_error_while_reading_one_file_ends_that_file_only(tmp_path: Path, registry: Registry, clean: dict[str, Any],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from asz_adapters_claudecode.adapter import ClaudeCodeAdapter

    project = _project(tmp_path)
    bad = project / BIG
    lines = bad.read_bytes().splitlines()
    at = 400  # past the first entries a new session holds back (a resume's lookahead)
    uuid = json.loads(lines[at - 1])["uuid"]
    events = ClaudeCodeAdapter._events
    fault = {"on": True}

    def failing(self, typ, obj, st, stream):  # type: ignore[no-untyped-def]
        if fault["on"] and obj.get("uuid") == uuid:
            raise RuntimeError("an adapter bug on this line")
        return events(self, typ, obj, st, stream)

    monkeypatch.setattr(ClaudeCodeAdapter, "_events", failing)
    store = Store.open(tmp_path / "home")
    r = collect([project], store, registry)
    (p,) = r.problems
    assert str(p).startswith(f"{bad}:{at}: reading stopped (RuntimeError: an adapter bug on this line)")
    db = store.path
    conv = BIG.removesuffix(".jsonl")
    mine = [k for (c, k, *_) in fingerprint(db)["records"] if c == conv]
    clean_mine = [k for (c, k, *_) in clean["records"] if c == conv]
    assert mine == clean_mine[: len(mine)] and len(mine) >= at - 1 - 5  # what came before the line is kept
    others = {k for k in ("conversations", "sessions")}
    for k in others:
        assert set(fingerprint(db)[k]) == set(clean[k])
    other_recs = [x for x in fingerprint(db)["records"] if x[0] != conv]
    assert other_recs == [x for x in clean["records"] if x[0] != conv]  # every other file whole
    assert all(f != str(bad) for f, *_ in fingerprint(db)["files"])  # its read position did not move

    # the same fault again: the same warning, nothing stored twice
    again = collect([project], store, registry)
    assert [str(x) for x in again.problems] == [str(p)] and again.records_published == 0
    # fixed: the rest is read, and the store holds exactly the clean collect's records
    fault["on"] = False
    fixed = collect([project], store, registry)
    assert fixed.problems == () and fixed.records_published == len(clean_mine) - len(mine)
    assert sorted(fingerprint(db)["records"][i][1] for i in range(len(fingerprint(db)["records"]))) == \
        sorted(x[1] for x in clean["records"])
    store.close()


DEEP = "@@deep@@"


def _with_line(src: Path, dst: Path, at: int, change: Any) -> Path:
    lines = src.read_bytes().splitlines(keepends=True)
    obj = json.loads(lines[at - 1])
    change(obj)
    # json cannot write 1000 levels: a placeholder, replaced by the nesting as text
    text = json.dumps(obj).replace(json.dumps(DEEP), '{"a":' * 1000 + "{}" + "}" * 1000)
    lines[at - 1] = text.encode() + b"\n"
    dst.write_bytes(b"".join(lines))
    return dst


@pytest.mark.parametrize("case", ["type is a list", "type is an object", "input nested 1000 deep"])
def test_a_line_that_broke_the_reader_never_stops_the_collect(tmp_path: Path, clean: dict[str, Any], case: str) -> None:
    project = _project(tmp_path)
    bad = project / BIG

    def change(obj: dict[str, Any]) -> None:
        if case == "type is a list":
            obj["type"] = ["assistant"]
        elif case == "type is an object":
            obj["type"] = {"assistant": 1}
        else:
            obj["message"]["content"] = [{"type": "tool_use", "id": "toolu_deep", "name": "Bash", "input": DEEP}]

    lines = bad.read_bytes().splitlines()
    at = next(i for i, line in enumerate(lines, 1) if i > 300 and json.loads(line).get("type") == "assistant")
    _with_line(bad, bad, at, change)
    home = tmp_path / "home"
    r = run_asz("collect", str(project), "--json", home=home)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    warnings = json.loads(r.stdout)["warnings"]
    assert any(w.startswith(f"{bad}:{at}: ") for w in warnings), warnings
    got = _contents(home / "asz.db")
    conv = BIG.removesuffix(".jsonl")
    assert [x for x in got["records"] if x[0] != conv] == [x for x in clean["records"] if x[0] != conv]
    assert set(got["conversations"]) == set(clean["conversations"])
    # the ledger reads what was stored
    led = run_asz("ledger", "--json", home=home)
    assert led.returncode == 0 and "Traceback" not in led.stderr, led.stderr


# --- an entry the store cannot hold --------------------------------------------------------------

class _OddAdapter(RuntimeAdapter):
    """A ``.odd`` file: one JSON object a line; a line {"bad": ...} gives an entry of the wrong
    shape or events no JSON holds (an adapter's bug), a line {"boom": 1} raises."""

    name: ClassVar[str] = "odd"

    def detect(self, path: Path) -> bool:
        return path.suffix == ".odd" or (path.is_dir() and any(path.glob("*.odd")))

    def files(self, path: Path) -> list[Path]:
        return [path] if path.is_file() else sorted(path.glob("*.odd"))

    def read(self, path: Path, cursor: Cursor) -> Iterator[Entry | Problem]:
        with open(path, "rb") as f:
            f.seek(cursor.offset)
            for raw in f:
                obj = json.loads(raw)
                line = cursor.line + 1
                if obj.get("boom"):
                    raise ValueError("boom")
                key: Any = obj["id"]
                events: tuple[dict[str, Any], ...] = ({"e": "input", "source": "person", "text": "x", "size": 1},)
                if obj.get("bad") == "key":
                    key = None
                elif obj.get("bad") == "events":
                    events = ({"e": "input", "text": {1, 2}},)
                elif obj.get("bad") == "huge":
                    events = ({"e": "call", "id": "c", "usage": {"output": 2**70}},)
                yield Entry(key=key, session=path.stem, stream="main", kind="odd", file=str(path), line=line,
                            raw=raw.rstrip(b"\n"), events=events)
                cursor.offset += len(raw)
                cursor.line = line


class _OddPlugin:
    @staticmethod
    @hookimpl
    def asz_runtime_adapters():  # type: ignore[no-untyped-def]
        return [_OddAdapter]


@pytest.fixture
def odd() -> Registry:
    pm = make_plugin_manager(autoload=False)
    pm.register(_OddPlugin())
    return Registry(pm)


def test_an_entry_the_store_cannot_hold_is_one_warning_and_its_file_goes_on(tmp_path: Path, odd: Registry) -> None:
    f = tmp_path / "s.odd"
    rows = [{"id": "a"}, {"id": "b", "bad": "key"}, {"id": "c", "bad": "events"}, {"id": "d", "bad": "huge"}, {"id": "e"}]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    g = tmp_path / "t.odd"
    g.write_text(json.dumps({"id": "x"}) + "\n" + json.dumps({"boom": 1}) + "\n")
    store = Store.open(tmp_path / "home")
    r = collect([tmp_path], store, odd)
    problems = [str(p) for p in r.problems]
    assert problems[0].startswith(f"{f}:2: not stored (RecordError: an entry of the wrong shape")
    assert problems[1].startswith(f"{f}:3: not stored (TypeError")
    assert problems[2] == f"{g}:2: reading stopped (ValueError: boom); what came before is kept, the rest is read again at the next collect"
    assert len(problems) == 3
    assert [k for _, k in db_rows(store.path, "SELECT conversation, key FROM records ORDER BY seq")] == ["a", "d", "e", "x"]
    # an integer no JSON holds is stored as unknown (null), never a failed collect
    (events,) = db_rows(store.path, "SELECT events FROM records WHERE key = 'd'")[0]
    assert json.loads(events) == [{"e": "call", "id": "c", "usage": {"output": None}}]
    store.close()


def test_exit_status_is_non_zero_only_when_nothing_given_was_published(tmp_path: Path) -> None:
    project = _project(tmp_path)
    for f in project.iterdir():
        if f.name != BIG:
            f.unlink()
    (project / "gone.jsonl").symlink_to("/nonexistent")
    home = tmp_path / "home"
    assert run_asz("collect", str(project), home=home).returncode == 0
    assert run_asz("collect", str(project), home=home).returncode == 0  # nothing new is not a failure
    (project / BIG).unlink()
    r = run_asz("collect", str(project), home=tmp_path / "home2")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
