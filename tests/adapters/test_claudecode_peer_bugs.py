"""The Claude Code bug classes its peers fixed after their users reported them (issue 18), each
over a fixture in the runtime's real shape (cc_shapes.py; the corpus has none of these cases):

* a call copied into two session files (same message id and request id, other uuids: a branch
  made with Esc twice, or a copied file) is counted once, in the conversation that landed it
  first (ccusage #19, #1762 / PR #1765); a line with no request id stays its session's own;
* a /btw side question's sidechain replays the parent's messages under new request ids: those
  are the parent's calls, counted once, and the side question's own answer still counts
  (ccusage #913 / PR #1155);
* workflow sub-agents (``<session>/subagents/workflows/<run>/agent-*.jsonl`` beside a
  ``journal.jsonl``) are sub-agents of the session, started by the Workflow call that names the run;
* a uuid written twice in one file with other content: a warning names file and both lines, and
  the copy that reads (or the newer) is kept;
* an assistant line with usage but no message id is a call, with a warning;
* inline sidechain lines with no opening user line are one stream as their parentUuid chain
  shows, and a Task result whose ``agentId`` is at the top of the line starts that sub-agent.

Every expected number below is worked out by hand from the fixture, not by asz's code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from asz_core import api, report
from asz_core import conversations as convs
from asz_core.collect import collect
from asz_core.ledger import Tally, build, for_all, load_prices
from asz_core.ledger_report import all_json, ledger_json, ledger_text
from asz_core.store import Store
from cc_shapes import Session, dumps, snapshot, text, tool, usage

A = "0b1e2c3d-1111-4000-8000-00000000000a"
B = "0b1e2c3d-2222-4000-8000-00000000000b"


def tokens(t: Tally) -> dict[str, int]:
    return {k: t.tokens[k] for k in ("input", "output", "cache_read", "cache_write")}


def ledger(store: Store, name: str) -> Any:
    return build(api.load(name, store=store), load_prices())


def problems(result: Any) -> list[str]:
    return [str(p) for p in result.problems]


# --- a call copied into another session file -------------------------------------------------

def _origin(sid: str = A, prefix: str = "", hour: int = 15) -> Session:
    """The first talk: one response of two lines (text, then a tool call with the final usage), a
    tool result, a second response."""
    s = Session(sid, hour=hour)
    p = prefix
    s.raw(snapshot(f"{p}u1"))
    s.user(f"{p}u1", None, "fix the header parser")
    s.assistant(f"{p}a1", f"{p}u1", "msg_01", "req_01", text("Looking at the parser."), usage(3, 1000, 20000, 10))
    s.assistant(f"{p}a2", f"{p}a1", "msg_01", "req_01", tool("toolu_01", "Read", {"file_path": "/w/p.py"}),
                usage(3, 1000, 20000, 120, final=True))
    s.result(f"{p}r1", f"{p}a2", "toolu_01", "def parse(): ...", {"type": "text"})
    s.assistant(f"{p}a3", f"{p}r1", "msg_02", "req_02", text("Fixed."), usage(1, 200, 21000, 300, final=True))
    return s


def _write_pair(proj: Path) -> tuple[Path, Path]:
    """The origin session, and its branch: Esc twice at the second prompt wrote a new session file
    holding the history (the same message and request ids, new uuids) and a different prompt."""
    origin = _origin()
    origin.raw(snapshot("u2"))
    origin.user("u2", "a3", "now add tests")
    origin.assistant("a4", "u2", "msg_03", "req_03", text("Tests added."), usage(2, 300, 22000, 500, final=True))
    branch = _origin(B, prefix="b-", hour=16)
    branch.raw(snapshot("b-u2"))
    branch.user("b-u2", "b-a3", "add docs instead")
    branch.assistant("b-a4", "b-u2", "msg_04", "req_04", text("Docs added."), usage(2, 400, 22100, 700, final=True))
    return origin.write(proj / f"{A}.jsonl"), branch.write(proj / f"{B}.jsonl")


# msg_01 .. msg_04, each once: input 3+1+2+2, output 120+300+500+700, cache read and write likewise.
ALL_FOUR = {"input": 8, "output": 1620, "cache_read": 85100, "cache_write": 1900}


def test_a_call_copied_into_a_branch_is_counted_once_where_it_landed_first(tmp_path: Path, store: Store) -> None:
    proj = tmp_path / "proj"
    _write_pair(proj)
    r = collect([proj], store)
    assert problems(r) == []
    assert sorted(c.id for c in store.conversations()) == [A, B]  # other uuids: two conversations
    origin, branch = ledger(store, A), ledger(store, B)
    assert (origin.total.calls, origin.copies) == (3, {})
    assert (branch.total.calls, branch.copies) == (1, {A: 2})  # only its own new answer is its cost
    assert tokens(branch.total) == {"input": 2, "output": 700, "cache_read": 22100, "cache_write": 400}
    # The copies are still model calls of the branch, shown as copies of the origin's.
    conv = api.load(B, store=store)
    assert [(s.call, s.copy_of) for s in conv.model_calls()] == [
        ("msg_01:req_01", A), ("msg_02:req_02", A), ("msg_04:req_04", None)]
    # Over all conversations, every call counted once.
    everything = Tally.sum(led.total for led in for_all(store=store, prices=load_prices()))
    assert (everything.calls, tokens(everything)) == (4, ALL_FOUR)
    assert ledger_json(branch)["counted_elsewhere"] == {"copies": {A: 2}, "replays": 0}
    assert "2 calls are copies of calls conversation 0b1e2c3d landed first" in _text(ledger_text(branch))


def test_the_conversation_that_landed_it_first_counts_it(tmp_path: Path, store: Store) -> None:
    """The branch collected before its origin: then the branch landed the shared calls first."""
    proj = tmp_path / "proj"
    origin_file, branch_file = _write_pair(proj)
    collect([branch_file], store)
    collect([origin_file], store)
    assert ledger(store, B).copies == {} and ledger(store, B).total.calls == 3
    origin = ledger(store, A)
    assert (origin.total.calls, origin.copies) == (1, {B: 2})
    assert tokens(origin.total) == {"input": 2, "output": 500, "cache_read": 22000, "cache_write": 300}
    ledgers = for_all(store=store, prices=load_prices())
    assert tokens(Tally.sum(led.total for led in ledgers)) == ALL_FOUR
    assert all_json(ledgers, load_prices().file)["counted_elsewhere"] == {"copies": 2, "replays": 0}


def test_a_branch_of_a_branch_names_the_conversation_that_landed_it_first(tmp_path: Path, store: Store) -> None:
    proj = tmp_path / "proj"
    origin_file, branch_file = _write_pair(proj)
    c = "0b1e2c3d-5555-4000-8000-00000000000e"
    again = _origin(c, prefix="c-", hour=17)  # branched once more, from the branch
    again.user("c-u2", "c-a3", "add a changelog")
    again.assistant("c-a4", "c-u2", "msg_05", "req_05", text("Changelog added."), usage(2, 10, 22200, 90, final=True))
    for f in (origin_file, branch_file, again.write(proj / f"{c}.jsonl")):
        collect([f], store)
    assert ledger(store, c).copies == {A: 2} and ledger(store, c).total.calls == 1


def test_a_copy_is_fixed_at_a_head(tmp_path: Path, store: Store) -> None:
    """A later conversation landing the same call changes nothing of an earlier view."""
    proj = tmp_path / "proj"
    origin_file, branch_file = _write_pair(proj)
    collect([origin_file], store)
    before = ledger_json(ledger(store, A))
    collect([branch_file], store)
    assert ledger_json(ledger(store, A)) == before


def _gateway(sid: str, n: int, prefix: str = "") -> Session:
    """Behind a gateway that gives every response the id ``ocgo`` and no request id."""
    s = Session(sid, hour=10 + n)
    s.user(f"{prefix}g{n}", None, f"question {n}")
    s.assistant(f"{prefix}h{n}", f"{prefix}g{n}", "ocgo", None, text(f"answer {n}"), usage(5, 0, 1000 * n, 10 * n, final=True))
    return s


def test_a_line_with_no_request_id_stays_its_sessions_own(tmp_path: Path, store: Store) -> None:
    proj = tmp_path / "proj"
    _gateway(A, 1).write(proj / f"{A}.jsonl")
    _gateway(B, 2).write(proj / f"{B}.jsonl")
    collect([proj], store)
    assert (ledger(store, A).total.calls, ledger(store, B).total.calls) == (1, 1)
    assert ledger(store, A).copies == {} and ledger(store, B).copies == {}
    # A resumed session (its first line a copy of the origin's, same uuid) is one conversation
    # with two sessions: each session's "ocgo" response is its own call.
    other = tmp_path / "other"
    c, d = "0b1e2c3d-3333-4000-8000-00000000000c", "0b1e2c3d-4444-4000-8000-00000000000d"
    first = _gateway(c, 3)
    first.write(other / f"{c}.jsonl")
    resumed = Session(d)
    for o in first.lines:
        resumed.raw(dict(o, sessionId=d))
    resumed.lines += _gateway(d, 4, prefix="r").lines
    resumed.write(other / f"{d}.jsonl")
    collect([other], store)
    led = ledger(store, c)
    assert store.resolve(d) == c
    assert (led.total.calls, led.total.tokens["cache_read"], led.total.tokens["output"]) == (2, 7000, 70)


# --- /btw: a side question replays the parent's messages -----------------------------------------

BTW = "aside_question-c5e5c961a7749e08"


def _btw(proj: Path) -> None:
    main = Session(A)
    main.user("u1", None, "fix the header parser")
    main.assistant("a1", "u1", "msg_A", "req_A", text("Parser fixed."), usage(3, 500, 50000, 40, final=True))
    main.user("u2", "a1", "and the footer")
    main.assistant("a2", "u2", "msg_B", "req_B", text("Footer fixed."), usage(2, 100, 50500, 60, final=True))
    main.write(proj / f"{A}.jsonl")
    # /btw re-sends the conversation: the parent's messages again, under new request ids, then the
    # side question and its own answer.
    side = Session(A, isSidechain=True, agentId=BTW)
    side.user("s1", None, "fix the header parser")
    side.assistant("s2", "s1", "msg_A", "req_X", text("Parser fixed."), usage(3, 500, 50000, 40, final=True))
    side.user("s3", "s2", "and the footer")
    side.assistant("s4", "s3", "msg_B", "req_Y", text("Footer fixed."), usage(2, 100, 50500, 60, final=True))
    side.user("s5", "s4", "what does parse_header return?")
    side.assistant("s6", "s5", "msg_C", "req_Z", text("A dict of fields."), usage(3, 50, 50600, 80, final=True))
    side.write(proj / A / "subagents" / f"agent-{BTW}.jsonl")


def test_a_btw_side_question_counts_only_its_own_answer(tmp_path: Path, store: Store) -> None:
    proj = tmp_path / "proj"
    _btw(proj)
    assert problems(collect([proj], store)) == []
    led = ledger(store, A)
    # msg_A, msg_B (the parent's) and msg_C (the side question's): not msg_A and msg_B again.
    assert led.total.calls == 3 and led.replays == 2
    assert tokens(led.total) == {"input": 8, "output": 180, "cache_read": 151100, "cache_write": 650}
    (side,) = [s for s in led.streams if s.key == f"agent-{BTW}"]
    assert (side.kind, side.tally.calls, side.tally.tokens["cache_read"]) == ("helper", 1, 50600)
    conv = api.load(A, store=store)
    main_calls = {s.call.split(":")[0]: s.id for s in conv.model_calls() if s.stream == "m"}
    replays = {s.call: s.replay_of for s in conv.model_calls() if s.replay_of}
    assert replays == {"msg_A:req_X": main_calls["msg_A"], "msg_B:req_Y": main_calls["msg_B"]}


def test_a_side_question_collected_before_its_parent(tmp_path: Path, store: Store) -> None:
    """Landing order does not decide which copy is the call: the main stream's is."""
    proj = tmp_path / "proj"
    _btw(proj)
    collect([proj / A / "subagents" / f"agent-{BTW}.jsonl"], store)
    collect([proj / f"{A}.jsonl"], store)
    led = ledger(store, A)
    assert (led.total.calls, led.replays, led.total.tokens["cache_read"]) == (3, 2, 151100)
    (side,) = [s for s in led.streams if s.key == f"agent-{BTW}"]
    assert side.tally.calls == 1


