"""The embedded store: one SQLite file under ASZ_HOME with conversations, rounds and records.

Records are append-only and each names the round it landed in. A round has a number, its
parent's head, the time it landed and a head digest
``sha256(parent_head + digests of the records it added, in order)``. A view at a round sees only
records of rounds up to it. Everything the judge reads goes through :class:`Store`, so a team
backend (PostgreSQL) can stand behind the same methods later.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import re
import sqlite3
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
import orjson

from .digits import whole
from .errors import NotFound, RecordError, StoreError
from .lean_events import RULE as LEAN_RULE
from .lean_events import lean as lean_events
from .records import Cursor, Entry, Problem
from .regular import open_regular, read_regular
from .writeback import Writeback

SCHEMA_VERSION = 2
"""Bumped on any change of the tables below that another version would misread. (``leans``, added
since, is not such a change: a store without it, or with rounds some asz wrote without it, is read
from its records as before.)"""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS conversations(
  id TEXT PRIMARY KEY, runtime TEXT NOT NULL, created TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sessions(
  session TEXT PRIMARY KEY, conversation TEXT NOT NULL REFERENCES conversations(id));
CREATE TABLE IF NOT EXISTS rounds(
  conversation TEXT NOT NULL, number INTEGER NOT NULL, parent TEXT NOT NULL, head TEXT NOT NULL,
  landed TEXT NOT NULL, records INTEGER NOT NULL, PRIMARY KEY(conversation, number));
CREATE TABLE IF NOT EXISTS records(
  seq INTEGER PRIMARY KEY, conversation TEXT NOT NULL, key TEXT NOT NULL, version INTEGER NOT NULL,
  round INTEGER NOT NULL, digest BLOB NOT NULL, stream TEXT NOT NULL, kind TEXT NOT NULL,
  file TEXT NOT NULL, line INTEGER NOT NULL, ts TEXT, raw BLOB NOT NULL, events BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS files(
  path TEXT PRIMARY KEY, runtime TEXT NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
  offset INTEGER NOT NULL, line INTEGER NOT NULL, tail BLOB NOT NULL, state BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS calls(
  call TEXT NOT NULL, conversation TEXT NOT NULL, UNIQUE(call, conversation));
CREATE TABLE IF NOT EXISTS leans(
  conversation TEXT NOT NULL, round INTEGER NOT NULL, part INTEGER NOT NULL, rule TEXT NOT NULL, rows BLOB NOT NULL,
  PRIMARY KEY(conversation, round, part));
"""

_LATE_INDEXES = {
    "records_key": "CREATE UNIQUE INDEX IF NOT EXISTS records_key ON records(key, conversation, version)",
    "records_round": "CREATE INDEX IF NOT EXISTS records_round ON records(conversation, round)",
    "calls_conversation": "CREATE INDEX IF NOT EXISTS calls_conversation ON calls(conversation)",
}
"""The indexes a store's first collect (its records table empty) builds once, after its records
are in: maintaining them row by row costs more. Every committed store has them."""
_SCHEMA += "".join(f"{sql};\n" for sql in _LATE_INDEXES.values())
_MAKE = f"BEGIN IMMEDIATE;\n{_SCHEMA}INSERT OR IGNORE INTO meta VALUES('schema', '{SCHEMA_VERSION}');\nCOMMIT;\n"
"""A store made (or what it lacks added) in one transaction; a second asz making it at the same
time waits, then finds it made."""
_MADE = frozenset(re.findall(r"CREATE (?:UNIQUE )?(?:TABLE|INDEX) IF NOT EXISTS (\w+)", _SCHEMA))
"""Every table and index :data:`_SCHEMA` makes (read from it, so a table added there is one a
store an earlier asz made is completed with)."""
_MADE_SQL = "SELECT name FROM sqlite_master WHERE type IN ('table', 'index')"

_SHARED: weakref.WeakKeyDictionary[Store, tuple[int, Store]] = weakref.WeakKeyDictionary()
_SHARED_LOCK = threading.Lock()

PAGE_SIZE = 16384
"""The page size of a new store (SQLite's default is 4096): a record is a few KiB, and larger
pages hold more of them with fewer overflow pages."""

TAIL_BYTES = 4096
"""A file read before is trusted to have grown (not been rewritten) when the last TAIL_BYTES it
had still stand where they stood."""


def asz_home() -> Path:
    return Path(os.environ.get("ASZ_HOME") or Path.home() / ".asz")


_BACKENDS = {
    "postgresql": "asz_core.store_pg:PgStore",
    "postgres": "asz_core.store_pg:PgStore",
    "http": "asz_core.server_store:ServerStore",
    "https": "asz_core.server_store:ServerStore",
}
"""The other stores, by their URL's scheme: each a subclass of :class:`Store` in a module of its
own, above this one (it imports this module; this one names it, and imports it only when a URL
asks for it: psycopg and HTTP are no cost to the SQLite store)."""

_STORE_LINE = re.compile(rb"^store[ \t]*:", re.M)


def store_url() -> str | None:
    """Where the store is when it is not the embedded SQLite file: ``ASZ_STORE``, else the
    ``store:`` of ``asz.yaml`` (in the working folder once trusted, else in ASZ_HOME, as the judge's
    configuration is found: :mod:`.config_trust`). A ``postgresql://`` URL is a PostgreSQL store (:mod:`.store_pg`); an
    ``http(s)://`` URL an ``asz server`` read through (``--server``). None: the SQLite file."""
    url = os.environ.get("ASZ_STORE")
    if url is None:
        from .config_trust import config_file

        f = config_file()  # ./asz.yaml once trusted (it could send every conversation elsewhere), else ASZ_HOME's
        try:
            text = read_regular(f, at_most=16 << 20) if f is not None else None
        except OSError:
            text = None
        if text is not None and f is not None:
            # (ruamel.yaml is imported only for a file that names a store: most do not, and
            # the commands programs run often start faster without it)
            url = _yaml_store(f, text) if _STORE_LINE.search(text) else None
    url = (url or "").strip()
    if not url:
        return None
    if url.split("://", 1)[0] not in _BACKENDS:
        raise StoreError(f"store {_redacted(url)!r} is not a postgresql:// or http(s):// URL (the default store, "
                         "$ASZ_HOME/asz.db, needs no setting)")
    return url


