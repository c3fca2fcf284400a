""""The model call that asked for this step", one rule for the achievement stage (a target's own
operations), the efficiency stage (what a part takes in) and the close (whose file operations),
checked on every corpus conversation: the callers agree, and each answer is the one a reader of
the spec gives, walking back from the step by hand."""

from __future__ import annotations

from typing import Any

from asz_core import window
from asz_core.judge.evidence import ASKED, asking_calls
from asz_core.judge.stages.efficiency import part_calls


def by_hand(steps: list[Any], i: int) -> str | None:
    """Walk back from ``steps[i]`` through its own talk: the first model call met; none at the
    talk's start. An input met on the way was typed while the agent worked (a talk begins at an
    input reaching an idle agent): it is walked past, as the running call went on."""
    me = steps[i]
    if me.talk is None:
        return None
    for s in reversed(steps[:i]):
        if s.talk == me.talk and s.stream == me.stream and s.kind == "model_call":
            return s.id  # type: ignore[no-any-return]
    return None


def test_the_callers_agree_on_every_corpus_conversation(every_corpus_store: Any) -> None:
    seen = at_start = 0
    for r in every_corpus_store.conversations():
        w = window.build(every_corpus_store, r.id)
        conv = w.conv
        whole = asking_calls(conv.steps)  # as the close and the achievement stage call it
        for k in conv.talks:
            steps = [conv.step(s) for s in k.steps]
            own = asking_calls(steps)  # as the efficiency stage calls it, one talk at a time
            for i, s in enumerate(steps):
                if s.kind not in ASKED:
                    continue
                seen += 1
                want = by_hand(steps, i)
                assert whole.get(s.id) == own.get(s.id) == want, (r.id, s.id)
                # the part from this step takes in exactly that call, or begins with the step itself
                before, [mine] = part_calls(steps, [i])
                if want is not None:
                    assert mine[:1] == [want], (r.id, s.id, mine)
                else:
                    at_start += 1
                    assert all(conv.step(c).seq > s.seq for c in mine), (r.id, s.id, mine)
    assert seen > 1000
    assert at_start > 0  # the corpus has steps no model call asked for: the case the callers differed on


def test_a_tool_landing_after_an_input_typed_while_the_agent_worked_was_asked_for_by_the_running_call(
        every_corpus_store: Any) -> None:
    """e720dd6e (Claude Code): the message msg_01UoS3… of the call s172 holds two tool uses; the
    person's "fix all the issues" (i3, s174) was queued between them (a queue-operation record),
    and the second tool's step s175 lands after it. The record puts s175 inside s172's message:
    s172 asked for it, and the part of k2's work from s175 on takes s172 in."""
    cid = next(r.id for r in every_corpus_store.conversations() if r.id.startswith("e720dd6e"))
    conv = window.build(every_corpus_store, cid).conv
    s172, s174, s175 = (conv.step(x) for x in ("s172", "s174", "s175"))
    assert (s172.kind, s174.kind, s174.source, s175.kind) == ("model_call", "input", "queued", "tool")
    assert s172.talk == s174.talk == s175.talk == "k2" and s172.seq < s174.seq < s175.seq
    assert asking_calls(conv.steps)["s175"] == "s172"
    steps = [conv.step(s) for s in conv.talk("k2").steps]
    _, [mine] = part_calls(steps, [steps.index(s175)])
    assert mine[:1] == ["s172"]
