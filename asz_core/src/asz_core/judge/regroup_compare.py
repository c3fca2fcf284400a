"""The two groupings compared, goal by goal (spec: "The person's goals"; decisions.md section 12;
docs/regroup.md). Pure functions over what a regroup kept: each target's placement in the
person's goals, whether each goal was worked on, and the judge's goals.

Per person goal, its targets (those placed in it) against the judge's goals holding them (a
target the judge put in no goal stands alone, a group of its own):

=================  ==============================================================================
``matched``        one group of the judge holds exactly its targets
``split``          its targets lie in several groups of the judge (``merged`` too when one of them
                   also holds other targets)
``merged``         one group of the judge holds its targets and others besides
``missed``         no target serves it, and the conversation worked on it
``not_worked_on``  no target serves it, and the conversation did not work on it
``unknown``        no target serves it, and whether it was worked on is unknown or not answered
=================  ==============================================================================

A goal's main target is its only member still wanted, or the main target of a goal of the judge
that holds the same targets (the person's words that made it main were about those targets
alone); otherwise undetermined, never chosen by cost, recency or size.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from attrs import frozen

from .statement import APART

VERDICTS = ("matched", "split", "merged", "missed", "not_worked_on", "unknown")
PLACED = ("goal", "none", "unknown", "not_answered")
WORKED = ("worked_on", "not_worked_on", "unknown", "not_answered")


@frozen
class Placement:
    """One target of the run in the person's goals."""

    target: str
    placed: str
    """``goal`` (in ``goal``), ``none`` (serves none of the person's goals: the evaluator's
    judgment), ``unknown`` (placed with nothing that shows it, or in a goal the person did not
    give) or ``not_answered`` (the answer left it out)."""
    goal: str | None = None
    cites: tuple[str, ...] = ()
    """The person's inputs cited that show it (only those kept)."""
    given: str | None = None
    """The goal the evaluator gave, when asz did not keep it."""
    reason: str | None = None
    """asz's reason, when it did not keep the evaluator's placement."""
    note: str | None = None


@frozen
class WorkedOn:
    """Whether the conversation worked on one of the person's goals."""

    goal: str
    value: str
    """``worked_on``, ``not_worked_on``, ``unknown`` (worked on, with no input of the person
    cited that shows it) or ``not_answered``."""
    cites: tuple[str, ...] = ()
    reason: str | None = None
    note: str | None = None


@frozen
class GoalComparison:
    goal: str
    """P1"""
    text: str
    verdict: str
    targets: tuple[str, ...]
    """The run's targets placed in it, in the run's order."""
    judge_groups: tuple[str, ...]
    """The judge's groups holding them: a goal id (g1), or ``alone t3`` for a target in no goal."""
    others: tuple[str, ...]
    """Targets those groups hold besides its own (what it is merged with)."""
    main_target: str | None
    main_basis: str
    """``only_member``, ``judge_goal`` (the main target of the judge's goal that holds the same
    targets), ``undetermined``, or ``no_target``."""
    worked_on: str


@frozen
class Comparison:
    goals: tuple[GoalComparison, ...]
    apart: tuple[str, ...]
    """Targets serving none of the person's goals, listed apart."""
    unknown: tuple[str, ...]
    """Targets whose placement is unknown."""
    not_answered: tuple[str, ...]
    alone: tuple[str, ...]
    """Targets the judge put in no goal (each stands alone)."""


def _group(t: Mapping[str, Any]) -> str:
    return str(t["goal"]) if t.get("goal") else f"alone {t['id']}"


def compare(person_goals: Sequence[tuple[str, str]], placements: Sequence[Placement], worked: Sequence[WorkedOn],
            targets: Sequence[Mapping[str, Any]], judge_goals: Sequence[Mapping[str, Any]]) -> Comparison:
    """Compare the person's grouping (``placements``) with the judge's (``targets``' goals and
    ``judge_goals``, the targets stage's JSON), goal by goal."""
    by_id = {t["id"]: t for t in targets}
    order = [t["id"] for t in targets]
    where = {p.target: p for p in placements}
    holds: dict[str, list[str]] = {}
    for tid in order:
        holds.setdefault(_group(by_id[tid]), []).append(tid)
    jmain = {g["id"]: g.get("main_target") for g in judge_goals if isinstance(g, dict) and g.get("id")}
    w_of = {w.goal: w.value for w in worked}
    out = []
    for gid, text in person_goals:
        mine = [t for t in order if where.get(t) is not None and where[t].placed == "goal" and where[t].goal == gid]
        wv = w_of.get(gid, "not_answered")
        if not mine:
            verdict = {"worked_on": "missed", "not_worked_on": "not_worked_on"}.get(wv, "unknown")
            out.append(GoalComparison(gid, text, verdict, (), (), (), None, "no_target", wv))
            continue
        groups = list(dict.fromkeys(_group(by_id[t]) for t in mine))
        others = [t for g in groups for t in holds[g] if t not in mine]
        verdict = "split" if len(groups) > 1 else ("merged" if others else "matched")
        wanted = [t for t in mine if by_id[t].get("state") not in APART]
        main, basis = None, "undetermined"
        if len(wanted) == 1:
            main, basis = wanted[0], "only_member"
        else:
            same = [g for g in groups if not g.startswith("alone ") and set(holds[g]) == set(mine)]
            if same and jmain.get(same[0]) in mine:
                main, basis = jmain[same[0]], "judge_goal"
        out.append(GoalComparison(gid, text, verdict, tuple(mine), tuple(groups), tuple(others), main, basis, wv))
    return Comparison(goals=tuple(out),
                      apart=tuple(t for t in order if t in where and where[t].placed == "none"),
                      unknown=tuple(t for t in order if t in where and where[t].placed == "unknown"),
                      not_answered=tuple(t for t in order if t not in where or where[t].placed == "not_answered"),
                      alone=tuple(t for t in order if not by_id[t].get("goal")))


__all__ = ["Placement", "WorkedOn", "GoalComparison", "Comparison", "compare", "VERDICTS", "PLACED", "WORKED"]
