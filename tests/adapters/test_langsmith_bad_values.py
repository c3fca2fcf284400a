"""LangSmith: a token count of 2**64, -1, 1e308, "12" or true in the usage an llm run is read
from (usage_metadata, the flat API counts, llm_output's provider usage), and a start time in
year 0, 10000, garbage or past any date, each read as unknown (as the spec says) and said once
per kind and file, naming the run's first line (records.said_bad_values). LangSmith's times may
be epoch numbers, so a number there is a time unless it is out of range. The runs are made here
(one a line); the corpus is read whole."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from asz_core.collect import collect
from asz_core.store import Store

from test_langsmith import LS, conversations, read_all, token_totals

TAIL = "read as unknown (further such lines of this file are not warned about)"
TRACE = "5a1c2d8e-0000-4000-8000-0000000000a0"
BAD_COUNTS = [2**64, -1, 1e308, "12", True]
SHOWN = {2**64: "1.8446744073709552e+19", -1: "-1", 1e308: "1e+308", "12": '"12"', True: "true"}


def run(n: int, run_type: str = "llm", **extra: Any) -> dict[str, Any]:
    rid = TRACE if n == 0 else f"5a1c2d8e-0000-4000-8000-00000000000{n}"
    dotted = f"20250301T120000000000Z{TRACE}" + (f".20250301T12000{n}000000Z{rid}" if n else "")
    r = {"id": rid, "trace_id": TRACE, "name": "ChatOpenAI" if run_type == "llm" else "Agent", "run_type": run_type,
         "dotted_order": dotted, "start_time": f"2025-03-01T12:00:0{n}", "end_time": f"2025-03-01T12:00:0{n}.5",
         "inputs": {"input": "summarise the log"}, "outputs": {"output": f"answer {n}"}}
    if n:
        r["parent_run_id"] = TRACE
    r.update(extra)
    return r


def usage(out: Any = 20) -> dict[str, Any]:
    return {"input_tokens": 1000, "output_tokens": out, "total_tokens": 1020, "input_token_details": {"cache_read": 200}}


def write(path: Path, runs: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in runs))  # run n on line n + 1
    return path


def llm(n: int, um: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return run(n, outputs={"output": f"answer {n}", "usage_metadata": um}, **extra)


@pytest.mark.parametrize("bad", BAD_COUNTS)
def test_a_count_that_is_no_count_is_said_once_per_file(bad, tmp_path: Path, store: Store) -> None:
    path = write(tmp_path / "runs.jsonl", [run(0, "chain"), llm(1, usage()), llm(2, usage(bad)), llm(3, usage(bad))])
    said = [str(p) for p in collect([path], store, runtime="langsmith").problems]
    assert said == [f"{path}:3: a token count that is no count (usage_metadata.output_tokens: {SHOWN[bad]}); {TAIL}"]
    (conv,) = conversations(store).values()
    # Each line's other counts stand: 1000 input of which 200 read from the cache; 2 outputs unknown.
    assert token_totals(conv) == {"input": (2400, 0), "output": (20, 2), "cache_read": (600, 0), "cache_write": (0, 0)}


def test_a_whole_float_is_a_count_here(tmp_path: Path, store: Store) -> None:
    """The JS SDK may write 20.0: this runtime reads a whole float as the count it is."""
    path = write(tmp_path / "runs.jsonl", [run(0, "chain"), llm(1, usage(20.0))])
    assert list(collect([path], store, runtime="langsmith").problems) == []


@pytest.mark.parametrize(("where", "fields", "name"), [
    ("cache", {"outputs": {"output": "a", "usage_metadata": {"input_tokens": 10, "output_tokens": 1,
                                                             "input_token_details": {"cache_read": 2, "ephemeral_5m_input_tokens": -3}}}},
     "usage_metadata.input_token_details.ephemeral_5m_input_tokens: -3"),
    ("flat", {"prompt_tokens": 10, "completion_tokens": -4}, "completion_tokens: -4"),
    ("provider", {"outputs": {"generations": [[{"text": "a"}]], "llm_output": {"token_usage": {"prompt_tokens": 10,
                                                                                                 "completion_tokens": "9"}}}},
     'llm_output.token_usage.completion_tokens: "9"'),
])
def test_each_place_usage_is_read_from_is_looked_at(where: str, fields: dict, name: str, tmp_path: Path, store: Store) -> None:
    path = write(tmp_path / f"{where}.jsonl", [run(0, "chain"), run(1, **fields)])
    said = [str(p) for p in collect([path], store, runtime="langsmith").problems]
    assert said == [f"{path}:2: a token count that is no count ({name}); {TAIL}"]


def test_counts_of_runs_that_are_not_model_calls_are_not_read(tmp_path: Path, store: Store) -> None:
    """A chain's counts are the backend's roll-up, never read as usage: nothing said of them."""
    path = write(tmp_path / "runs.jsonl", [run(0, "chain", prompt_tokens=-1, usage_metadata=usage(-1)), llm(1, usage())])
    assert list(collect([path], store, runtime="langsmith").problems) == []


@pytest.mark.parametrize("bad", ["0000-01-01T00:00:00Z", "10000-01-01T00:00:00Z", "garbage", 10**18,
                                 "0001-01-01T00:00:00+05:00"])
def test_a_start_time_that_is_no_time_is_said_once_per_file(bad, tmp_path: Path, store: Store) -> None:
    path = write(tmp_path / "runs.jsonl", [run(0, "chain"), llm(1, usage()), llm(2, usage(), start_time=bad),
                                           llm(3, usage(), start_time=bad)])
    said = [str(p) for p in collect([path], store, runtime="langsmith").problems]
    assert said == [f"{path}:3: a timestamp that is no time (start_time: {json.dumps(bad)}); {TAIL}"]
    entries, _, _ = read_all(path)
    # The run's time is its dotted_order's then: 12:00:02 for run 2.
    assert [e.ts for e in entries] == [f"2025-03-01T12:00:0{n}.000000Z" for n in range(4)]
    (conv,) = conversations(store).values()
    assert len(conv.model_calls()) == 3


def test_a_dotted_order_stamp_that_is_no_time_is_said_when_it_is_the_time(tmp_path: Path, store: Store) -> None:
    r = llm(1, usage())
    del r["start_time"]
    r["dotted_order"] = f"20250301T120000000000Z{TRACE}.20251301T120001000000Z{r['id']}"  # month 13
    path = write(tmp_path / "runs.jsonl", [run(0, "chain"), r])
    said = [str(p) for p in collect([path], store, runtime="langsmith").problems]
    assert said == [f'{path}:2: a timestamp that is no time (dotted_order: "20251301T120001000000"); {TAIL}']


def test_good_and_absent_values_say_nothing(tmp_path: Path, store: Store) -> None:
    epoch_ms = llm(2, usage(), start_time=1740830402000)  # the JS SDK's epoch milliseconds
    no_time = llm(3, {"input_tokens": 10, "output_tokens": None})
    del no_time["start_time"]
    path = write(tmp_path / "runs.jsonl", [run(0, "chain"), llm(1, usage()), epoch_ms, no_time])
    assert list(collect([path], store, runtime="langsmith").problems) == []


def test_a_file_read_again_does_not_say_it_again(tmp_path: Path, store: Store) -> None:
    runs = [run(0, "chain"), llm(1, usage(-1))]
    path = write(tmp_path / "runs.jsonl", runs)
    assert len(collect([path], store, runtime="langsmith").problems) == 1
    write(path, [*runs, llm(2, usage(-1))])  # read again whole: a LangSmith file is
    assert list(collect([path], store, runtime="langsmith").problems) == []


def test_the_corpus_gives_no_new_warning(tmp_path: Path) -> None:
    """Every file of the LangSmith corpus, each read as LangSmith: those it detects say nothing;
    the others (a markdown copy, the coding-agent contract files) say only why they are no runs."""
    if not LS.is_dir():
        pytest.skip(f"LangSmith corpus not found under {LS}")
    files = sorted(p for p in LS.rglob("*") if p.is_file() and p.name != "MANIFEST.tsv")
    assert len(files) == 13
    said = []
    for n, f in enumerate(files):
        s = Store.open(tmp_path / f"home{n}")
        said += [str(p) for p in collect([f], s, runtime="langsmith").problems]
        s.close()
    assert len(said) == 5 and all(": not a LangSmith run (keys:" in p or "not valid JSON" in p for p in said), said
    s = Store.open(tmp_path / "all")
    assert list(collect([LS], s).problems) == []
    s.close()
