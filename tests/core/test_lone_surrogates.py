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
