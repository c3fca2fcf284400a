"""Opening transcripts: only regular files, never a named pipe or a device.

A folder of transcripts may hold anything: a FIFO named ``x.jsonl`` (``open`` would wait for a
writer forever), a symlink to ``/dev/zero`` (``read`` would never end), a socket. Every adapter
and every part of asz that reads a runtime's file opens it here.

The check is made on the opened descriptor (``fstat``), not on the path before opening, so the
file cannot be swapped between the check and the read. The open itself is non-blocking, so
opening a FIFO returns at once; the descriptor stays non-blocking, so a "regular" file that would
still block on read (``/proc/kmsg``) fails with :class:`BlockingIOError` instead of waiting.
Symlinks are followed: a link to a regular file is that file.
"""

from __future__ import annotations

import errno
import io
import os
import stat
from typing import BinaryIO

_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0) \
    | getattr(os, "O_BINARY", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_BUFFER = 1 << 16
_KINDS = ((stat.S_ISREG, "a regular file"), (stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"), (stat.S_ISLNK, "a symbolic link"))


def shown_name(name: str | os.PathLike[str]) -> str:
    """A file's name as text every output can hold: the name itself, or, for one that is no UTF-8
    (Python keeps its bytes as lone surrogates, which no JSON nor UTF-8 can write), its bytes
    with the undecodable ones written ``\\xff``."""
    s = os.fspath(name)
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        try:
            return s.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        except UnicodeEncodeError:
            return s.encode("utf-8", "backslashreplace").decode("utf-8")


def kind_of(mode: int) -> str:
    """What a file of this ``st_mode`` is, in words (for a warning)."""
    return next((name for test, name in _KINDS if test(mode)), "neither a file nor a folder")


def why_not_regular(mode: int) -> str | None:
    """Why a file of this ``st_mode`` is not read (``not a regular file (a named pipe)``), or None."""
    return None if stat.S_ISREG(mode) else f"not a regular file ({kind_of(mode)})"


class NotRegularFile(OSError):
    """The path names something that is not a regular file. An :class:`OSError`, so code that
    already handles a file it cannot read handles this one too."""

    def __init__(self, path: str | os.PathLike[str], mode: int) -> None:
        super().__init__(errno.EINVAL, f"not a regular file ({kind_of(mode)})")
        self.filename = os.fspath(path)
        self.kind = kind_of(mode)

    def __str__(self) -> str:
        return f"not a regular file ({self.kind})"


def not_regular(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` (followed through symlinks) is not a regular file to read, or None when it is
    one. For listing and warning; the read itself checks again on what it opened."""
    try:
        st = os.stat(path)
    except OSError:
        return None  # missing or unreadable: the open says why
    return why_not_regular(st.st_mode)


def is_regular(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` (followed through symlinks) is a regular file now."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


class _NoWait(io.FileIO):
    """A descriptor left non-blocking: a read that would wait raises instead of returning None."""

    def readinto(self, b):  # type: ignore[no-untyped-def]
        n = super().readinto(b)
        if n is None:
            raise BlockingIOError(errno.EAGAIN, "reading would wait (not a file with an end)", self.name)
        return n

    def readall(self) -> bytes:
        out = super().readall()
        if out is None:
            raise BlockingIOError(errno.EAGAIN, "reading would wait (not a file with an end)", self.name)
        return out


def open_regular(path: str | os.PathLike[str], *, follow: bool = True) -> BinaryIO:
    """Open ``path`` for reading in binary mode, when it is a regular file (symlinks followed,
    unless ``follow`` is False: then a link is refused as one, ``not a regular file (a symbolic
    link)``, as asz's own files are: a run's files, the assembly cache).

    Raises :class:`NotRegularFile` for a FIFO, a device, a socket or a folder, and the usual
    :class:`OSError` for a missing or unreadable file; never waits.
    """
    try:
        fd = os.open(path, _FLAGS if follow else _FLAGS | _NOFOLLOW)
    except OSError as exc:
        if not follow and exc.errno == errno.ELOOP:  # O_NOFOLLOW on a link
            raise NotRegularFile(path, stat.S_IFLNK) from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(path, mode)
        raw = _NoWait(fd, "rb", closefd=True)
    except BaseException:
        os.close(fd)
        raise
    raw.name = os.fspath(path)  # the path in messages, not the descriptor's number
    return io.BufferedReader(raw, _BUFFER)  # type: ignore[return-value]


class TooLarge(OSError):
    """A file larger than what reads it takes whole (``at_most``): refused before it is read."""

    def __init__(self, path: str | os.PathLike[str], size: int, at_most: int, grew: bool = False) -> None:
        super().__init__(errno.EFBIG, f"larger than {at_most:,} bytes")
        self.filename = os.fspath(path)
        self.size, self.at_most, self.grew = size, at_most, grew

    def __str__(self) -> str:
        return f"larger than {self.at_most:,} bytes ({self.size:,}{' or more: it grew as it was read' if self.grew else ''})"


def _whole(f: BinaryIO, fd: int, path: str | os.PathLike[str], limit: int | None, at_most: int | None) -> bytes:
    if at_most is None:
        return f.read() if limit is None else f.read(limit)
    size = os.fstat(fd).st_size
    if size > at_most:  # a sparse file of terabytes is refused by its size, never read
        raise TooLarge(path, size, at_most)
    data = f.read(at_most + 1)
    if len(data) > at_most:  # it grew while read
        raise TooLarge(path, len(data), at_most, grew=True)
    return data


def read_regular(path: str | os.PathLike[str], limit: int | None = None, *, follow: bool = True,
                 at_most: int | None = None) -> bytes:
    """The bytes of regular file ``path`` (the first ``limit`` of them when given; a link refused
    unless ``follow``; :class:`TooLarge` when it holds more than ``at_most``)."""
    with open_regular(path, follow=follow) as f:
        return _whole(f, f.fileno(), path, limit, at_most)


def open_append(path: str | os.PathLike[str]) -> BinaryIO:
    """``path`` opened to append to (made when missing, 0600 as any file of asz's own), when it is a
    regular file: a FIFO there would make the open wait for a reader (refused at once, ENXIO, or
    as :class:`NotRegularFile`), a device take what is written."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
                     | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a FIFO no one reads: said as what it is
            raise NotRegularFile(path, stat.S_IFIFO) from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(path, mode)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "ab")
    except BaseException:
        os.close(fd)
        raise


class LinkRefused(OSError):
    """A file of asz's own (a run's) reached through a symbolic link: never followed."""

    def __init__(self, path: str | os.PathLike[str], part: str, last: bool) -> None:
        super().__init__(errno.ELOOP, "a symbolic link, never followed")
        self.filename = os.fspath(path)
        self.why = "is a symbolic link, never followed" if last else f"is behind a symbolic link ({part}), never followed"

    def __str__(self) -> str:
        return self.why


_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


def read_below(root: str | os.PathLike[str], rel: str | os.PathLike[str], limit: int | None = None, *,
               at_most: int | None = None) -> bytes:
    """The bytes of the regular file ``root/rel``, walked folder by folder from ``root`` with no link
    followed (``root`` itself may be one: it is what the person named): a link in place of the file
    or of a folder on the way is :class:`LinkRefused`, anything but a regular file
    :class:`NotRegularFile`. A run's files are read so: a ``close.json`` or a ``stages`` folder
    replaced by a link to ``/etc/shadow`` or to another run is never read as this run's."""
    parts = [p for p in os.fspath(rel).replace(os.sep, "/").split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise OSError(errno.EINVAL, "not a path below the run", os.fspath(rel))
    path = os.path.join(os.fspath(root), *parts)
    fd = os.open(root, _DIR)
    try:
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            try:
                nfd = os.open(part, (_FLAGS if last else _DIR) | _NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                    try:
                        if stat.S_ISLNK(os.lstat(part, dir_fd=fd).st_mode):
                            raise LinkRefused(path, part, last) from None
                    except FileNotFoundError:
                        pass
                exc.filename = path
                raise
            os.close(fd)
            fd = nfd
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(path, mode)
        with _NoWait(fd, "rb", closefd=True) as raw:
            fd = -1
            f = io.BufferedReader(raw, _BUFFER)
            return _whole(f, raw.fileno(), path, limit, at_most)
    finally:
        if fd >= 0:
            os.close(fd)
