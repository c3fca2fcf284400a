"""One job's run, in a process of its own.

A worker's runs are forked from a process that imported asz, its plugins, the kit and the price
file once (:func:`child`, through multiprocessing's forkserver, which imports :mod:`.preload`), so a
run starts warm, as a run of ``asz judge`` in one process would after the first; ``python -m
asz_core.team.runjob PAYLOAD`` makes one the same way from a cold start. Either makes the run as
``asz judge`` does (the worker's ASZ_HOME, store and asz.yaml) and says ``{"path": RUN_DIRECTORY}``
or ``{"error": WHY}``. A run ends when its worker ends (a worker killed mid-run leaves no run going
on behind the engine's back: the job is given to another worker, whose run replaces it).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any

import orjson


def _end_with(parent: int) -> None:
    def watch() -> None:
        while True:
            if os.getppid() != parent:
                os._exit(137)
            time.sleep(0.5)

    threading.Thread(target=watch, daemon=True, name="asz-end-with-worker").start()


_WARM: dict[str, Any] = {}


def warm() -> None:
    """What every run reads before its stages, read once in the process runs are forked from."""
    from .. import ledger
    from ..judge import runner  # noqa: F401 - the stages, the close, the report
    from ..judge.kit import Kit
    from ..registry import Registry

    registry = Registry()
    registry.plugins()
    for name in ("runtime adapter", "evaluator backend"):
        registry._map(name)  # each plugin's classes imported now, not in every run
    Kit.load()
    ledger.load_prices(None)
    _WARM["registry"] = registry


def run(payload: dict[str, Any]) -> dict[str, Any]:
    """The run a job names: ``{"path": ...}`` or ``{"error": ...}``; never raises for the run's failure."""
    from ..errors import AszError
    from ..judge import runner

    opts = runner.JudgeOptions(
        payload["conversation"], head=payload.get("head"), window=payload.get("window"),
        evaluator=payload.get("evaluator"), stage_evaluators=dict(payload.get("stage_evaluators") or {}),
        stages=tuple(payload["stages"]) if payload.get("stages") else None)
    try:
        result = runner.judge(opts, registry=_WARM.get("registry"))
    except AszError as exc:
        return {"error": str(exc)}
    except Exception as exc:  # noqa: BLE001 - asz's own failure is the job's, said, and retried
        return {"error": f"{type(exc).__name__}: {exc}"}
    return {"path": str(result.path)}


def child(payload: bytes, conn: Any, env: dict[str, str] | None = None, cwd: str | None = None) -> None:
    """A forked run (multiprocessing): sends what :func:`run` says, as JSON, on ``conn``, whose other
    end only the worker holds; when the worker ends, that end closes and the run ends too (its
    forkserver outlives it, so the parent process says nothing). It runs in the worker's
    environment and folder as they are now (``env``, ``cwd``), not as when the forkserver started."""
    done = threading.Event()

    def watch() -> None:
        try:
            conn.recv_bytes()  # the worker sends nothing: this returns only at its end
        except (EOFError, OSError):
            pass
        os._exit(0 if done.is_set() else 137)

    threading.Thread(target=watch, daemon=True, name="asz-end-with-worker").start()
    if env is not None:
        os.environ.clear()
        os.environ.update(env)
    if cwd:
        os.chdir(cwd)
    said = run(orjson.loads(payload))
    done.set()
    conn.send_bytes(orjson.dumps(said))


def main(argv: list[str]) -> int:
    payload = orjson.loads(argv[0])
    if isinstance(payload.get("parent"), int):
        _end_with(payload["parent"])
    said = run(payload)
    print(orjson.dumps(said).decode(), flush=True)
    return 0 if "path" in said else 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
