"""An ``asz server``'s store, read over HTTP: ``--server URL`` on the reading commands (or
``ASZ_STORE=https://...``) makes :meth:`Store.open` give this, and every command that reads a store
runs on it unchanged. Each reading method of :class:`~asz_core.store.Store` is one request to the
server's ``/v1/read``, answered by the same method of the server's PostgreSQL store. The token is
``ASZ_TOKEN``. Its caches (assembled conversations, the ledger's summaries) are kept under
ASZ_HOME, apart from the local store's.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import os
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

from .errors import AszError, NotFound, StoreError
from .store import ConversationRow, Round, Store, StoredRecord, Writer, asz_home


class ServerError(StoreError):
    """The server refused a request (a 4xx), saying why in one line; or it cannot be reached."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


class Http:
    """Requests to one server over a kept-alive connection per thread."""

    def __init__(self, url: str, token: str | None, timeout: float = 60) -> None:
        u = urllib.parse.urlsplit(url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise AszError(f"{url!r} is not a server URL: give http://HOST:PORT or https://HOST")
        self.url, self.scheme, self.host, self.port = url.rstrip("/"), u.scheme, u.hostname, u.port
        self.base = u.path.rstrip("/")
        self.token, self.timeout = token, timeout
        self.local = threading.local()

    def _conn(self) -> http.client.HTTPConnection:
        c = getattr(self.local, "conn", None)
        if c is None:
            cls = http.client.HTTPSConnection if self.scheme == "https" else http.client.HTTPConnection
            c = self.local.conn = cls(self.host, self.port, timeout=self.timeout)
        return c

    def close(self) -> None:
        c = getattr(self.local, "conn", None)
        if c is not None:
            c.close()
            self.local.conn = None

    def post(self, path: str, body: bytes) -> Any:
        """The JSON the server answered; ServerError for a refusal (its one-line reason), OSError
        (a ConnectionError, a timeout) when the server cannot be reached or the answer was cut."""
        headers = {"Content-Type": "application/octet-stream", "Content-Length": str(len(body))}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        for attempt in (0, 1):  # a kept-alive connection the server closed meanwhile: once more on a new one
            c = self._conn()
            try:
                c.request("POST", self.base + path, body=body, headers=headers)
                r = c.getresponse()
                data = r.read()
                break
            except (http.client.HTTPException, OSError) as exc:
                self.close()
                if attempt or not isinstance(exc, (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError)):
                    raise ConnectionError(f"{self.url}: {exc or type(exc).__name__}") from exc
        if r.status >= 400:
            try:
                why = orjson.loads(data)["error"]
            except (ValueError, KeyError, TypeError):
                why = data[:200].decode("utf-8", "replace") or r.reason
            raise ServerError(f"{self.url}: {why}", r.status)
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            raise ConnectionError(f"{self.url}: an answer that is not JSON (cut?)") from None


def _decode(v: Any) -> Any:
    if isinstance(v, dict) and len(v) == 1 and "b64" in v:
        return base64.b64decode(v["b64"])
    return v


class ServerStore(Store):
    """The reading half of :class:`Store`, each method answered by an ``asz server``."""

    Error = OSError

    def __init__(self, url: str, token: str | None = None) -> None:  # noqa: D107
        self.http = Http(url, token if token is not None else os.environ.get("ASZ_TOKEN"))
        self.url = self.label = self.http.url
        self.path = asz_home() / "stores" / f"server-{hashlib.sha256(self.url.encode()).hexdigest()[:16]}" / "asz.db"
        self.wal = True

    def _read(self, method: str, *args: Any) -> Any:
        try:
            got = self.http.post("/v1/read", orjson.dumps({"method": method, "args": list(args)}))
        except ServerError as exc:
            if exc.status == 404:
                raise NotFound(str(exc).split(": ", 1)[-1]) from None
            raise
        except OSError as exc:
            raise StoreError(f"cannot reach the server {self.url} ({exc}); is `asz server` running there?") from None
        return got["result"]

    def conversations(self) -> list[ConversationRow]:
        return [ConversationRow(i, rt, c, Round(*h) if h else None, tuple(s)) for i, rt, c, h, s in self._read("conversations")]

    def resolve(self, name: str) -> str:
        if not name:
            return super().resolve(name)
        return str(self._read("resolve", name))

    def runtime_of(self, conversation: str) -> str:
        return str(self._read("runtime_of", conversation))

    def rounds(self, conversation: str) -> list[Round]:
        return [Round(*r) for r in self._read("rounds", conversation)]

    def heads(self) -> dict[str, tuple[int, str]]:
        """Each conversation's newest round on the server: its number and head."""
        return {c: (n, h) for c, (n, h) in self._read("heads").items()}

    def records(self, conversation: str, upto: int, *, lean: bool = False, cut: int | None = None) -> list[StoredRecord]:
        got = self._read("records", conversation, upto, lean, cut)
        if lean and cut is None:
            return got  # type: ignore[no-any-return]
        return [StoredRecord(s, k, v, r, st, kd, f, ln, ts, tuple(ev)) for s, k, v, r, st, kd, f, ln, ts, ev in got]

    def copied_calls(self, conversation: str) -> dict[str, str]:
        return dict(self._read("copied_calls", conversation))

    def raw(self, conversation: str, seq: int, upto: int | None = None) -> bytes:
        return _decode(self._read("raw", conversation, seq, upto))  # type: ignore[no-any-return]

    def placed(self, conversation: str, seq: int) -> tuple[str, int, int] | None:
        got = self._read("placed", conversation, seq)
        return tuple(got) if got else None  # type: ignore[return-value]

    def newest_raw(self, conversation: str, key: str, upto: int, cut: int) -> bytes | None:
        return _decode(self._read("newest_raw", conversation, key, upto, cut))  # type: ignore[no-any-return]

    def last_seq(self, conversation: str, upto: int) -> int:
        return int(self._read("last_seq", conversation, upto))

    def has_versions(self, conversation: str, upto: int) -> bool:
        return bool(self._read("has_versions", conversation, upto))

    def count_after(self, conversation: str, upto: int, cut: int) -> int:
        return int(self._read("count_after", conversation, upto, cut))

    def round_records(self, conversation: str, number: int) -> Iterator[Any]:
        raise StoreError(f"{self.url} is read through a server: its rounds are not pushed from it")

    @property
    def runs_home(self) -> Path:
        return self.path.parents[2]  # (ASZ_HOME: the caches are under ASZ_HOME/stores/<this store>/)

    def reader(self) -> ServerStore:
        return ServerStore(self.url, self.http.token)

    def readonly(self) -> ServerStore:
        return self

    def close(self) -> None:
        self.http.close()

    def late_indexes(self) -> bool:  # pragma: no cover - never written
        return False

    @contextmanager
    def writing(self) -> Iterator[Writer]:
        raise StoreError(f"{self.url} is an asz server: collect into your own store, then `asz push` to it")
        yield  # pragma: no cover

    def file_state(self, path: str) -> None:
        return None

    def file_stats(self) -> dict[str, tuple[str, int, int, int]]:
        return {}


def wait_until_up(url: str, token: str | None, seconds: float = 10) -> None:
    """Wait (bounded) until a server answers; for tests and benchmarks that start one."""
    http = Http(url, token, timeout=2)
    end = time.monotonic() + seconds
    while True:
        try:
            http.post("/v1/whoami", b"")
            return
        except ServerError:
            return  # it answered (a refusal without a token is an answer)
        except OSError:
            if time.monotonic() > end:
                raise
            time.sleep(0.05)
        finally:
            http.close()
