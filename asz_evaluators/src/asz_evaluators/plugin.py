"""Entry point module (group ``asz``) for the evaluator backends. It advertises nothing yet."""

from asz_core import hookimpl


@hookimpl
def asz_evaluator_backends():
    return []
