"""What is printed for a person is inert: escape sequences, NUL, carriage returns and bidirectional
overrides from a transcript or an evaluator's answer are shown escaped, never acted on by the
terminal; ``--json`` keeps them as JSON escapes; ``:100:`` stays text (no emoji).

The hostile transcript is made here: its input, its reply, its project folder and its file name
carry the sequences.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from rich.text import Text

from asz_core.tables import Col, FitTable, console, inert_text, render
from asz_core.terminal_text import UNSAFE, inert, json_inert

from tests.adapters.cc_shapes import Session, dumps, text, usage
from tests.core.helpers import asz_env, run_asz

CLEAR = "\x1b[2J\x1b[H"
TITLE = "\x1b]0;owned\x07"
LINK = "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\"
HOSTILE = [CLEAR, TITLE, LINK, "\x00", "a\rb", "\x9b31m", "\x7f", "\u202egnp.exe", "\u2066x\u2069", "\u200b",
           "\U000e0041\U000e0042", "\ud83d", "\u2028", "\x1b"]
# What no output of asz may hold once printed to a person: ESC, BEL, NUL, CR, C1, bidi, separators.
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200b\u2028\u2029\U000e0000-\U000e007f]")


@pytest.mark.parametrize("s", HOSTILE)
def test_every_unsafe_character_is_shown_escaped(s):
    got = inert("<" + s + ">")
    assert not RAW.search(got) and not UNSAFE.search(got)
    assert got.startswith("<") and got.endswith(">") and "\\" in got


def test_text_a_person_reads_is_kept():
    s = "é 漢字 🙂 tab\there\nnext line $1.00 [bold] :100:"
    assert inert(s) == s
    assert inert("a\nb\tc", one_line=True) == "a\\x0ab\\x09c"
    assert inert("\x1b[31m") == "\\x1b[31m" and inert("\u202e") == "\\u202e" and inert("\U000e0041") == "\\U000e0041"


@pytest.mark.parametrize("s", HOSTILE)
def test_json_keeps_the_value_and_is_inert(s):
    value = {"k": "x" + s.replace("\ud83d", "\ufffd") + "y", "n": [s.replace("\ud83d", "")]}
    out = json_inert(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode())
    assert not RAW.search(out)
    assert json.loads(out) == value


def test_a_table_measures_and_shows_the_escaped_cell():
    t = FitTable({"id": Col("id"), "what": Col("what", wrap=True)}, (("id", "what"),))
    t.add_row({"id": "k1", "what": CLEAR + "x"})
    t.add_row({"id": Text("k2\u202e", style="bold"), "what": Text("ok")})
    out = render(t, 60)
    # measured as shown: the id column is as wide as the escape it shows, not the 3 cells of k2 and a bidi mark
    assert t._floor("id") == len("k2\\u202e") and [c["what"].plain for c, _ in t.rows][0] == "\\x1b[2J\\x1b[Hx"
    assert "\\x1b[2J\\x1b[Hx" in out and "k2\\u202e" in out and not RAW.search(out)
    styled = inert_text(Text.assemble(("a\x1b", "red"), ("b", "blue")))
    assert styled.plain == "a\\x1bb" and [(s.start, s.end, s.style) for s in styled.spans] == [(0, 1, "red"), (1, 5, "red"), (5, 6, "blue")]


def test_the_console_writes_nothing_raw_whatever_it_is_given(tmp_path):
    """The console is the last line: a renderable that never went through a table (a Text made
    of a transcript's words, a plain string) is written inert, and ``:100:`` is no emoji."""
    import io

    f = io.StringIO()
    con = console(file=f, width=120, force_terminal=True, color_system="standard")
    con.print(Text("reply: " + TITLE + LINK + "\u202e", style="red"))
    con.print("file.jsonl:100: and :1234: and :smile:", highlight=False)
    out = f.getvalue()
    assert "\x1b]" not in out and "\x07" not in out and "\u202e" not in out
    assert "\\x1b]0;owned" in out and "\\x1b]8;;https://evil.example" in out  # (rich drops a BEL itself)
    assert "\x1b[31m" in out  # rich's own colour codes still reach the terminal
    assert "file.jsonl:100: and :1234: and :smile:" in out


def _hostile_world(tmp_path: Path) -> Path:
    s = Session("sess-\x1b]0;t\x07", cwd="/home/u/proj" + CLEAR + "\u202e")
    s.user("u1", None, "please " + TITLE + LINK + "\u202efix\x00 it")
    s.assistant("a1", "u1", "msg_1", "req_1", text("done " + CLEAR + "\u2066"), usage(10, 0, 0, 5, final=True))
    folder = tmp_path / "src"
    path = s.write(folder / ("t\x1b[2J\u202e.jsonl"))
    path.write_text(path.read_text() + "{broken\n")  # a warning names this file
    # a second file whose line 100 is broken: its warning names line 100 (":100:" is an emoji code)
    good = Session("other", cwd="/home/u/proj2")
    good.user("v1", None, "hello")
    for i in range(98):
        good.user(f"v{i + 2}", f"v{i + 1}", f"more {i}")
    other = good.write(folder / "other.jsonl")
    other.write_text(other.read_text() + "{not json\n")
    assert len(other.read_text().splitlines()) == 100
    return folder


def _raw_in(text_out: str) -> list[str]:
    return sorted({repr(m.group()) for m in RAW.finditer(text_out)})


def test_every_command_prints_a_hostile_transcript_inert(tmp_path):
    home = tmp_path / "home"
    folder = _hostile_world(tmp_path)
    for args in (("collect", str(folder)), ("conversations",), ("show", "sess-"), ("show", "sess-", "--talk", "k1"),
                 ("ledger",), ("ledger", "sess-"), ("runs",)):
        got = run_asz(*args, home=home)
        assert got.returncode == 0, (args, got.stderr)
        assert _raw_in(got.stdout + got.stderr) == [], args
        if args[0] == "collect":
            assert "t\\x1b[2J\\u202e.jsonl:3: not JSON" in got.stderr
            assert "other.jsonl:100:" in got.stderr and "\N{HUNDRED POINTS SYMBOL}" not in got.stderr
        if args[0] == "show" and len(args) == 2:
            assert "\\x1b]0;owned\\x07" in got.stdout
    got = run_asz("collect", str(folder), "--json", home=tmp_path / "home2")
    assert _raw_in(got.stdout + got.stderr) == []
    assert "other.jsonl:100:" in got.stderr
    shown = run_asz("show", "sess-", "--json", home=home)
    assert _raw_in(shown.stdout) == [] and "\\u001b]0;owned\\u0007" in shown.stdout
    assert json.loads(shown.stdout)["id"] == "sess-\x1b]0;t\x07"  # the value whole, for a program


def test_judge_and_judge_show_print_an_answer_inert(tmp_path, monkeypatch):
    from asz_core.collect import collect
    from asz_core.judge import runner
    from asz_core.store import Store

    home = tmp_path / "home"
    monkeypatch.setenv("ASZ_HOME", str(home))
    store = Store.open(home)
    collect([_hostile_world(tmp_path)], store)
    cid = next(r.id for r in store.conversations() if r.id.startswith("sess-"))
    answer = {"inputs": [{"input": "k1.i1", "actions": [{"target": "new:a", "action": "create"}],
                          "relations": [{"relation": "new", "goal": "new:A", "statement": "do " + TITLE}]}],
              "targets": [{"target": "new:a", "statement": "the outcome " + CLEAR + LINK + "\u202e", "kind": "change",
                           "criteria": [{"text": "works\x00" + TITLE}], "state": "open"}], "goals": []}
    from tests.judge.conftest import inputs_of

    answer["inputs"][0]["input"] = inputs_of(store, cid)[0].input
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"calls": [{"stage": "targets", "call": 1, "answer": answer,
                                            "requests": [{"reads": [], "usage": {"input": 1, "output": 1}}]}]}))
    store.close()
    got = run_asz("judge", cid, "--evaluator", f"scripted:{script}", "--stages", "targets", home=home)
    assert got.returncode in (0, 3), got.stderr
    assert _raw_in(got.stdout + got.stderr) == []
    (run,) = (p for p in (home / "runs").rglob("run.json"))
    shown = run_asz("judge", "-show", run.parent.name, home=home)
    assert shown.returncode == 0, shown.stderr
    assert _raw_in(shown.stdout + shown.stderr) == []
    assert "\\x1b[2J" in shown.stdout


