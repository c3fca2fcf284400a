"""asz_core.workers: jobs split with a forked child give the answers the jobs give here, in order,
and a child that fails costs time, never an answer."""

from __future__ import annotations

import os

import pytest

from asz_core import workers


@pytest.fixture(autouse=True)
def _fork() -> None:
    if not workers.can_fork():
        pytest.skip("no fork here (or one CPU)")


def test_the_answers_are_the_jobs_in_order_half_of_them_from_the_child() -> None:
    items = list(range(40))
    got = workers.in_two(items, lambda x: x + 1, lambda x: {"x": x, "pid": os.getpid()})
    assert [g["x"] for g in got] == items
    pids = {g["pid"] for g in got}
    assert len(pids) == 2 and os.getpid() in pids
    mine = sum(g["x"] + 1 for g in got if g["pid"] == os.getpid())
    assert abs(mine - sum(x + 1 for x in items) / 2) <= 40  # split by weight


@pytest.mark.parametrize("how", ["raises", "exits"])
def test_a_child_that_fails_has_its_jobs_done_here(how: str) -> None:
    def setup():  # type: ignore[no-untyped-def]
        if how == "raises":
            raise RuntimeError("broken child")
        if how == "exits":
            os._exit(3)
        raise AssertionError

    items = [1, 2, 3, 4]
    got = workers.in_two(items, lambda x: 1, lambda x: {"x": x, "pid": os.getpid()}, setup)
    assert got == [{"x": x, "pid": os.getpid()} for x in items]


def test_one_cpu_or_asz_jobs_1_runs_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASZ_JOBS", "1")
    assert not workers.can_fork()
    got = workers.in_two([1, 2, 3], lambda x: 1, lambda x: os.getpid())
    assert got == [os.getpid()] * 3
