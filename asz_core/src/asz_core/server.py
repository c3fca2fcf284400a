"""``asz server``: a team's store on PostgreSQL, over HTTP (Starlette on uvicorn).

Machines push rounds to it (``asz push``) and read it (``asz conversations/show/ledger/judge
--server URL``, through :class:`~asz_core.server_store.ServerStore`). Every request carries a
machine's token (``Authorization: Bearer ...``, made by ``asz server token add NAME``, kept only
as its SHA-256). The server trusts nothing a machine sends about a round: it lands a pushed round
only when its parent is the conversation's head on the server, and recomputes its head digest from
the records sent (the store's own writer, as collect's), so a machine can neither forge nor reorder
a chain; a machine appends only to conversations it pushed first; a read-only token only reads.
Bad input is answered 4xx with a one-line reason, and nothing of it is kept.

A round larger than one request (a first push of a 90 MB conversation is one round) comes in
parts, each a bounded request: parts are staged (``pending``), and the last part lands the whole
round in one transaction. Every request is idempotent: a part sent again replaces itself, a round
whose head already landed answers ``already``. See docs/server.md.
"""

from __future__ import annotations

import base64
import hashlib
import os
import queue
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import orjson
import psycopg

from .errors import AszError, NotFound, RecordError, StoreError
from .records import Entry
from .store import _now, _redacted as redacted, prepare, store_url
from .store_pg import PgStore, PgWriter

MAX_BODY = 8 << 20
"""The largest request body the server reads (``asz push`` sends parts of at most 4 MiB)."""
MAX_PARTS = 100_000
_HEX = frozenset("0123456789abcdef")
READS = frozenset({"conversations", "resolve", "runtime_of", "rounds", "records", "copied_calls", "raw", "placed",
                   "newest_raw", "last_seq", "has_versions", "count_after", "heads"})
"""The store's reading methods a token may call (``POST /v1/read``)."""


class Refused(AszError):
    """A request the server answers with a 4xx (or 503) and one line saying why; nothing changed."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status


def team_store_url() -> str:
    """The PostgreSQL store the server serves (``store:`` or ``ASZ_STORE``)."""
    url = store_url()
    if url is None or not url.startswith(("postgresql://", "postgres://")):
        raise StoreError("asz server serves a PostgreSQL store: set store: postgresql://USER@HOST/DATABASE in "
                         "asz.yaml, or ASZ_STORE")
    return url


@contextmanager
def team_store() -> Iterator[PgStore]:
    st = PgStore(team_store_url())
    try:
        yield st
    finally:
        st.close()


# --- tokens ---------------------------------------------------------------------------------------

def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def add_token(store: PgStore, name: str, *, readonly: bool = False) -> str:
    """A new token for machine ``name``, returned once: the store keeps only its digest."""
    if not name or len(name) > 100 or not all(c.isalnum() or c in "-_." for c in name):
        raise AszError(f"{name!r} is not a machine name: give letters, digits, '-', '_' or '.' (at most 100)")
    token = "asz_" + secrets.token_urlsafe(32)
    try:
        store.db.execute("INSERT INTO tokens VALUES(?, ?, ?, ?, NULL)", (name, _digest(token), readonly, _now()))
    except psycopg.errors.UniqueViolation:
        raise AszError(f"a token named {name!r} exists: revoke it first, or choose another name") from None
    return token


def revoke_token(store: PgStore, name: str) -> None:
    cur = store.db.execute("UPDATE tokens SET revoked = ? WHERE name = ? AND revoked IS NULL", (_now(), name))
    if cur.rowcount == 0:
        raise NotFound(f"no live token named {name!r}; `asz server token list` lists them")


def tokens(store: PgStore) -> list[dict[str, Any]]:
    return [{"name": n, "read_only": ro, "created": c, "revoked": r}
            for n, ro, c, r in store.db.execute("SELECT name, readonly, created, revoked FROM tokens ORDER BY name")]


def machine_of(store: PgStore, header: str | None, *, write: bool) -> str:
    """The machine a request's ``Authorization`` names, or Refused (401, 403)."""
    if not header or not header.startswith("Bearer "):
        raise Refused(401, "no token: send Authorization: Bearer <token> (asz server token add NAME makes one)")
    row = store.db.execute("SELECT name, readonly, revoked FROM tokens WHERE digest = ?",
                           (_digest(header[7:].strip()),)).fetchone()
    if row is None:
        raise Refused(401, "unknown token")
    name, readonly, revoked = row
    if revoked:
        raise Refused(401, f"the token of {name!r} was revoked")
    if write and readonly:
        raise Refused(403, f"the token of {name!r} is read-only")
    return str(name)


