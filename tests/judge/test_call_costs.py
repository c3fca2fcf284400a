"""call-costs.json: every model call of a run's judged window with its cost and owner, saved when
the run closes (docs/close.md, "What each call cost"), read back by the run files' policy; what
``asz compare`` weighs calls by, so that it reads no store. A run closed before it was saved is
refused by compare, saying what to do, and ``asz judge -show RUN --costs`` writes it."""

from __future__ import annotations

import json
import os
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from asz_core.errors import AszError
from asz_core.judge import compare, runner
from asz_core.judge.run_files import RunFileError

from .test_run_files import COMMON, _broken_copies, _edit

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "scripted-5e1f0c2a.yaml"
SECOND = ROOT / "examples" / "scripted-5e1f0c2a-second.yaml"

# The example's calls as its transcript records them: (step, stream, main talk, model, input, output,
# cache_read, cache_write, output floor). s28's output was never said; its fragments showed 4.
OPUS, HAIKU = "claude-opus-4-6", "claude-haiku-4-5-20251001"
CALLS = [
    ("s2", "m", "k1", OPUS, 3, 96, 11840, 2211, None), ("s5", "m", "k1", OPUS, 1, 188, 14051, 412, None),
    ("s8", "m", "k1", OPUS, 1, 61, 14463, 301, None), ("s10", "m", "k1", OPUS, 1, 95, 14764, 377, None),
    ("s13", "m", "k1", OPUS, 1, 58, 15141, 240, None), ("s15", "m", "k1", OPUS, 1, 71, 15381, 164, None),
    ("s18", "m", "k2", OPUS, 3, 133, 15545, 402, None), ("s22", "m", "k2", OPUS, 1, 77, 16080, 350, None),
    ("s25", "m", "k2", OPUS, 1, 118, 16430, 281, None),
    ("s28", "a1", "k2", HAIKU, 3, None, 0, 3120, 4), ("s30", "a1", "k2", HAIKU, 3, 212, 3120, 610, None),
]
# The shipped snapshot's prices, dollars per million tokens: input, output, cache read, cache write.
PER_MILLION = {OPUS: (Decimal(5), Decimal(25), Decimal("0.5"), Decimal("6.25")),
               HAIKU: (Decimal(1), Decimal(5), Decimal("0.1"), Decimal("1.25"))}


def _by_hand(model: str, *counts: int | None) -> Decimal:
    return sum((Decimal(n or 0) * p for n, p in zip(counts, PER_MILLION[model])), Decimal(0)) / 10**6


def _judge(store: Any, script: Path, **kw: Any) -> Path:
    from asz_core.collect import collect

    collect([ROOT / "examples" / "claude-code"], store)
    return runner.judge(runner.JudgeOptions("5e1f0c2a", evaluator=f"scripted:{script}", **kw), store=store).path


def _saved(run: Path) -> dict[str, Any]:
    return json.loads((run / "call-costs.json").read_text())


def test_the_close_saves_each_call_with_its_cost_and_owner(store: Any) -> None:
    run = _judge(store, EXAMPLE)
    d = _saved(run)
    meta = json.loads((run / "run.json").read_text())
    assert (d["run"], d["head"], d["head_digest"], d["window"], d["judged"], d["targets_stage"]) == (
        meta["run"], "r1", meta["head_digest"], "all", ["k1", "k2"], "complete")
    assert d["prices"] == meta["prices"]
    got = [(c["step"], c["stream"], c["root"], c["model"], c["input"], c["output"], c["cache_read"], c["cache_write"],
            c["output_floor"]) for c in d["calls"]]
    assert got == [tuple(x) for x in CALLS]
    for c, (step, _, _, model, *counts, floor) in zip(d["calls"], CALLS):
        money = _by_hand(model, *counts)
        assert Decimal(c["money"]) == money, step
        if step == "s28":  # the output unknown: the money of what is known, and a lower bound with the floor
            assert not c["complete"] and Decimal(c["at_least"]) == money + _by_hand(model, 0, floor, 0, 0)
        else:
            assert c["complete"] and c["at_least"] == c["money"]
        # the example's targets: t1 is k1's, t2 k2's and the sub-agent a1 it started; nothing shared
        assert c["to"] == [{"target": "t1" if c["root"] == "k1" else "t2", "share": "1"}] and c["shared"] is None
    assert d["calls"][0]["call"] == "msg_01DnobDQCm5JUcKkHnVm3uMG:req_011ConrNZGmwEnDqPhukd0Wf"


