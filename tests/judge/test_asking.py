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
    """Walk back from ``steps[i]`` through its own talk: the first model call met, unless an input
    of the talk comes first (nothing before the person's input asked for what follows it)."""
    me = steps[i]
    for s in reversed(steps[:i]):
        if s.talk != me.talk or s.stream != me.stream:
            continue
        if s.kind == "input":
            return None
        if s.kind == "model_call":
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
