"""The team view (asz_core.team.view) and its page: figures computed by hand from the rows."""

from __future__ import annotations

from decimal import Decimal

from asz_core.team import team_report, view


def _row(job, conv, project, status="closed", *, activity="2026-11-24T10:00:00Z", money="0", tokens=0, avoidable="0",
         avoidable_tokens=0, not_reviewed="0", achievement=None, delivered=None, unpriced=0, ended=None):
    summary = None
    if status in ("closed", "failed"):
        summary = {"cost": {"total": {"calls": 1, "tokens": tokens, "money": money, "unpriced": unpriced},
                            "avoidable": {"calls": 0, "tokens": avoidable_tokens, "money": avoidable, "unpriced": 0},
                            "not_reviewed": {"calls": 0, "tokens": 0, "money": not_reviewed, "unpriced": 0}},
                   "scores": {"achievement": achievement, "delivered": delivered}}
    return {"job_id": job, "conversation": conv, "project": project, "status": status, "activity": activity,
            "queued_at": "2026-11-30T00:00:00Z", "ended": ended or f"2026-11-30T00:00:{job:02d}Z", "summary": summary}


def test_each_conversation_once_by_its_newest_closed_run() -> None:
    rows = [
        _row(1, "c1", "/p/alpha", money="2.00", avoidable="0.50", achievement="0.5000", delivered="0.0000"),
        # c1 judged again: only this one counts
        _row(2, "c1", "/p/alpha", money="4.00", avoidable="1.00", not_reviewed="2.00", achievement="1.0000",
             delivered="1.0000"),
        _row(3, "c2", "/p/alpha", money="1.00", avoidable="0", achievement="0.2500", delivered="0.0000"),
        _row(4, "c3", "/p/beta", status="queued"),
        _row(5, "c4", "/p/beta", status="failed", money="9.00"),
    ]
    alpha, beta = view.groups(rows, "project")
    assert alpha.key == "/p/alpha" and alpha.conversations == 2 and alpha.closed == 3
    assert alpha.unit == "money" and alpha.cost == Decimal("5.00") and alpha.avoidable == Decimal("1.00")
    # reviewed = 5.00 - 2.00; the share 1.00 / 3.00
    assert alpha.avoidable_share == Decimal("1.00") / Decimal("3.00")
    # (1.0 * 4 + 0.25 * 1) / 5
    assert alpha.achievement == Decimal("0.85") and alpha.delivered == Decimal("0.8")
    # a failed run's cost is no conversation's judged cost; a queued one counts as waiting
    assert (beta.closed, beta.failed, beta.waiting, beta.cost, beta.achievement) == (0, 1, 1, Decimal(0), None)


def test_tokens_when_a_call_of_the_targets_is_unpriced_and_weeks() -> None:
    rows = [_row(1, "c1", "/p", money="1.00", tokens=1000, avoidable_tokens=100, unpriced=1, achievement="1.0000",
                 activity="2026-11-24T10:00:00Z"),
            _row(2, "c2", "/p", money="3.00", tokens=3000, achievement="0.0000", activity="2026-12-01T10:00:00Z")]
    (p,) = view.groups(rows, "project")
    assert p.unit == "tokens" and p.cost == Decimal(4000) and p.avoidable == Decimal(100)
    assert p.achievement == Decimal("0.25")
    w1, w2 = view.groups(rows, "week")
    assert (w1.key, w2.key) == ("2026-W48", "2026-W49")
    assert (w1.unit, w1.cost, w2.unit, w2.cost) == ("tokens", Decimal(1000), "money", Decimal("3.00"))


def test_the_page_escapes_what_it_is_given() -> None:
    rows = [_row(1, "c1", "<script>alert(1)</script>", money="1.00", avoidable="0.25", achievement="1.0000")]
    page = team_report.page(view.groups(rows, "project"), view.groups(rows, "week"), rows)
    assert "<script>alert" not in page and "&lt;script&gt;" in page
    assert page.count("<svg") == 2 and "$1.00" in page and "avoidable $0.25" in page