def test_two_main_stream_calls_sharing_a_message_id_are_two_calls(tmp_path: Path, store: Store) -> None:
    """Only a child or helper stream replays: two requests of the main stream are their own."""
    s = Session(A)
    s.user("u1", None, "go")
    s.assistant("a1", "u1", "msg_X", "req_1", text("one"), usage(1, 0, 100, 5, final=True))
    s.user("u2", "a1", "again")
    s.assistant("a2", "u2", "msg_X", "req_2", text("two"), usage(1, 0, 200, 6, final=True))
    s.write(tmp_path / "proj" / f"{A}.jsonl")
    collect([tmp_path / "proj"], store)
    led = ledger(store, A)
    assert (led.total.calls, led.replays, led.total.tokens["cache_read"]) == (2, 0, 300)


# --- workflow sub-agents --------------------------------------------------------------------------

RUN, RUN2 = "wf_beab96d7-9e5", "wf_c431fb2c-82d"


def _workflow(proj: Path, with_run_id: bool = True) -> Path:
    home = proj / A
    main = Session(A, version="2.1.285")
    main.user("u1", None, "run the fix-batches workflow")
    main.assistant("a1", "u1", "msg_1", "req_1", tool("toolu_wf", "Workflow", {"script": "export const meta = {}"}),
                   usage(3, 900, 30000, 50, final=True))
    launched = {"status": "async_launched", "taskId": "wjlebnp6s", "taskType": "local_workflow"}
    if with_run_id:
        launched |= {"runId": RUN, "transcriptDir": f"{home}/subagents/workflows/{RUN}/"}
    main.result("r1", "a1", "toolu_wf", f"Workflow launched in background. Task ID: wjlebnp6s\nTranscript dir: {home}/subagents/"
                f"workflows/{RUN}/", launched)
    main.assistant("a2", "r1", "msg_2", "req_2", text("Started the workflow."), usage(1, 100, 30900, 20, final=True))
    main.user("u2", "a2", "<task-notification>\n<task-id>wjlebnp6s</task-id>\n<status>completed</status>\n</task-notification>")
    main.assistant("a3", "u2", "msg_3", "req_3", text("The workflow finished."), usage(1, 50, 31000, 30, final=True))
    main.write(proj / f"{A}.jsonl")
    run = home / "subagents" / "workflows" / RUN
    journal = [{"type": "launched"}]
    for n, aid in enumerate(("ab8437c79171a6c88", "ab88cdffb8d2f3b16"), 1):
        agent = Session(f"{A}#agent-{aid}", version="2.1.285", isSidechain=True, agentId=aid)
        agent.user(f"w{n}u", None, f"Fix batch {n} of the lint errors.")
        agent.assistant(f"w{n}a", f"w{n}u", f"msg_w{n}", f"req_w{n}", text(f"FIXED batch {n}"), usage(2, 4000, 9000, 200 * n, final=True))
        agent.write(run / f"agent-{aid}.jsonl")
        (run / f"agent-{aid}.meta.json").write_text(dumps({"agentType": "workflow-subagent",
                                                                 "description": f"batch {n}", "workflowPhase": "Fix batches"}))
        journal.append({"type": "started", "key": f"v2:{n:064x}", "agentId": aid, "label": f"batch {n}", "phase": "Fix batches"})
    journal += [{"type": "result", "key": f"v2:{n:064x}", "agentId": aid, "result": f"FIXED batch {n}"}
                for n, aid in enumerate(("ab8437c79171a6c88", "ab88cdffb8d2f3b16"), 1)]
    (run / "journal.jsonl").write_text("".join(dumps(o) + "\n" for o in journal))
    # A second run whose launch the record does not show: its agent still belongs to the session.
    lone = Session(f"{A}#agent-a0db657d1e2f3a4b5", version="2.1.285", isSidechain=True, agentId="a0db657d1e2f3a4b5")
    lone.user("l1", None, "Verify the diagnosis.")
    lone.assistant("l2", "l1", "msg_l", "req_l", text("Confirmed."), usage(1, 10, 500, 7, final=True))
    lone.write(home / "subagents" / "workflows" / RUN2 / "agent-a0db657d1e2f3a4b5.jsonl")
    (home / "subagents" / "workflows" / RUN2 / "journal.jsonl").write_text('{"type":"launched"}\n')
    return run


