"""A full disk (issue 24 part 9): while an attempt's files are written, the error names the file, no
temp file is left, and the run still closes, its stage failed with that reason; while any other file
asz writes is written (run.json, a stage file, close.json, report.html, call-costs.json, a saved
source, a regroup, the store's caches), the error or the progress names it, no temp file is left
and no file half written."""

from __future__ import annotations

import errno
import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import cid_with, entry, inputs_of, judge, plain_answer


class _Full:
    """A file on a full disk: half of the first write lands, then ENOSPC (no path said, as the OS)."""

    def __init__(self, f: Any) -> None:
        self.f = f

    def write(self, data: Any) -> int:
        self.f.write(bytes(data)[: len(data) // 2] if isinstance(data, (bytes, memoryview)) else data[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    def __enter__(self) -> _Full:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.f.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.f, name)


@pytest.mark.parametrize("name", ["prompt.md", "requests.jsonl", "answer.txt", "stderr.txt"])
def test_an_attempt_file_on_a_full_disk_fails_the_call_not_the_run(corpus_store: Any, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    cid = cid_with(corpus_store, 1)
    ans = plain_answer(inputs_of(corpus_store, cid))
    real_open = Path.open

    def open_(self: Path, mode: str = "r", *a: Any, **k: Any) -> Any:
        f = real_open(self, mode, *a, **k)
        # the file itself or its temp file (.NAME.PID.HEX.tmp) in an attempt's directory
        if "w" in mode and "calls" in self.parts and (self.name == name or self.name.startswith(f".{name}.")):
            return _Full(f)
        return f

    monkeypatch.setattr(Path, "open", open_)
    res, stage = judge(corpus_store, tmp_path, cid, [entry(ans), entry(ans)])
    assert (res.path / "close.json").is_file() and res.stages["targets"] == "failed"
    log = stage["run"]["attempt_log"]
    assert [a["attempt"] for a in log] == [1, 2] and all(a["status"] == "failed" for a in log)
    for a in log:
        path = res.path / a["directory"] / name
        assert f"its {name} could not be written" in a["error"] and str(path) in a["error"]
        assert "No space left on device" in a["error"]
        assert not path.exists()  # never half a file
    assert str(res.path / "calls/targets/1/2" / name) in stage["reason"]  # the last attempt says why
    assert sorted(p.name for p in res.path.rglob("*.tmp")) == []
    if name != "prompt.md":  # the evaluator ran: what it consumed still counts
        assert json.loads((res.path / "close.json").read_text())["consumed"]["requests"] == 2


# --- every file asz writes ---------------------------------------------------------------------------
# A full disk while any file asz writes is written (the run's files, a regroup's, a saved source's,
# the store's caches): the error or the progress names the file, no temp file is left, and no file
# is left half written. The disk is full for the files ``hit`` picks, whatever way asz opens them
# (every write goes through io.open: Path.write_bytes, open, os.fdopen).

import io  # noqa: E402
import os  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _full(monkeypatch: pytest.MonkeyPatch, hit: Any) -> list[str]:
    real = io.open
    hits: list[str] = []

    def opener(file: Any, mode: str = "r", *a: Any, **k: Any) -> Any:
        f = real(file, mode, *a, **k)
        if any(c in mode for c in "wax+"):
            name = os.readlink(f"/proc/self/fd/{file}") if isinstance(file, int) else os.fspath(file)
            if hit(name):
                hits.append(name)
                return _Full(f)
        return f

    monkeypatch.setattr(io, "open", opener)
    return hits


def _temps(home: Path) -> list[str]:
    return sorted(str(p) for p in home.rglob("*") if p.name.endswith(".tmp"))


def _example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Path, Path]:
    from ruamel.yaml import YAML

    from asz_core.collect import collect
    from asz_core.store import Store

    home = tmp_path / "home"
    monkeypatch.setenv("ASZ_HOME", str(home))
    store = Store.open(home)
    collect([ROOT / "examples" / "claude-code"], store)
    calls = [c for c in YAML(typ="safe").load((ROOT / "examples" / "scripted-5e1f0c2a.yaml").read_text())["calls"]
             if c["stage"] not in ("reference", "divergence")]
    calls.append({"stage": "regroup", "call": 1, "requests": [{"usage": {"input": 9, "output": 1}}],
                  "answer": {"targets": [{"target": "t1", "goal": "P1", "cites": ["i1"]}],
                             "goals": [{"goal": "P1", "worked_on": True, "cites": ["i1"]}], "notes": None}})
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"calls": calls}))
    return store, home, script


