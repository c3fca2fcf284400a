"""docs/fetcher-template cannot rot: its fetcher is imported by path (nothing installed), registered
through the same hook asz calls, and asked for a source as a run asks (its options from asz.yaml's
fetch.plugins), against a ticket API on 127.0.0.1; its own tests pass."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from asz_core.judge import config as configs
from asz_core.judge import sources
from asz_core.plugins import make_plugin_manager
from asz_core.registry import Registry

from .source_server import serving

TEMPLATE = Path(__file__).resolve().parents[2] / "docs" / "fetcher-template"
SRC = TEMPLATE / "src"


@pytest.fixture
def template(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    monkeypatch.syspath_prepend(str(SRC))
    try:
        yield importlib.import_module("asz_tickets.plugin")
    finally:
        for name in [m for m in sys.modules if m == "asz_tickets" or m.startswith("asz_tickets.")]:
            del sys.modules[name]


def test_the_template_fetcher_is_asked_through_the_hook_and_saved_as_any_source(template: ModuleType, tmp_path: Path) -> None:
    pm = make_plugin_manager(autoload=False)
    pm.register(template, name="tickets")
    registry = Registry(pm)
    assert [f.name for f in sources.fetchers(registry)] == ["command", "tickets", "http", "file"]
    with serving() as base:
        cfg = configs.Config(fetch=configs.FetchConfig(plugins={"tickets": {"url": f"{base}/api"}}))
        copy = sources.take("src1", "ticket:OPS-12", cfg, registry)
        bad = sources.take("src2", "ticket:OPS-99", cfg, registry)
    m = copy.manifest
    assert (m.status, m.fetcher, m.content_type, m.says.revision, m.says.author) == (
        "saved", "tickets", "text/markdown", "7", "Priya")
    assert copy.text == "# OPS-12: Totals off by a cent\n\nCause: rounding.\n"
    assert bad.manifest.status == "failed" and bad.manifest.why.endswith("/api/tickets/OPS-99: HTTP 404")
    # without its options it takes nothing, and the source is said to have no fetcher
    m = sources.take("src3", "ticket:OPS-12", configs.Config(), registry).manifest
    assert m.status == "failed" and m.why.startswith("no fetcher takes it")


def test_the_template_pyproject_points_at_its_plugin_and_its_tests_pass() -> None:
    meta = tomllib.loads((TEMPLATE / "pyproject.toml").read_text())
    assert meta["project"]["entry-points"]["asz"] == {"tickets": "asz_tickets.plugin"}
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    code = "import sys, asz_tickets.plugin; print('asz_tickets.fetcher' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.strip() == "False"
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(TEMPLATE / "tests")],
                       cwd=TEMPLATE, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
