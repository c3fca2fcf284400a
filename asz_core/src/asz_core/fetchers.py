"""Core's source fetchers: ``file``, ``http`` (http and https) and ``command`` (docs/sources.md).

They are registered in-process by :mod:`asz_core.builtin` through the same hook a third party
uses (``asz_source_fetchers``), so a file and a plain URL need no setting. Each one only brings
bytes and what it knows of them; :mod:`asz_core.judge.sources` saves the copy and its text.

Every fetch is bounded: at most ``max_bytes`` kept (a larger source is cut, saying so), a file
read only when it is a regular file (a named pipe waits for a writer, a device never ends), HTTP
with a connect and a read timeout, a deadline for the whole fetch, a bounded number of
redirects and never a redirect to another scheme, and a command run as argv (never through a
shell) with the source as its only argument, no input, an environment holding only what the
configuration passes, a deadline and bounded output.
"""

from __future__ import annotations

from .digits import whole

import os
import re
import selectors
import shutil
import signal
import subprocess
import time
import urllib.parse
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from .interfaces import Fetched, FetchError, FetchSettings, SourceFetcher
from .regular import NotRegularFile, open_regular

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
STDERR_BYTES = 4096
"""What a command's stderr may say of why it failed, at most."""


def scheme_of(source: str) -> str | None:
    """The URL scheme ``source`` starts with (lower case), or None for a plain path."""
    m = _SCHEME.match(source)
    return m.group(1).lower() if m and len(m.group(1)) > 1 else None  # C:\\x is a path


def file_path(source: str) -> str:
    """The path a ``file`` source names (``file:///x``, ``file:x`` or a plain path)."""
    if source.lower().startswith("file:"):
        rest = source[5:]
        if rest.startswith("//"):
            parsed = urllib.parse.urlparse(source)
            if parsed.netloc not in ("", "localhost"):
                raise FetchError(f"a file URL of another host ({parsed.netloc}) cannot be read")
            return urllib.parse.unquote(parsed.path)
        return urllib.parse.unquote(rest)
    return source


class FileFetcher(SourceFetcher):
    """A local file: a path or a ``file:`` URL. Only a regular file is read."""

    name: ClassVar[str] = "file"
    order: ClassVar[int] = 90

    def accepts(self, source: str, settings: FetchSettings) -> bool:
        return scheme_of(source) in (None, "file")

    def fetch(self, source: str, settings: FetchSettings) -> Fetched:
        path = file_path(source)
        try:
            with open_regular(path) as f:
                size = os.fstat(f.fileno()).st_size
                data = f.read(settings.max_bytes + 1)
        except NotRegularFile as exc:
            raise FetchError(f"{path} is {exc}: only a regular file is read") from None
        except BlockingIOError:
            raise FetchError(f"{path}: reading would wait (not a file with an end)") from None
        except OSError as exc:
            raise FetchError(f"{path}: {exc.strerror or exc}") from None
        cut = len(data) > settings.max_bytes
        return Fetched(data[: settings.max_bytes], f"read {os.path.abspath(path)}", cut=cut or size > settings.max_bytes,
                       size=size, location=os.path.abspath(path))


class HttpFetcher(SourceFetcher):
    """A plain http or https URL, fetched with GET; no login (a configured command does that)."""

    name: ClassVar[str] = "http"
    order: ClassVar[int] = 80

    def accepts(self, source: str, settings: FetchSettings) -> bool:
        return scheme_of(source) in ("http", "https")

    def fetch(self, source: str, settings: FetchSettings) -> Fetched:
        import http.client
        import socket
        import ssl

        deadline = time.monotonic() + settings.total_seconds
        url, hops = source, []
        for _ in range(settings.redirects + 1):
            parts = urllib.parse.urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise FetchError(f"{url} is no http or https URL with a host")
            try:
                port = parts.port
            except ValueError:
                raise FetchError(f"{url}: the port is not a number") from None
            cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
            kw: dict[str, Any] = {"context": ssl.create_default_context()} if parts.scheme == "https" else {}
            conn = cls(parts.hostname, port, timeout=settings.connect_timeout, **kw)
            path = urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, ""))
            try:
                conn.connect()
                conn.sock.settimeout(settings.read_timeout)
                conn.request("GET", path, headers={"User-Agent": "asz (source fetcher)", "Accept-Encoding": "identity",
                                                   "Accept": "*/*"})
                resp = conn.getresponse()
                if resp.status in (301, 302, 303, 307, 308):
                    to = resp.getheader("Location")
                    conn.close()
                    if not to:
                        raise FetchError(f"{url}: HTTP {resp.status} with no Location to follow")
                    nxt = urllib.parse.urljoin(url, to)
                    if urllib.parse.urlsplit(nxt).scheme != parts.scheme:
                        raise FetchError(f"{url}: HTTP {resp.status} redirects to another scheme ({_short(nxt)}), "
                                         "which is never followed")
                    hops.append(resp.status)
                    url = nxt
                    continue
                if resp.status != 200:
                    raise FetchError(f"{url}: HTTP {resp.status} {resp.reason}".rstrip())
                length = resp.getheader("Content-Length")
                size = whole(length)
                data, cut = _read_bounded(resp, settings.max_bytes, deadline)
                how = f"GET {source} (HTTP 200" + (f", {len(hops)} redirect{'s' if len(hops) > 1 else ''}" if hops else "") + ")"
                return Fetched(data, how, cut=cut, size=size if not cut else (size or None),
                               content_type=resp.getheader("Content-Type"), location=url,
                               revision=resp.getheader("ETag"), published=resp.getheader("Last-Modified"))
            except FetchError:
                raise
            except (socket.timeout, TimeoutError):
                raise FetchError(f"{url}: no answer within the timeout ({settings.connect_timeout:g} s to connect, "
                                 f"{settings.read_timeout:g} s per read, {settings.total_seconds:g} s in all)") from None
            except ssl.SSLError as exc:
                raise FetchError(f"{url}: TLS failed ({exc.reason or exc})") from None
            except OSError as exc:
                raise FetchError(f"{url}: {exc.strerror or exc}") from None
            except http.client.HTTPException as exc:
                raise FetchError(f"{url}: not a readable HTTP answer ({type(exc).__name__}: {exc})") from None
            finally:
                conn.close()
        raise FetchError(f"{source}: more than {settings.redirects} redirects (the last to {_short(url)})")


