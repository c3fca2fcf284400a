"""Every table at 80 and 160 columns: nothing wider than the terminal, ids and money whole (never
cut with …), the full layout at 160 and a compact one at 80, and unknown counts explained once
under a table instead of a mark on each figure."""

from __future__ import annotations

import re

import pytest
from rich.cells import cell_len

from asz_core import api, ledger_report, report
from asz_core.conversations import Filter, ledger_of_all, listing
from asz_core.ledger import build, load_prices
from asz_core.ledger_report import money_cell
from asz_core.navigation import outline_of
from asz_core.registry import Registry
from asz_core.tables import Col, FitTable, render

from .helpers import ORIGIN

WIDTHS = (80, 160)
MONEY = re.compile(r"\$[\d,]+\.\d{4}")


def _fits(text: str, width: int) -> None:
    wide = [line for line in text.splitlines() if cell_len(line) > width]
    assert not wide, wide[:3]


def _whole(text: str, pieces: list[str]) -> None:
    """Each piece (an id, a money figure) stands whole on some line."""
    lines = text.splitlines()
    missing = [p for p in pieces if not any(p in line for line in lines)]
    assert not missing, missing[:5]


def _no_marks(text: str) -> None:
    assert not re.search(r"\+\d+\?|\+\d+\$\?|\$[\d,.]+\*", text), "a mark on a figure"


# --- the fitting itself -------------------------------------------------------------------------

def test_a_layout_is_chosen_only_when_its_ids_and_money_fit_whole() -> None:
    cols = {"id": Col("id"), "money": Col("money", right=True), "text": Col("text", wrap=True, min=10),
            "extra": Col("extra")}
    t = FitTable(cols, (("id", "extra", "text", "money"), ("id", "text", "money"), ("id", "money")))
    t.add_row({"id": "019dbc02-c9a1", "money": "$12,345.6789", "text": "a b c " * 20, "extra": "x" * 40})
    assert t.layout_for(200) == ["id", "extra", "text", "money"]
    assert t.layout_for(60) == ["id", "text", "money"]
    assert t.layout_for(30) == ["id", "money"]
    for width in (200, 60, 30):
        out = render(t, width)
        if width > 30:
            _fits(out, width)
        _whole(out, ["019dbc02-c9a1", "$12,345.6789"])  # too narrow even for the last: wider, never cut
    with pytest.raises(ValueError, match="not defined"):
        FitTable(cols, (("id", "nope"),))


def test_words_of_a_vocabulary_are_never_folded_and_a_column_note_goes_with_its_column() -> None:
    cols = {"id": Col("id"), "label": Col("label", wrap=True, min=8, words=True),
            "why": Col("why", wrap=True, min=10), "extra": Col("extra", note="what extra holds")}
    t = FitTable(cols, (("id", "label", "why", "extra"), ("id", "label", "why")))
    t.add_row({"id": "a1", "label": "misdirected_delegation (main agent)", "why": "w " * 60, "extra": "x" * 30})
    t.add_row({"id": "a2", "label": "necessary_exploration", "why": "short", "extra": "y"})
    for width in (60, 80, 160):
        out = render(t, width)
        _fits(out, width)
        _whole(out, ["misdirected_delegation", "necessary_exploration"])  # rich alone folds the longest column first
        assert ("what extra holds" in out) == ("extra" in t.layout_for(width)), width
    assert "extra" not in t.layout_for(60) and "extra" in t.layout_for(160)


# --- asz conversations --------------------------------------------------------------------------

@pytest.mark.parametrize("width", WIDTHS)
def test_conversations(mixed, width: int) -> None:
    lst = listing(store=mixed)
    out = render(report.listing_table(lst), width)
    _fits(out, width)
    _whole(out, [x.short for x in lst.rows] + [money_cell(x.summary.total) for x in lst.rows])
    _no_marks(out)
    if width == 160:
        assert all(h in out for h in ("started", "last activity", "project", "talks", "calls", "first input", "runtime"))
    else:
        assert "last activity" in out and "first input" in out and "started" not in out
    assert out.count("of what is known only") == 1  # said once, under the table
    # one line a conversation: the first input and the project cut with "…"; --wide wraps them whole
    rows = [x for x in out.splitlines() if x.startswith("│ ")]
    assert len(rows) == len(lst.rows) and "…" in out, rows[:3]
    wide = render(report.listing_table(lst, wide=True), width)
    _fits(wide, width)
    assert len([x for x in wide.splitlines() if x.startswith("│ ")]) > len(lst.rows) and wide.count("…") < out.count("…")


