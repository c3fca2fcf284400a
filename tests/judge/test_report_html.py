"""report.html in a real headless Chromium: what it shows is close.json's, a citation opens the
cited step's text, nothing is fetched, and the screenshot is not blank."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from asz_core.judge import runner

from . import browser
from .test_close import conv_store  # noqa: F401 - the fixture

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def example_run(store: Any) -> Path:
    from asz_core.collect import collect

    collect([ROOT / "examples" / "claude-code"], store)
    res = runner.judge(runner.JudgeOptions("5e1f0c2a", evaluator=f"scripted:{ROOT / 'examples' / 'scripted-5e1f0c2a.yaml'}"),
                       store=store)
    return res.path


def shown_amount(a: dict[str, Any]) -> tuple[str | None, str]:
    return (None if a["money"] is None else f"${a['money']}"), f"{a['tokens']:,}"


def test_the_report_is_one_file_that_fetches_nothing(example_run: Path) -> None:
    html = (example_run / "report.html").read_text()
    # Nothing a browser would load from elsewhere: no linked sheet, no script or image by URL.
    assert not re.search(r"<link\b|<script[^>]*\bsrc=|<img\b|<iframe\b|@import|url\(", html, re.I)
    assert not re.search(r"""\b(?:src|href)\s*=\s*["']?(?:https?:)?//""", html, re.I)
    assert html.count("<style>") == 1 and html.count("<script>") == 1 and "<svg" in html


def test_chromium_shows_close_json_figures_and_opens_a_cited_step(example_run: Path, tmp_path: Path) -> None:
    close = json.loads((example_run / "close.json").read_text())
    st = close["statement"]
    report = example_run / "report.html"
    cited = st["targets"][0]["operations"][0]["step"]  # a step the report cites (t1's first edit)
    dom = browser.dump_dom(report.as_uri() + "#" + cited)
    f = browser.figures(dom)
    assert f.body.get("data-ready") == "1", "the page's script did not run to its end"
    for k in ("achievement", "efficiency", "coverage", "delivered"):
        v = st["scores"][k]["rounded"]
        assert f.figures[f"scores.{k}"] == (v if v is not None else "—"), k
    assert f.figures["scores.coverage"] == "1.0000"  # the example's sub-task and efficiency stages label every call
    for t in st["targets"]:
        for part in ("total", "avoidable", "not_reviewed", "subagents"):
            m, tok = shown_amount(t["cost"][part])
            assert f.figures[f"targets.{t['id']}.cost.{part}.tokens"] == tok, (t["id"], part)
            if m is not None:
                assert f.figures[f"targets.{t['id']}.cost.{part}.money"] == m, (t["id"], part)
        secs = t["times"]["observed_seconds"]
        assert f.figures[f"targets.{t['id']}.times.observed_seconds"] == f"{secs:.0f} s"
        assert f.figures[f"targets.{t['id']}.record_score"] == (t["outcome"]["record_score"] or "—")
    j = st["judging"]
    assert f.figures["judging.conversation.tokens"] == f"{j['conversation']['tokens']:,}"
    assert f.figures["judging.total.tokens"] == f"{j['total']['tokens']:,}"
    # The citation's target: the step's own text is in the page and the script opened it.
    assert "open" in f.classes[cited]
    assert f.classes[cited][0] == "step"
    other = [sid for sid, cls in f.classes.items() if "step" in cls and sid != cited]
    assert other and all("open" not in f.classes[s] for s in other)


def test_the_screenshot_is_not_blank(example_run: Path, tmp_path: Path) -> None:
    png = browser.screenshot((example_run / "report.html").as_uri(), tmp_path / "report.png")
    n, inked = browser.colours(png)
    assert n >= 32, f"{n} colours"
    assert inked > 0.02, f"{inked:.3%} of the pixels differ from the background"


def test_the_png_reader_tells_a_blank_page(tmp_path: Path) -> None:
    page = tmp_path / "blank.html"
    page.write_text("<!doctype html><html><body style='background:#fff;margin:0'></body></html>")
    n, inked = browser.colours(browser.screenshot(page.as_uri(), tmp_path / "blank.png", "400,300"))
    assert n <= 2 and inked < 0.001


def test_criteria_citations_open_the_cited_steps_text(conv_store: Any, tmp_path: Path) -> None:  # noqa: F811
    from asz_core.judge import report_html
    from asz_core.window import build

    from .test_close import ACHIEVEMENT, EFFICIENCY, SESSION, run_with

    path = run_with(conv_store, tmp_path, achievement=ACHIEVEMENT, efficiency=EFFICIENCY)
    report_html.write(path, conv_store)
    html = (path / "report.html").read_text()
    st = json.loads((path / "close.json").read_text())["statement"]
    for sid in ("s432", "s224", "s438"):  # cited by criteria and contradictions
        assert f'<a class="cite" href="#{sid}">' in html and f'<div class="step" id="{sid}">' in html
    f = browser.figures(browser.dump_dom(path.joinpath("report.html").as_uri() + "#s224"))
    assert "open" in f.classes["s224"] and f.figures["scores.efficiency"] == st["scores"]["efficiency"]["rounded"]
    assert f.figures["targets.t1.final_score"] == "0" and f.figures["targets.t1.record_score"] == "1/2"
    text = build(conv_store, SESSION).conv.step("s224").text
    assert text and text[:60].split("\n")[0] in html.replace("&quot;", '"').replace("&#x27;", "'")
    assert "the build failed" in html  # the achievement stage's own finding
