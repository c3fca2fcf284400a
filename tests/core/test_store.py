"""The store (decisions §1, docs/store.md): rounds with numbers, parents, landing times and head
digests; append-only records naming their round; views at a head; incremental reading of grown
files; rewritten files; resumed sessions in either order. Each runs on both backends, the SQLite
file and PostgreSQL (``open_store``); what only one of them has is tested at the end."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import ClassVar

import pytest

from asz_core import api, hookimpl, report
from asz_core.collect import collect
from asz_core.errors import NotFound, StoreError
from asz_core.interfaces import RuntimeAdapter
from asz_core.ledger import build, load_prices
from asz_core.plugins import make_plugin_manager
from asz_core.records import Cursor, Entry, Problem
from asz_core.registry import Registry
from asz_core.store import SCHEMA_VERSION, Store

from tests.conftest import OpenStore

from .helpers import MATCH, ORIGIN, RESUMED, assert_lean_rows_agree, copy, db_rows, fingerprint, head_digest

pytestmark = pytest.mark.usefixtures("corpus")


@pytest.fixture(scope="module")
def registry() -> Registry:
    return Registry()


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def _round_raws(store: Store, conversation: str, number: int) -> list[bytes]:
    return [r[0] for r in db_rows(store, "SELECT raw FROM records WHERE conversation = ? AND round = ? ORDER BY seq",
                                  (conversation, number))]


def _session(path: Path) -> str:
    return path.stem


# -- rounds and heads ----------------------------------------------------------------------------

def test_rounds_have_numbers_parents_landing_times_and_head_digests(open_store: OpenStore, tmp_path: Path, registry: Registry) -> None:
    lines = _lines(ORIGIN)
    chunks = [lines[:50], lines[50:51], lines[51:120], lines[120:]]
    f = tmp_path / ORIGIN.name
    f.write_bytes(b"")
    store = open_store(tmp_path / "home")
    conv = _session(ORIGIN)
    parent = ""
    for n, chunk in enumerate(chunks, 1):
        with open(f, "ab") as fh:
            fh.write(b"".join(chunk))
        result = collect([f], store, registry)
        (rnd,) = result.rounds
        # computed from the file's bytes alone: the records this round added are the chunk's lines
        expected = head_digest(parent, [line.strip() for line in chunk])
        assert (rnd.conversation, rnd.number, rnd.parent, rnd.records, rnd.head) == (conv, n, parent, len(chunk), expected)
        assert _round_raws(store, conv, n) == [line.strip() for line in chunk]
        parent = rnd.head
    rounds = store.rounds(conv)
    assert [r.number for r in rounds] == [1, 2, 3, 4]
    assert [r.parent for r in rounds] == ["", *(r.head for r in rounds[:-1])]
    landed = [r.landed for r in rounds]
    for t in landed:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", t), t
        datetime.fromisoformat(t.replace("Z", "+00:00"))
    assert landed == sorted(landed)
    # the stored rounds say the same as a recomputation from the stored records
    for r in rounds:
        assert r.head == head_digest(r.parent, _round_raws(store, conv, r.number))
    assert store.round(conv).number == 4


def test_records_are_append_only_and_each_names_its_round(open_store: OpenStore, tmp_path: Path, registry: Registry) -> None:
    lines = _lines(ORIGIN)
    f = tmp_path / ORIGIN.name
    f.write_bytes(b"".join(lines[:100]))
    store = open_store(tmp_path / "home")
    collect([f], store, registry)
    before = db_rows(store, "SELECT * FROM records ORDER BY seq")
    with open(f, "ab") as fh:
        fh.write(b"".join(lines[100:]))
    collect([f], store, registry)
    after = db_rows(store, "SELECT * FROM records ORDER BY seq")
    assert after[: len(before)] == before
    assert len(after) == len(lines)
    counts = dict(db_rows(store, "SELECT round, COUNT(*) FROM records GROUP BY round"))
    assert counts == {r.number: r.records for r in store.rounds(_session(ORIGIN))} == {1: 100, 2: len(lines) - 100}


def test_a_view_at_a_head_sees_only_what_had_landed_by_then(open_store: OpenStore, tmp_path: Path, registry: Registry) -> None:
    lines = _lines(ORIGIN)
    conv = _session(ORIGIN)
    f = tmp_path / "grown" / ORIGIN.name
    f.parent.mkdir()
    store = open_store(tmp_path / "home")
    cuts = [60, 130, len(lines)]
    start = 0
    for cut in cuts:
        with open(f, "ab") as fh:
            fh.write(b"".join(lines[start:cut]))
        collect([f], store, registry)
        start = cut
    for n, cut in enumerate(cuts, 1):
        seen = store.records(conv, n)
        assert len(seen) == cut and {r.round for r in seen} == set(range(1, n + 1))
        # the same as a store that only ever had those lines
        alone = tmp_path / f"alone{n}"
        g = alone / ORIGIN.name
        alone.mkdir()
        g.write_bytes(b"".join(lines[:cut]))
        other = open_store(alone / "home")
        collect([g], other, registry)
        assert [(r.key, r.kind, r.stream, r.events) for r in other.records(conv, 1)] == \
               [(r.key, r.kind, r.stream, r.events) for r in seen]
        at = api.load(conv, f"r{n}", store=store)
        only = api.load(conv, store=other)
        assert at.round.number == n
        a, b = (report.show_json(c, build(c, load_prices())) for c in (at, only))
        for d in (a, b):
            d.pop("round"), d.pop("head")
        assert a == b
    # a head can be named by number, "rN", or a prefix of its digest
    r2 = store.rounds(conv)[1]
    assert store.round(conv, 2) == store.round(conv, "r2") == store.round(conv, r2.head[:10]) == r2
    assert api.load(conv[:8], r2.head[:12], store=store).round == r2
    with pytest.raises(NotFound, match=r"has no round 'r9' \(rounds r1…r3\)"):
        store.round(conv, "r9")


# -- an adapter for the odd cases: versioned records, chosen ids ---------------------------------

class KeyValueAdapter(RuntimeAdapter):
    """A ``.kv`` file: one JSON object a line, keyed by its "id"; a record may be rewritten."""

    name: ClassVar[str] = "kv"

    def detect(self, path: Path) -> bool:
        return path.suffix == ".kv"

    def files(self, path: Path) -> list[Path]:
        return [path] if path.is_file() else sorted(path.glob("*.kv"))

    def read(self, path: Path, cursor: Cursor) -> Iterator[Entry | Problem]:
        with open(path, "rb") as f:
            f.seek(cursor.offset)
            for raw in f:
                if not raw.endswith(b"\n"):
                    break
                cursor.offset += len(raw)
                cursor.line += 1
                obj = json.loads(raw)
                yield Entry(key=obj["id"], session=path.stem, stream="main", kind="kv", file=str(path),
                            line=cursor.line, raw=raw.rstrip(b"\n"), versioned=True)


class _KvPlugin:
    @staticmethod
    @hookimpl
    def asz_runtime_adapters():  # type: ignore[no-untyped-def]
        return [KeyValueAdapter]


@pytest.fixture
def kv() -> Registry:
    pm = make_plugin_manager(autoload=False)
    pm.register(_KvPlugin())
    return Registry(pm)


def _kv(path: Path, *items: tuple[str, int]) -> Path:
    path.write_text("".join(json.dumps({"id": k, "v": v}) + "\n" for k, v in items))
    return path


def test_a_changed_record_is_a_new_version_and_a_view_takes_the_newest_landed_by_then(open_store: OpenStore, tmp_path: Path, kv: Registry) -> None:
    store = open_store(tmp_path / "home")
    f = _kv(tmp_path / "c.kv", ("a", 1), ("b", 1))
    assert [x.records for x in collect([f], store, kv).rounds] == [2]
    _kv(f, ("a", 2), ("b", 1), ("c", 1))  # a changed, b the same, c new
    (r2,) = collect([f], store, kv).rounds
    assert r2.records == 2 and r2.head == head_digest(r2.parent, [b'{"id": "a", "v": 2}', b'{"id": "c", "v": 1}'])
    at1 = [(r.key, r.version, store.raw("c", r.seq, upto=1)) for r in store.records("c", 1)]
    at2 = [(r.key, r.version, store.raw("c", r.seq, upto=2)) for r in store.records("c", 2)]
    assert at1 == [("a", 1, b'{"id": "a", "v": 1}'), ("b", 1, b'{"id": "b", "v": 1}')]
    # the newer version, in the place the first one took, under the first one's id (seq)
    assert [r.seq for r in store.records("c", 2)][:2] == [r.seq for r in store.records("c", 1)]
    assert at2 == [("a", 2, b'{"id": "a", "v": 2}'), ("b", 1, b'{"id": "b", "v": 1}'), ("c", 1, b'{"id": "c", "v": 1}')]
    # the lean rows the ledger's summaries read show the same records, in the same places
    for upto in (1, 2):
        assert_lean_rows_agree(store, "c", upto)
    # both versions are kept: nothing was overwritten
    assert db_rows(store, "SELECT key, version, round FROM records ORDER BY seq") == [
        ("a", 1, 1), ("b", 1, 1), ("a", 2, 2), ("c", 1, 2)]
    os.utime(f, ns=(1, 1))  # touched, same content: nothing new
    assert collect([f], store, kv).rounds == ()
    _kv(f, ("a", 1), ("b", 1), ("c", 1))  # back to an old content: a new version again
    (r3,) = collect([f], store, kv).rounds
    assert r3.records == 1 and [r.version for r in store.records("c", 3)] == [3, 1, 1]
    for upto in (1, 2, 3):
        assert_lean_rows_agree(store, "c", upto)


def test_a_digest_prefix_of_digits_alone_still_names_its_round(open_store: OpenStore, tmp_path: Path, kv: Registry) -> None:
    store = open_store(tmp_path / "home")
    f = tmp_path / "d.kv"
    f.write_text("")
    for i in range(200):  # the heads are fixed by the content, so this finds the same one each run
        with open(f, "a") as fh:
            fh.write(json.dumps({"id": str(i), "v": 0}) + "\n")
        (rnd,) = collect([f], store, kv).rounds
        if rnd.head[:4].isdigit() and int(rnd.head[:4]) > 200:
            break
    else:
        pytest.fail("no head starting with four digits")
    assert store.round("d", rnd.head[:4]) == rnd
    assert store.round("d", "r1").number == 1 and store.round("d", "1").number == 1


def test_conversation_names_whole_ids_prefixes_and_sessions(open_store: OpenStore, tmp_path: Path, kv: Registry) -> None:
    store = open_store(tmp_path / "home")
    for stem in ("abc1", "abc10", "abd"):
        collect([_kv(tmp_path / f"{stem}.kv", (f"{stem}:x", 1))], store, kv)
    assert store.resolve("abc1") == "abc1"  # a whole id (also a session id), though it also starts abc10
    assert store.resolve("abc10") == "abc10"
    assert store.resolve("abd") == "abd"
    with pytest.raises(NotFound, match=r"'ab' names 3 conversations \(abc1, abc10, abd\); give more"):
        store.resolve("ab")
    with pytest.raises(NotFound, match=r"'abc' names 2 conversations \(abc1, abc10\); give more of the id"):
        store.resolve("abc")
    with pytest.raises(NotFound, match=r"no conversation 'zz'"):
        store.resolve("zz")


def test_a_key_seen_in_another_conversation_of_the_runtime_continues_it(open_store: OpenStore, tmp_path: Path, kv: Registry,
                                                                       registry: Registry) -> None:
    store = open_store(tmp_path / "home")
    collect([_kv(tmp_path / "s1.kv", ("k1", 1))], store, kv)
    # s2 starts with a copy of s1's record: a resume (what Claude Code does), whatever the runtime
    (rnd,) = collect([_kv(tmp_path / "s2.kv", ("k1", 1), ("k2", 1))], store, kv).rounds
    assert (rnd.conversation, rnd.number, rnd.records) == ("s1", 2, 1)
    assert store.resolve("s2") == "s1"
    # a key of another runtime's conversation is not a copy of it
    f = copy(ORIGIN, tmp_path / "claude")
    collect([f], store, registry)
    uuid = json.loads(_lines(ORIGIN)[1])["uuid"]
    (rnd,) = collect([_kv(tmp_path / "s3.kv", (uuid, 1))], store, kv).rounds
    assert (rnd.conversation, rnd.number) == ("s3", 1)


# -- collecting again ----------------------------------------------------------------------------

def test_collecting_unchanged_files_again_publishes_nothing(open_store: OpenStore, tmp_path: Path, registry: Registry,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    project = copy(MATCH, tmp_path)
    store = open_store(tmp_path / "home")
    first = collect([project], store, registry)
    files = first.files_read
    assert files == len(list(project.glob("*.jsonl"))) and first.rounds
    snapshot = fingerprint(store)
    again = collect([project], store, registry)
    assert (again.rounds, again.records_published, again.files_read, again.files_unchanged) == ((), 0, 0, files)
    for p in project.iterdir():  # touched, not changed
        os.utime(p)
    assert collect([project], store, registry).rounds == ()
    # the same files named from elsewhere, by a relative path
    monkeypatch.chdir(tmp_path)
    rel = collect([Path(project.name)], store, registry)
    assert (rel.rounds, rel.files_read, rel.files_unchanged) == ((), 0, files)
    assert fingerprint(store) == snapshot


def test_a_grown_transcript_publishes_exactly_its_new_lines(open_store: OpenStore, tmp_path: Path, registry: Registry) -> None:
    lines = _lines(ORIGIN)
    f = tmp_path / ORIGIN.name
    f.write_bytes(b"")
    store = open_store(tmp_path / "home")
    conv = _session(ORIGIN)
    for n, line in enumerate(lines, 1):
        half = len(line) // 2
        with open(f, "ab") as fh:
            fh.write(line[:half])  # the runtime is still writing it: nothing to publish yet
        r = collect([f], store, registry)
        assert r.records_published == 0 and r.rounds == ()
        with open(f, "ab") as fh:
            fh.write(line[half:])
        r = collect([f], store, registry)
        assert [(x.number, x.records) for x in r.rounds] == [(n, 1)], f"line {n}"
        assert r.bytes_read == len(line)  # read from where the last collect stopped, not from the start
        assert _round_raws(store, conv, n) == [line.strip()]
    # one round a line, and the same records as reading the whole file at once
    whole = tmp_path / "whole"
    whole.mkdir()
    shutil.copy(ORIGIN, whole / ORIGIN.name)
    once = open_store(whole / "home")
    collect([whole / ORIGIN.name], once, registry)
    assert [(r.key, r.kind, r.stream, r.events) for r in store.records(conv, len(lines))] == \
           [(r.key, r.kind, r.stream, r.events) for r in once.records(conv, 1)]


def _keys_once(store: Store) -> None:
    rows = db_rows(store, "SELECT conversation, key, COUNT(*) FROM records WHERE version = 1 GROUP BY conversation, key HAVING COUNT(*) > 1")
    assert rows == []
    per_key = db_rows(store, "SELECT key, COUNT(DISTINCT conversation) FROM records GROUP BY key HAVING COUNT(DISTINCT conversation) > 1")
    assert per_key == []


def test_a_record_first_landed_after_a_rewrite_is_rewritten_in_its_own_place(open_store: OpenStore, tmp_path: Path, kv: Registry) -> None:
    # The ledger's lean rows look a record's place up by key only once some record has a later
    # version; a record that lands after that and is rewritten later still keeps its own place.
    store = open_store(tmp_path / "home")
    f = _kv(tmp_path / "c.kv", ("a", 1), ("b", 1))
    collect([f], store, kv)
    _kv(f, ("a", 2), ("b", 1), ("c", 1), ("d", 1))  # a rewritten, then c and d new
    collect([f], store, kv)
    _kv(f, ("a", 2), ("b", 1), ("c", 2), ("d", 1), ("e", 1))  # c rewritten, e new
    collect([f], store, kv)
    assert [(r.key, r.version) for r in store.records("c", 3)] == [("a", 2), ("b", 1), ("c", 2), ("d", 1), ("e", 1)]
    for upto in (1, 2, 3):
        assert_lean_rows_agree(store, "c", upto)


def test_a_rewritten_file_does_not_duplicate_records(open_store: OpenStore, tmp_path: Path, registry: Registry) -> None:
    lines = _lines(ORIGIN)
    f = tmp_path / ORIGIN.name
    f.write_bytes(b"".join(lines))
    store = open_store(tmp_path / "home")
    conv = _session(ORIGIN)
    assert collect([f], store, registry).records_published == len(lines)

    # the same content written again (a new file in its place)
    f.unlink()
    f.write_bytes(b"".join(lines))
    assert collect([f], store, registry).records_published == 0
    # cut to its first half, then grown back to the whole
    f.write_bytes(b"".join(lines[:90]))
    assert collect([f], store, registry).records_published == 0
    f.write_bytes(b"".join(lines))
    assert collect([f], store, registry).records_published == 0
    # rewritten: the first lines gone, one line edited in the middle, and one new line at the end
    edited = json.loads(lines[100])
    edited["message"] = {"role": "user", "content": "edited afterwards"}
    new = dict(json.loads(lines[-1]), uuid="00000000-0000-4000-8000-000000000001", parentUuid=json.loads(lines[-1])["uuid"])
    rewritten = lines[5:100] + [json.dumps(edited).encode() + b"\n"] + lines[101:] + [json.dumps(new).encode() + b"\n"]
    f.write_bytes(b"".join(rewritten))
    r = collect([f], store, registry)
    # only the new line: an append-only line is identified by its key (uuid), so an edited copy
    # of one is the same record, as a resumed session's copies are
    assert [(x.number, x.records) for x in r.rounds] == [(2, 1)]
    assert json.loads(_round_raws(store, conv, 2)[0])["uuid"] == new["uuid"]
    assert len(store.records(conv, 2)) == len(lines) + 1
    _keys_once(store)


# -- a resumed session ---------------------------------------------------------------------------

def _resume_store(open_store: OpenStore, tmp_path: Path, registry: Registry, order: list[Path]) -> tuple[Store, list[int]]:
    folder = tmp_path / "files"
    store = open_store(tmp_path / "home")
    published = []
    for src in order:
        published.append(collect([copy(src, folder)], store, registry).records_published)
    return store, published


def _identities(*files: Path) -> set[str]:
    """What makes a Claude Code line one record, computed without asz: its uuid, else its bytes."""
    out = set()
    for f in files:
        for line in f.read_bytes().splitlines():
            if line.strip():
                out.add(json.loads(line).get("uuid") or line.strip().decode())
    return out


@pytest.mark.parametrize(("order", "identity", "rounds"), [
    ("origin first", ORIGIN.stem, [189, 284]),
    ("resumed first", RESUMED.stem, [452, 21]),
])
def test_a_resumed_session_is_one_conversation_in_either_order(open_store: OpenStore, tmp_path: Path, registry: Registry,
                                                               order: str, identity: str, rounds: list[int]) -> None:
    files = [ORIGIN, RESUMED] if order == "origin first" else [RESUMED, ORIGIN]
    store, published = _resume_store(open_store, tmp_path, registry, files)
    (conv,) = store.conversations()
    # the conversation takes the id of the session collected first; both sessions name it
    assert conv.id == identity
    assert conv.sessions == tuple(f.stem for f in files)
    assert store.resolve(ORIGIN.stem) == store.resolve(RESUMED.stem) == identity
    assert [r.records for r in store.rounds(identity)] == rounds == published
    total = len(_identities(ORIGIN, RESUMED))
    assert total == 473 and sum(published) == total  # copied lines are neither stored nor counted twice
    assert len(store.records(identity, 2)) == total
    _keys_once(store)


def test_a_resumed_session_has_the_same_records_and_shape_in_either_order(open_store: OpenStore, tmp_path: Path, registry: Registry) -> None:
    a, _ = _resume_store(open_store, tmp_path / "a", registry, [ORIGIN, RESUMED])
    b, _ = _resume_store(open_store, tmp_path / "b", registry, [RESUMED, ORIGIN])
    ra, rb = a.records(ORIGIN.stem, 2), b.records(RESUMED.stem, 2)
    assert sorted(r.key for r in ra) == sorted(r.key for r in rb)
    ca, cb = api.load(ORIGIN.stem, store=a), api.load(RESUMED.stem, store=b)
    assert len(ca.main_talks) == len(cb.main_talks) and len(ca.model_calls()) == len(cb.model_calls())


def test_a_folder_holding_both_sessions_lands_the_origin_first(open_store: OpenStore, tmp_path: Path, registry: Registry) -> None:
    folder = tmp_path / "project"
    copy(ORIGIN, folder), copy(RESUMED, folder)
    store = open_store(tmp_path / "home")
    (rnd,) = collect([folder], store, registry).rounds
    assert (rnd.conversation, rnd.records) == (ORIGIN.stem, 473)


# -- the file itself -----------------------------------------------------------------------------

def test_a_file_that_is_not_an_asz_store_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "asz.db").write_bytes(b"not a database at all, but long enough to look like a header" * 20)
    with pytest.raises(StoreError, match="is not an asz store"):
        Store.open(tmp_path)


def test_a_store_of_another_schema_version_is_a_clear_error(tmp_path: Path) -> None:
    Store.open(tmp_path).close()
    con = sqlite3.connect(tmp_path / "asz.db")
    con.execute("UPDATE meta SET value = '99' WHERE key = 'schema'")
    con.commit()
    con.close()
    with pytest.raises(StoreError, match=f"has store schema 99; this asz reads {SCHEMA_VERSION} "):
        Store.open(tmp_path)


def test_a_busy_store_is_a_clear_error(tmp_path: Path) -> None:
    one, two = Store.open(tmp_path), Store.open(tmp_path)
    two.db.execute("PRAGMA busy_timeout = 50")
    with one.writing():
        with pytest.raises(StoreError, match="is busy .*another asz is writing"):
            with two.writing():
                pass
    with two.writing():
        pass