# --- pushed rounds ---------------------------------------------------------------------------------

def parse_push(body: bytes) -> tuple[dict[str, Any], list[list[Any]]]:
    """A pushed part: a header line, then one record a line (``[key, stream, kind, file, line, ts,
    raw in base64, events]``); Refused(400) naming the line of the first thing wrong."""
    lines = body.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    if not lines:
        raise Refused(400, "empty body: a header line, then one record a line")
    try:
        h = orjson.loads(lines[0])
    except orjson.JSONDecodeError:
        raise Refused(400, "line 1: the header is not JSON") from None
    if not isinstance(h, dict):
        raise Refused(400, "line 1: the header is not a JSON object")
    conv, number, parent, head, part, last = (h.get(k) for k in ("conversation", "number", "parent", "head", "part", "last"))
    if not (isinstance(conv, str) and conv and len(conv) <= 512 and "\x00" not in conv):
        raise Refused(400, "line 1: conversation: give the conversation's id")
    if type(number) is not int or number < 1:
        raise Refused(400, "line 1: number: give the round's number (1, 2, ...)")
    if not _is_digest(head) or not (parent == "" if number == 1 else _is_digest(parent)):
        raise Refused(400, "line 1: head and parent: give 64 lowercase hex digits (the parent of round 1 is '')")
    if type(part) is not int or not 0 <= part < MAX_PARTS or type(last) is not bool:
        raise Refused(400, "line 1: part: give the part's number from 0, and last: true or false")
    runtime, sessions = h.get("runtime"), h.get("sessions", [])
    if not (isinstance(runtime, str) and runtime and len(runtime) <= 100 and "\x00" not in runtime):
        raise Refused(400, "line 1: runtime: give the conversation's runtime")
    if not (isinstance(sessions, list) and all(isinstance(s, str) and s and "\x00" not in s for s in sessions)):
        raise Refused(400, "line 1: sessions: give a list of session ids")
    records = []
    for n, line in enumerate(lines[1:], 2):
        try:
            r = orjson.loads(line)
        except orjson.JSONDecodeError:
            raise Refused(400, f"line {n}: not JSON") from None
        if not (isinstance(r, list) and len(r) == 8 and all(isinstance(x, str) for x in r[:4]) and r[0]
                and type(r[4]) is int and (r[5] is None or isinstance(r[5], str)) and isinstance(r[6], str)
                and isinstance(r[7], list) and all(isinstance(e, dict) for e in r[7])):
            raise Refused(400, f"line {n}: a record is [key, stream, kind, file, line, ts, raw in base64, events]")
        try:
            r[6] = base64.b64decode(r[6], validate=True)
        except ValueError:
            raise Refused(400, f"line {n}: raw is not base64") from None
        records.append(r)
    return h, records


def _is_digest(v: Any) -> bool:
    return isinstance(v, str) and len(v) == 64 and set(v) <= _HEX


