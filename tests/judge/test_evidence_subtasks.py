"""The sub-task rules of the evidence module over real conversations: what a sub-task's own
results are, which later steps of the giving agent count, where a report came back, and what
shows a task wrong."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from asz_core import window
from asz_core.collect import collect
from asz_core.judge.evidence import Evidence

from .fixtures import EXAMPLE, background_example, nested_example


def ev_of(store: Any, cid: str) -> Evidence:
    return Evidence(window.build(store, cid))


def test_the_example_sub_agent(store: Any) -> None:
    """a1 was started by the Task s20 in k2; it ran a Grep (s29) and replied (s31); the main agent
    took a typed input (s21), replied (s23), ran a Grep of its own (s24) and replied (s26)."""
    collect([EXAMPLE], store)
    ev = ev_of(store, "5e1f0c2a")
    c = ev.cite
    assert ev.starting_step("a1").id == "s20" and ev.giver("a1") == "m"  # type: ignore[union-attr]
    # its outcome rests on its own tool results, never its report back or its messages
    assert ev.own_result(c("s29"), "a1")
    assert not ev.own_result(c("s31"), "a1")   # its own reply: a claim
    assert not ev.own_result(c("s20"), "a1")   # the Task's result: its report back, a claim
    assert not ev.own_result(c("s24"), "a1")   # a tool result, but the main agent's
    # used: a later step of the main agent, after the Task ended; never an input or the sub-agent's
    assert ev.asker_later(c("s22"), "a1") and ev.asker_later(c("s23"), "a1") and ev.asker_later(c("s24"), "a1")
    assert not ev.asker_later(c("s21"), "a1")  # the person's input typed mid-work
    assert not ev.asker_later(c("s19"), "a1")  # before the Task
    assert not ev.asker_later(c("s20"), "a1")  # the Task itself
    assert not ev.asker_later(c("s30"), "a1")  # a1's own model call
    assert not ev.asker_later(c("k2"), "a1")
    # the foreground Task's result is the report back
    assert ev.report_back("a1") == ("s20", ev.conv.step("s20").records[-1])
    assert ev.after_report(c("s22"), "a1") and not ev.after_report(c("s29"), "a1")
    # what shows a task wrong besides the agent's words
    assert ev.shows_task_wrong(c("s24"), "a1")      # a tool result
    assert ev.shows_task_wrong(c("s17"), "a1")      # the person's words
    assert not ev.shows_task_wrong(c("s23"), "a1")  # the agent's own account
    assert not ev.shows_task_wrong(c("s20"), "a1")  # the step that gave the task is not its own evidence
    assert not ev.shows_task_wrong(c("s31"), "a1")  # the sub-agent's report


def test_a_background_launch_reports_with_its_notification(store: Any, tmp_path: Path) -> None:
    collect([background_example(tmp_path)], store)
    ev = ev_of(store, "5e1f0c2a")
    note = next(s for s in ev.conv.steps if s.ended == "a1")
    assert ev.report_back("a1") == (note.id, note.seq)
    # the main agent's Grep and its call came before the notification; its last reply after it
    grep = next(s for s in ev.conv.steps if s.name == "Grep" and s.stream == "m")
    last = ev.conv.talk("k2").reply
    assert ev.asker_later(ev.cite(grep.id), "a1") and not ev.after_report(ev.cite(grep.id), "a1")
    assert ev.after_report(ev.cite(last), "a1")  # type: ignore[arg-type]


def test_a_background_launch_with_no_notification_never_reports(every_corpus_store: Any) -> None:
    """Codex's spawn_agent answers at once with the child's id: a launch. Its children report by
    their notifications; take those away (a window cut before them) and nothing came back."""
    cid = next(r.id for r in every_corpus_store.conversations()
               if r.id.startswith("019dbc02") and len(window.build(every_corpus_store, r.id).conv.streams) == 3)
    ev = ev_of(every_corpus_store, cid)
    notes = {s.ended: s for s in ev.conv.steps if s.ended}
    assert set(notes) == {"a1", "a2"}
    for a in ("a1", "a2"):
        start = ev.starting_step(a)
        assert start is not None and start.launch
        assert ev.report_back(a) == (notes[a].id, notes[a].seq)
    # s9, the second spawn of the same response, was made before a1's spawn had answered: it
    # shows nothing of a1's report; s10, the model call after both answered, is a later step;
    # a1's notification is a runtime notice, never the agent's own step
    assert [ev.conv.step(x).kind for x in ("s8", "s9", "s10")] == ["agent_call", "agent_call", "model_call"]
    assert ev.conv.step("s9").seq < ev.conv.step("s8").records[-1]
    assert not ev.asker_later(ev.cite("s9"), "a1") and ev.asker_later(ev.cite("s10"), "a1")
    assert not ev.asker_later(ev.cite(notes["a1"].id), "a1") and not ev.after_report(ev.cite(notes["a1"].id), "a1")
    # remove the notifications: the acknowledgement alone shows no report
    import attrs

    conv = ev.conv
    steps = tuple(attrs.evolve(s, ended=None) if s.ended else s for s in conv.steps)
    w2 = attrs.evolve(ev.w, conv=attrs.evolve(conv, steps=steps))
    ev2 = Evidence(w2)
    assert ev2.report_back("a1") is None and not ev2.after_report(ev2.cite("s23"), "a1")


def test_a_nested_sub_agent_is_given_its_task_by_the_sub_agent_above(store: Any, tmp_path: Path) -> None:
    collect([nested_example(tmp_path)], store)
    ev = ev_of(store, "5e1f0c2a")
    grand = next(st.id for st in ev.conv.streams if st.key == "agent-b7e0d14")
    start = ev.starting_step(grand)
    assert start is not None and start.stream == "a1" and ev.giver(grand) == "a1"
    g_reply = next(s.id for s in ev.conv.steps if s.stream == grand and s.kind == "reply")
    a1_grep = next(s.id for s in ev.conv.steps if s.stream == "a1" and s.name == "Grep")
    # a1's own Grep is no result of its sub-agent's; the grandchild's reply is no step of a1's
    assert not ev.own_result(ev.cite(a1_grep), grand) and ev.own_result(ev.cite(a1_grep), "a1")
    assert not ev.asker_later(ev.cite(g_reply), grand)
    # the main agent's later steps are not the giver's: a1 gave the task
    assert not ev.asker_later(ev.cite("s22"), grand)


def test_an_unattributed_stream_has_no_giver(corpus_store: Any) -> None:
    ev = ev_of(corpus_store, "258c7280")
    assert ev.conv.stream("a2").unattributed == "no starting step"
    assert ev.starting_step("a2") is None and ev.giver("a2") is None and ev.report_back("a2") is None
    assert not ev.asker_later(ev.cite("s2"), "a2")
