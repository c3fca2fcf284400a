"""The close applying the sources (spec: "Judging against a source"): a contradiction of a delivery
standing at the end changes the final score and the class; one whose delivery no longer stands,
two conclusions that disagree and a superseded conclusion change nothing, each saying why; a
rollback makes the target reverted. Over the bundled example: t1 (2 criteria, both met)
delivered at s12 (t1.e1), t2 (the float audit: t2.c1 met, t2.c2 met, t2.c3 not captured) at s26."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .source_runs import INCIDENT, entry, example_calls, judge_with
from .test_divergence import AUDIT, REFERENCE, v


def _close(run: Path) -> dict[str, Any]:
    import json

    return json.loads((run / "close.json").read_text())["statement"]


def _target(st: dict[str, Any], tid: str) -> dict[str, Any]:
    return next(t for t in st["targets"] if t["id"] == tid)


def _conclusion(st: dict[str, Any], cid: str) -> dict[str, Any]:
    return next(c for s in st["sources"] for c in s["conclusions"] if c["id"] == cid)


def test_a_contradiction_of_a_standing_delivery_changes_the_score_and_a_rollback_reverts(store: Any, tmp_path: Path) -> None:
    answer = {"verdicts": [v("src1.k2", "contradicted", disproves="criteria", criteria=["t2.c1"], **AUDIT),
                           v("src1.k11", "rolled_back", target="t1", input="i1", delivery="t1.e1", cites=["s12"]),
                           v("src1.k1", "consistent", target="t1")]}
    run, files = judge_with(store, tmp_path, [str(INCIDENT)], REFERENCE, entry("divergence", answer))
    assert files["divergence"]["status"] != "failed", files["divergence"]
    st = _close(run)
    t2 = _target(st, "t2")
    assert t2["outcome"]["record_score"] == "2/3" and t2["outcome"]["final_score"] == "1/3"
    assert t2["outcome"]["class"] == "contradicted" and "src1.k2" in t2["outcome"]["applied"]
    assert [c["final"] for c in t2["criteria"]] == ["not_met", "met", "not_captured"]
    k2 = _conclusion(st, "src1.k2")
    assert k2["applied"] and k2["why_not"] is None
    assert k2["changed"] == "t2: final score 2/3 -> 1/3, class unverified -> contradicted"
    # t1's rollback and a consistent verdict about t1 disagree: neither applies
    t1 = _target(st, "t1")
    assert t1["outcome"]["class"] == "achieved" and t1["outcome"]["final_score"] == "1"
    k11 = _conclusion(st, "src1.k11")
    assert not k11["applied"] and k11["why_not"] == "another conclusion about t1 disagrees (src1.k1): the sources do not agree"
    [src] = st["sources"]
    assert src["comparison"] == "compared" and src["sha256"] and src["taken"]


def test_a_rollback_alone_makes_the_target_reverted_with_score_zero(store: Any, tmp_path: Path) -> None:
    answer = {"verdicts": [v("src1.k11", "rolled_back", target="t1", input="i1", delivery="t1.e1", cites=["s12"])]}
    run, _ = judge_with(store, tmp_path, [str(INCIDENT)], REFERENCE, entry("divergence", answer))
    st = _close(run)
    t1 = _target(st, "t1")
    assert (t1["outcome"]["class"], t1["outcome"]["final_score"], t1["outcome"]["record_score"]) == ("reverted", "0", "1")
    assert _conclusion(st, "src1.k11")["changed"] == "t1: final score 1 -> 0, class achieved -> reverted"


def test_two_conclusions_that_disagree_and_a_superseded_one_apply_nothing(store: Any, tmp_path: Path) -> None:
    ref = entry("reference", {"conclusions": [
        *REFERENCE["answer"]["conclusions"][:5],
        {"id": "old", "source": "src1", "statement": "the audit missed a place", "kind": "intermediate", "role": "required",
         "support": "saved", "lines": [17], "inputs": ["i2"], "superseded_by": "new"},
        {"id": "new", "source": "src1", "statement": "the audit was complete after all", "kind": "final", "role": "required",
         "support": "asserted", "inputs": ["i2"]}]})
    answer = {"verdicts": [v("src1.k2", "contradicted", disproves="conclusion", **AUDIT),
                           v("src1.k5", "consistent", target="t2"),
                           v("src1.k6", "contradicted", disproves="conclusion", **AUDIT),
                           v("src1.k7", "consistent", target="t1")]}
    run, files = judge_with(store, tmp_path, [str(INCIDENT)], ref, entry("divergence", answer))
    assert files["reference"]["conclusions"][5]["superseded_by"] == "src1.k7"
    st = _close(run)
    t2 = _target(st, "t2")
    assert t2["outcome"]["final_score"] == "2/3" and t2["outcome"]["class"] == "unverified" and t2["outcome"]["applied"] == []
    # a superseded conclusion is no voice of its own: only the consistent one disagrees
    assert _conclusion(st, "src1.k2")["why_not"] == "another conclusion about t2 disagrees (src1.k5): the sources do not agree"
    assert _conclusion(st, "src1.k6")["why_not"] == ("the source corrects it later (src1.k7): the correction changes the "
                                                     "score, not it")


def test_a_contradiction_whose_delivery_no_longer_stands_changes_nothing(store: Any, tmp_path: Path) -> None:
    """t2 delivered at s19 (t2.e1) and again, correcting it, at s26 (t2.e2): a contradiction of
    t2.e1 is kept, and changes no score, saying its delivery no longer stands."""
    ach = [c for c in example_calls() if c["stage"] == "achievement"]
    t2call = next(c for c in ach if c["answer"]["targets"][0]["target"] == "t2")
    t2call["answer"]["targets"][0]["events"] = [
        {"key": "e1", "event": "delivered", "concerns": "answer", "cites": ["s19"], "what": "an explorer will search"},
        {"key": "e2", "event": "delivered_again", "concerns": "answer", "cites": ["s26", "s24"], "corrects": ["e1"],
         "what": "three places that add money as floats"}]
    answer = {"verdicts": [v("src1.k2", "contradicted", disproves="conclusion", target="t2", input="i2",
                             delivery="t2.e1", cites=["s19"])]}
    run, files = judge_with(store, tmp_path, [str(INCIDENT)], *ach, REFERENCE, entry("divergence", answer))
    a2 = next(a for a in files["achievement"]["achievement"] if a["target"] == "t2")
    assert [e["id"] for e in a2["events"]] == ["t2.e1", "t2.e2"] and a2["standing"] == ["t2.e2"], a2
    assert files["divergence"]["verdicts"][1]["verdict"] == "contradicted"
    st = _close(run)
    t2 = _target(st, "t2")
    assert t2["outcome"]["final_score"] == "2/3" and t2["outcome"]["class"] != "contradicted"
    k2 = _conclusion(st, "src1.k2")
    assert not k2["applied"] and k2["why_not"] == ("its delivery t2.e1 no longer stands at the end (a later delivery "
                                                   "replaced it)")


def test_a_source_that_failed_is_unavailable_not_no_contradiction(store: Any, tmp_path: Path) -> None:
    run, _ = judge_with(store, tmp_path, [str(INCIDENT), "/dev/zero"], REFERENCE,
                        entry("divergence", {"verdicts": [v("src1.k1", "consistent", target="t1")]}))
    st = _close(run)
    src2 = st["sources"][1]
    assert src2["status"] == "failed" and src2["comparison"] == (
        "unavailable: /dev/zero is not a regular file (a character device): only a regular file is read "
        "(not the same as no contradiction found)")
    assert st["sources"][0]["comparison"] == "compared"


def test_the_bundled_example_shows_its_source_changing_a_score(store: Any, tmp_path: Path) -> None:
    """kit/example's run: the example's script with its reference and divergence answers, judged
    against examples/INC-88.md: the note contradicts the delivered float audit, so t2's final
    score falls from 2/3 to 1/3; -show and report.html say which conclusion changed it."""
    from asz_core.collect import collect
    from asz_core.judge import report, runner
    from rich.console import Console

    from .source_runs import EXAMPLE_SCRIPT, ROOT

    collect([ROOT / "examples" / "claude-code"], store)
    res = runner.judge(runner.JudgeOptions("5e1f0c2a", evaluator=f"scripted:{EXAMPLE_SCRIPT}", sources=(str(INCIDENT),)),
                       store=store)
    assert res.stages == {"targets": "complete", "achievement": "complete", "subtasks": "complete", "efficiency": "complete",
                          "reference": "complete", "divergence": "complete"}
    st = _close(res.path)
    t2 = _target(st, "t2")
    assert (t2["outcome"]["record_score"], t2["outcome"]["final_score"], t2["outcome"]["class"]) == ("2/3", "1/3", "contradicted")
    assert _target(st, "t1")["outcome"]["class"] == "achieved"
    con = Console(width=120, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    con.print(report.run_text(runner.read_run(res.path)))
    text = con.export_text()
    assert "src1.k2 final, required, saved: the float audit missed invoicer/refunds.py:9" in text
    assert "changed: t2: final score 2/3 -> 1/3, class unverified -> contradicted" in text
    html = (res.path / "report.html").read_text()
    assert 'data-conclusion="src1.k2"' in html and "t2: final score 2/3 -&gt; 1/3, class unverified -&gt; contradicted" in html


def test_show_escapes_what_a_source_says(store: Any, tmp_path: Path) -> None:
    hostile = tmp_path / "note\x1b[31m.md"
    hostile.write_text("<html><head><title>x\x1b]0;pwned\x07</title><meta name='author' content='\x1b[2J'></head>"
                       "<body><article><p>The cause was elsewhere, as this page says at length.</p></article></body></html>")
    from asz_core.judge import report, runner
    from rich.console import Console

    run, _ = judge_with(store, tmp_path, [str(hostile)], REFERENCE,
                        entry("divergence", {"verdicts": [v("src1.k1", "consistent", target="t1")]}))
    con = Console(width=200, record=True, file=open("/dev/null", "w"), force_terminal=False)  # noqa: SIM115
    con.print(report.run_text(runner.read_run(run)))
    text = con.export_text()
    assert "\x1b" not in text and "\x07" not in text and "note\\x1b[31m.md" in text
