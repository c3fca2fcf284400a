"""The operations list (spec "The files a target changed") over assembled events: captures,
requests no capture names, an unlisted cut record, history not net diff, ids in landing order."""

from __future__ import annotations

from typing import Any

from asz_core.assembly import assemble
from asz_core.operations import operations
from asz_core.store import Round, StoredRecord

from asz_adapters_claudecode.adapter import ClaudeCodeAdapter

FR = ClaudeCodeAdapter().file_requests
WS = "/w"


def _recs(events: list[tuple[str, list[dict[str, Any]]]]) -> list[StoredRecord]:
    return [StoredRecord(i, f"k{i}", 1, 1, stream, "x", "f", i, None, tuple(evs)) for i, (stream, evs) in enumerate(events, 1)]


def _tool(tid: str, name: str, inp: dict[str, Any], result: bool | None = True) -> list[tuple[str, list[dict[str, Any]]]]:
    out = [("main", [{"e": "call", "id": f"c-{tid}", "model": "m", "usage": None, "final": True},
                     {"e": "tool_use", "call": f"c-{tid}", "id": tid, "name": name, "input": inp}])]
    if result is not None:
        out.append(("main", [{"e": "tool_result", "id": tid, "error": not result, "text": "", "size": 0}]))
    return out


def _change(tid: str, *files: tuple[str, str], cut: int | None = None, name: str = "Edit") -> tuple[str, list[dict[str, Any]]]:
    ev: dict[str, Any] = {"e": "change", "tool": tid, "name": name, "status": "returned", "workspace": WS, "vcs": "git",
                          "files": [] if cut else [{"path": f"{WS}/{p}", "rel": p, "kind": k, "before": None, "after": "sha256:x"}
                                                   for p, k in files], "cut": bool(cut)}
    if cut:
        ev["count"] = cut
    return ("main", [ev])


def _conv(events: list[tuple[str, list[dict[str, Any]]]]) -> Any:
    records = _recs([("main", [{"e": "input", "source": "person", "text": "go", "size": 2}])] + events)
    return assemble("c", "claudecode", Round("c", 1, "", "h", "t", len(records)), records)


def test_captures_and_requests_in_landing_order() -> None:
    conv = _conv(
        _tool("t1", "Write", {"file_path": f"{WS}/a.py", "content": "x"})
        + _tool("t2", "Edit", {"file_path": f"{WS}/b.py"}, result=False)  # failed, nothing captured
        + _tool("t3", "Bash", {"command": "make"})
        + _tool("t4", "Edit", {"file_path": "c.py"}, result=None)  # never returned, relative path
        + [_change("t1", ("a.py", "added"), name="Write"), _change("t2"), _change("t3", ("out/x.o", "added"), ("d.py", "deleted"), name="Bash")]
    )
    ops = operations(conv, FR)
    rows = [(o.id, o.shows, o.tool, o.status, o.path, o.kind) for o in ops]
    assert rows == [
        ("o1", "request", "Edit", "failed", f"{WS}/b.py", None),  # t2 named b.py; its capture named nothing
        ("o2", "request", "Edit", "no_result", "c.py", None),  # no change record: as the request names it
        ("o3", "capture", "Write", "returned", f"{WS}/a.py", "added"),
        ("o4", "capture", "Bash", "returned", f"{WS}/out/x.o", "added"),
        ("o5", "capture", "Bash", "returned", f"{WS}/d.py", "deleted"),
    ]
    # The Write's request names a.py and its capture does too: one operation, the capture.
    assert sum(1 for o in ops if o.path == f"{WS}/a.py") == 1
    assert conv.step(ops[2].step).changes[0]["seq"] == ops[2].record


def test_without_file_requests_only_captures() -> None:
    conv = _conv(_tool("t1", "Edit", {"file_path": f"{WS}/a.py"}))
    assert operations(conv, None) == []
    assert [o.path for o in operations(conv, FR)] == [f"{WS}/a.py"]


