"""Running without Python's cycle collector where asz builds many objects and few cycles."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def no_gc() -> Iterator[None]:
    """Assembly and the ledger make hundreds of thousands of small objects that form no cycles;
    the cycle collector, run again and again as the heap grows, took about half of a 90 MB
    conversation's time."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            # What was built is live and stays live: move it out of the collector's sight, or
            # the first collection after this walks all of it (0.3 s on a 90 MB conversation).
            gc.freeze()
            gc.enable()
