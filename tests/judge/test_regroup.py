"""Regrouping a closed run by the person's own goals (docs/regroup.md): the label file read as the
spec says, one evaluator call checked against the record, the groupings compared goal by goal,
goals' outcomes, the run never changed, versions never shared, a failed regroup kept."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from asz_core.errors import AszError
from asz_core.judge import person_goals, regroup, runner
from asz_core.judge.person_goals import LabelFileError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "scripted-5e1f0c2a.yaml"


# --- the label file --------------------------------------------------------------------------------

def _label(tmp_path: Path, text: str, name: str = "goals.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_a_label_file_gives_ids_in_order_and_keeps_its_text_and_digest(tmp_path: Path) -> None:
    text = "goals:\n  - Finish the post-vote steps of the 0.4.0 release\n  - Remove the website pull request step\n"
    p = _label(tmp_path, text)
    got = person_goals.read(p)
    assert [(g.id, g.text) for g in got.goals] == [("P1", "Finish the post-vote steps of the 0.4.0 release"),
                                                   ("P2", "Remove the website pull request step")]
    assert got.text == text and got.sha256 == hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize(("text", "says"), [
    ("goals: []\n", "lists no goal"),
    ("goals:\n", "lists no goal"),
    ("other: 1\n", "a label file holds a goals: list"),
    ("goals:\n  - a\n  - '   '\n", "goal P2 (item 2) is empty"),
    ("goals:\n  - a\n  - " + "x" * 2001 + "\n", "goal P2 'xxxx"),
    ("goals:\n  - Ship it\n  - b\n  - 'ship   IT'\n", "goal P3 'ship   IT' is given twice (it is P1 too)"),
    ("goals:\n  - 12\n", "goal P1 (item 1) is int"),
    ("goals:\n  - a\n  - true\n", "goal P2 (item 2) is bool"),
    ("goals:\n  - [a, b]\n", "goal P1 (item 1) is list"),
    ("goals: {a: 1}\n", "must be a list"),
    ("goals: a\n", "must be a list"),
    ("goals: [a\n", "not YAML"),
    ("goals:\n  - !!python/object:os.system a\n", "not YAML"),
    # an item with nothing after its dash is an empty goal, said so (it read as "NoneType, not words")
    ("goals:\n  - a\n  -\n", "goal P2 (item 2) is empty"),
    ("goals:\n  - a\n  - ~\n", "goal P2 (item 2) is empty"),
    # a YAML escape of half a UTF-16 pair: no text (it reached the prompt and failed the regroup with a traceback)
    ('goals:\n  - a\n  - "x\\ud800"\n', "goal P2 (item 2) holds '\\ud800' at character 2, half of a UTF-16 pair"),
    ("- a\n- b\n", "a label file holds a goals: list"),  # YAML, but no mapping
    ("just words\n", "a label file holds a goals: list"),
    ("", "a label file holds a goals: list"),
    ("goals: [a]\nmore: 1\n", "only goals: is read; it also holds 'more'"),
])
def test_a_label_file_that_is_not_read_says_the_file_and_the_goal(tmp_path: Path, text: str, says: str) -> None:
    p = _label(tmp_path, text)
    with pytest.raises(LabelFileError) as e:
        person_goals.read(p)
    assert str(e.value).startswith(f"{p}: ") and says in str(e.value)


def test_a_goal_of_exactly_2000_bytes_is_read_and_one_byte_more_is_not(tmp_path: Path) -> None:
    ok = "é" * 1000  # 2,000 bytes in UTF-8, 1,000 characters
    assert person_goals.read(_label(tmp_path, f"goals:\n  - {ok}\n")).goals[0].text == ok
    with pytest.raises(LabelFileError, match="2,001 bytes, longer than 2,000"):
        person_goals.read(_label(tmp_path, f"goals:\n  - {ok}x\n", "b.yaml"))


def test_a_label_file_that_is_a_fifo_is_never_waited_on(tmp_path: Path) -> None:
    p = tmp_path / "goals.yaml"
    os.mkfifo(p)
    with pytest.raises(LabelFileError, match="not a regular file"):
        person_goals.read(p)
    with pytest.raises(LabelFileError, match="no such label file"):
        person_goals.read(tmp_path / "none.yaml")


def _huge(p: Path) -> None:
    with p.open("wb") as f:  # sparse: 4 GiB of nothing, never read
        f.truncate(4 << 30)


def _bad_utf8(p: Path) -> None:
    p.write_bytes(b"goals:\n  - caf\xe9\n")


def _link_to_fifo(p: Path) -> None:
    os.mkfifo(p.with_name("pipe"))
    p.symlink_to("pipe")


@pytest.mark.parametrize(("make", "says"), [
    (_huge, "larger than 1,048,576 bytes; a label file is a list of goals"),
    (_bad_utf8, "not UTF-8 text (line 2: byte 0xe9 at offset 14)"),
    (lambda p: p.mkdir(), "not a regular file (a folder)"),
    (_link_to_fifo, "not a regular file (a named pipe)"),
    (lambda p: p.symlink_to("nowhere.yaml"), "no such label file"),
    (lambda p: p.symlink_to(p.name), "cannot be read (Too many levels of symbolic links)"),
])
def test_a_label_file_that_is_no_text_file_is_refused_naming_it(tmp_path: Path, make: Any, says: str) -> None:
    p = tmp_path / "goals.yaml"
    make(p)
    with pytest.raises(LabelFileError) as e:
        person_goals.read(p)
    assert str(e.value) == f"{p}: {says}"


def test_a_label_file_reached_through_a_link_is_the_persons_file_read_as_it_is(tmp_path: Path) -> None:
    """The person's own files (transcripts, sources, asz.yaml) are read through a link to a regular
    file; only a run's own files are never followed. The path kept is the file the link names."""
    real = _label(tmp_path, "goals:\n  - a\n", "real.yaml")
    (tmp_path / "goals.yaml").symlink_to(real.name)
    got = person_goals.read(tmp_path / "goals.yaml")
    assert (got.path, [g.text for g in got.goals]) == (str(real), ["a"])


