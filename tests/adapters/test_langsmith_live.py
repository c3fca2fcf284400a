"""Reading LangSmith live: the real langsmith SDK pointed at a fake LangSmith on 127.0.0.1 (never
the real service), the export-then-collect path, and the errors a person sees."""

from __future__ import annotations

import json
import os
import sys
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from asz_adapters_langsmith import live
from asz_adapters_langsmith.adapter import LangSmithAdapter
from asz_core import api
from asz_core.collect import collect
from asz_core.errors import AszError, ConfigError, MissingDependency
from asz_core.records import Cursor, Entry
from asz_core.store import Store

CORPUS = Path(os.environ.get("ASZ_CORPUS") or Path(__file__).resolve().parents[2].parent / "shared" / "corpus") / "langsmith"
PY_DATA = CORPUS / "langchain-ai__langsmith-sdk" / "python" / "tests" / "integration_tests" / "test_data"
PROJECT_ID = "8d0c7d56-4c3e-4b8e-9d0a-4f0a6f1c2b11"
TENANT_ID = "0b6f8d1e-7d44-4f7b-8f8e-7b0d4f9a2c33"


def api_runs() -> list[dict[str, Any]]:
    """Runs as the API answers /runs/query: the real SDK payloads of the corpus, merged create
    and update, plus a small agent trace with a tool and a sub-agent."""
    runs = []
    for name in ("langsmith_py_wrap_openai_.json", "langsmith_py_wrap_openai_reasoning.json"):
        doc = json.loads((PY_DATA / name).read_text())
        r: dict[str, Any] = {}
        for part in doc["post"] + doc["patch"]:
            r.update({k: v for k, v in part.items() if v not in (None, {}, [])})
        r["session_id"] = PROJECT_ID
        runs.append(r)
    tid, llm, tool, sub, sllm = (str(uuid.UUID(int=i)) for i in range(1, 6))
    d = "20250301T1200000{}0000Z{}"
    runs += [
        {"id": tid, "trace_id": tid, "name": "agent", "run_type": "chain", "dotted_order": d.format(0, tid),
         "start_time": "2025-03-01T12:00:00", "end_time": "2025-03-01T12:00:09", "inputs": {"input": "plan the release"},
         "outputs": {"output": "done"}, "session_id": PROJECT_ID, "total_tokens": 999},
        {"id": llm, "trace_id": tid, "parent_run_id": tid, "name": "ChatAnthropic", "run_type": "llm",
         "dotted_order": d.format(0, tid) + "." + d.format(1, llm), "start_time": "2025-03-01T12:00:01",
         "end_time": "2025-03-01T12:00:02", "inputs": {}, "session_id": PROJECT_ID,
         "outputs": {"usage_metadata": {"input_tokens": 900, "output_tokens": 30, "total_tokens": 930,
                                        "input_token_details": {"cache_read": 500, "ephemeral_5m_input_tokens": 100}},
                     "content": [{"type": "text", "text": "Delegating."}]}},
        {"id": tool, "trace_id": tid, "parent_run_id": tid, "name": "task", "run_type": "tool",
         "dotted_order": d.format(0, tid) + "." + d.format(2, tool), "start_time": "2025-03-01T12:00:02",
         "end_time": "2025-03-01T12:00:08", "inputs": {"description": "check the changelog"}, "outputs": {"output": "ok"},
         "session_id": PROJECT_ID},
        {"id": sub, "trace_id": tid, "parent_run_id": tool, "name": "researcher", "run_type": "chain",
         "dotted_order": d.format(0, tid) + "." + d.format(2, tool) + "." + d.format(3, sub), "start_time": "2025-03-01T12:00:03",
         "end_time": "2025-03-01T12:00:07", "inputs": {"messages": [{"type": "human", "content": "check the changelog"}]},
         "outputs": {}, "session_id": PROJECT_ID},
        {"id": sllm, "trace_id": tid, "parent_run_id": sub, "name": "ChatAnthropic", "run_type": "llm",
         "dotted_order": d.format(0, tid) + "." + d.format(2, tool) + "." + d.format(3, sub) + "." + d.format(4, sllm),
         "start_time": "2025-03-01T12:00:04", "end_time": "2025-03-01T12:00:05", "inputs": {}, "session_id": PROJECT_ID,
         "outputs": {"usage_metadata": {"input_tokens": 200, "output_tokens": 10, "total_tokens": 210}}},
    ]
    return runs


class FakeLangSmith(BaseHTTPRequestHandler):
    """Answers what langsmith's Client calls for list_runs: GET /info, GET /sessions?name=,
    POST /runs/query (two runs a page, cursor paginated)."""

    runs: list[dict[str, Any]] = []
    seen: list[tuple[str, str, Any]] = []
    page = 2

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _send(self, code: int, obj: Any) -> None:
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self.seen.append(("GET", self.path, self.headers.get("x-api-key")))
        if self.path.startswith("/info"):
            return self._send(200, {"version": "0.10.0", "instance_flags": {}})
        if self.path.startswith("/sessions"):
            if "name=demo" not in self.path:
                return self._send(200, [])
            return self._send(200, [{"id": PROJECT_ID, "name": "demo", "tenant_id": TENANT_ID,
                                     "start_time": "2025-01-01T00:00:00", "reference_dataset_id": None}])
        self._send(404, {"detail": "Not Found"})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        self.seen.append(("POST", self.path, body))
        if self.path != "/runs/query":
            return self._send(404, {"detail": "Not Found"})
        if body.get("session") != [PROJECT_ID]:
            return self._send(400, {"detail": "unknown session"})
        runs = [r for r in self.runs if not body.get("trace") or r["trace_id"] == body["trace"]]
        start = int(body.get("cursor") or 0)
        chunk = runs[start:start + self.page]
        nxt = str(start + self.page) if start + self.page < len(runs) else None
        self._send(200, {"runs": chunk, "cursors": {"next": nxt}})


