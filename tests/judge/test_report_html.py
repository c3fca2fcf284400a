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
    # judged as kit/example judges it: against its source, whose manifest the page shows too
    res = runner.judge(runner.JudgeOptions("5e1f0c2a", evaluator=f"scripted:{ROOT / 'examples' / 'scripted-5e1f0c2a.yaml'}",
                                           sources=(str(ROOT / "examples" / "INC-88.md"),)), store=store)
    return res.path


def shown_amount(a: dict[str, Any]) -> tuple[str | None, str]:
    from asz_core.money import of_amount

    return (None if a["money"] is None else of_amount(a)), f"{a['tokens']:,}"


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


# --- issue 27: a report that answers at a glance ----------------------------------------------------

SUMMARY_JS = """
var out={figures:{},exact:{},bars:{},labels:[],ticks:[],spans:[],details:[],words:[],shown:{},legend:[]};
function seen(e){return e.getBoundingClientRect().width>0;}
document.querySelectorAll('[data-figure]').forEach(function(e){out.figures[e.dataset.figure]=e.textContent.trim();
  if(e.dataset.exact!==undefined){out.exact[e.dataset.figure]=e.dataset.exact;}});
document.querySelectorAll('[data-summary] [data-figure]').forEach(function(e){var r=e.getBoundingClientRect();
  out.shown[e.dataset.figure]=[r.left,r.right];});
document.querySelectorAll('[data-picture="cost-bars"] rect').forEach(function(r){if(!seen(r.closest('svg'))){return;}
  out.bars[r.dataset.target]=(out.bars[r.dataset.target]||0)+parseFloat(r.getAttribute('width'));
  out.labels.push([r.dataset.target,r.dataset.label,parseFloat(r.getAttribute('width'))]);});
document.querySelectorAll('[data-picture="timeline"] text.tick, [data-picture="spend"] text.tick').forEach(function(t){
  if(seen(t.closest('svg'))){out.ticks.push(t.closest('svg').dataset.picture+' '+t.textContent);}});
document.querySelectorAll('[data-picture="spend"] rect[data-span]').forEach(function(r){if(seen(r.closest('svg'))){out.spans.push(r.dataset.span);}});
document.querySelectorAll('[data-picture="cost-bars"] text, [data-picture="spend"] text').forEach(function(t){
  if(seen(t.closest('svg'))){var r=t.getBoundingClientRect(), box=t.closest('svg').getBoundingClientRect();
    out.words.push([t.textContent,r.height,r.left>=box.left-1&&r.right<=box.right+1]);}});
document.querySelectorAll('[data-legend]').forEach(function(e){out.legend.push(e.dataset.legend);});
document.querySelectorAll('details').forEach(function(d){out.details.push([d.id||d.className,d.open]);});
var d=document.documentElement; out.scroll=d.scrollWidth; out.view=d.clientWidth;
out.failed=document.querySelectorAll('[data-failed]').length; out.ready=document.body.dataset.ready;
return out;
"""


def _edge_is_background(png: Path, columns: int = 6) -> float:
    """The part of the screenshot's rightmost columns that is the page's background: content cut
    off at the right edge (a page wider than the screen) paints into them."""
    w, h, rows = browser.png_pixels(png.read_bytes())
    bpp = len(rows[0]) // w
    bg = rows[2][(w - 1) * bpp:(w - 1) * bpp + 3]
    same = sum(1 for r in rows for x in range(w - columns, w) if r[x * bpp:x * bpp + 3] == bg)
    return same / (h * columns)


