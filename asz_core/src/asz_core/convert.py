"""The one cattrs converter: all JSON asz writes or reads goes through here."""

from __future__ import annotations

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
converter.register_unstructure_hook(Decimal, str)
converter.register_structure_hook(Decimal, lambda v, _: Decimal(str(v)))


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
converter.register_structure_hook(Fraction, lambda v, _: Fraction(str(v)))
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
