"""The team view: cost and scores per project and per week, across the conversations judged.

Each conversation counts once, by its newest closed run (judging a conversation again never
doubles its cost). A group's cost is its targets' cost; avoidable and not reviewed are parts of
it; the avoidable share is ``avoidable / reviewed`` as a run's efficiency weighs it; achievement
and delivered are the runs' scores weighed by their targets' cost. Money when every run of the
group priced every call of its targets, tokens otherwise (as a run's own scores choose).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from attrs import frozen

BY = ("project", "week")
NO_PROJECT = "(no project)"


@frozen
class Group:
    key: str
    conversations: int
    closed: int
    failed: int
    waiting: int
    """Runs queued or running."""
    unit: str
    """``money`` or ``tokens``: what cost, avoidable and the weights count."""
    cost: Decimal
    avoidable: Decimal
    not_reviewed: Decimal
    achievement: Decimal | None
    delivered: Decimal | None

    @property
    def avoidable_share(self) -> Decimal | None:
        reviewed = self.cost - self.not_reviewed
        return self.avoidable / reviewed if reviewed > 0 else None


def week_of(ts: str | None) -> str:
    """The ISO week (``2026-W48``) of a UTC time; ``(no time)`` when there is none."""
    if not ts:
        return "(no time)"
    try:
        t = dt.datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return "(no time)"
    y, w, _ = t.isocalendar()
    return f"{y}-W{w:02d}"


def _key(row: dict[str, Any], by: str) -> str:
    if by == "project":
        return row.get("project") or NO_PROJECT
    return week_of(row.get("activity") or row.get("queued_at"))


def _amount(tally: Any, unit: str) -> Decimal:
    if not isinstance(tally, dict):
        return Decimal(0)
    return Decimal(str(tally.get("money") or 0)) if unit == "money" else Decimal(int(tally.get("tokens") or 0))


def groups(rows: list[dict[str, Any]], by: str = "project") -> list[Group]:
    """The team's runs (:func:`.summaries.rows`) grouped by project or week, in key order."""
    if by not in BY:
        raise ValueError(f"by must be one of {BY}")
    newest: dict[str, dict[str, Any]] = {}
    for r in sorted(rows, key=lambda r: (r.get("ended") or "", r.get("job_id") or 0)):
        if r["status"] == "closed" and isinstance(r.get("summary"), dict):
            newest[r["conversation"]] = r
    keys = sorted({_key(r, by) for r in rows})
    out = []
    for k in keys:
        mine = [r for r in rows if _key(r, by) == k]
        kept = [r for r in newest.values() if _key(r, by) == k]
        priced = all(int(((r["summary"].get("cost") or {}).get("total") or {}).get("unpriced") or 0) == 0 for r in kept)
        unit = "money" if priced else "tokens"
        cost = avoidable = not_reviewed = Decimal(0)
        weighed: dict[str, Decimal] = {"achievement": Decimal(0), "delivered": Decimal(0)}
        weights: dict[str, Decimal] = {"achievement": Decimal(0), "delivered": Decimal(0)}
        for r in kept:
            c = r["summary"].get("cost") or {}
            total = _amount(c.get("total"), unit)
            cost += total
            avoidable += _amount(c.get("avoidable"), unit)
            not_reviewed += _amount(c.get("not_reviewed"), unit)
            for name in weighed:
                s = (r["summary"].get("scores") or {}).get(name)
                if s is not None and total > 0:
                    weighed[name] += Decimal(str(s)) * total
                    weights[name] += total
        out.append(Group(
            key=k, conversations=len({r["conversation"] for r in mine}), closed=sum(r["status"] == "closed" for r in mine),
            failed=sum(r["status"] == "failed" for r in mine), waiting=sum(r["status"] in ("queued", "running") for r in mine),
            unit=unit, cost=cost, avoidable=avoidable, not_reviewed=not_reviewed,
            achievement=weighed["achievement"] / weights["achievement"] if weights["achievement"] else None,
            delivered=weighed["delivered"] / weights["delivered"] if weights["delivered"] else None))
    return out


def to_json(gs: list[Group], by: str) -> dict[str, Any]:
    def num(d: Decimal | None, places: str = "0.0001") -> str | None:
        return None if d is None else str(d.quantize(Decimal(places)))

    return {"by": by, "groups": [
        {"key": g.key, "conversations": g.conversations, "closed": g.closed, "failed": g.failed, "waiting": g.waiting,
         "unit": g.unit, "cost": str(g.cost), "avoidable": str(g.avoidable), "not_reviewed": str(g.not_reviewed),
         "avoidable_share": num(g.avoidable_share), "achievement": num(g.achievement), "delivered": num(g.delivered)}
        for g in gs]}
