"""A lone surrogate escape (``"\\ud83d"``: Node's JSON.stringify writes one for a string cut
between the halves of a pair) no longer makes its line "not JSON": the line is read, the lone
half replaced by U+FFFD, its usage counted, and one warning names the file and the first line.
The transcripts are made here, as Claude Code writes such a line."""

from __future__ import annotations

import json

import orjson
import pytest

from asz_core import api
from asz_core.collect import collect
from asz_core.conversations import Filter, ledger_of_one
from asz_core.jsonl import loads_line

from tests.adapters.cc_shapes import Session, text, usage


@pytest.mark.parametrize(("line", "value"), [
    (rb'{"t":"cut \ud83d"}', "cut \ufffd"),
    (rb'{"t":"\ude00 low first"}', "\ufffd low first"),
    (rb'{"t":"pair \ud83d\ude00 and lone \uD83D"}', "pair \U0001f600 and lone \ufffd"),
    (rb'{"t":"\ud83d\ud83d\ude00"}', "\ufffd\U0001f600"),
    (rb'{"t":"not an escape \\\ud83d"}', "not an escape \\\ufffd"),
    (rb'{"\ud83d":1}', None),
])
def test_a_line_with_a_lone_surrogate_is_read(line, value):
    obj, kept, said = loads_line(line)
    assert said and "\\u" in said and "U+FFFD" in said
    if value is not None:
        assert obj == {"t": value}
    else:
        assert obj == {"\ufffd": 1}
    assert orjson.loads(kept) == obj  # what is kept parses again (the store and the navigation read it)


@pytest.mark.parametrize("line", [rb'{"t":"\\ud83d is text"}', rb'{"t":"fine \ud83d\ude00"}'])
def test_a_line_without_one_is_left_as_it_is(line):
    obj, kept, said = loads_line(line)
    assert said is None and kept == line


def test_a_line_broken_otherwise_is_still_not_json():
    with pytest.raises(orjson.JSONDecodeError):
        loads_line(rb'{"t":"\ud83d" oops}')


def _cut_line(o: dict) -> str:
    # As Node writes a string cut mid-pair: the lone half as an escape (json.dumps does the same)
    return json.dumps(o, separators=(",", ":"), ensure_ascii=True)


def test_the_call_of_such_a_line_is_in_the_ledger_and_said_once(tmp_path, store):
    s = Session("sur-1")
    s.user("u1", None, "go")
    s.assistant("a1", "u1", "msg_1", "req_1", text("half an emoji: \ud83d"), usage(100, 0, 0, 7, final=True))
    s.user("u2", "a1", "again \ud83d")
    s.assistant("a2", "u2", "msg_2", "req_2", text("\ude00 and more"), usage(200, 0, 0, 9, final=True))
    path = tmp_path / "cut.jsonl"
    lines = [_cut_line(o) for o in s.lines]
    path.write_text("\n".join(lines) + "\n")
    assert "\\ud83d" in lines[1] and "\\ude00" in lines[3]
    result = collect([path], store)
    said = [str(p) for p in result.problems]
    assert len(said) == 1 and f"{path}:2:" in said[0] and "\\ud83d" in said[0], said
    led = ledger_of_one("sur-1", None, Filter(), store=store)
    assert led.total.calls == 2
    assert led.total.tokens["input"] == 300 and led.total.tokens["output"] == 16
    conv = api.load("sur-1", store=store)
    assert any("\ufffd" in (st.text or "") for st in conv.steps)


# --- every runtime's reader -------------------------------------------------------------------------
# Each runtime's corpus copied with a lone surrogate escape put at the start of its text values (an
# input, a reply, a tool's output, the session's instructions): every conversation and every model
# call is still collected, with the same usage, and each file that holds one is said once, at the
# first line holding one. Codex's first line is its session's look (a surrogate there passed the
# whole file by, unsaid), Kiro's saves and LangSmith's exports are whole documents (their parser
# kept the lone half, and the record was not stored).

