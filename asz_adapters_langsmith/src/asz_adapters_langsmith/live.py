"""Reading LangSmith live, through the official ``langsmith`` SDK (the optional extra ``live``).

The runs come from ``Client.list_runs`` (``POST /runs/query``, a project named through
``GET /sessions``), the same endpoints ``langsmith`` has answered since its 0.1 releases. They are
turned into asz entries by the same code that reads exported files, so a trace read live and the
same trace exported give the same records.

Two ways to use it:

* ``export_runs(dest, project=...)`` (or ``asz-langsmith-export --project NAME --out FILE``) writes
  the runs as JSONL; ``asz collect FILE`` then reads it like any export, and a later export to
  the same file adds only what changed.
* ``read_live(project=...)`` yields the entries directly, for library use.

The SDK is imported only here, when a live read is asked for; without it the error says which
pip line installs it. Credentials are the SDK's own: ``LANGSMITH_API_KEY`` (or
``LANGCHAIN_API_KEY``) and, for a self-hosted LangSmith, ``LANGSMITH_ENDPOINT``.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from asz_core.errors import AszError, ConfigError, MissingDependency
from asz_core.records import Entry, Problem

from .adapter import Part, entries_from_parts

PIP_LINE = 'pip install "asz-adapters-langsmith[live]"'
KEY_VARS = ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY")


def _sdk() -> Any:
    try:
        import langsmith
    except ImportError as exc:
        raise MissingDependency(f"reading LangSmith live needs the langsmith package, which is not installed: {PIP_LINE}") from exc
    return langsmith


def credentials_configured() -> bool:
    """Whether the environment holds a LangSmith API key for the SDK to use."""
    return any(os.environ.get(v) for v in KEY_VARS)


def make_client(api_url: str | None = None, api_key: str | None = None) -> Any:
    ls = _sdk()
    if not (api_key or credentials_configured()):
        raise ConfigError("no LangSmith credentials: set LANGSMITH_API_KEY (and LANGSMITH_ENDPOINT for a "
                          "self-hosted LangSmith), or pass api_key")
    # Reading only: no background thread batching traces this process never sends.
    return ls.Client(api_url=api_url, api_key=api_key, auto_batch_tracing=False)


def fetch_runs(project: str | None = None, *, trace_id: str | None = None, client: Any = None,
               api_url: str | None = None, api_key: str | None = None, limit: int | None = None,
               start_time: datetime | None = None) -> Iterator[dict[str, Any]]:
    """Every run of a project (or of one trace) as a plain JSON-able dict."""
    if project is None and trace_id is None:
        raise ConfigError("name a LangSmith project or a trace to read")
    client = client if client is not None else make_client(api_url, api_key)
    kwargs: dict[str, Any] = {}
    if project is not None:
        kwargs["project_name"] = project
    if trace_id is not None:
        kwargs["trace_id"] = trace_id
    if limit is not None:
        kwargs["limit"] = limit
    if start_time is not None:
        kwargs["start_time"] = start_time
    try:
        with warnings.catch_warnings():
            # list_runs is marked deprecated in newer SDKs in favour of an API that older
            # servers and SDKs lack; it is still the one call every version answers.
            warnings.simplefilter("ignore", DeprecationWarning)
            runs = client.list_runs(**kwargs)
            for run in runs:
                yield run_to_dict(run)
    except AszError:
        raise
    except Exception as exc:  # the SDK's errors (HTTP, auth, not found) are for the person
        raise AszError(f"LangSmith could not be read: {exc}") from exc


def run_to_dict(run: Any) -> dict[str, Any]:
    """A ``langsmith.schemas.Run`` (or a dict) as the JSON an export holds: ids and times as text."""
    if isinstance(run, dict):
        d = run
    elif hasattr(run, "model_dump"):
        d = run.model_dump(mode="json", exclude={"child_runs", "attachments"})
    elif hasattr(run, "json"):  # pydantic v1 models in old SDKs
        d = orjson.loads(run.json(exclude={"child_runs", "attachments"}))
    else:
        raise TypeError(f"not a LangSmith run: {type(run).__name__}")
    out = orjson.loads(orjson.dumps(d, default=str))
    return {k: v for k, v in out.items() if v is not None and k not in ("child_runs", "attachments")}


def _sorted(runs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(runs, key=lambda r: (str(r.get("dotted_order") or ""), str(r.get("id") or "")))


def read_live(project: str | None = None, *, trace_id: str | None = None, client: Any = None,
              api_url: str | None = None, api_key: str | None = None, limit: int | None = None,
              start_time: datetime | None = None) -> Iterator[Entry | Problem]:
    """Entries of the runs read live, as the file adapter makes them (file ``langsmith:<name>``,
    line = the run's place in the answer)."""
    runs = _sorted(list(fetch_runs(project, trace_id=trace_id, client=client, api_url=api_url, api_key=api_key,
                                   limit=limit, start_time=start_time)))
    source = f"langsmith:{project if project is not None else trace_id}"
    parts = [Part(i, "run", r, f"run {i}") for i, r in enumerate(runs, 1)]
    yield from entries_from_parts(parts, source)


def export_runs(dest: Path, project: str | None = None, *, trace_id: str | None = None, client: Any = None,
                api_url: str | None = None, api_key: str | None = None, limit: int | None = None,
                start_time: datetime | None = None) -> int:
    """Write the runs as JSONL (one run a line, in dotted order) to ``dest``; returns how many.

    The file is replaced whole (written beside it, then renamed), so a collect never sees half of it.
    """
    runs = _sorted(list(fetch_runs(project, trace_id=trace_id, client=client, api_url=api_url, api_key=api_key,
                                   limit=limit, start_time=start_time)))
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".part")
    with open(tmp, "wb") as f:
        for r in runs:
            f.write(orjson.dumps(r) + b"\n")
    os.replace(tmp, dest)
    return len(runs)


def main(argv: Sequence[str] | None = None) -> int:
    """``asz-langsmith-export``: write a LangSmith project's runs to a JSONL file for ``asz collect``."""
    p = argparse.ArgumentParser(prog="asz-langsmith-export", description=main.__doc__)
    p.add_argument("--project", help="LangSmith project (tracing project) name")
    p.add_argument("--trace", help="one trace id (with or without --project)")
    p.add_argument("--since", help="only runs started at or after this ISO time")
    p.add_argument("--limit", type=int, help="at most this many runs")
    p.add_argument("--api-url", help="LangSmith API URL (default: LANGSMITH_ENDPOINT or the SDK's)")
    p.add_argument("--out", required=True, type=Path, help="JSONL file to write (replaced whole)")
    a = p.parse_args(argv)
    try:
        since = datetime.fromisoformat(a.since) if a.since else None
        n = export_runs(a.out, a.project, trace_id=a.trace, api_url=a.api_url, limit=a.limit, start_time=since)
    except (AszError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{n} runs written to {a.out}; next: asz collect {a.out}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