@pytest.mark.parametrize("width", [390, 1280])
def test_the_summary_and_pictures_at_a_phone_and_a_desk(example_run: Path, tmp_path: Path, width: int) -> None:
    from decimal import Decimal

    from asz_core.money import of_amount

    st = json.loads((example_run / "close.json").read_text())["statement"]
    with browser.Page((example_run / "report.html").as_uri(), width) as page:
        got = page.run(SUMMARY_JS)
        png = page.screenshot(tmp_path / f"report-{width}.png")
    assert got["ready"] == "1"
    # nothing cut off: the page is no wider than the screen, and nothing is drawn at its right edge
    assert got["view"] == width and got["scroll"] <= width, (got["scroll"], width)
    assert _edge_is_background(png) > 0.995
    n, inked = browser.colours(png)
    assert n >= 32 and inked > 0.02
    # the summary's figures, read from the page, are close.json's
    f, exact = got["figures"], got["exact"]
    for t in st["targets"]:
        s, c = f"summary.{t['id']}", t["cost"]
        assert exact[s + ".cost"] == c["total"]["money"] and f[s + ".cost"] == of_amount(c["total"])
        assert exact[s + ".avoidable"] == c["avoidable"]["money"] and f[s + ".avoidable"] == of_amount(c["avoidable"])
        assert f[s + ".time"] == f"{t['times']['observed_seconds']:.0f} s"
        assert f[s + ".rework"] == str(len(t["outcome"]["rework"]))
        shown = Decimal(f[s + ".cost"].split()[0].lstrip("$").replace(",", ""))  # the known figure
        assert abs(shown - Decimal(c["total"]["money"])) <= Decimal("0.005")  # cents
    for k in ("achievement", "efficiency", "coverage", "delivered"):
        assert f[f"scores.{k}"] == st["scores"][k]["rounded"]
    # judging by the scripted evaluator is unpriced and nothing bounds it: said so, with no "?" beside it
    assert st["judging"]["total"]["money"] is None and Decimal(st["judging"]["total"]["at_least"] or 0) == 0
    assert "judging.total.money" not in f
    # every target's bar to one scale: its length over the longest is its cost over the largest
    costs = {t["id"]: Decimal(t["cost"]["total"]["money"]) for t in st["targets"]}
    top_id = max(costs, key=costs.get)
    for tid, c in costs.items():
        assert got["bars"][tid] / got["bars"][top_id] == pytest.approx(float(c / costs[top_id]), rel=1e-3)
    for tid, label, w in got["labels"]:
        part = Decimal(next(t for t in st["targets"] if t["id"] == tid)["cost"]["by_label"][label]["money"])
        assert w / got["bars"][top_id] == pytest.approx(float(part / costs[top_id]), rel=1e-3)
    # the avoidable share by cause, of all the targets' cost
    whole = sum(costs.values())
    for cause in ("main_agent", "subtask", "unknown"):
        part = sum(Decimal(t["cost"]["avoidable_by_cause"][cause]["money"]) for t in st["targets"])
        assert f[f"avoidable.{cause}"] == f"{float(part / whole):.1%}"
    # the pictures' words at the page's size on a phone as on a desk (an SVG scaled to 390 px drew them at 4 px)
    assert got["words"] and all(h >= 10 for _, h, _ in got["words"]), [w for w in got["words"] if w[1] < 10]
    assert all(inside for _, _, inside in got["words"]), [w for w in got["words"] if not w[2]]  # none cut at the edge
    # the summary at a glance: every figure of it on the screen, none behind a sideways scroll
    assert got["shown"] and all(0 <= a and b <= width for a, b in got["shown"].values()), got["shown"]
    # the legend names the labels drawn, no other
    assert set(got["legend"]) == {k for t in st["targets"] for k, v in t["cost"]["by_label"].items() if Decimal(v["money"] or 0) > 0}
    # time axes under the timeline and the cost over time; each target's spans drawn
    assert any(x.startswith("timeline ") for x in got["ticks"]) and sum(x.startswith("spend ") for x in got["ticks"]) >= 2
    assert set(got["spans"]) == {t["id"] for t in st["targets"] if t["times"]["observed"]}
    # long lists folded until asked for
    assert got["details"] and not any(is_open for _, is_open in got["details"])
    assert got["failed"] == 0