def test_a_call_split_between_targets_is_saved_with_its_shares(store: Any, tmp_path: Path) -> None:
    calls = YAML(typ="safe").load(EXAMPLE.read_text())["calls"]
    for c in calls:
        if c["stage"] == "targets":  # i2 steers the rounding fix too: k2's work goes to both until i3 refines the audit
            c["answer"]["inputs"][1]["actions"].append({"target": "new:rounding", "action": "steer"})
    script = tmp_path / "split.json"
    script.write_text(json.dumps({"calls": calls}))
    run = _judge(store, script)
    d = _saved(run)
    shares = {c["step"]: ([(x["target"], x["share"]) for x in c["to"]], c["shared"]) for c in d["calls"]}
    several = "one input directed several targets"
    # s18 and the sub-agent a1 (s28, s30: started at s20) come after i2 (s17) and before i3 (s21): halved,
    # in the order i2's actions name them (an exact share is written as a decimal when it has one)
    for s in ("s18", "s28", "s30"):
        assert shares[s] == ([("t2", "0.5"), ("t1", "0.5")], several), s
    for s in ("s22", "s25"):  # after i3, which directs the audit alone
        assert shares[s] == ([("t2", "1")], None), s
    # each target's money from the saved shares is the close's (rounded to 6 places there)
    money = {x[0]: _by_hand(x[3], *x[4:8]) for x in CALLS}
    t1 = sum((money[s] for s in ("s2", "s5", "s8", "s10", "s13", "s15")), Decimal(0)) + (money["s18"] + money["s28"] + money["s30"]) / 2
    st = json.loads((run / "close.json").read_text())["statement"]
    close_t1 = next(t for t in st["targets"] if t["id"] == "t1")["cost"]["total"]["money"]
    assert Decimal(close_t1) == t1.quantize(Decimal("0.000001"))
    saved_t1 = sum((Fraction(Decimal(c["money"])) * Fraction(x["share"]) for c in d["calls"] for x in c["to"]
                    if x["target"] == "t1"), Fraction(0))
    assert saved_t1 == Fraction(t1)


def test_a_window_saves_the_calls_of_its_talks_only(store: Any) -> None:
    run = _judge(store, EXAMPLE, window="k2..k2")
    d = _saved(run)
    # k1 is context before the window: not priced, not saved
    assert d["judged"] == ["k2"] and [c["step"] for c in d["calls"]] == ["s18", "s22", "s25", "s28", "s30"]


def test_a_run_closed_without_it_is_refused_by_compare_saying_what_to_do(store: Any, asz_home: Path) -> None:
    from .test_show import asz

    a, b = _judge(store, EXAMPLE), _judge(store, SECOND)
    want = compare.compare([a, b])
    saved = (b / "call-costs.json").read_bytes()
    (b / "call-costs.json").unlink()  # as a run closed before asz saved it
    said = (f"{b / 'call-costs.json'} is missing: the run closed before asz saved what each call cost, "
            f"and this reads only the run's own files: `asz judge -show {b.name} --costs` writes it "
            "from the store at the run's head (or judge the conversation again)")
    with pytest.raises(RunFileError) as e:
        compare.compare([a, b])
    assert str(e.value) == said
    r = asz(asz_home, "compare", a.name, b.name, columns=1000)
    assert (r.returncode, r.stdout, r.stderr) == (1, "", f"error: {said}\n")
    # --costs writes it as the close did, byte for byte; once
    w = asz(asz_home, "judge", "-show", b.name, "--costs", columns=1000)
    assert (w.returncode, w.stdout) == (0, f"call costs {b / 'call-costs.json'}\n"), w.stderr
    assert (b / "call-costs.json").read_bytes() == saved
    again = asz(asz_home, "judge", "-show", b.name, "--costs", columns=1000)
    assert again.returncode == 1 and "is there already (a run's files are written once)" in again.stderr
    assert compare.compare([a, b]) == want
    meta = json.loads((a / "run.json").read_text())
    (a / "run.json").unlink()
    (a / "run.json").write_text(json.dumps({**meta, "head": "latest"}))
    with pytest.raises(AszError, match=r"run.json: its head 'latest' is no round \(r1, r2, ...\)"):
        compare.compare([a, b])  # which run is the earlier one would be a guess
    # 'r²' passed isdigit() and int() refused it; 5,000 digits passed both and int() refused them: tracebacks
    for head in ("r²", "r" + "9" * 5000):
        (a / "run.json").unlink()
        (a / "run.json").write_text(json.dumps({**meta, "head": head}))
        with pytest.raises(AszError, match=r"run.json: its head '.{1,40}' is no round \(r1, r2, ...\)"):
            compare.compare([a, b])
        r = asz(asz_home, "compare", a.name, b.name, columns=1000)
        assert r.returncode == 1 and r.stderr.count("\n") == 1 and "is no round" in r.stderr, r.stderr
    (a / "close.json").rename(a / "closed.json")
    with pytest.raises(AszError, match="has not closed"):
        runner.write_call_costs(a, store)


