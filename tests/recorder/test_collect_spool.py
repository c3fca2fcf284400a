"""`asz collect` publishes the recorder's spool into the session's conversation; `asz recorder
install|uninstall`."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from asz_adapters_claudecode import hook, recorder
from asz_core.api import collect_paths, load
from asz_core.operations import of_conversation

S1 = "5e551011-aaaa-4bbb-8ccc-000000000001"
S2 = "5e551011-aaaa-4bbb-8ccc-000000000002"


def _transcript(folder: Path, session: str, ws: Path, tools: list[tuple[str, str, dict[str, Any]]]) -> Path:
    lines: list[dict[str, Any]] = [{"type": "user", "uuid": f"{session}-u0", "parentUuid": None, "sessionId": session,
                                    "cwd": str(ws), "message": {"role": "user", "content": "make the files"}}]
    for i, (tid, name, inp) in enumerate(tools, 1):
        lines.append({"type": "assistant", "uuid": f"{session}-a{i}", "sessionId": session, "requestId": f"req_{i}",
                      "message": {"id": f"msg_{session[-4:]}{i}", "role": "assistant", "model": "claude-sonnet-4-5",
                                  "content": [{"type": "tool_use", "id": tid, "name": name, "input": inp}],
                                  "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 5}}})
        lines.append({"type": "user", "uuid": f"{session}-r{i}", "sessionId": session,
                      "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": "ok"}]}})
    p = folder / f"{session}.jsonl"
    folder.mkdir(parents=True, exist_ok=True)
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return p


def _call(session: str, ws: Path, tid: str, tool: str, inp: dict[str, Any], act: Any) -> None:
    base = {"session_id": session, "transcript_path": "", "cwd": str(ws), "tool_name": tool, "tool_input": inp, "tool_use_id": tid}
    hook.handle("", {**base, "hook_event_name": "PreToolUse"})
    act()
    hook.handle("", {**base, "hook_event_name": "PostToolUse", "tool_response": {"stdout": "", "stderr": ""}})


def test_spool_lands_in_the_sessions_conversation(tmp_path: Path, asz_home: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    a = ws / "a.txt"
    projects = tmp_path / "projects" / "-ws"
    _call(S1, ws, "toolu_w", "Write", {"file_path": str(a), "content": "1\n"}, lambda: a.write_text("1\n"))
    _call(S1, ws, "toolu_b", "Bash", {"command": "echo 2 > b.txt"}, lambda: (ws / "b.txt").write_text("2\n"))
    _call(S2, ws, "toolu_x", "Bash", {"command": "x"}, lambda: (ws / "x.txt").write_text("x\n"))  # a session not collected
    t1 = _transcript(projects, S1, ws, [("toolu_w", "Write", {"file_path": str(a), "content": "1\n"}),
                                        ("toolu_b", "Bash", {"command": "echo 2 > b.txt"}),
                                        ("toolu_e", "Edit", {"file_path": str(a), "old_string": "1", "new_string": "3"})])
    r = collect_paths([t1])
    assert [x.records for x in r.rounds] == [7 + 3]  # 7 transcript lines, 3 spooled records of S1
    conv = load(S1)
    w, b, e = conv.tool_step("toolu_w"), conv.tool_step("toolu_b"), conv.tool_step("toolu_e")
    assert [f["rel"] for c in w.changes for f in c["files"]] == ["a.txt"]
    assert [f["rel"] for c in b.changes for f in c["files"]] == ["b.txt"]
    assert [x["command"] for x in b.executions] == ["echo 2 > b.txt"] and b.executions[0]["exit_code"] == 0
    assert e.changes == ()  # the recorder saw no Edit (the hooks never ran for it)
    assert all(x.id == "m" for x in conv.streams)
    ops = of_conversation(conv)
    assert [(o.id, o.shows, o.tool, o.path) for o in ops] == [
        ("o1", "request", "Edit", str(a)),  # landed with its step (the transcript lands first)
        ("o2", "capture", "Write", str(a)),
        ("o3", "capture", "Bash", str(ws / "b.txt")),
    ]
    # S2's spool waits for its session; nothing of it was published.
    assert S2 not in {s for c in [load(S1)] for s in [c.id]}
    # The agent goes on: the Edit is captured now, published in the next round.
    _call(S1, ws, "toolu_e", "Edit", {"file_path": str(a)}, lambda: a.write_text("3\n"))
    r2 = collect_paths([t1])
    assert [(x.number, x.records) for x in r2.rounds] == [(2, 1)]
    conv2 = load(S1)
    ops2 = of_conversation(conv2)
    assert [(o.id, o.shows, o.tool) for o in ops2] == [("o1", "capture", "Write"), ("o2", "capture", "Bash"), ("o3", "capture", "Edit")]
    assert "-1\n+3" in json.loads(_raw_of(conv2, ops2[2].record))["files"][0]["diff"]
    # Once S2's transcript is collected, its spool follows into its own conversation.
    t2 = _transcript(projects, S2, ws, [("toolu_x", "Bash", {"command": "x"})])
    collect_paths([t2])
    assert [f["rel"] for c in load(S2).tool_step("toolu_x").changes for f in c["files"]] == ["x.txt"]
    # Nothing new: nothing published, spooled lines are never stored twice.
    assert collect_paths([t1, t2]).rounds == ()


def _raw_of(conv: Any, seq: int) -> bytes:
    from asz_core.store import Store

    return Store.open().raw(conv.id, seq)


def test_show_operations_cli(tmp_path: Path, asz_home: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    a = ws / "a.txt"
    _call(S1, ws, "toolu_w", "Write", {"file_path": str(a)}, lambda: a.write_text("1\n"))
    t1 = _transcript(tmp_path / "p", S1, ws, [("toolu_w", "Write", {"file_path": str(a)}),
                                              ("toolu_f", "Edit", {"file_path": "rel/b.txt"})])
    collect_paths([t1])
    env = dict(os.environ, ASZ_HOME=str(asz_home))
    code = "import sys; from asz_core.main import main; sys.argv[0] = 'asz'; main()"
    r = subprocess.run([sys.executable, "-c", code, "show", S1[:8], "--operations", "--json"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["captured"] is True
    assert [(o["id"], o["shows"], o["path"]) for o in data["operations"]] == [
        ("o1", "request", "rel/b.txt"), ("o2", "capture", str(a))]
    r = subprocess.run([sys.executable, "-c", code, "show", S1[:8], "--operations"], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and "o2" in r.stdout and "capture" in r.stdout


def _fake_claude(tmp_path: Path) -> tuple[Path, Path]:
    log = tmp_path / "claude-args.log"
    exe = tmp_path / "bin" / "claude"
    exe.parent.mkdir()
    exe.write_text(f"#!/bin/sh\necho \"$PWD $*\" >> {log}\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe, log


def test_install_through_claude(tmp_path: Path, asz_home: Path) -> None:
    exe, log = _fake_claude(tmp_path)
    proj = tmp_path / "proj"
    proj.mkdir()
    r = recorder.install("project", proj, str(exe))
    assert r.via == "claude"
    plugin = Path(r.plugin_dir)
    assert json.loads((plugin / ".claude-plugin" / "marketplace.json").read_text())["plugins"][0]["name"] == "asz-recorder"
    hooks = json.loads((plugin / "asz-recorder" / "hooks" / "hooks.json").read_text())["hooks"]
    assert set(hooks) >= {"PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop"}
    cmd = hooks["PreToolUse"][0]["hooks"][0]["command"]
    assert cmd.endswith(" pre") and "asz-record.py" in cmd and f"ASZ_HOME={asz_home.resolve()}" in cmd
    assert (plugin / "asz-recorder" / "bin" / "asz-record.py").is_file()
    calls = log.read_text().splitlines()
    assert calls[0] == f"{proj.resolve()} plugin marketplace add {plugin} --scope project"
    assert any(c.endswith("plugin install asz-recorder@asz --scope project") for c in calls)
    recorder.uninstall("project", proj, str(exe))
    assert log.read_text().splitlines()[-2].endswith("plugin uninstall asz-recorder@asz --scope project")


def test_install_without_claude_declares_it_in_settings(tmp_path: Path, asz_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv("ASZ_CLAUDE", raising=False)
    proj = tmp_path / "proj"
    (proj / ".claude").mkdir(parents=True)
    (proj / ".claude" / "settings.json").write_text(json.dumps({"model": "opus", "enabledPlugins": {"other@x": True}}))
    r = recorder.install("project", proj)
    assert r.via == "settings" and r.notes
    data = json.loads((proj / ".claude" / "settings.json").read_text())
    assert data["model"] == "opus" and data["enabledPlugins"] == {"other@x": True, "asz-recorder@asz": True}
    assert data["extraKnownMarketplaces"]["asz"]["source"] == {"source": "directory", "path": r.plugin_dir}
    recorder.uninstall("project", proj)
    assert json.loads((proj / ".claude" / "settings.json").read_text()) == {"model": "opus", "enabledPlugins": {"other@x": True}}
    # User scope: CLAUDE_CONFIG_DIR's settings.
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    recorder.install("user")
    assert json.loads((tmp_path / "cfg" / "settings.json").read_text())["enabledPlugins"] == {"asz-recorder@asz": True}