def store_there(home: Path | None = None) -> bool:
    """Whether there is a store to read: a configured one, or the SQLite file (a read never
    makes the file only to find it empty)."""
    return (home is None and store_url() is not None) or ((home or asz_home()) / "asz.db").is_file()


def _yaml_store(path: Path, text: bytes) -> str | None:
    from ruamel.yaml import YAML, YAMLError

    try:
        data = YAML(typ="safe").load(text)
    except YAMLError as exc:
        raise StoreError(f"{path}: not YAML ({str(exc).splitlines()[0]})") from None
    value = data.get("store") if isinstance(data, dict) else None
    if value is not None and not isinstance(value, str):
        raise StoreError(f"{path}: store: give a postgresql:// URL")
    return value


def _redacted(url: str) -> str:
    """A store URL as it may be shown: without its password."""
    return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", url)


@attrs.frozen
class Round:
    conversation: str
    number: int
    parent: str
    head: str
    landed: str
    records: int


@attrs.frozen
class ConversationRow:
    id: str
    runtime: str
    created: str
    head: Round | None
    sessions: tuple[str, ...]


@attrs.frozen(slots=True)
class StoredRecord:
    seq: int
    key: str
    version: int
    round: int
    stream: str
    kind: str
    file: str
    line: int
    ts: str | None
    events: tuple[dict[str, Any], ...]


@attrs.define
class FileState:
    path: str
    runtime: str
    size: int
    mtime_ns: int
    cursor: Cursor
    tail: bytes


FileStats = dict[str, tuple[str, int, int, int]]
"""path -> (runtime, size, mtime_ns, offset): :meth:`Store.file_stats`."""


