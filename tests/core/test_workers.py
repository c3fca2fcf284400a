"""asz_core.workers: jobs split with a forked child give the answers the jobs give here, in order,
and a child that fails costs time, never an answer."""

from __future__ import annotations

import os

import pytest

from asz_core import workers


@pytest.fixture(autouse=True)
def _fork(monkeypatch: pytest.MonkeyPatch) -> None:
    if not workers.can_fork():
        pytest.skip("no fork here (or one CPU)")
    monkeypatch.setenv("ASZ_PROCESSES", "2")  # forked whatever the machine's load (other tests set their own)


def _pids(items: list[int]) -> set[int]:
    return set(workers.in_two(items, lambda x: 1, lambda x: os.getpid()))


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


def test_one_cpu_or_asz_processes_1_runs_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASZ_PROCESSES", "1")
    assert not workers.can_fork()
    got = workers.in_two([1, 2, 3], lambda x: 1, lambda x: os.getpid())
    assert got == [os.getpid()] * 3


def test_a_busy_machine_splits_nothing_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """The gate collect's reader uses: a one-minute load average at the CPU count or above runs every
    job here (the two processes would only take turns); below it, or with ASZ_PROCESSES=2, half go to the child."""
    monkeypatch.delenv("ASZ_PROCESSES")
    monkeypatch.setattr(workers, "cpus", lambda: 2)
    monkeypatch.setattr(workers, "_load", lambda: 2.0)
    assert not workers.fork_pays() and _pids([1, 2, 3, 4]) == {os.getpid()}
    monkeypatch.setattr(workers, "_load", lambda: 0.7)
    assert workers.fork_pays() and len(_pids([1, 2, 3, 4])) == 2
    monkeypatch.setattr(workers, "_load", lambda: 3.0)
    for jobs, forks in (("2", True), ("4", True), (" 2 ", True), ("1", False), ("lots", False), ("", False)):
        monkeypatch.setenv("ASZ_PROCESSES", jobs)
        assert workers.fork_pays() is forks, jobs
        assert len(_pids([1, 2, 3, 4])) == (2 if forks else 1), jobs


def test_the_team_databases_variable_says_nothing_of_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    """``ASZ_JOBS`` names the team's job database (docs/team.md); the processes a command may fork
    are ``ASZ_PROCESSES``'s alone, so a team's setting never changes how collect reads."""
    monkeypatch.delenv("ASZ_PROCESSES")
    monkeypatch.setattr(workers, "cpus", lambda: 2)
    monkeypatch.setattr(workers, "_load", lambda: 3.0)
    for team in ("1", "2", "postgresql://db/asz"):
        monkeypatch.setenv("ASZ_JOBS", team)
        assert workers.can_fork() and not workers.fork_pays(), team