def test_no_console_or_text_of_asz_is_made_any_other_way():
    """Every console printing for a person is tables.console's (inert, no emoji; made in
    rich_text.py, which tables names), every report's text tables.InertText, and no markup is
    parsed from what a transcript or an answer says."""
    root = Path(__file__).resolve().parents[2]
    found = []
    for p in root.glob("asz_*/src/**/*.py"):
        if p.name in ("tables.py", "rich_text.py"):
            continue
        src = p.read_text()
        for bad in (r"(?<![A-Za-z_])Console\(", r"from rich\.text import", r"\.from_markup\("):
            if re.search(bad, src):
                found.append((str(p.relative_to(root)), bad))
    assert found == [], found


QUIET = "\x07\r\x08\x0b\x0c"  # what rich itself drops from a plain string, without a trace
FULL_CLI = "import sys; from asz_core.cli import main; sys.argv[0] = 'asz'; main()"


def _quiet_world(tmp_path: Path) -> Path:
    """A session whose first input, file name, project folder, model and tool name hold the
    controls rich drops, beside an escape sequence, a bidi override and a NUL."""
    bad = QUIET + "\x1b[2J\u202e\x00"
    s = Session("quiet-1", cwd="/home/u/proj" + bad)
    s.user("u1", None, "first " + bad + " input")
    s.assistant("a1", "u1", "msg_1", "req_1", {"type": "tool_use", "id": "t1", "name": "Tool" + bad, "input": {}},
                usage(10, 0, 0, 5, final=True), model="claude-opus-4-6" + bad)
    s.result("u2", "a1", "t1", "ok")
    path = s.write(tmp_path / "src" / ("q" + bad.replace("\x00", "") + ".jsonl"))
    path.write_text(path.read_text() + "{broken\n")  # collect's warning names the file
    return path.parent


