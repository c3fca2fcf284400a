"""The fetcher against a ticket API served on 127.0.0.1 (bounded: it stops by itself)."""

from __future__ import annotations

import http.server
import json
import threading
import time

import pytest

from asz_core import FetchError, FetchSettings
from asz_tickets.fetcher import TicketFetcher

TICKET = {"title": "Totals off by a cent", "description": "Cause: rounding.", "version": 7, "updated": "2026-10-24",
          "reporter": "Priya", "comments": [{"author": "Dana", "at": "2026-10-24", "body": "Fixed in 2.3.1."}]}


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        body = json.dumps(TICKET).encode() if self.path == "/api/tickets/OPS-12" else b"{}"
        self.send_response(200 if self.path == "/api/tickets/OPS-12" else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def api() -> str:
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.timeout = 0.2
    stop, deadline = threading.Event(), time.monotonic() + 30

    def serve() -> None:
        while not stop.is_set() and time.monotonic() < deadline:
            srv.handle_request()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/api"
    stop.set()
    t.join(5)
    srv.server_close()


def test_a_ticket_is_fetched_with_what_it_says_of_itself(api: str) -> None:
    settings = FetchSettings(options={"url": api})
    f = TicketFetcher()
    assert f.accepts("ticket:OPS-12", settings) and not f.accepts("https://x", settings)
    got = f.fetch("ticket:OPS-12", settings)
    assert got.data.decode().startswith("# OPS-12: Totals off by a cent\n\nCause: rounding.\n")
    assert (got.revision, got.published, got.author, got.content_type) == ("7", "2026-10-24", "Priya", "text/markdown")


def test_a_missing_ticket_or_a_bad_key_fails_saying_why(api: str) -> None:
    settings = FetchSettings(options={"url": api})
    with pytest.raises(FetchError, match="HTTP 404"):
        TicketFetcher().fetch("ticket:OPS-13", settings)
    with pytest.raises(FetchError, match="no ticket key"):
        TicketFetcher().fetch("ticket:../../etc", settings)