def test_history_not_net_diff() -> None:
    """A repeated edit, two captures of one change and a revert are operations of their own."""
    conv = _conv(
        _tool("t1", "Edit", {"file_path": f"{WS}/a.py"}) + _tool("t2", "Edit", {"file_path": f"{WS}/a.py"})
        + _tool("t3", "Bash", {"command": "git checkout a.py"})
        + [_change("t1", ("a.py", "modified")), _change("t2", ("a.py", "modified")),
           _change("t3", ("a.py", "modified"), name="Bash"), _change("t3", ("a.py", "modified"), name="Bash")]
    )
    ops = operations(conv, FR)
    assert [(o.id, o.step, o.shows) for o in ops] == [("o1", "s3", "capture"), ("o2", "s5", "capture"),
                                                       ("o3", "s7", "capture"), ("o4", "s7", "capture")]


def test_cut_record_is_one_unlisted_operation_and_the_request_still_names_its_file() -> None:
    conv = _conv(_tool("t1", "Write", {"file_path": f"{WS}/a.py"}) + [_change("t1", cut=4321, name="Write")])
    ops = operations(conv, FR)
    assert [(o.id, o.shows, o.path, o.count) for o in ops] == [("o1", "request", f"{WS}/a.py", None),
                                                                ("o2", "unlisted", None, 4321)]


def test_records_land_before_their_step_and_records_of_unknown_calls() -> None:
    """Assembly attaches a record to its tool step whatever their order; a record whose call no
    step holds is listed with no step, by its own status."""
    events = [_change("t1", ("a.py", "modified")), _change("zz", ("q.py", "added"), name="Bash")] + _tool("t1", "Edit", {"file_path": f"{WS}/a.py"})
    conv = _conv(events)
    assert conv.tool_step("t1").changes and conv.tool_step("t1").changes[0]["files"][0]["rel"] == "a.py"
    assert [ev["tool"] for ev in conv.unattached] == ["zz"]
    ops = operations(conv, FR)
    assert [(o.id, o.step, o.tool, o.path) for o in ops] == [("o1", "s3", "Edit", f"{WS}/a.py"), ("o2", None, "Bash", f"{WS}/q.py")]
    # Captured records open no stream and no step.
    assert [s.id for s in conv.streams] == ["m"]
    assert all(s.kind != "notice" for s in conv.steps)


def test_executions_attach_to_their_step() -> None:
    ex = ("main", [{"e": "execution", "tool": "t1", "name": "Bash", "status": "failed", "command": "false", "exit_code": 1,
                    "duration_ms": 3, "output_size": 0, "output_digest": "sha256:e3"}])
    conv = _conv(_tool("t1", "Bash", {"command": "false"}, result=False) + [ex])
    s = conv.tool_step("t1")
    assert [(e["exit_code"], e["command"]) for e in s.executions] == [(1, "false")]
    assert operations(conv, FR) == []


def test_diff_of_a_raw_change_record() -> None:
    from asz_core.operations import diff_of, record_files

    raw = (b'{"type":"change","workspace":"/w","files":[{"path":"a.py","kind":"modified","diff":"--- a/a.py\\n+++ b/a.py\\n"},'
           b'{"path":".env","kind":"modified","ignored":true}],"cut":false}')
    assert [f["path"] for f in record_files(raw)] == ["/w/a.py", "/w/.env"]
    assert diff_of(raw, "/w/a.py") == "--- a/a.py\n+++ b/a.py\n"
    assert diff_of(raw, "/w/.env") is None and diff_of(b"not json", "/w/a.py") is None


def test_operations_text_and_json() -> None:
    from rich.console import Console

    from asz_core import report

    ev = _change("t1", (".env", "modified"), name="Edit")
    ev[1][0]["files"][0]["ignored"] = True
    conv = _conv(_tool("t1", "Edit", {"file_path": f"{WS}/.env"}) + _tool("t2", "Bash", {"command": "gen"})
                 + [ev, _change("t2", cut=3000, name="Bash")])
    ops = operations(conv, FR)
    con = Console(width=200, record=True)
    con.print(report.operations_text(conv, ops))
    text = con.export_text()
    assert "/w/.env  [ignored]" in text and "3000 files, not named" in text and "not_captured" not in text
    data = report.operations_json(conv, ops)
    assert data["captured"] is True and [o["id"] for o in data["operations"]] == ["o1", "o2"]
    bare = _conv(_tool("t1", "Edit", {"file_path": f"{WS}/a.py"}))
    con = Console(width=200, record=True)
    con.print(report.operations_text(bare, operations(bare, FR)))
    assert "not_captured" in con.export_text()