def _short(url: str) -> str:
    return url if len(url) <= 200 else url[:200] + "…"


def _read_bounded(resp: Any, limit: int, deadline: float) -> tuple[bytes, bool]:
    """At most ``limit`` bytes of the answer, and whether it held more; a deadline for all of it."""
    chunks, got = [], 0
    while got <= limit:
        if time.monotonic() > deadline:
            raise TimeoutError
        b = resp.read1(min(65536, limit + 1 - got)) if hasattr(resp, "read1") else resp.read(min(65536, limit + 1 - got))
        if not b:
            break
        chunks.append(b)
        got += len(b)
    data = b"".join(chunks)
    return data[:limit], len(data) > limit


class CommandFetcher(SourceFetcher):
    """A source that needs a login, through a command the configuration names per URL prefix or
    scheme (``fetch: {commands: [{prefix: ..., argv: [PROGRAM, "{source}"]}]}``)."""

    name: ClassVar[str] = "command"
    order: ClassVar[int] = 10

    def accepts(self, source: str, settings: FetchSettings) -> bool:
        return command_for(source, settings.options) is not None

    def fetch(self, source: str, settings: FetchSettings) -> Fetched:
        cmd = command_for(source, settings.options)
        if cmd is None:
            raise FetchError(f"no configured command fetches {source}")
        argv = [a.replace("{source}", source) for a in cmd["argv"]]
        program = argv[0] if os.sep in argv[0] else shutil.which(argv[0])
        if not program:
            raise FetchError(f"the fetch command {argv[0]!r} is not found on PATH")
        env = {str(k): str(v) for k, v in (cmd.get("env") or {}).items()}
        env.update({n: os.environ[n] for n in cmd.get("pass") or () if n in os.environ})
        seconds = float(cmd.get("seconds") or settings.total_seconds)
        try:
            proc = subprocess.Popen([program, *argv[1:]], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, env=env, start_new_session=True, close_fds=True)
        except OSError as exc:
            raise FetchError(f"the fetch command {argv[0]!r} could not start: {exc.strerror or exc}") from None
        out, err, cut, timed_out = _collect(proc, settings.max_bytes, time.monotonic() + seconds)
        if timed_out:
            raise FetchError(f"the fetch command {argv[0]!r} gave no end within {seconds:g} s; it was stopped")
        code = proc.returncode
        if code != 0 and not cut:
            said = err.decode("utf-8", "replace").strip().splitlines()
            raise FetchError(f"the fetch command {argv[0]!r} failed (exit {code})" + (f": {said[-1][:300]}" if said else ""))
        return Fetched(out, f"command {argv[0]} (" + (f"exit {code})" if not cut else "stopped at the bound)"), cut=cut,
                       content_type=cmd.get("content_type"), location=source)


def command_for(source: str, options: Mapping[str, Any]) -> dict[str, Any] | None:
    """The first configured command whose ``prefix`` starts ``source`` or whose ``scheme`` is its
    scheme; None when none does (configuration: :func:`asz_core.judge.config`'s ``fetch``)."""
    for cmd in options.get("commands") or ():
        if not isinstance(cmd, Mapping):
            continue
        prefix, scheme = cmd.get("prefix"), cmd.get("scheme")
        if (isinstance(prefix, str) and prefix and source.startswith(prefix)) or \
                (isinstance(scheme, str) and scheme and scheme_of(source) == scheme.lower()):
            return dict(cmd)
    return None


def _collect(proc: subprocess.Popen[bytes], limit: int, deadline: float) -> tuple[bytes, bytes, bool, bool]:
    """(stdout up to ``limit``, stderr up to STDERR_BYTES, stdout held more, the deadline passed).
    The command is stopped (its whole process group) once it passes either bound."""
    sel = selectors.DefaultSelector()
    out, err = bytearray(), bytearray()
    assert proc.stdout is not None and proc.stderr is not None
    for f, buf in ((proc.stdout, out), (proc.stderr, err)):
        os.set_blocking(f.fileno(), False)
        sel.register(f, selectors.EVENT_READ, buf)
    cut = timed_out = False
    try:
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            for key, _ in sel.select(min(left, 0.5)):
                b = os.read(key.fd, 65536)
                if not b:
                    sel.unregister(key.fileobj)
                    continue
                buf = key.data
                room = (limit + 1 if buf is out else STDERR_BYTES) - len(buf)
                buf += b[:max(room, 0)]
            if len(out) > limit:
                cut = True
                break
    finally:
        sel.close()
        if cut or timed_out:
            _stop(proc)
        try:
            proc.wait(timeout=max(deadline - time.monotonic(), 1))
        except subprocess.TimeoutExpired:
            _stop(proc)
            proc.wait()
            timed_out = True
        proc.stdout.close()
        proc.stderr.close()
    return bytes(out[:limit]), bytes(err), cut, timed_out


def _stop(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


FETCHERS = (CommandFetcher, HttpFetcher, FileFetcher)

__all__ = ["FileFetcher", "HttpFetcher", "CommandFetcher", "FETCHERS", "command_for", "scheme_of", "file_path"]