def test_workflow_agents_are_sub_agents_of_the_session(tmp_path: Path, store: Store) -> None:
    proj = tmp_path / "proj"
    _workflow(proj)
    r = collect([proj], store)
    assert problems(r) == []  # the journals are read, not skipped with a warning
    assert [c.id for c in store.conversations()] == [A]
    conv = api.load(A, store=store)
    (wf_step,) = [s for s in conv.steps if s.tool_id == "toolu_wf"]
    assert wf_step.kind == "agent_call"
    streams = {s.key: s for s in conv.streams if s.key != "main"}
    assert set(streams) == {"agent-ab8437c79171a6c88", "agent-ab88cdffb8d2f3b16", "agent-a0db657d1e2f3a4b5"}
    for key in ("agent-ab8437c79171a6c88", "agent-ab88cdffb8d2f3b16"):
        assert (streams[key].kind, streams[key].started_by, streams[key].unattributed) == ("child", (wf_step.id,), None)
    assert streams["agent-a0db657d1e2f3a4b5"].unattributed == "no starting step"
    led = build(conv, load_prices())
    (talk,) = [t for t in led.talks if t.id == wf_step.talk]
    assert talk.with_subagents.calls == talk.own.calls + 2
    assert led.total.calls == 6 and led.subagents.calls == 3 and led.unattributed.calls == 1
    assert tokens(led.total) == {"input": 10, "output": 707, "cache_read": 110400, "cache_write": 9060}
    # The journal lines are kept whole, in the session's conversation.
    kinds = sorted(x.kind for x in store.records(A, 1) if x.kind.startswith("workflow-journal"))
    assert kinds == ["workflow-journal/launched"] * 2 + ["workflow-journal/result"] * 2 + ["workflow-journal/started"] * 2
    assert collect([proj], store).records_published == 0