@pytest.mark.parametrize("cli", ["lean", "full"])
def test_controls_rich_would_drop_are_shown_escaped(tmp_path, cli):
    home = tmp_path / "home"
    folder = _quiet_world(tmp_path)
    main = {} if cli == "lean" else {"python": sys.executable}
    shown_anywhere = ""
    for args in (("collect", str(folder)), ("conversations",), ("show", "quiet-1"), ("show", "quiet-1", "--talk", "k1"),
                 ("ledger",), ("ledger", "quiet-1"), ("ledger", "--by", "model")):
        if cli == "lean":
            got = run_asz(*args, home=home, **main)
        else:
            got = subprocess.run([sys.executable, "-c", FULL_CLI, *args], env=asz_env(home), capture_output=True,
                                 text=True, timeout=300)
        assert got.returncode == 0, (args, got.stderr)
        out = got.stdout + got.stderr
        assert _raw_in(out) == [], (args, out)
        shown_anywhere += out
        if args[0] == "collect":  # the file's name in the warning, every control shown
            assert "q\\x07\\x0d\\x08\\x0b\\x0c\\x1b[2J\\u202e.jsonl:" in got.stderr, got.stderr
        if args == ("show", "quiet-1"):
            # a one-line cell folds whitespace (CR, VT, FF) to a space; the project line keeps all
            assert "first \\x07 \\x08 \\x1b[2J\\u202e\\x00 input" in got.stdout, got.stdout
            assert "/home/u/proj\\x07\\x0d\\x08\\x0b\\x0c\\x1b[2J\\u202e\\x00" in got.stdout
    for escaped in ("\\x07", "\\x0d", "\\x08", "\\x0b", "\\x0c"):
        assert escaped in shown_anywhere
    assert "claude-opus-4-6\\x07" in shown_anywhere  # the model's name, as ledger --by model shows it