CALLS_BREAKS = COMMON | {
    "a field of the wrong type": (_edit(lambda d: {**d, "calls": "many"}), "is not a call-costs.json ("),
    "a field missing": (_edit(lambda d: {k: v for k, v in d.items() if k != "judged"}),
                        "is not a call-costs.json (required field missing @ $.judged)"),
    "another run's file": (_edit(lambda d: {**d, "run": "20990101T000000Z-beef"}),
                           "is of another run (run 20990101T000000Z-beef; this run is "),
    # the run's id, another head's or window's calls: weighed by calls the run never judged
    "another head's file": (_edit(lambda d: {**d, "head": "r2"}), "is of another head than its run.json (head 'r2', not 'r1')"),
    "another window's file": (_edit(lambda d: {**d, "window": "k1..k1", "head_digest": "0" * 64}),
                              "is of another head digest and window than its run.json (head_digest '" + "0" * 64),
    # numbers no close writes: read whole, 1e999999999 made a Fraction of a billion digits (compare never
    # ended), NaN and Infinity a ValueError traceback, a share of 1/0 a ZeroDivisionError
    "money of a billion digits": (_edit(lambda d: _call(d, "money", "1e999999999")),
                                  "is not a call-costs.json (invalid value for type, expected decimal.Decimal | None @ $.calls[0].money)"),
    "money NaN": (_edit(lambda d: _call(d, "money", "NaN")), "is not a call-costs.json (invalid value for type, expected decimal.Decimal | None @ $.calls[0].money)"),
    "a bound Infinity": (_edit(lambda d: _call(d, "at_least", "-Infinity")), "is not a call-costs.json (invalid value for type, expected decimal.Decimal | None @ $.calls[0].at_least)"),
    "a share of a billion digits": (_edit(lambda d: _call(d, "to", [{"target": "t1", "share": "1e99999999"}])),
                                    "is not a call-costs.json (invalid value for type, expected Fraction @ $.calls[0].to[0].share)"),
    "a share 1/0": (_edit(lambda d: _call(d, "to", [{"target": "t1", "share": "1/0"}])), "is not a call-costs.json (invalid value for type, expected Fraction @ $.calls[0].to[0].share)"),
    "a share over 1": (_edit(lambda d: _call(d, "to", [{"target": "t1", "share": "3/2"}])),
                       "is not a call-costs.json (a share outside (0, 1] @ $.calls[0].to[0].share)"),
    "a count below zero": (_edit(lambda d: _call(d, "cache_read", -11840)),
                           "is not a call-costs.json (below zero @ $.calls[0].cache_read)"),
    "money below zero": (_edit(lambda d: _call(d, "money", "-0.5")), "is not a call-costs.json (below zero @ $.calls[0].money)"),
}


def _call(d: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    """The file with its first call's ``key`` set to ``value``."""
    return {**d, "calls": [{**d["calls"][0], key: value}, *d["calls"][1:]]}


def test_a_call_costs_file_that_does_not_read_is_refused_naming_it(store: Any) -> None:
    import signal

    a, b = _judge(store, EXAMPLE), _judge(store, SECOND)
    signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(AssertionError("waited (on a FIFO, or a number's digits)")))
    signal.alarm(40)
    try:
        seen = set()
        for how, copy, words in _broken_copies(b, "call-costs.json", CALLS_BREAKS):
            with pytest.raises(RunFileError) as e:
                compare.compare([copy, a])  # the broken run's calls are the ones weighed (same head: the first's)
            said = str(e.value)
            assert said.startswith(f"{copy}{os.sep}call-costs.json ") and words in said and "\n" not in said, (how, said)
            seen.add(how)
        assert seen == set(CALLS_BREAKS)
    finally:
        signal.alarm(0)


def test_asz_compare_says_a_hostile_run_file_in_one_line(store: Any, asz_home: Path) -> None:
    """Through the command line, in a process of its own: a linked, truncated, huge call-costs.json,
    another run's, one of a billion-digit amount, and a close.json of a billion-digit score: exit 1,
    one line naming the file, no traceback, never waiting."""
    from .test_run_files import _huge, _link_to_a_copy, _score, _truncate
    from .test_show import asz

    a, b = _judge(store, EXAMPLE), _judge(store, SECOND)
    breaks = {"call-costs.json": {"a link to a valid file": (_link_to_a_copy, "is a symbolic link, never followed"),
                                  "truncated": (_truncate, "is not JSON (unexpected end of data"),
                                  "huge": (_huge, "is larger than 268,435,456 bytes (268,435,457)"),
                                  "another run's file": CALLS_BREAKS["another run's file"],
                                  "money of a billion digits": CALLS_BREAKS["money of a billion digits"]},
              "close.json": {"a score of a billion digits": (_score("1e99999999"), "is not a close.json (a score")}}
    for name, these in breaks.items():
        for how, copy, words in _broken_copies(b, name, these):
            r = asz(asz_home, "compare", str(copy), a.name, columns=1000)
            assert (r.returncode, r.stdout) == (1, ""), (how, r.stderr)
            assert r.stderr.startswith(f"error: {copy}{os.sep}{words}") and r.stderr.count("\n") == 1, (how, r.stderr)

