"""asz runtime adapter for Codex CLI rollouts (the adapter arrives with its own issue)."""

__version__ = "0.1.0"
