"""A sub-agent run in the background (not in the corpus: the bundled example changed so): its
Task result only acknowledges the launch, and its report comes back with the notification that
names it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from asz_core import window
from asz_core.collect import collect
from tests.judge.fixtures import background_example


def test_a_background_launch_and_the_notification_that_names_its_agent(store: Any, tmp_path: Path) -> None:
    collect([background_example(tmp_path)], store)
    c = window.build(store, "5e1f0c2a").conv
    a1 = c.stream("a1")
    start = c.step(a1.started_by[0])
    assert start.kind == "agent_call" and start.launch is True and "Async agent launched" in start.text
    notes = [s for s in c.steps if s.kind == "notice" and s.notice == "task_notification"]
    assert [(s.ended, s.talk) for s in notes] == [("a1", "k2")]
    # it landed after the CSV Grep's result, before the reply that followed it
    grep = next(s for s in c.steps if s.name == "Grep" and s.stream == "m")
    assert grep.records[-1] < notes[0].seq


def test_a_foreground_task_is_no_launch(store: Any) -> None:
    from tests.judge.fixtures import EXAMPLE

    collect([EXAMPLE], store)
    c = window.build(store, "5e1f0c2a").conv
    start = c.step(c.stream("a1").started_by[0])
    assert start.launch is False and start.status == "returned"
    assert not any(s.ended for s in c.steps)
