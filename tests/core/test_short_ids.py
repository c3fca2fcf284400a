"""Collect's table names the conversations it published by their shortest unique ids, asked of the
store for those alone (``short_ids_of``: each id's nearest names of other conversations), the same
as reading every conversation gives (``short_ids``), over the corpus and ids made to start alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from asz_core import short_ids as short
from asz_core.collect import collect
from asz_core.store import Store

from .helpers import MATCH

pytestmark = pytest.mark.usefixtures("corpus")

# conversation -> its other sessions
ALIKE = {
    "aaaa1111-0001": [], "aaaa1111-0002": [],  # two ids alike past the eighth character
    "bbbb2222-x": ["cccc3333-abc"],  # another's session starts like the next id
    "cccc3333-abd": [],
    "eeee5555-1": ["eeee5555-2"],  # its own session alike: no longer for it
    "ffff": [],  # shorter than eight
}


def test_the_ids_of_a_few_conversations_are_the_ids_of_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store.open(tmp_path / "home")
    collect([MATCH], store)
    with store.writing() as w:
        for conv, sessions in ALIKE.items():
            w.bind_session(conv, None, "claudecode")
            for s in sessions:
                w.bind_session(s, conv, "claudecode")
    every = short.short_ids(store)
    assert every["aaaa1111-0001"] == "aaaa1111-0001" and every["cccc3333-abd"] == "cccc3333-abd"
    assert every["eeee5555-1"] == "eeee5555" and every["ffff"] == "ffff"
    for cid in every:
        assert short.short_ids_of([cid], store) == {cid: every[cid]}
    monkeypatch.setattr(short, "FEW", 10**6)
    assert short.short_ids_of(list(every), store) == every
    monkeypatch.setattr(short, "FEW", 0)  # many: read all, the same
    assert short.short_ids_of(list(every), store) == every
    store.close()