def test_a_plain_string_keeps_the_controls_rich_would_drop():
    """A plain str printed or put in a table's cell (not built by inert) is made inert by the
    console before rich makes a Text of it, which would drop BEL, CR, BS, VT and FF unseen."""
    import io

    from rich.table import Table

    f = io.StringIO()
    con = console(file=f, width=120, force_terminal=False)
    t = Table()
    t.add_column("cell")
    t.add_row("c" + QUIET + "d")
    con.print("a" + QUIET + "b")
    con.print(t)
    out = f.getvalue()
    assert "a\\x07\\x0d\\x08\\x0b\\x0cb" in out and "c\\x07\\x0d\\x08\\x0b\\x0cd" in out
    assert _raw_in(out) == []


# --- every command, over the bundled example poisoned --------------------------------------------------
# The example's transcript with the sequences added to every text a person reads (inputs, replies,
# tool names and inputs, the project folder, the model), its scripted answers with them added to every
# free text (statements, criteria, reasons, notes, excerpts) and to the evaluator's model, a label file
# and a source holding them: every command that prints them, lean and full, plain and on a terminal
# (rich's SGR codes asz's own), prints nothing raw.

POISON = CLEAR + TITLE + LINK + "\x07\r\x08\x0b\x0c\x00\u202e\u2066\x9b\x7f\u2028"
_TEXT_KEYS = {"text", "content", "cwd", "name", "model", "gitBranch", "description", "prompt", "command", "file_path"}
_FREE_KEYS = {"note", "text", "statement", "what", "reason", "why", "excerpt", "claim", "said", "found", "notes",
              "conclusion", "cause", "model", "changed"}


def _poisoned(o, keys, k=None):
    if isinstance(o, dict):
        return {kk: _poisoned(v, keys, kk) for kk, v in o.items()}
    if isinstance(o, list):
        return [_poisoned(v, keys, k) for v in o]
    return o + POISON if isinstance(o, str) and k in keys else o


@pytest.fixture(scope="module")
def poisoned_world(tmp_path_factory):
    import shutil

    from ruamel.yaml import YAML

    root = Path(__file__).resolve().parents[2]
    tmp = tmp_path_factory.mktemp("poisoned")
    src = tmp / "src"
    shutil.copytree(root / "examples" / "claude-code", src)
    for f in src.rglob("*.jsonl"):
        lines = [json.dumps(_poisoned(json.loads(x), _TEXT_KEYS), ensure_ascii=False) for x in f.read_text().splitlines() if x.strip()]
        f.write_text("\n".join(lines) + "\n")
    scripts = []
    for name in ("scripted-5e1f0c2a.yaml", "scripted-5e1f0c2a-second.yaml"):
        d = _poisoned(YAML(typ="safe").load((root / "examples" / name).read_text()), _FREE_KEYS)
        for c in d["calls"]:
            c.pop("pause", None)
        d["calls"].append({"stage": "regroup", "call": 1, "model": "m" + POISON, "requests": [{"usage": {"input": 1, "output": 1}}],
                           "answer": {"targets": [{"target": "t1", "goal": "P1", "note": "n" + POISON, "cites": ["i1"]}],
                                      "goals": [{"goal": "P1", "worked_on": True, "note": "w" + POISON}], "notes": "x" + POISON}})
        p = tmp / (name + ".json")
        p.write_text(json.dumps(d))
        scripts.append(p)
    goals = tmp / "goals.yaml"
    goals.write_text(json.dumps({"goals": ["Invoice totals right" + POISON]}))
    home = tmp / "home"
    assert run_asz("collect", str(src), home=home).returncode == 0
    runs = []
    for s in scripts:
        got = run_asz("judge", "5e1f", "--evaluator", f"scripted:{s}", "--source", str(goals), home=home)
        assert got.returncode in (0, 3), got.stderr
        runs.append(next(x for x in got.stdout.splitlines() if x.startswith("run ")).split()[-1])
    return home, [Path(r).name for r in runs], goals, scripts