class Store:
    """One SQLite file. Use :meth:`open`; write only inside :meth:`writing`.

    The PostgreSQL store (:mod:`.store_pg`) is this class over another connection: the queries
    below are written once, in the SQL both understand (``?`` marks, ``INSERT OR IGNORE``, the
    ``rowid`` of ``sessions`` and ``calls``), which its connection translates; only opening,
    transactions and what SQLite alone does (pages, journals, late indexes) differ."""

    Error: type[Exception] = sqlite3.Error
    """What the connection raises when the store itself fails (a full disk, a lost server)."""
    _SAVE_FILE = "INSERT OR REPLACE INTO files VALUES(?,?,?,?,?,?,?,?)"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.label = str(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot make the asz home {path.parent} ({exc.strerror or exc}): set ASZ_HOME to a "
                             "folder you can write") from None
        try:
            self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self.db.execute("PRAGMA foreign_keys=ON")
            # A new store's first collect writes everything it will hold at once: larger pages
            # (fewer, fuller ones) and a rollback journal (which for a new file holds nearly
            # nothing) write it once; WAL would write every page twice. WAL from then on. The page
            # size is set before anything is read: it takes effect only on a file with no page yet
            # (a new one, or one whose making was killed and is rolled back), and asked first, the
            # page count made SQLite keep 6 MB more through the first collect.
            self.db.execute(f"PRAGMA page_size={PAGE_SIZE}")
            self.wal = self.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            # With a rollback journal only FULL keeps a commit whole through a power loss (it costs
            # one more sync of the journal, which holds next to nothing); WAL's NORMAL keeps a
            # commit whole, the last one may be lost to a power cut.
            self.db.execute(f"PRAGMA synchronous={'NORMAL' if self.wal else 'FULL'}")
            row = self._schema()
            if row is None:  # a new store, one an asz killed while it made it tables by table, or one an asz made before a table was added
                self._make()
                row = self._schema()
            if row is not None and str(row[0]) == str(SCHEMA_VERSION):
                self._settle()
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise StoreError(f"{path} is busy ({exc}): another asz is writing to it; try again") from exc
            # the file or its folder, not its content
            raise StoreError(f"cannot open the store {path} ({exc}): check that {path.parent} can be read and "
                             "written, or set ASZ_HOME") from None
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{path} is not an asz store ({exc})") from exc
        if row is None or str(row[0]) != str(SCHEMA_VERSION):
            got = row[0] if row else "none"
            raise StoreError(f"{path} has store schema {got}; this asz reads {SCHEMA_VERSION} "
                             "(move it aside and collect again: the store is built from the transcripts)")

    def _schema(self) -> tuple[str] | None:
        """The schema version the store holds, or None when it lacks it or, being of this
        version, any table or index. Another version's store is given as it is: refused, not
        added to."""
        names = {r[0] for r in self.db.execute(_MADE_SQL)}
        row = self.db.execute("SELECT value FROM meta WHERE key='schema'").fetchone() if "meta" in names else None
        if row is not None and str(row[0]) != str(SCHEMA_VERSION):
            return row  # type: ignore[no-any-return]
        return None if _MADE - names else row

    def _make(self) -> None:
        """The tables and indexes a store lacks (all of them, for a new one) and its schema version,
        in one transaction: a few syncs rather than some for each table, and a store killed while
        it is made is, at its next open, as it was before (a new one: empty)."""
        try:
            self.db.executescript(_MAKE)
        except BaseException:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise

    @property
    def runs_home(self) -> Path:
        """The asz home a judge run of this store is written under (``runs/``): the SQLite file's
        folder; for a store elsewhere (PostgreSQL, a server), ASZ_HOME."""
        return self.path.parent

    def late_indexes(self) -> bool:
        """Whether a collect starting now builds the records' indexes once at its end (a store's
        first collect, its records table empty) rather than keep them up row by row."""
        return self.db.execute("SELECT 1 FROM records LIMIT 1").fetchone() is None

    def _settle(self) -> None:
        """WAL for good once the store holds records: until its first collect has written them,
        it keeps the rollback journal (a read command that made the store before any collect
        does not take that from the first collect)."""
        if not self.wal and self.db.execute("SELECT 1 FROM records LIMIT 1").fetchone() is not None:
            self._to_wal()

    def reader(self) -> Store:
        """Another connection to this store, to read with (a forked child's: a connection is
        never used across a fork)."""
        return self._over(sqlite3.connect(self.path, isolation_level=None, check_same_thread=False))

    def _over(self, db: sqlite3.Connection) -> Store:
        other = Store.__new__(Store)
        other.path, other.label, other.wal, other.db = self.path, self.label, self.wal, db
        return other

    def readonly(self) -> Store:
        """This store through a connection of its own, opened read-only and set ``query_only``:
        one per store object and process, which every navigator of the store shares (sqlite3 is
        built serialized, so threads may share it). A connection per navigator left a file
        descriptor open for each while the store's own connection held its WAL lock (SQLite
        defers closing it then): a process that judged many runs, or one run of thousands of
        calls, ran out of them."""
        with _SHARED_LOCK:
            got = _SHARED.get(self)
            if got is None or got[0] != os.getpid():  # a forked child never uses its parent's
                if self.path.is_file():
                    db = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)
                else:  # pragma: no cover - an in-memory store
                    db = self.db
                db.execute("PRAGMA query_only=ON")
                got = _SHARED[self] = (os.getpid(), self._over(db))
            return got[1]

    def _to_wal(self) -> None:
        """WAL (readers never wait for a writer), once the store holds what its first collect wrote."""
        try:
            self.wal = self.db.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
        except sqlite3.OperationalError:
            return  # another connection holds it: the next open switches
        if self.wal:
            self.db.execute("PRAGMA synchronous=NORMAL")  # WAL's: a commit is whole, the last may be lost to a power cut

    @classmethod
    def open(cls, home: Path | None = None) -> Store:
        """The store asz reads and writes: the SQLite file under ``home`` (given) or ASZ_HOME,
        unless ``store:``/``ASZ_STORE`` names another (:func:`store_url`)."""
        url = None if home is not None else store_url()
        if url is None:
            return cls((home or asz_home()) / "asz.db")
        module, _, name = _BACKENDS[url.split("://", 1)[0]].partition(":")
        return getattr(importlib.import_module(module), name)(url)  # type: ignore[no-any-return]

    def close(self) -> None:
        self.db.close()

    # -- reading --------------------------------------------------------------------------
    def conversations(self) -> list[ConversationRow]:
        heads = {r.conversation: r for r in self._rounds("WHERE number = (SELECT MAX(number) FROM rounds r2 WHERE r2.conversation = rounds.conversation)")}
        sessions: dict[str, list[str]] = {}
        for s, c in self.db.execute("SELECT session, conversation FROM sessions ORDER BY rowid"):
            sessions.setdefault(c, []).append(s)
        return [
            ConversationRow(cid, rt, created, heads.get(cid), tuple(sessions.get(cid, ())))
            # in the order collect made them (rowid: a total key; "created" ties within a millisecond)
            for cid, rt, created in self.db.execute("SELECT id, runtime, created FROM conversations ORDER BY rowid")
        ]

    def resolve(self, name: str) -> str:
        """A conversation id from its whole id, a session id it holds, or a prefix of either that
        names one conversation (a resumed conversation's sessions all name it)."""
        if not name:
            raise NotFound("give a conversation id (or a prefix of it, or a session id); `asz conversations` lists them")
        row = self.db.execute("SELECT id FROM conversations WHERE id = ? UNION ALL "
                              "SELECT conversation FROM sessions WHERE session = ?", (name, name)).fetchone()
        if row:
            return row[0]
        span = (name, name + "\uffff")
        ids = sorted({r[0] for r in self.db.execute(
            "SELECT id FROM conversations WHERE id >= ? AND id < ? UNION "
            "SELECT conversation FROM sessions WHERE session >= ? AND session < ?", span + span)})
        if len(ids) == 1:
            return ids[0]
        if not ids:
            if self.db.execute("SELECT 1 FROM conversations LIMIT 1").fetchone() is None:
                raise NotFound(f"no conversation {name!r}: nothing collected yet in {self.label}; run `asz collect` "
                               "(with no path it reads each runtime's own folders; `asz collect -h` names them)")
            raise NotFound(f"no conversation {name!r} in {self.label}; `asz conversations` lists them")
        shown = ", ".join(i[:12] for i in ids[:5]) + (", …" if len(ids) > 5 else "")
        raise NotFound(f"{name!r} names {len(ids)} conversations ({shown}); give more of the id")

    def runtime_of(self, conversation: str) -> str:
        row = self.db.execute("SELECT runtime FROM conversations WHERE id = ?", (conversation,)).fetchone()
        if not row:
            raise NotFound(f"no conversation {conversation!r}")
        return row[0]

    def rounds(self, conversation: str) -> list[Round]:
        return self._rounds("WHERE conversation = ? ORDER BY number", (conversation,))

    def round(self, conversation: str, head: str | int | None = None) -> Round:
        """The round a view is pinned to: the newest, or one named by number (3, "r3") or head digest prefix."""
        rounds = self.rounds(conversation)
        if not rounds:
            raise NotFound(f"conversation {conversation!r} has no rounds")
        if head is None:
            return rounds[-1]
        h = str(head)
        number = h[1:] if h[:1] == "r" else h
        n = whole(number)
        if n is not None:  # a round number (3, "r3") first; digits alone may also start a digest
            for r in rounds:
                if r.number == n:
                    return r
        if h[:1] != "r" and h:
            found = [r for r in rounds if r.head.startswith(h.lower())]
            if len(found) == 1:
                return found[0]
            if found:
                raise NotFound(f"{h!r} starts the heads of {len(found)} rounds of conversation {conversation[:8]} "
                               f"({', '.join(f'r{r.number}' for r in found[:5])}); give more of the digest")
        raise NotFound(f"conversation {conversation[:8]} has no round {h!r} (rounds r1…r{rounds[-1].number})")

    def records(self, conversation: str, upto: int, *, lean: bool = False, cut: int | None = None) -> list[StoredRecord]:
        """Every record landed by round ``upto``, in landing order; a rewritten record shows its
        newest version landed by then, in the place its first version took. ``lean``: each as
        the row ``(seq, key, stream, ts, events)`` (``assembly.RecordRow``; a list as decoded), all the ledger's
        summaries read: the events as ``lean_events.lean`` keeps them, and ``seq`` the record's
        place in landing order (1, 2, ...), read from the few rows of ``leans`` collect wrote; from
        the records themselves (their whole events, their own ``seq``) when ``leans`` does not hold
        every round by then as this asz's rule keeps them. ``cut``: only the records landed by
        that record seq (a window's view), each in the newest version landed by both."""
        out: list[StoredRecord] = []
        where: dict[str, int] = {}
        loads = orjson.loads
        if lean and cut is None:
            rows: Any = []
            parts = self.db.execute("SELECT round, rows FROM leans WHERE conversation = ? AND round <= ? AND rule = ? "
                                    "ORDER BY round, part", (conversation, upto, LEAN_RULE)).fetchall()
            if parts and len({r for r, _ in parts}) == upto:  # rounds are numbered 1, 2, ...: every one is there
                # Each row as decoded, its version made its place (a list: [seq, key, stream, ts,
                # events]); the places by key only once a later version of a record comes (rare).
                n = 0
                places: dict[str, int] | None = None
                for _, blob in parts:
                    for row in loads(blob):
                        n += 1
                        if row[0] > 1:
                            if places is None:
                                places = {r[1]: i for i, r in enumerate(rows)}
                            i = places.get(row[1])
                            if i is not None:
                                rows[i] = [rows[i][0], *row[1:5]]
                                continue
                        row[0] = n
                        if places is not None:
                            places[row[1]] = len(rows)
                        rows.append(row)
                return rows  # type: ignore[no-any-return]
            q = "SELECT seq, key, version, stream, ts, events FROM records WHERE conversation = ? AND round <= ? ORDER BY seq"
            for seq, key, version, stream, ts, events in self.db.execute(q, (conversation, upto)):
                row = (seq, key, stream, ts, tuple(loads(events)))
                if version > 1 and key in where:
                    rows[where[key]] = (rows[where[key]][0], *row[1:])
                else:
                    where[key] = len(rows)
                    rows.append(row)
            return rows  # type: ignore[no-any-return]
        q = ("SELECT seq, key, version, round, stream, kind, file, line, ts, events FROM records "
             "WHERE conversation = ? AND round <= ?" + (" AND seq <= ?" if cut is not None else "") + " ORDER BY seq")
        args = (conversation, upto) if cut is None else (conversation, upto, cut)
        for seq, key, version, rnd, stream, kind, file, line, ts, events in self.db.execute(q, args):
            rec = StoredRecord(seq, key, version, rnd, stream, kind, file, line, ts, tuple(loads(events)))
            if version > 1 and key in where:
                out[where[key]] = attrs.evolve(rec, seq=out[where[key]].seq)
            else:
                where[key] = len(out)
                out.append(rec)
        return out

    def copied_calls(self, conversation: str) -> dict[str, str]:
        """The calls of ``conversation`` that another conversation landed first (a branched or
        copied session holds copies of its origin's calls): call id -> that conversation. Only
        calls whose id names the response wherever it is recorded (a ``call`` event marked
        ``global``) are compared across conversations."""
        q = ("SELECT m.call, o.conversation FROM calls m JOIN calls o ON o.call = m.call AND o.rowid < m.rowid "
             "WHERE m.conversation = ? ORDER BY o.rowid DESC")
        return dict(self.db.execute(q, (conversation,)).fetchall())  # the earliest holder is written last

    def raw(self, conversation: str, seq: int, upto: int | None = None) -> bytes:
        """The bytes of record ``seq`` as written. With ``upto``, the bytes the view at round ``upto``
        sees: its newest version landed by then (a :class:`StoredRecord` from :meth:`records` keeps
        its first version's ``seq``, its stable id, while showing the newest version)."""
        row = self.db.execute("SELECT key, raw FROM records WHERE conversation = ? AND seq = ?", (conversation, seq)).fetchone()
        if not row:
            raise NotFound(f"no record {seq} in {conversation}")
        if upto is None:
            return row[1]
        newest = self.db.execute(
            "SELECT raw FROM records WHERE conversation = ? AND key = ? AND round <= ? ORDER BY version DESC LIMIT 1",
            (conversation, row[0], upto),
        ).fetchone()
        if not newest:
            raise NotFound(f"record {seq} of {conversation} landed after round {upto}")
        return newest[0]

    def placed(self, conversation: str, seq: int) -> tuple[str, int, int] | None:
        """Record ``seq``'s key, version and round, or None when the conversation has no such record."""
        row = self.db.execute("SELECT key, version, round FROM records WHERE seq = ? AND conversation = ?",
                              (seq, conversation)).fetchone()
        return (row[0], row[1], row[2]) if row else None

    def newest_raw(self, conversation: str, key: str, upto: int, cut: int) -> bytes | None:
        """The bytes of record ``key``'s newest version landed by round ``upto`` and by seq ``cut``."""
        # (by the key index; ``+`` keeps SQLite's planner off the round index)
        row = self.db.execute(
            "SELECT raw FROM records WHERE key = ? AND conversation = ? AND +round <= ? AND +seq <= ? "
            "ORDER BY version DESC LIMIT 1", (key, conversation, upto, cut)).fetchone()
        return bytes(row[0]) if row else None

    def last_seq(self, conversation: str, upto: int) -> int:
        """The seq of the last row landed by round ``upto``, every version counted (0: none)."""
        row = self.db.execute("SELECT max(seq) FROM records WHERE conversation = ? AND round <= ?",
                              (conversation, upto)).fetchone()
        return row[0] or 0

    def has_versions(self, conversation: str, upto: int) -> bool:
        """Whether a record of the view at round ``upto`` has a later version landed by then."""
        return self.db.execute("SELECT 1 FROM records WHERE conversation = ? AND round <= ? AND version > 1 LIMIT 1",
                               (conversation, upto)).fetchone() is not None

    def count_after(self, conversation: str, upto: int, cut: int) -> int:
        """How many records of the view at round ``upto`` first landed after seq ``cut``."""
        row = self.db.execute("SELECT count(*) FROM records WHERE conversation = ? AND round <= ? AND seq > ? "
                              "AND version = 1", (conversation, upto, cut)).fetchone()
        return int(row[0])

    def round_records(self, conversation: str, number: int) -> Iterator[tuple[str, str, str, str, int, str | None, bytes, bytes]]:
        """What round ``number`` added, in landing order, every version as it landed: ``(key,
        stream, kind, file, line, ts, raw, events as JSON)`` (what ``asz push`` sends; the head
        digest is computed from these raws)."""
        q = ("SELECT key, stream, kind, file, line, ts, raw, events FROM records WHERE conversation = ? AND round = ? "
             "ORDER BY seq")
        for key, stream, kind, file, line, ts, raw, events in self.db.execute(q, (conversation, number)):
            yield key, stream, kind, file, line, ts, bytes(raw), bytes(events)

    def _rounds(self, where: str, args: tuple[Any, ...] = ()) -> list[Round]:
        q = f"SELECT conversation, number, parent, head, landed, records FROM rounds {where}"
        return [Round(*r) for r in self.db.execute(q, args)]

    # -- writing --------------------------------------------------------------------------
    @contextmanager
    def writing(self) -> Iterator[Writer]:
        """One transaction: a collect killed at any point leaves the store as before it or as after it."""
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:  # another writer held the lock past the busy timeout
            raise StoreError(f"{self.path} is busy ({exc}): another asz is writing to it; try again") from exc
        try:
            w = Writer(self)
            try:
                yield w
                try:
                    w.finish()
                    self.db.execute("COMMIT")
                except sqlite3.Error as exc:  # the store itself (a full disk): nothing of this collect lands
                    raise StoreError(f"{self.path}: {exc}") from exc
            finally:
                w.release()  # (a failed collect too: the connection outlives it)
        except BaseException:
            if self.db.in_transaction:  # (a failed commit may have rolled back already)
                self.db.execute("ROLLBACK")
            raise
        self._settle()

    def file_stats(self) -> FileStats:
        """Every file's state as the unchanged ones need it: path -> (runtime, size, mtime_ns,
        offset). One query, neither tails nor cursor states (4 KiB and more each)."""
        return {row[0]: row[1:] for row in self.db.execute('SELECT path, runtime, size, mtime_ns, "offset" FROM files')}

    def file_state(self, path: str) -> FileState | None:
        row = self.db.execute('SELECT runtime, size, mtime_ns, "offset", line, tail, state FROM files WHERE path = ?', (path,)).fetchone()
        if not row:
            return None
        runtime, size, mtime, offset, line, tail, state = row
        return FileState(path, runtime, size, mtime, Cursor(offset, line, orjson.loads(state)), tail)


