"""Real things on this machine for the source fetchers' tests: an HTTP server on 127.0.0.1 that
stops by itself, a PDF written by hand (pypdf reads it as any PDF), a command fetcher script."""

from __future__ import annotations

import http.server
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HTML = b"""<!doctype html>
<html><head><title>INC-4412: invoice totals off by one cent</title>
<meta name="author" content="Dana Ops">
<meta name="date" content="2026-10-20">
</head><body>
<nav>Home | Incidents | Search</nav>
<article>
<h1>INC-4412: invoice totals off by one cent</h1>
<p>Root cause: the rounding of each line item happened before the tax was added, so totals of many
lines drifted by a cent. The currency conversion was not involved.</p>
<p>Fix: round once, after the tax, in invoicer/totals.py. Released in 2.3.1.</p>
</article>
<footer>Copyright Acme</footer>
</body></html>"""


def pdf_bytes(lines: list[str], title: str = "Postmortem", author: str = "Sam Lead") -> bytes:
    """A one-page PDF whose text is ``lines``, with /Title and /Author, its xref computed."""
    ops = ["BT", "/F1 12 Tf", "72 720 Td", "14 TL"]
    for line in lines:
        ops.append("(" + line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ") Tj T*")
    ops.append("ET")
    stream = "\n".join(ops).encode("latin-1")
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        f"<< /Title ({title}) /Author ({author}) /CreationDate (D:20261021120000Z) >>".encode("latin-1"),
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root 1 0 R /Info 6 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    return bytes(out)


PDF = pdf_bytes(["Postmortem of INC-4412", "Root cause: rounding before tax.", "Rolled back release 2.3.0 on 2026-10-21."])
BIG = 50 * 1000 * 1000


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a: object) -> None:  # quiet
        pass

    def do_GET(self) -> None:  # noqa: N802
        p = self.path
        try:
            if p == "/page.html":
                self._send(200, HTML, "text/html; charset=utf-8", {"ETag": '"v7"', "Last-Modified": "Tue, 20 Oct 2026 09:00:00 GMT"})
            elif p == "/postmortem.pdf":
                self._send(200, PDF, "application/pdf")
            elif p == "/api/tickets/OPS-12":  # the fetcher template's ticket API
                self._send(200, b'{"title": "Totals off by a cent", "description": "Cause: rounding.", "version": 7, '
                                b'"reporter": "Priya"}', "application/json")
            elif p == "/note.txt":
                self._send(200, b"plain note\nsecond line\n", "text/plain")
            elif p == "/loop":
                self._redirect("/loop2")
            elif p == "/loop2":
                self._redirect("/loop")
            elif p == "/hop":
                self._redirect("/note.txt")
            elif p == "/to-https":
                self._redirect(f"https://127.0.0.1:{self.server.server_address[1]}/note.txt")
            elif p == "/to-file":
                self._redirect("file:///etc/passwd")
            elif p == "/slow":
                time.sleep(3)
                self._send(200, b"late", "text/plain")
            elif p == "/big":
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(BIG))
                self.end_headers()
                chunk = b"x" * 65535 + b"\n"
                sent = 0
                while sent < BIG:
                    self.wfile.write(chunk[: BIG - sent])
                    sent += len(chunk)
            else:
                self._send(404, b"no such page", "text/plain")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the fetcher stopped reading at its bound

    def _send(self, code: int, body: bytes, ctype: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def _redirect(self, to: str) -> None:
        self.send_response(302)
        self.send_header("Location", to)
        self.send_header("Content-Length", "0")
        self.end_headers()


@contextmanager
def serving(seconds: float = 60) -> Iterator[str]:
    """A server on 127.0.0.1 (a free port) for at most ``seconds``; yields its base URL."""
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    srv.daemon_threads = True
    srv.timeout = 0.2
    stop = threading.Event()
    deadline = time.monotonic() + seconds

    def loop() -> None:
        while not stop.is_set() and time.monotonic() < deadline:
            srv.handle_request()

    t = threading.Thread(target=loop, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        stop.set()
        t.join(5)
        srv.server_close()


def fetch_script(path: Path) -> Path:
    """A real command fetcher: prints a ticket for the source it is given, what argv and
    environment it got, and behaves as the source asks (fail, hang, flood)."""
    path.write_text(f"""#!{sys.executable}
import os, sys, time
src = sys.argv[1]
if src.endswith("/fail"):
    sys.stderr.write("login expired\\nrun acme-login first\\n"); sys.exit(3)
if src.endswith("/hang"):
    time.sleep(30)
if src.endswith("/flood"):
    while True:
        sys.stdout.write("y" * 65536); sys.stdout.flush()
stdin = sys.stdin.read()
print("TICKET " + src)
print("argv=" + repr(sys.argv[1:]))
print("env=" + ",".join(sorted(os.environ)))
print("stdin=" + repr(stdin))
print("Resolution: the cause was the rounding order, not the currency conversion.")
""")
    path.chmod(0o755)
    return path
