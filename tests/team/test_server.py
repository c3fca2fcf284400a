"""Team runs over an `asz server` (--server URL): the server queues them in the job engine on its
own PostgreSQL, a worker judges what it reads through the server, and `asz runs --team --server`
lists them; a read-only token queues nothing."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from asz_core import server as srv
from asz_core.collect import collect
from asz_core.push import push
from asz_core.store import Store
from asz_core.store_pg import PgStore
from tests.core.test_server import ASZ, Server

from .conftest import EXAMPLE, SCRIPT


def test_queue_work_and_list_through_the_server(pg_url: str, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("ASZ_JOBS", raising=False)
    monkeypatch.delenv("ASZ_STORE", raising=False)
    pg = PgStore(pg_url)
    laptop, reader = srv.add_token(pg, "laptop"), srv.add_token(pg, "reader", readonly=True)
    server = Server(pg_url, tmp_path / "server-home")
    server.start()
    try:
        local = Store.open(tmp_path / "laptop")
        collect([EXAMPLE], local)
        push(local, server.url, laptop)
        local.close()
        env = {k: v for k, v in os.environ.items() if k not in ("ASZ_JOBS", "ASZ_STORE")}
        env.update(ASZ_HOME=str(tmp_path / "elsewhere"), COLUMNS="200")

        def asz(*args: str, token: str, **extra: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([str(ASZ), *args], env={**env, "ASZ_TOKEN": token, **extra}, capture_output=True,
                                  text=True, timeout=300)

        refused = asz("judge", "--all", "--evaluator", f"scripted:{SCRIPT}", "--server", server.url, token=reader)
        assert refused.returncode == 1 and "read-only" in refused.stderr and "Traceback" not in refused.stderr
        q = asz("judge", "--all", "--evaluator", f"scripted:{SCRIPT}", "--server", server.url, "--json", token=laptop)
        assert q.returncode == 0, q.stderr
        (job,) = json.loads(q.stdout)["queued"]
        assert job["head"] == "r1" and job["job"] is not None
        # a worker with the team database, reading the conversations through the server
        w = asz("worker", "--until-empty", token=reader, ASZ_JOBS=pg_url, ASZ_STORE=server.url)
        assert w.returncode == 0, w.stderr
        listed = asz("runs", "--team", "--server", server.url, "--json", token=reader)
        assert listed.returncode == 0, listed.stderr
        (row,) = json.loads(listed.stdout)
        assert row["status"] == "closed" and row["job_id"] == job["job"]
        assert row["summary"]["scores"]["achievement"] is not None
    finally:
        server.kill()
        pg.close()
