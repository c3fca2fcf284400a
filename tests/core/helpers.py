"""Helpers shared by the core tests: corpus paths, running asz in a subprocess, reading a store raw."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("ASZ_CORPUS") or ROOT.parent / "shared" / "corpus")
CLAUDE_CORPUS = CORPUS / "claude-code"
MATCH = CLAUDE_CORPUS / "crypto590__personal-ai-infrastructure" / "projects" / "-Users-coreyyoung-Desktop-Projects-match"
ORIGIN = MATCH / "b277cc60-6558-433f-92b8-95dd61c280e1.jsonl"
"""A Claude Code session that was later resumed..."""
RESUMED = MATCH / "9fdc1632-c430-4469-89bf-bfc9df7f12e6.jsonl"
"""...into this one, which starts with copies of ORIGIN's lines (same uuids)."""
FAKE_PLUGIN = ROOT / "tests" / "fake_plugin"

# Environment variables that change what asz loads; tests start without them.
PLUGIN_ENV = ("ASZ_DISABLE_PLUGINS", "ASZ_DISABLE_PLUGIN_AUTOLOAD", "ASZ_TRACE_PLUGINS",
              "ASZ_FAKE_PLUGIN_BROKEN", "ASZ_FAKE_PLUGIN_NAME")

# Runs the `asz` command in whatever Python runs this (so a throwaway venv can run it too).
ASZ_MAIN = "import sys; from asz_core.main import main; sys.argv[0] = 'asz'; main()"


def copy(src: Path, dst_dir: Path) -> Path:
    """Copy a corpus file or folder into a test's tmp folder (never into the repo)."""
    dst = dst_dir / src.name
    if src.is_dir():
        shutil.copytree(src, dst)
    else:
        dst_dir.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
    return dst


def asz_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in PLUGIN_ENV}
    env.update(ASZ_HOME=str(home), COLUMNS="400", NO_COLOR="1", PYTHONWARNINGS="default")
    env.update(extra)
    return env


def run_asz(*args: str, home: Path, python: str = sys.executable, timeout: float = 300,
            **env: str) -> subprocess.CompletedProcess[str]:
    """Run ``asz ARGS`` through asz_core.cli.main() in a child process."""
    return subprocess.run([python, "-c", ASZ_MAIN, *args], env=asz_env(home, **env), capture_output=True,
                          text=True, timeout=timeout)


def head_digest(parent: str, raws: list[bytes]) -> str:
    """The head digest as docs/store.md defines it, computed without asz:
    sha256(parent head as ASCII hex, then the 32-byte sha256 of each record's raw bytes, in order)."""
    h = hashlib.sha256(parent.encode("ascii"))
    for raw in raws:
        h.update(hashlib.sha256(raw).digest())
    return h.hexdigest()


def db_rows(db_path: Any, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Rows straight from the store's database, not through asz: a SQLite file (or a SQLite
    store), or a PostgreSQL store's database (the same query, in its words: ``store_pg.pg_sql``)."""
    url = getattr(db_path, "url", None)
    if url is not None:
        import psycopg

        from asz_core.store_pg import pg_sql

        with psycopg.connect(url) as pg:
            return [tuple(r) for r in pg.execute(pg_sql(sql), args or None).fetchall()]
    con = sqlite3.connect(getattr(db_path, "path", db_path))
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def fingerprint(db_path: Any) -> dict[str, Any]:
    """What a store holds, without landing times: conversations, sessions, rounds, records, file states."""
    if getattr(db_path, "url", None) is not None:
        tables = {r[0] for r in db_rows(db_path, "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")}
    else:
        db_path = getattr(db_path, "path", db_path)
        tables = {r[0] for r in db_rows(db_path, "SELECT name FROM sqlite_master WHERE type='table'")} if db_path.exists() else set()
    if not {"conversations", "sessions", "rounds", "records", "files"} <= tables:
        # No store yet, or one whose tables were being created: it holds nothing.
        return {"conversations": [], "sessions": [], "rounds": [], "records": [], "files": [], "leans": []}
    return {
        "conversations": db_rows(db_path, "SELECT id, runtime FROM conversations ORDER BY id"),
        "sessions": db_rows(db_path, "SELECT session, conversation FROM sessions ORDER BY session"),
        "rounds": db_rows(db_path, "SELECT conversation, number, parent, head, records FROM rounds ORDER BY conversation, number"),
        "records": db_rows(db_path, "SELECT conversation, key, version, round, digest FROM records ORDER BY seq"),
        "files": db_rows(db_path, 'SELECT path, "offset", line FROM files ORDER BY path'),
        "leans": db_rows(db_path, "SELECT conversation, round, part, rule, rows FROM leans ORDER BY conversation, round, part")
        if "leans" in tables else [],
    }


def assert_lean_rows_agree(store: Any, conversation: str, upto: int) -> None:
    """``Store.records(lean=True)`` is read from ``leans`` (not the records) and shows every record
    the view at ``upto`` shows, in its place: its key, stream and time, its lean events, and its
    place in the conversation's landing order for ``seq``."""
    import orjson

    from asz_core.lean_events import RULE, lean

    assert len({r[0] for r in db_rows(store, "SELECT round FROM leans WHERE conversation = ? AND round <= ? AND "
                                      "rule = ?", (conversation, upto, RULE))}) == upto
    place = {seq: i for i, (seq,) in enumerate(db_rows(store, "SELECT seq FROM records WHERE conversation = ? AND "
                                                      "round <= ? ORDER BY seq", (conversation, upto)), 1)}
    want = [(place[r.seq], r.key, r.stream, r.ts, lean(r.events)) for r in store.records(conversation, upto)]
    assert orjson.dumps(store.records(conversation, upto, lean=True)) == orjson.dumps(want)


class OneRuntime:
    """A registry of one runtime adapter instance, for collect (a plugin without installing it)."""

    def __init__(self, adapter: Any) -> None:
        self.adapter = adapter

    def runtime(self, name: str) -> Any:
        return self.adapter

    def runtimes(self) -> list[Any]:
        return [self.adapter]

    def detect_runtime(self, path: Path) -> Any:
        return self.adapter if self.adapter.detect(path) else None


def half_then_rest(folder: Path) -> tuple[Path, bytes]:
    """The first half of the corpus's largest main-stream transcript written into ``folder``, and
    the rest of its lines, to append for a second round of the same conversation (skips without
    the corpus)."""
    from tests.conftest import need_corpus

    need_corpus(CLAUDE_CORPUS)
    src = max((f for f in CLAUDE_CORPUS.rglob("*.jsonl") if not f.name.startswith("agent-")), key=lambda f: f.stat().st_size)
    lines = src.read_bytes().splitlines(keepends=True)
    f = folder / src.name
    folder.mkdir(parents=True, exist_ok=True)
    f.write_bytes(b"".join(lines[: len(lines) // 2]))
    return f, b"".join(lines[len(lines) // 2:])
