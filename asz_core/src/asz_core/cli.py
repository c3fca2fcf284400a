"""The `asz` command: parses, calls one library function, prints. Nothing else lives here."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import orjson
import typer
from rich.console import Console

from . import api, report
from .errors import AszError

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Judge recorded coding-agent conversations.")
out = Console()
err = Console(stderr=True)

Head = Annotated[Optional[str], typer.Option("--head", help="Round to view: r3, 3, or a head digest prefix (default: newest).")]
Json = Annotated[bool, typer.Option("--json", help="Print JSON for programs instead of a table.")]


@app.command()
def collect(
    paths: Annotated[Optional[list[Path]], typer.Argument(help="Session files or folders (default ~/.claude/projects).")] = None,
    runtime: Annotated[Optional[str], typer.Option("--runtime", help="Force a runtime adapter instead of detecting one.")] = None,
    json: Json = False,
) -> None:
    """Read runtime transcripts and publish what is new as one round per conversation."""
    with report.progress_bar(out, enabled=not json) as progress:
        result = api.collect_paths(paths, runtime=runtime, progress=progress)
    for p in result.problems:
        err.print(f"[yellow]warning:[/] {p}", highlight=False)
    _emit(report.collect_json(result) if json else report.collect_table(result), json)
    if result.files_read == 0 and result.files_unchanged == 0:
        raise typer.Exit(1)


@app.command()
def conversations(json: Json = False) -> None:
    """List collected conversations: id, runtime, first input, talks, model calls, head."""
    rows = api.conversations()
    _emit(report.conversations_json(rows) if json else report.conversations_table(rows), json)


@app.command()
def show(
    conversation: Annotated[str, typer.Argument(help="Conversation id, unique prefix, or session id.")],
    head: Head = None,
    json: Json = False,
) -> None:
    """Show a conversation's talks with inputs and replies, sub-agents and model calls."""
    conv = api.load(conversation, head)
    _emit(report.show_json(conv) if json else report.show_text(conv), json)


@app.command()
def plugins(json: Json = False) -> None:
    """List installed plugins with their distributions and versions."""
    rows = api.plugins()
    _emit(report.plugins_json(rows) if json else report.plugins_table(rows), json)


def _emit(thing: object, json: bool) -> None:
    if json:
        sys.stdout.write(orjson.dumps(thing, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        out.print(thing)


def main() -> None:
    try:
        app()
    except AszError as exc:
        err.print(f"[red]error:[/] {exc}", highlight=False)
        sys.exit(1)
