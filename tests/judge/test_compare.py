"""``asz compare``: runs of one conversation compared from their saved files (docs/compare.md),
with scripted runs whose agreement is known exactly: kappa and the cost-weighted shares are worked
out by hand here, from which calls each script labels how."""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from asz_core.errors import AszError
from asz_core.judge import compare, runner

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "scripted-5e1f0c2a.yaml"
SECOND = ROOT / "examples" / "scripted-5e1f0c2a-second.yaml"
SESSION = ROOT / "examples" / "claude-code" / "-home-dev-projects-invoicer"
MAIN = "5e1f0c2a-7b3d-4c8e-9a61-0d2f4b8c9e13"


def _calls(script: Path) -> list[dict[str, Any]]:
    return YAML(typ="safe").load(script.read_text())["calls"]


def _write(tmp_path: Path, calls: list[dict[str, Any]], name: str) -> Path:
    p = tmp_path / name
    p.write_text(json.dumps({"calls": calls}))
    return p


def _judge(store: Any, script: Path, **kw: Any) -> Path:
    return runner.judge(runner.JudgeOptions("5e1f0c2a", evaluator=f"scripted:{script}", **kw), store=store).path


def _money(run: Path) -> dict[str, Fraction]:
    """What each call cost, as the run saved it when it closed (call-costs.json: what compare reads;
    tests/judge/test_call_costs.py checks each figure against the transcript's counts and the prices)."""
    from decimal import Decimal

    return {c["step"]: Fraction(Decimal(c["money"])) for c in json.loads((run / "call-costs.json").read_text())["calls"]}


