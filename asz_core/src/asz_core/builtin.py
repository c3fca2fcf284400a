"""Plugins asz_core registers in-process, through the same hooks any plugin uses: core's source
fetchers (``file``, ``http``, ``command``: :mod:`asz_core.fetchers`), so a file and a plain URL
need no setting."""

from __future__ import annotations

from typing import Any

from .hookspecs import hookimpl


@hookimpl
def asz_source_fetchers() -> Any:
    from .fetchers import FETCHERS

    return list(FETCHERS)
