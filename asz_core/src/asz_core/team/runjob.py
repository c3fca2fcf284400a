"""One job's run, in a process of its own: ``python -m asz_core.team.runjob PAYLOAD``.

Makes the run as ``asz judge`` does (the worker's ASZ_HOME, store and asz.yaml) and prints one
JSON line: ``{"path": RUN_DIRECTORY}``, or ``{"error": WHY}``. It ends when the worker that
started it ends (a worker killed mid-run leaves no run going on behind the engine's back: the job
is given to another worker, whose run replaces it).
"""

from __future__ import annotations

import os
import sys
import threading
import time

import orjson


def _end_with(parent: int) -> None:
    def watch() -> None:
        while True:
            if os.getppid() != parent:
                os._exit(137)
            time.sleep(0.5)

    threading.Thread(target=watch, daemon=True, name="asz-end-with-worker").start()


def main(argv: list[str]) -> int:
    from ..errors import AszError
    from ..judge import runner

    payload = orjson.loads(argv[0])
    if isinstance(payload.get("parent"), int):
        _end_with(payload["parent"])
    opts = runner.JudgeOptions(
        payload["conversation"], head=payload.get("head"), window=payload.get("window"),
        evaluator=payload.get("evaluator"), stage_evaluators=dict(payload.get("stage_evaluators") or {}),
        stages=tuple(payload["stages"]) if payload.get("stages") else None)
    try:
        result = runner.judge(opts)
    except AszError as exc:
        print(orjson.dumps({"error": str(exc)}).decode(), flush=True)
        return 2
    print(orjson.dumps({"path": str(result.path)}).decode(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
