"""`asz recorder install` for a person: the settings file, the plugin and the hook command each
whole on its own line at 80 columns (a command to copy is never broken), printed as they are
(a folder named like rich markup keeps its name)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from asz_core.cli import app


def test_the_hook_command_is_one_line_to_copy(tmp_path: Path, monkeypatch) -> None:
    home = tmp_path / "home[bold]"
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv("ASZ_HOME", str(home))
    r = CliRunner().invoke(app, ["recorder", "install", "--project", str(project)], env={"COLUMNS": "80"})
    assert r.exit_code == 0, r.output
    d = json.loads(CliRunner().invoke(app, ["recorder", "install", "--project", str(project), "--json"]).stdout)
    lines = r.stdout.splitlines()
    assert f"hook command: {d['hook_command']}" in lines, lines
    assert f"plugin: {d['plugin_dir']}" in lines and "[bold]" in d["plugin_dir"]
