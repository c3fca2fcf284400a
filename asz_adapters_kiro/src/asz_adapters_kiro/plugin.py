"""Entry point module (group ``asz``): advertises the Kiro / Amazon Q CLI adapter. Imports nothing heavy."""

from asz_core import hookimpl


@hookimpl
def asz_runtime_adapters():
    from .adapter import KiroAdapter

    return [KiroAdapter]
