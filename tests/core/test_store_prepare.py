"""store.prepare on events an adapter made that JSON cannot hold: an integer outside 64 bits (a
count no runtime wrote, from a third-party adapter or a hostile line it passed on) is stored as
null, unknown, and the rest of the record as given; nothing else of the entry is lost."""

from __future__ import annotations

import orjson

from asz_core.records import Entry
from asz_core.store import Store, prepare


def _entry(events: tuple[dict, ...]) -> Entry:
    return Entry(key="k1", session="s1", stream="main", kind="assistant", file="/x.jsonl", line=3,
                 raw=b'{"uuid":"k1"}', events=events)


def test_a_count_past_64_bits_is_stored_as_unknown_and_the_rest_kept(tmp_path) -> None:
    ev = ({"e": "call", "id": "c1", "usage": {"input": 2**70, "output": 5, "cache_read": -(2**64)}},
          {"e": "text", "call": "c1", "text": "hi", "n": [2**64, 2**64 - 1]})
    p = prepare(_entry(ev))
    events = orjson.loads(p[8])
    assert events[0]["usage"] == {"input": None, "output": 5, "cache_read": None}
    assert events[1] == {"e": "text", "call": "c1", "text": "hi", "n": [None, 2**64 - 1]}
    lean = orjson.loads(p[12][:-1])  # the lean row, with its comma
    assert lean[4][0]["usage"] == {"input": None, "output": 5, "cache_read": None}

    st = Store.open(tmp_path)
    with st.writing() as w:
        conv = w.bind_session("s1", None, "thirdparty")
        assert w.add(conv, _entry(ev))
        w.close_rounds()
    (rec,) = st.records(conv, 1)
    assert rec.events[0]["usage"]["input"] is None and rec.events[0]["usage"]["output"] == 5
    ((_, key, _, _, lean_events),) = st.records(conv, 1, lean=True)
    assert key == "k1" and lean_events[0]["usage"]["input"] is None