# --- ledgers --------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def origin(mixed):
    conv = api.load(ORIGIN.stem, store=mixed)
    return conv, build(conv, load_prices())


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("by", [None, "stream", "model", "day"])
def test_one_ledger(origin, width: int, by) -> None:
    conv, led = origin
    out = render(ledger_report.ledger_text(led, by), width)
    _fits(out, width)
    _no_marks(out)
    _whole(out, [money_cell(led.total)] + [money_cell(s.tally) for s in led.streams if s.kind != "main"])
    assert out.count("unknown (sums marked ≥)") == 1
    if by is None:
        _whole(out, [t.id for t in led.talks])
        # the per sub-agent table keeps its ids, what each rolls up to, and money
        sub = out[out.index("per sub-agent"):]
        _whole(sub, [s.id for s in led.streams if s.kind != "main"] + [s.root for s in led.streams if s.kind != "main"])
        # the label says what the figure is: the talk's own money (without its sub-agents)
        k2 = next(t for t in led.talks if t.streams)
        if width == 160:
            assert "own money" in out and money_cell(k2.own) in out
        if "own money" in out:  # never an empty cell: a talk without sub-agents owns all of its money
            for t in led.talks:
                row = next(x for x in out.splitlines() if x.startswith(f"│ {t.id} "))
                same = (money_cell(t.own) == money_cell(t.with_subagents)) + (money_cell(t.own) in ledger_report.bound_cell(t.with_subagents))
                assert row.count(money_cell(t.own)) == 1 + same, row
        total = next(x for x in out.splitlines() if x.startswith("│ total "))
        assert money_cell(led.total) in total
        assert f"sub-agents: {ledger_report.money_pair(led.subagents)} of {ledger_report.money_pair(led.total)}" in " ".join(out.split())
    if width == 160:
        assert "cache write" in out and "cache read" in out


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("by", [None, "day", "project", "talk", "model"])
def test_ledger_of_all(mixed, width: int, by) -> None:
    al = ledger_of_all(Filter.of("2025-10-01", None, "UTC"), by, store=mixed)
    out = render(ledger_report.all_text(al), width)
    _fits(out, width)
    _no_marks(out)
    _whole(out, [money_cell(r.tally) for _, r in al.rows])
    assert "calls made from 2025-10-01 00:00 (UTC)" in out
    if by is None:
        _whole(out, [al.shorts[x.conversation] for x in al.items])
        # a project's folder cut with "…" where it does not fit, never folded onto a row's second line
        head = next(x for x in out.splitlines() if "┃ project " in x)
        col = [c.strip() for c in head.split("┃")].index("project")
        more = [x.split("│") for x in out.splitlines() if x.startswith("│ ") and not x.split("│")[1].strip()]
        assert not [c[col] for c in more if c[col].strip()], (width, [c[col] for c in more])
    assert any(x.startswith("│ total ") for x in out.splitlines())  # in whichever first column is drawn
    if by == "project":  # a path whole where it fits, else the fewest last folders that tell it apart
        paths = [r.key for _, r in al.rows if r.key.startswith("/")]
        tails = [x.split("│")[1].strip() for x in out.splitlines() if x.startswith("│ …/")]
        if width == 160:
            _whole(out, paths)
        else:
            assert len(tails) == len(paths) == len(set(tails)) and all(p.endswith(t[1:]) for p, t in zip(paths, tails))


def test_money_too_small_for_four_places_never_reads_as_nothing() -> None:
    from decimal import Decimal

    assert ledger_report.money(Decimal("0.00002")) == "$0.00002"
    assert ledger_report.money(Decimal("0")) == "$0" and ledger_report.money(Decimal("0.00005")) == "$0.00005"
    assert ledger_report.money(Decimal("0.000051")) == "$0.000051"


def test_a_conversation_without_sub_agents_says_so(mixed) -> None:
    cid = next(r.id for r in mixed.conversations() if len(api.load(r.id, store=mixed).streams) == 1)
    led = build(api.load(cid, store=mixed), load_prices())
    out = " ".join(render(ledger_report.ledger_text(led), 80).split())
    assert "sub-agents: none" in out and "of money" not in out


# --- show ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("width", WIDTHS)
def test_show(origin, width: int) -> None:
    conv, led = origin
    out = render(report.show_text(conv, led), width)
    _fits(out, width)
    _no_marks(out)
    _whole(out, [t.id for t in conv.main_talks] + [money_cell(t.with_subagents) for t in led.talks if t.with_subagents.calls])
    # talks no model call answered are one row of their own, with no money shown as $0
    quiet = [t.id for t in led.talks if not t.with_subagents.calls]
    assert quiet and all(re.search(rf"│ {t}\b[^$\n]*│ +— │$", out, re.M) for t in quiet), out
    assert "took" in out and "start" in out
    sub = next(t for t in conv.talks if t.stream != "m")  # the note names a sub-agent talk this table lists
    assert f"sub-agent's own talk ({sub.id} ({sub.stream}) here)" in " ".join(out.split())
    assert f"│ {sub.id} ({sub.stream}) " in out
    if width == 160:
        assert "reply" in out