def test_a_workflow_run_the_record_does_not_name_is_unattributed(tmp_path: Path, store: Store) -> None:
    proj = tmp_path / "proj"
    _workflow(proj, with_run_id=False)
    collect([proj], store)
    conv = api.load(A, store=store)
    assert {s.key: s.unattributed for s in conv.streams if s.key != "main"} == {
        "agent-ab8437c79171a6c88": "no starting step", "agent-ab88cdffb8d2f3b16": "no starting step",
        "agent-a0db657d1e2f3a4b5": "no starting step"}


def test_a_workflow_agent_outside_its_session_folder_joins_its_session(tmp_path: Path, store: Store) -> None:
    """Copied out of its folder, the file's own ``<session>#agent-<id>`` still names the session."""
    proj = tmp_path / "proj"
    run = _workflow(proj)
    collect([proj / f"{A}.jsonl"], store)
    export = tmp_path / "export" / "agent-ab8437c79171a6c88.jsonl"
    export.parent.mkdir()
    export.write_bytes((run / "agent-ab8437c79171a6c88.jsonl").read_bytes())
    collect([export], store)
    assert [c.id for c in store.conversations()] == [A]
    assert ledger(store, A).total.calls == 4


# --- a uuid written twice in one file -----------------------------------------------------------

def _two_talks(s: Session) -> None:
    s.user("u1", None, "first question")
    s.assistant("a1", "u1", "msg_1", "req_1", text("first answer"), usage(3, 0, 100, 11, final=True))


