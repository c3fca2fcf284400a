"""asz runtime adapter for LangSmith / LangChain run trees (exported files, or live through the
langsmith SDK with the ``live`` extra). See docs/runtimes/langsmith.md."""

__version__ = "0.1.0"