def _commands(runs, goals, scripts):
    r1, r2 = runs
    return [("conversations",), ("conversations", "--wide"), ("show", "5e1f"), ("show", "5e1f", "--talk", "k1"),
            ("show", "5e1f", "--talk", "k2"), ("show", "5e1f", "--operations"), ("ledger",), ("ledger", "5e1f"),
            *(("ledger", "--by", b) for b in ("talk", "stream", "model", "day", "month", "block", "project")),
            *(("ledger", "5e1f", "--by", b) for b in ("talk", "stream", "model", "day", "month")),
            ("runs",), ("runs", "5e1f"), ("judge", "-show", r1), ("judge", "-show", r1, "--brief"), ("compare", r1, r2),
            ("judge", "regroup", r1, "--goals", str(goals)), ("judge", "-show", r1), ("sources", "fetch", str(goals)),
            ("plugins",), ("judge", "5e1f", "--evaluator", f"scripted:{scripts[1]}", "--brief")]


@pytest.mark.parametrize("way", ["lean", "full", "terminal"])
def test_every_command_prints_the_poisoned_example_inert(poisoned_world, way):
    home, runs, goals, scripts = poisoned_world
    shown = ""
    for args in _commands(runs, goals, scripts):
        if args[0] in ("conversations", "show", "ledger", "runs") and way != "terminal":
            # the lean path draws these tables itself: the very bytes the full CLI's rich prints
            lean = run_asz(*args, home=home)
            full = subprocess.run([sys.executable, "-c", FULL_CLI, *args], env=asz_env(home), capture_output=True,
                                  text=True, timeout=300)
            assert lean.stdout == full.stdout, args
        if way == "full":
            got = subprocess.run([sys.executable, "-c", FULL_CLI, *args], env=asz_env(home), capture_output=True,
                                 text=True, timeout=300)
        elif way == "terminal":  # rich's codes (and plain_render's, the same) on a terminal that takes colour
            env = {k: v for k, v in asz_env(home, TTY_COMPATIBLE="1", FORCE_COLOR="1", COLUMNS="160").items() if k != "NO_COLOR"}
            got = subprocess.run([sys.executable, "-c", "import sys; from asz_core.main import main; sys.argv[0] = 'asz'; main()",
                                  *args], env=env, capture_output=True, text=True, timeout=300)
        else:
            got = run_asz(*args, home=home)
        assert got.returncode in (0, 3), (args, got.stderr)
        out = got.stdout + got.stderr
        if way == "terminal":
            out = re.sub("\x1b\\[[0-9;]*m", "", out)  # a colour's codes are asz's own
        assert _raw_in(out) == [], (args, _raw_in(out), out[-2000:])
        shown += out
    for escaped in ("\\x1b]8;;https://evil.example", "\\x1b[2J", "\\x07", "\\x0d", "\\u202e", "\\x00", "\\x9b", "\\u2028"):
        assert escaped in shown, escaped  # the poison reached what was printed, shown escaped


def test_an_error_naming_a_file_is_one_line_in_both_clis(tmp_path):
    """A path holding a newline and what looks like a line of asz's own: the error is one line, the
    newline shown (lean and full CLI); an error written in several lines on purpose (what to set up
    when no evaluator is available) keeps them."""
    root = Path(__file__).resolve().parents[2]
    home = tmp_path / "home"
    forged = tmp_path / "p\nwarning: all is well\x1b[2J.json"
    for cli in ("lean", "full"):
        if cli == "lean":
            got = run_asz("ledger", "--prices", str(forged), home=home)
        else:
            got = subprocess.run([sys.executable, "-c", FULL_CLI, "ledger", "--prices", str(forged)], env=asz_env(home),
                                 capture_output=True, text=True, timeout=300)
        assert got.returncode == 1
        assert "\nwarning: all is well" not in got.stderr and "p\\x0awarning: all is well\\x1b[2J.json" in got.stderr, \
            (cli, got.stderr)
    assert run_asz("collect", str(root / "examples" / "claude-code"), home=home).returncode == 0
    env = {k: v for k, v in asz_env(home, PATH=os.path.dirname(sys.executable)).items()
           if not k.endswith(("_API_KEY", "_TOKEN")) and not k.startswith(("AWS_", "ANTHROPIC_", "OPENAI_", "KIRO_"))}
    got = subprocess.run([sys.executable, "-c", FULL_CLI, "judge", "5e1f", "--stages", "targets"], env=env,
                         capture_output=True, text=True, timeout=300)
    assert got.returncode == 1 and "\n  - claude: " in got.stderr and "\\x0a" not in got.stderr, got.stderr