BROKEN = {"type": "assistant", "uuid": "X", "sessionId": A, "parentUuid": "a1", "message": "cut off by a crash"}


def _valid_x(s: Session, out: int) -> dict[str, Any]:
    return s.assistant("X", "a1", "msg_2", "req_2", text("second answer"), usage(2, 0, 200, out, final=True))


def test_a_broken_line_then_a_valid_one_with_its_uuid(tmp_path: Path, store: Store) -> None:
    s = Session(A)
    _two_talks(s)
    s.raw(dict(BROKEN))
    _valid_x(s, 40)
    f = s.write(tmp_path / "proj" / f"{A}.jsonl")
    r = collect([f], store)
    got = problems(r)
    assert f"{f}:3: assistant line of unexpected shape" in got[0]
    assert got[1] == f"{f}:4: X is written twice in this file with other content (lines 3 and 4); kept line 4, the newer"
    assert len(got) == 2
    led = ledger(store, A)
    assert (led.total.calls, led.total.tokens["output"]) == (2, 51)
    assert collect([f], store).records_published == 0 and problems(collect([f], store)) == []


def test_a_valid_line_then_a_broken_one_with_its_uuid(tmp_path: Path, store: Store) -> None:
    s = Session(A)
    _two_talks(s)
    _valid_x(s, 40)
    s.raw(dict(BROKEN))
    f = s.write(tmp_path / "proj" / f"{A}.jsonl")
    got = problems(collect([f], store))
    assert got[-1] == f"{f}:4: X is written twice in this file with other content (lines 3 and 4); kept line 3: this one reads as nothing"
    assert (ledger(store, A).total.calls, ledger(store, A).total.tokens["output"]) == (2, 51)


