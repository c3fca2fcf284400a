"""The recorder hook against a hostile workspace: a NUL in a tool's file_path, untracked symlinks,
a workspace that is a home directory (or holds one), secret files (docs/recorder.md). The
workspaces are made here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from asz_adapters_claudecode import hook

from .test_hook import _files, _git, call, spool  # noqa: F401 - fixtures below
from .test_hook import home, repo  # noqa: F401

KEY = b"-----BEGIN OPENSSH PRIVATE KEY----- hostile-s3cret\n"


def _everything(home: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (home / "recorder").rglob("*") if p.is_file() and p.name != "hook.log")


@pytest.mark.parametrize("mode", ["git", "plain"])
@pytest.mark.parametrize("named", ["src/app\0.py", "\0", "src\0/x.py", "src/app.py\0"])
def test_a_nul_in_a_file_path_breaks_nothing(tmp_path: Path, home: Path, repo: Path, mode: str, named: str) -> None:
    root = repo if mode == "git" else tmp_path / "plain"
    root.mkdir(exist_ok=True)
    call(root, "t1", "Edit", {"file_path": named, "old_string": "1", "new_string": "2"},
         lambda: (root / "src").mkdir(exist_ok=True) or (root / "src" / "app.py").write_text("x = 2\n"))
    log = home / "recorder" / "hook.log"
    assert not log.exists() or "Traceback" not in log.read_text()
    (rec,) = [r for r in spool(home) if r["type"] == "change"]
    assert "src/app.py" in _files(rec)  # the call is recorded: what changed, found by looking


def test_an_untracked_link_is_listed_only_when_it_changed(tmp_path: Path, home: Path, repo: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (repo / "to_outside").symlink_to(outside)
    (repo / "to_readme").symlink_to("README.md")
    for n in range(3):
        call(repo, f"t{n}", "Bash", {"command": "edit"}, lambda n=n: (repo / "src" / "app.py").write_text(f"v{n}\n"),
             response={})
    call(repo, "t9", "Bash", {"command": "ln -sf"}, lambda: ((repo / "to_readme").unlink(),
                                                           (repo / "to_readme").symlink_to("src/app.py")), response={})
    recs = {r["tool_use_id"]: r for r in spool(home) if r["type"] == "change"}
    for n in range(3):
        assert set(_files(recs[f"t{n}"])) == {"src/app.py"}, recs[f"t{n}"]["files"]  # no phantom links
    changed = _files(recs["t9"])
    assert set(changed) == {"to_readme"} and changed["to_readme"]["link"] is True
    assert changed["to_readme"]["kind"] == "modified" and changed["to_readme"]["before"] != changed["to_readme"]["after"]


@pytest.mark.parametrize("where", ["is home", "holds home"])
def test_a_home_directory_workspace_is_never_recorded(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch,
                                                      where: str) -> None:
    user_home = tmp_path / "me"
    (user_home / ".ssh").mkdir(parents=True)
    (user_home / ".ssh" / "id_rsa").write_bytes(KEY)
    (user_home / "notes.txt").write_text("hello\n")
    monkeypatch.setenv("HOME", str(user_home))
    ws = user_home if where == "is home" else tmp_path
    call(ws, "t1", "Write", {"file_path": str(user_home / "notes.txt"), "content": "x"},
         lambda: (user_home / "notes.txt").write_text("changed\n"))
    call(ws, "t2", "Bash", {"command": "cp"}, lambda: (user_home / ".ssh" / "id_rsa").write_bytes(KEY + b"2"), response={})
    assert [r for r in spool(home) if r["type"] == "change"] == []
    assert b"hostile-s3cret" not in _everything(home)
    assert "home directory" in (home / "recorder" / "hook.log").read_text()
    assert hook.home_workspace(str(tmp_path / "me" / "project")) is None  # a folder inside home is fine


@pytest.mark.parametrize("mode", ["git", "plain"])
def test_secret_files_are_hashed_never_copied(tmp_path: Path, home: Path, repo: Path, mode: str) -> None:
    root = repo if mode == "git" else tmp_path / "plain"
    root.mkdir(exist_ok=True)
    secrets = [".env.local", "deploy/id_ed25519", "certs/server.pem", ".ssh/config", ".aws/credentials", "tls.key"]
    for rel in secrets:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(KEY + rel.encode())
    if mode == "git":
        _git(root, "add", "-A")
        _git(root, "commit", "-qm", "secrets tracked (as people do)")
    for n, rel in enumerate(secrets):
        call(root, f"t{n}", "Edit", {"file_path": rel, "old_string": "s", "new_string": "t"},
             lambda rel=rel: (root / rel).write_bytes(KEY + b"changed " + rel.encode()))
    call(root, "tb", "Bash", {"command": "sed -i"}, lambda: [(root / r).write_bytes(KEY + b"again") for r in secrets],
         response={})
    recs = {r["tool_use_id"]: r for r in spool(home) if r["type"] == "change"}
    for n, rel in enumerate(secrets):
        f = _files(recs[f"t{n}"])[rel]
        assert f["before"] and f["after"] and f["before"] != f["after"] and f.get("ignored") is True
        assert not f.get("diff")
    assert set(secrets) <= set(_files(recs["tb"]))
    assert b"hostile-s3cret" not in _everything(home)


@pytest.mark.parametrize(("rel", "secret"), [(".env", True), (".env.production", True), ("a/.ssh/known_hosts", True),
                                             ("keys/id_rsa.pub", True), ("x.PEM", True), (".gnupg/pubring.kbx", True),
                                             (".aws/config", True), ("deploy/.envrc", True), (".npmrc", True),
                                             (".git-credentials", True), ("ci/.docker/config.json", True),
                                             ("android/release.jks", True), ("src/environment.py", False),
                                             ("docs/identity.md", False), ("src/key.py", False), ("docs/credentials.md", False)])
def test_which_files_are_secret(rel: str, secret: bool) -> None:
    assert hook.is_secret(rel) is secret


def test_a_secret_clean_before_the_call_is_never_copied_from_gits_copy(tmp_path: Path, home: Path, repo: Path) -> None:
    """A tracked secret that a shell command changes, clean until then: its state before the call
    is taken from git's copy (HEAD), whose content is not kept either, only its digest."""
    secrets = ["deploy/.envrc", "certs/tls.pem", ".gnupg/secring.gpg"]
    for rel in secrets:
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_bytes(KEY + rel.encode())
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "secrets tracked")
    call(repo, "t1", "Bash", {"command": "rotate"}, lambda: [(repo / r).write_bytes(b"rotated " + r.encode()) for r in secrets],
         response={})
    (rec,) = [r for r in spool(home) if r["type"] == "change"]
    got = _files(rec)
    assert set(secrets) <= set(got)
    for rel in secrets:
        assert got[rel]["before"] and got[rel]["before"] != got[rel]["after"]
    assert b"hostile-s3cret" not in _everything(home)