def receive(store: PgStore, machine: str, h: dict[str, Any], body: bytes, records: list[list[Any]]) -> dict[str, Any]:
    """Take one pushed part: stage it, or (the last part) land its round whole. Idempotent."""
    conv, head = h["conversation"], h["head"]
    if _landed(store, conv, head):
        return {"status": "already", "round": h["number"]}
    if not h["last"]:
        _owned(store, conv, machine)  # (checked again when the round lands)
        store.db.execute("INSERT INTO pending VALUES(?, ?, ?, ?, ?) ON CONFLICT (machine, conversation, head, part) "
                         "DO UPDATE SET body = excluded.body", (machine, conv, head, h["part"], body))
        return {"status": "staged", "round": h["number"], "part": h["part"]}
    with store.transaction(conv):
        if _landed(store, conv, head):  # (a push of the same round landed it while this one waited)
            return {"status": "already", "round": h["number"]}
        owner = _owned(store, conv, machine)
        top = store.db.execute("SELECT number, head FROM rounds WHERE conversation = ? ORDER BY number DESC LIMIT 1",
                               (conv,)).fetchone()
        number, parent = (top[0] + 1, top[1]) if top else (1, "")
        if h["parent"] != parent or h["number"] != number:
            raise Refused(409, f"round r{h['number']} of {conv[:12]}: its parent {h['parent'][:12] or '(none)'} is not the "
                               f"server's head ({parent[:12] or 'none'}, r{number - 1}); push again to send what it lacks")
        if owner is None:
            store.db.execute("INSERT INTO conversations VALUES(?, ?, ?, ?)", (conv, h["runtime"], _now(), machine))
        for s in h.get("sessions", []):
            store.db.execute("INSERT OR IGNORE INTO sessions VALUES(?, ?)", (s, conv))
        w = PgWriter(store)
        added = 0
        for n, r in enumerate(_all_parts(store, machine, conv, head, h["part"], records)):
            added += _add(w, conv, r, n)
        landed = w.close_rounds()
        got = landed[0].head if landed else parent
        if got != head:
            raise Refused(400, f"round r{h['number']} of {conv[:12]}: the records sent give head {got[:12]}, not "
                               f"{head[:12]}: nothing landed")
        store.db.execute("DELETE FROM pending WHERE machine = ? AND conversation = ? AND head = ?", (machine, conv, head))
    return {"status": "landed", "round": number, "records": added}


def _owned(store: PgStore, conv: str, machine: str) -> tuple[str | None] | None:
    """The conversation's row (its first pusher), or None when it is new; Refused (403) when another
    machine pushed it first, or it was collected into the server's store."""
    owner = store.db.execute("SELECT machine FROM conversations WHERE id = ?", (conv,)).fetchone()
    if owner is not None and owner[0] != machine:
        who = "collected on the server" if owner[0] is None else "pushed first by another machine"
        raise Refused(403, f"conversation {conv[:12]} was {who}: a machine appends only to conversations it pushed first")
    return owner  # type: ignore[no-any-return]


def _landed(store: PgStore, conv: str, head: str) -> bool:
    return store.db.execute("SELECT 1 FROM rounds WHERE conversation = ? AND head = ?", (conv, head)).fetchone() is not None


def _all_parts(store: PgStore, machine: str, conv: str, head: str, last: int, records: list[list[Any]]) -> Iterator[list[Any]]:
    """The round's records, part after part: the staged ones (each read when its turn comes), then the last."""
    staged = [p for (p,) in store.db.execute("SELECT part FROM pending WHERE machine = ? AND conversation = ? AND head = ? "
                                             "ORDER BY part", (machine, conv, head))]
    if staged != list(range(last)):
        missing = sorted(set(range(last)) - set(staged))
        raise Refused(409, f"round of {conv[:12]} ending {head[:12]}: part {missing[0] if missing else last} was not "
                           "received: push again")
    for p in staged:
        (body,) = store.db.execute("SELECT body FROM pending WHERE machine = ? AND conversation = ? AND head = ? AND part = ?",
                                   (machine, conv, head, p)).fetchone()
        yield from parse_push(bytes(body))[1]
    yield from records


