"""A full disk while an attempt's files are written (issue 24 part 9): the error names the file,
no temp file is left, and the run still closes, its stage failed with that reason."""

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
