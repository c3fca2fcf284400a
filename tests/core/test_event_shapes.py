"""Events of an unexpected shape from a runtime adapter (a third-party one, a bug): assembly
keeps only what its fields can be, so nothing downstream (navigation, the ledger) breaks."""

from __future__ import annotations

from pathlib import Path

from asz_core import api, ledger, navigation
from asz_core.collect import collect
from asz_core.records import Cursor, Entry

from .helpers import OneRuntime


class _ListNames:
    """An adapter whose tool calls are named by a list (as a broken record would give it)."""

    name = "listnames"

    def detect(self, path: Path) -> bool:
        return path.is_file()

    def files(self, path: Path) -> list[Path]:
        return [path]

    def companions(self) -> list[Path]:
        return []

    def read(self, path: Path, cursor: Cursor):
        events = [
            ({"e": "input", "source": "person", "text": "edit a.py", "size": 9},),
            ({"e": "call", "id": "c1", "model": "claude-sonnet-4-5", "usage": {"input": 10, "output": 2}, "final": True},
             {"e": "tool_use", "call": "c1", "id": "t1", "name": ["Edit"], "input": {"file_path": "a.py"}},
             {"e": "tool_use", "call": "c1", "id": "t2", "name": {"n": "Edit"}, "input": {"file_path": "a.py"}}),
            ({"e": "tool_result", "id": "t1", "error": False, "text": "ok", "size": 2},),
        ]
        for n, evs in enumerate(events, 1):
            yield Entry(key=f"k{n}", session="s1", stream="main", kind="line", file=str(path), line=n,
                        raw=b"{}", events=evs)
        cursor.offset = path.stat().st_size


def test_a_tool_named_by_a_list_or_an_object_is_a_tool_without_a_name(tmp_path: Path, store) -> None:
    f = tmp_path / "t.log"
    f.write_text("x\n")
    collect([f], store, OneRuntime(_ListNames()))  # type: ignore[arg-type]
    [row] = store.conversations()
    conv = api.load(row.id, store=store)
    tools = [s for s in conv.steps if s.kind == "tool"]
    assert [(s.tool_id, s.name) for s in tools] == [("t1", None), ("t2", None)]
    ledger.build(conv, ledger.load_prices())
    nav = navigation.open_navigator(row.id, store=store)
    assert '"name":null' in nav.call("step", {"id": tools[0].id})
    nav.call("talks")
