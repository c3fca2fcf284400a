"""Money as every table, report and page of asz writes it for a person (docs/ledger.md, "Money"):
one format, so that a figure reads the same in ``asz ledger``, ``asz judge -show``, ``asz runs``,
``asz compare`` and report.html. ``--json`` and the run files keep the exact Decimal; this is for
reading only.

- cents, with thousands separators, from a cent up: ``$1,234.57``;
- four significant digits below a cent: ``$0.003412`` (never ``$0.00`` for what cost something);
- ``$0`` only for a zero known to be zero;
- a lower bound (a count unknown, an output known only by its streaming floor, a call unpriced)
  as ``≥ $x``, in the same format;
- ``?`` where the figure is unknown: never a 0 that says nothing was spent.

No rich, no attrs: the lean command path uses it.
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

UNKNOWN = "?"
CENT = Decimal("0.01")


def _decimal(v: Any) -> Decimal | None:
    if v is None:
        return None
    if isinstance(v, Fraction):
        return Decimal(v.numerator) / Decimal(v.denominator)
    try:
        return Decimal(str(v))
    except InvalidOperation:
        return None


def dollars(v: Any) -> str:
    """An amount (Decimal, its exact string as the JSON writes it, int or Fraction); ``?`` for None."""
    d = _decimal(v)
    if d is None or not d.is_finite():
        return UNKNOWN
    if d == 0:
        return "$0"
    sign, a = ("-" if d < 0 else ""), abs(d)
    if a < CENT:
        q = a.quantize(Decimal(1).scaleb(a.adjusted() - 3), ROUND_HALF_EVEN)
        if q < CENT:  # at most four significant digits: trailing zeros say nothing
            return f"{sign}${q.normalize():f}"
    return f"{sign}${a.quantize(CENT, ROUND_HALF_EVEN):,}"


def bound(v: Any) -> str:
    """A lower bound: ``≥ $x``; ``?`` when it is nothing (a bound of 0 says nothing was known)."""
    d = _decimal(v)
    return UNKNOWN if d is None or d == 0 else f"≥ {dollars(d)}"


def figure(known: Any, at_least: Any = None, whole: bool = True) -> str:
    """One cell: the exact figure when it is whole; else the known part and, beside it, the lower
    bound (``$193.77 (≥ $204.72)``), the bound alone where nothing is known (``≥ $0.02``), or ``?``."""
    if whole and known is not None:
        return dollars(known)
    k = _decimal(known)
    b = _decimal(at_least)
    if k is not None and k != 0:
        return dollars(k) if b is None else f"{dollars(k)} ({bound(b)})"
    return bound(b)


def of_amount(a: dict[str, Any] | None) -> str:
    """The money of a run's amount as close.json writes it (``money``, and ``at_least`` where the
    money is not whole); ``?`` for no amount."""
    if not a:
        return UNKNOWN
    return figure(a.get("money"), a.get("at_least"), a.get("at_least") is None and a.get("money") is not None)


__all__ = ["UNKNOWN", "bound", "dollars", "figure", "of_amount"]