@pytest.fixture
def fake_server() -> Iterator[str]:
    if not PY_DATA.is_dir():
        pytest.skip("LangSmith corpus not found")
    FakeLangSmith.runs = api_runs()
    FakeLangSmith.seen = []
    srv = ThreadingHTTPServer(("127.0.0.1", 0), FakeLangSmith)
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


@pytest.fixture
def no_env_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for v in ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY", "LANGSMITH_ENDPOINT", "LANGCHAIN_ENDPOINT", "LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2"):
        monkeypatch.delenv(v, raising=False)


def test_read_live_with_the_real_sdk(fake_server: str, no_env_keys: None, tmp_path: Path) -> None:
    pytest.importorskip("langsmith")
    entries = [e for e in live.read_live("demo", api_url=fake_server, api_key="test-key") if isinstance(e, Entry)]
    runs = api_runs()
    assert sorted(e.key for e in entries) == sorted(r["id"] for r in runs)
    # What the SDK asked: the project by name, then pages of runs of that project.
    posts = [s for s in FakeLangSmith.seen if s[0] == "POST"]
    assert any(s[0] == "GET" and s[1].startswith("/sessions") and "name=demo" in s[1] for s in FakeLangSmith.seen)
    assert len(posts) == 4 and [p[2].get("cursor") for p in posts] == [None, "2", "4", "6"]
    assert all(s[2] == "test-key" for s in FakeLangSmith.seen if s[0] == "GET")
    # The same runs exported to a file read the same: same keys, sessions, streams and events.
    f = tmp_path / "same.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in sorted(runs, key=lambda r: r["dotted_order"])))
    from_file = [e for e in LangSmithAdapter().read(f, Cursor()) if isinstance(e, Entry)]
    assert [(e.key, e.session, e.stream, e.events) for e in entries] == [(e.key, e.session, e.stream, e.events) for e in from_file]


def test_export_then_collect(fake_server: str, no_env_keys: None, tmp_path: Path) -> None:
    pytest.importorskip("langsmith")
    out = tmp_path / "exports" / "demo.jsonl"
    n = live.export_runs(out, "demo", api_url=fake_server, api_key="test-key")
    assert n == len(api_runs()) == 7
    assert LangSmithAdapter().detect(out)
    store = Store.open(tmp_path / "home")
    res = collect([out], store)
    assert res.problems == ()
    convs = {row.id: api.load(row.id, store=store) for row in store.conversations()}
    assert len(convs) == 3  # three traces
    agent = convs[str(uuid.UUID(int=1))]
    calls = agent.model_calls()
    assert [(c.usage.input, c.usage.cache_read, c.usage.cache_write) for c in calls] == [(300, 500, 100), (200, None, None)]
    assert len(agent.streams) == 2 and agent.streams[1].parent == "m"
    assert [s.text for s in agent.person_inputs()] == ["plan the release"]
    # A second export of an unchanged project adds nothing.
    live.export_runs(out, "demo", api_url=fake_server, api_key="test-key")
    assert collect([out], store).records_published == 0
    store.close()


def test_trace_filter_and_limit_reach_the_server(fake_server: str, no_env_keys: None) -> None:
    pytest.importorskip("langsmith")
    tid = str(uuid.UUID(int=1))
    runs = list(live.fetch_runs("demo", trace_id=tid, api_url=fake_server, api_key="k"))
    assert {r["trace_id"] for r in runs} == {tid} and len(runs) == 5
    body = next(s[2] for s in FakeLangSmith.seen if s[0] == "POST")
    assert body["trace"] == tid


def test_unknown_project_is_a_clear_error(fake_server: str, no_env_keys: None) -> None:
    pytest.importorskip("langsmith")
    with pytest.raises(AszError, match="LangSmith could not be read"):
        list(live.fetch_runs("nope", api_url=fake_server, api_key="k"))


def test_cli_uses_configured_credentials(fake_server: str, no_env_keys: None, monkeypatch: pytest.MonkeyPatch,
                                         tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("langsmith")
    out = tmp_path / "o.jsonl"
    assert live.main(["--project", "demo", "--api-url", fake_server, "--out", str(out)]) == 1
    assert "LANGSMITH_API_KEY" in capsys.readouterr().err
    monkeypatch.setenv("LANGSMITH_API_KEY", "from-env")
    assert live.credentials_configured()
    assert live.main(["--project", "demo", "--api-url", fake_server, "--out", str(out)]) == 0
    assert "7 runs written" in capsys.readouterr().out
    assert any(s[2] == "from-env" for s in FakeLangSmith.seen if s[0] == "GET")


def test_without_the_sdk_the_message_names_the_pip_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "langsmith", None)  # import langsmith now raises ImportError
    with pytest.raises(MissingDependency) as exc:
        list(live.read_live("demo", api_key="k"))
    assert 'pip install "asz-adapters-langsmith[live]"' in str(exc.value)
    with pytest.raises(MissingDependency):
        live.export_runs(Path("unused.jsonl"), "demo", api_key="k")


def test_without_credentials(no_env_keys: None) -> None:
    pytest.importorskip("langsmith")
    assert not live.credentials_configured()
    with pytest.raises(ConfigError, match="LANGSMITH_API_KEY"):
        live.make_client()
    with pytest.raises(ConfigError, match="project or a trace"):
        list(live.fetch_runs(None, client=object()))