def _store_gone(store: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The store closed, its file deleted and no store openable: what compare reads is the runs' files alone."""
    from asz_core.store import Store

    home = Path(store.path).parent
    store.close()
    for f in home.glob("asz.db*"):
        f.unlink()

    def refused(*_: Any, **__: Any) -> Any:
        raise AssertionError("a store was opened")

    monkeypatch.setattr(Store, "__init__", refused)
    return home


def _files(run: Path) -> dict[str, str]:
    return {str(p.relative_to(run)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(run.rglob("*")) if p.is_file()}


@pytest.fixture
def example(store: Any) -> Any:
    from asz_core.collect import collect

    collect([ROOT / "examples" / "claude-code"], store)
    return store


def test_two_scripts_of_the_example_agree_as_worked_out_by_hand(example: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = _judge(example, EXAMPLE), _judge(example, SECOND)
    before = _files(a), _files(b)
    _store_gone(example, monkeypatch)
    d = compare.compare([a, b])
    assert (_files(a), _files(b)) == before  # compare changes no run
    [p] = d["pairs"]
    assert p["talks"]["shared"] == 2 and p["same_head"]
    # targets: both scripts create t1 at i1 and t2 at i2
    tg = p["targets"]
    assert [(m["a"], m["b"], m["created_by"]) for m in tg["matched"]] == [("t1", "t1", "i1"), ("t2", "t2", "i2")]
    m1, m2 = tg["matched"]
    # t1: the second script gives no rework; t2: it finds t2.c2 not met (met 1 of 3 live, not 2), so partial
    assert (m1["a_outcome"]["rework"], m1["b_outcome"]["rework"]) == (1, 0)
    assert (m2["a_outcome"]["level"], m2["b_outcome"]["level"]) == ("unverified", "partial")
    assert (m2["a_outcome"]["met"], m2["b_outcome"]["met"], m2["b_outcome"]["final_score"]) == ("2/3", "1/3", "1/3")
    assert {f: (x["agree"], x["of"]) for f, x in tg["agreement"].items()} == {
        "level": (1, 2), "class": (1, 2), "basis": (2, 2), "met": (1, 2), "rework": (1, 2), "final_score": (1, 2)}
    assert tg["unmatched"] == {"a": [], "b": []}
    # work labels: the example's 11 model calls. k1's part from s9 (calls s8, s10) is avoidable_error in both;
    # its part from s13 (calls s13, s15) is productive in the first, redundant_work in the second; every
    # other call is not avoidable in both (k1 from s1: s2 s5; k2: s18 s22 s25; the sub-agent a1's two calls)
    lb = p["labels"]
    money = _money(a)
    assert lb["calls"] == 11 == len(money) and lb["both_reviewed"] == 11 and lb["unit"] == "money"
    total = sum(money.values(), Fraction(0))
    both_av = money["s8"] + money["s10"]
    disagree = money["s13"] + money["s15"]
    parts = lb["parts"]
    assert Fraction(parts["both_avoidable"]["share"]) == both_av / total
    assert Fraction(parts["disagree"]["share"]) == disagree / total == Fraction(parts["b_avoidable_a_not"]["share"])
    assert Fraction(parts["both_not_avoidable"]["share"]) == (total - both_av - disagree) / total
    assert parts["a_avoidable_b_not"]["calls"] == 0
    # kappa over 11 calls: the first rates 2 avoidable, the second 4; they agree on 9.
    # observed 9/11; expected by chance (2/11)(4/11) + (9/11)(7/11) = 71/121; kappa (99 - 71) / (121 - 71) = 28/50
    assert (lb["observed"], lb["expected"], lb["kappa"], lb["kappa_rounded"]) == ("9/11", "71/121", "14/25", "0.5600")
    # the sub-task a1: the same decisions, another label (productive and necessary_exploration)
    sb = p["subtasks"]
    assert sb["both_judged"] == 1
    assert {f: x["agree"] for f, x in sb["agreement"].items()} == {"outcome": 1, "report": 1, "used": 1, "dispatch": 1,
                                                                   "label": 0}
    # the runs side by side: each its own scores and what judging it cost
    ra, rb = d["runs"]
    for r, path in ((ra, a), (rb, b)):
        close = json.loads((path / "close.json").read_text())
        assert r["scores"] == close["statement"]["scores"] and r["judging"]["total"] == close["statement"]["judging"]["total"]
        assert r["consumed"] == close["consumed"]
    assert ra["consumed"]["input"] != rb["consumed"]["input"]


def test_compare_opens_nothing_but_the_runs_own_files(example: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file compare opens, listed by the interpreter's audit hook while it runs: the runs'
    files, moved out of ASZ_HOME, and the code it imports; no store (opening one raises, and
    ASZ_HOME is a folder that is not there), no price file, no kit, no database connected."""
    import os
    import sys

    a, b = _judge(example, EXAMPLE), _judge(example, SECOND)
    want = compare.compare([a, b])
    runs = tmp_path / "elsewhere"
    moved = [Path(shutil.copytree(r, runs / r.name, symlinks=True)) for r in (a, b)]
    _store_gone(example, monkeypatch)
    monkeypatch.setenv("ASZ_HOME", str(tmp_path / "no-home"))
    names = {p.name for r in moved for p in r.rglob("*")}
    code = [str(Path(p).resolve()) for p in {sys.prefix, sys.base_prefix, *sys.path} if p]
    seen: list[tuple[str, Any]] = []
    watching = [True]

    def hook(event: str, args: Any) -> None:
        if watching[0] and event in ("open", "os.listdir", "os.scandir", "sqlite3.connect", "sqlite3.connect/handle"):
            seen.append((event, args[0] if args else None))

    sys.addaudithook(hook)  # never removed: it stops watching when the comparison ends
    try:
        got = compare.compare(moved)
    finally:
        watching[0] = False
    assert [r["run"] for r in got["runs"]] == [r["run"] for r in want["runs"]]
    assert got["pairs"] == want["pairs"]
    assert not [e for e, _ in seen if e.startswith("sqlite3")]
    outside = []
    for event, what in seen:
        if isinstance(what, int):
            continue  # a descriptor already open: read_below's folder, walked from a run's own
        p = os.fsdecode(what)
        if not os.path.isabs(p):  # a name below a folder read_below opened: one of the runs' own
            if p not in names:
                outside.append((event, p))
            continue
        real = str(Path(p).resolve())
        if any(real == str(r) or real.startswith(f"{r}{os.sep}") for r in moved):
            continue
        if real.endswith((".py", ".pyc", ".so")) or os.path.isdir(real) and any(real.startswith(c) for c in code):
            continue  # the code compare imports as it runs
        outside.append((event, p))
    assert outside == [], outside
    assert any(os.fsdecode(w).endswith("call-costs.json") for _, w in seen if not isinstance(w, int))


def test_runs_at_two_heads_are_compared_over_the_talks_both_judged_from_their_files_alone(
        store: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from .test_show import asz

    from asz_core.collect import collect

    src = tmp_path / "src" / "-home-dev-projects-invoicer"
    src.mkdir(parents=True)
    lines = (SESSION / f"{MAIN}.jsonl").read_text().splitlines(keepends=True)
    (src / f"{MAIN}.jsonl").write_text("".join(lines[:19]))  # up to the end of k1: the second input not yet written
    collect([src.parent], store)
    early = _judge(store, EXAMPLE)
    (src / f"{MAIN}.jsonl").write_text("".join(lines))
    shutil.copytree(SESSION / MAIN, src / MAIN)
    collect([src.parent], store)
    late = _judge(store, SECOND)
    ea, la = (json.loads((x / "run.json").read_text())["head"] for x in (early, late))
    assert (ea, la) == ("r1", "r2")
    home = _store_gone(store, monkeypatch)  # and no store can be opened in this process
    d = compare.compare([early, late])
    # a process of its own, ASZ_HOME's store file gone: the same comparison, and no store made
    cli = asz(home, "compare", early.name, late.name, "--json")
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout) == json.loads(json.dumps(d)) and not list(home.glob("asz.db*"))
    [p] = d["pairs"]
    assert not p["same_head"]
    assert (p["talks"]["shared"], p["talks"]["a_only"], p["talks"]["b_only"]) == (1, [], ["k2"])
    tg = p["targets"]
    assert [(m["a"], m["b"]) for m in tg["matched"]] == [("t1", "t1")]
    assert tg["outside"] == {"a": [], "b": ["t2"]} and tg["unmatched"] == {"a": [], "b": []}
    # only k1's six calls are compared: s8 s10 avoidable in both, s13 s15 disagree, s2 s5 not avoidable in both
    lb = p["labels"]
    assert (lb["calls"], lb["both_reviewed"], lb["costed_at"]) == (6, 6, "r1")
    # kappa: the first rates 2 of 6 avoidable, the second 4; they agree on 4: observed 2/3;
    # expected (1/3)(2/3) + (2/3)(1/3) = 4/9; kappa (2/3 - 4/9) / (1 - 4/9) = 2/5
    assert (lb["observed"], lb["expected"], lb["kappa"]) == ("2/3", "4/9", "2/5")
    money = _money(early)  # what both saw: the earlier head's run's count of a call
    k1 = [money[s] for s in ("s2", "s5", "s8", "s10", "s13", "s15")]
    assert Fraction(lb["parts"]["both_avoidable"]["share"]) == (money["s8"] + money["s10"]) / sum(k1, Fraction(0))
    assert p["subtasks"]["both_judged"] == 0  # a1 started in k2, which the early run did not judge
    [q] = compare.compare([late, early])["pairs"]  # the later run first: still weighed as the earlier head counted
    assert (q["labels"]["costed_at"], q["labels"]["cost_all"]) == ("r1", lb["cost_all"])


def test_runs_with_no_target_in_common_and_a_run_whose_stage_failed(example: Any, tmp_path: Path) -> None:
    calls = _calls(SECOND)
    for c in calls:
        if c["stage"] == "targets":  # a reader who sees one target only, created by the queued i3
            c["answer"] = {"inputs": [{"input": "i1", "actions": [{"target": None, "action": "none"}], "relations": [{"relation": "unclear"}]},
                                      {"input": "i2", "actions": [{"target": None, "action": "none"}], "relations": [{"relation": "unclear"}]},
                                      {"input": "i3", "actions": [{"target": "new:csv", "action": "create"}],
                                       "relations": [{"relation": "new", "goal": "new:csv", "statement": "check the CSV export"}]}],
                           "targets": [{"target": "new:csv", "statement": "Check the CSV export for float money", "kind": "question",
                                        "criteria": [{"text": "the CSV export is checked"}], "talks": ["k2"], "state": "open"}],
                           "goals": [{"goal": "new:csv", "main_target": None, "main_cited": None}]}
    calls = [c for c in calls if c["stage"] != "efficiency"]  # its efficiency call has no answer: the stage fails
    other = _write(tmp_path, copy.deepcopy(calls), "other.json")
    a, b = _judge(example, EXAMPLE), _judge(example, other)
    assert json.loads((b / "stages" / "efficiency.json").read_text())["status"] == "failed"
    d = compare.compare([a, b])
    [p] = d["pairs"]
    assert p["targets"]["matched"] == [] and p["targets"]["unmatched"] == {"a": ["t1", "t2"], "b": ["t1"]}
    assert all(x["of"] == 0 for x in p["targets"]["agreement"].values())
    lb = p["labels"]  # the failed run reviewed only the sub-task's own calls: the main stream's are the first's alone
    assert (lb["both_reviewed"], lb["parts"]["a_only_reviewed"]["calls"], lb["parts"]["neither_reviewed"]["calls"]) == (2, 9, 0)
    assert lb["kappa"] is None and lb["kappa_note"] == "undefined: chance alone gives full agreement"
    assert any(x.startswith("efficiency: failed") for x in d["runs"][1]["could_not_judge"])
    assert not any(x.startswith("efficiency") for x in d["runs"][0]["could_not_judge"])


def test_a_persons_judgment_by_hand_is_a_run_compare_sets_against_a_models(example: Any, tmp_path: Path) -> None:
    """A person answers each stage in the scripted evaluator's format with the answers alone (no
    requests, no model, as docs/compare.md says): a run of its own, checked as any evaluator's,
    and compare measures the model's run's agreement with it, as with another model's."""
    from ruamel.yaml import YAML as Y

    person = []
    for c in _calls(SECOND):  # the second reader's answers, written by a person: nothing but the answers
        entry = {"stage": c["stage"], "requests": [], "answer": c["answer"]}  # no model asked
        if c.get("call", 1) != 1:
            entry["call"] = c["call"]
        person.append(entry)
    script = tmp_path / "person.yaml"
    with script.open("w") as f:
        Y().dump({"calls": person}, f)
    model, by_hand = _judge(example, EXAMPLE), _judge(example, script)
    stages = json.loads((by_hand / "close.json").read_text())["stages"]
    assert {s: v for s, v in stages.items() if v not in ("complete", "skipped")} == {}, stages
    d = compare.compare([model, by_hand])
    [p] = d["pairs"]
    # the same answers as the second script's: the same agreement (worked out by hand above)
    lb = p["labels"]
    assert (lb["calls"], lb["both_reviewed"], lb["observed"], lb["expected"], lb["kappa"]) == (11, 11, "9/11", "71/121", "14/25")
    assert {f: (x["agree"], x["of"]) for f, x in p["targets"]["agreement"].items()} == {
        "level": (1, 2), "class": (1, 2), "basis": (2, 2), "met": (1, 2), "rework": (1, 2), "final_score": (1, 2)}
    assert p["subtasks"]["both_judged"] == 1 and p["subtasks"]["agreement"]["label"] == {"agree": 0, "of": 1}
    # a person's judging asked no model: no request, none whose usage was never said, so nothing unknown
    ra, rb = d["runs"]
    assert rb["evaluators"] == {s: f"scripted:{script}" for s in rb["evaluators"]}
    assert (rb["consumed"]["requests"], rb["consumed"]["unknown_requests"], rb["consumed"]["input"]) == (0, 0, 0)
    assert (rb["judging"]["total"]["tokens"], rb["judging"]["total"]["unknown"]) == (0, 0)
    assert ra["consumed"]["requests"] > 0


def test_kappa_by_hand() -> None:
    # 10 items: both yes 4, both no 3, first yes second no 2, first no second yes 1
    items = [(True, True)] * 4 + [(False, False)] * 3 + [(True, False)] * 2 + [(False, True)]
    k, po, pe = compare.kappa(items)
    # po = 7/10; first yes 6/10, second yes 5/10: pe = 0.6*0.5 + 0.4*0.5 = 1/2; kappa = (7/10 - 1/2) / (1/2) = 2/5
    assert (po, pe, k) == (Fraction(7, 10), Fraction(1, 2), Fraction(2, 5))
    assert compare.kappa([]) == (None, None, None)
    assert compare.kappa([(False, False)] * 3)[0] is None  # chance alone agrees fully: undefined, never 1 or 0
    assert compare.kappa([(True, False), (False, True)])[0] == -1


def test_what_compare_refuses(example: Any, tmp_path: Path) -> None:
    a = _judge(example, EXAMPLE)
    with pytest.raises(AszError, match="two runs or more"):
        compare.compare([a])
    with pytest.raises(AszError, match="given twice"):
        compare.compare([a, a])
    (a / "close.json").rename(a / "closed.json")
    b = _judge(example, EXAMPLE)
    with pytest.raises(AszError, match="has not closed"):
        compare.compare([b, a])


def test_the_command_line(example: Any) -> None:
    from typer.testing import CliRunner

    from asz_core import cli

    a, b = _judge(example, EXAMPLE), _judge(example, SECOND)
    r = CliRunner().invoke(cli.app, ["compare", a.name, b.name, "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["pairs"][0]["labels"]["kappa"] == "14/25"
    t = CliRunner().invoke(cli.app, ["compare", str(a), str(b)], env={"COLUMNS": "160"})
    assert t.exit_code == 0, t.output
    assert "Cohen's kappa over calls: 0.5600" in t.stdout and "the runs side by side" in t.stdout
    assert "unverified | partial" in t.stdout
    # three runs: each pair in the order given, every run side by side
    c = _judge(example, EXAMPLE)
    three = CliRunner().invoke(cli.app, ["compare", a.name, b.name, c.name, "--json"])
    assert three.exit_code == 0, three.output
    d = json.loads(three.stdout)
    assert [r["run"] for r in d["runs"]] == [a.name, b.name, c.name]
    assert [(p["a"], p["b"], p["labels"]["kappa"]) for p in d["pairs"]] == [
        (a.name, b.name, "14/25"), (a.name, c.name, "1"), (b.name, c.name, "14/25")]


def test_targets_match_by_their_creating_input_and_a_talk_in_common() -> None:
    from types import SimpleNamespace

    def run(*targets: tuple[str, str, list[str]]) -> Any:
        return SimpleNamespace(targets=[{"id": t, "talks": k, "outcome": {}} for t, _, k in targets],
                               created={t: i for t, i, _ in targets})

    a = run(("t1", "i1", ["k1"]), ("t2", "i4", ["k3"]), ("t3", "i6", ["k4"]))
    b = run(("t1", "i1", ["k2"]), ("t2", "i1", ["k1", "k2"]), ("t3", "i5", ["k3"]), ("t4", "i6", ["k9"]))
    got = compare._targets(a, b, {"k1", "k2", "k3", "k4"})
    # t1 of b was created by i1 too, but shares no talk with a's t1; b's t2 does: matched. b's t3 shares k3 with
    # a's t2 but another input created it; b's t4 lies outside the talks both judged
    assert [(m["a"], m["b"], m["talks"]) for m in got["matched"]] == [("t1", "t2", ["k1"])]
    assert got["unmatched"] == {"a": ["t2", "t3"], "b": ["t1", "t3"]} and got["outside"] == {"a": [], "b": ["t4"]}


def test_runs_of_two_windows_compare_the_calls_of_the_talks_both_judged(example: Any) -> None:
    a, b = _judge(example, EXAMPLE, window="k1..k1"), _judge(example, SECOND)
    [p] = compare.compare([a, b])["pairs"]
    assert (p["talks"]["shared"], p["talks"]["b_only"]) == (1, ["k2"])
    lb = p["labels"]
    assert (lb["calls"], lb["both_reviewed"], lb["observed"], lb["kappa"]) == (6, 6, "2/3", "2/5")  # as at two heads
    assert [(m["a"], m["b"]) for m in p["targets"]["matched"]] == [("t1", "t1")] and p["targets"]["outside"]["b"] == ["t2"]
    [q] = compare.compare([b, a])["pairs"]  # the whole run's ledger first: still only k1's calls
    assert (q["labels"]["calls"], q["labels"]["kappa"], q["talks"]["a_only"]) == (6, "2/5", ["k2"])


def test_the_second_script_of_the_example_holds_to_the_schemas_and_every_stage_keeps_it(example: Any) -> None:
    import jsonschema

    from asz_core.judge.kit import Kit

    kit = Kit.load()
    for e in _calls(SECOND):
        jsonschema.validate(e["answer"], kit.schema(e["stage"]))
    run = _judge(example, SECOND)
    stages = json.loads((run / "close.json").read_text())["stages"]
    assert {s: v for s, v in stages.items() if v not in ("complete", "skipped")} == {}, stages


def _doc_example() -> tuple[list[str], str]:
    """docs/compare.md's bundled example: its commands and the output it prints for them."""
    doc = (ROOT / "docs" / "compare.md").read_text()
    part = doc.split("## The bundled example", 1)[1]
    commands = part.split("```sh\n", 1)[1].split("```", 1)[0]
    printed = part.split("```sh\n", 1)[1].split("```", 1)[1].split("```\n", 1)[1].split("```", 1)[0]
    return commands.splitlines(), printed


def test_the_docs_example_runs_and_prints_what_the_doc_shows(tmp_path: Path) -> None:
    """docs/compare.md's commands, run as a person would from the checkout (relative script paths,
    a fresh ASZ_HOME, 110 columns): the output is the doc's, figure for figure, with the run ids
    this run was given in place of the doc's."""
    import os
    import re
    import subprocess
    import sys

    commands, printed = _doc_example()
    assert commands[0] == "export ASZ_HOME=$(mktemp -d)" and commands[-1] == "asz compare $(ls -d $ASZ_HOME/runs/*/* | sort)"
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "TERM")}
    env.update(ASZ_HOME=str(tmp_path / "home"), COLUMNS="110", LINES="50")

    def asz(*args: str) -> str:
        got = subprocess.run([sys.executable, "-c", "from asz_core.cli import main; main()", *args], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=300)
        assert got.returncode == 0, got.stderr
        return got.stdout

    for line in commands[1:-1]:
        assert line.startswith("asz "), line
        asz(*line.split()[1:])
    runs = [d for d in sorted((tmp_path / "home" / "runs").glob("*/*")) if d.is_dir()]
    # the order they were judged in (two judged within one second sort by their random suffix)
    runs.sort(key=lambda d: json.loads((d / "run.json").read_text())["started"])
    out = asz("compare", *map(str, runs))
    ids = re.findall(r"\d{8}T\d{6}Z-[0-9a-f]{4}", printed)
    doc_ids = list(dict.fromkeys(ids))
    assert len(doc_ids) == 2
    for mine, theirs in zip((r.name for r in runs), doc_ids):
        out = out.replace(mine, theirs)
    assert out == printed

