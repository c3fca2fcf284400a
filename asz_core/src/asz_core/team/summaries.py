"""The team's run summaries: one row per queued judge run, in the team database.

A row is made when ``asz judge --all`` enqueues the run (``queued``), marked ``running`` by the
worker that takes it (each attempt counted), and ``closed`` only once the run's close.json reads
back; a run whose stages failed on its last attempt is ``failed``. A worker killed mid-run leaves
the row ``running`` until the engine gives the job to another worker, whose run replaces it: the
row is keyed by the job, so a run retried is listed once, and a half run is never listed closed.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import orjson

SCHEMA = """
CREATE TABLE IF NOT EXISTS asz_team_runs (
    job_id       bigint PRIMARY KEY,
    conversation text NOT NULL,
    head         text NOT NULL,
    project      text,
    runtime      text,
    evaluator    text NOT NULL,
    activity     timestamptz,
    status       text NOT NULL,
    attempts     integer NOT NULL DEFAULT 0,
    run_id       text,
    host         text,
    path         text,
    queued_at    timestamptz NOT NULL DEFAULT now(),
    started      timestamptz,
    ended        timestamptz,
    summary      jsonb
);
CREATE INDEX IF NOT EXISTS asz_team_runs_queued ON asz_team_runs (queued_at);
"""
STATUSES = ("queued", "running", "closed", "failed")
COLUMNS = ("job_id", "conversation", "head", "project", "runtime", "evaluator", "activity", "status", "attempts", "run_id",
           "host", "path", "queued_at", "started", "ended", "summary")


def ensure(conn: Any) -> None:
    """The table exists (made once; concurrent makers serialised by an advisory lock)."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext('asz_team_runs'))")
        conn.execute(SCHEMA)


def queued(conn: Any, job_id: int, conversation: str, head: str, project: str | None, runtime: str,
           evaluator: str, activity: str | None) -> None:
    """The run was queued; ``activity``: the conversation's last activity (UTC), what its week is."""
    conn.execute("INSERT INTO asz_team_runs (job_id, conversation, head, project, runtime, evaluator, activity, status) "
                 "VALUES (%s, %s, %s, %s, %s, %s, %s, 'queued') ON CONFLICT (job_id) DO NOTHING",
                 (job_id, conversation, head, project, runtime, evaluator, _instant(activity)))


def running(conn: Any, job_id: int, host: str) -> None:
    """A worker took the job: one attempt more (a retry after a killed worker counts too)."""
    conn.execute("UPDATE asz_team_runs SET status = 'running', attempts = attempts + 1, host = %s, started = now(), "
                 "ended = NULL WHERE job_id = %s", (host, job_id))


def requeued(conn: Any, job_id: int, summary: dict[str, Any]) -> None:
    """The attempt failed and the engine will try again: queued, with what the failed attempt left."""
    conn.execute("UPDATE asz_team_runs SET status = 'queued', run_id = %s, path = %s, ended = now(), "
                 "summary = %s::jsonb WHERE job_id = %s",
                 (summary.get("run"), summary.get("path"), orjson.dumps(summary).decode(), job_id))


def finished(conn: Any, job_id: int, status: str, summary: dict[str, Any]) -> None:
    """The attempt's run ended: ``closed`` (its close.json read back) or ``failed``, with what it holds."""
    assert status in ("closed", "failed")
    conn.execute("UPDATE asz_team_runs SET status = %s, run_id = %s, path = %s, ended = now(), summary = %s::jsonb "
                 "WHERE job_id = %s",
                 (status, summary.get("run"), summary.get("path"), orjson.dumps(summary).decode(), job_id))


def rows(conn: Any, conversation: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
    """The team's runs, newest queued first; ``conversation``: those of ids starting with it."""
    sql = "SELECT " + ", ".join(COLUMNS) + " FROM asz_team_runs"
    args: list[Any] = []
    if conversation:
        sql += " WHERE conversation LIKE %s"
        args.append(conversation.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%")
    sql += " ORDER BY queued_at DESC, job_id DESC"
    if limit:
        sql += " LIMIT %s"
        args.append(limit)
    out = []
    for r in conn.execute(sql, args).fetchall():
        d = dict(zip(COLUMNS, r, strict=True))
        for k in ("activity", "queued_at", "started", "ended"):
            if d[k] is not None:
                d[k] = d[k].isoformat().replace("+00:00", "Z")
        out.append(d)
    return out


def _instant(ts: str | None) -> Any:
    from .. import times

    return times.instant(ts) if ts else None


# --- what a run's files say, for its row ---------------------------------------------------------

def _dec(v: Any) -> Decimal | None:
    try:
        return Decimal(str(v)) if v is not None else None
    except InvalidOperation:
        return None


def _add(into: dict[str, Any], tally: Any) -> None:
    if not isinstance(tally, dict):
        return
    into["calls"] += int(tally.get("calls") or 0)
    into["tokens"] += int(tally.get("tokens") or 0)
    into["unpriced"] += int(tally.get("unpriced") or 0)
    m = _dec(tally.get("money"))
    if m is not None:
        into["money"] += m


def _tally() -> dict[str, Any]:
    return {"calls": 0, "tokens": 0, "money": Decimal(0), "unpriced": 0}


def of_run(path: Path) -> dict[str, Any]:
    """A run directory's summary: its status as ``asz runs`` reads it, the stages', the scores, what
    its targets cost and what of that was avoidable or not reviewed, the conversation's cost, and what
    judging consumed. Money as text (Decimal), never a float."""
    from ..judge import runs as judge_runs

    row = judge_runs.list_one(path)
    close = _close(path) if row.status == "closed" else None
    statement = (close or {}).get("statement") or {}
    cost = {"total": _tally(), "avoidable": _tally(), "not_reviewed": _tally()}
    for t in statement.get("targets") or []:
        c = (t.get("cost") or {}) if isinstance(t, dict) else {}
        for key in cost:
            _add(cost[key], c.get(key))
    judging = statement.get("judging") or {}
    out = {
        "run": row.run, "path": row.path, "status": row.status, "stages": row.stages,
        "failed_stages": sorted(s for s, st in row.stages.items() if st == "failed"),
        "evaluators": list(row.evaluators), "scores": row.scores, "units": row.units,
        "targets": len(statement.get("targets") or []),
        "cost": {k: {**v, "money": str(v["money"])} for k, v in cost.items()},
        "conversation_cost": judging.get("conversation"), "judging": judging.get("total"),
        "consumed": row.consumed, "started": row.started, "ended": row.ended,
    }
    return out


def _close(path: Path) -> dict[str, Any] | None:
    from ..judge.run_files import CLOSE, RUN, look

    run, _ = look(path, RUN)
    close, _ = look(path, CLOSE, (run or {}).get("run"))
    return close if isinstance(close, dict) else None
