"""Entry point module (group ``asz``): advertises the LangSmith adapter. Imports nothing heavy
(the adapter module is imported when asz asks for the class; the langsmith SDK only when a
source is read live)."""

from asz_core import hookimpl


@hookimpl
def asz_runtime_adapters():
    from .adapter import LangSmithAdapter

    return [LangSmithAdapter]
