"""The team database: where the job engine's queue and the team's run summaries live.

Its address is, first found: ``$ASZ_JOBS``; ``jobs: {database: URL}`` in asz.yaml; the store's
own address when the store is PostgreSQL (``$ASZ_STORE`` or ``store:`` in asz.yaml). A team that
runs asz on PostgreSQL keeps all three in one database.
"""

from __future__ import annotations

import os
from typing import Any

from ..errors import AszError

ENV = "ASZ_JOBS"
NEEDS = ("psycopg", "procrastinate")


class TeamError(AszError):
    """The team database cannot be used: not configured, not reachable, or the extra not installed."""


def _is_pg(url: Any) -> bool:
    return isinstance(url, str) and url.startswith(("postgresql://", "postgres://"))


def url(cfg: Any = None) -> str:
    """The team database's address (see the module's docstring), or a TeamError saying how to give one."""
    given = os.environ.get(ENV)
    if given:
        if not _is_pg(given):
            raise TeamError(f"${ENV} must be a postgresql:// address, not {given[:40]!r}")
        return given
    jobs = getattr(cfg, "jobs", None)
    if jobs is not None and getattr(jobs, "database", None):
        return str(jobs.database)
    store = os.environ.get("ASZ_STORE") or getattr(cfg, "store", None)
    if _is_pg(store):
        return str(store)
    raise TeamError("team runs need the team's PostgreSQL: set $ASZ_JOBS=postgresql://HOST/DB, or "
                    "jobs: {database: postgresql://HOST/DB} in asz.yaml (or a PostgreSQL store: $ASZ_STORE)")


def require() -> None:
    """The team extra is installed, or a TeamError saying how to install it."""
    import importlib.util

    missing = [m for m in NEEDS if importlib.util.find_spec(m) is None]
    if missing:
        raise TeamError(f"team runs need {', '.join(missing)}: pip install 'asz-core[team]'")


def connect(address: str) -> Any:
    """A psycopg connection (autocommit) to the team database, or a TeamError naming what failed."""
    require()
    import psycopg

    try:
        return psycopg.connect(address, autocommit=True, connect_timeout=10)
    except psycopg.Error as exc:
        raise TeamError(f"cannot reach the team database {redact(address)}: {str(exc).strip().splitlines()[0]}") from None


def redact(address: str) -> str:
    """The address without its password, to be said."""
    import re

    return re.sub(r"(://[^:/@]+):[^@/]*@", r"\1:***@", address)
