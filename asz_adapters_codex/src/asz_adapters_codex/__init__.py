"""asz runtime adapter for Codex CLI: rollout files (``~/.codex/sessions``) and ``codex exec --json``
streams. See docs/runtimes/codex.md."""

__version__ = "0.1.0"
