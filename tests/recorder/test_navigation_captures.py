"""The navigation's records, diff and operations tools read what the recorder captured."""

from __future__ import annotations

import json
from pathlib import Path

from asz_core import navigation as N
from asz_core import window as W
from asz_core.api import collect_paths
from asz_core.registry import Registry
from asz_core.store import Store

from .test_collect_spool import S1, _call, _transcript


def test_records_diff_and_operations_of_captures(tmp_path: Path, asz_home: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    a = ws / "a.txt"
    a.write_text("1\n2\n")
    _call(S1, ws, "toolu_e", "Edit", {"file_path": str(a), "old_string": "2", "new_string": "3"}, lambda: a.write_text("1\n3\n"))
    _call(S1, ws, "toolu_b", "Bash", {"command": "echo x > b.txt"}, lambda: (ws / "b.txt").write_text("x\n"))
    t = _transcript(tmp_path / "projects" / "-ws", S1, ws, [
        ("toolu_e", "Edit", {"file_path": str(a), "old_string": "2", "new_string": "3"}),
        ("toolu_b", "Bash", {"command": "echo x > b.txt"}),
        ("toolu_w", "Write", {"file_path": str(ws / "c.txt"), "content": "c"}),  # no capture: a request only
    ])
    collect_paths([t])
    store = Store.open()
    w = W.build(store, S1, None, None)
    nav = N.Navigator(w, store, budget=1 << 20, adapter=Registry().runtime(w.conv.runtime))
    edit = w.conv.tool_step("toolu_e")
    recs = json.loads(nav.call("records", {"step": edit.id}))["records"]
    assert [(r["kind"], [f["path"] for f in r["files"]]) for r in recs] == [("change", [str(a)])]
    bash = json.loads(nav.call("records", {"step": w.conv.tool_step("toolu_b").id}))["records"]
    assert sorted(r["kind"] for r in bash) == ["change", "execution"]
    assert [r["command"] for r in bash if r["kind"] == "execution"] == ["echo x > b.txt"]
    lines = json.loads(nav.call("diff", {"record": recs[0]["record"]}))["lines"]
    text = [x.get("line") for x in lines if "line" in x]
    assert "-2" in text and "+3" in text
    ops = json.loads(nav.call("operations"))["operations"]
    # landing order: the transcript (with the Write's request) lands before the spooled captures
    assert [(o["id"], o["shows"], o["tool"]) for o in ops] == [
        ("o1", "request", "Write"), ("o2", "capture", "Edit"), ("o3", "capture", "Bash")]
    none = json.loads(nav.call("records", {"step": w.conv.tool_step("toolu_w").id}))
    assert none["records"] == [] and "not_captured" in none["note"]


def test_a_window_shows_the_captures_of_calls_that_returned_before_its_end(tmp_path: Path, asz_home: Path) -> None:
    """The spool lands after the transcript, so captures land past a window's cut; those of calls
    whose result the window shows were written by then and are shown, later ones are not."""
    ws = tmp_path / "ws"
    ws.mkdir()
    a, b = ws / "a.txt", ws / "b.txt"
    _call(S1, ws, "toolu_1", "Write", {"file_path": str(a), "content": "1"}, lambda: a.write_text("1"))
    _call(S1, ws, "toolu_2", "Write", {"file_path": str(b), "content": "2"}, lambda: b.write_text("2"))
    lines = []
    for n, (tid, path) in enumerate((("toolu_1", a), ("toolu_2", b)), 1):
        lines += [
            {"type": "user", "uuid": f"u{n}", "sessionId": S1, "cwd": str(ws), "message": {"role": "user", "content": f"write {n}"}},
            {"type": "assistant", "uuid": f"a{n}", "sessionId": S1, "requestId": f"req_{n}",
             "message": {"id": f"msg_{n}", "role": "assistant", "model": "claude-sonnet-4-5", "stop_reason": "tool_use",
                         "content": [{"type": "tool_use", "id": tid, "name": "Write", "input": {"file_path": str(path), "content": "x"}}],
                         "usage": {"input_tokens": 1, "output_tokens": 1}}},
            {"type": "user", "uuid": f"r{n}", "sessionId": S1,
             "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": "ok"}]}},
        ]
    folder = tmp_path / "projects" / "-ws"
    folder.mkdir(parents=True)
    t = folder / f"{S1}.jsonl"
    t.write_text("".join(json.dumps(x) + "\n" for x in lines))
    collect_paths([t])
    store = Store.open()
    w1 = W.build(store, S1, None, "k1")
    assert w1.captures and all(seq > w1.cut for seq in w1.captures)
    nav = N.Navigator(w1, store, budget=1 << 20, adapter=Registry().runtime(w1.conv.runtime))
    recs = json.loads(nav.call("records", {"step": w1.conv.tool_step("toolu_1").id}))["records"]
    assert [f["path"] for r in recs for f in r["files"]] == [str(a)]
    assert json.loads(nav.call("diff", {"record": recs[0]["record"]}))["lines"]  # its bytes are readable
    assert w1.conv.tool_step("toolu_2") is None  # talk k2 lies past the end: neither its step nor its capture
    ops = json.loads(nav.call("operations"))["operations"]
    assert [(o["shows"], o["path"]) for o in ops] == [("capture", str(a))]
