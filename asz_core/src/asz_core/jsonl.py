"""Reading JSON-lines transcripts from a cursor: the part every JSONL adapter shares."""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from .looks import shared, walk
from .records import Cursor, Problem
from .regular import open_regular


# An escape of the line's JSON, left to right (so ``\\\\ud83d`` is a backslash and text, never an
# escape): a surrogate pair whole, one \\uXXXX, or any other escape.
_ESCAPE = re.compile(rb"\\u(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})|\\u(d[89a-f][0-9a-f]{2})|\\.", re.I | re.S)
LONE_SURROGATE = "a lone surrogate escape ({}, a string cut mid-pair) read as U+FFFD"


_HINT = re.compile(rb"\\u[dD][89a-fA-F]")  # a surrogate escape, paired or not: the cheap look first


def mend(data: bytes) -> tuple[bytes, str | None, int]:
    """JSON text ``data`` (a line or a whole document) with each lone surrogate escape made
    ``\\ufffd``: ``(the text, the first one mended as written, its offset)``, or ``(data, None,
    -1)`` when it holds none. Escapes are scanned left to right, so ``\\\\ud83d`` (a backslash, then
    text) is left alone and a whole pair is kept; an escape is six bytes either way, so offsets
    and line numbers stay what they were. Every JSON reader of a runtime's file goes through it
    (:func:`loads_line` for lines; Kiro's and LangSmith's whole documents, whose parser would keep
    a lone half that no UTF-8 store can hold)."""
    if _HINT.search(data) is None:
        return data, None, -1
    first: list[re.Match[bytes]] = []

    def one(m: re.Match[bytes]) -> bytes:
        if not m.group(3):
            return m.group()
        if not first:
            first.append(m)
        return b"\\ufffd"

    mended = _ESCAPE.sub(one, data)
    if not first:
        return data, None, -1
    return mended, first[0].group().decode("ascii", "replace"), first[0].start()


def mended_document(found: str) -> str:
    """What a warning says of a whole JSON document (a Kiro save, a LangSmith export) that held a
    lone surrogate escape (the first one, ``found``), once per read of the file."""
    return LONE_SURROGATE.format(found) + "; the document is read whole (and any later such escape of it)"


def loads_line(body: bytes) -> tuple[Any, bytes, str | None]:
    """A JSON line's value, the line as kept, and what was mended, or None. A line holding a lone
    surrogate escape (``"\\ud83d"``: Node's JSON.stringify writes one for a string cut between
    the two halves of a pair, so Claude Code can) is no JSON to orjson; it is read with each lone
    one replaced by ``\\ufffd`` (U+FFFD, :func:`mend`), and kept so: its usage counts like any
    line's. So is a line holding bytes that are no UTF-8 (each as U+FFFD). Raises
    :class:`orjson.JSONDecodeError` for a line that is not JSON otherwise."""
    try:
        return orjson.loads(body), body, None
    except orjson.JSONDecodeError:
        mended, found, _ = mend(body)
        said = LONE_SURROGATE.format(found) if found is not None else None
        try:
            mended.decode("utf-8")
        except UnicodeDecodeError as exc:
            # A byte that is no UTF-8 (a file damaged, or written by another tool) loses no line either.
            bad = mended[exc.start:exc.end]
            mended = mended.decode("utf-8", "replace").encode("utf-8")
            said = (f"{said}; " if said else "") + f"bytes that are no UTF-8 (\\x{bad[0]:02x} …) read as U+FFFD"
        if said is None:
            raise
        return orjson.loads(mended), mended, said


def read_objects(path: Path, cursor: Cursor) -> Iterator[tuple[int, bytes, dict[str, Any]] | Problem]:
    """Yield ``(line number, line bytes, object)`` for each JSON object line from ``cursor`` on.

    The cursor moves past a line once the caller has taken what was yielded for it (the caller
    asks for the next item), so an interrupted read resumes at the first line not handled. A
    line that is not JSON, or not an object, is a :class:`Problem` and reading goes on; a line
    with a lone surrogate escape is read (:func:`loads_line`), said once per read of the file. A last
    line with no newline that does not parse is still being written: it is left, with a
    Problem, for the next read. A file that cannot be opened (not a regular file: a FIFO, a
    device) is one Problem, and nothing is read.
    """
    fname = str(path)
    try:
        f = open_regular(path)
    except OSError as exc:
        yield Problem(fname, 0, f"cannot read ({exc}); file skipped")
        return
    with f:
        f.seek(cursor.offset)
        offset, lineno = cursor.offset, cursor.line
        mended_said = False
        while True:
            try:
                raw = f.readline()
            except OSError as exc:  # a read that fails or would wait (/proc/kmsg behind a symlink)
                yield Problem(fname, lineno + 1, f"cannot read on ({exc}); the rest of the file is skipped")
                return
            if not raw:
                return
            lineno += 1
            complete = raw.endswith(b"\n")
            body = raw.strip()
            if not body:
                if not complete:
                    return
                offset += len(raw)
                cursor.offset, cursor.line = offset, lineno
                continue
            try:
                obj, body, mended = loads_line(body)
            except orjson.JSONDecodeError as exc:
                if not complete:
                    yield Problem(fname, lineno, f"truncated last line ({len(raw)} bytes), left for the next collect")
                    return
                yield Problem(fname, lineno, f"not JSON ({exc}); line skipped")
                offset += len(raw)
                cursor.offset, cursor.line = offset, lineno
                continue
            offset += len(raw)
            if mended is not None and not mended_said:
                mended_said = True  # once a file's read: the line of the first, the rest the same
                yield Problem(fname, lineno, mended + "; the line is kept (and any later such line of this file)")
            if isinstance(obj, dict):
                yield lineno, body, obj
            else:
                yield Problem(fname, lineno, "not a JSON object; line skipped")
            cursor.offset, cursor.line = offset, lineno


def walk_jsonl(root: Path, limit: int | None = None) -> Iterator[Path]:
    """Every ``*.jsonl`` file under ``root``, in a stable order (folders and names sorted);
    at most ``limit`` of them when given (a cheap look for ``detect``)."""
    found = shared(("jsonl", os.fspath(root)), lambda: _jsonl_under(root))
    return found if not limit else itertools.islice(found, limit)


def _jsonl_under(root: Path) -> Iterator[Path]:
    for dirpath, _, filenames in walk(root):
        folder = None
        for fn in filenames:
            if fn.endswith(".jsonl"):
                folder = folder or Path(dirpath)
                yield folder / fn
