"""Finding a conversation by when and where: `asz conversations` rows checked against the raw
files (plain json), shortest unique ids, session-id prefixes, and the filtered ledger of all
(its summaries shortcut) against the calls counted one by one."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from asz_core import times
from asz_core.conversations import Filter, all_rows, ledger_of_all, ledger_of_one, listing, shortest_prefixes
from asz_core.errors import AszError, NotFound
from asz_core.ledger import NO_TIME, Tally, for_all, load_prices, summaries
from asz_core.ledger_data import all_json, all_ledger_json
from asz_core.store import ConversationRow, Store

from .helpers import ORIGIN, RESUMED

def _raw(path: Path) -> list[dict]:
    out = []
    for line in path.read_bytes().splitlines():
        try:
            o = json.loads(line)
        except ValueError:
            continue
        if isinstance(o, dict):
            out.append(o)
    return out


def _files_of(store: Store, cid: str) -> list[Path]:
    return sorted({Path(r[0]) for r in store.db.execute("SELECT DISTINCT file FROM records WHERE conversation = ?", (cid,))})


# --- the listing against the raw files ---------------------------------------------------------------

def test_rows_say_when_and_where_as_the_files_do(mixed: Store) -> None:
    rows = {x.id: x for x in listing(store=mixed).rows}
    checked = 0
    for cid, x in rows.items():
        if x.runtime != "claudecode":
            continue
        lines = [o for f in _files_of(mixed, cid) for o in _raw(f)]
        stamps = [t for o in lines if (t := times.instant(o.get("timestamp"))) is not None]
        assert x.summary.started == times.utc_text(min(stamps)) and x.summary.last == times.utc_text(max(stamps)), cid
        cwd = next((o["cwd"] for o in lines if not o.get("isSidechain") and isinstance(o.get("cwd"), str)), None)
        if cwd is not None:
            assert x.summary.project == cwd, cid
        checked += 1
    assert checked >= 15
    # a resumed conversation: its last activity is in the resumed file, its project the first recorded
    origin = rows[ORIGIN.stem]
    assert origin.summary.last == times.utc_text(max(times.instant(o["timestamp"]) for f in (ORIGIN, RESUMED)
                                                     for o in _raw(f) if o.get("timestamp")))
    assert origin.summary.project == "/Users/coreyyoung/Desktop/Projects/match"


def test_codex_projects_come_from_session_meta(mixed: Store) -> None:
    rows = [x for x in listing(store=mixed).rows if x.runtime == "codex"]
    assert rows
    for x in rows:
        metas = [o["payload"]["cwd"] for f in _files_of(mixed, x.id) for o in _raw(f) if o.get("type") == "session_meta"]
        assert x.summary.project == metas[0]


def test_sorted_by_last_activity_newest_last(mixed: Store) -> None:
    lst = listing(store=mixed)
    lasts = [x.summary.last for x in lst.rows]
    assert lasts == sorted(lasts) and len(lst.rows) == lst.total == len(mixed.conversations())
    assert [x.id for x in listing(store=mixed, last=3).rows] == [x.id for x in lst.rows[-3:]]


def test_the_first_input_is_the_persons_first_real_one(mixed: Store) -> None:
    rows = {x.id: x for x in listing(store=mixed).rows}
    # these sessions begin with /clear: the first words typed are shown
    starts_with_clear = [x for x in rows.values() if x.runtime == "claudecode"
                         and any("<command-name>/clear</command-name>" in str((o.get("message") or {}).get("content"))
                                 for o in _raw(_files_of(mixed, x.id)[0])[:5])]
    assert len(starts_with_clear) >= 3
    for x in starts_with_clear:
        assert x.summary.first_input and not x.summary.first_input.startswith("/clear"), x.id
    for x in rows.values():
        assert not (x.summary.first_input or "").startswith(("/clear", "<command")), x.id


def test_first_input_rules_on_a_made_conversation() -> None:
    from .test_ledger_owners import Conv as Base

    class Conv(Base):
        def command(self, text: str) -> None:
            self.add("main", {"e": "input", "source": "command", "text": text, "size": len(text)})

    c = Conv()
    c.command("/clear")
    c.command("/review the parser")
    c.person("fix the bug")
    conv, _ = c.build()
    assert conv.first_input().text == "fix the bug"
    c = Conv()
    c.command("/clear")
    c.command("/review the parser")
    conv, _ = c.build()
    assert conv.first_input().text == "/review the parser"  # a command given arguments: a request
    c = Conv()
    c.command("/init")
    conv, _ = c.build()
    assert conv.first_input().text == "/init"  # nothing else: the command itself


# --- ids -------------------------------------------------------------------------------------------

def test_shortest_unique_prefixes(mixed: Store) -> None:
    rows = mixed.conversations()
    short = shortest_prefixes(rows)
    names = [(n, r.id) for r in rows for n in (r.id, *r.sessions)]
    for r in rows:
        p = short[r.id]
        assert r.id.startswith(p) and len(p) >= 8
        assert all(not n.startswith(p) for n, owner in names if owner != r.id), p
        # and no shorter prefix (of at least 8) would do
        if len(p) > 8:
            q = p[:-1]
            assert any(n.startswith(q) for n, owner in names if owner != r.id)
        assert mixed.resolve(p) == r.id
    twins = [short[r.id] for r in rows if r.id.startswith("019dbc02")]
    assert len(twins) == 2 and len(set(twins)) == 2 and all(len(t) > 8 for t in twins)


def test_prefixes_made_up() -> None:
    rows = [ConversationRow("aaaa1111", "x", "", None, ("aaaa1111", "bbbb2222")),
            ConversationRow("bbbb2233", "x", "", None, ("bbbb2233",)),
            ConversationRow("cc", "x", "", None, ("cc",))]
    assert shortest_prefixes(rows) == {"aaaa1111": "aaaa1111", "bbbb2233": "bbbb2233", "cc": "cc"}
    assert shortest_prefixes(rows, minimum=2) == {"aaaa1111": "aa", "bbbb2233": "bbbb223", "cc": "cc"}


def test_a_session_id_prefix_names_its_conversation(mixed: Store) -> None:
    assert mixed.resolve(RESUMED.stem[:10]) == ORIGIN.stem  # the resumed session's id, cut
    assert mixed.resolve(RESUMED.stem) == ORIGIN.stem
    with pytest.raises(NotFound, match="give a conversation id"):
        mixed.resolve("")
    with pytest.raises(NotFound, match="names 2 conversations"):
        mixed.resolve("019dbc02")


# --- filters -------------------------------------------------------------------------------------

def test_filters_keep_what_they_say(mixed: Store) -> None:
    every = listing(store=mixed).rows
    codex = listing(Filter(runtimes=("codex",)), store=mixed).rows
    assert codex and {x.runtime for x in codex} == {"codex"} and len(codex) == sum(x.runtime == "codex" for x in every)
    match = listing(Filter(projects=("MATCH",)), store=mixed).rows  # case-insensitive, a part of the path
    assert match and all("match" in x.summary.project.lower() for x in match)
    assert len(match) == sum(1 for x in every if x.summary.project and "match" in x.summary.project.lower())
    f = Filter.of("2025-11-01", "2025-11-01", "UTC")
    day = listing(f, store=mixed).rows
    assert day
    lo, hi = dt.datetime(2025, 11, 1, tzinfo=dt.UTC), dt.datetime(2025, 11, 2, tzinfo=dt.UTC)
    want = [x.id for x in every if x.summary.started and times.instant(x.summary.started) < hi
            and times.instant(x.summary.last) >= lo]
    assert [x.id for x in day] == want


def test_a_filter_that_cannot_hold_anything_is_an_error() -> None:
    with pytest.raises(AszError, match="is not after"):
        Filter.of("2025-02-01", "2025-01-01")
    with pytest.raises(AszError, match="unknown time zone"):
        Filter.of("2025-02-01", timezone="Nowhere/Town")


# --- the ledger of all, filtered ---------------------------------------------------------------------

def _calls(store: Store):
    return [(led, c) for led in for_all(store=store, prices=load_prices()) for c in led.calls]


@pytest.mark.parametrize("since,until,tz", [
    ("2025-11-01T21:00", "2025-11-01T22:30", "UTC"),   # cuts conversations in the middle
    ("2025-10-01", "2025-10-31", "America/Los_Angeles"),
    ("2026-02-12", None, "Asia/Kolkata"),               # a half-hour zone
    (None, "2025-09-03T00:50", "UTC"),
])
def test_a_span_counts_exactly_the_calls_made_in_it(mixed: Store, since, until, tz) -> None:
    f = Filter.of(since, until, tz)
    al = ledger_of_all(f, None, store=mixed)
    kept = [c for _, c in _calls(mixed) if f.holds(c.ts)]
    assert kept
    got = Tally.sum(x.total for x in al.items)
    want = Tally.of(kept)
    assert (got.calls, got.tokens, got.unknown, got.money) == (want.calls, want.tokens, want.unknown, want.money)
    assert al.untimed_calls == sum(1 for _, c in _calls(mixed) if times.instant(c.ts) is None)
    # every cut of it adds up to the same
    for by in ("talk", "stream", "model", "day", "project"):
        rows = ledger_of_all(f, by, store=mixed).rows
        assert sum((r.tally.money for _, r in rows), Decimal(0)) == want.money, by
        assert sum(r.tally.calls for _, r in rows) == want.calls, by


@pytest.mark.parametrize("tz", ["UTC", "Pacific/Auckland", "America/New_York", "Asia/Kathmandu"])
def test_days_are_the_days_of_the_zone(mixed: Store, tz: str) -> None:
    zone = ZoneInfo(tz)
    al = ledger_of_all(Filter(tz=zone), "day", store=mixed)
    want: dict[str, Tally] = {}
    for _, c in _calls(mixed):
        t = times.instant(c.ts)
        want.setdefault(t.astimezone(zone).date().isoformat() if t else NO_TIME, Tally()).add(c)
    got = {r.key: r.tally for _, r in al.rows}
    assert sorted(got) == sorted(want)
    for k in want:
        assert (got[k].calls, got[k].money, got[k].tokens) == (want[k].calls, want[k].money, want[k].tokens), k


def _days_of_calls(store: Store, zone: dt.tzinfo) -> dict[str, Tally]:
    want: dict[str, Tally] = {}
    for _, c in _calls(store):
        t = times.instant(c.ts)
        want.setdefault(t.astimezone(zone).date().isoformat() if t else NO_TIME, Tally()).add(c)
    return want


@pytest.mark.parametrize("tz", ["Pacific/Auckland", "America/New_York", "Asia/Kolkata", "Asia/Kathmandu",
                                "Australia/Eucla", "Pacific/Chatham"])
def test_a_zones_days_and_months_come_from_the_kept_summaries(mixed: Store, tz: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Every zone's midnight falls on a UTC quarter hour, so the ledger of all by day and by month
    in any zone is made from the summaries' quarter hours: no conversation is loaded and counted
    again call by call (what made `asz ledger --by day` slow off UTC), and the figures are those of
    the calls counted one by one."""
    zone = ZoneInfo(tz)
    want = _days_of_calls(mixed, zone)
    summaries(store=mixed)  # kept, as a person's store keeps them after a collect

    def no_load(*a: object, **k: object) -> None:
        raise AssertionError("a conversation was loaded for the ledger of all by day")

    monkeypatch.setattr("asz_core.conversations._load_named", no_load)
    days = {r.key: r.tally for _, r in ledger_of_all(Filter(tz=zone), "day", store=mixed).rows}
    assert sorted(days) == sorted(want)
    for k, w in want.items():
        assert (days[k].calls, days[k].money, days[k].tokens, days[k].floor_money, days[k].unknown) == \
            (w.calls, w.money, w.tokens, w.floor_money, w.unknown), k
    months = {r.key: r.tally for _, r in ledger_of_all(Filter(tz=zone), "month", store=mixed).rows}
    for m in {k[:7] if k != NO_TIME else k for k in want}:
        ws = [w for k, w in want.items() if (k[:7] if k != NO_TIME else k) == m]
        assert (months[m].calls, months[m].money) == (sum(w.calls for w in ws), sum((w.money for w in ws), Decimal(0))), m


