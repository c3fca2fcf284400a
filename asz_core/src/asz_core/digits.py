"""Whole numbers in text asz did not write: an id's digits (s12, k3, r7), an environment variable,
an HTTP header, an option a person typed, a count in a tool's output. ASCII digits alone, and at
most :data:`MOST` of them: ``str.isdigit`` takes ``'²'``, which ``int`` refuses, and ``int`` refuses
more than 4,300 digits (Python's bound against slow conversions). Either was a traceback where
such a text is simply no number."""

from __future__ import annotations

MOST = 18
"""Digits of the largest number asz reads from text (under 10**18: within 64 bits)."""

ID_NUMBER = r"[1-9][0-9]{0,17}"
"""An id's number as a regular expression writes it: ``s`` + ID_NUMBER is a step id."""

NUMBER = r"[0-9]{1,18}"
"""A whole number in a text (a count, an exit code) as a regular expression writes it."""


def whole(text: object, most: int = MOST) -> int | None:
    """``text`` as a whole number when it is ASCII digits alone, at most ``most`` of them; else None."""
    if type(text) is not str or not 0 < len(text) <= most or not text.isascii() or not text.isdigit():
        return None
    return int(text)


def id_number(cid: object, prefix: str) -> int | None:
    """The number of an id such as ``s12`` (``prefix`` ``"s"``), or None when ``cid`` is no such id."""
    if type(cid) is not str or not cid.startswith(prefix) or cid[len(prefix):len(prefix) + 1] == "0":
        return None
    return whole(cid[len(prefix):])
