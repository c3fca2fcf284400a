"""The runs under ASZ_HOME/runs, newest first: what ``asz runs [CONV]`` lists.

A run is a directory ``runs/<conversation>/<run id>/`` (the conversation's id encoded as a file
name, :mod:`..id_paths`) holding ``run.json`` (written when it
starts, with the process that runs it), a file per stage as each ends, and ``close.json`` when
it closed. A run without ``close.json`` is still going when its process is alive on this machine,
and otherwise was stopped before it closed. Reads JSON only (the stage files by
:mod:`.stage_files`' policy: one that does not read is listed ``unreadable``, with why): no store.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

from attrs import field, frozen

from ..convert import unstructure
from ..id_paths import decode, decode_folder, encode, id_folders
from ..records import USAGE_TYPES
from ..store import Store, asz_home, store_there
from . import stage_files
from .run_files import CLOSE, RUN, closed_run_problems, look

CONSUMED_KEYS = USAGE_TYPES


@frozen
class RunRow:
    run: str
    path: str
    conversation: str
    head: str | None
    window: str | None
    started: str | None
    ended: str | None
    status: str
    """``closed``; ``failed`` (closed, a stage of it failed: its scores lack what that stage was to
    give); ``incomplete`` (closed, but a stage file is missing or does not read: no scores shown,
    ``problems`` says which); ``running`` (not closed, its process alive); ``stopped`` (not closed, its process gone);
    ``unreadable`` (its run.json or close.json does not read: ``unreadable`` says why)."""
    stages: dict[str, str]
    """Stage -> status, of the stage files written so far."""
    evaluators: tuple[str, ...]
    """Each evaluator as given (NAME or NAME:MODEL), once, in stage order."""
    consumed: dict[str, Any]
    """What judging consumed: the close's total, or the stages' so far."""
    scores: dict[str, str | None]
    """The run's scores once the close wrote them (achievement, efficiency, coverage, delivered),
    rounded; None where there was nothing to weigh."""
    units: dict[str, str]
    """What each score weighs: ``money``, or ``tokens`` when a call of the targets is unpriced."""
    unreadable: dict[str, str] = field(factory=dict)
    """Stage (or ``run.json``, ``close.json``) -> why its file does not read (:mod:`.stage_files`,
    :mod:`.run_files`); a stage's status is then ``unreadable``."""
    problems: tuple[str, ...] = ()
    """What a closed run lacks, one line each (:func:`~.run_files.closed_run_problems`)."""
    judging_cost: dict[str, Any] | None = None
    """What judging cost once the close priced it: close.json's ``statement.judging.total`` (exact
    money, and ``at_least`` where it is not whole); None before the close, or with no statement."""


def list_runs(conversation: str | None = None, *, home: Path | None = None, store: Store | None = None) -> list[RunRow]:
    """Every run under ``home`` (default ASZ_HOME), newest first; with ``conversation`` (an id, a
    session id or a prefix of either), that conversation's only."""
    base = (home or asz_home()) / "runs"
    if not base.is_dir():
        return []
    found = id_folders(base)
    if conversation:
        # folders are conversation ids encoded (:mod:`..id_paths`): compared as the ids they decode to
        # (a folder of an earlier scheme does not decode: its runs are taken by what their run.json names)
        cid = _resolve(conversation, home, store)
        found = [(d, rel) for d, rel in found if rel == encode(cid) or decode(rel) is None] if cid is not None \
            else [(d, rel) for d, rel in found if (decode(rel) or "").startswith(conversation) or decode(rel) is None]
    folders = [d for d, _ in found]
    # a run.json that is there names a run, whatever it is: the row says when it does not read; a
    # run folder that is a link is none of these runs (it leads to another run, or anywhere)
    rows = [_row(r) for d in folders for r in d.iterdir() if not r.is_symlink() and os.path.lexists(r / RUN)]
    if conversation:
        rows = [r for r in rows if (r.conversation == cid if cid is not None else r.conversation.startswith(conversation))]
    rows.sort(key=lambda x: (x.started or "", x.run), reverse=True)
    return rows


