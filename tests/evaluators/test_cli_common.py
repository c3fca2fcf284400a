"""What the CLI evaluators share: the `asz judge mcp` command of a call, and its reads counted."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from asz_core.judge.judgment import EvaluatorCall
from asz_core.window import WindowSpec
from asz_evaluators import cli_common as cc


def _call(tmp_path: Path, spec: WindowSpec, run_dir: Path | None) -> EvaluatorCall:
    store = SimpleNamespace(path=tmp_path / "home" / "asz.db")
    w = SimpleNamespace(spec=spec, head="r3")
    nav = SimpleNamespace(conv=SimpleNamespace(id="conv-1"), w=w, run_dir=run_dir, store=store, used=0, calls=0,
                          refusals=0, log=[])
    d = tmp_path / "calls" / "targets" / "1" / "1"
    d.mkdir(parents=True)
    return EvaluatorCall(stage="targets", call=1, attempt=1, prompt="p", schema={}, budget=5000, directory=d, navigator=nav)


def test_the_mcp_command_names_the_call_window_budget_and_log(tmp_path: Path) -> None:
    call = _call(tmp_path, WindowSpec("talks", "k2", "k4"), tmp_path / "state")
    cmd = cc.mcp_command(call)
    assert cmd[3:] == ["judge", "mcp", "conv-1", "--head", "r3", "--window", "k2..k4", "--budget", "5000",
                       "--log", str(call.directory.resolve() / "reads.jsonl"), "--run", str(tmp_path / "state")]
    assert cc.mcp_env(call) == {"ASZ_HOME": str((tmp_path / "home").resolve())}
    assert cc.window_text(SimpleNamespace(spec=WindowSpec("time", None, "2026-01-02T00:00:00Z"))) == "..2026-01-02T00:00:00Z"
    assert cc.window_text(SimpleNamespace(spec=WindowSpec())) == "all"


def test_reads_are_counted_into_the_navigator(tmp_path: Path) -> None:
    call = _call(tmp_path, WindowSpec(), None)
    log = [{"n": 1, "tool": "talks", "bytes": 1200, "status": "ok", "used": 1200},
           {"n": 2, "tool": "talks", "bytes": 400, "status": "refused", "used": 1200}]
    (call.directory / "reads.jsonl").write_text("".join(json.dumps(e) + "\n" for e in log))
    nav: Any = call.navigator
    cc.count_reads(call, final=False)
    cc.count_reads(call, final=False)
    assert (nav.used, nav.calls, nav.refusals, nav.log) == (1200, 2, 1, [])
    cc.count_reads(call)
    assert nav.log == log


def test_the_answer_text() -> None:
    assert cc.parse_json_answer('```json\n{"a": 1}\n```') == {"a": 1}
    assert cc.parse_json_answer("no json") is None and cc.parse_json_answer("[1]") is None
    assert cc.plain_schema({"$schema": "x", "$id": "y", "type": "object", "properties": {"a": {"$id": "z"}}}) == {
        "type": "object", "properties": {"a": {}}}


def test_the_mcp_server_is_told_a_store_that_is_no_file_of_asz_home(tmp_path: Path) -> None:
    """A PostgreSQL store (or a server's) named by asz.yaml or --config: the server, run in a folder
    of its own where neither is read, is given its address, never one carrying a password (the
    variables land in the CLI's MCP settings in the run's folder)."""
    for n, (url, told) in enumerate((("postgresql://judge@db.internal/asz", True),
                                     ("postgresql://judge:s3cret@db.internal/asz", False), ("https://asz.example:8443", True))):
        call = _call(tmp_path / str(n), WindowSpec(), None)
        call.navigator.store = SimpleNamespace(url=url)
        env = cc.mcp_env(call)
        assert (env.get("ASZ_STORE") == url) is told and "s3cret" not in json.dumps(env), (url, env)
