"""The ledger of all by day and by month from the kept sum of every conversation
(ASZ_HOME/cache/ledger/rollup.json, asz_core.ledger_rollup): what it prints is what adding up the
conversations' summaries computed again prints, to the byte of every money figure, after a
conversation grew, was removed or priced with another file, in any zone; and a file not signed
by the home is never read."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from asz_core import signed
from asz_core.conversations import Filter, all_rows, ledger_of_all
from asz_core.ledger import load_prices, summaries
from asz_core.ledger_data import all_json, all_ledger_json
from asz_core.store import Store

from .helpers import CLAUDE_CORPUS, half_then_rest


def _fresh(st: Store, by: str, tz: dt.tzinfo, prices: str | None = None) -> dict:
    """The ledger of all by ``by`` as the conversations' summaries, computed again, add it up."""
    sums, file = summaries(store=st, cache=False, prices=prices)
    d = all_json(sums, file, by, all_rows(sums, by, tz))
    return {k: d[k] for k in ("conversations", "total", "subagents", "helpers", "counted_elsewhere", "rows")}


def _rolled(st: Store, by: str, tz: dt.tzinfo, prices: str | None = None) -> dict:
    al = ledger_of_all(Filter(tz=tz), by, store=st, prices=prices)
    assert al.items == ()  # (from the kept sum: no conversation's summary made into a row)
    d = all_ledger_json(al)
    return {k: d[k] for k in ("conversations", "total", "subagents", "helpers", "counted_elsewhere", "rows")}


def _rollup(st: Store) -> Path:
    return st.path.parent / "cache" / "ledger" / "rollup.json"


ZONES = (dt.UTC, ZoneInfo("Asia/Kathmandu"), ZoneInfo("America/New_York"))


@pytest.fixture
def grown(tmp_path: Path):
    """A store of the corpus's largest conversation (its first half) and eight others, its sum
    kept; and the rest of that conversation, to append."""
    from asz_core.collect import collect

    f, rest = half_then_rest(tmp_path / "p")
    others = sorted((x for x in CLAUDE_CORPUS.rglob("*.jsonl") if x.name != f.name and x.parent.name != "subagents"),
                    key=lambda x: x.stat().st_size)[-8:]
    st = Store.open(tmp_path / "home")
    collect([f, *others], st)
    assert _rolled(st, "day", dt.UTC) == _fresh(st, "day", dt.UTC)
    assert _rollup(st).exists()
    yield st, f, rest, others
    st.close()


def test_a_conversation_that_grew_is_taken_out_and_put_in_again(grown, monkeypatch: pytest.MonkeyPatch) -> None:
    """A day's growth: the grown conversation's old summary taken away, its new one added, and
    no other conversation's summary read (red when the kept sum is used as it is although a
    conversation's head changed, or when a money figure's exponent is not the one adding up gives)."""
    from asz_core import ledger
    from asz_core.collect import collect

    st, f, rest, others = grown
    before = _rolled(st, "day", dt.UTC)
    with f.open("ab") as out:
        out.write(rest)
    collect([f, *others], st)
    asked: list[list[str]] = []
    real = ledger.summaries

    def spy(**kw):  # type: ignore[no-untyped-def]
        asked.append([r.id for r in kw.get("rows") or []])
        return real(**kw)

    monkeypatch.setattr("asz_core.ledger_rollup.summaries", spy)
    got = _rolled(st, "day", dt.UTC)
    monkeypatch.undo()
    assert asked == [[f.stem]]  # the one that grew, alone
    assert got == _fresh(st, "day", dt.UTC) != before
    assert got["total"]["calls"] > before["total"]["calls"]
    for tz in ZONES:
        for by in ("day", "month"):
            assert _rolled(st, by, tz) == _fresh(st, by, tz), (by, tz)


def test_a_conversation_removed_is_taken_out(grown, monkeypatch: pytest.MonkeyPatch) -> None:
    """A conversation the store no longer holds is no longer in the sum (red when those gone
    are not taken out)."""
    st, *_ = grown
    rows = st.conversations()
    gone = max((r for r in rows if r.head is not None), key=lambda r: r.head.records)
    monkeypatch.setattr(Store, "conversations", lambda self: [r for r in rows if r.id != gone.id])
    got = _rolled(st, "day", dt.UTC)
    assert got == _fresh(st, "day", dt.UTC)
    assert got["conversations"] == len([r for r in rows if r.head is not None]) - 1


