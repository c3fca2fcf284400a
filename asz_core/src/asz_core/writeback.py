"""Having the system write a file's new pages to disk early, so that the sync which makes a commit
durable waits for the last few only.

A new store's first collect writes its whole file in one transaction (a rollback journal,
``synchronous=FULL``): its commit syncs every page collect wrote, about 0.1 s of waiting on a
95 MB store that the disk could have spent while collect went on writing. Linux's
``sync_file_range(SYNC_FILE_RANGE_WRITE)`` starts that writing and returns at once; it changes
nothing of what the file holds or of when a commit is durable (the commit's own sync still
decides that). Elsewhere (or if the call is refused) nothing is done: the commit syncs it all, as
before.

The file is reached through a descriptor SQLite already has open on it, never one opened here:
closing any descriptor of a file drops every POSIX lock the process holds on it, SQLite's
included, and with them the store's protection from a second writer.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

_SYNC_FILE_RANGE_WRITE = 2
_call: Any = None  # libc's sync_file_range, once looked up; False where there is none


def _sync_file_range() -> Any:
    global _call
    if _call is None:
        _call = False
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                f = ctypes.CDLL(None, use_errno=True).sync_file_range
                f.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
                _call = f
            except (OSError, AttributeError):
                pass
    return _call


def _same(fd: int, st: os.stat_result) -> bool:
    try:
        got = os.fstat(fd)
    except OSError:
        return False
    return (got.st_dev, got.st_ino) == (st.st_dev, st.st_ino)


class Writeback:
    """``push()``: start writing what ``path`` holds that is not on disk yet."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd = -1

    def push(self) -> None:
        call = _sync_file_range()
        if not call:
            return
        try:
            st = os.stat(self.path)
        except OSError:
            return
        if self.fd < 0 or not _same(self.fd, st):
            self.fd = self._open_fd(st)
        if self.fd >= 0:
            call(self.fd, 0, 0, _SYNC_FILE_RANGE_WRITE)  # a refusal (EINVAL, ...) only means no head start

    @staticmethod
    def _open_fd(st: os.stat_result) -> int:
        """A descriptor this process has open on the file (SQLite's), or -1."""
        try:
            fds = os.listdir("/proc/self/fd")
        except OSError:
            return -1
        for name in fds:
            if name.isdigit() and _same(int(name), st):
                return int(name)
        return -1
