"""asz runtime adapter for Claude Code transcripts."""

__version__ = "0.1.0"
