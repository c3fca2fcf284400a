"""Property: over windows of corpus conversations, at a head and at an earlier one, no answer of
any tool, on any page, shows anything recorded after the window's end or of a later head, and
every answer is at most 16 KiB."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from asz_core import navigation as N
from asz_core import window as W
from asz_core.registry import Registry
from asz_core.store import Store

from . import winhelp
from .helpers import CLAUDE_CORPUS
from .test_navigation import every_answer

ADCD = CLAUDE_CORPUS / "crypto590__personal-ai-infrastructure" / "projects" / "-Users-coreyyoung-Desktop-Projects-RecruitAI" / \
    "adcd3a4d-ca47-4908-9eb7-47d81687738b.jsonl"
UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TEXT_KEYS = {"text", "snippet", "context", "query", "error", "message", "note", "request", "result"}


@pytest.fixture(scope="module")
def grown(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A corpus session (2.0, inline sub-agents) collected at 60% of its lines (r1), then grown to
    its end (r2); and the small session whose window end cuts a sub-agent (two rounds)."""
    from asz_core.collect import collect

    if not ADCD.is_file():
        pytest.skip("corpus not found")
    tmp = tmp_path_factory.mktemp("grown")
    s = Store.open(tmp / "home")
    proj = tmp / "proj"
    proj.mkdir()
    lines = ADCD.read_bytes().splitlines(keepends=True)
    cut = int(len(lines) * 0.6)
    (proj / ADCD.name).write_bytes(b"".join(lines[:cut]))
    collect([proj], s)
    with (proj / ADCD.name).open("ab") as f:
        f.write(b"".join(lines[cut:]))
    collect([proj], s)
    winhelp.straddle(tmp / "straddle", s)
    yield s
    s.close()


_navs: dict[Any, tuple[N.Navigator, set[bytes]]] = {}


def _case(store: Any, cid: str, head: str | None, spec: str | None) -> tuple[N.Navigator, set[bytes]]:
    key = (id(store), cid, head, spec)
    if key not in _navs:
        w = W.build(store, cid, head, spec)
        nav = N.Navigator(w, store, budget=10**12, adapter=Registry().runtime(w.conv.runtime))
        forbidden = {k.encode() for (k,) in store.db.execute(
            "SELECT key FROM records WHERE conversation = ? AND (round > ? OR seq > ?)", (w.conv.id, w.round.number, w.cut))
            if UUID.fullmatch(k.encode())}
        _navs[key] = (nav, forbidden)
    return _navs[key]


def _cases(corpus_store: Any, grown: Any) -> list[tuple[Any, str, str | None, str | None]]:
    adcd = W.build(grown, "adcd3a4d", "r1")
    mains = [t.id for t in adcd.conv.main_talks]
    return [
        (corpus_store, "fa812bfe", None, None), (corpus_store, "fa812bfe", None, "k1"), (corpus_store, "fa812bfe", None, "k2"),
        (corpus_store, "258c7280", None, "k1"), (corpus_store, "b277cc60", None, "k3..k4"),
        (grown, "adcd3a4d", "r1", None), (grown, "adcd3a4d", "r1", f"{mains[1]}..{mains[2]}"),
        (grown, "adcd3a4d", "r2", f"{mains[3]}..{mains[4]}"), (grown, "adcd3a4d", "r1", mains[-1]),
        (grown, winhelp.SID, "r1", None), (grown, winhelp.SID, "r2", "k2"), (grown, winhelp.SID, "r2", "k1"),
    ]


def check(text: str, nav: N.Navigator, forbidden: set[bytes]) -> None:
    b = text.encode()
    assert len(b) <= N.PAGE_BYTES
    leaked = set(UUID.findall(b)) & forbidden
    assert not leaked, f"records after the window's end or of a later head: {sorted(leaked)[:3]}"
    a = json.loads(text)
    assert a["head"]["round"] == nav.w.head
    w = nav.w

    def walk(v: Any, key: str | None) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                walk(x, k)
        elif isinstance(v, list):
            for x in v:
                walk(x, key)
        elif isinstance(v, str) and key not in TEXT_KEYS:
            if re.fullmatch(r"s\d+", v) and key != "query":
                assert v in w.steps, (key, v)
            elif re.fullmatch(r"k\d+", v):
                assert v in w.talks, (key, v)
            elif re.fullmatch(r"a\d+", v):
                assert v in w.streams, (key, v)
    walk(a, None)


def test_every_page_of_every_tool(corpus_store: Any, grown: Any) -> None:
    for store, cid, head, spec in _cases(corpus_store, grown):
        nav, forbidden = _case(store, cid, head, spec)
        for t in every_answer(nav):
            check(t, nav, forbidden)


def _args(data: st.DataObject, tool: str, nav: N.Navigator) -> dict[str, Any]:
    conv = nav.conv
    n_steps = len(conv.steps) + 3
    sid = st.builds(lambda i: f"s{i}", st.integers(0, n_steps))
    kid = st.builds(lambda i: f"k{i}", st.integers(0, len(conv.talks) + 2))
    junk = st.one_of(st.none(), st.integers(-3, 10**7), st.text(max_size=6), st.lists(st.integers(), max_size=2))
    page = st.one_of(st.integers(1, 4), junk)
    words = st.sampled_from(["error", "test", "file", "the", "README", "def", "import", "LATE", "agent", "ls", "P", "a b", '"', "*"])
    d = data.draw
    if tool == "talks":
        return d(st.fixed_dictionaries({"page": page}, optional={"item": kid, "offset": st.integers(0, 40000)}))
    if tool == "talk":
        return {"id": d(st.one_of(kid, st.just("loose"), junk)), "page": d(page)}
    if tool == "step":
        return {"id": d(st.one_of(sid, junk)), "part": d(st.one_of(st.integers(1, 3), junk)), "offset": d(st.integers(0, 50000))}
    if tool == "records":
        return {"step": d(st.one_of(sid, junk))}
    if tool == "diff":
        return {"record": d(st.text(max_size=5)), "page": d(page)}
    if tool == "search":
        a = {"query": d(st.one_of(words, st.text(max_size=12))), "page": d(st.integers(1, 3))}
        if d(st.booleans()):
            a["step"] = d(sid)
        return a
    if tool == "subtasks":
        return d(st.fixed_dictionaries({"page": page}, optional={"item": st.builds(lambda i: f"a{i}", st.integers(0, 6)),
                                                                    "offset": st.integers(0, 9000)}))
    if tool in ("operations",):
        return {"page": d(page)}
    if tool == "targets":
        return d(st.fixed_dictionaries({}, optional={"id": st.text(max_size=4), "page": page}))
    if tool == "sources":
        return d(st.fixed_dictionaries({}, optional={"id": st.sampled_from(["src1", "..", "../../etc/passwd"]), "line": st.integers(0, 99)}))
    return {}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_random_calls_never_leak(corpus_store: Any, grown: Any, data: st.DataObject) -> None:
    store, cid, head, spec = data.draw(st.sampled_from(_cases(corpus_store, grown)))
    nav, forbidden = _case(store, cid, head, spec)
    for _ in range(data.draw(st.integers(1, 6))):
        tool = data.draw(st.sampled_from(N.TOOLS))
        text = nav.call(tool, _args(data, tool, nav))
        check(text, nav, forbidden)
