"""Reading a run's stage files back: one reader, one policy, for every part of the judge that
reads them (a later stage reading an earlier one, the close, ``asz judge -show``, ``asz runs``,
cost per target of a run directory; docs/judge.md, "Reading a stage file back").

A stage file is ``stages/<stage>.json`` of the run's directory. Read back, it is one of:

* **usable**: a regular file holding a JSON object of the shape :class:`~.judgment.StageFile`
  (every field, nothing else), naming the stage it is the file of and the conversation, head,
  head digest and window of the run's ``run.json``, with status ``complete`` or ``partial``.
  Its content is used.
* **failed** or **skipped**: the same, with that status. It reads; nothing of its content is
  used; the caller says ``failed (its reason)`` or ``skipped (its reason)``.
* **missing**: no file. The runner writes every stage's file in order, so this is a run still
  going (its later stages not written yet), a run stopped before it closed, or a file deleted.
* **unreadable**, with the words of why, naming the file:

  - not a regular file (a folder, a named pipe, a device): never opened, so nothing waits on a
    FIFO (:mod:`asz_core.regular`);
  - it cannot be read (its permissions, an I/O error);
  - it is not JSON (a truncated file);
  - it is not a stage file: JSON that is not an object, or an object not of the StageFile shape
    (the path of the first field that is not: ``$.run.calls``);
  - it is the file of another stage (``stage`` names another one);
  - it is of another run: its conversation, head, head digest or window is not the run's. A stage
    file does not name its run, so a copy from another run of the same conversation, head and
    window cannot be told apart, and it judged the same record.

  Nothing of an unreadable file is used, not even its status or what it consumed.

What each caller does with it:

* a later stage treats a stage that is not usable as it treats a failed one (the achievement
  stage is skipped without targets, the efficiency stage leaves every sub-task not reviewed
  without the sub-task stage), and when the file is missing or unreadable its note says so;
* the close's ``statement.basis`` gives, per stage, ``used``, ``used (partial)``, ``missing``,
  ``failed (…)``, ``skipped (…)`` or ``unreadable (…)``, then what that leaves unknown, and the
  scores that stage measures are null; close.json's ``stages`` lists an unreadable file as
  ``unreadable``; what an unreadable file consumed is not counted (it cannot be read);
* ``asz judge -show`` and ``asz runs`` list an unreadable file as ``unreadable`` with why;
* the navigation tools of a run (:mod:`asz_core.navigation`) read them pinned to their own
  window and say a file not used as the stages say it.

run.json and close.json are read on :func:`load_json` and :func:`as_record` too (:mod:`.run_files`).

No reader raises for a stage file: every case above is a value.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson
from attrs import frozen

from ..convert import structure
from ..errors import RecordError
from ..regular import LinkRefused, NotRegularFile, TooLarge, read_below, read_regular
from .config import STAGES
from .judgment import Consumed, StageFile, add_consumed

USABLE = ("complete", "partial")
STATUSES = ("complete", "partial", "failed", "skipped")
MISSING = "missing"
UNREADABLE = "unreadable"
PINNED = ("conversation", "head", "head_digest", "window")
"""What a stage file shares with its run's run.json."""


@frozen
class Pin:
    """What a run judges: its conversation, head (``r3``), head digest and window as asked."""

    conversation: str
    head: str
    head_digest: str
    window: str

    @classmethod
    def of_json(cls, run: Any) -> Pin | None:
        """The pin of a run.json's JSON; None when it does not hold one (a broken run.json)."""
        if not isinstance(run, dict) or not all(isinstance(run.get(k), str) for k in PINNED):
            return None
        return cls(*(run[k] for k in PINNED))

    @classmethod
    def of_window(cls, w: Any) -> Pin:
        """The pin of a :class:`~asz_core.window.Window` (its window as :meth:`WindowSpec.text` says it)."""
        return cls(w.conv.id, w.head, w.round.head, w.spec.text())

    def holds(self, other: Pin) -> bool:
        """Whether ``other`` judges what this pin does: the same conversation, head and digest, and
        a window that means the same (``k3-k7`` is ``k3..k7``, ``whole`` is ``all``)."""
        return (self.conversation, self.head, self.head_digest) == (other.conversation, other.head, other.head_digest) \
            and _window(self.window) == _window(other.window)

    @classmethod
    def of_run(cls, run: Any) -> Pin:
        """The pin of a running :class:`~.context.Run`."""
        w = run.window
        return cls(w.conv.id, w.head, w.round.head, run.window_text)


@frozen
class StageRead:
    """One stage file as read back: ``status`` is the file's own when it reads, else ``missing``
    or ``unreadable``; ``problem`` says why it does not read (naming the file); ``data`` is its
    JSON and ``record`` its StageFile when it reads."""

    stage: str
    status: str
    problem: str | None = None
    data: dict[str, Any] | None = None
    record: StageFile | None = None

    @property
    def missing(self) -> bool:
        return self.status == MISSING

    @property
    def usable(self) -> bool:
        """Whether its content is used: it reads (``record`` and ``data`` are there) and is
        complete or partial."""
        return self.status in USABLE

    @property
    def said(self) -> str:
        """What it is, in the words every caller uses: ``complete``, ``partial``, ``failed (why)``,
        ``skipped (why)``, ``missing``, ``unreadable (why)``."""
        if self.record is not None:
            r = self.record
            return r.status + (f" ({r.reason})" if r.reason and r.status not in USABLE else "")
        return MISSING if self.missing else f"{UNREADABLE} ({self.problem})"

    def not_used_note(self) -> str | None:
        """Why its content is not used, in the words every reader says it (None when usable):
        :meth:`not_read_note`'s line, or ``the targets stage is failed (why)``."""
        if self.usable:
            return None
        return self.not_read_note() or f"the {self.stage} stage is {self.said}"

    def not_read_note(self) -> str | None:
        """The note line of a later stage when this file is missing or unreadable (None when it
        reads, whatever its status: a failed stage says so in its own file)."""
        if self.record is not None:
            return None
        return f"the {self.stage} stage's file could not be read ({self.problem})"