def test_another_price_file_has_its_own_sum(grown, tmp_path: Path) -> None:
    """Kept by price file: the same history priced with another file (every price doubled) is
    that file's figures, not the kept ones (red when the sum is used whatever the price file).
    (Prices given as a plain figure are doubled; tiered ones are left: the money is other, not twice.)"""
    st, *_ = grown
    doc = json.loads(Path(load_prices().file.path).read_text())

    def double(x):  # type: ignore[no-untyped-def]
        if isinstance(x, dict):
            return {k: (str(Decimal(str(v)) * 2) if k.endswith("_mtok") and isinstance(v, (str, int, float)) else double(v))
                    for k, v in x.items()}
        return [double(v) for v in x] if isinstance(x, list) else x

    other = tmp_path / "doubled.json"
    other.write_text(json.dumps(double(doc)))
    plain = _rolled(st, "day", dt.UTC)
    got = _rolled(st, "day", dt.UTC, prices=str(other))
    assert got == _fresh(st, "day", dt.UTC, prices=str(other))
    assert Decimal(plain["total"]["money"]) < Decimal(got["total"]["money"]) <= 2 * Decimal(plain["total"]["money"])
    assert _rolled(st, "day", dt.UTC) == plain


def test_any_zone_from_one_sum(grown) -> None:
    """The sum is of UTC quarter hours: one kept in one zone gives every zone's days (red when
    what is kept is one zone's days)."""
    st, *_ = grown
    for tz in (ZoneInfo("Pacific/Chatham"), ZoneInfo("Asia/Kolkata"), dt.UTC, ZoneInfo("Pacific/Auckland")):
        assert _rolled(st, "day", tz) == _fresh(st, "day", tz), tz


def test_the_sum_is_signed_and_one_not_signed_by_the_home_is_not_read(grown) -> None:
    """rollup.json begins with the home's HMAC like every kept file (asz_core.signed); one
    written by anyone else (another total planted) is as if none were kept (red when it is read
    without its tag checked)."""
    st, *_ = grown
    path = _rollup(st)
    body = signed.read(st.path.parent, path, 1 << 30)
    assert body is not None  # signed with the home's key
    want = _rolled(st, "day", dt.UTC)
    data = json.loads(body)
    data["total"]["money"] = str(Decimal(data["total"]["money"]) + 1000)
    for q in data["quarters"].values():
        q["calls"] += 1
    path.write_bytes(bytes(signed.TAG) + json.dumps(data).encode())  # no key's tag
    assert _rolled(st, "day", dt.UTC) == want
    assert signed.read(st.path.parent, path, 1 << 30) is not None  # made again, signed
    # one signed by the home but of another shape: made again too
    assert signed.write(st.path.parent, path, b'{"v": 1, "quarters": 5}')
    assert _rolled(st, "day", dt.UTC) == want


def _t(money: str, floor: str = "0", **parts: str) -> "Tally":
    from asz_core.ledger import Tally

    return Tally(calls=1, money=Decimal(money), floor_money=Decimal(floor), parts={k: Decimal(v) for k, v in parts.items()})


def test_a_sum_taken_away_gives_the_figures_adding_up_gives() -> None:
    """Money is written with the exponent adding the tallies up gives (``1.8``, not ``1.80``
    after a ``0.25`` was added and taken away): the corpus's calls all have one exponent, so made
    by hand (red when the sum's money is given as it was added and taken away)."""
    from asz_core.ledger import Tally
    from asz_core.ledger_data import tally_json
    from asz_core.ledger_rollup import Sum

    a, b, c = _t("1.5", "0.5", input="1.5"), _t("0.25", "0.125", input="0.25", output="0"), _t("0.3", output="0.3")
    s = Sum()
    for x in (a, b):
        s.add(x)
    s.add(b, -1)
    s.add(c)
    want = Tally.sum([a, c])
    assert tally_json(s.tally()) == tally_json(want)
    assert str(s.tally().money) == "1.8" and str(s.tally().floor_money) == "0.5"
    assert list(s.tally().parts.items()) == [("input", Decimal("1.5")), ("output", Decimal("0.3"))]
    s.add(a, -1)
    s.add(c, -1)
    assert s.empty()