_INSERT_RECORD = ("INSERT INTO records(conversation, key, version, round, digest, stream, kind, file, line, ts, raw, events) "
                  "VALUES(?,?,?,?,?,?,?,?,?,?,?,?)")
_INSERT_CALL = "INSERT OR IGNORE INTO calls(call, conversation) VALUES(?, ?)"
_WRITEBACK_BYTES = 16 << 20
"""A store's first collect (a rollback journal, its commit synced in full) has the system start
writing the file to disk each time it has written this many bytes more (:mod:`.writeback`):
its commit then waits for the last of them only (measured on 95 MB: 0.10 s -> 0.02 s)."""
_BATCH = 512
_BATCH_BYTES = 256 * 1024
"""Records are written 512 at a time, or sooner once they hold this many bytes (a batch of big
records is memory the collect does not need to hold)."""
_LIVE_CACHE_KIB = -4096
"""SQLite's page cache (negative: KiB) while a first collect keeps its indexes up as it goes."""
LIVE_INDEX_MAX_BYTES = 120_000_000
"""The most a first collect reads and still keeps its indexes up as it goes: their pages (about 3 MB
for 95 MB of transcripts) must stay in the 4 MiB cache. Past it, each row's index entries land on
pages read back from disk: on 1 GB, 4 s more system time and 1.5x the wall time of building the
indexes once at the end (0.7 s)."""
_INSERT_LEAN = "INSERT INTO leans(conversation, round, part, rule, rows) VALUES(?,?,?,?,?)"
_LEAN_BYTES = 1 << 16
"""The lean events of the open rounds are written as a part of each once they hold this many bytes
(held longer, 1 MiB of them added 0.8 MB to a first collect's peak RSS on the 95 MB folder; this adds none)."""


