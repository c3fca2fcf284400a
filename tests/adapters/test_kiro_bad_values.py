"""Kiro / Q CLI: a timestamp that is no time, in each place the adapter reads one (a history
entry's user.timestamp and request_metadata.request_start_timestamp_ms, latest_summary's
request, a Kiro 2.x journal line's data.meta.timestamp and its session's updated_at), read as
unknown (as the spec says) and said once per kind and file, naming its first line
(records.said_bad_values). Kiro records no token count per call (its usage is unknown, never
read), so there is no count to check. The documents are made here; the corpus is read whole."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from asz_core.collect import collect
from asz_core.store import Store

from test_kiro import KIRO, load, make_store_db

TAIL = "read as unknown (further such lines of this file are not warned about)"
START_MS = 1757132298830  # 2025-09-06T04:18:18.830Z
ISO_BAD = ["0000-01-01T00:00:00Z", "10000-01-01T00:00:00Z", "garbage", 1767225600,
           "0001-01-01T00:00:00+05:00"]  # the last: before year 1 in UTC (it used to stop the file's reading)
MS_BAD = [-62167219200000, 253402300800000, "garbage", "2025-09-06T04:18:18Z"]  # year 0, year 10000, text, text


def entry(n: int, ts: object = "2025-09-06T13:18:10.123456789+09:00", ms: object = "start") -> dict:
    """History entry ``n``; its request started ``START_MS`` + n seconds unless ``ms`` is given
    (None: not recorded)."""
    user = {"additional_context": "", "env_context": {"env_state": {"current_working_directory": "/w"}},
            "content": {"Prompt": {"prompt": f"prompt {n}"}}, "timestamp": ts, "images": None}
    rm = {"request_id": f"req-{n}", "message_id": f"msg-{n}", "request_start_timestamp_ms": START_MS + n * 1000 if ms == "start" else ms,
          "stream_end_timestamp_ms": START_MS + n * 1000 + 500, "model_id": "claude-sonnet-4"}
    if ms is None:
        del rm["request_start_timestamp_ms"]
    return {"user": user, "assistant": {"Response": {"message_id": f"msg-{n}", "content": f"answer {n}"}}, "request_metadata": rm}


def save(path: Path, entries: list[dict], summary: object = None) -> Path:
    """A /save export with one history entry a line: entry n (0-based) is on line n + 2."""
    body = ",\n".join(json.dumps(e) for e in entries)
    path.write_text('{"conversation_id": "kiro-bad", "next_message": null, "history": [\n' + body + '\n], '
                    f'"transcript": [], "latest_summary": {json.dumps(summary)}, "model_info": {{"model_id": "claude-sonnet-4"}}}}\n')
    return path


@pytest.mark.parametrize("bad", ISO_BAD)
def test_a_user_timestamp_that_is_no_time_is_said_once(bad, tmp_path: Path, store: Store) -> None:
    path = save(tmp_path / "q.json", [entry(0), entry(1, ts=bad), entry(2, ts=bad)])
    said = [str(p) for p in collect([path], store).problems]
    shown = "1767225600" if bad == 1767225600 else f'"{bad}"'
    assert said == [f"{path}:3: a timestamp that is no time (user.timestamp: {shown}); {TAIL}"]
    conv = load(store)["kiro-bad"]
    assert len(conv.model_calls()) == 3
    # The entry's other time stands: its request's start (START_MS + 1 s) for entry 1.
    assert [s.ts for s in conv.person_inputs()] == ["2025-09-06T04:18:10.123Z", "2025-09-06T04:18:19.830Z",
                                                     "2025-09-06T04:18:20.830Z"]


@pytest.mark.parametrize("bad", MS_BAD)
def test_a_request_start_that_is_no_time_is_said_once(bad, tmp_path: Path, store: Store) -> None:
    path = save(tmp_path / "q.json", [entry(0, ts=None), entry(1, ts=None, ms=bad), entry(2, ts=None, ms=bad)])
    said = [str(p) for p in collect([path], store).problems]
    shown = json.dumps(bad)
    assert said == [f"{path}:3: a timestamp that is no time (request_metadata.request_start_timestamp_ms: {shown}); {TAIL}"]
    assert len(load(store)["kiro-bad"].model_calls()) == 3


def test_a_summarys_request_start_that_is_no_time_is_said(tmp_path: Path, store: Store) -> None:
    path = save(tmp_path / "q.json", [entry(0)], summary=["what was done", {"request_id": "r-s", "message_id": "m-s",
                                                                            "request_start_timestamp_ms": "soon"}])
    said = [str(p) for p in collect([path], store).problems]
    assert said == [f'{path}:1: a timestamp that is no time (request_metadata.request_start_timestamp_ms: "soon"); {TAIL}']


def test_a_save_written_again_does_not_say_it_again(tmp_path: Path, store: Store) -> None:
    path = save(tmp_path / "q.json", [entry(0), entry(1, ts="garbage")])
    assert len(collect([path], store).problems) == 1
    save(path, [entry(0), entry(1, ts="garbage"), entry(2, ts="garbage")])
    res = collect([path], store)
    assert res.records_published == 2 and list(res.problems) == []  # entry 2 and the state's new version


def test_a_sqlite_rows_bad_time_names_the_row(tmp_path: Path, store: Store) -> None:
    dbp = tmp_path / "data.sqlite3"
    doc = {"conversation_id": "kiro-db", "history": [entry(0), entry(1, ts="garbage")], "transcript": []}
    make_store_db(dbp, [("/w", json.dumps(doc))], [])
    said = [str(p) for p in collect([dbp], store).problems]
    # A compact value: the whole document on line 1.
    assert said == [f'{dbp}#conversations_v2:kiro-db:1: a timestamp that is no time (user.timestamp: "garbage"); {TAIL}']


def journal(folder: Path, stamps: list[object], updated: object = "2026-04-16T05:31:10.100588Z") -> Path:
    sid = "5a1e0000-0000-4000-8000-0000000000b1"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{sid}.json").write_text(json.dumps({"session_id": sid, "cwd": "/w", "updated_at": updated}))
    lines = []
    for n, t in enumerate(stamps):
        lines.append({"version": "v1", "kind": "Prompt", "data": {"message_id": f"p{n}", "content": [
            {"kind": "text", "data": f"prompt {n}"}], "meta": {"timestamp": t}}})
        lines.append({"version": "v1", "kind": "AssistantMessage", "data": {"message_id": f"a{n}", "content": [
            {"kind": "text", "data": f"answer {n}"}]}})
    path = folder / f"{sid}.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


@pytest.mark.parametrize("bad", ["0000-01-01T00:00:00Z", "10000-01-01T00:00:00Z", "garbage", 10**18])
def test_a_journal_lines_time_that_is_no_time_is_said_once(bad, tmp_path: Path, store: Store) -> None:
    # Epoch seconds are this field's time (a number): 10**18 is past year 9999 read either way.
    path = journal(tmp_path / "cli", [1784869360.25, bad, bad])
    said = [str(p) for p in collect([path], store).problems]
    assert said == [f"{path}:3: a timestamp that is no time (data.meta.timestamp: {json.dumps(bad)}); {TAIL}"]
    assert len(load(store)["5a1e0000-0000-4000-8000-0000000000b1"].model_calls()) == 3


def test_a_sessions_updated_at_that_is_no_time_is_said_once(tmp_path: Path, store: Store) -> None:
    path = journal(tmp_path / "cli", [1784869360], updated=1784869360)
    said = [str(p) for p in collect([path], store).problems]
    assert said == [f"{path.with_suffix('.json')}:1: a timestamp that is no time (updated_at: 1784869360); {TAIL}"]
    journal(tmp_path / "cli", [1784869360, 1784869400], updated=1784869400)
    assert list(collect([path], store).problems) == []  # said for this journal: not again


def test_good_and_absent_times_say_nothing(tmp_path: Path, store: Store) -> None:
    path = save(tmp_path / "q.json", [entry(0), entry(1, ts=None), entry(2, ts=None, ms=None)],
                summary=["done", {"request_id": "r-s", "message_id": "m-s", "request_start_timestamp_ms": START_MS}])
    j = journal(tmp_path / "cli", [1784869360.25, None, "2026-04-16T05:31:10+02:00"])
    assert list(collect([path, j], store).problems) == []


def test_the_corpus_gives_no_new_warning(store: Store) -> None:
    if not KIRO.is_dir():
        pytest.skip(f"corpus not found at {KIRO}")
    assert list(collect([KIRO], store).problems) == []


def test_a_store_row_that_is_no_utf8_is_read_and_the_others_too(tmp_path: Path, store: Store) -> None:
    """One conversation's value holding bytes that are no UTF-8 (a store written by another tool):
    sqlite3 stopped reading the whole store at it, every other conversation lost. That row is read
    with the bytes replaced, said naming it, and the others are read."""
    dbp = tmp_path / "data.sqlite3"
    docs = [{"conversation_id": "kiro-bytes", "history": [entry(0), entry(1)], "transcript": []},
            {"conversation_id": "kiro-after", "history": [entry(5), entry(6)], "transcript": []}]
    make_store_db(dbp, [("/w", json.dumps(docs[0])), ("/x", json.dumps(docs[1]))], [])
    db = sqlite3.connect(dbp)
    db.execute("UPDATE conversations_v2 SET value = CAST(? AS TEXT) WHERE conversation_id = 'kiro-bytes'",
               (json.dumps(docs[0]).encode().replace(b"prompt 0", b"prompt \xff\xfe 0"),))
    db.commit()
    db.close()
    said = [str(p) for p in collect([dbp], store).problems]
    assert said == [f"{dbp}#conversations_v2:kiro-bytes:1: not UTF-8; undecodable bytes replaced"]
    got = load(store)
    assert sorted(got) == ["kiro-after", "kiro-bytes"]
    assert len(got["kiro-bytes"].model_calls()) == 2 and len(got["kiro-after"].model_calls()) == 2
