"""Run ``asz ARGS`` and SIGKILL this very process at a chosen point of its store writes.

Used by test_collect_kill.py to stop a collect at exact places; nothing in asz knows of it.
``ASZ_TEST_KILL_AT=POINT:N`` kills at the Nth time POINT is reached:

* ``schema``: the store's tables were just created (a first open)
* ``begin``: the write transaction has begun
* ``add``: a record was just written
* ``save_file``: a file's read position was just written
* ``round``: a round row was just written
* ``commit-before`` / ``commit-after``: just before / after the transaction commits

With ``ASZ_TEST_KILL_SIGNAL=INT`` the signal sent is SIGINT (a person's Ctrl-C) instead of SIGKILL.
With ``ASZ_TEST_KILL_CHILDREN=FILE``, the ids of this process's children (collect's reader) are
written to FILE just before the kill.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import sys
from typing import Any

from asz_core import store

POINT, _, NTH = os.environ["ASZ_TEST_KILL_AT"].partition(":")
seen = {"n": 0}


def reached(point: str) -> None:
    if point == POINT:
        seen["n"] += 1
        if seen["n"] == int(NTH or 1):
            out = os.environ.get("ASZ_TEST_KILL_CHILDREN")
            if out:
                with open(f"/proc/self/task/{os.getpid()}/children") as f, open(out, "w") as o:
                    o.write(f.read())
            os.kill(os.getpid(), getattr(signal, "SIG" + os.environ.get("ASZ_TEST_KILL_SIGNAL", "KILL")))


class _Connection:
    """sqlite3.Connection as the store uses it, reporting the points it passes."""

    def __init__(self, con: sqlite3.Connection) -> None:
        self._con = con

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        if sql.startswith("COMMIT"):
            reached("commit-before")
        cur = self._con.execute(sql, *args)
        if sql.startswith("BEGIN"):
            reached("begin")
        elif sql.startswith("INSERT INTO records"):
            reached("add")
        elif sql.startswith("INSERT OR REPLACE INTO files"):
            reached("save_file")
        elif sql.startswith("INSERT INTO rounds"):
            reached("round")
        elif sql.startswith("COMMIT"):
            reached("commit-after")
        return cur

    def executemany(self, sql: str, rows: Any) -> sqlite3.Cursor:
        rows = list(rows)
        cur = self._con.executemany(sql, rows)
        if sql.startswith("INSERT INTO records"):
            for _ in rows:  # the store writes records in batches: each row is a point passed
                reached("add")
        return cur

    def executescript(self, script: str) -> sqlite3.Cursor:
        cur = self._con.executescript(script)
        reached("schema")
        return cur

    def __getattr__(self, name: str) -> Any:
        return getattr(self._con, name)


_connect = sqlite3.connect
store.sqlite3 = type(sys)("sqlite3_for_kill_tests")  # only the store's view of sqlite3 changes
store.sqlite3.__dict__.update(sqlite3.__dict__)
store.sqlite3.connect = lambda *a, **k: _Connection(_connect(*a, **k))

from asz_core.main import main  # noqa: E402

sys.argv[0] = "asz"
main()
