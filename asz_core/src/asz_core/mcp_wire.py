"""asz's own ends of `asz judge mcp`'s stdio transport, handed to the MCP SDK's ``stdio_server``.

The SDK drops a line it cannot read (not JSON, not a JSON-RPC message, a string holding a lone
surrogate, which its JSON reader refuses) without a word, and its reader thread blocks on stdin
until the client closes it, so the server could not end while a client kept the pipe open. Here:

* every line the SDK would drop is answered with a JSON-RPC error (``id`` recovered when the line
  is JSON at all): parse error, invalid request, or invalid params for a lone surrogate;
* stdin is waited on in the event loop (not read in a thread that only the client's close would
  free), so cancelling the server ends the process at once;
* :meth:`Wire.end_after` names a request whose answer ends the server once it is written.
"""

from __future__ import annotations

import json
import os
from typing import Any, BinaryIO

import anyio
import orjson

from .convert import int64

MAX_LINE = 4 << 20
"""A longer line is no MCP message (tool calls are a few hundred bytes): refused, not buffered."""

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602
_UNSET = object()


class Wire:
    """Lines in (an async iterator of the lines the SDK can read) and lines out (the SDK's writer)."""

    def __init__(self, rfd: int, wfd: int) -> None:
        self._rfd = rfd
        self._buf = b""
        self._eof = False
        self._out: BinaryIO = os.fdopen(wfd, "wb", closefd=False)
        self._lock: anyio.Lock | None = None
        self._end_id: Any = _UNSET
        self.ended: anyio.Event | None = None

    def end_after(self, request_id: Any) -> None:
        """End once the answer to ``request_id`` is written (the third refused answer)."""
        self._end_id = request_id

    async def wait_ended(self) -> None:
        await self._event().wait()

    def _event(self) -> anyio.Event:
        if self.ended is None:  # made inside the event loop, where anyio makes them
            self.ended = anyio.Event()
        return self.ended

    # -- in -------------------------------------------------------------------------------------
    def __aiter__(self) -> Wire:
        return self

    async def __anext__(self) -> str:
        while True:
            raw = await self._readline()
            if raw is None:
                await self._error(None, PARSE_ERROR, f"Parse error: a line longer than {MAX_LINE} bytes; not read")
                continue
            if not raw:
                raise StopAsyncIteration
            if not raw.strip():
                continue
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                await self._error(None, PARSE_ERROR, f"Parse error: not UTF-8 ({exc.reason} at byte {exc.start})")
                continue
            why = rejected(line)
            if why is None:
                return line
            if isinstance(why, str):  # a call the SDK cannot read only for its arguments' depth: the navigator's to refuse
                return why
            await self._error(*why)

    async def _readline(self) -> bytes | None:
        """The next line (b"" at the end of input; None for a line past MAX_LINE, skipped). Waits in
        the event loop, not in a thread, so a cancelled server is not held by a read."""
        skipping = False
        while True:
            i = self._buf.find(b"\n")
            if i >= 0:
                line, self._buf = self._buf[: i + 1], self._buf[i + 1:]
                return None if skipping else line
            if len(self._buf) > MAX_LINE:
                skipping, self._buf = True, b""
            if self._eof:
                line, self._buf = self._buf, b""
                return None if skipping else line
            chunk = await self._read()
            self._eof = not chunk
            self._buf += chunk

    async def _read(self) -> bytes:
        try:
            await anyio.wait_readable(self._rfd)
        except (OSError, NotImplementedError, ValueError):
            # Not pollable (a regular file: it never blocks; Windows): read it in a thread.
            return await anyio.to_thread.run_sync(os.read, self._rfd, 1 << 16, abandon_on_cancel=True)
        return os.read(self._rfd, 1 << 16)

    # -- out (what the SDK writes) ----------------------------------------------------------------
    async def write(self, text: str) -> None:
        await self._send(text.encode("utf-8"))

    async def flush(self) -> None:
        pass  # every write is flushed whole

    async def _error(self, rid: Any, code: int, message: str) -> None:
        await self._send(orjson.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}) + b"\n")

    async def _send(self, b: bytes) -> None:
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:  # one message at a time: the SDK's answers and these errors never interleave
            await anyio.to_thread.run_sync(self._write, b)
        if self._end_id is not _UNSET and _id_of_written(b) == self._end_id:
            self._event().set()

    def _write(self, b: bytes) -> None:
        self._out.write(b)
        self._out.flush()


def rejected(line: str) -> tuple[Any, int, str] | str | None:
    """Why the SDK cannot read ``line`` as a JSON-RPC message, as (id, code, message); None when it can.
    A tool call the SDK cannot read only because its arguments nest deeper than its reader goes is
    given back as a line it can read, those arguments cut a few levels below where the navigator
    refuses them (:data:`~asz_core.navigation.ARG_DEPTH`): so a bad argument it is, answered as the
    navigator's tool error and charged to the call's budget, not a protocol error nothing counts."""
    import mcp_types as types
    from pydantic import ValidationError

    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        return None
    except ValidationError as exc:
        errs = exc.errors()
        first = errs[0]["msg"] if errs else str(exc)
    try:
        obj = json.loads(line.rstrip("\r\n"))  # the standard library reads lone surrogates; the SDK's reader does not
    except (ValueError, RecursionError) as exc:
        return None, PARSE_ERROR, f"Parse error: not JSON ({exc})"
    rid = _request_id(obj)
    cut = _cut_deep_call(obj, rid)
    if cut is not None:
        return cut
    if _lone_surrogate(obj):
        return rid, INVALID_PARAMS, ("Invalid params: a string holds a lone surrogate (\\ud800-\\udfff alone), "
                                     "which is not Unicode; send valid UTF-8")
    return rid, INVALID_REQUEST, f"Invalid Request: not a JSON-RPC 2.0 message ({first})"


def _cut_deep_call(obj: Any, rid: Any) -> str | None:
    from .navigation import ARG_DEPTH, depth_of

    params = obj.get("params") if isinstance(obj, dict) else None
    if rid is None or obj.get("method") != "tools/call" or not isinstance(params, dict) \
            or depth_of(params.get("arguments"), ARG_DEPTH + 3) <= ARG_DEPTH + 2:
        return None
    args = _cut(params["arguments"], ARG_DEPTH + 2)
    line = json.dumps({**obj, "params": {**params, "arguments": args}})
    return None if rejected(line) is not None else line


def _cut(v: Any, levels: int) -> Any:
    """``v`` with what nests past ``levels`` replaced by ``"…"`` (its depth is still past the navigator's bound)."""
    if not isinstance(v, (list, dict)):
        return v
    if levels <= 0:
        return "…"
    if isinstance(v, dict):
        return {k: _cut(x, levels - 1) for k, x in v.items()}
    return [_cut(x, levels - 1) for x in v]


def _request_id(obj: Any) -> Any:
    rid = obj.get("id") if isinstance(obj, dict) else None
    if isinstance(rid, bool) or not isinstance(rid, int | str):
        return None
    if isinstance(rid, int) and not int64(rid):
        return None
    if isinstance(rid, str) and _lone_surrogate(rid):
        return None
    return rid


def _lone_surrogate(obj: Any) -> bool:
    stack = [obj]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return False


def _id_of_written(b: bytes) -> Any:
    try:
        obj = orjson.loads(b)
    except orjson.JSONDecodeError:
        return _UNSET
    return obj.get("id", _UNSET) if isinstance(obj, dict) else _UNSET
