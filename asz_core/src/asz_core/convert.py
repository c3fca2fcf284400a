"""The one cattrs converter: all JSON asz writes or reads goes through here."""

from __future__ import annotations

import re
from datetime import datetime
from decimal import Decimal
from fractions import Fraction
from typing import Any, TypeVar

import attrs
import orjson
from cattrs import transform_error
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override
from cattrs.preconf.orjson import make_converter

from .errors import RecordError

T = TypeVar("T")

converter = make_converter(forbid_extra_keys=True, omit_if_default=False)

EXACT_DIGITS = 100
"""Digits an exact number read back may have (of a Decimal, its digits and its exponent's size; of
a Fraction, each of its parts). Amounts, shares and scores asz writes have a few dozen at most;
``1e999999999`` would make a Fraction of a billion digits (minutes, gigabytes) and a few thousand
are past what Python turns back into text."""


def _decimal(v: Any, _: Any) -> Decimal:
    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        raise ValueError(f"expected a number, not {type(v).__name__}")
    try:
        d = Decimal(str(v))
    except ArithmeticError:
        raise ValueError(f"{str(v)[:40]!r} is no number") from None
    if not d.is_finite():
        raise ValueError(f"{str(v)[:40]!r} is no finite number")
    t = d.as_tuple()
    if len(t.digits) > EXACT_DIGITS or abs(int(t.exponent)) > EXACT_DIGITS:
        raise ValueError(f"{str(v)[:40]!r} has more digits than any amount ({EXACT_DIGITS} at most)")
    return d


converter.register_unstructure_hook(Decimal, str)
converter.register_structure_hook(Decimal, _decimal)


INT64 = 2**63
"""Integers asz takes as given in JSON it is sent (a tool argument, a JSON-RPC id) are signed 64-bit:
``-INT64 <= n < INT64``. Past that a value is none of those, and no JSON writer of the answer or the
log would take it."""


def int64(n: int) -> bool:
    """Whether ``n`` is a signed 64-bit integer (see :data:`INT64`)."""
    return -INT64 <= n < INT64


def fraction_text(f: Fraction) -> str:
    """An exact amount as text: a finite decimal when it has one ("12.5", "7"), else a ratio
    ("1000/3", a third of a call's 1,000 tokens). ``Fraction(text)`` reads either back."""
    d, twos, fives = f.denominator, 0, 0
    while d % 2 == 0:
        d, twos = d // 2, twos + 1
    while d % 5 == 0:
        d, fives = d // 5, fives + 1
    if d != 1:
        return f"{f.numerator}/{f.denominator}"
    places = max(twos, fives)
    return format(Decimal(f.numerator * 10**places // f.denominator).scaleb(-places), "f")


# An exact share of calls (a third of a call) is kept as a Fraction.
converter.register_unstructure_hook(Fraction, fraction_text)
_EXACT = re.compile(rf"-?[0-9]{{1,{EXACT_DIGITS}}}(?:\.[0-9]{{1,{EXACT_DIGITS}}}|/[0-9]{{1,{EXACT_DIGITS}}})?")


def exact(v: Any) -> Fraction | None:
    """An exact number as asz writes one (:func:`fraction_text`, ``2/3``, ``0.5``, ``7``, or a JSON
    integer), or None when ``v`` is none: an exponent, NaN, a zero denominator or more than
    :data:`EXACT_DIGITS` digits a part are none (read whole, ``1e999999999`` never ends)."""
    if isinstance(v, int) and not isinstance(v, bool):
        return Fraction(v)
    if not isinstance(v, str) or not _EXACT.fullmatch(v) or re.fullmatch(r"-?[0-9]+/0+", v):
        return None
    return Fraction(v)


def _fraction(v: Any, _: Any) -> Fraction:
    f = exact(v)
    if f is None:
        raise ValueError(f"{str(v)[:40]!r} is no exact number (2/3, 0.5, 7)")
    return f


converter.register_structure_hook(Fraction, _fraction)
converter.register_unstructure_hook(datetime, lambda d: d.isoformat())
converter.register_structure_hook(datetime, lambda v, _: datetime.fromisoformat(v))


def _has_class_field(cls: Any) -> bool:
    return attrs.has(cls) and any(a.name == "class_" for a in attrs.fields(cls))


# A field named ``class_`` (a Python keyword otherwise) is written and read as ``class``.
converter.register_unstructure_hook_factory(
    _has_class_field, lambda cls: make_dict_unstructure_fn(cls, converter, class_=override(rename="class")))
converter.register_structure_hook_factory(
    _has_class_field, lambda cls: make_dict_structure_fn(cls, converter, class_=override(rename="class"),
                                                         _cattrs_forbid_extra_keys=True))


def unstructure(obj: Any) -> Any:
    return converter.unstructure(obj)


def structure(data: Any, cls: type[T]) -> T:
    try:
        return converter.structure(data, cls)
    except Exception as exc:  # cattrs raises ExceptionGroups; users see paths like $.usage.input
        raise RecordError("\n".join(transform_error(exc))) from exc


def dumps(obj: Any, *, indent: bool = False) -> bytes:
    return orjson.dumps(unstructure(obj), option=orjson.OPT_INDENT_2 if indent else 0)


def loads(data: bytes | str, cls: type[T]) -> T:
    return structure(orjson.loads(data), cls)