def _add(w: PgWriter, conv: str, r: list[Any], n: int) -> int:
    key, stream, kind, file, line, ts, raw, events = r
    try:
        p = prepare(Entry(key, conv, stream, kind, file, line, raw, tuple(events), ts, versioned=True))
        if not w.add_prepared(conv, p):
            raise Refused(400, f"record {n + 1} of the round ({key[:40]!r}) is stored already with these bytes: "
                               "nothing landed")
    except (RecordError, TypeError) as exc:
        raise Refused(400, f"record {n + 1} of the round: {exc}") from None
    return 1


# --- the HTTP service -------------------------------------------------------------------------------

class Pool:
    """A few connections to the store, one per request at a time; one that failed is replaced."""

    def __init__(self, url: str, size: int = 4) -> None:
        self.url, self.free = url, queue.LifoQueue[PgStore]()
        self.made, self.size, self.lock = 0, size, threading.Lock()

    @contextmanager
    def store(self) -> Iterator[PgStore]:
        try:
            st = self.free.get_nowait()
        except queue.Empty:
            with self.lock:
                make = self.made < self.size
                self.made += make
            st = PgStore(self.url) if make else self.free.get(timeout=60)
        ok = False
        try:
            yield st
            ok = True
        finally:
            if ok or not st.db.conn.closed and not st.db.in_transaction:
                self.free.put(st)
            else:
                st.close()
                with self.lock:
                    self.made -= 1


def _encode(v: Any) -> Any:
    if isinstance(v, bytes):
        return {"b64": base64.b64encode(v).decode()}
    if isinstance(v, (list, tuple)):
        return [_encode(x) for x in v]
    return v


def read(store: PgStore, method: str, args: list[Any]) -> Any:
    """A store read a token asked for, as JSON-able data."""
    if method == "heads":
        return {c: [n, h] for c, n, h in store.db.execute(
            "SELECT conversation, number, head FROM rounds r WHERE number = (SELECT max(number) FROM rounds WHERE "
            "conversation = r.conversation)")}
    if method == "records":
        if not 2 <= len(args) <= 4 or not isinstance(args[0], str) or type(args[1]) is not int:
            raise TypeError("records takes a conversation, a round, and lean and cut if given")
        conv, upto, lean, cut = [*args, False, None][:4] if len(args) == 2 else [*args, None][:4]
        got = store.records(conv, upto, lean=bool(lean), cut=cut)
        return got if lean and cut is None else [[r.seq, r.key, r.version, r.round, r.stream, r.kind, r.file, r.line, r.ts,
                                                  r.events] for r in got]
    result = getattr(store, method)(*args)
    if method == "conversations":
        return [[c.id, c.runtime, c.created, _round(c.head), list(c.sessions)] for c in result]
    if method == "rounds":
        return [_round(r) for r in result]
    return _encode(result)


def _round(r: Any) -> Any:
    return None if r is None else [r.conversation, r.number, r.parent, r.head, r.landed, r.records]


