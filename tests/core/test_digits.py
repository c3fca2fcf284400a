"""Numbers in text asz did not write (asz_core.digits): an id's digits cited by an evaluator, an
option a person typed, an environment variable, a count in a tool's output. ``'²'`` passes
``str.isdigit`` and ``int`` refuses it; ``int`` refuses more than 4,300 digits: each was a
traceback (a stage lost to one citation, a command dead on a hostile COLUMNS) where the text is
simply no number. Over the real corpus where the case is a real command's or stage's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from asz_core import navigation as N
from asz_core import window as W
from asz_core.digits import id_number, whole
from asz_core.judge.evidence import Evidence
from asz_core.registry import Registry
from asz_core.store import NotFound, Store
from asz_core.times import bound
from asz_core.window import WindowError, WindowSpec

from .helpers import run_asz

HUGE = "1" * 5000
"""More digits than int() takes from a text (4,300)."""
NOT_ASCII = ("²", "٣", "１")
"""A superscript (isdigit, which int refuses), an Arabic-Indic and a fullwidth digit (which int takes)."""
CID = "258c7280"


@pytest.mark.parametrize("text", ["", " 1", "1 ", "-1", "+1", "1.0", "1e3", "0x10", HUGE, "1" * 19, *NOT_ASCII,
                                  "1²", None, 12, b"12", ["1"]])
def test_what_is_no_whole_number(text: Any) -> None:
    assert whole(text) is None


def test_whole_numbers_and_ids() -> None:
    assert whole("0") == 0 and whole("007") == 7 and whole("9" * 18) == 10**18 - 1
    assert whole("123", most=2) is None
    assert id_number("s12", "s") == 12 and id_number("k1", "k") == 1
    for bad in ("s0", "s012", "s", "s²", "s" + HUGE, "k12", "s-1", "s 1", 12, None):
        assert id_number(bad, "s") is None, bad


@pytest.mark.parametrize("cid", ["s" + HUGE, "k" + HUGE, "i" + HUGE, "a" + HUGE, "s²", "s1" + "²", "s" + "9" * 19])
def test_an_evaluators_citation_of_too_many_digits_is_no_id(corpus_store: Any, cid: str) -> None:
    ev = Evidence(W.build(corpus_store, CID))
    c = ev.cite(cid)
    assert c.shows == "unknown" and not ev.observed(c)


@pytest.mark.parametrize("sid", ["s" + HUGE, "s²", "s" + "9" * 19])
def test_the_navigation_refuses_such_an_id_as_a_bad_argument(corpus_store: Any, sid: str) -> None:
    w = W.build(corpus_store, CID)
    nav = N.Navigator(w, corpus_store, budget=10**9, adapter=Registry().runtime(w.conv.runtime))
    for tool, args in (("step", {"id": sid}), ("talk", {"id": "k" + sid[1:]})):
        a = json.loads(nav.call(tool, args))
        assert "error" in a and ("looks like" in a["error"] or "at most" in a["error"]), (tool, a)


@pytest.mark.parametrize("spec", ["k" + HUGE, f"k1..k{HUGE}", "k²"])
def test_a_window_of_such_a_talk_id_is_a_clear_error(spec: str) -> None:
    with pytest.raises(WindowError):
        WindowSpec.parse(spec)


@pytest.mark.parametrize("head", ["r" + HUGE, HUGE, "r²", "²"])
def test_a_head_of_such_digits_is_no_round(corpus_store: Any, head: str) -> None:
    with pytest.raises(NotFound):
        corpus_store.round(CID, head)


def test_a_bound_of_such_digits_is_a_clear_error_or_the_calendars_end() -> None:
    from asz_core.errors import AszError

    for text in (HUGE + "d", "²d", "²²²²-01-01"):
        with pytest.raises(AszError):
            bound(text, None)


def test_the_commands_take_such_numbers_without_a_traceback(corpus_store_copy: Store, tmp_path: Path) -> None:
    home = corpus_store_copy.path.parent
    for env in ({"COLUMNS": "²"}, {"COLUMNS": HUGE}, {"ASZ_PROCESSES": HUGE}, {"ASZ_PROCESSES": "²"}):
        r = run_asz("ledger", home=home, **env)
        assert r.returncode == 0 and "Traceback" not in r.stderr, (env, r.stderr[-800:])
        r = run_asz("conversations", home=home, **env)
        assert r.returncode == 0 and "Traceback" not in r.stderr, (env, r.stderr[-800:])
        r = run_asz("collect", str(Path(__file__).resolve().parents[2] / "examples"), home=tmp_path / "new", **env)
        assert r.returncode == 0 and "Traceback" not in r.stderr, (env, r.stderr[-800:])
    for args in (["conversations", "-n", HUGE], ["conversations", "-n", "²"], ["ledger", CID, "--head", "r" + HUGE],
                 ["ledger", CID, "--head", "r²"], ["ledger", "--since", HUGE + "d"], ["show", CID, "--talk", "k" + HUGE],
                 ["judge", CID, "--window", "k1..k" + HUGE, "--evaluator", "scripted"]):
        r = run_asz(*args, home=home)
        assert r.returncode != 0 and "Traceback" not in r.stderr and r.stderr.strip(), (args, r.stderr[-800:])


def test_a_codex_rollout_with_such_numbers_is_read_whole(tmp_path: Path) -> None:
    """An exit code of 5,000 digits in a shell's output, and a cli_version of such digits: the
    lines are read with their events (was: 'line of unexpected shape', its tool result lost)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "adapters"))
    from test_codex import collect_into, only, write
    from test_codex_order import items_first

    recs = items_first(version="0." + HUGE + ".0", tid="digits")
    out = next(r for r in recs if r["payload"].get("type") == "function_call_output")
    out["payload"]["output"] = "Exit code: " + HUGE + "\nWall time: 1 seconds"
    store = Store.open(tmp_path / "home")
    said = [str(p) for p in collect_into(store, write(tmp_path / "rollout-digits.jsonl", recs)).problems]
    assert not [p for p in said if "unexpected shape" in p or "Traceback" in p], said
    results = [s for s in only(store).steps if s.kind == "tool"]
    assert results and results[0].status == "failed", [(s.kind, s.status) for s in results]


