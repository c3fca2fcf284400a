"""asz evaluator backends (they arrive with the judge stages)."""

__version__ = "0.1.0"
