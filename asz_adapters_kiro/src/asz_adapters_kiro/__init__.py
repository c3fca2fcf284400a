"""asz runtime adapter for Kiro CLI / Amazon Q Developer CLI conversations."""

__version__ = "0.1.0"
