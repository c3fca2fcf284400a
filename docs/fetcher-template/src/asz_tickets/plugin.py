"""The hooks asz calls. Import nothing heavy here: the fetcher's module is imported when asked for."""

from __future__ import annotations

from typing import Any

from asz_core import hookimpl


@hookimpl
def asz_source_fetchers() -> Any:
    from .fetcher import TicketFetcher

    return [TicketFetcher]
