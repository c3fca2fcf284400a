"""How each target ended, over the events an achievement stage keeps: which deliveries stand at
the end, which contradictions and undoings apply, and the scores and class they give."""

from __future__ import annotations

from typing import Any

from asz_core.judge.outcomes import judge_target, level_of

T = {"id": "t1", "state": "closed", "criteria": [{"id": "t1.c1", "text": "a"}, {"id": "t1.c2", "text": "b"},
                                                 {"id": "t1.c3", "text": "dropped", "dropped": True}]}


def seq(step: str | None) -> int:
    return int(step[1:]) if step else 1 << 62


def ach(*events: dict[str, Any], contradictions: tuple[dict[str, Any], ...] = (), states: tuple[str, str] = ("met", "met")) -> dict[str, Any]:
    return {"criteria": [{"id": "t1.c1", "state": states[0], "citations": ["s5"]}, {"id": "t1.c2", "state": states[1]}],
            "events": list(events), "contradictions": list(contradictions)}


D1 = {"id": "t1.e1", "kind": "delivered", "step": "s10"}
D2 = {"id": "t1.e2", "kind": "delivered", "step": "s12"}


def test_levels_over_live_criteria() -> None:
    assert [level_of(x) for x in (["met", "met"], ["met", "not_met"], ["not_met", "unknown"], ["unknown"], [])] == [
        "achieved", "partial", "not_achieved", "unverified", "unverified"]
    j = judge_target(T, ach(D1), seq)
    assert [c.id for c in j.criteria] == ["t1.c1", "t1.c2"] and (j.level, j.class_, j.record, j.final) == ("achieved", "achieved", 1, 1)


def test_a_contradicted_conclusion_leaves_0_and_criteria_count_not_met() -> None:
    j = judge_target(T, ach(D1, contradictions=({"id": "x1", "delivery": "t1.e1"},)), seq)
    assert (j.class_, j.record, j.final, j.level) == ("contradicted", 1, 0, "achieved")
    j = judge_target(T, ach(D1, contradictions=({"id": "x1", "delivery": "t1.e1", "criteria": ["t1.c2"]},)), seq)
    assert (j.class_, str(j.final), [c.final for c in j.criteria]) == ("contradicted", "1/2", ["met", "not_met"])


def test_a_contradiction_of_a_replaced_delivery_stays_in_the_history() -> None:
    again = {"id": "t1.e2", "kind": "delivered_again", "step": "s20"}
    j = judge_target(T, ach(D1, again, contradictions=({"id": "x1", "delivery": "t1.e1"},)), seq)
    assert (j.class_, j.final, j.contradictions) == ("achieved", 1, [])
    # A delivery again that corrects one of two deliveries leaves the other standing.
    again = {"id": "t1.e3", "kind": "delivered_again", "step": "s20", "corrects": ["t1.e2"]}
    j = judge_target(T, ach(D1, D2, again, contradictions=({"id": "x1", "delivery": "t1.e1"},)), seq)
    assert j.class_ == "contradicted"


def test_an_undoing_applies_while_what_it_took_back_stands() -> None:
    undo = {"id": "t1.e2", "kind": "undone", "step": "s20"}
    j = judge_target(T, ach(D1, undo), seq)
    assert (j.class_, j.final, j.record) == ("reverted", 0, 1)
    # delivered again (replacing every delivery): no longer reverted
    j = judge_target(T, ach(D1, undo, {"id": "t1.e3", "kind": "delivered_again", "step": "s30"}), seq)
    assert (j.class_, j.final) == ("achieved", 1)
    # an undoing of t1.e1 is not cleared by correcting another part (t1.e2)
    undo1 = {"id": "t1.e3", "kind": "undone", "step": "s20", "deliveries": ["t1.e1"], "criteria": ["t1.c1"]}
    again = {"id": "t1.e4", "kind": "delivered_again", "step": "s30", "corrects": ["t1.e2"]}
    j = judge_target(T, ach(D1, D2, undo1, again), seq)
    assert (j.class_, str(j.final)) == ("reverted", "1/2")


def test_a_cancelled_target_is_apart_and_no_achievement_is_unverified() -> None:
    assert judge_target({**T, "state": "cancelled"}, ach(D1), seq).class_ == "cancelled"
    j = judge_target(T, {}, seq)
    assert (j.level, j.class_, j.basis, [c.state for c in j.criteria]) == ("unverified", "unverified", "no_evidence", ["unknown", "unknown"])


def test_the_level_is_derived_from_the_states_read_never_taken_from_the_file() -> None:
    # a stage file whose level disagrees with its own criteria: the states decide
    j = judge_target(T, {**ach(D1, states=("met", "not_met")), "level": "achieved"}, seq)
    assert (j.level, j.class_, j.met, j.unknown) == ("partial", "partial", 1, 0)
    j = judge_target(T, {**ach(D1, states=("unknown", "not_met")), "level": "achieved"}, seq)
    assert (j.level, j.class_, j.met, j.unknown) == ("not_achieved", "not_achieved", 0, 1)


def test_the_deliveries_standing_and_what_each_undoing_took() -> None:
    from asz_core.judge.outcomes import standing

    ev = [("e1", "delivered", (), ()), ("e2", "delivered", (), ()), ("e3", "undone", (), ()),
          ("e4", "delivered_again", ("e1",), ()), ("e5", "undone", (), ("e2",)), ("e6", "delivered_again", (), ())]
    # e3 took back both standing then; e4 replaced e1 only; e5 named e2; e6, naming none, replaced all
    assert standing(ev[:5]) == (["e2", "e4"], {"e3": ("e1", "e2"), "e5": ("e2",)})
    assert standing(ev)[0] == ["e6"]
    # a delivery again naming only what is not standing replaces every one
    assert standing([("e1", "delivered", (), ()), ("e2", "delivered_again", ("e9",), ())])[0] == ["e2"]


def test_a_target_both_contradicted_and_reverted_is_contradicted() -> None:
    # decisions.md section 6: contradicted is the most severe class, then reverted
    undo = {"id": "t1.e2", "kind": "undone", "step": "s20"}
    j = judge_target(T, ach(D1, undo, contradictions=({"id": "x1", "delivery": "t1.e1"},)), seq)
    assert [x["id"] for x in j.undoings] == ["t1.e2"] and [x["id"] for x in j.contradictions] == ["x1"]
    assert (j.class_, j.final) == ("contradicted", 0)