class Writer:
    """Appends records as rounds, inside :meth:`Store.writing`."""

    def __init__(self, store: Store) -> None:
        self.store, self.db = store, store.db
        self._open: dict[str, _OpenRound] = {}
        self._sessions: dict[str, str] = {}
        self._rows: list[tuple[Any, ...]] = []  # records written in batches (executemany)
        self._bytes = 0
        self._writeback = None if store.wal else Writeback(store.path)
        self._unpushed = 0  # bytes of records written since the last writeback push
        self._calls: list[tuple[str, str]] = []  # first landings of global call ids, in landing order
        self._lean_bytes = 0  # of the open rounds' lean rows not written yet
        self.notes: list[Problem] = []
        """Records written twice in one file with other content (``Entry.repeat``): what was
        kept. Collect passes them on as warnings."""
        self._runtimes: dict[str, str] = {}  # conversation -> its runtime, as looked up or made
        # A first collect (no record stored yet) builds the records' indexes once, at its end
        # (:meth:`finish`), and answers what it asks of records from what it wrote: ``_holders``,
        # each key's first conversation; ``_more``, the later ones of a key held by several.
        self._late = store.late_indexes()
        self._holders: dict[str, str] = {}
        self._more: dict[str, list[str]] = {}
        self._unindexed = self._late  # the late indexes dropped, to be built (by _index, or index_as_it_goes)
        self._cache_before: int | None = None  # the page cache's size before index_as_it_goes made it larger
        if self._late:
            for name in _LATE_INDEXES:
                self.db.execute(f"DROP INDEX IF EXISTS {name}")

    def index_as_it_goes(self) -> None:
        """Keep the records' indexes up row by row from now on rather than build them at the end:
        for a first collect whose records come from a reader process, which this process waits on
        for about a third of the time while a CPU is free. Kept up while it waits, the indexes cost
        no wall time at the end (on 95 MB, 0.06 s of building, serial, after the last record); row
        by row they cost about 0.03 s more CPU than one build, so not on a machine without that
        free CPU. Meanwhile SQLite's page cache is 4 MiB rather than 2, which keeps the index
        pages (about 3 MB on 95 MB) in memory while rows go in: 0.03 s less of each, wall and CPU,
        for 2 MB more peak memory (at the end, where the indexes are built once, it gains nothing)."""
        if not self._unindexed:
            return  # a later collect: its indexes are kept up anyway, and the larger cache buys nothing
        if self._cache_before is None:
            self._cache_before = self.db.execute("PRAGMA cache_size").fetchone()[0]
            self.db.execute(f"PRAGMA cache_size={_LIVE_CACHE_KIB}")
        self._flush()
        self._build_late_indexes()  # (over the records so far: none, when called first)

    def finish(self) -> None:
        """Before the commit: the indexes a first collect left to its end."""
        self._index()

    def release(self) -> None:
        """The connection's page cache as it was before :meth:`index_as_it_goes`, whether the
        collect landed or not."""
        if self._cache_before is not None:
            self.db.execute(f"PRAGMA cache_size={int(self._cache_before)}")
            self._cache_before = None

    def _index(self) -> None:
        """The batched records written and the late indexes built, if not yet (before anything asks
        the records table what memory does not answer)."""
        self._flush()
        if self._unindexed:
            self._build_late_indexes()
        if self._late:
            self._late = False
            self._holders.clear()
            self._more.clear()

    def _build_late_indexes(self) -> None:
        # (Not through a memory map: 0.015 s less CPU, but every page of the store counted in
        # collect's peak memory, 168 MB instead of 46 on 95 MB.)
        for sql in _LATE_INDEXES.values():
            self.db.execute(sql)
        self._unindexed = False

    def _flush(self) -> None:
        """Write the batched records; done before anything reads the records table."""
        if self._rows:
            self.db.executemany(_INSERT_RECORD, self._rows)
            self._rows.clear()
            if self._writeback is not None:
                self._unpushed += self._bytes
                if self._unpushed >= _WRITEBACK_BYTES:
                    self._writeback.push()
                    self._unpushed = 0
            self._bytes = 0
        if self._calls:
            # In landing order, so the calls table's rowid says which conversation landed a call first.
            self.db.executemany(_INSERT_CALL, self._calls)
            self._calls.clear()

    def conversation_of_session(self, session: str) -> str | None:
        if session in self._sessions:
            return self._sessions[session]
        row = self.db.execute("SELECT conversation FROM sessions WHERE session = ?", (session,)).fetchone()
        if row:
            self._sessions[session] = row[0]
        return row[0] if row else None

    def conversation_of_key(self, key: str, runtime: str | None = None) -> str | None:
        """The conversation holding a record with this key (of ``runtime``'s conversations only, if given)."""
        return self.conversations_of_keys([key], runtime).get(key)

    def conversations_of_keys(self, keys: list[str], runtime: str | None = None) -> dict[str, str]:
        """Of ``keys``, those a stored record has, each with the conversation holding it (of
        ``runtime``'s conversations only, if given)."""
        out: dict[str, str] = {}
        if self._late:  # every record is one this collect wrote
            for key in keys:
                first = self._holders.get(key)
                if first is not None and key not in out:
                    for conv in (first, *self._more.get(key, ())):
                        if runtime is None or self._runtime_of(conv) == runtime:
                            out[key] = conv
                            break
            return out
        self._flush()
        want = list(dict.fromkeys(keys))
        for i in range(0, len(want), 500):  # SQLite's limit on a statement's parameters
            part = want[i:i + 500]
            marks = ",".join("?" * len(part))
            if runtime is None:
                q = f"SELECT key, conversation FROM records WHERE key IN ({marks}) ORDER BY seq"
                rows = self.db.execute(q, part)
            else:
                q = (f"SELECT r.key, r.conversation FROM records r JOIN conversations c ON c.id = r.conversation "
                     f"WHERE r.key IN ({marks}) AND c.runtime = ? ORDER BY r.seq")
                rows = self.db.execute(q, (*part, runtime))
            for key, conv in rows:
                out.setdefault(key, conv)
        return out

    def bind_session(self, session: str, conversation: str | None, runtime: str) -> str:
        """Map a runtime session to a conversation: an existing one it continues, or a new one."""
        if conversation is None:
            conversation = session
            if self.db.execute("SELECT 1 FROM conversations WHERE id = ?", (conversation,)).fetchone() is None:
                self.db.execute("INSERT INTO conversations VALUES(?, ?, ?)", (conversation, runtime, _now()))
                self._runtimes[conversation] = runtime
        self.db.execute("INSERT OR IGNORE INTO sessions VALUES(?, ?)", (session, conversation))
        self._sessions[session] = conversation
        return conversation

    def _runtime_of(self, conversation: str) -> str:
        rt = self._runtimes.get(conversation)
        if rt is None:
            row = self.db.execute("SELECT runtime FROM conversations WHERE id = ?", (conversation,)).fetchone()
            rt = self._runtimes[conversation] = row[0] if row else ""
        return rt

    def know(self, conversation: str, keys: list[str]) -> None:
        """Ask the store at once which of ``keys`` the conversation holds (and their newest
        version), for the entries about to be added to it: one query for a batch rather than one
        per entry (a day's growth of a stored conversation asks for every record it adds). What
        is found, or found missing, is what :meth:`add_prepared` would ask one key at a time."""
        rnd = self._open.get(conversation) or self._round(conversation)
        if rnd.number == 1:
            return  # a new conversation holds nothing yet: nothing to ask
        known = rnd.known
        want = [k for k in dict.fromkeys(keys) if k not in known]
        if not want:
            return
        self._index()
        found: dict[str, tuple[int, bytes]] = {}
        for i in range(0, len(want), 500):  # SQLite's limit on a statement's parameters
            part = want[i:i + 500]
            q = f"SELECT key, version, digest FROM records WHERE key IN ({','.join('?' * len(part))}) AND conversation = ?"
            for key, version, digest in self.db.execute(q, (*part, conversation)):
                have = found.get(key)
                if have is None or version > have[0]:
                    found[key] = (version, digest)
        for k in want:
            have = found.get(k)
            # (0, b""): not stored; (version, digest) as add_prepared reads it
            known[k] = (0, b"") if have is None else bytes(have[1]) if have[0] == 1 else (have[0], bytes(have[1]))

    def add(self, conversation: str, entry: Entry) -> bool:
        """Append one entry to the conversation's new round. False when it is already stored.

        An entry that cannot be stored raises before anything changes (a RecordError for a
        field of the wrong type), so the caller may go on with others."""
        return self.add_prepared(conversation, prepare(entry))

    def add_prepared(self, conversation: str, p: Prepared) -> bool:
        """:meth:`add` for an entry :func:`prepare` made ready (in this process or in collect's reader)."""
        key, _, stream, kind, file, line, ts, raw, events, digest, calls, flags, lean = p
        rnd = self._open.get(conversation) or self._round(conversation)
        have = rnd.known.get(key)
        if type(have) is bytes:
            have = (1, have)
        elif have is None and rnd.number == 1:
            have = (0, b"")  # a new conversation holds nothing yet: no need to ask
        if have is None:
            self._index()
            row = self.db.execute(
                "SELECT version, digest FROM records WHERE key = ? AND conversation = ? ORDER BY version DESC LIMIT 1",
                (key, conversation),
            ).fetchone()
            have = (row[0], row[1]) if row else (0, b"")
        version, old = have
        if version and old == digest:
            return False
        if version and not flags & VERSIONED and not (flags & REPEAT and self._rewritten(conversation, p)):
            return False  # the same record again (a resume's copy, a line edited in a rewritten file)
        version += 1
        # A first version (nearly every record) kept as its digest alone: a tuple more for each of
        # a first collect's records was a fifth of its peak memory on a 1 GB history.
        rnd.known[key] = digest if version == 1 else (version, digest)
        if self._late:
            first = self._holders.setdefault(key, conversation)
            if first != conversation:
                self._more.setdefault(key, []).append(conversation)
        self._rows.append((conversation, key, version, rnd.number, digest, stream, kind, file, line, ts, raw, events))
        if calls:
            for cid in calls:
                if cid not in rnd.calls:
                    rnd.calls.add(cid)
                    self._calls.append((cid, conversation))
        self._bytes += len(raw) + len(events)
        if len(self._rows) >= _BATCH or self._bytes >= _BATCH_BYTES:
            self._flush()
        # Into one buffer (orjson gives each result room for KiBs more: thousands of them held
        # would take many times their size).
        rnd.lean += lean if version == 1 else b"[%d," % version + lean[3:]
        self._lean_bytes += len(lean)
        if self._lean_bytes >= _LEAN_BYTES:
            self._write_leans()
        rnd.hash.update(digest)
        rnd.count += 1
        return True

    def _rewritten(self, conversation: str, p: Prepared) -> bool:
        """A record written again in the same file with other content (rare: asked of the store):
        the later copy is kept, as the record's next version, unless it reads as nothing while the
        stored copy read: the one that reads is kept. Says so, naming both lines."""
        key, file, at, digest = p[0], p[4], p[5], p[9]
        self._index()
        rows = self.db.execute("SELECT digest, file, line, length(events) > 2 FROM records WHERE key = ? AND conversation = ? "
                               "ORDER BY version", (key, conversation)).fetchall()
        if not rows or rows[-1][1] != file or any(r[0] == digest for r in rows):
            return False  # stored from another file (a resume), or this very content before
        line, read = rows[-1][2], bool(rows[-1][3])
        keep = bool(p[11] & HAS_EVENTS) or not read
        kept = f"kept line {at}, the newer" if keep else f"kept line {line}: this one reads as nothing"
        self.notes.append(Problem(file, at, f"{key} is written twice in this file with other content "
                                            f"(lines {line} and {at}); {kept}"))
        return keep

    def save_file(self, path: str, runtime: str, size: int, mtime_ns: int, cursor: Cursor) -> None:
        tail = tail_before(path, cursor.offset) if cursor.offset else b""
        self.db.execute(
            self.store._SAVE_FILE,
            (path, runtime, size, mtime_ns, cursor.offset, cursor.line, tail, orjson.dumps(cursor.state)),
        )

    def _write_leans(self) -> None:
        """Each open round's lean rows so far as its next part of ``leans``: ``[[version, key,
        stream, ts, lean events], ...]`` in landing order (``Store.records(lean=True)`` reads them)."""
        for conv, rnd in self._open.items():
            if rnd.lean:
                rnd.lean[-1:] = b"]"  # the last row's comma
                self.db.execute(_INSERT_LEAN, (conv, rnd.number, rnd.parts, LEAN_RULE, b"[" + rnd.lean))
                rnd.parts += 1
                rnd.lean = bytearray()
        self._lean_bytes = 0

    def close_rounds(self) -> list[Round]:
        """Land every round that gained records; a conversation with nothing new gets none."""
        self._flush()
        self._write_leans()
        landed = []
        for conv, rnd in self._open.items():
            if not rnd.count:
                continue
            r = Round(conv, rnd.number, rnd.parent, rnd.hash.hexdigest(), _now(), rnd.count)
            self.db.execute("INSERT INTO rounds VALUES(?,?,?,?,?,?)", attrs.astuple(r))
            landed.append(r)
        self._open.clear()
        return landed

    def _round(self, conversation: str) -> _OpenRound:
        rnd = self._open.get(conversation)
        if rnd is None:
            row = self.db.execute(
                "SELECT number, head FROM rounds WHERE conversation = ? ORDER BY number DESC LIMIT 1", (conversation,)
            ).fetchone()
            number, parent = (row[0] + 1, row[1]) if row else (1, "")
            rnd = self._open[conversation] = _OpenRound(number, parent)
        return rnd