def _judge(store: Any, script: Path, tmp_path: Path, said: list[str]) -> Any:
    from asz_core.judge import runner

    note = tmp_path / "note.md"
    note.write_text("Incident: totals were rounded wrong.\n")
    return runner.judge(runner.JudgeOptions("5e1f0c2a", evaluator=f"scripted:{script}", sources=(str(note),),
                                            stages=("targets", "achievement", "subtasks", "efficiency")),
                        store=store, progress=said.append)


@pytest.mark.parametrize(("name", "ends"), [
    ("run.json", "error"), ("stages/targets.json", "error"), ("close.json", "error"),
    ("work/sources/src1/copy", "error"), ("work/sources/src1/manifest.json", "error"),
    ("report.html", "closed"), ("call-costs.json", "closed")])
def test_a_run_file_on_a_full_disk_is_named_and_no_temp_is_left(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                name: str, ends: str) -> None:
    store, home, script = _example(tmp_path, monkeypatch)
    base = name.rsplit("/", 1)[-1]
    hits = _full(monkeypatch, lambda p: "/runs/" in p and p.rsplit("/", 1)[0].endswith(name.rsplit("/", 1)[0] if "/" in name else "")
                 and (p.endswith("/" + base) or f"/.{base}." in p))
    said: list[str] = []
    if ends == "error":
        with pytest.raises(OSError) as got:
            _judge(store, script, tmp_path, said)
        assert got.value.errno == errno.ENOSPC and got.value.filename.endswith(name), got.value
        assert "No space left on device" in str(got.value)
    else:
        res = _judge(store, script, tmp_path, said)
        assert (res.path / "close.json").is_file()
        line = next(s for s in said if s.startswith(f"{name} was not written"))
        assert "No space left on device" in line and str(res.path / name) in line and "--" in line
        assert not (res.path / "calls" / "report.traceback.txt").exists()  # a full disk is no fault of asz's
        from asz_core.judge import runner

        assert runner.failures(res.path) == []
        assert any(name in p for p in runner.read_run(res.path)["problems"]) or name == "call-costs.json"
    assert hits and _temps(home) == []
    run = next(home.glob("runs/*/*"))
    assert not (run / name).exists()  # never half a file
    store.close()


def test_a_regroup_file_on_a_full_disk_is_named_and_no_temp_is_left(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from asz_core.judge import person_goals, regroup

    store, home, script = _example(tmp_path, monkeypatch)
    res = _judge(store, script, tmp_path, [])
    goals = tmp_path / "goals.yaml"
    goals.write_text("goals:\n  - Invoice totals right to the cent\n")
    _full(monkeypatch, lambda p: "/regroups/" in p and (p.endswith("/regroup.json") or "/.regroup.json." in p))
    with pytest.raises(OSError) as got:
        regroup.make(res.path, person_goals.read(goals), store=store)
    assert got.value.errno == errno.ENOSPC and got.value.filename == str(res.path / "regroups" / "v1" / "regroup.json")
    assert _temps(home) == [] and not (res.path / "regroups" / "v1" / "regroup.json").exists()
    store.close()


@pytest.mark.parametrize("cache", ["looks.json", "listings.json", "ledger/", "assembly/", "assembly.key"])
def test_a_cache_file_on_a_full_disk_keeps_nothing_and_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      cache: str) -> None:
    """The store's caches: the command gives what it gives with room, keeps nothing of that file,
    and leaves no temp file."""
    from asz_core import api, ledger
    from asz_core.collect import collect
    from asz_core.store import Store

    def commands(home: Path) -> Any:
        store = Store.open(home)
        got = collect([ROOT / "examples" / "claude-code"], store)
        sums, _ = ledger.summaries(store=store)
        conv = api.load("5e1f0c2a", store=store)
        store.close()
        return (got.records_published, [s.total for s in sums], len(conv.steps))

    monkeypatch.setenv("ASZ_HOME", str(tmp_path / "roomy"))
    want = commands(tmp_path / "roomy")
    home = tmp_path / "full"
    monkeypatch.setenv("ASZ_HOME", str(home))
    where = str(home / "cache" / cache)
    hits = _full(monkeypatch, lambda p: p.startswith(where) if cache.endswith("/") else
                 (p == where or p.startswith(f"{home / 'cache'}/.{cache}")))
    assert commands(home) == want
    assert hits and _temps(home) == []
    if not cache.endswith("/"):
        assert not (home / "cache" / cache).exists()
    else:
        assert not [p for p in (home / "cache" / cache).rglob("*") if p.is_file()]
