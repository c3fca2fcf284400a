"""asz runtime adapter for langsmith (the adapter arrives with its own issue)."""

__version__ = "0.1.0"
