"""Entry point module (group ``asz``) for the evaluator backends. Imports no SDK: each backend
imports what it needs inside its class."""

from asz_core import hookimpl


@hookimpl
def asz_evaluator_backends():
    from .anthropic_backend import AnthropicEvaluator
    from .bedrock_backend import BedrockEvaluator
    from .claude import ClaudeEvaluator
    from .codex import CodexEvaluator
    from .kiro_cli import KiroEvaluator
    from .openai_backend import OpenAIEvaluator
    from .scripted import ScriptedEvaluator

    return [ScriptedEvaluator, AnthropicEvaluator, OpenAIEvaluator, BedrockEvaluator, ClaudeEvaluator, CodexEvaluator, KiroEvaluator]