def test_money_is_shown_to_one_precision() -> None:
    from asz_core.money import bound, dollars

    assert [dollars(x) for x in ("0.080241", "12.3456", "0", "0.0022761", "0.000012345", None, "1234.5", "0.0099996")] == [
        "$0.08", "$12.35", "$0", "$0.002276", "$0.00001234", "?", "$1,234.50", "$0.01"]
    assert bound("0.0022761") == "≥ $0.002276" and bound("0") == bound(None) == "?"


def test_paths_are_shown_from_the_workspace(example_run: Path) -> None:
    html = (example_run / "report.html").read_text()
    run = json.loads((example_run / "run.json").read_text())
    ops = [o for t in json.loads((example_run / "close.json").read_text())["statement"]["targets"] for o in t["operations"]]
    assert ops and all(o.get("path") for o in ops)
    from asz_core.judge.report_html import _relative

    project = next(o["path"] for o in ops).rsplit("/invoicer/", 1)[0]
    for o in ops:
        rel = _relative(o["path"], project)
        assert not rel.startswith("/") and f'>{rel}</td>' in html, (o["path"], run.get("conversation"))
    assert f"paths from {project}" in html


def test_a_failed_stage_is_said_once_with_what_to_do(store: Any, tmp_path: Path) -> None:
    from asz_core.collect import collect

    from .conftest import entry, inputs_of, judge, plain_answer

    collect([ROOT / "examples" / "claude-code"], store)
    cid = "5e1f0c2a-7b3d-4c8e-9a61-0d2f4b8c9e13"
    # the script answers the targets call only: the achievement stage fails
    res, _ = judge(store, tmp_path, cid, [entry(plain_answer(inputs_of(store, cid)))], stages=None)
    html = (res.path / "report.html").read_text()
    failed = [s for s, v in res.stages.items() if v == "failed"]
    assert failed
    from html import escape

    for s in failed:
        reason = json.loads((res.path / "stages" / f"{s}.json").read_text())["reason"]
        assert html.count(escape(reason, quote=True)) == 1, s  # its reason said once, not again among the notes
        assert html.count(f"the {s} stage failed") == 1, s
        assert html.count(f'data-failed="{s}"') == 1 and "judge again" in html
    with browser.Page((res.path / "report.html").as_uri(), 390) as page:
        got = page.run(SUMMARY_JS)
    assert got["failed"] == len(failed) and got["scroll"] <= 390
    # no call was labelled: what was avoidable is not known, never $0, and the share by cause says so
    st = json.loads((res.path / "close.json").read_text())["statement"]
    assert "efficiency" in failed and all(set(t["cost"]["by_label"]) == {"not_reviewed"} for t in st["targets"])
    for t in st["targets"]:
        assert f"summary.{t['id']}.avoidable" not in got["figures"] and f"targets.{t['id']}.cost.avoidable.tokens" not in got["figures"]
        row = html[html.index(f'data-summary="{t["id"]}"'):]
        assert 'data-label="avoidable"><span class="dim" data-not-reviewed="1">not reviewed</span>' in row[:row.index("</tr>")]
    assert got["figures"]["avoidable.not_reviewed"] == "100.0%"
    assert all(got["figures"][f"avoidable.{k}"] == "0.0%" for k in ("main_agent", "subtask", "unknown"))


