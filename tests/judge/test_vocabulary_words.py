"""Words of a vocabulary (a class, a level, a basis: ``observed_result``, ``delivered_answer``) are
never folded across lines in a run's tables, at any width (docs/daily-use.md, "Tables, help,
errors"): ``asz judge -show``, ``--brief`` and ``asz compare`` on the bundled example judged as
kit/example judges it (with its source, so a target is contradicted)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from asz_core.judge import runner

ROOT = Path(__file__).resolve().parents[2]
WIDTHS = range(60, 201, 4)


def folds(text: str, words: set[str]) -> list[tuple[str, str, str]]:
    """Each vocabulary word a table cell cut: (word, the end of one line's cell, the start of the
    same cell on the next line), read column by column from the table's ``│`` borders."""
    found = []
    lines = text.splitlines()
    for a, b in zip(lines, lines[1:]):
        if not (a.startswith("│") and b.startswith("│")):
            continue
        ca, cb = a.split("│")[1:-1], b.split("│")[1:-1]
        if len(ca) != len(cb):
            continue
        for x, y in zip(ca, cb):
            end, start = x.rstrip().rsplit(" ", 1)[-1], y.strip().split(" ", 1)[0]
            if not end or not start:
                continue
            for w in words:
                if end != w and start != w and w.startswith(end) and w[len(end):].startswith(start) and len(end) < len(w):
                    found.append((w, end, start))
    return found


@pytest.fixture
def two_runs(store: Any) -> tuple[Path, Path]:
    from asz_core.collect import collect

    collect([ROOT / "examples" / "claude-code"], store)
    one = runner.judge(runner.JudgeOptions("5e1f0c2a", evaluator=f"scripted:{ROOT / 'examples' / 'scripted-5e1f0c2a.yaml'}",
                                           sources=(str(ROOT / "examples" / "INC-88.md"),)), store=store).path
    two = runner.judge(runner.JudgeOptions("5e1f0c2a", evaluator=f"scripted:{ROOT / 'examples' / 'scripted-5e1f0c2a-second.yaml'}"),
                       store=store).path
    return one, two


def _vocabulary(*runs: Path) -> set[str]:
    from asz_core.judge.outcomes import class_words

    out: set[str] = set()
    for r in runs:
        st = json.loads((r / "close.json").read_text())["statement"]
        for t in st["targets"]:
            o = t["outcome"]
            out |= {str(x) for x in (class_words(o.get("class")), o.get("level"), o.get("basis")) if x and "_" in str(x)}
    return out


def test_no_vocabulary_word_is_folded_at_any_width(two_runs: tuple[Path, Path]) -> None:
    from asz_core.judge.compare import compare
    from asz_core.judge.compare_report import compare_text
    from asz_core.judge.report import run_text, summary_text
    from asz_core.tables import render

    one, two = two_runs
    words = _vocabulary(one, two)
    assert {"observed_result", "delivered_answer"} <= words  # the words a narrow column used to cut
    d = runner.read_run(one)
    cmp = compare([one, two])
    seen = set()
    for width in WIDTHS:
        for name, thing in (("-show", run_text(d)), ("--brief", summary_text(d)), ("compare", compare_text(cmp))):
            out = render(thing, width)
            assert not folds(out, words), (name, width, folds(out, words))
            seen |= {w for w in words if w in out}
    assert seen == words


def test_the_fold_check_sees_a_folded_word() -> None:
    table = ("│ t1     │ achieved     │ observed_re │ 1.00 │\n"
             "│        │              │ sult        │      │\n")
    assert folds(table, {"observed_result"}) == [("observed_result", "observed_re", "sult")]
    assert not folds("│ t1 │ observed_result │\n│    │ sult            │\n", {"observed_result"})  # a whole word, then another
