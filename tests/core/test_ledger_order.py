"""The ledger's rows come in one order for the same files however collect's clock fell: two
identical collects, one making every conversation within the same millisecond and one a
millisecond apart each, list the same rows in the same order (the order collect made them in;
"created, then id" put same-millisecond ones in id order, the others in creation order)."""

from __future__ import annotations

import itertools

import pytest

from asz_core.collect import collect
from asz_core.conversations import Filter, ledger_of_all
from asz_core.ledger_data import all_ledger_json
from asz_core.store import Store

from tests.adapters.cc_shapes import Session, text, usage


def _files(folder):
    out = []
    # file names in reading order, session ids in the reverse alphabetical order
    for n, sid in enumerate(["zz-session", "mm-session", "aa-session"]):
        s = Session(sid, hour=10)  # the same times in each: nothing of the record orders them
        s.user(f"u{n}", None, "go")
        s.assistant(f"a{n}", f"u{n}", f"msg_{n}", f"req_{n}", text("ok"), usage(10 + n, 0, 0, 5, final=True))
        out.append(s.write(folder / f"{n}.jsonl"))
    return out


@pytest.mark.parametrize("by", [None, "talk"])
def test_two_identical_collects_list_the_same_rows_in_the_same_order(tmp_path, monkeypatch, by):
    import asz_core.store as store_mod

    files = _files(tmp_path / "src")
    got = []
    for clock in ("same millisecond", "a millisecond apart"):
        tick = itertools.count()
        stamp = (lambda: "2026-01-01T00:00:00.000Z") if clock == "same millisecond" else \
            (lambda: f"2026-01-01T00:00:00.{next(tick):03d}Z")
        monkeypatch.setattr(store_mod, "_now", stamp)
        st = Store.open(tmp_path / clock)
        collect(files, st)
        got.append([r["key"] for r in all_ledger_json(ledger_of_all(Filter(), by, store=st))["rows"]])
        st.close()
    assert got[0] == got[1]
    if by is None:
        assert got[0] == ["zz-session", "mm-session", "aa-session"]  # as collect made them