@pytest.mark.parametrize("mode", ["git", "plain"])
@pytest.mark.parametrize("where", ["file_path", "session_id", "tool_use_id"])
def test_a_lone_surrogate_in_the_hook_input_breaks_nothing(tmp_path: Path, home: Path, repo: Path, mode: str,
                                                           where: str) -> None:
    """Claude Code's JSON.stringify writes half a pair cut from a string as a lone escape
    (``"\\ud83d"``): the hook reads it as U+FFFD, as asz reads such a transcript (it raised
    UnicodeEncodeError on the path, the git call or the spool's name: the call unrecorded)."""
    import json

    from .test_hook import _input

    root = repo if mode == "git" else tmp_path / "plain"
    root.mkdir(exist_ok=True)
    (root / "src").mkdir(exist_ok=True)
    inp = {"file_path": "src/app\ud83d.py" if where == "file_path" else "src/app.py", "old_string": "1", "new_string": "2"}
    for event in ("PreToolUse", "PostToolUse"):
        data = _input(event, root, "t\udc00" if where == "tool_use_id" else "t1", "Edit", inp, tool_response={})
        if where == "session_id":
            data["session_id"] = "sess-\ud83d"
        raw = json.dumps(data, ensure_ascii=True).encode()  # the lone half as an escape, as Node writes it
        hook.handle("", hook._loads(raw))
        if event == "PreToolUse":
            (root / "src" / "app.py").write_text("x = 3\n")
    log = home / "recorder" / "hook.log"
    assert not log.exists() or "Traceback" not in log.read_text()
    recs = [json.loads(x) for f in (home / "recorder" / "spool").glob("*.jsonl") for x in f.read_text().splitlines()]
    (rec,) = [r for r in recs if r["type"] == "change"]
    assert "src/app.py" in _files(rec)
