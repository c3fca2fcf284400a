"""``asz push``: send the local store's rounds an ``asz server`` lacks, in chain order.

For each conversation the server's newest round (``heads``) must be one of this store's rounds
(the same number, the same head): then the rounds after it are sent, oldest first. A round goes as
parts of at most :data:`PART_BYTES` (and :data:`PART_RECORDS` records) each, a bounded request; the
server stages the parts and lands the round with its last part, checking its parent and its head
digest. Every request may be sent again (a part replaces itself; a round that landed answers
``already``), so a push cut by a lost connection or a killed server goes on where it stopped:
each request is retried, for up to ``retry_seconds``, and a push started again sends only what
the server still lacks. Nothing is ever landed twice: a round is known by its head digest.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import orjson

from .errors import AszError
from .server_store import Http, ServerError, ServerStore
from .store import Round, Store

PART_BYTES = 4 << 20
PART_RECORDS = 5000


class PushError(AszError):
    """A push the server refused, or could not finish: what was sent before stays landed."""


@attrs.frozen
class PushResult:
    server: str
    conversations: int
    """Conversations the server lacked rounds of."""
    rounds: int
    """Rounds landed by this push."""
    already: int
    """Rounds the server held already (an earlier, cut push landed them)."""
    records: int
    bytes: int
    requests: int
    retries: int
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)


def plan(store: Store, heads: dict[str, tuple[int, str]]) -> list[Round]:
    """The local rounds the server lacks, conversation by conversation, each chain in order. A
    conversation whose server head is not one of its local rounds is refused: its chains differ."""
    todo: list[Round] = []
    for row in store.conversations():
        rounds = store.rounds(row.id)
        n, head = heads.get(row.id, (0, ""))
        if n and (n > len(rounds) or rounds[n - 1].head != head):
            raise PushError(f"conversation {row.id[:12]}: the server's r{n} ({head[:12]}) is not this store's "
                            f"{'r%d' % n if n <= len(rounds) else 'chain (it has fewer rounds)'}: another machine pushed "
                            "it, or this store was made again; nothing of it is sent")
        todo += rounds[n:]
    return todo


def parts(store: Store, rnd: Round, runtime: str, sessions: list[str]) -> Iterator[tuple[bytes, int]]:
    """The requests that send one round: each a header line and its records' lines, at most
    PART_BYTES or PART_RECORDS each; with how many records each holds."""
    def header(part: int, last: bool) -> bytes:
        return orjson.dumps({"conversation": rnd.conversation, "runtime": runtime, "sessions": sessions,
                             "number": rnd.number, "parent": rnd.parent, "head": rnd.head, "part": part, "last": last})

    lines: list[bytes] = []
    size = part = 0
    for key, stream, kind, file, line, ts, raw, events in store.round_records(rnd.conversation, rnd.number):
        # the events as stored (JSON already), spliced in rather than decoded and written again
        item = orjson.dumps([key, stream, kind, file, line, ts, base64.b64encode(raw).decode()])[:-1] + b"," + events + b"]"
        if lines and (size + len(item) > PART_BYTES or len(lines) >= PART_RECORDS):
            yield b"\n".join([header(part, False), *lines]), len(lines)
            lines, size, part = [], 0, part + 1
        lines.append(item)
        size += len(item) + 1
    yield b"\n".join([header(part, True), *lines]), len(lines)


def push(store: Store, url: str, token: str | None, *, retry_seconds: float = 60,
         progress: Callable[[int, int], None] | None = None) -> PushResult:
    """Send what the server at ``url`` lacks of ``store``. ``progress(records_done, records_total)``
    is called after each request."""
    t0 = time.monotonic()
    http = Http(url, token, timeout=120)
    counts = {"requests": 0, "retries": 0, "bytes": 0}

    def send(body: bytes) -> Any:
        wait, deadline = 0.1, time.monotonic() + retry_seconds
        while True:
            try:
                got = http.post("/v1/rounds", body)
                counts["requests"] += 1
                counts["bytes"] += len(body)
                return got
            except ServerError as exc:
                if exc.status != 503:
                    raise PushError(str(exc)) from None
                why: Exception = exc
            except OSError as exc:  # refused, reset, cut, timed out: the request is sent again
                why = exc
            if time.monotonic() + wait > deadline:
                raise PushError(f"{url}: gave up after {retry_seconds:.0f} s ({why}); push again to go on from "
                                "where it stopped") from None
            counts["retries"] += 1
            time.sleep(wait)
            wait = min(wait * 2, 2.0)

    try:
        heads = ServerStore(url, token)
        heads.http = http
        try:
            have = heads.heads()
        except AszError as exc:
            raise PushError(str(exc)) from None
        todo = plan(store, have)
        total = sum(r.records for r in todo)
        done = landed = already = 0
        sessions: dict[str, list[str]] = {row.id: list(row.sessions) for row in store.conversations()}
        runtimes: dict[str, str] = {}
        for rnd in todo:
            rt = runtimes.get(rnd.conversation) or runtimes.setdefault(rnd.conversation, store.runtime_of(rnd.conversation))
            sent = 0
            for body, n in parts(store, rnd, rt, sessions.get(rnd.conversation, [])):
                got = send(body)
                sent += n
                if got.get("status") == "already":
                    break  # (an earlier push landed it: its other parts need not go)
            done += rnd.records
            if progress:
                progress(done, total)
            landed += got.get("status") == "landed"
            already += got.get("status") == "already"
    finally:
        http.close()
    return PushResult(http.url, len({r.conversation for r in todo}), landed, already, done, counts["bytes"],
                      counts["requests"], counts["retries"], round(time.monotonic() - t0, 3))
