"""The recorder's hook entry point, driven with the hook input JSON Claude Code sends (common
fields session_id, transcript_path, cwd, permission_mode, hook_event_name; tool events add
tool_name, tool_input, tool_use_id; PostToolUse adds tool_response and duration_ms;
PostToolUseFailure adds error and is_interrupt) over a real git work tree and a plain folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from asz_adapters_claudecode import hook

SESSION = "0b5e5e8a-1111-4c4c-9999-0123456789ab"


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True,
                          env=dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
                                   GIT_COMMITTER_EMAIL="t@t")).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("def f():\n    return 1\n")
    (root / "README.md").write_text("hello\n")
    (root / ".gitignore").write_text(".env\nbuild/\n")
    (root / ".env").write_text("TOKEN=secret\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "init")
    return root


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "asz-home"
    monkeypatch.setenv("ASZ_HOME", str(h))
    return h


def _input(event: str, cwd: Path, tid: str, tool: str, inp: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"session_id": SESSION, "transcript_path": f"/nowhere/{SESSION}.jsonl", "cwd": str(cwd),
            "permission_mode": "acceptEdits", "hook_event_name": event, "tool_name": tool, "tool_input": inp,
            "tool_use_id": tid, **more}


def call(cwd: Path, tid: str, tool: str, inp: dict[str, Any], act: Any = None, *, fail: str | None = None,
         response: Any = None) -> None:
    """One tool call as Claude Code runs it: PreToolUse, the tool's effect, then PostToolUse (or
    PostToolUseFailure)."""
    hook.handle("", _input("PreToolUse", cwd, tid, tool, inp))
    if act:
        act()
    if fail is not None:
        hook.handle("", _input("PostToolUseFailure", cwd, tid, tool, inp, error=fail, is_interrupt=False))
    else:
        hook.handle("", _input("PostToolUse", cwd, tid, tool, inp, tool_response=response or {}, duration_ms=12))


def spool(home: Path) -> list[dict[str, Any]]:
    p = home / "recorder" / "spool" / f"{SESSION}.jsonl"
    return [json.loads(x) for x in p.read_text().splitlines()] if p.exists() else []


def _files(rec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["path"]: f for f in rec["files"]}


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for dp, dns, fns in os.walk(root):
        for fn in fns:
            p = Path(dp) / fn
            st = p.stat()
            out[str(p.relative_to(root))] = (st.st_size, st.st_mtime_ns)
    return out


def test_git_write_edit_bash(repo: Path, home: Path) -> None:
    new = repo / "src" / "new.py"
    call(repo, "toolu_1", "Write", {"file_path": str(new), "content": "x = 1\n"}, lambda: new.write_text("x = 1\n"),
         response={"type": "create", "filePath": str(new)})
    app = repo / "src" / "app.py"
    call(repo, "toolu_2", "Edit", {"file_path": str(app), "old_string": "1", "new_string": "2"},
         lambda: app.write_text("def f():\n    return 2\n"))

    def bash() -> None:
        (repo / "made.txt").write_text("made\n")
        (repo / "README.md").unlink()

    call(repo, "toolu_3", "Bash", {"command": "echo made > made.txt; rm README.md"}, bash,
         response={"stdout": "ok\n", "stderr": "", "interrupted": False, "isImage": False})
    recs = spool(home)
    assert [(r["type"], r["tool_use_id"], r["status"]) for r in recs] == [
        ("change", "toolu_1", "returned"), ("change", "toolu_2", "returned"),
        ("change", "toolu_3", "returned"), ("execution", "toolu_3", "returned")]
    w = _files(recs[0])
    assert list(w) == ["src/new.py"] and w["src/new.py"]["kind"] == "added" and w["src/new.py"]["before"] is None
    assert "+x = 1" in w["src/new.py"]["diff"]
    e = _files(recs[1])["src/app.py"]
    assert e["kind"] == "modified" and e["before"] != e["after"] and e["before"].startswith("sha256:")
    assert "-    return 1\n+    return 2" in e["diff"]
    b = _files(recs[2])
    assert {p: f["kind"] for p, f in b.items()} == {"made.txt": "added", "README.md": "deleted"}
    assert "-hello" in b["README.md"]["diff"]
    ex = recs[3]
    assert ex["command"].startswith("echo made") and ex["exit_code"] == 0 and ex["duration_ms"] == 12
    assert ex["output_size"] == 3 and ex["output_digest"].startswith("sha256:")
    assert recs[0]["workspace"] == str(repo) and recs[0]["vcs"] == "git"
    # Nothing left pending, nothing logged.
    assert not list((home / "recorder" / "pending").rglob("*.json"))
    assert not (home / "recorder" / "hook.log").exists()


def test_git_dirty_file_changed_again_and_a_call_that_changed_nothing(repo: Path, home: Path) -> None:
    app = repo / "src" / "app.py"
    app.write_text("def f():\n    return 5\n")  # dirty before the call
    call(repo, "t0", "Read", {"file_path": str(app)})  # a read-only tool: no comparison, no record
    call(repo, "t1", "Bash", {"command": "true"}, response={"stdout": "", "stderr": ""})
    call(repo, "t2", "Bash", {"command": "sed"}, lambda: app.write_text("def f():\n    return 6\n"),
         response={"stdout": "", "stderr": ""})
    recs = [r for r in spool(home) if r["type"] == "change"]
    assert [r["tool_use_id"] for r in recs] == ["t1", "t2"]
    assert recs[0]["files"] == [] and recs[0]["cut"] is False  # captured: nothing changed
    f = _files(recs[1])["src/app.py"]
    assert "-    return 5\n+    return 6" in f["diff"]


def test_failed_command_and_never_returned(repo: Path, home: Path) -> None:
    call(repo, "t1", "Bash", {"command": "make; exit 2"}, lambda: (repo / "partial.o").write_bytes(b"\x00\x01bin"),
         fail="Exit code 2\nmake: *** no rule")
    hook.handle("", _input("PreToolUse", repo, "t2", "Bash", {"command": "sleep 100"}))
    (repo / "late.txt").write_text("late\n")
    hook.handle("", {"session_id": SESSION, "cwd": str(repo), "hook_event_name": "Stop", "stop_hook_active": False})
    recs = spool(home)
    assert [(r["type"], r["tool_use_id"], r["status"]) for r in recs] == [
        ("change", "t1", "failed"), ("execution", "t1", "failed"), ("change", "t2", "no_result"), ("execution", "t2", "no_result")]
    f = _files(recs[0])["partial.o"]
    assert f["binary"] is True and "diff" not in f
    assert recs[1]["exit_code"] == 2 and recs[1]["output_size"] > 0
    assert "late.txt" in _files(recs[2]) and recs[3]["exit_code"] is None and recs[3]["output_digest"] is None


def test_gitignored_files_are_named_and_hashed_never_inlined(repo: Path, home: Path) -> None:
    env = repo / ".env"
    call(repo, "t1", "Edit", {"file_path": str(env), "old_string": "secret", "new_string": "other"},
         lambda: env.write_text("TOKEN=other\n"))
    recs = spool(home)
    f = _files(recs[0])[".env"]
    assert f["ignored"] is True and "diff" not in f and f["before"] and f["after"] and f["before"] != f["after"]
    everything = b"".join(p.read_bytes() for p in (home / "recorder").rglob("*") if p.is_file())
    assert b"secret" not in everything and b"other" not in everything  # not in the spool, not kept as a blob
    # A tracked file matched by .gitignore is not inlined either.
    (repo / "build").mkdir()
    (repo / "build" / "out.txt").write_text("v1\n")
    _git(repo, "add", "-f", "build/out.txt")
    _git(repo, "commit", "-qm", "b")
    call(repo, "t2", "Bash", {"command": "x"}, lambda: (repo / "build" / "out.txt").write_text("v2\n"), response={})
    g = _files(spool(home)[1])["build/out.txt"]
    assert g["ignored"] is True and "diff" not in g


def test_oversized_and_limits(repo: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = repo / "big.txt"
    call(repo, "t1", "Bash", {"command": "gen"}, lambda: big.write_text("x" * (hook.TEXT_MAX + 10)), response={})
    f = _files(spool(home)[0])["big.txt"]
    assert f["oversized"] is True and "diff" not in f and f["size_after"] == hook.TEXT_MAX + 10
    monkeypatch.setattr(hook, "FILES_MAX", 5)

    def many() -> None:
        for i in range(8):
            (repo / f"m{i}.txt").write_text(f"{i}\n")

    call(repo, "t2", "Bash", {"command": "many"}, many, response={})
    cut = [r for r in spool(home) if r["type"] == "change"][1]
    assert cut["cut"] is True and cut["files"] == [] and cut["count"] == 8


def test_commit_inside_a_call_and_head_moving(repo: Path, home: Path) -> None:
    app = repo / "src" / "app.py"

    def commit() -> None:
        app.write_text("def f():\n    return 9\n")
        _git(repo, "commit", "-qam", "nine")

    call(repo, "t1", "Bash", {"command": "edit and commit"}, commit, response={})
    rec = spool(home)[0]
    assert rec["head"][0] != rec["head"][1]
    assert "-    return 1\n+    return 9" in _files(rec)["src/app.py"]["diff"]


def test_never_writes_to_the_workspace(repo: Path, home: Path) -> None:
    before = _tree(repo)
    (repo / "README.md").write_text("dirty\n")
    before = _tree(repo)
    call(repo, "t1", "Bash", {"command": "true"}, response={})
    call(repo, "t2", "Edit", {"file_path": str(repo / "README.md")})
    assert _tree(repo) == before  # .git/index included: git runs without optional locks


def test_plain_folder(tmp_path: Path, home: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    (root / "keep.txt").write_text("a\n")
    (root / "notes.md").write_text("one\n")
    (root / ".gitignore").write_text("*.key\ncache/\n")
    (root / "id.key").write_text("PRIVATE\n")
    notes = root / "notes.md"
    call(root, "t1", "Edit", {"file_path": str(notes)}, lambda: notes.write_text("two\n"))

    def bash() -> None:
        (root / "keep.txt").write_text("b\n")
        (root / "out.txt").write_text("new\n")
        (root / "id.key").write_text("PRIVATE2\n")
        (root / "cache").mkdir()
        (root / "cache" / "c.bin").write_text("c\n")

    call(root, "t2", "Bash", {"command": "go"}, bash, response={"stdout": "", "stderr": ""})
    call(root, "t3", "Write", {"file_path": str(root / "id.key")}, lambda: (root / "id.key").write_text("PRIVATE3\n"))
    recs = spool(home)
    assert recs[0]["vcs"] == "none"
    n = _files(recs[0])["notes.md"]
    assert n["kind"] == "modified" and "-one\n+two" in n["diff"]  # named by the request: known before
    b = _files(recs[1])
    # keep.txt: changed by a command, its content before unknown in a plain folder (no diff);
    # ignored files (id.key, cache/) are not scanned.
    assert set(b) == {"keep.txt", "out.txt"}
    assert b["keep.txt"]["before"] is None and b["keep.txt"]["kind"] == "modified" and "diff" not in b["keep.txt"]
    assert "+new" in b["out.txt"]["diff"]
    k = _files(recs[3] if recs[2]["type"] == "execution" else recs[2])["id.key"]
    assert k["ignored"] is True and "diff" not in k
    everything = b"".join(p.read_bytes() for p in (home / "recorder").rglob("*") if p.is_file())
    assert b"PRIVATE" not in everything


def test_entry_point_never_fails(tmp_path: Path, home: Path) -> None:
    """Bad input, a missing folder: exit 0, nothing on stdout, the error in hook.log."""
    exe = [sys.executable, "-m", "asz_adapters_claudecode.hook"]
    env = dict(os.environ, ASZ_HOME=str(home))
    for stdin in (b"not json", json.dumps(_input("PostToolUse", tmp_path / "gone", "t9", "Bash", {"command": 1})).encode(),
                  b"[]"):
        r = subprocess.run(exe, input=stdin, capture_output=True, env=env, timeout=30)
        assert r.returncode == 0 and r.stdout == b""
    assert "not JSON" in (home / "recorder" / "hook.log").read_text()
    # A whole call through the real entry point, as the hooks configuration runs it.
    root = tmp_path / "p"
    root.mkdir()
    for ev, arg in (("PreToolUse", "pre"), ("PostToolUse", "post")):
        if ev == "PostToolUse":
            (root / "f.txt").write_text("f\n")
        r = subprocess.run(exe + [arg], input=json.dumps(_input(ev, root, "t10", "Bash", {"command": "touch"},
                                                                tool_response={"stdout": "", "stderr": ""})).encode(),
                           capture_output=True, env=env, timeout=30)
        assert r.returncode == 0 and r.stdout == b""
    assert [(r["type"], list(_files(r)) if r["type"] == "change" else None) for r in spool(home)
            if r["tool_use_id"] == "t10"] == [("change", ["f.txt"]), ("execution", None)]
    # A PostToolUse with no PreToolUse before it (the plugin installed mid-call): no change
    # record (nothing shows the state before), the execution record still.
    assert [r["type"] for r in spool(home) if r["tool_use_id"] == "t9"] == ["execution"]


def test_time_budget(tmp_path: Path, home: Path) -> None:
    """A hook that runs past ASZ_RECORDER_BUDGET gives up, logs it and exits 0."""
    code = ("import sys, time; from asz_adapters_claudecode import hook; "
            "hook.handle = lambda e, d: time.sleep(5); sys.exit(hook.main(['pre']))")
    r = subprocess.run([sys.executable, "-c", code], input=b"{}", capture_output=True, timeout=30,
                       env=dict(os.environ, ASZ_HOME=str(home), ASZ_RECORDER_BUDGET="0.3"))
    assert r.returncode == 0
    assert "gave up" in (home / "recorder" / "hook.log").read_text()


def test_stop_prunes_old_blobs_once_a_day(repo: Path, home: Path) -> None:
    app = repo / "src" / "app.py"
    call(repo, "t1", "Edit", {"file_path": str(app)}, lambda: app.write_text("x\n"))
    blobs = list((home / "recorder" / "blobs").iterdir())
    assert blobs
    old = 0  # 1970: older than KEEP_DAYS
    for b in blobs:
        os.utime(b, (old, old))
    hook.handle("", {"session_id": SESSION, "hook_event_name": "Stop"})
    assert not list((home / "recorder" / "blobs").iterdir())
    assert spool(home)  # the spool is kept


def test_a_failing_comparison_still_writes_the_execution_record(repo: Path, home: Path) -> None:
    import shutil

    hook.handle("", _input("PreToolUse", repo, "t1", "Bash", {"command": "rm -rf .git"}))
    shutil.rmtree(repo / ".git")  # git status now fails in the repo the note names
    hook.handle("", _input("PostToolUse", repo, "t1", "Bash", {"command": "rm -rf .git"}, tool_response={"stdout": "", "stderr": ""}))
    assert [r["type"] for r in spool(home)] == ["execution"]
    assert "git status failed" in (home / "recorder" / "hook.log").read_text()


# --- nothing of the machine beyond the workspace is read; nothing holds the agent ------------------

SECRET = b"-----BEGIN OPENSSH PRIVATE KEY----- s3cr3t-of-the-test\n"


def _everything(home: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (home / "recorder").rglob("*") if p.is_file())


@pytest.mark.parametrize("mode", ["git", "plain"])
def test_a_file_outside_the_workspace_is_named_never_read(tmp_path: Path, home: Path, repo: Path, mode: str) -> None:
    root = repo if mode == "git" else tmp_path / "plain"
    root.mkdir(exist_ok=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    key = outside / "id_rsa"
    key.write_bytes(SECRET)
    (root / "link_rsa").symlink_to(key)  # inside by name, outside in fact
    cases = [("t1", "Edit", "../outside/id_rsa"), ("t2", "Write", str(key)), ("t3", "Edit", "/etc/passwd"),
             ("t4", "Edit", str(root / "link_rsa"))]
    for tid, tool, named in cases:
        def act(named: str = named) -> None:
            if named != "/etc/passwd":
                (root / named if not os.path.isabs(named) else Path(named)).write_bytes(SECRET + b"changed\n")
        call(root, tid, tool, {"file_path": named, "old_string": "s", "new_string": "t"}, act)
        key.write_bytes(SECRET)
    # A command that makes a link to a file outside: the link is seen, what it leads to is not read.
    call(root, "t5", "Bash", {"command": "ln -s"}, lambda: (root / "leak").symlink_to(key), response={})
    recs = {r["tool_use_id"]: r for r in spool(home) if r["type"] == "change"}
    assert _files(recs["t1"])[str(key)] == {"path": str(key), "outside": True}
    assert _files(recs["t2"])[str(key)] == {"path": str(key), "outside": True}
    assert _files(recs["t3"])["/etc/passwd"] == {"path": "/etc/passwd", "outside": True}
    assert _files(recs["t4"])["link_rsa"] == {"path": "link_rsa", "outside": True}
    if mode == "git":  # a plain folder's scan does not follow symlinks at all
        assert _files(recs["t5"])["leak"] == {"path": "leak", "outside": True}
    everything = _everything(home)
    assert b"s3cr3t-of-the-test" not in everything and b"root:" not in everything
    assert not (home / "recorder" / "blobs").exists() or not any(
        SECRET in p.read_bytes() for p in (home / "recorder" / "blobs").iterdir())


def test_an_outside_file_is_an_operation_flagged_outside(tmp_path: Path, home: Path, repo: Path) -> None:
    from asz_adapters_claudecode.recorder import read_spool
    from asz_core.records import Cursor

    call(repo, "t1", "Edit", {"file_path": "/etc/passwd"})
    [entry] = [e for e in read_spool(home / "recorder" / "spool" / f"{SESSION}.jsonl", Cursor()) if hasattr(e, "events")]
    [f] = entry.events[0]["files"]
    assert f["path"] == "/etc/passwd" and f["outside"] is True and "kind" not in f and "before" not in f


@pytest.mark.parametrize("target", ["/proc/kmsg", "fifo", "link to /proc/kmsg", "link to /dev/zero"])
def test_nothing_that_is_not_a_regular_file_holds_the_hook(tmp_path: Path, home: Path, repo: Path, target: str) -> None:
    import time

    if target == "fifo":
        os.mkfifo(repo / "pipe.txt")
        named = str(repo / "pipe.txt")
    elif target.startswith("link to "):
        (repo / "dev.txt").symlink_to(target.removeprefix("link to "))
        named = str(repo / "dev.txt")
    else:
        named = target
    exe = [sys.executable, "-m", "asz_adapters_claudecode.hook"]
    env = dict(os.environ, ASZ_HOME=str(home))
    t0 = time.monotonic()
    for ev in ("PreToolUse", "PostToolUse"):
        r = subprocess.run(exe, input=json.dumps(_input(ev, repo, "t1", "Edit", {"file_path": named})).encode(),
                           capture_output=True, env=env, timeout=30)
        assert r.returncode == 0
    assert time.monotonic() - t0 < 4  # two hooks' start-up and a git status; a read of any of these would take 8 s
    assert not (home / "recorder" / "hook.log").exists() or "gave up" not in (home / "recorder" / "hook.log").read_text()
    [rec] = [r for r in spool(home) if r["type"] == "change"]
    assert rec["files"] == ([] if target == "fifo" else [{"path": os.path.relpath(named, repo) if target.startswith("link")
                                                          else named, "outside": True}])


@pytest.mark.parametrize("complete", [True, False])
def test_hook_input_on_a_stdin_never_closed_does_not_hold_the_agent(tmp_path: Path, home: Path, complete: bool) -> None:
    import time

    root = tmp_path / "p"
    root.mkdir()
    body = json.dumps(_input("PreToolUse", root, "t1", "Bash", {"command": "x"})).encode()
    p = subprocess.Popen([sys.executable, "-m", "asz_adapters_claudecode.hook", "pre"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ, ASZ_HOME=str(home)))
    try:
        t0 = time.monotonic()
        assert p.stdin is not None
        p.stdin.write(body if complete else body[:-5])  # the writer keeps stdin open
        p.stdin.flush()
        code = p.wait(5)
        took = time.monotonic() - t0
    finally:
        if p.poll() is None:
            p.kill()
        p.wait(5)
    assert code == 0 and took < 1.5  # start-up plus at most hook.INPUT_WAIT; it was 8 s
    pending = list((home / "recorder" / "pending").rglob("*.state"))
    if complete:
        assert len(pending) == 1  # the whole input was read and acted on
    else:
        assert not pending and "not JSON" in (home / "recorder" / "hook.log").read_text()


def test_read_input_takes_a_whole_object_at_once_and_a_closed_stdin_to_its_end(tmp_path: Path) -> None:
    import time

    r, w = os.pipe()
    try:
        os.write(w, b'{"a": "}')  # a } inside a string: not whole yet
        os.write(w, b'", "b": [1, 2]}')
        t0 = time.monotonic()
        assert hook._read_input(r, wait=5) == b'{"a": "}", "b": [1, 2]}'
        assert time.monotonic() - t0 < 1
    finally:
        os.close(r)
        os.close(w)
    big = json.dumps({"tool_input": {"content": "x" * (3 << 20)}}).encode()
    f = tmp_path / "in.json"
    f.write_bytes(big)
    fd = os.open(f, os.O_RDONLY)
    try:
        assert hook._read_input(fd) == big
    finally:
        os.close(fd)
