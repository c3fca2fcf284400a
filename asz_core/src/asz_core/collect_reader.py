"""Collect's reading, as flat items, in this process or in one forked reader process.

Reading a file (the adapter parsing lines and building events, each entry's events as JSON, its
digest) is most of a first collect's work and needs nothing of the store; writing it (binding
sessions, inserting, the rounds) needs nothing of the parsing. So on a big enough job, where fork
is cheap and there are two CPUs, one forked child runs the adapters' ``read`` over the files to
read, in order, while this process writes what it sent: the two halves run side by side.

What the child sends are the items :func:`read_items` yields, flat tuples of str, bytes and ints
(no event dicts: decoding those in the parent is what made earlier forked readers slower), in
``marshal``'s format (the fastest Python has for exactly these types) in chunks of about :data:`CHUNK_BYTES`, each chunk one frame on a pipe. A file of any size is sent
in chunks, and the pipe's back-pressure keeps the child at most a pipe's worth (eight chunks)
ahead: memory stays bounded, and each side's slower stretches are taken up by the other. The parent decides everything that touches the store, exactly as when it reads itself.

The child never outlives the parent: it dies with it (``PR_SET_PDEATHSIG``) and on a closed pipe.
A child that fails in any way (killed, out of memory) is not trusted past what it sent: the file it
was in is read again here from its start, the items already taken skipped, and the rest read here.
"""

from __future__ import annotations

import marshal
import os
import signal
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from .interfaces import RuntimeAdapter
from .records import Cursor, Entry, Problem
from .store import Prepared, prepare, with_digest
from .textclip import INPUT_DEPTH, depth_cuts
from .workers import fork_pays

Item = tuple[Any, ...]
"""One thing read: a :data:`~asz_core.store.Prepared` entry (13 fields), or one of
``("p", file, line, message)`` (a warning), ``("end", offset, line, state as JSON)`` (the file read to
its end, its cursor then), ``("err", line, message)`` (the adapter failed: reading of the file stopped)."""

Job = tuple[RuntimeAdapter, Path, Cursor]

CHUNK_BYTES = 128 << 10
"""The child sends what it read in frames of about this many bytes of records: eight fit in the
pipe (:data:`PIPE_BYTES`), so either process can run up to a MiB ahead of the other. Which one is
the slower changes along the files (a tool-heavy stretch costs the reader more, a stretch of small
records the writer); with frames of a MiB the pipe held at most one, each process waited for the
other's every frame, and on 95 MB they waited 0.15-0.25 s each (first collect 0.74 s; 0.64 s with
frames of 128 KiB, which also take 3 MB less memory; 64 and 32 KiB measured the same)."""

PIPE_BYTES = 1 << 20
"""The pipe from a reader holds this much (where the system lets a pipe be that big)."""

MIN_BYTES = 12 << 20
"""A collect with less than this to read reads it in this process: forking, the pipe and the
frames cost more than they save below about 10 MB (measured on 2 CPUs: 7.5 MB 0.085 s here, 0.118 s
forked; 16 MB 0.170 s here, 0.146 s forked; 92 MB 0.96 s here, 0.85 s forked)."""


def error_text(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text[:300]}" if text else type(exc).__name__


def read_items(adapter: RuntimeAdapter, f: Path, cursor: Cursor, digest: bool = True) -> Iterator[Item]:
    """What reading ``f`` from ``cursor`` gives collect, ending with its "end" or "err" item. An
    adapter's failure on the file is its "err" (what it yielded before is kept); an entry the store
    cannot hold is a warning naming its line. Without ``digest``, entries come without their
    digest (``store.prepare``)."""
    last, cuts = cursor.line, depth_cuts()
    _listen()
    heard = _heard
    try:
        items = iter(adapter.read(f, cursor))
        while True:
            heard.on = True  # a Python warning raised while the adapter reads is the file's
            try:
                item = next(items, None)
            finally:
                heard.on = False
            if heard:
                line = item.line if item is not None and type(item.line) is int else last
                for text in heard:
                    yield _problem(f, line, text)
                heard.clear()
            if item is None:
                break
            if isinstance(item, Problem):
                yield _problem(item.file, item.line, item.message)
                continue
            line = item.line if type(item.line) is int else 0
            last = max(last, line)
            if depth_cuts() != cuts:  # clip_input cut a request while this entry's events were made
                cuts = depth_cuts()
                yield _problem(item.file, line, f"a tool request nested deeper than {INPUT_DEPTH} levels: kept whole in "
                                                f"the record, its events keep the first {INPUT_DEPTH}")
            got = prepared(item, digest)
            yield got if type(got) is tuple else _problem(item.file, line, got)
        state = orjson.dumps(cursor.state)
    except Exception as exc:  # noqa: BLE001 - a bad file (or an adapter's bug on it) never stops a collect
        # The read position stays where it was, so the next collect reads the file again from there.
        yield ("err", max(cursor.line, last) + 1,
               f"reading stopped ({error_text(exc)}); what came before is kept, the rest is read again at the next collect")
        return
    yield ("end", cursor.offset, cursor.line, state)


class _Heard(list[str]):
    """Python warnings heard while an adapter reads (``on``), as collect warnings' text."""

    on = False


_heard = _Heard()


def _listen() -> None:
    """Have Python warnings raised inside an adapter's ``read`` kept as the file's warnings, in this
    process and in the reader (whose stderr goes nowhere): any other is shown as it was."""
    shown = warnings.showwarning
    if getattr(shown, "asz_reader", False):
        return

    def show(message: Any, category: type[Warning], filename: str, lineno: int, file: Any = None,
             line: str | None = None) -> None:
        if _heard.on:
            _heard.append(f"{category.__name__}: {message}")
        else:
            shown(message, category, filename, lineno, file, line)

    show.asz_reader = True  # type: ignore[attr-defined]
    warnings.showwarning = show


