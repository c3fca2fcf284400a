"""The assembled-conversation cache: same answer as assembling, never a stale one."""

from __future__ import annotations

import shutil

from asz_core import api
from asz_core.assembly import assemble
from asz_core.collect import collect

from tests.conftest import CLAUDE_CORPUS, skip_without_corpus

SESSION = CLAUDE_CORPUS / "marot__spotter/test/fixtures/transcripts/258c7280-ae70-4798-800f-63464d01a85d.jsonl"
pytestmark = skip_without_corpus(SESSION)


def _fresh(store, cid, number=None):
    rnd = store.round(cid, number)
    return assemble(cid, store.runtime_of(cid), rnd, store.records(cid, rnd.number))


def test_cached_load_equals_assembly_and_is_kept(store, tmp_path):
    collect([SESSION], store)
    cid = store.conversations()[0].id
    first = api.load(cid, store=store)
    files = list((store.path.parent / "cache" / "assembly" / cid).glob("*.pickle"))
    assert len(files) == 1
    second = api.load(cid, store=store)
    assert second == first == _fresh(store, cid)


def test_each_head_has_its_own_entry(store, tmp_path):
    lines = SESSION.read_bytes().splitlines(keepends=True)
    f = tmp_path / SESSION.name
    f.write_bytes(b"".join(lines[:800]))
    collect([f], store)
    cid = store.conversations()[0].id
    early = api.load(cid, store=store)
    f.write_bytes(b"".join(lines))
    collect([f], store)
    late = api.load(cid, store=store)
    assert late.round.number == 2 and len(late.steps) > len(early.steps)
    assert api.load(cid, "r1", store=store) == early == _fresh(store, cid, 1)
    assert api.load(cid, store=store) == late == _fresh(store, cid, 2)


def test_broken_or_foreign_cache_files_are_assembled_again(store):
    collect([SESSION], store)
    cid = store.conversations()[0].id
    good = api.load(cid, store=store)
    folder = store.path.parent / "cache" / "assembly" / cid
    (path,) = folder.glob("*.pickle")
    path.write_bytes(b"not a pickle")
    assert api.load(cid, store=store) == good
    # A file made by other assembly code (another digest) is removed when a new one is kept.
    stale = folder / path.name.replace(path.stem.rsplit("-", 1)[1], "0000000000000000")
    shutil.copy(path, stale)
    path.unlink()
    assert api.load(cid, store=store) == good
    assert not stale.exists() and path.exists()


def test_a_store_that_cannot_be_written_still_loads(store, monkeypatch):
    collect([SESSION], store)
    cid = store.conversations()[0].id
    import asz_core.assembly_cache as cache

    def refuse(*a, **k):
        raise OSError("read-only")

    monkeypatch.setattr(cache.tempfile, "mkstemp", refuse)
    assert api.load(cid, store=store) == _fresh(store, cid)
