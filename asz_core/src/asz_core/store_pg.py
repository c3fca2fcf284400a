"""The store on PostgreSQL (``store: postgresql://...`` in asz.yaml, or ``ASZ_STORE``): a team's
one store, which ``asz server`` serves and many machines push to.

It is :class:`~asz_core.store.Store` over a psycopg 3 connection: every query of the SQLite store
runs here unchanged (:func:`pg_sql` translates the few words the two dialects spell differently),
so rounds, heads, views at a head, cursors and the ledger's kept summaries mean exactly what
docs/store.md says. What differs: the schema (PostgreSQL's types, ``COLLATE "C"`` so ids sort
and prefix-match byte by byte as in SQLite; records compressed with lz4, several times cheaper
to write than PostgreSQL's default), a schema migrated forward in code
(:data:`MIGRATIONS`), transactions (an advisory lock, as ``BEGIN IMMEDIATE`` in SQLite, lets one
collect write at a time; a pushed round locks only its conversation), and records written with
``COPY``.

psycopg is imported only when such a store is opened.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
from psycopg import pq

from .errors import RecordError, StoreError
from .records import Problem
from .store import Prepared, Store, Writer, _redacted, asz_home

MIGRATIONS: tuple[tuple[int, str], ...] = (
    (1, """
CREATE TABLE meta(key TEXT COLLATE "C" PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE conversations(
  id TEXT COLLATE "C" PRIMARY KEY, runtime TEXT COLLATE "C" NOT NULL, created TEXT COLLATE "C" NOT NULL);
CREATE TABLE sessions(
  session TEXT COLLATE "C" PRIMARY KEY, conversation TEXT COLLATE "C" NOT NULL REFERENCES conversations(id),
  rowid BIGSERIAL NOT NULL);
CREATE TABLE rounds(
  conversation TEXT COLLATE "C" NOT NULL, number INTEGER NOT NULL, parent TEXT COLLATE "C" NOT NULL,
  head TEXT COLLATE "C" NOT NULL, landed TEXT COLLATE "C" NOT NULL, records BIGINT NOT NULL,
  PRIMARY KEY(conversation, number));
CREATE UNIQUE INDEX rounds_head ON rounds(conversation, head);
CREATE TABLE records(
  seq BIGSERIAL PRIMARY KEY, conversation TEXT COLLATE "C" NOT NULL, key TEXT COLLATE "C" NOT NULL,
  version INTEGER NOT NULL, round INTEGER NOT NULL, digest BYTEA NOT NULL, stream TEXT COLLATE "C" NOT NULL,
  kind TEXT COLLATE "C" NOT NULL, file TEXT COLLATE "C" NOT NULL, line BIGINT NOT NULL, ts TEXT COLLATE "C",
  raw BYTEA COMPRESSION lz4 NOT NULL, events BYTEA COMPRESSION lz4 NOT NULL);
CREATE UNIQUE INDEX records_key ON records(key, conversation, version);
CREATE INDEX records_round ON records(conversation, round);
CREATE TABLE files(
  path TEXT COLLATE "C" PRIMARY KEY, runtime TEXT COLLATE "C" NOT NULL, size BIGINT NOT NULL,
  mtime_ns BIGINT NOT NULL, "offset" BIGINT NOT NULL, line BIGINT NOT NULL, tail BYTEA NOT NULL,
  state BYTEA NOT NULL);
CREATE TABLE calls(
  call TEXT COLLATE "C" NOT NULL, conversation TEXT COLLATE "C" NOT NULL, rowid BIGSERIAL NOT NULL,
  UNIQUE(call, conversation));
CREATE INDEX calls_conversation ON calls(conversation);
CREATE TABLE leans(
  conversation TEXT COLLATE "C" NOT NULL, round INTEGER NOT NULL, part INTEGER NOT NULL,
  rule TEXT COLLATE "C" NOT NULL, rows BYTEA COMPRESSION lz4 NOT NULL, PRIMARY KEY(conversation, round, part));
"""),
    (2, """
CREATE TABLE tokens(
  name TEXT COLLATE "C" PRIMARY KEY, digest TEXT COLLATE "C" NOT NULL UNIQUE, readonly BOOLEAN NOT NULL,
  created TEXT COLLATE "C" NOT NULL, revoked TEXT COLLATE "C");
ALTER TABLE conversations ADD COLUMN machine TEXT COLLATE "C";
CREATE TABLE pending(
  machine TEXT COLLATE "C" NOT NULL, conversation TEXT COLLATE "C" NOT NULL, head TEXT COLLATE "C" NOT NULL,
  part INTEGER NOT NULL, body BYTEA NOT NULL, PRIMARY KEY(machine, conversation, head, part));
"""),
    (3, """
ALTER TABLE conversations ADD COLUMN rowid BIGSERIAL NOT NULL;
"""),
)
"""The schema, version by version: a store is brought from the version it holds to the last one,
each step in the transaction that records it (a store an older asz made gains what it lacks;
the records it holds stay as they are). Version 2 added what ``asz server`` keeps: the machines'
tokens, which machine pushed a conversation first (None: collected into this store), and the parts
of a pushed round not landed yet. Version 3 numbered the conversations in the order they were made
(``rowid``, as SQLite's: the order they are listed in; a store's earlier ones numbered in the order
PostgreSQL holds them)."""
SCHEMA_VERSION = MIGRATIONS[-1][0]

_LOCK_COLLECT = 0x61737A00
"""The advisory lock a collect takes for its whole transaction (one writer at a time, as SQLite's
``BEGIN IMMEDIATE``); a pushed round takes it shared, with its conversation's own lock."""
_LOCK_SCHEMA = 0x61737A01
"""Held while the schema is made or migrated: two asz opening a new store at once make it once."""

_RULES = (
    (re.compile(r"\?"), "%s"),
    (re.compile(r"\bINSERT OR IGNORE INTO (.*)$", re.S), r"INSERT INTO \1 ON CONFLICT DO NOTHING"),
)
_TRANSLATED: dict[str, str] = {}


def pg_sql(sql: str) -> str:
    """The SQLite store's query in PostgreSQL's words: ``?`` marks as ``%s``, ``INSERT OR IGNORE``
    as ``ON CONFLICT DO NOTHING``. (The ``rowid`` of ``sessions`` and ``calls`` is a column of its
    own here, and ``length`` of a blob is its bytes in both.) The queries hold no ``%`` and no
    ``?`` inside a string."""
    got = _TRANSLATED.get(sql)
    if got is None:
        got = sql
        for pattern, repl in _RULES:
            got = pattern.sub(repl, got)
        _TRANSLATED[sql] = got
    return got


class PgConnection:
    """What the store's code asks of a sqlite3 connection, over one psycopg connection in
    autocommit (each statement its own snapshot; a transaction is opened by ``BEGIN``, as in the
    SQLite store, whose connection has ``isolation_level=None``)."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn

    def execute(self, sql: str, args: Any = None) -> psycopg.Cursor[Any]:
        return self.conn.execute(pg_sql(sql), args if args else None)

    def executemany(self, sql: str, rows: Any) -> None:
        with self.conn.cursor() as cur:
            cur.executemany(pg_sql(sql), rows)

    @property
    def in_transaction(self) -> bool:
        return self.conn.info.transaction_status != pq.TransactionStatus.IDLE

    def close(self) -> None:
        self.conn.close()


def connect(url: str) -> psycopg.Connection[Any]:
    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=10, application_name="asz")
    except psycopg.Error as exc:
        raise StoreError(f"cannot reach the store {_redacted(url)} ({_first_line(exc)}): check that PostgreSQL runs "
                         "there and the database exists") from None


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


class PgStore(Store):
    """The store in a PostgreSQL database. Open it with :meth:`Store.open` (``ASZ_STORE`` or
    ``store:``) or directly with its URL."""

    Error = psycopg.Error
    _SAVE_FILE = ('INSERT INTO files VALUES(?,?,?,?,?,?,?,?) ON CONFLICT (path) DO UPDATE SET runtime = excluded.runtime, '
                  'size = excluded.size, mtime_ns = excluded.mtime_ns, "offset" = excluded."offset", '
                  'line = excluded.line, tail = excluded.tail, state = excluded.state')

    def __init__(self, url: str, *, migrate_to: int = SCHEMA_VERSION) -> None:  # noqa: D107
        self.url = url
        self.label = _redacted(url)
        # Its caches (assembled conversations, the ledger's summaries) are kept under ASZ_HOME,
        # apart from the SQLite store's and any other database's.
        self.path = asz_home() / "stores" / f"pg-{hashlib.sha256(self.label.encode()).hexdigest()[:16]}" / "asz.db"
        self.wal = True  # (what the SQLite store's writer asks: no first-collect journal here)
        self.db = PgConnection(connect(url))  # type: ignore[assignment]
        try:
            self._migrate(migrate_to)
        except BaseException:
            self.db.close()
            raise

    def _migrate(self, target: int) -> None:
        """Bring the store's schema to ``target`` (the last version), step by step; refuse a store
        of a later version than this asz knows, leaving it as it is."""
        have = self._version()
        if have == target:
            return
        if have > SCHEMA_VERSION:
            raise StoreError(f"{self.label} has store schema {have}; this asz reads up to {SCHEMA_VERSION} "
                             "(upgrade asz to read it)")
        try:
            with self.db.conn.transaction():
                self.db.conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_SCHEMA,))
                have = self._version()  # another asz may have migrated it meanwhile
                for version, sql in MIGRATIONS:
                    if have < version <= target:
                        self.db.conn.execute(sql)
                        self.db.conn.execute("INSERT INTO meta VALUES('schema', %s) ON CONFLICT (key) DO UPDATE "
                                             "SET value = excluded.value", (str(version),))
        except psycopg.Error as exc:
            raise StoreError(f"cannot make the store's tables in {self.label} ({_first_line(exc)})") from None

    def _version(self) -> int:
        """The schema version the database holds (0: none of asz's tables)."""
        try:
            # (pg_tables read as a table, with this statement's snapshot: to_regclass answers from a
            # cache that may not have seen another asz's tables made while this one waited for the lock)
            if self.db.conn.execute("SELECT 1 FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'meta'"
                                    ).fetchone() is None:
                return 0
            row = self.db.conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        except psycopg.Error as exc:
            raise StoreError(f"cannot read the store {self.label} ({_first_line(exc)})") from None
        if row is None:
            return 0
        try:
            return int(row[0])
        except ValueError:
            raise StoreError(f"{self.label} has store schema {row[0]!r}; this asz reads {SCHEMA_VERSION}") from None

    def late_indexes(self) -> bool:
        return False  # (dropping an index would lock out every reader of a shared store)

    @property
    def runs_home(self) -> Path:
        return self.path.parents[2]  # (ASZ_HOME: the caches are under ASZ_HOME/stores/<this store>/)

    def reader(self) -> PgStore:
        """Another connection to this store (a forked child's: a connection is never used across a fork)."""
        return PgStore(self.url)

    def readonly(self) -> PgStore:
        return self  # (a psycopg connection serializes the threads that share it)

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def writing(self) -> Iterator[Writer]:
        """One transaction, as in SQLite: a collect killed at any point leaves the store as before
        it or as after it (PostgreSQL rolls back a transaction whose connection is gone)."""
        try:
            self.db.execute("BEGIN")
            self.db.execute("SELECT pg_advisory_xact_lock(?)", (_LOCK_COLLECT,))
        except psycopg.Error as exc:
            raise StoreError(f"{self.label}: {_first_line(exc)}") from None
        try:
            w = PgWriter(self)
            yield w
            try:
                w.finish()
                self.db.execute("COMMIT")
            except psycopg.Error as exc:  # the store itself: nothing of this collect lands
                raise StoreError(f"{self.label}: {_first_line(exc)}") from exc
        except BaseException:
            if not self.db.conn.closed and self.db.in_transaction:
                try:
                    self.db.execute("ROLLBACK")
                except psycopg.Error:
                    pass  # a lost connection: the server rolled it back
            raise

    @contextmanager
    def transaction(self, *conversations: str) -> Iterator[PgConnection]:
        """A transaction that may write the given conversations' rounds: each locked (a second
        push of the same conversation waits for this one), and a collect excluded meanwhile."""
        with self.db.conn.transaction():
            self.db.execute("SELECT pg_advisory_xact_lock_shared(?)", (_LOCK_COLLECT,))
            for c in sorted(set(conversations)):  # (in one order: two transactions never wait on each other)
                self.db.execute("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", (c,))
            yield self.db


_COPY_RECORDS = ("COPY records(conversation, key, version, round, digest, stream, kind, file, line, ts, raw, events) "
                 "FROM STDIN (FORMAT BINARY)")
_RECORD_TYPES = ("text", "text", "int4", "int4", "bytea", "text", "text", "text", "int8", "text", "bytea", "bytea")


class PgWriter(Writer):
    """The SQLite store's writer, records written with ``COPY`` (several times faster than
    inserting them one by one over the wire). PostgreSQL's text cannot hold a NUL character: an
    entry whose key, stream, file or time holds one is skipped with a warning (the rest of its file
    lands), as an entry the store cannot hold is."""

    def add_prepared(self, conversation: str, p: Prepared) -> bool:
        if "\x00" in conversation or any("\x00" in x for x in (p[0], p[2], p[3], p[4], p[6] or "")):
            # skipped, said as collect says what it kept of a record written twice; the rest goes on
            self.notes.append(Problem(p[4].replace("\x00", "\\0"), p[5], "an entry whose key, stream, kind, file or "
                                      "time holds a NUL character, which PostgreSQL's text cannot hold; not stored"))
            return False
        return super().add_prepared(conversation, p)

    def conversations_of_keys(self, keys: list[str], runtime: str | None = None) -> dict[str, str]:
        return super().conversations_of_keys([k for k in keys if "\x00" not in k], runtime)  # (no stored key holds one)

    def conversation_of_session(self, session: str) -> str | None:
        return None if "\x00" in session else super().conversation_of_session(session)

    def bind_session(self, session: str, conversation: str | None, runtime: str) -> str:
        if "\x00" in session or "\x00" in runtime:
            raise RecordError("a session id holding a NUL character; not stored")
        return super().bind_session(session, conversation, runtime)

    def _flush(self) -> None:
        if self._rows:
            with self.db.conn.cursor() as cur, cur.copy(_COPY_RECORDS) as copy:  # type: ignore[attr-defined]
                copy.set_types(_RECORD_TYPES)
                for row in self._rows:
                    copy.write_row(row)
            self._rows.clear()
            self._bytes = 0
        super()._flush()


__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "PgStore", "PgWriter", "pg_sql"]