def tail_before(path: str | Path, offset: int) -> bytes:
    """The last :data:`TAIL_BYTES` of ``path`` before ``offset``: what is kept of a file read up
    to there, and compared at the next collect to tell a file that grew from one rewritten."""
    with open_regular(path) as f:
        f.seek(max(0, offset - TAIL_BYTES))
        return f.read(min(offset, TAIL_BYTES))


Prepared = tuple[str, str, str, str, str, int, "str | None", bytes, bytes, bytes, tuple[str, ...], int, bytes]
"""An entry made ready for :meth:`Writer.add_prepared`, flat (str, bytes and ints only, so collect's
reader process sends it through a pipe as it is): ``(key, session, stream, kind, file, line, ts,
raw, events as JSON, sha256 of raw, the global call ids its events name, flags, its row of
``leans`` as its first version, and a comma: ``[1,key,stream,ts,lean events],`` (``lean_events.lean``))``."""
VERSIONED, REPEAT, HAS_EVENTS = 1, 2, 4
"""The flags of a :data:`Prepared`: Entry.versioned, Entry.repeat, and whether it has events."""


def prepare(e: Entry, digest: bool = True) -> Prepared:
    """The work :meth:`Writer.add` does on one entry that needs nothing of the store: its
    fields checked, its events (whole and lean) as JSON, its digest, its global call ids. Raises (RecordError,
    TypeError, ...) for an entry the store cannot hold. Without ``digest``, its digest is left
    empty, for :func:`with_digest` to fill in (collect's reader leaves it to collect's own process,
    the less busy of the two)."""
    # Every field read once (this runs for every record collected).
    key, session, stream, kind, file, line, raw, events, ts = e.key, e.session, e.stream, e.kind, e.file, e.line, e.raw, e.events, e.ts
    # The fields the records table needs, of the types it stores (an adapter's bug on odd input
    # is caught here, before a batch of other files' records would fail with it).
    if not (type(key) is str and key and type(session) is str and session and type(stream) is str
            and type(kind) is str and type(file) is str and type(line) is int and type(raw) is bytes
            and (ts is None or type(ts) is str)):
        raise RecordError(f"an entry of the wrong shape (key {key!r}, session {session!r}, line {line!r}); not stored")
    calls: tuple[str, ...] = ()
    for ev in events:
        if type(ev) is dict and ev.get("global") is True and ev.get("e") == "call":
            cid = ev.get("id")
            if isinstance(cid, str):
                calls += (cid,)
    flags = (VERSIONED if e.versioned else 0) | (REPEAT if e.repeat else 0) | (HAS_EVENTS if events else 0)
    try:
        # No events (nearly half of Claude Code's lines): what orjson writes for an empty tuple.
        dumped = b"[]" if type(events) is tuple and not events else _dumps(events)
    except TypeError:  # (orjson is tried here first, not by _dump_events: one call fewer per entry)
        dumped = _dump_mended(events)
    return (key, session, stream, kind, file, line, ts, raw, dumped, _sha256(raw).digest() if digest else b"", calls, flags,
            _dump_events((1, key, stream, ts, lean_events(events))) + b",")