def prepared(e: Entry, digest: bool = True) -> Prepared | str:
    """The entry made ready for the store, or why it cannot be stored (an adapter's bug on an odd line)."""
    try:
        return prepare(e, digest)
    except Exception as exc:  # noqa: BLE001 - RecordError, TypeError, RecursionError: that line only
        return f"not stored ({error_text(exc)})"


def _problem(file: Any, line: Any, message: Any) -> Item:
    return ("p", str(file), line if type(line) is int else 0, str(message))


def as_problem(item: Item) -> Problem:
    return Problem(item[1], item[2], item[3])


# --- the reader process -------------------------------------------------------------------

def worth_forking(total_bytes: int) -> bool:
    """Whether a reader process pays: enough to read, and a second process that pays now
    (:func:`~asz_core.workers.fork_pays`: fork available and the machine not already busy; ``ASZ_PROCESSES``)."""
    return total_bytes >= MIN_BYTES and fork_pays()


class Reader:
    """The items of ``jobs``, file after file, read by a forked child; :meth:`items` gives one
    file's. Use as a context manager: leaving it ends the child. (Two readers, each taking runs of
    files, measured no faster: this process, which writes, is then the slower half.)"""

    def __init__(self, jobs: list[Job]) -> None:
        self.jobs = jobs
        self.child = _Child(jobs, list(range(len(jobs))))
        self._at = 0

    def __enter__(self) -> Reader:
        self.child.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.child.stop()

    def items(self, index: int) -> Iterator[Item]:
        """The items of file ``index`` (files are taken in order, each once), ending with its end or err."""
        assert index == self._at, "files are taken in order"
        self._at += 1
        child = self.child
        taken = 0
        while True:
            if not child.pending:
                frame = next(child.frames, None) if child.frames is not None else None
                if frame is None:
                    break  # the child is gone (or never was): the rest is read here
                child.pending = frame
                frame.reverse()
            item = child.pending.pop()
            taken += 1
            # The child leaves each record's SHA-256 to this process: the child reads and parses,
            # by far the busier of the two (0.05 s of wall less on 95 MB).
            yield with_digest(item) if len(item) == 13 else item  # type: ignore[arg-type]
            if item[0] == "end" or item[0] == "err":
                return
        child.stop()
        adapter, f, cursor = self.jobs[index]
        for i, item in enumerate(read_items(adapter, f, cursor)):
            if i >= taken:  # an adapter reads a file the same way twice: what was taken is skipped
                yield item


class _Child:
    """One reader process, reading the jobs ``wanted`` (indexes, in order) into its pipe."""

    def __init__(self, jobs: list[Job], wanted: list[int]) -> None:
        self.jobs, self.wanted = jobs, wanted
        self.pid = 0
        self.frames: Iterator[list[Item]] | None = None
        self.pending: list[Item] = []

    def start(self) -> None:
        r, w = os.pipe()
        parent = os.getpid()
        try:
            pid = os.fork()
        except OSError:
            os.close(r)
            os.close(w)
            return  # no child: its files are read here
        if pid == 0:
            code = 1
            try:
                os.close(r)
                _serve([self.jobs[i] for i in self.wanted], w, parent)
                code = 0
            finally:
                os._exit(code)
        os.close(w)
        try:
            import fcntl

            fcntl.fcntl(r, 1031, PIPE_BYTES)  # F_SETPIPE_SZ: eight frames fit in the pipe (Linux)
        except (ImportError, OSError):
            pass
        self.pid = pid
        self.file = os.fdopen(r, "rb", buffering=1 << 16)
        self.frames = _frames(self.file)

    def stop(self) -> None:
        if self.frames is not None:
            self.frames = None
            self.file.close()
        if self.pid:
            try:
                os.kill(self.pid, signal.SIGKILL)  # done, or not needed any more: no waiting on it
            except ProcessLookupError:
                pass
            os.waitpid(self.pid, 0)
            self.pid = 0


def _frames(file: Any) -> Iterator[list[Item]]:
    loads = marshal.loads
    while True:
        head = file.read(4)
        if len(head) < 4:
            return
        size = int.from_bytes(head, "little")
        data = file.read(size)
        if len(data) < size:
            return
        try:
            yield loads(data)
        except Exception:  # noqa: BLE001 - a frame cut short: the child's word ends there
            return


def _serve(jobs: list[Job], w: int, parent: int) -> None:
    """The child: read every job, send the items in frames, then end."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the parent's to handle; it ends this child
    # The child says nothing itself: its word is its frames (and the parent's stdout and stderr,
    # which a progress bar's thread may have held at the fork, are never touched here).
    sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - for the child's short life
    _die_with(parent)
    import gc

    gc.disable()  # many short-lived objects, few cycles; the process ends soon
    out = os.fdopen(w, "wb", buffering=0)
    dumps = marshal.dumps
    frame: list[Item] = []
    size = 0

    def send() -> None:
        data = dumps(frame, 4)
        out.write(len(data).to_bytes(4, "little") + data)

    for adapter, f, cursor in jobs:
        for item in read_items(adapter, f, cursor, digest=False):
            frame.append(item)
            size += len(item[7]) + len(item[8]) + len(item[12]) if len(item) == 13 else 64
            if size >= CHUNK_BYTES:
                send()
                frame, size = [], 0
    if frame:
        send()
    out.close()


def _die_with(parent: int) -> None:
    """Have the kernel kill this child when its parent ends (Linux), however the parent ends."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass  # a closed pipe still ends it, at its next frame
    if os.getppid() != parent:  # the parent ended before that was set
        os._exit(0)
