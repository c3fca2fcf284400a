"""Entry point module (group ``asz``): advertises the Claude Code adapter and the recorder's
commands (``asz recorder``). Imports nothing heavy."""

from asz_core import hookimpl


@hookimpl
def asz_runtime_adapters():
    from .adapter import ClaudeCodeAdapter

    return [ClaudeCodeAdapter]


@hookimpl
def asz_register_commands(app):
    from .commands import recorder_app

    app.add_typer(recorder_app, name="recorder")