def test_a_zone_whose_midnight_cuts_a_quarter_hour_counts_call_by_call(mixed: Store) -> None:
    """A zone offset by minutes that are no quarter hour (none today; a test can make one): a
    quarter hour of calls that its midnight cuts is not put wholly on one day, the calls are
    counted one by one."""
    stamps = sorted(t for _, c in _calls(mixed) if (t := times.instant(c.ts)) is not None and t.minute % 15 >= 2)
    t = stamps[len(stamps) // 2]
    q = t.replace(minute=t.minute - t.minute % 15, second=0, microsecond=0)
    midnight = q + dt.timedelta(minutes=1)  # local midnight inside the quarter hour, before the call
    since_midnight = midnight - midnight.replace(hour=0, minute=0)
    zone = dt.timezone(-since_midnight)
    want = _days_of_calls(mixed, zone)
    assert t.astimezone(zone).date() != q.astimezone(zone).date()  # the case: the call is past the cut
    days = {r.key: r.tally for _, r in ledger_of_all(Filter(tz=zone), "day", store=mixed).rows}
    assert {k: (v.calls, v.money) for k, v in days.items()} == {k: (v.calls, v.money) for k, v in want.items()}


def test_by_project(mixed: Store) -> None:
    al = ledger_of_all(None, "project", store=mixed)
    rows = {r.key: r.tally for _, r in al.rows}
    assert "/Users/coreyyoung/Desktop/Projects/match" in rows
    total = Tally.sum(x.total for x in al.items)
    assert sum(t.calls for t in rows.values()) == total.calls
    assert sum((t.money for t in rows.values()), Decimal(0)) == total.money


def test_the_rows_of_all_are_made_once_whoever_asks(mixed: Store) -> None:
    """``asz ledger --json`` (the ledger of all) and the JSON of a list of summaries give the same
    rows, project included: one builder makes them."""
    sums, file = summaries(store=mixed)
    by_id = {s.conversation: s for s in sums}
    for by in (None, "talk", "stream", "model", "day", "project"):
        got = all_ledger_json(ledger_of_all(Filter(tz=dt.UTC), by, store=mixed))
        lone = all_json(sums, file, by) if by not in ("talk", "stream") else \
            all_json(for_all(store=mixed, prices=load_prices()), file, by)
        assert got["rows"] == lone["rows"], by
        assert got["rows"], by
    rows = all_ledger_json(ledger_of_all(None, None, store=mixed))["rows"]
    assert {r["key"]: r["project"] for r in rows} == {k: s.project for k, s in by_id.items()}
    assert any(r["project"] for r in rows)
    with pytest.raises(ValueError, match="ledger_of"):  # a summary's talks need its ledger
        all_rows(sums, "talk")


def test_one_conversation_in_a_span(mixed: Store) -> None:
    f = Filter.of("2025-11-01T22:00", "2025-11-01T22:30", "UTC")
    led = ledger_of_one(ORIGIN.stem[:8], None, f, store=mixed)
    whole = ledger_of_one(ORIGIN.stem[:8], None, Filter(), store=mixed)
    assert 0 < led.total.calls < whole.total.calls
    assert led.total.calls == sum(1 for c in whole.calls if f.holds(c.ts))
    with pytest.raises(AszError, match="choose among all conversations"):
        ledger_of_one(ORIGIN.stem[:8], None, Filter(projects=("x",)), store=mixed)


def test_the_library_imports_no_cli_or_rendering_package() -> None:
    """A lean command path (ledger --json, collect) can use the filters as they are."""
    import subprocess
    import sys

    code = ("import sys, asz_core.conversations, asz_core.times; "
            "print(sorted(m for m in ('typer', 'rich', 'click', 'pydantic') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"