@pytest.mark.parametrize("width", WIDTHS)
def test_one_talk_in_outline(mixed, width: int) -> None:
    conv, head, steps = outline_of(ORIGIN.stem, "k2", store=mixed)
    led = build(conv, load_prices())
    out = render(report.outline_text(conv, head, steps, led), width)
    _fits(out, width)
    prices = [ledger_report.money(c.price.money) for c in led.calls if c.talk == "k2" and c.price.money is not None]
    _whole(out, [s["id"] for s in steps] + prices)
    assert "returned" in out and "→ starts a" in out  # tools with their status, the sub-agents they started


@pytest.mark.parametrize("width", WIDTHS)
def test_plugins_and_collect(width: int, mixed) -> None:
    out = render(report.plugins_table(Registry().plugins()), width)
    _fits(out, width)
    _whole(out, ["claudecode", "codex", "asz-adapters-claudecode"])


def test_money_no_count_tells_is_never_written_as_nothing(tmp_path) -> None:
    """Kiro records no token counts: its ledger's money is "—" in the table and in the notes under it."""
    from asz_core.collect import collect
    from asz_core.store import Store

    from tests.conftest import need_corpus
    from .helpers import CORPUS

    need_corpus(CORPUS / "kiro")
    st = Store.open(tmp_path / "home")
    collect([CORPUS / "kiro"], st)
    seen = 0
    for r in st.conversations():
        led = build(api.load(r.id, store=st), load_prices())
        if not ledger_report.blind(led.total):
            continue
        text = render(ledger_report.ledger_text(led), 80)
        total = next(x for x in text.splitlines() if x.startswith("│ total "))
        assert "$" not in total, total  # a talk with no calls did cost $0.0000; the conversation's money is not known
        out = " ".join(text.split())
        assert "of $0.0000" not in out and "sub-agents: $0.0000" not in out, out[-300:]
        seen += 1
    st.close()
    assert seen


@pytest.mark.parametrize("width", WIDTHS)
def test_file_operations(origin, width: int) -> None:
    """At 80 a file in the project is named from it (whole, on one line where it fits); at 160 by its whole path."""
    from asz_core.operations import of_conversation

    conv, _ = origin
    ops = of_conversation(conv)
    out = render(report.operations_text(conv, ops), width)
    _fits(out, width)
    _whole(out, [o.id for o in ops] + [o.step for o in ops if o.step])
    inside = [o.path for o in ops if o.path and o.path.startswith(conv.project + "/")]
    assert inside
    if width == 160:
        _whole(out, [p for p in inside if len(p) < 90])  # longer ones fold in the file column
    else:
        _whole(out, [p[len(conv.project) + 1:] for p in inside if len(p) - len(conv.project) < 30])
        assert f"named from the project, {conv.project}" in " ".join(out.split())


def test_a_run_of_talks_no_model_call_answered_is_one_row(tmp_path) -> None:
    """Kiro's q.json ends with four talks of /save commands in a row and no model call: `asz show`
    draws them as one row (k17–k20), its inputs together, no money, and says so once."""
    from asz_core.collect import collect
    from asz_core.store import Store

    from tests.conftest import need_corpus
    from .helpers import CORPUS

    src = CORPUS / "kiro" / "metaneutrons__SnapcastClient" / "q.json"
    need_corpus(src)
    st = Store.open(tmp_path / "home")
    collect([src], st)
    [row] = st.conversations()
    conv = api.load(row.id, store=st)
    led = build(conv, load_prices())
    calls = {t.id: t.with_subagents.calls for t in led.talks}
    quiet = [t.id for t in conv.main_talks if not calls.get(t.id) and not t.reply]
    runs, cur = [], []
    for t in conv.main_talks:  # the runs of quiet talks, as a person reads them down the table
        if t.id in quiet:
            cur.append(t.id)
        elif cur:
            runs.append(cur)
            cur = []
    if cur:
        runs.append(cur)
    assert any(len(r) > 1 for r in runs), runs
    for width in WIDTHS:
        out = render(report.show_text(conv, led), width)
        firsts = [x.split("│")[1].strip() for x in out.splitlines() if x.startswith("│ ") and x.split("│")[1].strip()]
        for r in runs:
            label = r[0] if len(r) == 1 else f"{r[0]}–{r[-1]}"
            assert label in firsts and not any(k in firsts for k in r[1:]), (label, firsts)
        assert out.count("(no model call)") == len(runs)
        assert f"{len(quiet)} talks with no model call" in " ".join(out.split())
    st.close()
