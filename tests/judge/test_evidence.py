"""The rules of admissible evidence (asz_core.evidence) over a real conversation: 258c7280
(marot/spotter, Claude Code 2.1): one main talk holding three inputs (i2 and i3 typed while the
agent worked), an interrupt, failed and returned tool steps, a sub-agent started at s343, an
unattributed compaction helper, and a second talk "did you push?"."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from asz_core import window
from asz_core.judge.evidence import Evidence, for_run, fold
from asz_core.judge.judgment import Action, InputJudgment, Target

CID = "258c7280"


def target(tid: str, created_by: str, talks: tuple[str, ...], inputs: tuple[str, ...]) -> Target:
    return Target(tid, f"target {tid}", "change", (), talks, "open", None, None, created_by, inputs)


def judged(iid: str, step: str, talk: str, *acts: tuple[str | None, str]) -> InputJudgment:
    return InputJudgment(iid, step, talk, "person", 1, tuple(Action(t, a) for t, a in acts), ())


def story(i2: str = "steer", i4: str = "accept", t2_talks: tuple[str, ...] = ("k1",)) -> tuple[list[Target], list[InputJudgment]]:
    """t1 "Implement spotter-gqc" (i1, steered by i2 "check again"), t2 "tackle the new beads"
    (i3, typed mid-work in k1), i4 "did you push?" in k2."""
    targets = [target("t1", "i1", ("k1", "k2"), ("i1", "i2", "i4")), target("t2", "i3", t2_talks, ("i3",))]
    inputs = [judged("i1", "s1", "k1", ("t1", "create")), judged("i2", "s106", "k1", ("t1", i2)),
              judged("i3", "s132", "k1", ("t2", "create")), judged("i4", "s432", "k2", ("t1", i4))]
    return targets, inputs


@pytest.fixture(scope="module")
def w(corpus_store: Any) -> window.Window:
    return window.build(corpus_store, CID)


def test_what_each_kind_of_step_shows(w: window.Window) -> None:
    ev = Evidence(w, *story())
    want = {
        "s117": ("result", True, True, False),       # Bash ExUnit run that returned
        "s134": ("failure", True, True, False),      # git push that failed: a failed one included
        "s104": ("interrupt", True, False, False),
        "s343": ("report", False, False, True),      # the Task call's result: the sub-agent's report back
        "s438": ("result", True, True, False),       # a tool step in the sub-agent's own stream
        "s443": ("subagent_reply", False, False, True),
        "s116": ("reply", False, False, True),       # "All 43 tests pass": the agent's words
        "s115": ("model_call", False, False, True),
        "s435": ("agent_input", False, False, False),  # the task the agent gave the sub-agent
        "s105": ("notice", False, False, False),     # a task notification
        "s1": ("person", False, False, False),
    }
    for sid, (shows, observed, tool, words) in want.items():
        c = ev.cite(sid)
        assert (c.shows, ev.observed(c), ev.tool_result(c), ev.agent_words(c)) == (shows, observed, tool, words), sid
    # 23610298 holds an API error notice
    assert ev.cite("i4").step == "s432" and ev.cite("i4").shows == "person"
    for bad, shows in (("k1", "talk"), ("a1", "stream"), ("s99999", "unknown"), ("k99", "unknown"), ("i99", "unknown"),
                       ("step 4", "unknown"), (None, "unknown"), ("o3", "unknown")):
        c = ev.cite(bad)
        assert c.shows == shows and not ev.observed(c) and not ev.admissible(c, "t1"), bad
    assert "cites nothing in particular" in ev.cite("k1").fact


def test_an_api_error_is_observed(corpus_store: Any) -> None:
    w2 = window.build(corpus_store, "23610298")
    ev = Evidence(w2)
    errs = [s for s in w2.conv.steps if s.notice == "api_error"]
    assert errs and all(ev.observed(ev.cite(s.id)) and ev.cite(s.id).shows == "api_error" for s in errs)


def test_a_step_outside_the_window_is_unknown(corpus_store: Any) -> None:
    w2 = window.build(corpus_store, CID, spec="k1")
    ev = Evidence(w2)
    assert ev.cite("s434").shows == "unknown"     # k2's reply lies past the window's end
    assert ev.cite("s117").shows == "result"


def test_the_persons_input_shows_only_when_later_and_not_setting(w: window.Window) -> None:
    ev = Evidence(w, *story())
    i1, i2, i3, i4 = (ev.cite(x) for x in ("i1", "i2", "i3", "i4"))
    # the input that set the target shows what was asked, never that it was done
    assert not ev.admissible(i1, "t1") and not ev.admissible(i2, "t1")
    assert ev.sets(i1, "t1") and ev.sets(i2, "t1") and not ev.sets(i3, "t1")
    assert ev.admissible(i3, "t1") and ev.admissible(i4, "t1")
    assert not ev.admissible(i1, "t2") and not ev.admissible(i3, "t2") and ev.admissible(i4, "t2")
    # after every input that set t1 (i1, i2): i3 and i4 are; with i4 a refine, none is
    assert ev.person_after_setting(i3, "t1") and ev.person_after_setting(i4, "t1")
    assert not ev.person_after_setting(i2, "t1")
    ev2 = Evidence(w, *story(i4="refine"))
    assert not ev2.person_after_setting(ev2.cite("i4"), "t1") and not ev2.admissible(ev2.cite("i4"), "t1")
    assert ev2.admissible(ev2.cite("i3"), "t1") and not ev2.person_after_setting(ev2.cite("i3"), "t1")
    # a correction shows (it is no setting input)
    ev3 = Evidence(w, *story(i4="correct"))
    assert ev3.person_after_setting(ev3.cite("i4"), "t1") and ev3.beyond_words(ev3.cite("i4"), "t1")
    # an input the targets stage found came from no person shows nothing
    targets, inputs = story()
    inputs[3] = judged("i4", "s432", "k2", (None, "not_from_person"))
    ev4 = Evidence(w, targets, inputs)
    assert ev4.cite("i4").shows == "not_person" and not ev4.admissible(ev4.cite("i4"), "t1")
    assert not ev4.beyond_words(ev4.cite("i4"), "t1")


def test_work_and_before(corpus_store: Any, w: window.Window) -> None:
    ev = Evidence(w, *story())
    work = ev.work("t2")
    assert "s438" in work and "s443" in work and "s1" in work and "s434" not in work and "s448" not in work
    assert "s434" in ev.work("t1") and ev.before == frozenset()
    w2 = window.build(corpus_store, CID, spec="k2")
    ev2 = Evidence(w2, *story())
    assert "s117" in ev2.before and "s434" not in ev2.before
    assert "s438" not in ev2.before  # the sub-agent's file landed after the window's end: not shown
    assert ev2.is_work(ev2.cite("s117")) and not ev2.is_work(ev2.cite("s1")) and not ev2.is_work(ev2.cite("s104"))


def _result_text(corpus_store: Any, w: window.Window, sid: str) -> str:
    """A tool step's whole result, decoded from its records."""
    texts = []
    for seq in w.conv.step(sid).records:
        obj = orjson.loads(corpus_store.raw(w.conv.id, seq))
        for part in (obj.get("message") or {}).get("content") or []:
            if isinstance(part, dict) and part.get("type") == "tool_result":
                c = part.get("content")
                texts.extend([c] if isinstance(c, str) else [x.get("text", "") for x in c if isinstance(x, dict)])
    return "\n".join(texts)


