"""What ClaudeCodeAdapter.read yields for one line comes out in the line's order: its warnings
before its entry, and when reading fails on the line (an adapter bug), the warnings it gave first
are still yielded before the failure, as when each was yielded the moment it was found."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from asz_adapters_claudecode.adapter import ClaudeCodeAdapter
from asz_core.records import Cursor, Entry, Problem

from cc_shapes import Session, text, usage

SID = "0a0a0a0a-1111-4222-8333-444455556666"


def _session(tmp_path: Path) -> Path:
    s = Session(SID)
    s.user("u1", None, "fix the tests")
    s.assistant("a1", "u1", "msg_1", "req_1", text("on it"), usage(3, 0, 0, 5))
    s.assistant("a2", "a1", None, None, text("no id"), usage(3, 0, 0, 5))  # usage, no message id: warned about
    s.raw({"type": ["odd"], "uuid": "x1", "sessionId": SID})  # an unknown type: warned about
    s.user("u2", "a2", "thanks")
    return s.write(tmp_path / "p" / f"{SID}.jsonl")


def _kinds(items: list[Any]) -> list[str]:
    return [f"entry {i.key}" if isinstance(i, Entry) else f"problem {i.line}: {i.message.split(';')[0]}" for i in items]


def test_each_lines_warnings_come_before_its_entry(tmp_path: Path) -> None:
    f = _session(tmp_path)
    got = _kinds(list(ClaudeCodeAdapter().read(f, Cursor())))
    assert got == ["entry u1", "entry a1", "problem 3: assistant line with usage but no message id", "entry a2",
                   "problem 4: unknown entry type '<list>'", "entry x1", "entry u2"]


def test_a_failure_on_a_line_comes_after_the_warnings_it_gave(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = _session(tmp_path)
    events = ClaudeCodeAdapter._events

    def failing(self, typ, obj, st, stream):  # type: ignore[no-untyped-def]
        if obj.get("uuid") == "a2":
            raise RuntimeError("an adapter bug on this line")
        return events(self, typ, obj, st, stream)

    monkeypatch.setattr(ClaudeCodeAdapter, "_events", failing)
    got: list[Any] = []
    cursor = Cursor()
    with pytest.raises(RuntimeError, match="an adapter bug"):
        for item in ClaudeCodeAdapter().read(f, cursor):
            got.append(item)
    assert _kinds(got) == ["entry u1", "entry a1", "problem 3: assistant line with usage but no message id"]
    assert isinstance(got[-1], Problem)
    assert cursor.line == 2  # the failed line is not passed: the next collect reads it again
