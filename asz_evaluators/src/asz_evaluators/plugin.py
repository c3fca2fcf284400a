"""Entry point module (group ``asz``) for the evaluator backends. Imports no SDK: each backend
imports what it needs inside its class."""

from asz_core import hookimpl


@hookimpl
def asz_evaluator_backends():
    from .scripted import ScriptedEvaluator

    return [ScriptedEvaluator]