def list_one(path: Path) -> RunRow:
    """One run directory's row, as :func:`list_runs` reads it."""
    return _row(Path(path))


def _resolve(name: str, home: Path | None, store: Store | None) -> str | None:
    from ..errors import NotFound

    if store is None and not store_there(home):
        return None
    try:
        return (store or Store.open(home)).resolve(name)
    except NotFound:
        return None


def _folder_id(path: Path) -> str:
    """The conversation a run's folder names (its chain of names followed up), else the name."""
    top = path.parent
    while top.name.startswith("~") and top.parent != top:
        top = top.parent
    return decode_folder(top.parent, path.parent) or path.parent.name


def _row(path: Path) -> RunRow:
    run, run_why = look(path, RUN)
    run = run or {}
    close, close_why = look(path, CLOSE, run.get("run"))
    read = stage_files.read_all(path, stage_files.Pin.of_json(run))
    if close is not None:
        consumed = close.get("consumed") or {}
    else:
        consumed = unstructure(stage_files.consumed(read.values()))
    stages = stage_files.statuses(read)
    problems = closed_run_problems(path, read, close is not None and not close_why)
    damaged = any(p.startswith("stages/") for p in problems)
    hidden = damaged or bool(run_why or close_why)  # scores only of a run whose every file reads
    status = "unreadable" if run_why or close_why else "incomplete" if damaged else (
        "failed" if "failed" in stages.values() else "closed") if close is not None \
        else "running" if alive(run.get("pid"), run.get("host")) else "stopped"
    unreadable = {f: why for f, why in ((RUN, run_why), (CLOSE, close_why)) if why}
    evals = run.get("evaluators") or {}
    specs = tuple(dict.fromkeys(str(e.get("spec") or e.get("name")) for e in evals.values() if isinstance(e, dict)))
    return RunRow(run=path.name, path=str(path), conversation=str(run.get("conversation") or _folder_id(path)),
                  head=run.get("head"), window=run.get("window"), started=run.get("started"),
                  ended=close.get("ended") if isinstance(close, dict) else None, status=status,
                  stages=stages, evaluators=specs, consumed=consumed,
                  scores={} if hidden else {k: v for k, (v, _) in _scores(close).items()},
                  units={} if hidden else {k: u for k, (_, u) in _scores(close).items() if u}, problems=tuple(problems),
                  unreadable=unreadable | {s: r.problem for s, r in read.items()
                                           if r.status == stage_files.UNREADABLE and r.problem},
                  judging_cost=None if hidden else _judging_cost(close))


def _judging_cost(close: Any) -> dict[str, Any] | None:
    st = close.get("statement") if isinstance(close, dict) else None
    total = ((st or {}).get("judging") or {}).get("total") if isinstance(st, dict) else None
    return total if isinstance(total, dict) else None


def _scores(close: Any) -> dict[str, tuple[str | None, str | None]]:
    statement = close.get("statement") if isinstance(close, dict) else None
    scores = statement.get("scores") if isinstance(statement, dict) else None
    if not isinstance(scores, dict):
        return {}
    return {name: (None if sc.get("rounded") is None else str(sc["rounded"]), sc.get("unit"))
            for name, sc in scores.items() if isinstance(sc, dict)}


def alive(pid: Any, host: Any) -> bool:
    """Whether the process that wrote a run still runs (on this machine, and still asz's: a pid
    taken again by another program does not count)."""
    if not isinstance(pid, int) or pid <= 0 or host != socket.gethostname():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # someone else's process: it exists
    except OSError:
        return False
    cmdline = Path(f"/proc/{pid}/cmdline")
    if Path("/proc/self/cmdline").exists():  # Linux: look at what the process is
        try:
            words = cmdline.read_bytes()
        except OSError:
            return False
        # Empty while the process is being set up (exec): it exists, and nothing says it is another program.
        return not words or b"asz" in words or b"python" in words
    return True