_sha256 = hashlib.sha256
_dumps = orjson.dumps


def with_digest(p: Prepared) -> Prepared:
    """A :data:`Prepared` made without its digest (``prepare(e, digest=False)``), with it."""
    return (*p[:9], _sha256(p[7]).digest(), *p[10:])  # type: ignore[return-value]


def _dump_events(events: tuple[Any, ...]) -> bytes:
    try:
        return orjson.dumps(events)
    except TypeError:
        return _dump_mended(events)


def _dump_mended(events: tuple[Any, ...]) -> bytes:
    """Events orjson refused: an integer outside 64 bits (a count no runtime wrote) is unknown,
    stored as null."""
    return orjson.dumps(_in_range(list(events)))


def _in_range(v: Any) -> Any:
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return v if -(2**63) <= v < 2**64 else None
    if isinstance(v, dict):
        return {k: _in_range(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_in_range(x) for x in v]
    return v


class _OpenRound:
    def __init__(self, number: int, parent: str) -> None:
        self.number, self.parent, self.count = number, parent, 0
        self.hash = hashlib.sha256(parent.encode())
        self.known: dict[str, bytes | tuple[int, bytes]] = {}  # key -> its digest (version 1), or (version, digest)
        self.calls: set[str] = set()  # global call ids this round already noted
        self.lean = bytearray()  # lean rows not written yet, each followed by a comma (Writer._write_leans)
        self.parts = 0


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