import re  # noqa: E402
from pathlib import Path  # noqa: E402
import shutil  # noqa: E402

from tests.conftest import CORPUS  # noqa: E402
from tests.core.helpers import db_rows, run_asz  # noqa: E402

_TEXT_VALUE = re.compile(rb'("(?:text|content|cwd|instructions|message|output|prompt|input|title)":\s*")')


def _cut_texts(raw: bytes) -> bytes:
    return _TEXT_VALUE.sub(rb"\1\\ud83d", raw)


def _collected(home, folder) -> tuple[list[str], dict, list]:
    got = run_asz("collect", str(folder), home=home)
    assert got.returncode == 0 and "Traceback" not in got.stderr, got.stderr[-2000:]
    warnings = [line.removeprefix("warning: ") for line in got.stderr.splitlines() if line.startswith("warning: ")]
    ledger = json.loads(run_asz("ledger", "--json", home=home).stdout)
    convs = json.loads(run_asz("conversations", "--json", home=home).stdout)
    return warnings, ledger, sorted((c["id"], c["model_calls"], c["money"]) for c in convs)  # (talks: a text cut may read otherwise)


@pytest.mark.parametrize("runtime", ["codex", "kiro", "langsmith"])
def test_every_runtime_keeps_a_file_holding_a_lone_surrogate(tmp_path, runtime):
    corpus = CORPUS / runtime
    if not corpus.is_dir():
        pytest.skip(f"corpus not found: {corpus}")
    plain, cut = tmp_path / "plain", tmp_path / "cut"
    shutil.copytree(corpus, plain)
    shutil.copytree(corpus, cut)
    first_line: dict[str, int] = {}
    for f in sorted(cut.rglob("*.json*")):
        raw = f.read_bytes()
        mended = _cut_texts(raw)
        if mended != raw:
            f.write_bytes(mended)
            first_line[str(f)] = raw[: _TEXT_VALUE.search(raw).end()].count(b"\n") + 1
    assert len(first_line) >= 3, "the corpus gave too few files to cut"
    said_plain, ledger_plain, convs_plain = _collected(tmp_path / "h1", plain)
    said_cut, ledger_cut, convs_cut = _collected(tmp_path / "h2", cut)
    assert convs_cut == convs_plain and ledger_cut["total"] == ledger_plain["total"]
    mended = [w for w in said_cut if "a lone surrogate escape (\\ud83d" in w]
    read = {f for (f,) in db_rows(tmp_path / "h1" / "asz.db", "SELECT DISTINCT file FROM records")}
    want = sorted(f"{f}:{n}" for f, n in first_line.items() if f.replace(str(cut), str(plain)) in read)
    assert len(want) >= 3 and sorted(w.split(": a lone")[0] for w in mended) == want
    assert sorted(w.replace(str(cut), "") for w in said_cut if w not in mended) == \
        sorted(w.replace(str(plain), "") for w in said_plain)  # nothing else said, nothing lost


def test_a_kiro_sessions_metadata_holding_one_is_read(tmp_path, store):
    sid = "5a1e0000-0000-4000-8000-0000000000c1"
    folder = tmp_path / "cli"
    folder.mkdir()
    (folder / f"{sid}.json").write_text('{"session_id": "%s", "cwd": "/w\\ud83d", "title": "cut \\ud83d"}' % sid)
    lines = [{"version": "v1", "kind": "Prompt", "data": {"message_id": "p0", "content": [{"kind": "text", "data": "go"}],
                                                          "meta": {"timestamp": 1784869360}}},
             {"version": "v1", "kind": "AssistantMessage", "data": {"message_id": "a0", "content": [
                 {"kind": "text", "data": "done"}]}}]
    path = folder / f"{sid}.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    said = [str(p) for p in collect([path], store).problems]
    assert said == [f"{folder / (sid + '.json')}:1: a lone surrogate escape (\\ud83d, a string cut mid-pair) read as "
                    "U+FFFD; the document is read whole (and any later such escape of it)"]
    conv = api.load(sid, store=store)
    assert conv.project == "/w\ufffd"
    lines.append({"version": "v1", "kind": "Prompt", "data": {"message_id": "p1", "content": [{"kind": "text", "data": "more"}],
                                                              "meta": {"timestamp": 1784869400}}})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert [str(p) for p in collect([path], store).problems] == []  # said for this journal once


