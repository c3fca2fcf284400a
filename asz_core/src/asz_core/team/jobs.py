"""Judge runs as jobs of procrastinate, the job engine on the team's PostgreSQL.

``enqueue`` defers one job per conversation at its current head; ``serve`` is ``asz worker``.
What the engine gives (docs/architecture.md says why it was chosen):

* a job is fetched by one worker (``SELECT … FOR UPDATE SKIP LOCKED``), so no run is made twice at
  once; a queueing lock per conversation, head and evaluator keeps a second ``judge --all`` from
  queueing the same run again while one waits;
* retries: a job whose run failed (an exception, or stages that failed) is retried after a wait,
  up to ``jobs.attempts`` attempts;
* a job whose worker died (SIGKILL, a lost machine) stays ``doing`` with a worker whose heartbeat
  stopped: every worker looks for such jobs when it starts and every ``jobs.stalled_after``
  seconds, and gives them back to the queue;
* a bounded number of runs per evaluator at once, across all workers: each job takes one of
  ``jobs.slots`` locks of its evaluator (``asz-evaluator:NAME:K``), and the engine runs at most
  one job per lock at a time.

Each run is made in a process of its own (:mod:`.runjob`), as ``asz judge`` makes it: its run
directory under the worker's ASZ_HOME, close.json and report.html; a run's process ends with its
worker. Its summary lands in the team database (:mod:`.summaries`).
"""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path
from typing import Any

from attrs import frozen

from ..errors import AszError
from ..judge.config import JobsConfig
from . import database, summaries

TASK = "asz.judge_run"
QUEUE = "asz-judge"
LOCK = "asz-evaluator:{name}:{k}"


def config_of(cfg: Any) -> JobsConfig:
    got = getattr(cfg, "jobs", None)
    return got if isinstance(got, JobsConfig) else JobsConfig()


# --- the engine -----------------------------------------------------------------------------------

def make_app(address: str, jobs: JobsConfig | None = None) -> Any:
    """The procrastinate app on the team database, with asz's one task registered."""
    database.require()
    import procrastinate

    jobs = jobs or JobsConfig()
    app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=address))
    # procrastinate's max_attempts counts the tries after the first
    retries = max(1, jobs.attempts) - 1
    retry = procrastinate.RetryStrategy(max_attempts=retries, wait=max(0, jobs.retry_wait)) if retries else False

    @app.task(name=TASK, queue=QUEUE, pass_context=True, retry=retry)
    def judge_run(context: Any, **payload: Any) -> dict[str, Any]:
        return run_job(address, context.job.id, context.job.attempts, jobs, payload)

    return app


def ensure_schema(conn: Any) -> None:
    """The engine's tables and the summaries' exist: made once, by whoever comes first."""
    from procrastinate.schema import SchemaManager

    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext('asz_jobs_schema'))")
        if conn.execute("SELECT to_regclass('procrastinate_jobs')").fetchone()[0] is None:
            conn.execute(SchemaManager.get_schema())
    summaries.ensure(conn)


# --- enqueue --------------------------------------------------------------------------------------

@frozen
class Queued:
    """What ``asz judge --all`` did: the filter, how many conversations it kept, each one's job."""

    filter: dict[str, Any]
    conversations: int
    queued: tuple[Enqueued, ...]


@frozen
class Enqueued:
    job: int | None
    conversation: str
    head: str
    project: str | None
    skipped: str | None = None
    """Why no job was queued (the same run already waits in the queue)."""


