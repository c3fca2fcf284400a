"""A goal's outcome (spec: "How each target ended": "Each goal has an outcome too"), computed in
one place for the judge's goals (the close) and for the person's goals (a regroup).

Its main target, left undetermined when that target was cancelled or replaced by the end; the
most severe class of its judged targets (those not judged said beside it); the finding that
happened first in it, in recorded order; the main target's final score; and the mean of its targets' final scores (over those still wanted
and judged).
Grouping never changes a target's score or the run's: this only reads them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
import re
from fractions import Fraction

from ..convert import exact
from . import statement as S


def frac(f: Fraction | None) -> str | None:
    """An exact value as a statement writes it: ``2/3``, ``1``."""
    if f is None:
        return None
    return str(f.numerator) if f.denominator == 1 else f"{f.numerator}/{f.denominator}"


def _number(fid: str) -> int:
    """A finding's number (``f3``: 3); one that is no ``f`` and ASCII digits sorts last (``str.isdigit``
    takes ``²``, which ``int`` refuses)."""
    return int(fid[1:]) if re.fullmatch(r"f[0-9]{1,18}", fid) else 1 << 62


def goal_statement(gid: str, members: Sequence[str], main: str | None, state: Mapping[str, str],
                   klass: Mapping[str, str], final: Mapping[str, Fraction | None], findings: Mapping[str, Sequence[str]],
                   judged: bool) -> S.GoalStatement:
    """The outcome of goal ``gid`` over its ``members`` (targets of the statement, in order): per
    target its end ``state``, outcome class (``klass``), final score (``final``: None when it was
    not measured) and the ids of its findings (``f3``, numbered in recorded order). ``judged``:
    whether the achievement stage measured the scores (without it, no score: None, never 0)."""
    members = [m for m in members if m in state]
    main = main if main in state and state[main] not in S.APART else None
    ranked = [klass[m] for m in members]
    # the judged targets give the class; only when none was judged is the goal not judged either
    cls = next((c for c in (*S.CLASSES, S.NOT_JUDGED, *S.APART) if c in ranked), None)
    unjudged = tuple(m for m in members if klass[m] == S.NOT_JUDGED)
    ff = [f for m in members for f in findings.get(m, ())]
    first = min(ff, key=_number) if ff else None
    wanted = [m for m in members if state[m] not in S.APART]
    # a target the achievement stage did not judge has no final score: left out of the mean
    finals = [f for m in wanted if (f := final.get(m)) is not None]
    mean = sum(finals, Fraction(0)) / len(finals) if finals and judged else None
    main_final = final.get(main) if main and judged else None
    return S.GoalStatement(gid, tuple(members), main, cls, first, frac(main_final), frac(mean), unjudged)


def of_statement(gid: str, members: Sequence[str], main: str | None, statement: Mapping[str, object]) -> S.GoalStatement:
    """:func:`goal_statement` over a final statement as close.json holds it (its JSON)."""
    targets = [t for t in statement.get("targets", ()) or () if isinstance(t, dict) and t.get("id")]  # type: ignore[union-attr]
    state = {t["id"]: t.get("state", "open") for t in targets}
    klass = {t["id"]: (t.get("outcome") or {}).get("class") for t in targets}
    final: dict[str, Fraction | None] = {}
    for t in targets:
        v = (t.get("outcome") or {}).get("final_score")
        final[t["id"]] = exact(v) if isinstance(v, str) else None  # close.json read back holds only these (run_files)
    judged = bool(targets) and any(v is not None for v in final.values())
    findings = {t["id"]: tuple(t.get("findings") or ()) for t in targets}
    return goal_statement(gid, members, main, state, klass, final, findings, judged)  # type: ignore[arg-type]


__all__ = ["goal_statement", "of_statement", "frac"]
