"""Entry point module (group ``asz``) for the codex adapter. It advertises nothing yet."""

from asz_core import hookimpl


@hookimpl
def asz_runtime_adapters():
    return []
