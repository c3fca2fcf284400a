"""Tables that fit the terminal (:class:`~.doc.FitTable`, here by the name reports import it by)
and the small helpers their cells use. Every console asz prints to a person with is :func:`console`'s
(:mod:`.rich_text`): it makes every segment it writes inert (whatever renderable it came from),
and never turns ``:100:`` into an emoji.

No rich here (the lean command path draws tables without it, :mod:`.plain_render`):
:func:`console`, :func:`render`, :class:`InertText`, :class:`InertConsole` and :func:`inert_text`
are :mod:`.rich_text`'s, imported when first asked for.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from . import times
from .doc import TEXT_MIN, Col, FitTable, Line  # noqa: F401 - the names reports take from here
from .plain import plural  # noqa: F401 - here too, where the reports take it

_RICH = frozenset({"InertText", "InertConsole", "console", "render", "inert_text"})


def __getattr__(name: str) -> Any:
    if name in _RICH:
        from . import rich_text

        return getattr(rich_text, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def folder(path: Any) -> str:
    """A project's last folder name (``/home/me/src/asz`` -> ``asz``), for narrow tables."""
    if not isinstance(path, str) or not path:
        return "—"
    parts = [p for p in path.replace("\\", "/").split("/") if p]
    return parts[-1] if parts else path


def short_paths(paths: Sequence[str]) -> dict[str, str]:
    """Each path as its fewest last folders that no other path of ``paths`` ends with
    (``/home/me/src/asz`` -> ``asz``, or ``src/asz`` beside ``/srv/other/asz``); what is not a
    path (``(no project)``) as itself."""
    split = {p: [x for x in p.replace("\\", "/").split("/") if x] for p in paths if "/" in p or "\\" in p}
    out = {p: p for p in paths}
    for p, parts in split.items():
        for n in range(1, len(parts) + 1):
            tail = parts[-n:]
            if not any(q != p and other[-n:] == tail for q, other in split.items()):
                out[p] = ("…/" if n < len(parts) else "/") + "/".join(tail)
                break
    return out


def zone_label(tz: dt.tzinfo | None) -> str:
    """The zone times are shown in: ``local, CET`` or the name given."""
    if tz is None:
        return f"local, {dt.datetime.now().astimezone().tzname()}"
    return str(getattr(tz, "key", None) or tz)


def when(ts: str | dt.datetime | None, tz: dt.tzinfo | None, fmt: str = "%Y-%m-%d %H:%M") -> str:
    """A runtime's time (or an aware instant) on the wall clock of ``tz`` (None: local), as a person reads it."""
    t = ts if isinstance(ts, dt.datetime) else times.instant(ts)
    return "—" if t is None else times.local(t, tz).strftime(fmt)


