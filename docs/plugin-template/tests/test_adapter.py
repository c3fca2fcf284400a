"""The template's own test: run it with `pytest` after `pip install -e .[test]`."""

from __future__ import annotations

import json
from pathlib import Path

from asz_core.records import Cursor, Entry, Problem

from asz_myruntime.adapter import MyRuntimeAdapter

LINES = [
    {"session": "s1", "id": "m1", "ts": "2025-01-01T10:00:00Z", "role": "user", "text": "fix the test"},
    {"session": "s1", "id": "m2", "ts": "2025-01-01T10:00:05Z", "role": "assistant", "model": "some-model", "text": "Writing.",
     "usage": {"prompt": 1200, "cached": 1000, "completion": 40},
     "tool_calls": [{"id": "t1", "name": "write", "args": {"path": "a.py", "content": "x = 1"}}]},
    {"session": "s1", "id": "m3", "ts": "2025-01-01T10:00:06Z", "role": "tool", "call_id": "t1", "text": "ok"},
]


def write(tmp_path: Path, tail: str = "") -> Path:
    f = tmp_path / "one.mylog"
    f.write_text("".join(json.dumps(x) + "\n" for x in LINES) + tail)
    return f


def test_reads_entries_and_events(tmp_path: Path) -> None:
    f = write(tmp_path, "not json\n")
    a = MyRuntimeAdapter()
    assert a.detect(f) and a.detect(tmp_path) and a.files(tmp_path) == [f]
    items = list(a.read(f, Cursor()))
    entries = [i for i in items if isinstance(i, Entry)]
    problems = [i for i in items if isinstance(i, Problem)]
    assert [e.key for e in entries] == ["m1", "m2", "m3"] and {e.session for e in entries} == {"s1"}
    assert [(p.line, "not JSON" in p.message) for p in problems] == [(4, True)]
    call = next(ev for ev in entries[1].events if ev["e"] == "call")
    assert call["usage"] == {"input": 200, "output": 40, "cache_read": 1000, "cache_write": None}
    tool = next(ev for ev in entries[1].events if ev["e"] == "tool_use")
    assert a.file_requests(tool["name"], tool["input"]) == ["a.py"]


def test_reads_on_from_the_cursor(tmp_path: Path) -> None:
    f = write(tmp_path, '{"session": "s1", "id": "m4", "role": "us')
    a = MyRuntimeAdapter()
    cur = Cursor()
    first = list(a.read(f, cur))
    assert [i.key for i in first if isinstance(i, Entry)] == ["m1", "m2", "m3"]
    with open(f, "a") as fh:
        fh.write('er", "text": "thanks"}\n')
    again = [i for i in a.read(f, cur) if isinstance(i, Entry)]
    assert [e.key for e in again] == ["m4"] and again[0].line == 4
