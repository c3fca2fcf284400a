"""Team runs here or over an ``asz server`` (``--server URL``), what the commands call: over a
server, it queues the runs in the job engine on its own PostgreSQL and answers the team's runs, for
a machine that reaches the team only through it. The server's side is :func:`judge_all_for` and :func:`rows_for`, behind
``POST /v1/team/judge-all`` (a token that may write) and ``POST /v1/team/runs`` (any token)."""

from __future__ import annotations

import os
from typing import Any

import orjson

from ..errors import AszError
from . import database, summaries

SCHEMES = ("http://", "https://")


def server_url() -> str | None:
    """The server the store is read through (``--server`` sets ASZ_STORE), if it is one."""
    got = os.environ.get("ASZ_STORE")
    return got if got and got.startswith(SCHEMES) else None


def _post(path: str, body: dict[str, Any]) -> Any:
    from ..server_store import Http, ServerError

    url = server_url()
    assert url is not None
    try:
        return Http(url, os.environ.get("ASZ_TOKEN")).post(path, orjson.dumps(body))
    except ServerError as exc:
        raise AszError(str(exc)) from None
    except OSError as exc:
        raise AszError(f"cannot reach the server {url} ({exc}); is `asz server` running there?") from None


# --- the client's side ------------------------------------------------------------------------------

def judge_all(f: Any, evaluator: str | None, *, stage_evaluators: dict[str, str] | None = None,
              window: str | None = None, stages: tuple[str, ...] | None = None, config: Any = None) -> Any:
    """``asz judge --all``: over the server when the store is read through one (``--server``), else
    in the team database's job engine (:func:`.jobs.judge_all`)."""
    from .jobs import Enqueued, Queued, judge_all as here

    if not server_url():
        return here(f, evaluator, stage_evaluators=stage_evaluators, window=window, stages=stages, config=config)
    got = _post("/v1/team/judge-all", {"filter": f.to_json(), "evaluator": evaluator,
                                        "stage_evaluators": stage_evaluators or {}, "window": window,
                                        "stages": list(stages) if stages else None})
    return Queued(got["filter"], got["conversations"],
                  tuple(Enqueued(q["job"], q["conversation"], q["head"], q["project"], q.get("skipped"))
                        for q in got["queued"]))


def rows(conversation: str | None = None, config: Any = None) -> list[dict[str, Any]]:
    """The team's runs: as the server answers them (``--server``), else from the team database."""
    from .jobs import team_rows

    if not server_url():
        return team_rows(conversation, config=config)
    return list(_post("/v1/team/runs", {"conversation": conversation})["result"])


# --- the server's side ------------------------------------------------------------------------------

def _text(v: Any, what: str) -> str | None:
    if v is not None and not isinstance(v, str):
        raise ValueError(f"{what} must be text")
    return v


def judge_all_for(store: Any, address: str, body: bytes) -> dict[str, Any]:
    """What ``asz judge --all --server URL`` asked, queued in the server's job engine over its store."""
    from .. import times
    from ..conversations import Filter
    from ..judge import config as configs
    from .jobs import enqueue

    q = orjson.loads(body)
    if not isinstance(q, dict):
        raise ValueError("the body must be a JSON object")
    fj = q.get("filter") or {}
    if not isinstance(fj, dict):
        raise ValueError("filter must be an object")
    since, until = _text(fj.get("since"), "filter.since"), _text(fj.get("until"), "filter.until")
    f = Filter(times.instant(since) if since else None, times.instant(until) if until else None,
               tuple(str(p) for p in fj.get("projects") or ()), tuple(str(r) for r in fj.get("runtimes") or ()))
    cfg = configs.load(None)
    evaluator = _text(q.get("evaluator"), "evaluator") or cfg.judge.evaluator
    if not evaluator:
        raise ValueError("give an evaluator (--evaluator NAME[:ARG]): the server has no judge.evaluator")
    se = q.get("stage_evaluators") or {}
    if not isinstance(se, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in se.items()):
        raise ValueError("stage_evaluators must map stages to evaluators")
    stages = q.get("stages")
    if stages is not None and not (isinstance(stages, list) and all(isinstance(s, str) for s in stages)):
        raise ValueError("stages must be a list of stage names")
    from ..conversations import listing

    lst = listing(f, store=store)
    queued = enqueue(lst, evaluator, stage_evaluators=se, window=_text(q.get("window"), "window"),
                     stages=tuple(stages) if stages else None, address=address, jobs=cfg.jobs)
    return {"filter": f.to_json(), "conversations": len(lst.rows),
            "queued": [{"job": e.job, "conversation": e.conversation, "head": e.head, "project": e.project,
                        "skipped": e.skipped} for e in queued]}


def rows_for(address: str, body: bytes) -> dict[str, Any]:
    q = orjson.loads(body) if body else {}
    conv = _text(q.get("conversation") if isinstance(q, dict) else None, "conversation")
    conn = database.connect(address)
    try:
        from .jobs import ensure_schema

        ensure_schema(conn)
        return {"result": summaries.rows(conn, conv)}
    finally:
        conn.close()
