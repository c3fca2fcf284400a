"""docs/plugin-template cannot rot: its adapter is imported by path (nothing installed), run on a
tiny file, registered through the same hook asz calls, and collected into a store."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from asz_core import api
from asz_core.collect import collect
from asz_core.plugins import make_plugin_manager
from asz_core.records import Cursor, Entry, Problem
from asz_core.registry import Registry
from asz_core.store import Store

TEMPLATE = Path(__file__).resolve().parents[2] / "docs" / "plugin-template"
SRC = TEMPLATE / "src"


@pytest.fixture
def template(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    monkeypatch.syspath_prepend(str(SRC))
    try:
        yield importlib.import_module("asz_myruntime.plugin")
    finally:
        for name in [m for m in sys.modules if m == "asz_myruntime" or m.startswith("asz_myruntime.")]:
            del sys.modules[name]


def tiny(tmp_path: Path) -> Path:
    f = tmp_path / "logs" / "s1.mylog"
    f.parent.mkdir()
    lines = [
        {"session": "s1", "id": "m1", "ts": "2025-01-01T10:00:00Z", "role": "user", "text": "rename foo to bar"},
        {"session": "s1", "id": "m2", "ts": "2025-01-01T10:00:04Z", "role": "assistant", "model": "m", "text": "",
         "usage": {"prompt": 300, "cached": 100, "completion": 12},
         "tool_calls": [{"id": "t1", "name": "edit", "args": {"path": "src/foo.py", "old": "foo", "new": "bar"}}]},
        {"session": "s1", "id": "m3", "ts": "2025-01-01T10:00:05Z", "role": "tool", "call_id": "t1", "text": "edited"},
        {"session": "s1", "id": "m4", "ts": "2025-01-01T10:00:07Z", "role": "assistant", "model": "m", "text": "Renamed.",
         "usage": {"prompt": 420, "cached": 300, "completion": 5}},
    ]
    f.write_text("".join(json.dumps(x) + "\n" for x in lines) + "[]\n")
    return f


def test_template_adapter_reads_a_tiny_file(template: ModuleType, tmp_path: Path) -> None:
    (cls,) = template.asz_runtime_adapters()
    a = cls()
    f = tiny(tmp_path)
    assert a.detect(f) and a.detect(f.parent) and a.files(f.parent) == [f]
    items = list(a.read(f, Cursor()))
    entries = [i for i in items if isinstance(i, Entry)]
    problems = [i for i in items if isinstance(i, Problem)]
    assert [e.key for e in entries] == ["m1", "m2", "m3", "m4"]
    assert [(p.file, p.line) for p in problems] == [(str(f), 5)]
    events = [ev["e"] for e in entries for ev in e.events]
    assert events == ["input", "call", "tool_use", "tool_result", "call", "text"]


def test_template_registers_and_collects(template: ModuleType, tmp_path: Path) -> None:
    pm = make_plugin_manager(autoload=False)
    pm.register(template, name="myruntime")
    registry = Registry(pm)
    f = tiny(tmp_path)
    assert registry.detect_runtime(f.parent).name == "myruntime"
    store = Store.open(tmp_path / "home")
    res = collect([f.parent], store, registry)
    assert [p.line for p in res.problems] == [5]
    conv = api.load("s1", store=store)
    (talk,) = conv.main_talks
    assert conv.step(talk.inputs[0]).text == "rename foo to bar" and conv.step(talk.reply).text == "Renamed."
    calls = conv.model_calls()
    assert [(c.usage.input, c.usage.cache_read, c.usage.output) for c in calls] == [(200, 100, 12), (120, 300, 5)]
    (tool,) = [s for s in conv.steps if s.kind == "tool"]
    assert tool.status == "returned"
    assert registry.runtime("myruntime").file_requests(tool.name, tool.request) == ["src/foo.py"]
    store.close()


def test_template_pyproject_points_at_its_plugin() -> None:
    meta = tomllib.loads((TEMPLATE / "pyproject.toml").read_text())
    eps = meta["project"]["entry-points"]["asz"]
    assert eps == {"myruntime": "asz_myruntime.plugin"}
    assert (SRC / "asz_myruntime" / "plugin.py").is_file()
    assert any(d.startswith("asz-core") for d in meta["project"]["dependencies"])
    # The plugin module imports nothing heavy: not even its own adapter until asked.
    code = "import sys, asz_myruntime.plugin; print('asz_myruntime.adapter' in sys.modules)"
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    assert subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.strip() == "False"


def test_template_own_tests_pass() -> None:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(TEMPLATE / "tests")],
                       cwd=TEMPLATE, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
