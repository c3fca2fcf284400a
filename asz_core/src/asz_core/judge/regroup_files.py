"""A regroup's files: ``regroups/v<N>/regroup.json`` (its record), the version reserved with its
work directory, and the regroups of a run read back (docs/regroup.md). Below :mod:`.regroup`
(which makes one) and the readers (``asz judge -show``, report.html)."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

from attrs import frozen

from .judgment import Check, EvaluatorRef, KitRef, StageRun
from .person_goals import LabelFile
from .regroup_compare import Comparison, Placement, WorkedOn
from .statement import GoalStatement

VERSION = 1
"""Version of regroup.json's shape."""
FILE = "regroup.json"


@frozen
class RegroupFile:
    """``regroups/v<N>/regroup.json``: one regroup of a closed run, written once."""

    version: int
    regroup: str
    """v1, v2, … in the order they were reserved."""
    run: str
    conversation: str
    head: str
    head_digest: str
    window: str
    label: LabelFile
    """The label file: its path, SHA-256 and whole text, and the goals read from it (P1, …)."""
    status: str
    """``complete``, ``partial`` (asz left out or changed something of the answer: ``note``) or ``failed``."""
    reason: str | None
    note: tuple[str, ...]
    checks: tuple[Check, ...]
    kit: KitRef | None
    evaluator: EvaluatorRef | None
    call: StageRun
    """How the call ran and what it consumed (a failed call's attempts included)."""
    started: str
    ended: str
    placements: tuple[Placement, ...] = ()
    worked_on: tuple[WorkedOn, ...] = ()
    comparison: Comparison | None = None
    """None when the call failed: nothing was compared."""
    outcomes: tuple[GoalStatement, ...] = ()
    """The person's goals' outcomes (P1, …), as the close computes the judge's goals'."""
    outcomes_note: str | None = None


@frozen
class RegroupResult:
    path: Path
    file: RegroupFile


def reserve(run_dir: Path) -> Path:
    """The next version's work directory, made with one ``mkdir``: two regroups at once never share one.
    A ``regroups`` that is not the run's own folder (a link to another run's, or anywhere) is
    refused: what a regroup writes never leaves its run."""
    from ..errors import AszError
    from ..regular import kind_of

    base = run_dir / "regroups"
    try:
        base.mkdir()
    except FileExistsError:
        mode = os.lstat(base).st_mode
        if not stat.S_ISDIR(mode):
            raise AszError(f"{base} is {kind_of(mode)}, not the run's own folder: no regroup is written through it") from None
    # What is listed may be stale by the time it is made (another regroup reserving at once): the
    # mkdir that fails on an existing directory is the reservation, and the next number is tried.
    n = max((int(p.name[1:]) for p in versions(run_dir)), default=0) + 1
    while True:
        try:
            (base / f"v{n}").mkdir()
            return base / f"v{n}"
        except FileExistsError:
            n += 1


_NAME = re.compile(r"v[1-9][0-9]{0,17}")
"""A version's folder as :func:`reserve` names it (ASCII digits: ``str.isdigit`` also takes ``²``,
which ``int`` refuses, and ``١``, which it reads as 1)."""


def versions(run_dir: Path) -> list[Path]:
    """The regroup directories of a run, oldest first (anything else in ``regroups/`` is no regroup)."""
    base = run_dir / "regroups"
    if not base.is_dir():
        return []
    return sorted((p for p in base.iterdir() if _NAME.fullmatch(p.name)), key=lambda p: int(p.name[1:]))


def read(d: Path) -> tuple[dict[str, Any] | None, str | None]:
    """A regroup's regroup.json as JSON, or why it does not read (one still running has none):
    read from its run's folder down, no link followed on the way (``regroups/v1`` and the file)."""
    from .stage_files import MISSING, as_record, load_json

    got, data, why = load_json(d / FILE, d.parent.parent)
    if got == MISSING:
        return None, f"{d / FILE} is missing (a regroup still running, or one that stopped)"
    if why is None:
        _, why = as_record(data, RegroupFile, "a regroup.json")
    return (data, None) if why is None else (None, f"{d / FILE} {why}")


def latest(run_dir: Path) -> dict[str, Any] | None:
    """The latest regroup of the run that compared anything (its call did not fail), as JSON."""
    for d in reversed(versions(run_dir)):
        data, _ = read(d)
        if data is not None and data.get("comparison") is not None:
            return data
    return None


__all__ = ["RegroupFile", "RegroupResult", "reserve", "versions", "read", "latest", "FILE", "VERSION"]