def test_an_excerpt_must_stand_in_the_step_word_for_word(corpus_store: Any, w: window.Window) -> None:
    ev = for_run(w, corpus_store)
    whole = _result_text(corpus_store, w, "s441")
    assert len(whole.encode()) > 60000
    deep = whole[40000:40400]                      # far past the 2,000 bytes a step keeps
    assert deep not in w.conv.step("s441").text
    got = ev.excerpt("s441", deep)
    assert got.found and got.cut and got.given_bytes == len(deep.encode()) and len(got.text.encode()) <= 300
    assert deep.encode().startswith(got.text.encode())
    # whitespace folded, a JSON escape of a line break read as one
    aligned = "   ".join(deep[:200].split()).replace(" ", "\\n", 3)
    assert ev.excerpt("s441", aligned).found
    # a word changed, or the excerpt of another step: not in it
    words = deep[:200].split()
    words[len(words) // 2] = words[len(words) // 2] + "x"
    assert not ev.excerpt("s441", " ".join(words)).found
    assert not ev.excerpt("s434", deep[:200]).found
    assert not ev.excerpt("s441", "   ").found
    # without the records read whole, only the kept text is searched
    assert not Evidence(w).excerpt("s441", deep[:200]).found
    # what a reply said, word for word
    assert ev.excerpt("s116", "All **43 tests pass**, 0 failures.").found
    assert fold("a\\n  b\n\tc") == "a b c"


def test_an_excerpt_of_the_record_as_written(corpus_store: Any, w: window.Window) -> None:
    """The step tool shows a record as written: a quote of its JSON stands in it too."""
    ev = for_run(w, corpus_store)
    assert ev.excerpt("s134", '"is_error":true').found
    assert not ev.excerpt("s136", '"is_error":true').found


def test_thousands_of_excerpts_of_one_step_read_its_records_once(w: window.Window, corpus_store: Any) -> None:
    """An answer may give thousands of observations of one large step: its records are read and
    folded once, not once an excerpt (s441, a 78 KB WebFetch result, read past its kept text)."""
    from asz_core.window import raw_at

    reads: list[int] = []

    def raw(seq: int) -> bytes:
        reads.append(seq)
        return raw_at(corpus_store, w.conv.id, seq, w.round.number, w.cut, w.captures)

    ev = Evidence(w, raw=raw)
    step = w.conv.step("s441")
    deep = fold(b"".join(raw(q) for q in step.records).decode("utf-8", "replace"))[40_000:40_080].strip()
    reads.clear()
    assert deep and deep not in fold(step.text or "")
    got = [ev.excerpt("s441", deep) for _ in range(500)] + [ev.excerpt("s441", f"not in it {k}") for k in range(500)]
    assert all(e.found for e in got[:500]) and not any(e.found for e in got[500:])
    assert len(reads) == len(step.records)
