"""Reading JSON-lines transcripts from a cursor: the part every JSONL adapter shares."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from .records import Cursor, Problem
from .regular import open_regular


def read_objects(path: Path, cursor: Cursor) -> Iterator[tuple[int, bytes, dict[str, Any]] | Problem]:
    """Yield ``(line number, line bytes, object)`` for each JSON object line from ``cursor`` on.

    The cursor moves past a line once the caller has taken what was yielded for it (the caller
    asks for the next item), so an interrupted read resumes at the first line not handled. A
    line that is not JSON, or not an object, is a :class:`Problem` and reading goes on. A last
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
                obj = orjson.loads(body)
            except orjson.JSONDecodeError as exc:
                if not complete:
                    yield Problem(fname, lineno, f"truncated last line ({len(raw)} bytes), left for the next collect")
                    return
                yield Problem(fname, lineno, f"not JSON ({exc}); line skipped")
                offset += len(raw)
                cursor.offset, cursor.line = offset, lineno
                continue
            offset += len(raw)
            if isinstance(obj, dict):
                yield lineno, body, obj
            else:
                yield Problem(fname, lineno, "not a JSON object; line skipped")
            cursor.offset, cursor.line = offset, lineno


def walk_jsonl(root: Path, limit: int | None = None) -> Iterator[Path]:
    """Every ``*.jsonl`` file under ``root``, in a stable order (folders and names sorted);
    at most ``limit`` of them when given (a cheap look for ``detect``)."""
    n = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for fn in sorted(filenames):
            if fn.endswith(".jsonl"):
                yield Path(dirpath) / fn
                n += 1
                if limit and n >= limit:
                    return
