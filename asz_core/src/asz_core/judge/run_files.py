"""Reading a run's own files back, ``run.json``, ``close.json`` and ``call-costs.json``, by the policy its stage files
are read by (:mod:`.stage_files`; docs/judge.md, "Reading a run's own files back").

Either file, read back, is its JSON when it is a regular file holding a JSON object of its
record's shape (:class:`~.judgment.RunFile`, :class:`~.judgment.CloseFile`,
:class:`~.judgment.CallsFile`); else it is missing or
does not read, with the words of why, naming the file: not a regular file (never opened, so
nothing waits on a FIFO), cannot be read, not JSON (a truncated file), not a run file (JSON that
is not an object, or not of the shape: the path of the first field that is not, ``$.head``), and
for close.json and call-costs.json, of another run (the run id it names is not run.json's).

A command given a run whose run.json or close.json does not read stops with that one line
(:class:`RunFileError`, an :class:`~asz_core.errors.AszError`: the exit status of any bad input);
``asz runs``, which lists every run, lists such a run with why and goes on (:func:`look`).
A run without close.json has not closed: that is no error.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import attrs

from ..convert import exact
from ..errors import AszError
from .judgment import CallsFile, CloseFile, RunFile
from .stage_files import MISSING, as_record, load_json

RUN, CLOSE, CALLS = "run.json", "close.json", "call-costs.json"
_RECORDS = {RUN: (RunFile, "a run.json"), CLOSE: (CloseFile, "a close.json"), CALLS: (CallsFile, "a call-costs.json")}
_STRINGS = {name: tuple(f.name for f in attrs.fields(rec) if f.type in ("str", str)) for name, (rec, _) in _RECORDS.items()}
"""The fields of each that are strings: the converter takes any JSON for a string, and a run's
head or window that is no string would pin nothing."""


class RunFileError(AszError):
    """A run's run.json or close.json that does not read; the message names the file and why."""


PINNED = ("conversation", "head", "head_digest", "window")
"""What a call-costs.json says it is of, and must be of its run's run.json: the same run id with
another head's calls would weigh the comparison by calls the run never judged."""


def _exact_score(v: Any) -> bool:
    f = exact(v)
    return f is not None and 0 <= f <= 1


def _insane(name: str, rec: Any) -> str | None:
    """What no file asz wrote holds, though of the right shape (the path of the first such value):
    a count or an amount below zero, a share outside (0, 1], a score that is no exact fraction
    between 0 and 1 (regroup reads the final scores as fractions)."""
    if name == CALLS:
        for i, c in enumerate(rec.calls):
            for k in ("input", "output", "cache_read", "cache_write", "output_floor", "money", "at_least"):
                v = getattr(c, k)
                if v is not None and v < 0:
                    return f"below zero @ $.calls[{i}].{k}"
            for j, x in enumerate(c.to):
                if not 0 < x.share <= 1:
                    return f"a share outside (0, 1] @ $.calls[{i}].to[{j}].share"
    if name == CLOSE and rec.statement is not None:
        for i, t in enumerate(rec.statement.targets):
            for k in ("record_score", "final_score"):
                v = getattr(t.outcome, k)
                if v is not None and not _exact_score(v):
                    return f"a score that is no fraction from 0 to 1 @ $.statement.targets[{i}].outcome.{k}"
        for i, g in enumerate(rec.statement.goals):
            for k in ("main_final_score", "mean_final_score"):
                v = getattr(g, k)
                if v is not None and not _exact_score(v):
                    return f"a score that is no fraction from 0 to 1 @ $.statement.goals[{i}].{k}"
    return None