def test_asz_says_a_label_file_that_is_not_read_in_one_line(store: Any, tmp_path: Path) -> None:
    """Through the command line, in a process of its own: one line naming the file and the goal, no
    traceback, nothing reserved, for each kind of file that is not read."""
    import subprocess
    import sys

    ans = _answer([{"target": "t1", "goal": "P1", "cites": ["i1"]}], [{"goal": "P1", "worked_on": True, "cites": ["i1"]}])
    res = _run(store, _script(tmp_path, [ans]))
    files = {"surrogate.yaml": ('goals:\n  - a\n  - "\\ud800"\n', "goal P2 (item 2) holds '\\ud800'"),
             "empty.yaml": ("goals:\n  - a\n  -\n", "goal P2 (item 2) is empty"),
             "long.yaml": ("goals:\n  - " + "é" * 1001 + "\n", "goal P1 'éééé"),
             "twice.yaml": ("goals:\n  - \"\\e[2J\\u202e\"\n  - \"\\e[2J\\u202e\"\n", "goal P2 '\\x1b[2J\\u202e' is given twice")}
    for name, (text, _) in files.items():
        _label(tmp_path, text, name)
    _huge(tmp_path / "huge.yaml")
    files["huge.yaml"] = ("", "larger than 1,048,576 bytes")
    _bad_utf8(tmp_path / "latin1.yaml")
    files["latin1.yaml"] = ("", "not UTF-8 text")
    env = {**os.environ, "ASZ_HOME": str(Path(store.path).parent), "COLUMNS": "300"}
    for name, (_, says) in files.items():
        got = subprocess.run([sys.executable, "-c", "from asz_core.cli import main; main()", "judge", "regroup", res.path.name,
                              "--goals", str(tmp_path / name)], capture_output=True, text=True, timeout=120, env=env)
        assert (got.returncode, got.stdout) == (1, ""), (name, got.stderr)
        assert got.stderr.startswith(f"error: {tmp_path / name}: ") and says in got.stderr, (name, got.stderr)
        assert got.stderr.count("\n") == 1 and "Traceback" not in got.stderr and "\x1b" not in got.stderr, (name, got.stderr)
    assert not (res.path / "regroups").exists()


# --- runs of the bundled example ----------------------------------------------------------------------

def _script(tmp_path: Path, regroups: list[dict[str, Any]], targets: Any = None, name: str = "script.json") -> Path:
    """The example's script with regroup answers (and, given, another targets stage answer)."""
    calls = YAML(typ="safe").load(EXAMPLE.read_text())["calls"]
    if targets is not None:
        calls = [dict(c, answer=targets(c["answer"])) if c["stage"] == "targets" else c for c in calls]
    for n, r in enumerate(regroups, 1):
        calls.append({"stage": "regroup", "call": 1, "pause": r.pop("pause", 0),
                      "requests": [{"reads": [{"tool": "targets", "args": {"id": "t1"}}],
                                    "usage": {"input": 900 + n, "output": 100, "cache_read": 0, "cache_write": 0}}], **r})
    p = tmp_path / name
    p.write_text(json.dumps({"calls": calls}))
    return p


def _run(store: Any, script: Path, **kw: Any) -> runner.RunResult:
    from asz_core.collect import collect

    collect([ROOT / "examples" / "claude-code"], store)
    return runner.judge(runner.JudgeOptions("5e1f0c2a", evaluator=f"scripted:{script}", **kw), store=store)


GOALS = "goals:\n  - Invoice totals right to the cent\n  - Know where else money is added as floats\n  - Translate the README\n"


def _answer(targets: list[Any], goals: list[Any]) -> dict[str, Any]:
    return {"answer": {"targets": targets, "goals": goals, "notes": None}}


