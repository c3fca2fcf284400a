"""Bad input to the Claude Code adapter: a broken JSON line, a truncated last line, an unknown
entry type, an empty file, a binary file, a file that is not a transcript.

Each gets a warning naming the file and line; nothing else in the file or the run is lost; `asz
collect` exits 0 with warnings, and non-zero only when it could read nothing it was given. The
files are small hand-made transcripts (the corpus has no bad input)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from asz_core import api
from asz_core.cli import app
from asz_core.collect import collect
from asz_core.store import Store

SID = "11111111-2222-4333-8444-555555555555"
OTHER = "99999999-2222-4333-8444-555555555555"


def user(uuid: str, parent: str | None, text: str, sid: str = SID) -> str:
    return json.dumps({"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/w",
                       "sessionId": sid, "version": "2.0.30", "type": "user", "uuid": uuid,
                       "timestamp": "2025-11-01T10:00:00.000Z", "message": {"role": "user", "content": text}})


def assistant(uuid: str, parent: str, n: int, text: str, sid: str = SID) -> str:
    return json.dumps({"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/w",
                       "sessionId": sid, "version": "2.0.30", "type": "assistant", "uuid": uuid,
                       "requestId": f"req_{n}", "timestamp": "2025-11-01T10:00:01.000Z",
                       "message": {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
                                   "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                                   "usage": {"input_tokens": 3, "output_tokens": 10 + n,
                                             "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}}})


def good_lines(sid: str = SID, prefix: str = "") -> list[str]:
    """Two talks: prompt, reply, prompt, reply."""
    return [user(f"{prefix}u1", None, "first question", sid), assistant(f"{prefix}a1", f"{prefix}u1", 1, "first answer", sid),
            user(f"{prefix}u2", f"{prefix}a1", "second question", sid), assistant(f"{prefix}a2", f"{prefix}u2", 2, "second answer", sid)]


def write(path: Path, lines: list[str], end: str = "\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + end, encoding="utf-8")
    return path


def summary(store: Store, session: str = SID) -> dict[str, Any]:
    conv = api.load(session, store=store)
    return {
        "calls": len(conv.model_calls()),
        "inputs": [s.text for s in conv.person_inputs()],
        "replies": [s.text for s in conv.steps if s.kind == "reply"],
    }


def problems_of(result: Any) -> list[str]:
    return [str(p) for p in result.problems]


def names(problem: str, path: Path, line: int) -> bool:
    return problem.startswith(f"{path}:{line}: ")


GOOD = {"calls": 2, "inputs": ["first question", "second question"], "replies": ["first answer", "second answer"]}


# --- each case, in the library ----------------------------------------------------------------

def test_broken_json_line(tmp_path: Path, store: Store) -> None:
    lines = good_lines()
    f = write(tmp_path / "proj" / f"{SID}.jsonl", lines[:2] + ['{"type":"user","uuid": broken'] + lines[2:])
    r = collect([tmp_path / "proj"], store)
    (p,) = problems_of(r)
    assert names(p, f, 3) and "not JSON" in p
    assert summary(store) == GOOD


def test_truncated_last_line_is_read_when_complete(tmp_path: Path, store: Store) -> None:
    lines = good_lines()
    f = tmp_path / "proj" / f"{SID}.jsonl"
    write(f, lines[:3] + [lines[3][:40]], end="")  # the writer stopped mid-line
    r = collect([tmp_path / "proj"], store)
    (p,) = problems_of(r)
    assert names(p, f, 4) and "truncated" in p
    assert summary(store) == {"calls": 1, "inputs": ["first question", "second question"], "replies": ["first answer"]}
    write(f, lines)  # the line is finished
    r = collect([tmp_path / "proj"], store)
    assert problems_of(r) == [] and r.records_published == 1
    assert summary(store) == GOOD


def test_unknown_entry_type_is_kept(tmp_path: Path, store: Store) -> None:
    lines = good_lines()
    odd = json.dumps({"type": "custom-widget", "uuid": "w1", "sessionId": SID, "widget": {"a": 1}})
    f = write(tmp_path / "proj" / f"{SID}.jsonl", lines[:2] + [odd] + lines[2:])
    r = collect([tmp_path / "proj"], store)
    (p,) = problems_of(r)
    assert names(p, f, 3) and "unknown entry type 'custom-widget'" in p
    assert summary(store) == GOOD
    recs = store.records(SID, 1)
    (kept,) = [x for x in recs if x.key == "w1"]
    assert kept.kind == "custom-widget" and kept.events == ()
    assert json.loads(store.raw(SID, kept.seq))["widget"] == {"a": 1}


def test_line_of_unexpected_shape_is_kept(tmp_path: Path, store: Store) -> None:
    lines = good_lines()
    odd = [json.dumps({"type": "assistant", "uuid": "x1", "sessionId": SID, "message": "not an object"}),
           json.dumps({"type": "user", "uuid": "x2", "sessionId": SID,
                       "message": {"content": [{"type": "tool_result", "tool_use_id": {"not": "a string"}}]}}),
           json.dumps({"type": "assistant", "uuid": "x3", "sessionId": SID, "requestId": "r",
                       "message": {"id": "m", "content": [{"type": "tool_use", "id": ["list"], "name": "Bash", "input": {}}]}})]
    write(tmp_path / "proj" / f"{SID}.jsonl", lines[:2] + odd + lines[2:])
    collect([tmp_path / "proj"], store)
    got = summary(store)  # assembles without error
    assert got["inputs"] == GOOD["inputs"] and got["replies"] == GOOD["replies"]


@pytest.mark.parametrize("case", ["empty", "blank lines", "binary", "not a transcript", "json array"])
def test_whole_file_cases(tmp_path: Path, store: Store, case: str) -> None:
    good = write(tmp_path / "proj" / f"{SID}.jsonl", good_lines())
    bad = tmp_path / "proj" / f"{OTHER}.jsonl"
    content = {
        "empty": b"",
        "blank lines": b"\n  \n\n",
        "binary": bytes(range(256)) * 40,
        "not a transcript": b'{"level": "info", "msg": "server started"}\n{"level": "warn", "msg": "slow"}\n',
        "json array": b'[\n  {"a": 1},\n  {"b": 2}\n]\n',
    }[case]
    bad.write_bytes(content)
    r = collect([tmp_path / "proj"], store)
    (p,) = problems_of(r)  # one warning for the whole file, not one per line
    line = 0 if case in ("empty", "blank lines") else 1
    assert names(p, bad, line), p
    assert {"empty": "empty file", "blank lines": "empty file", "binary": "binary"}.get(case, "not a Claude Code transcript") in p
    assert summary(store) == GOOD
    assert [c.id for c in store.conversations()] == [SID]  # nothing stored from the bad file
    # Unchanged, it is not read (nor warned about) again.
    r = collect([tmp_path / "proj"], store)
    assert problems_of(r) == [] and r.records_published == 0
    assert good.exists()


def test_empty_file_read_when_written_later(tmp_path: Path, store: Store) -> None:
    f = tmp_path / "proj" / f"{SID}.jsonl"
    write(tmp_path / "proj" / f"{OTHER}.jsonl", good_lines(OTHER, "o"))
    f.write_bytes(b"")  # Claude Code created the session file and has not written yet
    r = collect([tmp_path / "proj"], store)
    assert [p for p in problems_of(r) if "empty" in p] == [f"{f}:0: empty file; nothing to read"]
    write(f, good_lines())
    r = collect([tmp_path / "proj"], store)
    assert problems_of(r) == []
    assert summary(store) == GOOD


def test_all_cases_in_one_run_lose_nothing(tmp_path: Path, store: Store) -> None:
    proj = tmp_path / "proj"
    lines = good_lines()
    odd = json.dumps({"type": "custom-widget", "uuid": "w1", "sessionId": SID})
    f = write(proj / f"{SID}.jsonl", lines[:1] + ["{broken"] + lines[1:2] + [odd] + lines[2:3] + [lines[3][:30]], end="")
    other = write(proj / f"{OTHER}.jsonl", good_lines(OTHER, "o"))
    (proj / "empty.jsonl").write_bytes(b"")
    (proj / "blob.jsonl").write_bytes(b"\x00\x01\x02\xff\xfe" * 100)
    (proj / "notes.jsonl").write_text('{"note": 1}\n')
    r = collect([proj], store)
    got = sorted(problems_of(r))
    assert len(got) == 6, got
    for path, line, what in [(f, 2, "not JSON"), (f, 4, "unknown entry type"), (f, 6, "truncated"),
                             (proj / "empty.jsonl", 0, "empty"), (proj / "blob.jsonl", 1, "binary"),
                             (proj / "notes.jsonl", 1, "not a Claude Code transcript")]:
        assert any(names(p, path, line) and what in p for p in got), (path, line, what, got)
    assert summary(store, OTHER) == {"calls": 2, "inputs": ["first question", "second question"],
                                     "replies": ["first answer", "second answer"]}
    assert summary(store) == {"calls": 1, "inputs": ["first question", "second question"], "replies": ["first answer"]}
    assert other.exists()


# --- the command ------------------------------------------------------------------------------

def run(*args: str) -> Any:
    # A wide terminal so a warning is not folded inside a long path.
    return CliRunner().invoke(app, ["collect", *args], env={"COLUMNS": "1000", "NO_COLOR": "1"})


def flat(text: str) -> str:
    return "".join(text.split())


def test_cli_exits_0_with_warnings(tmp_path: Path, asz_home: Path) -> None:
    proj = tmp_path / "proj"
    lines = good_lines()
    f = write(proj / f"{SID}.jsonl", lines[:2] + ["{broken"] + lines[2:])
    (proj / "blob.jsonl").write_bytes(b"\x00\xff" * 100)
    r = run(str(proj))
    assert r.exit_code == 0, r.output
    out = flat(r.output)
    assert flat(f"warning: {f}:3: not JSON") in out
    assert flat(f"warning: {proj / 'blob.jsonl'}:1: binary") in out
    r = run(str(proj), "--json")
    assert r.exit_code == 0
    data = json.loads(r.stdout)
    assert len(data["warnings"]) == 0  # the second collect reads nothing new
    store = Store.open(asz_home)
    try:
        assert summary(store) == GOOD
    finally:
        store.close()


def test_cli_json_lists_warnings(tmp_path: Path, asz_home: Path) -> None:
    proj = tmp_path / "proj"
    f = write(proj / f"{SID}.jsonl", good_lines()[:3] + ['{"type":"mystery","sessionId":"%s"}' % SID] + good_lines()[3:])
    r = run(str(proj), "--json")
    assert r.exit_code == 0
    data = json.loads(r.stdout)
    assert data["warnings"] == [f"{f}:4: unknown entry type 'mystery'; kept, no events (further lines of this type are not warned about)"]
    assert data["records_published"] == 5


@pytest.mark.parametrize("case", ["empty", "binary", "not a transcript", "missing"])
def test_cli_fails_when_nothing_could_be_read(tmp_path: Path, asz_home: Path, case: str) -> None:
    bad = tmp_path / "bad.jsonl"
    if case == "empty":
        bad.write_bytes(b"")
    elif case == "binary":
        bad.write_bytes(b"\x00\x01\xff" * 50)
    elif case == "not a transcript":
        bad.write_text('{"level": "info"}\n')
    r = run(str(bad))
    assert r.exit_code != 0
    assert str(bad) in flat(r.output) + flat(str(r.exception))  # the message names the file


def test_cli_folder_of_bad_files_fails(tmp_path: Path, asz_home: Path) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "empty.jsonl").write_bytes(b"")
    (proj / "blob.jsonl").write_bytes(b"\x00\x01" * 50)
    r = run(str(proj))
    assert r.exit_code != 0


def test_cli_one_bad_path_among_good_ones_exits_0(tmp_path: Path, asz_home: Path) -> None:
    good = write(tmp_path / "proj" / f"{SID}.jsonl", good_lines())
    bad = tmp_path / "other" / "bad.jsonl"
    bad.parent.mkdir()
    bad.write_bytes(b"\x00\x01" * 50)
    r = run(str(good.parent), str(bad), str(tmp_path / "missing"))
    assert r.exit_code == 0, r.output
    out = flat(r.output)
    assert flat(f"{bad}:0:") in out and flat(f"{tmp_path / 'missing'}:0:") in out


def test_blank_lines_then_written(tmp_path: Path, store: Store) -> None:
    f = tmp_path / "proj" / f"{SID}.jsonl"
    write(tmp_path / "proj" / f"{OTHER}.jsonl", good_lines(OTHER, "o"))
    f.write_bytes(b"\n\n")
    collect([tmp_path / "proj"], store)
    with open(f, "a") as fh:
        fh.write(good_lines()[0] + "\n{broken\n" + "\n".join(good_lines()[1:]) + "\n")
    r = collect([tmp_path / "proj"], store)
    (p,) = problems_of(r)
    assert names(p, f, 4) and "not JSON" in p  # line numbers count the blank lines
    assert summary(store) == GOOD


def test_first_line_still_being_written_is_not_judged(tmp_path: Path, store: Store) -> None:
    """A session file whose only line is half written is not skipped as "not a transcript":
    it is read once the line is whole."""
    f = tmp_path / "proj" / f"{SID}.jsonl"
    write(tmp_path / "proj" / f"{OTHER}.jsonl", good_lines(OTHER, "o"))
    f.write_text('{"type":"file-history-snap')
    r = collect([tmp_path / "proj"], store)
    (p,) = problems_of(r)
    assert names(p, f, 1) and "truncated" in p
    snapshot = json.dumps({"type": "file-history-snapshot", "messageId": "u1", "snapshot": {}, "isSnapshotUpdate": False})
    write(f, [snapshot, *good_lines()])
    r = collect([tmp_path / "proj"], store)
    assert problems_of(r) == []
    assert summary(store) == GOOD


def test_forced_runtime_on_only_bad_files_exits_non_zero(tmp_path, monkeypatch):
    """--runtime skips detection; a file of nothing but broken lines still gives nothing: exit 1."""
    from typer.testing import CliRunner

    from asz_core.cli import app

    monkeypatch.setenv("ASZ_HOME", str(tmp_path / "home"))
    bad = tmp_path / "0b1e2c3d-0000-4000-8000-000000000000.jsonl"
    bad.write_text("{not json\n[1, 2]\n")
    res = CliRunner().invoke(app, ["collect", "--runtime", "claudecode", str(bad)])
    assert res.exit_code == 1
    assert f"{bad}:1" in res.output.replace("\n", "")  # rich wraps long lines


def test_an_unknown_entry_type_is_warned_about_once_per_file(tmp_path):
    """Newer Claude Code versions write types this adapter does not know: one warning per type,
    naming the first line; every line is still stored."""
    from asz_core.collect import collect
    from asz_core.store import Store

    sid = "0b1e2c3d-0000-4000-8000-00000000abcd"
    f = tmp_path / f"{sid}.jsonl"
    lines = [{"type": "user", "uuid": "u1", "sessionId": sid, "message": {"role": "user", "content": "hi"}}]
    lines += [{"type": "cost-state", "uuid": f"c{i}", "sessionId": sid} for i in range(5)]
    lines += [{"type": "tools-used", "uuid": "t1", "sessionId": sid}]
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    store = Store.open(tmp_path / "home")
    r = collect([f], store)
    assert [(p.line, p.message.split(";")[0]) for p in r.problems] == [
        (2, "unknown entry type 'cost-state'"), (7, "unknown entry type 'tools-used'")]
    assert r.records_published == 7