@pytest.mark.parametrize("width", [390, 1280])
def test_a_corpus_run_fits_a_phone_and_a_desk(corpus_store: Any, tmp_path: Path, width: int) -> None:
    """258c7280 (an hour's work, $12 a target, no call labelled): the page no wider than the screen,
    the pictures' words at the page's size and inside their pictures (a target's "$12.13 (≥ $12.13)"
    beside its bar was cut at the edge of the desk's drawing)."""
    from asz_core.judge import report_html

    from .conftest import inputs_of, plain_answer
    from .test_target_cost import SPOTTER, run_targets

    path = run_targets(corpus_store, tmp_path, SPOTTER, plain_answer(inputs_of(corpus_store, SPOTTER)))  # one target
    page = path / "report.html"
    if not page.exists():
        report_html.write(path, corpus_store)
    st = json.loads((path / "close.json").read_text())["statement"]
    assert max(len(shown_amount(t["cost"]["total"])[0] or "") for t in st["targets"]) >= 17  # "$12.13 (≥ $12.13)"
    with browser.Page(page.as_uri(), width) as p:
        got = p.run(SUMMARY_JS)
    assert got["ready"] == "1" and got["scroll"] <= width
    assert got["words"] and all(h >= 10 and inside for _, h, inside in got["words"]), [w for w in got["words"] if w[1] < 10 or not w[2]]
    assert got["shown"] and all(0 <= a and b <= width for a, b in got["shown"].values()), got["shown"]




PAYLOAD = '<script>alert(1)</script><img src=x onerror=alert(2)>"><b x=\'y\'>'
"""HTML a transcript or an answer may hold: shown as text in the page, never as markup."""


def _with_payload(o: Any, keys: set[str], k: str | None = None) -> Any:
    if isinstance(o, dict):
        return {kk: _with_payload(v, keys, kk) for kk, v in o.items()}
    if isinstance(o, list):
        return [_with_payload(v, keys, k) for v in o]
    return o + PAYLOAD if isinstance(o, str) and k in keys else o


def test_the_page_shows_what_a_transcript_and_an_answer_say_as_text(store: Any, tmp_path: Path) -> None:
    """The example's texts (inputs, replies, tool inputs, project, model) and its answers' free texts
    (statements, criteria, reasons, notes, excerpts), each ending with markup, and a regroup's page:
    the markup is escaped wherever it is shown (red when the page's escaping is removed)."""
    import shutil

    from ruamel.yaml import YAML

    from asz_core.collect import collect
    from asz_core.judge import person_goals, regroup

    src = tmp_path / "src"
    shutil.copytree(ROOT / "examples" / "claude-code", src)
    for f in src.rglob("*.jsonl"):
        lines = [json.dumps(_with_payload(json.loads(x), {"text", "content", "cwd", "model", "command", "file_path"}))
                 for x in f.read_text().splitlines() if x.strip()]
        f.write_text("\n".join(lines) + "\n")
    calls = _with_payload(YAML(typ="safe").load((ROOT / "examples" / "scripted-5e1f0c2a.yaml").read_text())["calls"],
                          {"note", "text", "statement", "what", "reason", "why", "excerpt", "claim", "found", "cause",
                           "model", "changed", "conclusion"})
    calls.append({"stage": "regroup", "call": 1, "requests": [{"usage": {"input": 9, "output": 1}}],
                  "answer": {"targets": [{"target": "t1", "goal": "P1", "cites": ["i1"], "note": "n" + PAYLOAD}],
                             "goals": [{"goal": "P1", "worked_on": True, "cites": ["i1"], "note": "w" + PAYLOAD}],
                             "notes": PAYLOAD}})
    for c in calls:
        c.pop("pause", None)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"calls": calls}))
    collect([src], store)
    res = runner.judge(runner.JudgeOptions("5e1f0c2a", evaluator=f"scripted:{script}"), store=store)
    goals = tmp_path / "goals.yaml"
    goals.write_text(json.dumps({"goals": ["Invoice totals right" + PAYLOAD]}))
    done = regroup.make(res.path, person_goals.read(goals), store=store)
    for page in (res.path / "report.html", done.path / "report.html"):
        html = page.read_text()
        assert "<script>alert" not in html and "<img" not in html and "<b x=" not in html and "onerror=alert(2)>" not in html
        assert html.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 10, page  # shown, as text, in many places
        assert html.count("<script>") == 1  # the page's own