def _unreadable(stage: str, why: str) -> StageRead:
    return StageRead(stage, UNREADABLE, f"stages/{stage}.json {why}")


RUN_FILE_BYTES = 256 << 20
"""A run's JSON file larger than this is not read: it holds judgments and one row per model call,
not records (a call-costs.json of 20,000 calls is about 12 MB); a file of gigabytes is none of
asz's, and reading it whole would take the memory of the machine."""


def load_json(path: Path, root: Path | None = None) -> tuple[str, Any, str | None]:
    """A run's JSON file by this module's policy, before its shape is looked at: ``("read", its
    JSON, None)``, ``(MISSING, None, why)`` or ``(UNREADABLE, None, why)``, ``why`` the words
    after the file's name (``is not a regular file (a named pipe)``, ``cannot be read (…)``,
    ``is not JSON (…)``, ``is a symbolic link, never followed``). Only a regular file is opened:
    nothing waits on a FIFO; no link is followed, and with ``root`` (the run directory ``path`` is
    below) none on the way from it either (:func:`~asz_core.regular.read_below`)."""
    try:
        raw = read_below(root, Path(path).relative_to(root), at_most=RUN_FILE_BYTES) if root is not None \
            else read_regular(path, follow=False, at_most=RUN_FILE_BYTES)
    except FileNotFoundError:
        return MISSING, None, "is missing"
    except (LinkRefused, TooLarge) as exc:
        return UNREADABLE, None, f"is {exc}" if isinstance(exc, TooLarge) else str(exc)
    except NotRegularFile as exc:
        return UNREADABLE, None, f"is {exc}"
    except OSError as exc:
        return UNREADABLE, None, f"cannot be read ({exc.strerror or type(exc).__name__})"
    try:
        return "read", orjson.loads(raw), None
    except orjson.JSONDecodeError as exc:
        return UNREADABLE, None, f"is not JSON ({exc})"


def as_record(data: Any, record: type, what: str) -> tuple[Any, str | None]:
    """``data`` (a run's JSON file, read) as its ``record`` when it is a JSON object of that shape:
    ``(the record, None)``; else ``(None, why)`` (``is not a stage file (a JSON array, not an
    object)``, ``is not a run.json (… @ $.head)``): the one shape check of every file of a run."""
    if not isinstance(data, dict):
        return None, f"is not {what} (a JSON {_kind(data)}, not an object)"
    try:
        return structure(data, record), None
    except RecordError as exc:
        return None, f"is not {what} ({str(exc).splitlines()[0]})"


def read(run_dir: Path, stage: str, pin: Pin | None = None) -> StageRead:
    """``stages/<stage>.json`` of ``run_dir``, read by the policy of this module. With ``pin``
    (the run's), a file of another conversation, head or window is unreadable."""
    got, data, why = load_json(Path(run_dir) / "stages" / f"{stage}.json", Path(run_dir))
    if got == MISSING:
        return StageRead(stage, MISSING, f"stages/{stage}.json {why}")
    named = data.get("stage") if why is None and isinstance(data, dict) else None
    if isinstance(named, str) and named != stage:
        why = f"is the {named} stage's file, not the {stage} stage's"
    if why is None:
        record, why = as_record(data, StageFile, "a stage file")
    if why is not None:
        return _unreadable(stage, why)
    if record.status not in STATUSES:
        return _unreadable(stage, f"is not a stage file (status {record.status!r})")
    if pin is not None:
        of = Pin(record.conversation, record.head, record.head_digest, record.window)
        if not pin.holds(of):
            return _unreadable(stage, f"is of another run ({_pin_text(of)}; this run judges {_pin_text(pin)})")
    return StageRead(stage, record.status, None, data, record)


def read_all(run_dir: Path, pin: Pin | None = None) -> dict[str, StageRead]:
    """Every stage's file of ``run_dir``, in stage order (missing ones included)."""
    return {s: read(run_dir, s, pin) for s in STAGES}


def of_run(run: Any, stage: str) -> StageRead:
    """An earlier stage's file, read by a stage of the running :class:`~.context.Run` ``run``."""
    return read(run.path, stage, Pin.of_run(run))


def present(stages: dict[str, StageRead]) -> dict[str, StageRead]:
    """The stage files there are (read or unreadable), without the missing ones."""
    return {s: r for s, r in stages.items() if not r.missing}


def statuses(stages: dict[str, StageRead]) -> dict[str, str]:
    """Stage -> status of each file there is: its own, or ``unreadable``."""
    return {s: r.status for s, r in present(stages).items()}


def consumed(stages: Iterable[StageRead]) -> Consumed:
    """What the stages that read consumed, added up (an unreadable file's is not known)."""
    return add_consumed(r.record.run.consumed for r in stages if r.record is not None)


def _window(text: str) -> Any:
    from ..window import WindowError, WindowSpec

    try:
        return WindowSpec.parse(text)
    except WindowError:
        return text


def _kind(v: Any) -> str:
    return {list: "array", str: "string", bool: "boolean", int: "number", float: "number"}.get(type(v), "null")


def _pin_text(p: Pin) -> str:
    return f"conversation {p.conversation}, head {p.head} ({p.head_digest[:12]}), window {p.window}"


__all__ = ["Pin", "StageRead", "load_json", "as_record", "read", "read_all", "of_run", "present", "statuses", "consumed", "USABLE", "STATUSES",
           "MISSING", "UNREADABLE"]
