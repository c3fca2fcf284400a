"""asz: judge recorded coding-agent conversations."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .hookspecs import hookimpl
    from .interfaces import Availability, EvaluatorBackend, Fetched, FetchError, FetchSettings, RuntimeAdapter, SourceFetcher
    from .records import Cursor, Entry, Problem, Usage

__all__ = ["hookimpl", "RuntimeAdapter", "EvaluatorBackend", "Availability", "SourceFetcher", "Fetched", "FetchError", "FetchSettings", "Cursor", "Entry", "Problem", "Usage"]
__version__ = "0.1.0"

# Imported when first asked for: a command that needs none of them (`asz ledger --json` over kept
# summaries) does not pay for pluggy and the plugin interfaces.
_WHERE = {"hookimpl": "hookspecs", "RuntimeAdapter": "interfaces", "EvaluatorBackend": "interfaces",
          "Availability": "interfaces", "SourceFetcher": "interfaces", "Fetched": "interfaces", "FetchError": "interfaces",
          "FetchSettings": "interfaces", "Cursor": "records", "Entry": "records",
          "Problem": "records", "Usage": "records"}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'asz_core' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