def enqueue(listing: Any, evaluator: str, *, stage_evaluators: dict[str, str] | None = None,
            window: str | None = None, stages: tuple[str, ...] | None = None, address: str,
            jobs: JobsConfig | None = None) -> list[Enqueued]:
    """One job per conversation of ``listing`` (:func:`asz_core.conversations.listing`) at its head."""
    from procrastinate import exceptions as pexc

    jobs = jobs or JobsConfig()
    conn = database.connect(address)
    try:
        ensure_schema(conn)
        taken = conn.execute("SELECT count(*) FROM asz_team_runs WHERE evaluator = %s", (evaluator,)).fetchone()[0]
        app = make_app(address, jobs)
        out: list[Enqueued] = []
        slots = jobs.slots_of(evaluator)
        with app.open():
            task = app.tasks[TASK]
            for i, row in enumerate(listing.rows):
                project = row.summary.projects[0] if row.summary.projects else None
                payload = {"conversation": row.id, "head": row.head.head, "round": f"r{row.head.number}",
                           "evaluator": evaluator, "stage_evaluators": dict(stage_evaluators or {}),
                           "window": window, "stages": list(stages) if stages else None}
                lock = LOCK.format(name=evaluator.split(":", 1)[0], k=(taken + i) % slots)
                try:
                    job = task.configure(lock=lock, queueing_lock=f"{row.id}@{row.head.head}/{evaluator}").defer(**payload)
                except pexc.AlreadyEnqueued:
                    out.append(Enqueued(None, row.id, f"r{row.head.number}", project, "already queued"))
                    continue
                summaries.queued(conn, job, row.id, f"r{row.head.number}", project, row.runtime, evaluator, row.summary.last)
                out.append(Enqueued(job, row.id, f"r{row.head.number}", project))
        return out
    finally:
        conn.close()


def judge_all(f: Any, evaluator: str | None, *, stage_evaluators: dict[str, str] | None = None,
              window: str | None = None, stages: tuple[str, ...] | None = None, config: Path | None = None,
              store: Any = None) -> Queued:
    """``asz judge --all``: the conversations the filter keeps, each queued at its current head.
    The evaluator is the one given, else asz.yaml's: a worker runs it, so none is picked here."""
    from .. import conversations as convs
    from ..judge import config as configs

    cfg = configs.load(config)
    evaluator = evaluator or cfg.judge.evaluator
    if not evaluator:
        raise AszError("asz judge --all needs an evaluator: give --evaluator NAME[:ARG], or judge.evaluator in "
                       "asz.yaml (the workers run it, so none is picked on this machine)")
    address = database.url(cfg)
    listing = convs.listing(f, store=store)
    queued = enqueue(listing, evaluator, stage_evaluators=stage_evaluators, window=window, stages=stages,
                     address=address, jobs=cfg.jobs)
    return Queued(listing.filter.to_json(), len(listing.rows), tuple(queued))


def team_rows(conversation: str | None = None, *, config: Path | None = None) -> list[dict[str, Any]]:
    """The team's runs as the team database holds them (:func:`.summaries.rows`)."""
    from ..judge import config as configs

    conn = database.connect(database.url(configs.load(config)))
    try:
        ensure_schema(conn)
        return summaries.rows(conn, conversation)
    finally:
        conn.close()


def work(*, concurrency: int = 1, until_empty: bool = False, config: Path | None = None, say: Any = None) -> None:
    """``asz worker``: :func:`serve` on the team database asz.yaml (or $ASZ_JOBS) names."""
    from ..judge import config as configs

    if concurrency < 1:
        raise AszError(f"--concurrency must be 1 or more, not {concurrency}")
    cfg = configs.load(config)
    serve(database.url(cfg), concurrency=concurrency, until_empty=until_empty, jobs=cfg.jobs, say=say)


# --- one job --------------------------------------------------------------------------------------

class RunFailed(AszError):
    """The run of a job failed; the engine tries it again while attempts are left."""


def run_job(address: str, job_id: int, attempts: int, jobs: JobsConfig, payload: dict[str, Any]) -> dict[str, Any]:
    """Make the run a job names, in a process of its own, and write its summary."""
    conn = database.connect(address)
    try:
        summaries.running(conn, job_id, socket.gethostname())
        said, why = _fork_run(payload)
        path = said.get("path")
        last = attempts + 1 >= max(1, jobs.attempts)
        if not path or not Path(path).is_dir():
            why = said.get("error") or why
            summary = {"error": why, "status": "failed"}
            if last:
                summaries.finished(conn, job_id, "failed", summary)
            else:
                summaries.requeued(conn, job_id, summary)
            raise RunFailed(why)
        summary = summaries.of_run(Path(path))
        ok = summary["status"] == "closed" and not summary["failed_stages"]
        if ok:
            summaries.finished(conn, job_id, "closed", summary)
            return {"path": path}
        if last:
            summaries.finished(conn, job_id, "failed", summary)
        else:
            summaries.requeued(conn, job_id, summary)
        raise RunFailed(f"the run {path} " + (f"has failed stages: {', '.join(summary['failed_stages'])}"
                                              if summary["failed_stages"] else f"is {summary['status']}"))
    finally:
        conn.close()