def make_app(url: str, *, max_body: int = MAX_BODY) -> Any:
    """The Starlette application over the PostgreSQL store at ``url``."""
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import ClientDisconnect, Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    pool = Pool(url)
    with pool.store():
        pass  # the store reached (and its schema made) before the first request

    def answer(fn: Any) -> Any:
        async def endpoint(request: Request) -> Response:
            try:
                size = int(request.headers.get("content-length") or 0)
                if size > max_body:
                    raise Refused(413, f"body of {size} bytes: this server takes at most {max_body}")
                body = bytearray()
                async for chunk in request.stream():
                    body += chunk
                    if len(body) > max_body:
                        raise Refused(413, f"body larger than {max_body} bytes")
                got = await run_in_threadpool(_run, fn, request.headers.get("authorization"), bytes(body))
                return Response(orjson.dumps(got), media_type="application/json")
            except ClientDisconnect:
                return Response(status_code=400)  # (nobody reads it: the body was cut, nothing was kept)
            except Refused as exc:
                return JSONResponse({"error": str(exc)}, status_code=exc.status)
            except Exception as exc:  # noqa: BLE001 - a bug: said in one line, its traceback in the server's log
                import traceback

                traceback.print_exc()
                return JSONResponse({"error": f"internal error ({type(exc).__name__}); the server's log has the rest"},
                                    status_code=500)

        return endpoint

    def _run(fn: Any, auth: str | None, body: bytes) -> Any:
        try:
            with pool.store() as st:
                return fn(st, auth, body)
        except psycopg.OperationalError as exc:
            raise Refused(503, f"the store's connection failed ({_line(exc)}); nothing of this request landed: "
                               "send it again") from None
        except NotFound as exc:
            raise Refused(404, str(exc)) from None
        except StoreError as exc:
            raise Refused(503, str(exc)) from None

    def push(st: PgStore, auth: str | None, body: bytes) -> Any:
        machine = machine_of(st, auth, write=True)
        h, records = parse_push(body)
        return receive(st, machine, h, body, records)

    def read_(st: PgStore, auth: str | None, body: bytes) -> Any:
        machine_of(st, auth, write=False)
        try:
            q = orjson.loads(body)
        except orjson.JSONDecodeError:
            raise Refused(400, "the body is not JSON") from None
        method, args = (q.get("method"), q.get("args", [])) if isinstance(q, dict) else (None, None)
        if method not in READS or not isinstance(args, list) or len(args) > 4:
            raise Refused(400, f"method: one of {', '.join(sorted(READS))}, with args a list")
        try:
            return {"result": read(st, method, args)}
        except (TypeError, ValueError, psycopg.DataError) as exc:
            raise Refused(400, f"{method}: wrong arguments ({_line(exc)})") from None

    def who(st: PgStore, auth: str | None, body: bytes) -> Any:
        return {"machine": machine_of(st, auth, write=False)}

    def team_address() -> str:
        return os.environ.get("ASZ_JOBS") or url  # the queue and the runs' summaries: the store's database

    def team_runs(st: PgStore, auth: str | None, body: bytes) -> Any:
        from .team import remote

        machine_of(st, auth, write=False)
        try:
            return remote.rows_for(team_address(), body)
        except (ValueError, orjson.JSONDecodeError) as exc:
            raise Refused(400, f"team runs: {_line(exc)}") from None
        except AszError as exc:
            raise Refused(503, f"team runs: {exc}") from None

    def team_judge_all(st: PgStore, auth: str | None, body: bytes) -> Any:
        from .team import remote

        machine_of(st, auth, write=True)
        try:
            return remote.judge_all_for(st, team_address(), body)
        except (ValueError, orjson.JSONDecodeError) as exc:
            raise Refused(400, f"judge --all: {_line(exc)}") from None
        except AszError as exc:
            raise Refused(400, f"judge --all: {exc}") from None

    return Starlette(routes=[Route("/v1/rounds", answer(push), methods=["POST"]),
                             Route("/v1/read", answer(read_), methods=["POST"]),
                             Route("/v1/whoami", answer(who), methods=["POST"]),
                             Route("/v1/team/runs", answer(team_runs), methods=["POST"]),
                             Route("/v1/team/judge-all", answer(team_judge_all), methods=["POST"])])


def _line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def serve(url: str, host: str = "127.0.0.1", port: int = 8047, *, max_body: int = MAX_BODY) -> None:
    """Serve until stopped (Ctrl-C, SIGTERM). Bound to this machine only unless ``host`` says
    otherwise: put it behind a TLS proxy to open it to a team (docs/server.md)."""
    import uvicorn

    uvicorn.run(make_app(url, max_body=max_body), host=host, port=port, log_level="warning", access_log=False,
                timeout_graceful_shutdown=5)
