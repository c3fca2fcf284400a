"""asz runtime adapter for MyRuntime."""

__version__ = "0.1.0"
