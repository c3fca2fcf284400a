"""Entry point module (group ``asz``) for the langsmith adapter. It advertises nothing yet."""

from asz_core import hookimpl


@hookimpl
def asz_runtime_adapters():
    return []
