"""A real headless Chromium for the report's tests (Debian's ``chromium``; .ci/run installs it),
and a small PNG reader (zlib only) to tell a screenshot from a blank one."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import tempfile
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def chromium() -> str:
    """The browser's path, or a skip saying how to get one."""
    for n in NAMES:
        p = shutil.which(n)
        if p:
            return p
    pytest.skip("no headless Chromium: install Debian's chromium and chromium-driver (.ci/run does: "
                "apt-get install -y chromium chromium-driver)")


def _run(args: list[str], timeout: float = 90) -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory(prefix="asz-chromium-") as profile:
        cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
               "--no-first-run", "--disable-extensions", "--hide-scrollbars", f"--user-data-dir={profile}", *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env={**os.environ, "HOME": profile},
                              stdin=subprocess.DEVNULL)


def dump_dom(url: str) -> str:
    """The DOM after the page's script ran (``--dump-dom``)."""
    got = _run(["--virtual-time-budget=3000", "--dump-dom", url])
    assert got.returncode == 0 and got.stdout.strip(), got.stderr[-2000:]
    return got.stdout


def screenshot(url: str, out: Path, size: str = "1200,1600") -> Path:
    got = _run([f"--window-size={size}", "--virtual-time-budget=3000", f"--screenshot={out}", url])
    assert got.returncode == 0 and out.is_file(), got.stderr[-2000:]
    return out


# --- PNG ------------------------------------------------------------------------------------------

def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and each row's pixels (bytes per pixel 3 or 4) of an 8-bit RGB/RGBA PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    h = depth = ctype = 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
        pos += 12 + n
    assert depth == 8 and ctype in (2, 6), f"PNG of depth {depth}, colour type {ctype}"
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, rows


def colours(path: Path) -> tuple[int, float]:
    """Distinct colours of a screenshot, and the part of its pixels unlike its most common one."""
    w, h, rows = png_pixels(path.read_bytes())
    bpp = len(rows[0]) // w if rows else 3
    counts: dict[bytes, int] = {}
    for r in rows:
        for i in range(0, len(r), bpp):
            px = r[i:i + 3]
            counts[px] = counts.get(px, 0) + 1
    top = max(counts.values()) if counts else 0
    return len(counts), 1 - top / max(w * h, 1)


# --- the DOM --------------------------------------------------------------------------------------

class Figures(HTMLParser):
    """Each ``data-figure`` element's text, the body's attributes and each element's classes by id."""

    def __init__(self) -> None:
        super().__init__()
        self.figures: dict[str, str] = {}
        self.classes: dict[str, list[str]] = {}
        self.body: dict[str, str | None] = {}
        self._open: list[tuple[str, str, list[str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "body":
            self.body = a
        if a.get("id"):
            self.classes[a["id"]] = (a.get("class") or "").split()  # type: ignore[union-attr]
        if a.get("data-figure"):
            self._open.append((tag, a["data-figure"], []))  # type: ignore[arg-type]

    def handle_data(self, data: str) -> None:
        for _, _, buf in self._open:
            buf.append(data)

    def handle_endtag(self, tag: str) -> None:
        if self._open and self._open[-1][0] == tag:
            _, name, buf = self._open.pop()
            self.figures[name] = "".join(buf).strip()


def figures(html: str) -> Figures:
    f = Figures()
    f.feed(html)
    return f


# --- a page at a given width, through chromedriver ------------------------------------------------

class Page:
    """One page opened in headless Chromium through chromedriver's WebDriver protocol (plain HTTP
    on 127.0.0.1, no client library), its viewport emulated at exactly ``width`` CSS pixels (a
    headless window cannot be made narrower than about 500): run a script in it, take a
    screenshot. Every request is bounded; chromedriver is stopped at the end."""

    def __init__(self, url: str, width: int, height: int = 1600) -> None:
        self.url, self.width, self.height = url, width, height

    def __enter__(self) -> Page:
        import socket
        import time

        driver = shutil.which("chromedriver")
        if not driver:
            pytest.skip("no chromedriver: install Debian's chromium-driver (.ci/run does)")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self._profile = tempfile.TemporaryDirectory(prefix="asz-chromedriver-")
        self._proc = subprocess.Popen([driver, f"--port={port}", "--allowed-ips=127.0.0.1"], stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, env={**os.environ, "HOME": self._profile.name})
        self._base = f"http://127.0.0.1:{port}"
        for _ in range(100):  # up to 10 s for it to listen
            try:
                self._call("GET", "/status")
                break
            except OSError:
                time.sleep(0.1)
        opts = {"binary": chromium(), "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                                               "--hide-scrollbars", f"--user-data-dir={self._profile.name}/p"],
                "mobileEmulation": {"deviceMetrics": {"width": self.width, "height": self.height, "pixelRatio": 1,
                                                      "touch": self.width < 600, "mobile": self.width < 600}}}
        got = self._call("POST", "/session", {"capabilities": {"alwaysMatch": {"goog:chromeOptions": opts}}})
        self._session = f"/session/{got['value']['sessionId']}"
        self._call("POST", self._session + "/url", {"url": self.url})
        return self

    def _call(self, method: str, path: str, body: object = None) -> dict:
        import json
        import urllib.request

        req = urllib.request.Request(self._base + path, method=method,
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.loads(r.read() or b"{}")

    def run(self, script: str) -> object:
        """The value of ``script`` (a function body: ``return …``) in the page."""
        return self._call("POST", self._session + "/execute/sync", {"script": script, "args": []})["value"]

    def screenshot(self, out: Path) -> Path:
        import base64

        out.write_bytes(base64.b64decode(self._call("GET", self._session + "/screenshot")["value"]))
        return out

    def __exit__(self, *exc: object) -> None:
        try:
            if getattr(self, "_session", None):
                self._call("DELETE", self._session)
        except OSError:
            pass
        self._proc.terminate()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._profile.cleanup()
