"""asz: judge recorded coding-agent conversations."""

from .hookspecs import hookimpl
from .interfaces import Availability, EvaluatorBackend, RuntimeAdapter, SourceFetcher
from .records import Cursor, Entry, Problem, Usage

__all__ = ["hookimpl", "RuntimeAdapter", "EvaluatorBackend", "Availability", "SourceFetcher", "Cursor", "Entry", "Problem", "Usage"]
__version__ = "0.1.0"