# --- a file whose name is no UTF-8 ------------------------------------------------------------------

def test_a_file_whose_name_is_not_utf8_is_skipped_and_the_rest_collected(tmp_path):
    import os

    folder = tmp_path / "src"
    good = Session("good-1")
    good.user("u1", None, "hello")
    good.assistant("a1", "u1", "msg_1", "req_1", text("done"), usage(10, 0, 0, 5, final=True))
    good.write(folder / "good.jsonl")
    bad = Session("bad-1")
    bad.user("v1", None, "hello")
    bad.assistant("b1", "v1", "msg_2", "req_2", text("done"), usage(10, 0, 0, 5, final=True))
    named = bad.write(folder / "x.jsonl")
    os.rename(named, os.fsencode(folder) + b"/t\xff\x1b[2J.jsonl")  # a Latin-1 byte and an escape in its name
    sub = os.fsencode(folder) + b"/proj\xe9"
    os.mkdir(sub)
    bad.write(Path(os.fsdecode(sub)) / "y.jsonl")
    home = tmp_path / "home"
    for _ in range(2):  # and again: nothing kept of them breaks the next collect
        got = run_asz("collect", str(folder), home=home)
        assert got.returncode == 0 and "Traceback" not in got.stderr, got.stderr
        assert f"{folder}/t\\xff\\x1b[2J.jsonl:0: its name is not UTF-8" in got.stderr
        assert f"{folder}/proj\\xe9/y.jsonl:0: its name is not UTF-8" in got.stderr
    convs = json.loads(run_asz("conversations", "--json", home=home).stdout)
    assert [c["id"] for c in convs] == ["good-1"]
    # what collect keeps of its looks and listings is kept still, the other names' with it
    assert str(folder / "good.jsonl").encode() in (home / "cache" / "looks.json").read_bytes()
    assert str(folder).encode() in (home / "cache" / "listings.json").read_bytes()
    got = run_asz("collect", str(folder), "--json", home=tmp_path / "home2")
    assert got.returncode == 0, got.stderr
    assert any("t\\xff\x1b[2J.jsonl:0: its name is not UTF-8" in w for w in json.loads(got.stdout)["warnings"])  # the value whole


def test_a_line_holding_bytes_that_are_no_utf8_is_read_its_usage_kept(tmp_path, store):
    """A byte that is no UTF-8 in a line's text (a file damaged, or written by another tool) made
    the line "not JSON", its call's usage gone: it is read with the byte as U+FFFD, said once."""
    s = Session("bytes-1")
    s.user("u1", None, "go")
    s.assistant("a1", "u1", "msg_1", "req_1", text("caf\u00e9 BYTE"), usage(100, 0, 0, 7, final=True))
    s.user("u2", "a1", "again BYTE")
    s.assistant("a2", "u2", "msg_2", "req_2", text("more"), usage(200, 0, 0, 9, final=True))
    path = tmp_path / "bytes.jsonl"
    raw = "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in s.lines).encode().replace(b"BYTE", b"\xff\xfe")
    path.write_bytes(raw)
    said = [str(p) for p in collect([path], store).problems]
    assert said == [f"{path}:2: bytes that are no UTF-8 (\\xff …) read as U+FFFD; the line is kept (and any later such "
                    "line of this file)"]
    led = ledger_of_one("bytes-1", None, Filter(), store=store)
    assert led.total.calls == 2 and led.total.tokens["input"] == 300
    conv = api.load("bytes-1", store=store)
    assert any("caf\u00e9 \ufffd\ufffd" in (st.text or "") for st in conv.steps)
