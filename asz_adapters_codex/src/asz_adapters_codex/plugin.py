"""Entry point module (group ``asz``): advertises the Codex CLI adapter. Imports nothing heavy."""

from asz_core import hookimpl


@hookimpl
def asz_runtime_adapters():
    from .adapter import CodexAdapter

    return [CodexAdapter]