def test_a_run_file_citing_such_steps_renders_its_page(tmp_path: Path) -> None:
    """report.html of a run whose close.json (a file on disk, read back as data) cites ``s²`` and a
    step of 5,000 digits: the page is made, those citations simply show no step."""
    import orjson

    from asz_core.collect import collect
    from asz_core.judge import report_html, runner

    root = Path(__file__).resolve().parents[2]
    store = Store.open(tmp_path / "home")
    collect([root / "examples" / "claude-code"], store)
    res = runner.judge(runner.JudgeOptions("5e1f0c2a", evaluator=f"scripted:{root / 'examples' / 'scripted-5e1f0c2a.yaml'}"),
                       store=store)
    close = res.path / "close.json"
    d = orjson.loads(close.read_bytes())
    crit = d["statement"]["targets"][0]["criteria"][0]
    crit["citations"] = [*crit.get("citations", []), "s²", "s" + HUGE, "s" + "9" * 19]
    close.write_bytes(orjson.dumps(d))
    m = report_html.model(res.path, store)
    assert "s²" not in m["steps"] and all(len(k) < 20 for k in m["steps"])


@pytest.mark.parametrize("length", [b"\xb2", b"1" * 5000])
def test_an_http_source_whose_content_length_is_no_number_is_saved(length: bytes) -> None:
    """A server's Content-Length of ``²`` (one Latin-1 byte, which http.client reads as text) or of
    5,000 digits: the source is saved, its size read from what came."""
    import socket
    import threading

    from asz_core.judge import config as configs
    from asz_core.judge import sources

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)

    def answer() -> None:
        conn, _ = srv.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " + length
                         + b"\r\nConnection: close\r\n\r\nRoot cause: rounding before tax.\n")

    t = threading.Thread(target=answer, daemon=True)
    t.start()
    try:
        m = sources.take("src1", f"http://127.0.0.1:{srv.getsockname()[1]}/note.txt", configs.Config(), Registry()).manifest
    finally:
        t.join(5)
        srv.close()
    assert m.status == "saved", m.why


@pytest.mark.parametrize("error, code", [("Exit code " + HUGE, int("1" * 18)), ("Exit code ²", None),
                                         ("Error: Exit code 3", 3)])
def test_the_recorders_execution_record_reads_an_exit_code_of_any_length(error: str, code: int | None) -> None:
    """The hook's record of a failed Bash call whose error text says an exit code of 5,000 digits,
    or of a digit int() refuses, or whose duration is no finite number: written, never a traceback."""
    from asz_adapters_claudecode import hook

    for dur in (12.5, float("inf"), float("nan"), 1e308):
        data = {"session_id": "s", "tool_use_id": "t", "tool_name": "Bash", "tool_input": {"command": "make"},
                "error": error, "duration_ms": dur}
        rec = json.loads(hook._execution_line(data, None, "failed"))
        assert rec["exit_code"] == code and rec["duration_ms"] == (12 if dur == 12.5 else None), (dur, rec)


@pytest.mark.parametrize("value", ["²", HUGE, "٣", "-1"])
def test_a_process_count_that_is_no_number_asks_nothing(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``ASZ_PROCESSES`` of no number is as if unset: the load decides (asked by collect's reader and
    the ledger's split, which a small collect never reaches: asked here)."""
    from asz_core import workers

    monkeypatch.setattr(workers, "cpus", lambda: 2)
    monkeypatch.setattr(workers, "_load", lambda: 3.0)
    monkeypatch.setenv("ASZ_PROCESSES", value)
    assert workers.can_fork() and not workers.fork_pays()
