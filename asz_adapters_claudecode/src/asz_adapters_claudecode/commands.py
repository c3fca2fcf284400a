"""``asz recorder install|uninstall``: the recorder's commands, added to ``asz`` through the hook
``asz_register_commands`` (plugin.py). They parse and print; :mod:`.recorder` does the work."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import orjson
import typer

recorder_app = typer.Typer(no_args_is_help=True, add_completion=False,
                           help="The Claude Code recorder plugin: change and execution records per tool call.")
ProjectDir = Annotated[Optional[Path], typer.Option("--project", help="Project folder whose .claude/settings.json declares it (default: the current folder).")]
UserScope = Annotated[bool, typer.Option("--user", help="Install for every project of this user (~/.claude/settings.json).")]
ClaudeExe = Annotated[Optional[str], typer.Option("--claude", help="The claude command to install through (default: ASZ_CLAUDE, else claude on the PATH).")]
Json = Annotated[bool, typer.Option("--json", help="Print JSON for programs instead of a table.")]


@recorder_app.command("install")
def recorder_install(project: ProjectDir = None, user: UserScope = False, claude: ClaudeExe = None, json: Json = False) -> None:
    """Install the recorder plugin into Claude Code (project scope by default, or --user)."""
    from . import recorder

    _both(user, project)
    _emit(recorder.install("user" if user else "project", project, claude), json)


@recorder_app.command("uninstall")
def recorder_uninstall(project: ProjectDir = None, user: UserScope = False, claude: ClaudeExe = None, json: Json = False) -> None:
    """Remove the recorder plugin from Claude Code (records already spooled or collected are kept)."""
    from . import recorder

    _both(user, project)
    _emit(recorder.uninstall("user" if user else "project", project, claude), json)


def _both(user: bool, project: Path | None) -> None:
    if user and project:
        raise typer.BadParameter("--project and --user exclude each other", param_hint="--user")


def _emit(r: object, json: bool) -> None:
    from asz_core.convert import unstructure
    from asz_core.tables import InertText as Text, console
    from asz_core.terminal_text import json_inert

    d = unstructure(r)
    if json:
        sys.stdout.write(json_inert(orjson.dumps(d, option=orjson.OPT_INDENT_2).decode()) + "\n")
        return
    lines = [f"recorder {d['action']} ({d['scope']} scope, via {d['via']}): {d['settings']}",
             f"plugin: {d['plugin_dir']}", f"hook command: {d['hook_command']}"]
    con = console(highlight=False)
    con.print(Text("\n".join(lines)), soft_wrap=True)  # paths and the command whole on their lines, to copy; never markup
    for n in d["notes"]:
        con.print(Text(f"note: {n}"))
