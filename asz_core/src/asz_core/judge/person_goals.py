"""The person's goals: a label file read as the spec says (spec: "The person's goals";
docs/regroup.md).

A label file is YAML holding a ``goals:`` list, each goal the person's own words::

    goals:
      - Finish the post-vote steps of the 0.4.0 release
      - Remove the website pull request step from the post-vote script

asz gives them ids in order, P1, P2 and so on. A file that lists none, or a goal that is empty,
longer than 2,000 bytes or given twice, is not read: the error names the file and the goal. The
file's text and its SHA-256 are kept, so a regroup can be measured against the same goals after
the file changed. Only a regular file is opened (a FIFO never waits).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from attrs import frozen

from ..errors import AszError
from ..regular import NotRegularFile, read_regular

GOAL_BYTES = 2000
"""A goal longer than this (in UTF-8 bytes) is not read."""
FILE_BYTES = 1 << 20
"""A label file larger than this is not read (a list of goals is a few kilobytes)."""


class LabelFileError(AszError):
    """A label file that is not read, and why (naming the file and, where it is one goal's fault, the goal)."""


@frozen
class PersonGoal:
    id: str
    """P1, P2, … in the order of the file."""
    text: str


@frozen
class LabelFile:
    path: str
    sha256: str
    text: str
    """The file's whole text, as read."""
    goals: tuple[PersonGoal, ...]


_SPACE = re.compile(r"\s+")


def _shown(s: str, limit: int = 60) -> str:
    """A goal's words in an error: cut, and quoted with control characters escaped (``repr``)."""
    return repr(s if len(s) <= limit else s[:limit] + "…")


def parse(text: str, where: str) -> tuple[PersonGoal, ...]:
    """The goals of a label file's text (``where`` names the file in errors)."""
    from ruamel.yaml import YAML, YAMLError

    try:
        data = YAML(typ="safe", pure=True).load(text)
    except YAMLError as exc:
        raise LabelFileError(f"{where}: not YAML ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})") from None
    if not isinstance(data, dict) or "goals" not in data:
        raise LabelFileError(f"{where}: a label file holds a goals: list (goals:\\n  - the first goal in your words)")
    extra = sorted(str(k) for k in data if k != "goals")
    if extra:
        raise LabelFileError(f"{where}: only goals: is read; it also holds {', '.join(_shown(k, 30) for k in extra)}")
    goals = data["goals"]
    if goals is None or goals == []:
        raise LabelFileError(f"{where}: it lists no goal")
    if not isinstance(goals, list):
        raise LabelFileError(f"{where}: goals: must be a list of the goals in your words, not {type(goals).__name__}")
    out: list[PersonGoal] = []
    seen: dict[str, str] = {}
    for n, g in enumerate(goals, 1):
        gid = f"P{n}"
        if g is None:  # an item with nothing after its dash: a goal that is empty
            raise LabelFileError(f"{where}: goal {gid} (item {n}) is empty")
        if not isinstance(g, str):
            raise LabelFileError(f"{where}: goal {gid} (item {n}) is {type(g).__name__}, not words: write each goal as text")
        t = g.strip()
        if not t:
            raise LabelFileError(f"{where}: goal {gid} (item {n}) is empty")
        try:
            size = len(t.encode("utf-8"))
        except UnicodeEncodeError as exc:  # YAML's "\ud800" escape: a half of a pair, which no file or prompt can hold
            raise LabelFileError(f"{where}: goal {gid} (item {n}) holds {t[exc.start]!r} at character {exc.start + 1}, "
                                 "half of a UTF-16 pair, which is no text") from None
        if size > GOAL_BYTES:
            raise LabelFileError(f"{where}: goal {gid} {_shown(t)} is {size:,} bytes, longer than {GOAL_BYTES:,}")
        key = _SPACE.sub(" ", t).casefold()
        if key in seen:
            raise LabelFileError(f"{where}: goal {gid} {_shown(t)} is given twice (it is {seen[key]} too)")
        seen[key] = gid
        out.append(PersonGoal(gid, t))
    return tuple(out)


def read(path: str | Path) -> LabelFile:
    """Read a label file (see the module's docstring); a :class:`LabelFileError` naming it when it is not read."""
    p = Path(path)
    try:
        raw = read_regular(p, FILE_BYTES + 1)
    except FileNotFoundError:
        raise LabelFileError(f"{p}: no such label file") from None
    except NotRegularFile as exc:
        raise LabelFileError(f"{p}: {exc}") from None
    except OSError as exc:
        raise LabelFileError(f"{p}: cannot be read ({exc.strerror or type(exc).__name__})") from None
    if len(raw) > FILE_BYTES:
        raise LabelFileError(f"{p}: larger than {FILE_BYTES:,} bytes; a label file is a list of goals")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise LabelFileError(f"{p}: not UTF-8 text (line {line}: byte 0x{raw[exc.start]:02x} at offset {exc.start})") from None
    goals = parse(text, str(p))
    return LabelFile(str(p.resolve()), hashlib.sha256(raw).hexdigest(), text, goals)


__all__ = ["LabelFile", "LabelFileError", "PersonGoal", "read", "parse", "GOAL_BYTES"]