def _files(run: Path) -> dict[str, str]:
    return {str(p.relative_to(run)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(run.rglob("*"))
            if p.is_file() and "regroups" not in p.parts}


def test_a_regroup_compares_goal_by_goal_and_never_changes_the_run(store: Any, tmp_path: Path) -> None:
    ans = _answer([{"target": "t1", "goal": "P1", "cites": ["i1"]}, {"target": "t2", "goal": "P2", "cites": ["i2", "s26"]}],
                  [{"goal": "P1", "worked_on": True, "cites": ["i1"]}, {"goal": "P2", "worked_on": True, "cites": ["i2"]},
                   {"goal": "P3", "worked_on": True, "cites": ["i3"]}])
    res = _run(store, _script(tmp_path, [ans]))
    before = _files(res.path)
    got = regroup.make(res.path, person_goals.read(_label(tmp_path, GOALS)), store=store)
    assert got.path == res.path / "regroups" / "v1" and _files(res.path) == before
    d = json.loads((got.path / "regroup.json").read_text())
    assert d["status"] == "complete", d["note"]
    assert (d["label"]["sha256"], d["label"]["text"]) == (hashlib.sha256(GOALS.encode()).hexdigest(), GOALS)
    assert [(p["target"], p["placed"], p["goal"], p["cites"]) for p in d["placements"]] == [
        ("t1", "goal", "P1", ["i1"]), ("t2", "goal", "P2", ["i2"])]  # s26, a reply, is no input of the person
    # the judge put t1 and t2 in one goal g1: each of P1 and P2 is merged with the other's target; P3 was
    # worked on (i3 asked for it, as the evaluator says) and no target serves it: missed
    assert [(g["goal"], g["verdict"], g["targets"], g["judge_groups"], g["others"], g["main_target"], g["main_basis"])
            for g in d["comparison"]["goals"]] == [
        ("P1", "merged", ["t1"], ["g1"], ["t2"], "t1", "only_member"),
        ("P2", "merged", ["t2"], ["g1"], ["t1"], "t2", "only_member"),
        ("P3", "missed", [], [], [], None, "no_target"),
    ]
    # the person's goals' outcomes, as the close computes the judge's: from the targets' own outcomes
    st = json.loads((res.path / "close.json").read_text())["statement"]
    t1, t2 = st["targets"]
    p1, p2, p3 = d["outcomes"]
    assert (p1["id"], p1["members"], p1["main_target"], p1["class"], p1["main_final_score"], p1["mean_final_score"]) == (
        "P1", ["t1"], "t1", t1["outcome"]["class"], t1["outcome"]["final_score"], t1["outcome"]["final_score"])
    assert p1["first_finding"] == (min(t1["findings"], key=lambda f: int(f[1:])) if t1["findings"] else None)
    assert (p2["class"], p2["main_final_score"]) == (t2["outcome"]["class"], t2["outcome"]["final_score"])
    assert (p3["members"], p3["class"], p3["mean_final_score"]) == ([], None, None)
    # the call read as the run did: the run's window and head; what it consumed is kept
    assert d["call"]["consumed"]["requests"] == 1 and d["call"]["consumed"]["input"] == 901
    assert (d["head"], d["window"]) == (json.loads((res.path / "run.json").read_text())["head"], "all")


def test_the_judges_goals_are_never_shown_to_the_regroup_call(store: Any, tmp_path: Path) -> None:
    ans = _answer([{"target": "t1", "goal": "P1", "cites": ["i1"]}, {"target": "t2", "goal": "P1", "cites": ["i2"]}],
                  [{"goal": "P1", "worked_on": True, "cites": ["i1"]}])
    res = _run(store, _script(tmp_path, [ans]))
    got = regroup.make(res.path, person_goals.read(_label(tmp_path, "goals:\n  - money right\n")), store=store)
    prompt = (got.path / "calls" / "regroup" / "1" / "1" / "prompt.md").read_text()
    import re

    judge_goal = json.loads((res.path / "stages" / "targets.json").read_text())["goals"][0]
    assert judge_goal["id"] == "g1" and "money right" in prompt
    assert not any(e["statement"] in prompt for e in judge_goal["evolution"])
    # (the shared prompt names `g1` as the form of a goal's id: the judge's g1 would be a JSON value)
    assert '"g1"' not in prompt and not re.search(r'"goal"\s*:\s*"g', prompt)
    # what its navigation serves: the targets with no goal
    from asz_core import window
    from asz_core.navigation import Navigator

    nav = Navigator(window.build(store, "5e1f0c2a"), store, run_dir=got.path / "state")
    whole = nav.call("targets", {"id": "t1"}).replace('\\"', '"').replace(" ", "")  # the item whole, as text
    assert '"statement"' in whole and '"goal":null' in whole and "g1" not in whole
    judge_nav = Navigator(window.build(store, "5e1f0c2a"), store, run_dir=res.path)
    assert '"goal":"g1"' in judge_nav.call("targets", {"id": "t1"}).replace('\\"', '"').replace(" ", "")  # the run's own
    d = json.loads((got.path / "regroup.json").read_text())
    # both targets in P1, the judge's g1 holds exactly them: matched; its main target undetermined as g1's is
    [p1] = d["comparison"]["goals"]
    assert (p1["verdict"], p1["main_target"], p1["main_basis"]) == ("matched", None, "undetermined")
    # P1 holds what the judge's g1 holds: its outcome is g1's as the close gave it, by the same function
    [g1] = json.loads((res.path / "close.json").read_text())["statement"]["goals"]
    [o1] = d["outcomes"]
    assert (o1["id"], g1["id"]) == ("P1", "g1") and {**o1, "id": None} == {**g1, "id": None}


def test_no_tool_the_regroup_call_reads_through_shows_the_judges_goals(store: Any, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Every answer the navigation gave during the call, of every tool (each talk, step, target
    and sub-task, the lists, a search for the goal's words), holds none of the judge's goals: no
    goal id, no statement of its evolution, no input's relation, no main target."""
    import re

    from asz_core import navigation

    steps = [{"tool": "step", "args": {"id": f"s{n}"}} for n in range(1, 32)]
    reads = [{"tool": "card"}, {"tool": "talks"}, {"tool": "talk", "args": {"id": "k1"}}, {"tool": "talk", "args": {"id": "k2"}},
             {"tool": "targets"}, {"tool": "targets", "args": {"id": "t1"}}, {"tool": "targets", "args": {"id": "t2"}},
             {"tool": "subtasks"}, {"tool": "subtasks", "args": {"item": "a1"}}, {"tool": "operations"}, {"tool": "sources"},
             {"tool": "search", "args": {"query": "right to the cent"}}, {"tool": "search", "args": {"query": "goal"}}, *steps]
    ans = _answer([{"target": "t1", "goal": "P1", "cites": ["i1"]}, {"target": "t2", "goal": "P1", "cites": ["i2"]}],
                  [{"goal": "P1", "worked_on": True, "cites": ["i1"]}])
    ans["requests"] = [{"reads": reads, "usage": None}]
    res = _run(store, _script(tmp_path, [ans]))
    judge = json.loads((res.path / "stages" / "targets.json").read_text())
    [g1] = judge["goals"]
    words = [e["statement"] for e in g1["evolution"]]
    assert g1["id"] == "g1" and len(words) == 3
    seen: list[tuple[str, str]] = []
    call = navigation.Navigator.call

    def recorded(self: Any, tool: str, args: Any = None) -> str:
        out = call(self, tool, args)
        seen.append((tool, out))
        return out

    monkeypatch.setattr(navigation.Navigator, "call", recorded)
    got = regroup.make(res.path, person_goals.read(_label(tmp_path, "goals:\n  - money right\n")), store=store)
    assert got.file.status == "complete"
    asked = [r["tool"] for r in reads]
    assert [t for t, _ in seen][-len(asked):] == asked  # what the call read (the prompt's card and inputs before it)
    log = [json.loads(x) for x in (got.path / "calls" / "regroup" / "1" / "1" / "reads.jsonl").read_text().splitlines()]
    assert [e["status"] for e in log] == ["ok"] * len(asked), [e for e in log if e["status"] != "ok"]
    for tool, out in seen:
        text = out.replace('\\"', '"')
        assert not re.search(r"\bg1\b", text), (tool, text[:3000])
        assert not any(w in text for w in words), (tool, text[:3000])
        assert not re.search(r'"(main_target|main_basis|main_cited|evolution|relations)"\s*:', text), (tool, text[:3000])
        assert not re.search(r'"goal"\s*:\s*"', text), (tool, text[:3000])
    # the same reads through the run's own navigation show them: the test would see them
    from asz_core import window

    theirs = navigation.Navigator(window.build(store, "5e1f0c2a"), store, run_dir=res.path)
    assert re.search(r"\bg1\b", call(theirs, "targets", {"id": "t1"}))


def _card_line(prompt: str) -> str:
    [line] = [x for x in prompt.splitlines() if x.startswith('{"head":')]
    return line


def _inputs_part(prompt: str) -> str:
    return prompt.split("The inputs from outside the agent", 1)[1].split("The card", 1)[0]


def test_the_regroup_call_reads_the_conversation_as_its_run_did(store: Any, tmp_path: Path) -> None:
    """A run at an earlier head, regrouped after the conversation grew, and a run of a window: the
    card the call is given (head, window, counts, cost at the run's prices) is the card the run's
    targets stage was given, the inputs are the window's, and the navigation shows nothing past
    the run's head."""
    import shutil

    from asz_core.collect import collect

    session = ROOT / "examples" / "claude-code" / "-home-dev-projects-invoicer"
    main = "5e1f0c2a-7b3d-4c8e-9a61-0d2f4b8c9e13"
    src = tmp_path / "src" / session.name
    src.mkdir(parents=True)
    lines = (session / f"{main}.jsonl").read_text().splitlines(keepends=True)
    (src / f"{main}.jsonl").write_text("".join(lines[:19]))  # up to the end of k1: i2 not yet written
    collect([src.parent], store)
    one = _answer([{"target": "t1", "goal": "P1", "cites": ["i1"]}],
                  [{"goal": "P1", "worked_on": True, "cites": ["i1"]}, {"goal": "P2", "worked_on": False}])
    one["requests"] = [{"reads": [{"tool": "talk", "args": {"id": "k2"}}, {"tool": "card"}], "usage": None}]
    early = runner.judge(runner.JudgeOptions("5e1f0c2a", evaluator=f"scripted:{_script(tmp_path, [one])}"), store=store)
    (src / f"{main}.jsonl").write_text("".join(lines))
    shutil.copytree(session / main, src / main)
    collect([src.parent], store)
    # the later run priced by its own price file: one that knows no Opus model (its calls unpriced)
    from asz_core.pricing import default_price_file

    prices = tmp_path / "prices.json"
    prices.write_bytes(default_price_file().read_bytes().replace(b"opus", b"opxs"))
    late = runner.judge(runner.JudgeOptions("5e1f0c2a", evaluator=f"scripted:{_script(tmp_path, [one], name='late.json')}",
                                            window="k2..k2", prices=str(prices)), store=store)
    heads = [json.loads((r.path / "run.json").read_text())["head"] for r in (early, late)]
    assert heads == ["r1", "r2"]
    label = person_goals.read(_label(tmp_path, "goals:\n  - a\n  - b\n"))
    for res, ids, not_ids in ((early, ["i1"], ["i2", "i3"]), (late, ["i2", "i3"], ["i1"])):
        got = regroup.make(res.path, label, store=store)
        prompt = (got.path / "calls" / "regroup" / "1" / "1" / "prompt.md").read_text()
        judged = (res.path / "calls" / "targets" / "1" / "1" / "prompt.md").read_text()
        assert _card_line(prompt) == _card_line(judged)
        cost = json.loads(_card_line(prompt))["cost"]
        assert (cost["unpriced_calls"] > 0, cost["prices"]) == ((True, "prices.json") if res is late else
                                                              (False, default_price_file().name)), cost
        inputs = _inputs_part(prompt)
        assert all(f'"input":"{i}"' in inputs for i in ids) and not any(f'"input":"{i}"' in inputs for i in not_ids), inputs
        d = json.loads((got.path / "regroup.json").read_text())
        assert (d["head"], d["window"]) == ((json.loads((res.path / "run.json").read_text())["head"]),
                                            "all" if res is early else "k2..k2")
    log = [json.loads(x) for x in (early.path / "regroups" / "v1" / "calls" / "regroup" / "1" / "1" / "reads.jsonl")
           .read_text().splitlines()]
    assert [(e["tool"], e["status"]) for e in log] == [("talk", "error"), ("card", "ok")]  # k2 is past the run's head


def test_every_placement_and_worked_on_is_checked(store: Any, tmp_path: Path) -> None:
    ans = _answer([{"target": "t1", "goal": "P9", "cites": ["i1"]}, {"target": "t2", "goal": "P2", "cites": ["s26", "k2"]},
                   {"target": "t7", "goal": "P1", "cites": ["i1"]}],
                  [{"goal": "P1", "worked_on": True, "cites": []}, {"goal": "P2", "worked_on": False}])
    res = _run(store, _script(tmp_path, [ans]))
    d = regroup.as_json(regroup.make(res.path, person_goals.read(_label(tmp_path, GOALS)), store=store).file)
    assert d["status"] == "partial"
    assert [(p["target"], p["placed"], p["given"]) for p in d["placements"]] == [("t1", "unknown", "P9"), ("t2", "unknown", "P2")]
    assert [(w["goal"], w["value"]) for w in d["worked_on"]] == [("P1", "unknown"), ("P2", "not_worked_on"), ("P3", "not_answered")]
    assert d["comparison"]["unknown"] == ["t1", "t2"]
    assert [(g["goal"], g["verdict"]) for g in d["comparison"]["goals"]] == [("P1", "unknown"), ("P2", "not_worked_on"),
                                                                             ("P3", "unknown")]
    assert any("t7" in n and "no such target" in n for n in d["note"])
    # a target left out is not answered, and a placement in none of the goals is kept, apart
    ans2 = _answer([{"target": "t2", "goal": None, "cites": []}], [{"goal": "P1", "worked_on": True, "cites": ["i1"]}])
    res2 = _run(store, _script(tmp_path, [ans2], name="s2.json"))
    d2 = regroup.as_json(regroup.make(res2.path, person_goals.read(_label(tmp_path, "goals:\n  - a\n")), store=store).file)
    assert [(p["target"], p["placed"]) for p in d2["placements"]] == [("t1", "not_answered"), ("t2", "none")]
    assert (d2["comparison"]["apart"], d2["comparison"]["not_answered"]) == (["t2"], ["t1"])
    assert d2["comparison"]["goals"][0]["verdict"] == "missed"


def test_an_input_the_targets_stage_found_was_not_the_persons_shows_nothing(store: Any, tmp_path: Path) -> None:
    def i3_not_person(a: dict[str, Any]) -> dict[str, Any]:
        a = json.loads(json.dumps(a))
        a["inputs"][2] = {"input": "i3", "actions": [{"target": None, "action": "not_from_person"}],
                          "relations": [{"relation": "not_from_person"}]}
        return a

    # i4 (s27) is the task the agent gave its sub-agent: an input, never the person's
    ans = _answer([{"target": "t1", "goal": "P1", "cites": ["i3"]}, {"target": "t2", "goal": "P1", "cites": ["i2"]}],
                  [{"goal": "P1", "worked_on": True, "cites": ["i3"]}, {"goal": "P2", "worked_on": True, "cites": ["i4", "s27"]}])
    res = _run(store, _script(tmp_path, [ans], targets=i3_not_person))
    d = regroup.as_json(regroup.make(res.path, person_goals.read(_label(tmp_path, "goals:\n  - a\n  - b\n")), store=store).file)
    assert [(p["target"], p["placed"]) for p in d["placements"]] == [("t1", "unknown"), ("t2", "goal")]
    assert [w["value"] for w in d["worked_on"]] == ["unknown", "unknown"]


def test_a_run_with_no_target_is_regrouped_and_a_goal_worked_on_is_missed(store: Any, tmp_path: Path) -> None:
    def none(a: dict[str, Any]) -> dict[str, Any]:
        return {"inputs": [{"input": i["input"], "actions": [{"target": None, "action": "none"}],
                            "relations": [{"relation": "unclear"}]} for i in a["inputs"]], "targets": [], "goals": []}

    ans = _answer([], [{"goal": "P1", "worked_on": True, "cites": ["i1"]}, {"goal": "P2", "worked_on": False}])
    res = _run(store, _script(tmp_path, [ans], targets=none), stages=("targets",))
    d = regroup.as_json(regroup.make(res.path, person_goals.read(_label(tmp_path, "goals:\n  - a\n  - b\n")), store=store).file)
    assert d["status"] == "complete" and d["placements"] == []
    assert [(g["goal"], g["verdict"]) for g in d["comparison"]["goals"]] == [("P1", "missed"), ("P2", "not_worked_on")]


def test_two_regroups_at_once_never_share_a_version(store: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ans = _answer([{"target": "t1", "goal": "P1", "cites": ["i1"]}, {"target": "t2", "goal": None}],
                  [{"goal": "P1", "worked_on": True, "cites": ["i1"]}])
    res = _run(store, _script(tmp_path, [dict(ans, pause=0.5)]))
    label = person_goals.read(_label(tmp_path, "goals:\n  - a\n"))
    got: list[Any] = []
    errors: list[BaseException] = []
    from asz_core.judge import regroup_files

    listed = regroup_files.versions
    both = threading.Barrier(2, timeout=30)
    calls = iter(range(2))

    def stale(run_dir: Path) -> list[Path]:  # both list the versions before either reserves one
        out = listed(run_dir)
        if next(calls, None) is not None:
            both.wait()
        return out

    monkeypatch.setattr(regroup_files, "versions", stale)

    def one() -> None:
        from asz_core.store import Store

        s = Store.open(Path(store.path).parent)
        try:
            got.append(regroup.make(res.path, label, store=s))
        except BaseException as exc:  # noqa: BLE001 - said by the test
            errors.append(exc)
        finally:
            s.close()

    threads = [threading.Thread(target=one) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert sorted(g.path.name for g in got) == ["v1", "v2"]
    assert all(g.file.status == "complete" for g in got)
    for g in got:  # each kept its own call's files
        assert (g.path / "calls" / "regroup" / "1" / "1" / "prompt.md").is_file()


# A regroup in a process of its own, as `asz judge regroup` runs; with BARRIER set, it lists the
# versions, says so in that folder and waits until as many processes have listed as the folder
# names, before it reserves one: each of them lists before any reserves.
_CHILD = """
import os, sys, time
from pathlib import Path
barrier = os.environ.get("BARRIER")
if barrier:
    from asz_core.judge import regroup_files
    listed = regroup_files.versions
    def stale(run_dir):
        out = listed(run_dir)
        b = Path(barrier)
        (b / f"listed-{os.getpid()}").touch()
        end = time.monotonic() + 60
        while len(list(b.glob("listed-*"))) < int(os.environ["PROCESSES"]) and time.monotonic() < end:
            time.sleep(0.01)
        return out
    regroup_files.versions = stale
from asz_core.cli import main
main()
"""


def _regroup_process(store: Any, run: Path, label: Path, script: Path, **env: str) -> Any:
    import subprocess
    import sys

    return subprocess.Popen([sys.executable, "-c", _CHILD, "judge", "regroup", run.name, "--goals", str(label),
                             "--evaluator", f"scripted:{script}", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "ASZ_HOME": str(Path(store.path).parent), **env})


def test_two_regroups_started_at_once_in_processes_of_their_own_never_share_a_version(store: Any, tmp_path: Path) -> None:
    ans = _answer([{"target": "t1", "goal": "P1", "cites": ["i1"]}, {"target": "t2", "goal": None}],
                  [{"goal": "P1", "worked_on": True, "cites": ["i1"]}])
    script = _script(tmp_path, [ans])
    res = _run(store, script)
    label = _label(tmp_path, "goals:\n  - a\n")
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    procs = [_regroup_process(store, res.path, label, script, BARRIER=str(barrier), PROCESSES="3") for _ in range(3)]
    outs = [p.communicate(timeout=180) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], [e for _, e in outs]
    assert len(list(barrier.glob("listed-*"))) == 3  # each listed the versions before any reserved one
    made = sorted(json.loads(o)["regroup"] for o, _ in outs)
    assert made == ["v1", "v2", "v3"]
    for v in made:  # each kept its own call's files and its own record
        d = json.loads((res.path / "regroups" / v / "regroup.json").read_text())
        assert (d["regroup"], d["status"]) == (v, "complete")
        assert len((res.path / "regroups" / v / "calls" / "regroup" / "1" / "1" / "prompt.md").read_text()) > 0


def test_a_regroups_page_follows_that_regroup_though_another_ended_first(store: Any, tmp_path: Path) -> None:
    """v1's call is slow; v2, started while v1's runs, ends first: v1's page still shows v1, and
    -show follows the latest that compared anything, v2."""
    import time

    ans = _answer([{"target": "t1", "goal": "P1", "cites": ["i1"]}], [{"goal": "P1", "worked_on": True, "cites": ["i1"]}])
    fast = _script(tmp_path, [dict(ans)], name="fast.json")
    slow = _script(tmp_path, [dict(ans, pause=4)], name="slow.json")
    res = _run(store, fast)
    label = _label(tmp_path, "goals:\n  - a\n")
    first = _regroup_process(store, res.path, label, slow)
    end = time.monotonic() + 60
    while not (res.path / "regroups" / "v1" / "calls").exists() and time.monotonic() < end:
        time.sleep(0.05)
    second = _regroup_process(store, res.path, label, fast)
    o2, e2 = second.communicate(timeout=120)
    assert second.returncode == 0 and first.poll() is None, e2  # v2 ended while v1's call still ran
    o1, e1 = first.communicate(timeout=120)
    assert first.returncode == 0, e1
    assert (json.loads(o1)["regroup"], json.loads(o2)["regroup"]) == ("v1", "v2")
    for v in ("v1", "v2"):
        html = (res.path / "regroups" / v / "report.html").read_text()
        assert f'data-regroup="{v}"' in html and 'data-regroup="v' + ("2" if v == "v1" else "1") + '"' not in html, v
    assert runner.read_run(res.path)["regroup"]["regroup"] == "v2"


def test_the_regroups_evaluator_is_the_runs_targets_stages_unless_one_is_named(store: Any, tmp_path: Path) -> None:
    """The run's targets stage was judged by one script, its other stages by another that holds no
    regroup answer: the regroup asks the targets stage's."""
    ans = _answer([{"target": "t1", "goal": "P1", "cites": ["i1"]}, {"target": "t2", "goal": None}],
                  [{"goal": "P1", "worked_on": True, "cites": ["i1"]}])
    with_regroup = _script(tmp_path, [ans], name="targets.json")
    others = _script(tmp_path, [], name="others.json")
    res = _run(store, others, stage_evaluators={"targets": f"scripted:{with_regroup}"})
    evs = json.loads((res.path / "run.json").read_text())["evaluators"]
    assert evs["targets"]["spec"] == f"scripted:{with_regroup}" and evs["achievement"]["spec"] == f"scripted:{others}"
    label = person_goals.read(_label(tmp_path, "goals:\n  - a\n"))
    got = regroup.make(res.path, label, store=store)
    assert (got.file.status, got.file.evaluator.spec) == ("complete", f"scripted:{with_regroup}")
    named = regroup.make(res.path, label, store=store, evaluator=f"scripted:{others}")
    assert (named.file.status, named.file.evaluator.spec) == ("failed", f"scripted:{others}")


def test_a_failed_regroup_is_kept_with_what_its_call_consumed_and_show_follows_the_latest_that_compared(
        store: Any, tmp_path: Path) -> None:
    good = _answer([{"target": "t1", "goal": "P1", "cites": ["i1"]}], [{"goal": "P1", "worked_on": True, "cites": ["i1"]}])
    res = _run(store, _script(tmp_path, [good]))
    label = person_goals.read(_label(tmp_path, "goals:\n  - a\n"))
    first = regroup.make(res.path, label, store=store)
    bad = tmp_path / "bad.json"  # a regroup call answering nothing readable, twice
    bad.write_text(json.dumps({"calls": [{"stage": "regroup", "call": 1, "raw": "no JSON here",
                                          "requests": [{"usage": {"input": 70, "output": 7, "cache_read": 0, "cache_write": 0}},
                                                       {"usage": None}]}]}))
    second = regroup.make(res.path, label, store=store, evaluator=f"scripted:{bad}")
    f = regroup.as_json(second.file)
    assert (second.path.name, f["status"], f["comparison"]) == ("v2", "failed", None)
    assert "gave nothing readable twice" in f["reason"]
    c = f["call"]["consumed"]
    assert (f["call"]["attempts"], c["requests"], c["unknown_requests"], c["input"]) == (2, 2, 2, 140)
    assert (second.path / "regroup.json").is_file()
    d = runner.read_run(res.path)
    assert d["regroup"]["regroup"] == first.path.name == "v1"
    from io import StringIO

    from rich.console import Console

    from asz_core.judge.report import run_text

    buf = StringIO()
    Console(file=buf, width=160).print(run_text(d))
    text = buf.getvalue()
    assert "regroup v1 by the person's goals" in text and "the two groupings side by side" in text
    assert "judge's goal" in text and "person's goal" in text
    html = (first.path / "report.html").read_text()
    assert 'data-regroup="v1"' in html and 'data-person-goal="P1"' in html and 'data-placement="t1"' in html


def test_show_follows_the_latest_regroup_that_compared_anything_by_its_number(store: Any, tmp_path: Path) -> None:
    """v1 compared; v2..v8 stopped before their regroup.json; v9 and v10 compared; v11 failed:
    -show and a new page follow v10 (v10 sorts before v9 as text)."""
    good = _answer([{"target": "t1", "goal": "P1", "cites": ["i1"]}], [{"goal": "P1", "worked_on": True, "cites": ["i1"]}])
    res = _run(store, _script(tmp_path, [good]))
    label = person_goals.read(_label(tmp_path, "goals:\n  - a\n"))
    assert regroup.make(res.path, label, store=store).path.name == "v1"
    for n in range(2, 9):
        (res.path / "regroups" / f"v{n}").mkdir()
    for name in ("v²", "v١١", "v011", "vx", "v" + "9" * 200):  # no version: never read as one (v² was a ValueError)
        (res.path / "regroups" / name).mkdir()
    assert [regroup.make(res.path, label, store=store).path.name for _ in range(2)] == ["v9", "v10"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"calls": [{"stage": "regroup", "call": 1, "raw": "no JSON here", "requests": []}]}))
    assert regroup.make(res.path, label, store=store, evaluator=f"scripted:{bad}").file.status == "failed"
    assert runner.read_run(res.path)["regroup"]["regroup"] == "v10"
    from asz_core.judge import report_html

    page = report_html.write(res.path, store, out=tmp_path / "page.html")
    assert 'data-regroup="v10"' in page.read_text()


def test_goals_given_with_a_run_are_applied_once_it_closes_and_never_shown_to_its_stages(store: Any, tmp_path: Path) -> None:
    ans = _answer([{"target": "t1", "goal": "P1", "cites": ["i1"]}, {"target": "t2", "goal": "P2", "cites": ["i2"]}],
                  [{"goal": "P1", "worked_on": True, "cites": ["i1"]}, {"goal": "P2", "worked_on": True, "cites": ["i2"]},
                   {"goal": "P3", "worked_on": False}])
    res = _run(store, _script(tmp_path, [ans]), goals=_label(tmp_path, GOALS))
    assert res.regroup is not None and res.regroup.file.status == "complete"
    for p in (res.path / "calls").rglob("prompt.md"):
        assert "Translate the README" not in p.read_text(), p
    assert "Translate the README" in (res.path / "regroups/v1/calls/regroup/1/1/prompt.md").read_text()
    html = (res.path / "report.html").read_text()
    assert 'data-regroup="v1"' in html and "Translate the README" in html


def test_a_regroup_that_breaks_after_the_run_closed_keeps_the_runs_report(store: Any, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """asz's own fault inside the regroup of a run given --goals (here: one forced): the run is
    closed and keeps its report.html, the traceback is kept, and the progress says how to make the
    regroup again (was: the error out of judge, and no report)."""
    from asz_core.judge import regroup

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug in the regroup")

    monkeypatch.setattr(regroup, "make", broken)
    said: list[str] = []
    from asz_core.collect import collect

    collect([ROOT / "examples" / "claude-code"], store)
    res = runner.judge(runner.JudgeOptions("5e1f0c2a", evaluator=f"scripted:{ROOT / 'examples' / 'scripted-5e1f0c2a.yaml'}",
                                           goals=_label(tmp_path, GOALS)), store=store, progress=said.append)
    assert res.regroup is None and (res.path / "close.json").is_file() and (res.path / "report.html").is_file()
    assert (res.path / "calls" / "regroup.traceback.txt").is_file()
    assert any("the regroup was not made: RuntimeError: a bug in the regroup" in s and "asz judge regroup" in s for s in said)


def test_a_bad_label_file_stops_the_run_before_it_starts(store: Any, tmp_path: Path) -> None:
    p = _label(tmp_path, "goals:\n  - a\n  - a\n")
    with pytest.raises(LabelFileError, match="goal P2 'a' is given twice"):
        _run(store, _script(tmp_path, []), goals=p)
    assert not list((Path(store.path).parent / "runs").glob("*/*/run.json"))


def test_the_command_line(store: Any, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from asz_core import cli

    ans = _answer([{"target": "t1", "goal": "P1", "cites": ["i1"]}], [{"goal": "P1", "worked_on": True, "cites": ["i1"]}])
    script = _script(tmp_path, [ans])
    res = _run(store, script)
    ok = CliRunner().invoke(cli.app, ["judge", "regroup", res.path.name, "--goals", str(_label(tmp_path, "goals:\n  - a\n")),
                                      "--json"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["comparison"]["goals"][0]["verdict"] == "merged"
    import subprocess
    import sys

    bad = subprocess.run([sys.executable, "-c", "from asz_core.cli import main; main()", "judge", "regroup", res.path.name,
                          "--goals", str(_label(tmp_path, 'goals:\n  - "\\e[31m"\n  - "\\e[31m"\n', "bad.yaml"))],
                         capture_output=True, text=True, timeout=120, env={**os.environ, "ASZ_HOME": str(Path(store.path).parent)})
    assert bad.returncode == 1 and "Traceback" not in bad.stderr, bad.stderr
    assert "bad.yaml" in bad.stderr and "goal P2" in bad.stderr and "\x1b" not in bad.stderr
    shown = CliRunner().invoke(cli.app, ["judge", "-show", res.path.name, "--json"])
    assert json.loads(shown.stdout)["regroup"]["regroup"] == "v1"
    text = CliRunner().invoke(cli.app, ["judge", "regroup", res.path.name, "--goals", str(tmp_path / "goals.yaml")],
                              env={"COLUMNS": "300"})
    assert text.exit_code == 0, text.output
    page = res.path / "regroups" / "v2" / "report.html"
    assert f"regroup {page.parent}\n" in text.stdout and text.stdout.endswith(f"report {page}\n") and page.is_file()


def test_a_goals_main_target_is_the_judges_when_a_goal_of_the_judge_holds_the_same_targets(store: Any, tmp_path: Path) -> None:
    def main_cited(a: dict[str, Any]) -> dict[str, Any]:
        a = json.loads(json.dumps(a))
        a["goals"] = [{"goal": "new:money", "main_target": "new:rounding", "main_cited": "i1"}]
        return a

    both = _answer([{"target": "t1", "goal": "P1", "cites": ["i1"]}, {"target": "t2", "goal": "P1", "cites": ["i2"]}],
                   [{"goal": "P1", "worked_on": True, "cites": ["i1"]}])
    res = _run(store, _script(tmp_path, [both], targets=main_cited))
    g1 = json.loads((res.path / "stages" / "targets.json").read_text())["goals"][0]
    assert (g1["members"], g1["main_target"], g1["main_basis"]) == (["t1", "t2"], "t1", "cited")
    d = regroup.as_json(regroup.make(res.path, person_goals.read(_label(tmp_path, "goals:\n  - money\n")), store=store).file)
    [p1] = d["comparison"]["goals"]
    assert (p1["verdict"], p1["main_target"], p1["main_basis"]) == ("matched", "t1", "judge_goal")
    st = json.loads((res.path / "close.json").read_text())["statement"]
    assert d["outcomes"][0]["main_final_score"] == st["targets"][0]["outcome"]["final_score"]
    # the same judge's goal does not make the main target of a person's goal that holds only some of its
    # targets and another besides: P1 holds t1, P2 holds t2 alone (its only member: main by that)
    split = _answer([{"target": "t1", "goal": "P1", "cites": ["i1"]}, {"target": "t2", "goal": "P2", "cites": ["i2"]}],
                    [{"goal": "P1", "worked_on": True, "cites": ["i1"]}, {"goal": "P2", "worked_on": True, "cites": ["i2"]}])
    res2 = _run(store, _script(tmp_path, [split], targets=main_cited, name="s3.json"))
    d2 = regroup.as_json(regroup.make(res2.path, person_goals.read(_label(tmp_path, "goals:\n  - a\n  - b\n", "g2.yaml")),
                                      store=store).file)
    assert [(g["main_target"], g["main_basis"]) for g in d2["comparison"]["goals"]] == [("t1", "only_member"), ("t2", "only_member")]

    def three(a: dict[str, Any]) -> dict[str, Any]:  # a third target, t3, created by i3 in the judge's g1
        a = main_cited(a)
        a["inputs"][2]["actions"].append({"target": "new:csv", "action": "create"})
        a["targets"].append({"target": "new:csv", "statement": "Check the CSV export", "kind": "question",
                             "criteria": [{"text": "the CSV export is checked"}], "talks": ["k2"], "state": "open"})
        return a

    some = _answer([{"target": "t1", "goal": "P1", "cites": ["i1"]}, {"target": "t2", "goal": "P1", "cites": ["i2"]},
                    {"target": "t3", "goal": "P2", "cites": ["i3"]}],
                   [{"goal": "P1", "worked_on": True, "cites": ["i1"]}, {"goal": "P2", "worked_on": True, "cites": ["i3"]}])
    res3 = _run(store, _script(tmp_path, [some], targets=three, name="s4.json"))
    assert json.loads((res3.path / "stages" / "targets.json").read_text())["goals"][0]["members"] == ["t1", "t2", "t3"]
    d3 = regroup.as_json(regroup.make(res3.path, person_goals.read(_label(tmp_path, "goals:\n  - a\n  - b\n", "g3.yaml")),
                                      store=store).file)
    # P1 holds t1 and t2, g1 holds t3 besides: g1's main target was cited for three targets, not for P1's two
    assert [(g["goal"], g["verdict"], g["main_target"], g["main_basis"]) for g in d3["comparison"]["goals"]] == [
        ("P1", "merged", None, "undetermined"), ("P2", "merged", "t3", "only_member")]


def test_a_target_the_judge_put_in_no_goal_stands_alone_and_a_goals_only_member_still_wanted_is_main(
        store: Any, tmp_path: Path) -> None:
    def t2_alone_t1_cancelled(a: dict[str, Any]) -> dict[str, Any]:
        a = json.loads(json.dumps(a))
        for i in a["inputs"][1:]:  # i2 and i3 relate to no goal: the audit question t2 is in none
            i["relations"] = [{"relation": "unclear"}]
        a["inputs"][2]["actions"].append({"target": "new:rounding", "action": "cancel"})
        a["targets"][0]["state"] = "cancelled"
        return a

    ans = _answer([{"target": "t1", "goal": "P1", "cites": ["i1"]}, {"target": "t2", "goal": "P1", "cites": ["i2"]}],
                  [{"goal": "P1", "worked_on": True, "cites": ["i1"]}, {"goal": "P2", "worked_on": True, "cites": ["i3"]}])
    res = _run(store, _script(tmp_path, [ans], targets=t2_alone_t1_cancelled))
    ts = json.loads((res.path / "stages" / "targets.json").read_text())
    assert [(t["id"], t["goal"], t["state"]) for t in ts["targets"]] == [("t1", "g1", "cancelled"), ("t2", None, "open")]
    d = regroup.as_json(regroup.make(res.path, person_goals.read(_label(tmp_path, "goals:\n  - a\n  - b\n")), store=store).file)
    assert d["comparison"]["alone"] == ["t2"]
    p1, p2 = d["comparison"]["goals"]
    # P1's targets lie in g1 and in t2's own group; of them only t2 is still wanted: its main target
    assert (p1["verdict"], p1["judge_groups"], p1["main_target"], p1["main_basis"]) == (
        "split", ["g1", "alone t2"], "t2", "only_member")
    assert (p2["verdict"], p2["targets"], p2["main_basis"]) == ("missed", [], "no_target")  # worked on, no target serves it
    st = json.loads((res.path / "close.json").read_text())["statement"]
    t2 = next(t for t in st["targets"] if t["id"] == "t2")
    o1 = d["outcomes"][0]
    # the outcome's mean is over the targets still wanted: t2's alone
    assert (o1["main_target"], o1["main_final_score"], o1["mean_final_score"]) == ("t2", t2["outcome"]["final_score"],
                                                                                   t2["outcome"]["final_score"])
    from io import StringIO

    from rich.console import Console

    from asz_core.judge.report import run_text

    buf = StringIO()
    Console(file=buf, width=200).print(run_text(runner.read_run(res.path)))
    assert "none (alone)" in buf.getvalue() and "in no goal of the judge (each stands alone): t2" in buf.getvalue()


def test_a_goal_whose_targets_lie_in_several_of_the_judges_goals_is_split(store: Any, tmp_path: Path) -> None:
    second = next(c for c in YAML(typ="safe").load((ROOT / "examples" / "scripted-5e1f0c2a-second.yaml").read_text())["calls"]
                  if c["stage"] == "targets")["answer"]  # the judge's two goals: g1 holds t1, g2 holds t2
    both = _answer([{"target": "t1", "goal": "P1", "cites": ["i1"]}, {"target": "t2", "goal": "P1", "cites": ["i2"]}],
                   [{"goal": "P1", "worked_on": True, "cites": ["i1"]}, {"goal": "P2", "worked_on": False}])
    res = _run(store, _script(tmp_path, [both], targets=lambda a: second))
    assert [g["members"] for g in json.loads((res.path / "stages" / "targets.json").read_text())["goals"]] == [["t1"], ["t2"]]
    d = regroup.as_json(regroup.make(res.path, person_goals.read(_label(tmp_path, "goals:\n  - a\n  - b\n")), store=store).file)
    p1, p2 = d["comparison"]["goals"]
    assert (p1["verdict"], p1["judge_groups"], p1["others"], p1["main_basis"]) == ("split", ["g1", "g2"], [], "undetermined")
    assert (p2["verdict"], p2["targets"]) == ("not_worked_on", [])
    # the judge's outcome of P1 is its targets' together: the mean of both final scores
    st = json.loads((res.path / "close.json").read_text())["statement"]
    from fractions import Fraction

    mean = sum((Fraction(t["outcome"]["final_score"]) for t in st["targets"]), Fraction(0)) / 2
    assert Fraction(d["outcomes"][0]["mean_final_score"]) == mean


def test_a_hostile_answer_is_data_left_out_or_unknown_never_a_crash(store: Any, tmp_path: Path) -> None:
    ans = _answer([{"target": "t1", "goal": ["P1"] * 100_000, "cites": "i1"}, {"target": ["t2"], "goal": "P1"}, "t2", 7,
                   {"target": "t2", "goal": 3, "cites": [{"x": 1}, None, "i1"]}],
                  [{"goal": "P1", "worked_on": "yes", "cites": ["i1"]}, {"goal": {"a": 1}}, None])
    res = _run(store, _script(tmp_path, [ans]))
    d = regroup.as_json(regroup.make(res.path, person_goals.read(_label(tmp_path, "goals:\n  - a\n")), store=store).file)
    assert d["status"] == "partial"
    assert [(p["target"], p["placed"]) for p in d["placements"]] == [("t1", "unknown"), ("t2", "unknown")]
    assert len(d["placements"][0]["given"].encode()) < 400 and "bytes in all" in d["placements"][0]["given"]
    assert d["worked_on"][0]["value"] == "not_answered"
    assert d["comparison"]["unknown"] == ["t1", "t2"]


def test_a_run_that_has_not_closed_or_names_no_evaluator_is_not_regrouped(store: Any, tmp_path: Path) -> None:
    res = _run(store, _script(tmp_path, []))
    label = person_goals.read(_label(tmp_path, "goals:\n  - a\n"))
    (res.path / "close.json").rename(tmp_path / "close.json")
    with pytest.raises(AszError, match="has not closed: a regroup is made over a closed run"):
        regroup.make(res.path, label, store=store)
    assert not (res.path / "regroups").exists()
    (tmp_path / "close.json").rename(res.path / "close.json")
    with pytest.raises(AszError, match="no evaluator named 'nosuch'|nosuch"):
        regroup.make(res.path, label, store=store, evaluator="nosuch")
    assert not (res.path / "regroups").exists()  # nothing reserved before the evaluator is known to work


def test_a_run_whose_close_json_holds_what_no_close_writes_is_refused_or_read_safely(store: Any, tmp_path: Path) -> None:
    """A final score of a billion digits stops the regroup before it reserves a version (the goals'
    outcomes read it as a fraction: it never ended); a finding id 'f²' (isdigit(), not int()) is
    ordered last, never a ValueError."""
    from asz_core.judge.run_files import RunFileError

    ans = _answer([{"target": "t1", "goal": "P1", "cites": ["i1"]}, {"target": "t2", "goal": "P1", "cites": ["i2"]}],
                  [{"goal": "P1", "worked_on": True, "cites": ["i1"]}])
    res = _run(store, _script(tmp_path, [ans]))
    label = person_goals.read(_label(tmp_path, "goals:\n  - a\n"))
    close = res.path / "close.json"
    kept = json.loads(close.read_text())

    def rewrite(d: dict[str, Any]) -> None:
        close.unlink()
        close.write_text(json.dumps(d))

    d = json.loads(json.dumps(kept))
    d["statement"]["targets"][0]["outcome"]["final_score"] = "1e99999999"
    rewrite(d)
    with pytest.raises(RunFileError, match=r"close.json is not a close.json \(a score that is no fraction from 0 to 1 @ "
                                           r"\$.statement.targets\[0\].outcome.final_score\)"):
        regroup.make(res.path, label, store=store)
    assert not (res.path / "regroups").exists()
    d = json.loads(json.dumps(kept))
    assert d["statement"]["targets"][0]["findings"] == ["f1"]  # the example's t1's
    d["statement"]["targets"][0]["findings"] = ["f²", "f1"]
    rewrite(d)
    got = regroup.as_json(regroup.make(res.path, label, store=store).file)
    assert got["outcomes"][0]["first_finding"] == "f1"


def test_a_run_judged_against_a_source_is_regrouped_with_its_navigation_serving_the_source(store: Any, tmp_path: Path) -> None:
    """The regroup's call reads the conversation as the run did: the sources the run saved too."""
    from asz_core import window
    from asz_core.navigation import Navigator

    incident = ROOT / "examples" / "INC-88.md"
    script = _script(tmp_path, [_answer([{"target": "t1", "goal": "P1", "cites": ["i1"]}],
                                        [{"goal": "P1", "worked_on": True, "cites": ["i1"]}])])
    calls = json.loads(script.read_text())["calls"]
    reads = [{"tool": "sources"}, {"tool": "sources", "args": {"id": "src1", "line": 16}}]
    calls[-1]["requests"][0]["reads"] = reads  # the regroup's call reads the incident note through its navigation
    script.write_text(json.dumps({"calls": calls}))
    res = _run(store, script, sources=(str(incident),))
    assert json.loads((res.path / "work" / "sources" / "src1" / "manifest.json").read_text())["status"] == "saved"
    before = _files(res.path)
    got = regroup.make(res.path, person_goals.read(_label(tmp_path, "goals:\n  - money right\n")), store=store)
    assert _files(res.path) == before
    log = [json.loads(x) for x in (got.path / "calls" / "regroup" / "1" / "1" / "reads.jsonl").read_text().splitlines()]
    assert [(e["tool"], e["status"]) for e in log] == [("sources", "ok"), ("sources", "ok")]
    # what it served is what the run's navigation serves (each answer without the budget, which is each call's own)
    w = window.build(store, "5e1f0c2a")
    theirs, ours = (Navigator(w, store, run_dir=d) for d in (res.path, got.path / "state"))

    def answer(nav: Any, r: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in json.loads(nav.call(r["tool"], r.get("args"))).items() if k != "budget_left"}

    listed, text = (answer(ours, r) for r in reads)
    assert [(s["id"], s["status"], s["source"]) for s in listed["sources"]] == [("src1", "saved", str(incident))]
    # INC-88.md's line 16 on: the float audit missed refunds.py
    assert text["from"] == 16 and "It missed invoicer/refunds.py" in text["text"] and "refunds.py:9" in text["text"]
    assert [answer(theirs, r) for r in reads] == [listed, text]