def look(path: Path, name: str, run: str | None = None,
         pin: dict[str, Any] | None = None) -> tuple[dict[str, Any] | None, str | None]:
    """``name`` (``run.json``, ``close.json`` or ``call-costs.json``) of the run at ``path``: ``(its JSON, None)``;
    ``(None, None)`` when there is none; ``(None, why)`` when it does not read, ``why`` naming it
    as the run's stage files are named (``close.json is not JSON (…)``). With ``run`` (the run id
    its run.json names), a close.json or call-costs.json of another run does not read; with
    ``pin`` (its run.json), a call-costs.json of another conversation, head or window does not
    either. Never raises for the file."""
    p = Path(path) / name
    got, data, why = load_json(p, Path(path))
    if got == MISSING:
        return None, None
    record, what = _RECORDS[name]
    rec = None
    if why is None:
        rec, why = as_record(data, record, what)
    if why is None:
        why = next((f"is not {what} (expected a string @ $.{k})" for k in _STRINGS[name] if not isinstance(data[k], str)),
                   None)
    if why is None:
        bad = _insane(name, rec)
        why = f"is not {what} ({bad})" if bad else None
    if why is None and run is not None and data["run"] != run:
        why = f"is of another run (run {data['run']}; this run is {run})"
    if why is None and pin is not None and name == CALLS:
        other = [k for k in PINNED if data[k] != pin.get(k)]
        if other:
            why = "is of another " + " and ".join(k.replace("_", " ") for k in other) + " than its run.json (" \
                + "; ".join(f"{k} {data[k]!r}, not {pin.get(k)!r}" for k in other) + ")"
    return (None, f"{name} {why}") if why else (data, None)


REPORT = "report.html"


def closed_run_problems(path: Path, stages: dict[str, Any], closed: bool) -> list[str]:
    """What a closed run lacks, one line each: a stage file missing or unreadable (the runner writes
    every stage's, skipped ones too, before close.json: a closed run without one was tampered with,
    and its scores cannot be shown as the run's), report.html missing (a kill between close.json
    and the report: ``asz judge -show RUN --html`` writes it again). ``stages`` is
    :func:`~.stage_files.read_all`'s. Nothing for a run that has not closed."""
    if not closed:
        return []
    out = [f"{r.problem or f'stages/{s}.json is missing'}: the run closed with it, so its scores are not shown"
           for s, r in stages.items() if r.missing or r.status == "unreadable"]
    if not os.path.lexists(Path(path) / REPORT):
        out.append(f"{REPORT} is missing (the run was stopped before it was written): "
                   f"`asz judge -show {Path(path).name} --html` writes it again")
    return out


def run_json(path: Path) -> dict[str, Any]:
    """run.json of the run at ``path``; :class:`RunFileError` when it is missing or does not read."""
    data, why = look(path, RUN)
    if data is None:
        raise RunFileError(f"{Path(path) / RUN} is missing: {path} is no run directory" if why is None
                           else _named(path, why))
    return data


def close_json(path: Path, run: str | None = None) -> dict[str, Any] | None:
    """close.json of the run at ``path`` (whose run.json names the run id ``run``); None when the
    run has not closed; :class:`RunFileError` when it does not read."""
    data, why = look(path, CLOSE, run)
    if why:
        raise RunFileError(_named(path, why))
    return data


def call_costs_json(path: Path, run: str, pin: dict[str, Any] | None = None) -> dict[str, Any]:
    """call-costs.json of the closed run at ``path`` (whose run.json names the run id ``run``, and
    is ``pin``: then one of another head or window does not read): what each call of its window
    cost, saved as it closed; :class:`RunFileError` when it does not read, or is missing (a run
    closed before asz saved it), saying what to do."""
    data, why = look(path, CALLS, run, pin)
    if data is None:
        raise RunFileError(_named(path, why) if why else
                           f"{Path(path) / CALLS} is missing: the run closed before asz saved what each call cost, "
                           f"and this reads only the run's own files: `asz judge -show {run} --costs` writes it from "
                           "the store at the run's head (or judge the conversation again)")
    return data


def _named(path: Path, why: str) -> str:
    """``why`` (``close.json is not JSON (…)``) with the file named by its whole path."""
    return f"{Path(path)}{os.sep}{why}"


__all__ = ["RunFileError", "look", "run_json", "close_json", "call_costs_json", "RUN", "CLOSE", "CALLS"]