def test_two_valid_copies_keep_the_newer_also_across_collects(tmp_path: Path, store: Store) -> None:
    s = Session(A)
    _two_talks(s)
    _valid_x(s, 5)  # written with the streaming placeholder...
    f = s.write(tmp_path / "proj" / f"{A}.jsonl")
    collect([f], store)
    assert ledger(store, A).total.tokens["output"] == 16
    with open(f, "a") as fh:  # ...and again, with its final usage, after that collect
        fh.write(dumps(dict(s.lines[-1], message=dict(s.lines[-1]["message"], usage=usage(2, 0, 200, 400, final=True)))) + "\n")
    r = collect([f], store)
    assert problems(r) == [f"{f}:4: X is written twice in this file with other content (lines 3 and 4); kept line 4, the newer"]
    led = ledger(store, A)
    assert (led.total.calls, led.total.tokens["output"]) == (2, 411)
    assert [x.version for x in store.records(A, 2) if x.key == "X"] == [2]


def test_a_copy_in_another_file_is_the_same_record_without_a_warning(tmp_path: Path, store: Store) -> None:
    """A resumed session's copies carry a new sessionId and version: the same records, no warning."""
    s = Session(A)
    _two_talks(s)
    _valid_x(s, 40)
    s.write(tmp_path / "proj" / f"{A}.jsonl")
    resumed = Session(B, version="2.1.40")
    for o in s.lines:
        resumed.raw(dict(o, sessionId=B, version="2.1.40"))
    resumed.user("u3", "X", "a third question")
    resumed.write(tmp_path / "proj" / f"{B}.jsonl")
    r = collect([tmp_path / "proj"], store)
    assert problems(r) == []
    assert store.resolve(B) == A and ledger(store, A).total.calls == 2


def test_a_resume_collected_while_its_copies_are_written_is_still_the_same_records(tmp_path: Path, store: Store) -> None:
    """Read on from a cursor, every uuid counts as met in the file; a resume's copies (another
    file's records, other bytes) are still the same records, not newer copies."""
    s = Session(A)
    _two_talks(s)
    _valid_x(s, 40)
    s.write(tmp_path / "proj" / f"{A}.jsonl")
    collect([tmp_path / "proj" / f"{A}.jsonl"], store)
    resumed = Session(B, version="2.1.40")
    for o in s.lines:
        resumed.raw(dict(o, sessionId=B, version="2.1.40"))
    f = tmp_path / "proj" / f"{B}.jsonl"
    f.write_text(dumps(resumed.lines[0]) + "\n")  # Claude Code is still writing it
    collect([f], store)
    resumed.user("u3", "X", "a third question")
    resumed.write(f)
    r = collect([f], store)
    assert problems(r) == [] and r.records_published == 1
    assert [x.version for x in store.records(A, 9) if x.key in ("u1", "a1", "X")] == [1, 1, 1]


def test_many_rewrites_in_one_file_are_named_then_counted(tmp_path: Path, store: Store) -> None:
    s = Session(A)
    s.user("u1", None, "go")
    for i in range(8):
        s.assistant(f"x{i}", "u1", f"msg_{i}", f"req_{i}", text(f"answer {i}"), usage(1, 0, 10, 1, final=True))
    for i in range(8):
        s.assistant(f"x{i}", "u1", f"msg_{i}", f"req_{i}", text(f"answer {i}"), usage(1, 0, 10, 2, final=True))
    f = s.write(tmp_path / "proj" / f"{A}.jsonl")
    got = problems(collect([f], store))
    assert len(got) == 6 and all(f"{f}:{10 + i}: x{i} is written twice" in got[i] for i in range(5))
    assert got[5] == f"{f}:0: 3 more records are written twice in this file with other content; each newer copy that reads was kept"
    assert ledger(store, A).total.tokens["output"] == 16


# --- an assistant line with usage but no message id -----------------------------------------------

