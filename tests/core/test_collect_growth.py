"""A day's growth costs what grew (issue 28): the records of a grown file are added a batch at a
time, the store asked once per batch which of their keys it holds (``Writer.know``), and the store
ends as a collect of the whole file at once leaves it. Over copies of a real corpus project."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from asz_core import collect as collect_mod
from asz_core.collect import LOOKUP_BATCH, collect
from asz_core.registry import Registry
from asz_core.store import Store

from .helpers import MATCH, db_rows

pytestmark = pytest.mark.usefixtures("corpus")

BIG = "e720dd6e-5f22-41c5-b148-e7d65b7ddc58.jsonl"
"""A session of the project (583 lines)."""


@pytest.fixture(scope="module")
def registry() -> Registry:
    return Registry()


def _records(store: Store) -> list[tuple[Any, ...]]:
    return db_rows(store.path, "SELECT conversation, key, version, digest FROM records ORDER BY conversation, key, version")


def _one_file(tmp_path: Path, name: str, lines: slice) -> Path:
    folder = tmp_path / "project"
    folder.mkdir(parents=True, exist_ok=True)
    f = folder / name
    f.write_bytes(b"".join((MATCH / BIG).read_bytes().splitlines(keepends=True)[lines]))
    return folder


def test_a_grown_file_leaves_the_store_as_one_collect_of_the_whole_file(tmp_path: Path, registry: Registry) -> None:
    whole = Store.open(tmp_path / "whole")
    collect([_one_file(tmp_path / "a", BIG, slice(None))], whole, registry)
    grown = Store.open(tmp_path / "grown")
    folder = _one_file(tmp_path / "b", BIG, slice(0, 100))
    first = collect([folder], grown, registry)
    rest = (MATCH / BIG).read_bytes().splitlines(keepends=True)[100:]
    with open(folder / BIG, "ab") as f:
        f.write(b"".join(rest))
    later = collect([folder], grown, registry)
    assert later.records_seen > LOOKUP_BATCH  # more than one batch, each asked of the store
    assert later.bytes_read == sum(map(len, rest))
    assert first.records_published + later.records_published == len(_records(whole))
    assert _records(grown) == _records(whole)
    # read again from the start (its tail no longer what was read): every key is found stored
    (folder / BIG).write_bytes(b"\n" + (folder / BIG).read_bytes())
    again = collect([folder], grown, registry)
    assert again.records_seen > LOOKUP_BATCH and again.records_published == 0
    assert _records(grown) == _records(whole)


def test_entries_read_before_the_reading_failed_are_kept(tmp_path: Path, registry: Registry,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """What a file gave before its reading failed (here: its items themselves, past the
    adapter, as a reader process's pipe would) is published though the last batch of it was
    not added yet when it failed: the same as a file whose adapter stopped at that point."""
    folder = _one_file(tmp_path, BIG, slice(None))
    given = LOOKUP_BATCH + 150
    read_items = collect_mod.read_items

    def entries_then(end: str) -> Any:
        def items(*args: Any, **kwargs: Any) -> Iterator[Any]:
            n = 0
            for item in read_items(*args, **kwargs):
                if len(item) == 13:
                    n += 1
                    if n > given:
                        if end == "raise":
                            raise RuntimeError("the pipe broke")
                        yield ("err", item[5], "stopped here")
                        return
                yield item
        return items

    monkeypatch.setattr(collect_mod, "worth_forking", lambda todo: False)
    monkeypatch.setattr(collect_mod, "read_items", entries_then("err"))
    stopped = Store.open(tmp_path / "stopped")
    expected = collect([folder], stopped, registry)
    monkeypatch.setattr(collect_mod, "read_items", entries_then("raise"))
    broke = Store.open(tmp_path / "broke")
    got = collect([folder], broke, registry)
    assert any("reading stopped (RuntimeError: the pipe broke)" in str(p) for p in got.problems)
    assert got.records_seen == expected.records_seen == given
    assert got.records_published == expected.records_published > LOOKUP_BATCH
    assert _records(broke) == _records(stopped)



def test_a_session_the_store_does_not_hold_is_asked_of_it_once(tmp_path: Path, registry: Registry,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A first collect of a real project asks the store once for each session it has not bound,
    never once per entry (11,533 look-ups for the 95 MB bench folder's 192 sessions, before)."""
    from asz_core.store import Writer

    folder = tmp_path / "project"
    shutil.copytree(MATCH, folder)
    asked: list[str] = []
    original = Writer.conversation_of_session

    def counting(self: Writer, session: str) -> str | None:
        asked.append(session)
        return original(self, session)

    monkeypatch.setattr(Writer, "conversation_of_session", counting)
    got = collect([folder], Store.open(tmp_path / "home"), registry)
    assert got.records_published > LOOKUP_BATCH
    assert len(set(asked)) >= 2  # several sessions, each new to the store
    assert sorted(asked) == sorted(set(asked)), "a session asked of the store more than once"
