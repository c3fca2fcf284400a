"""Entry point module (group ``asz``): advertises the Claude Code adapter. Imports nothing heavy."""

from asz_core import hookimpl


@hookimpl
def asz_runtime_adapters():
    from .adapter import ClaudeCodeAdapter

    return [ClaudeCodeAdapter]