def test_usage_without_a_message_id_is_a_call(tmp_path: Path, store: Store) -> None:
    s = Session(A)
    s.user("u1", None, "go")
    s.assistant("a1", "u1", None, None, text("an answer from a proxy"), usage(4, 10, 300, 25, final=True),
                model="claude-sonnet-4-5-20250929")
    s.assistant("a2", "a1", "4f0c1a52-5d1e-4a8b-9c6f-1e2d3c4b5a69", None, text("No response requested."),
                {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
                model="<synthetic>")
    f = s.write(tmp_path / "proj" / f"{A}.jsonl")
    r = collect([f], store)
    assert problems(r) == [f"{f}:2: assistant line with usage but no message id; counted as a model call of its own (this line)"]
    led = ledger(store, A)
    assert (led.total.calls, tokens(led.total)) == (1, {"input": 4, "output": 25, "cache_read": 300, "cache_write": 10})
    conv = api.load(A, store=store)
    assert [s.call for s in conv.model_calls()] == ["line:a1"]
    assert [s.notice for s in conv.steps if s.kind == "notice"] == ["synthetic"]


# --- inline sidechains: no opening line; agentId at the top of a Task result ------------------------

def test_inline_sidechain_lines_with_no_opening_line_are_one_stream(tmp_path: Path, store: Store) -> None:
    """2.0.27: a whole inline block (opening line and all) for one Task, then, for a second Task,
    a block whose opening user line is missing. Its lines chain by parentUuid, so they are one
    stream of their own (not the earlier block's), and its two-line response is one call in it."""
    s = Session(A, version="2.0.27", cwd="/Users/dev/app")
    side = {"isSidechain": True}
    s.user("u1", None, "look into the build failure")
    s.assistant("a0", "u1", "msg_0", "req_0", tool("T0", "Task", {"description": "d", "prompt": "Find the failing step",
                                                                    "subagent_type": "general-purpose"}), usage(3, 0, 5000, 80))
    s.user("o1", None, "Find the failing step", **side)
    s.assistant("o2", "o1", "msg_O", "req_O", text("Step 3."), usage(1, 0, 100, 9), **side)
    s.result("r0", "a0", "T0", "Step 3.", {"content": [text("Step 3.")], "totalTokens": 110})
    s.assistant("a1", "r0", "msg_1", "req_1", tool("T1", "Task", {"description": "d", "prompt": "Why does step 3 fail?",
                                                                    "subagent_type": "general-purpose"}), usage(3, 0, 5200, 80))
    s.assistant("s1", "a1", "msg_S1", "req_S1", text("Checking the CI config."), usage(4, 0, 3000, 5), **side)
    s.assistant("s2", "s1", "msg_S1", "req_S1", tool("toolu_s", "Read", {"file_path": "/w/ci.yml"}), usage(4, 0, 3000, 90), **side)
    s.result("s3", "s2", "toolu_s", "steps: ...", {"type": "text"}, **side)
    s.assistant("s4", "s3", "msg_S2", "req_S2", text("The lint step fails."), usage(2, 0, 3200, 40), **side)
    s.result("r1", "a1", "T1", "The lint step fails.", {"content": [text("The lint step fails.")], "totalTokens": 3242})
    s.assistant("a2", "r1", "msg_2", "req_2", text("The lint step fails."), usage(1, 0, 5100, 30))
    s.write(tmp_path / "proj" / f"{A}.jsonl")
    assert problems(collect([tmp_path / "proj"], store)) == []
    conv = api.load(A, store=store)
    streams = {st.key: st for st in conv.streams if st.key != "main"}
    assert set(streams) == {"side-o1", "side-s1"}
    sid = streams["side-s1"].id
    assert sorted((s.kind, s.call or s.tool_id) for s in conv.steps if s.stream == sid and s.kind in ("model_call", "tool")) == [
        ("model_call", "msg_S1:req_S1"), ("model_call", "msg_S2:req_S2"), ("tool", "toolu_s")]
    assert streams["side-s1"].unattributed == "no starting step"  # no prompt line: no text to match
    (t0,) = [x.id for x in conv.steps if x.tool_id == "T0"]
    assert (streams["side-o1"].started_by, streams["side-o1"].unattributed) == ((t0,), None)
    assert len(conv.model_calls()) == 6


def test_a_task_result_with_its_agent_id_at_the_top_of_the_line(tmp_path: Path, store: Store) -> None:
    s = Session(A, version="2.0.30", cwd="/Users/dev/app")
    s.user("u1", None, "review the diff")
    s.assistant("a1", "u1", "msg_1", "req_1", tool("T1", "Task", {"description": "review", "prompt": "Review the diff",
                                                                    "subagent_type": "code-reviewer"}), usage(3, 0, 5000, 80))
    s.result("r1", "a1", "T1", "Looks good.", {"status": "completed", "prompt": "Review the diff",
                                               "content": [text("Looks good.")], "totalTokens": 8120,
                                               "usage": usage(2, 20, 8000, 98)}, agentId="f7fd82bf")
    s.assistant("a2", "r1", "msg_2", "req_2", text("The review found nothing."), usage(1, 0, 5100, 30))
    s.write(tmp_path / "proj" / f"{A}.jsonl")
    agent = Session(A, version="2.0.30", cwd="/Users/dev/app", isSidechain=True, agentId="f7fd82bf")
    agent.user("g1", None, "Review the diff")
    agent.assistant("g2", "g1", "msg_g", "req_g", text("Looks good."), usage(2, 20, 8000, 4))
    agent.write(tmp_path / "proj" / "agent-f7fd82bf.jsonl")
    assert problems(collect([tmp_path / "proj"], store)) == []
    conv = api.load(A, store=store)
    (st,) = [x for x in conv.streams if x.key == "agent-f7fd82bf"]
    (task,) = [x for x in conv.steps if x.tool_id == "T1"]
    assert (st.started_by, st.unattributed, task.kind) == ((task.id,), None, "agent_call")
    # The Task result's usage is the final usage of the sub-agent's last call: its output is known.
    (last,) = [c for c in conv.model_calls() if c.call == "msg_g:req_g"]
    assert last.usage.output == 98


def _text(group: Any) -> str:
    import io

    from rich.console import Console

    console = Console(width=200, file=io.StringIO())
    console.print(group)
    return console.file.getvalue()


# --- asz show: the calls counted elsewhere, by talk ---------------------------------------------------

AGENT = "a7f3e9c2b1d04e5f6"


def _replaying_subagent(proj: Path) -> None:
    """A sub-agent started by a Task call whose first call replays one of the parent's."""
    main = Session(A)
    main.user("u1", None, "fix the header parser")
    main.assistant("a1", "u1", "msg_A", "req_A", text("Looking."), usage(3, 500, 50000, 40, final=True))
    main.assistant("a2", "a1", "msg_T", "req_T", tool("toolu_T", "Task", {"prompt": "fix it", "description": "fix"}),
                   usage(1, 10, 50100, 20, final=True))
    main.result("r1", "a2", "toolu_T", "fixed", {"agentId": AGENT, "status": "completed"})
    main.assistant("a3", "r1", "msg_D", "req_D", text("Done."), usage(1, 10, 50200, 5, final=True))
    main.write(proj / f"{A}.jsonl")
    sub = Session(A, isSidechain=True, agentId=AGENT)
    sub.user("s1", None, "fix it")
    sub.assistant("s2", "s1", "msg_A", "req_X", text("Looking."), usage(3, 500, 50000, 40, final=True))
    sub.assistant("s3", "s2", "msg_C", "req_Z", text("Fixed."), usage(3, 50, 50600, 80, final=True))
    sub.write(proj / A / "subagents" / f"agent-{AGENT}.jsonl")


def _counted(d: dict[str, Any]) -> tuple[Any, ...]:
    """(calls here, calls counted elsewhere) of the totals, and of each talk: own, with its sub-agents."""
    def pair(u: Any) -> Any:
        return u and (u["model_calls"], u["counted_elsewhere"])
    return pair(d["totals"]), [(t["id"], pair(t["own"]), pair(t["with_subagents"])) for t in d["talks"]]


@pytest.mark.parametrize("shape,conversation,want", [
    (_write_pair, B, ((1, 2), [("k1", (0, 2), (0, 2)), ("k2", (1, 0), (1, 0))])),  # copies of the origin's calls
    (_btw, A, ((3, 2), [("k1", (1, 0), (1, 0)), ("k2", (1, 0), (1, 0)), ("k3", (1, 2), None)])),  # a side question's replays
    (_replaying_subagent, A, ((4, 1), [("k1", (3, 0), (4, 1)), ("k2", (1, 1), None)])),  # in a sub-agent k1 started
])
def test_show_says_each_talks_calls_counted_elsewhere(tmp_path: Path, store: Store, shape, conversation, want) -> None:
    proj = tmp_path / "proj"
    shape(proj)
    assert problems(collect([proj], store)) == []
    s = convs.show(conversation, store=store)
    d = report.show_json(s.conversation, s.ledger)
    assert _counted(d) == want
    assert d["totals"]["tokens"] == tokens(s.ledger.total)
