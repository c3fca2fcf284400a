"""End to end: the real claude CLI (npm, pinned by kit/install-claude-cli) with the recorder plugin
installed by `asz recorder install`, against a local fake model server that asks for a Write, an
Edit and a Bash command that creates a file; then `asz collect` and the operations it shows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .fake_anthropic import FakeAnthropic

ROOT = Path(__file__).resolve().parents[2]
PINNED = "2.1.332"
CLAUDE = Path(os.environ.get("ASZ_TEST_CLAUDE") or ROOT / ".venv" / "claude-cli" / "node_modules" / ".bin" / "claude")
ASZ = "import sys; from asz_core.cli import main; sys.argv[0] = 'asz'; main()"


def _claude_version() -> str | None:
    if not CLAUDE.exists():
        return None
    try:
        out = subprocess.run([str(CLAUDE), "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.split()[0] if out.split() else None


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                   env=dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t"))


def _asz(env: dict[str, str], *args: str) -> str:
    r = subprocess.run([sys.executable, "-c", ASZ, *args], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.skipif(_claude_version() != PINNED,
                    reason=f"the claude CLI {PINNED} is not installed at {CLAUDE} (kit/install-claude-cli installs it "
                           "from npm; npm or the registry was not reachable)")
def test_claude_cli_with_the_recorder(tmp_path: Path) -> None:
    ws, home, asz_home = tmp_path / "ws", tmp_path / "home", tmp_path / "asz-home"
    ws.mkdir()
    home.mkdir()
    (ws / "README.md").write_text("project\n")
    _git(ws, "init", "-q")
    _git(ws, "add", "-A")
    _git(ws, "commit", "-qm", "init")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_"))}
    env.update(HOME=str(home), ASZ_HOME=str(asz_home))
    _asz(env, "recorder", "install", "--project", str(ws), "--claude", str(CLAUDE))
    # Installing never writes into the workspace beyond Claude Code's own project settings.
    assert json.loads((ws / ".claude" / "settings.json").read_text())["enabledPlugins"] == {"asz-recorder@asz": True}

    a = ws / "a.txt"
    fake = FakeAnthropic([
        {"name": "Write", "input": {"file_path": str(a), "content": "one\ntwo\n"}},
        {"name": "Edit", "input": {"file_path": str(a), "old_string": "two", "new_string": "three"}},
        {"name": "Bash", "input": {"command": "echo made > b.txt", "description": "make b.txt"}},
        "done",
    ]).start()
    try:
        run_env = dict(env, ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="sk-fake", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
        r = subprocess.run([str(CLAUDE), "-p", "write, edit and make b.txt", "--output-format", "stream-json", "--verbose",
                            "--model", "claude-sonnet-4-5-20250929", "--allowedTools", "Write,Edit,Bash,Read",
                            "--permission-mode", "acceptEdits", "--max-turns", "8"],
                           cwd=ws, env=run_env, capture_output=True, text=True, timeout=240)
    finally:
        fake.stop()
    assert r.returncode == 0, r.stderr[-2000:]
    frames = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
    session = next(f["session_id"] for f in frames if f.get("type") == "system" and f.get("subtype") == "init")
    assert a.read_text() == "one\nthree\n" and (ws / "b.txt").read_text() == "made\n"
    assert not (asz_home / "recorder" / "hook.log").exists()

    spooled = [json.loads(x) for x in (asz_home / "recorder" / "spool" / f"{session}.jsonl").read_text().splitlines()]
    changes = [x for x in spooled if x["type"] == "change" and x["files"]]
    assert [(x["tool"], [(f["path"], f["kind"]) for f in x["files"]]) for x in changes] == [
        ("Write", [("a.txt", "added")]), ("Edit", [("a.txt", "modified")]), ("Bash", [("b.txt", "added")])]
    assert "-two\n+three" in changes[1]["files"][0]["diff"]
    [ex] = [x for x in spooled if x["type"] == "execution"]
    assert ex["tool"] == "Bash" and ex["command"] == "echo made > b.txt" and ex["exit_code"] == 0
    assert isinstance(ex["duration_ms"], int) and ex["output_digest"].startswith("sha256:")

    _asz(env, "collect", str(home / ".claude" / "projects"))
    data = json.loads(_asz(env, "show", session, "--operations", "--json"))
    ops = [(o["id"], o["tool"], o["status"], o["shows"], o["kind"], o["path"]) for o in data["operations"]]
    assert ops == [
        ("o1", "Write", "returned", "capture", "added", str(a)),
        ("o2", "Edit", "returned", "capture", "modified", str(a)),
        ("o3", "Bash", "returned", "capture", "added", str(ws / "b.txt")),
    ]
    steps = {o["step"] for o in data["operations"]}
    assert len(steps) == 3 and None not in steps
    # The change and execution records sit on their tool steps.
    from asz_core.api import load
    from asz_core.store import Store

    conv = load(session, store=Store.open(asz_home))
    bash = next(s for s in conv.steps if s.name == "Bash")
    assert [x["exit_code"] for x in bash.executions] == [0] and [f["rel"] for c in bash.changes for f in c["files"]] == ["b.txt"]
    # A second collect publishes nothing new.
    assert "0 new records" in _asz(env, "collect", str(home / ".claude" / "projects"))
    _asz(env, "recorder", "uninstall", "--project", str(ws), "--claude", str(CLAUDE))
    assert "asz-recorder@asz" not in json.loads((ws / ".claude" / "settings.json").read_text()).get("enabledPlugins", {})
