"""Work split between this process and one forked child, for a list of independent jobs whose
answers are small (the ledger's summaries: a conversation assembled and priced in, a few KiB of
figures out). The child sends its answers back as JSON through a pipe, so nothing big is pickled.

Only where fork is safe and cheap (Linux, two CPUs or more, ``ASZ_PROCESSES`` not 1) and pays (the
machine not already busy: :func:`fork_pays`, the gate collect's reader uses too). A child that
fails in any way is not trusted: its jobs are done again here, so the answers never depend on it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import orjson

T = TypeVar("T")


def cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _jobs() -> int | None:
    """``ASZ_PROCESSES`` as a number of processes, or None (not set, or not a number)."""
    from .digits import whole

    return whole(os.environ.get("ASZ_PROCESSES", "").strip())


def can_fork() -> bool:
    """Whether a second process can be forked at all: Linux, two CPUs or more, ``ASZ_PROCESSES`` not 1."""
    if not sys.platform.startswith("linux") or _jobs() == 1:
        return False
    return cpus() >= 2


def fork_pays() -> bool:
    """Whether a forked second process pays now: it can be forked, and a CPU is free to run it. On a
    machine already busy (its one-minute load average at least its CPUs) the two processes only take
    turns, and the pipe between them costs more than it saves (collect's reader, measured on 2 CPUs at
    load 3: 1.83 s in one process, 2.02 s forked). ``ASZ_PROCESSES=2`` (or more) forks whatever the load;
    ``ASZ_PROCESSES=1`` never. Collect's reader and :func:`in_two` both ask this."""
    if not can_fork():
        return False
    jobs = _jobs()
    if jobs is not None and jobs >= 2:
        return True  # asked for
    return _load() < cpus()


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


def cpus_idle(wanted: int) -> bool:
    """Whether ``wanted`` CPUs are free right now, this process's own included: nothing else is
    runnable beyond what leaves them free (Linux's count of running tasks in /proc/loadavg, this
    process counted). Unlike the load average (a minute's mean) it says what runs this moment;
    False where it cannot tell (no such file, another layout, or a count below one: this process
    runs, so a sandbox's ``0/0`` says nothing)."""
    try:
        with open("/proc/loadavg", "rb") as f:
            running = int(f.read(256).split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        return False
    return 1 <= running and running - 1 + wanted <= cpus()


def split(items: Sequence[T], weight: Callable[[T], int]) -> tuple[list[int], list[int]]:
    """Indexes of ``items`` in two groups of about equal weight (heaviest first, each to the lighter group)."""
    groups: tuple[list[int], list[int]] = ([], [])
    sums = [0, 0]
    for i in sorted(range(len(items)), key=lambda i: -weight(items[i])):
        g = 0 if sums[0] <= sums[1] else 1
        groups[g].append(i)
        sums[g] += weight(items[i])
    return sorted(groups[0]), sorted(groups[1])


def in_two(items: Sequence[T], weight: Callable[[T], int], job: Callable[[T], Any],
           child_setup: Callable[[], Callable[[T], Any]] | None = None) -> list[Any]:
    """``[job(x) for x in items]``, half of them (by weight) in a forked child when that pays.

    ``job``'s answers must be JSON-able (orjson). ``child_setup``, when given, runs first in the
    child and returns the job it runs there (e.g. the same work over its own database
    connection: a connection is never used across a fork)."""
    if len(items) < 2 or not fork_pays():
        return [job(x) for x in items]
    mine, theirs = split(items, weight)
    r, w = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(r)
        os.close(w)
        return [job(x) for x in items]
    if pid == 0:  # the child: its answers, then gone without running anything of the parent's
        code = 1
        try:
            os.close(r)
            run = child_setup() if child_setup else job
            data = orjson.dumps([run(items[i]) for i in theirs])
            with os.fdopen(w, "wb") as f:
                f.write(data)
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    answers: dict[int, Any] = {}
    try:
        for i in mine:
            answers[i] = job(items[i])
    finally:
        with os.fdopen(r, "rb") as f:
            data = f.read()
        _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) == 0:
        try:
            got = orjson.loads(data)
        except orjson.JSONDecodeError:
            got = None
        if isinstance(got, list) and len(got) == len(theirs):
            answers.update(zip(theirs, got))
    for i in theirs:
        if i not in answers:  # the child failed: done here
            answers[i] = job(items[i])
    return [answers[i] for i in range(len(items))]