_SPAWNER: list[Any] = []


def spawner() -> Any:
    """The multiprocessing context runs are forked from: a forkserver that imported asz once
    (:mod:`.preload`); it ends with the worker, and each run ends with it (:func:`.runjob.child`)."""
    if not _SPAWNER:
        import multiprocessing

        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["asz_core.team.preload"])
        _SPAWNER.append(ctx)
    return _SPAWNER[0]


def _fork_run(payload: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """Make the run in a forked process: what it said, and why it said nothing when it did not.
    What it says comes back as JSON, never a pickle."""
    import orjson

    from . import runjob

    ctx = spawner()
    mine, theirs = ctx.Pipe(duplex=True)
    proc = ctx.Process(target=runjob.child, args=(orjson.dumps(payload), theirs, dict(os.environ), os.getcwd()),
                       name="asz-run")
    proc.start()
    theirs.close()
    said: Any = {}
    try:
        said = orjson.loads(mine.recv_bytes())
    except (EOFError, OSError, orjson.JSONDecodeError):  # it died before it said anything
        pass
    finally:
        mine.close()
    proc.join()
    return (said if isinstance(said, dict) else {}), f"the run's process ended with exit code {proc.exitcode}"


# --- the worker -----------------------------------------------------------------------------------

async def reap(app: Any, stalled_after: float) -> list[int]:
    """Give back to the queue the jobs of workers whose heartbeat stopped ``stalled_after`` seconds ago."""
    stalled = await app.job_manager.get_stalled_jobs(queue=QUEUE, seconds_since_heartbeat=stalled_after)
    out = []
    for job in stalled:
        await app.job_manager.retry_job(job)
        out.append(job.id)
    await app.job_manager.prune_stalled_workers(stalled_after)
    return out


async def _next_todo(app: Any) -> float | None:
    """Seconds until the queue's next waiting job may run (0: now, blocked by a lock), or None: none waits."""
    row = await app.connector.execute_query_one_async(
        "SELECT count(*) AS n, extract(epoch FROM min(scheduled_at) - now()) AS due FROM procrastinate_jobs "
        "WHERE queue_name = %(queue)s AND status = 'todo'", queue=QUEUE)
    if not row or not row["n"]:
        return None
    due = row["due"]
    return min(60.0, max(0.2, float(due))) if due is not None else 0.5


def serve(address: str, *, concurrency: int = 1, until_empty: bool = False, jobs: JobsConfig | None = None,
          heartbeat: float | None = None, say: Any = None) -> None:
    """``asz worker``: run jobs until stopped (Ctrl-C, SIGTERM), or until the queue is empty."""
    jobs = jobs or JobsConfig()
    conn = database.connect(address)
    try:
        ensure_schema(conn)
    finally:
        conn.close()
    app = make_app(address, jobs)
    beat = heartbeat if heartbeat is not None else max(0.5, min(10.0, jobs.stalled_after / 4))

    async def main() -> None:
        async with app.open_async():
            back = await reap(app, jobs.stalled_after)
            if back and say:
                say(f"gave back {len(back)} job(s) whose worker stopped: {', '.join(map(str, back))}")

            async def keep_reaping() -> None:
                while True:
                    await asyncio.sleep(max(0.5, jobs.stalled_after / 2))
                    got = await reap(app, jobs.stalled_after)
                    if got and say:
                        say(f"gave back {len(got)} job(s) whose worker stopped: {', '.join(map(str, got))}")

            reaper = asyncio.create_task(keep_reaping())
            try:
                while True:
                    await app.run_worker_async(queues=[QUEUE], concurrency=concurrency, wait=not until_empty,
                                               name=f"asz-worker@{socket.gethostname()}:{os.getpid()}",
                                               update_heartbeat_interval=beat,
                                               stalled_worker_timeout=jobs.stalled_after, listen_notify=True)
                    # The engine's worker stops when nothing can be fetched now; a job that waits for its
                    # evaluator's slot, or for its next try, is still this queue's work.
                    wait = await _next_todo(app) if until_empty else None
                    if wait is None:
                        break
                    await asyncio.sleep(wait)
            finally:
                reaper.cancel()

    asyncio.run(main())
