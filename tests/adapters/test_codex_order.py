"""Codex rollouts written in either order (issue 32): up to 0.60.x a request's token_count comes
before its output items, from 0.123.0 on after them. Each order is a made rollout here, shaped
as that release's own code writes it (the corpus has real files of the newer order only); the
attribution is checked the way asz uses it: the model call before a tool step is the call that
asked for it (docs/efficiency.md), and each call carries its own request's count.

Also here: usage values that are not numbers (a redacted rollout), warned once per file, and a
count that cannot be told from a repeat of the last one never taken for a request.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from asz_core.assembly import Conversation, Step
from asz_core.records import Cursor, Problem
from asz_core.store import Store

from asz_adapters_codex.adapter import COUNT_FIRST, ITEMS_FIRST, READ_ORDER, CodexAdapter, order_of

from test_codex import collect_into, ev, item, meta, only, rec, write

T = "2026-05-02T09:00:0"
REQUESTS = [(1000, 200, 50), (1400, 1000, 120), (1700, 1300, 30)]
"""(input, cached, output) of the turn's three requests."""


def count(t: str, n: int, last: tuple[int, int, int] | None = None, total: tuple[int, int, int] | None = None,
          values: object = None) -> dict:
    """The token_count of request ``n`` (1-based): its own usage and the running total.
    ``values`` replaces every number (a redacted rollout)."""
    inp, cached, out = last or REQUESTS[n - 1]
    tot = total or tuple(sum(r[i] for r in REQUESTS[:n]) for i in range(3))

    def usage(i: int, c: int, o: int) -> dict:
        u = {"input_tokens": i, "cached_input_tokens": c, "output_tokens": o, "reasoning_output_tokens": 0, "total_tokens": i + o}
        return u if values is None else dict.fromkeys(u, values)

    return ev(t, "token_count", info={"total_token_usage": usage(*tot), "last_token_usage": usage(inp, cached, out),
                                      "model_context_window": 272000}, rate_limits=None)


def shell(t: str, cid: str, cmd: str) -> dict:
    return item(t, "function_call", name="shell", arguments=f'{{"command":["bash","-lc","{cmd}"]}}', call_id=cid)


def shell_out(t: str, cid: str, code: int = 0) -> dict:
    return item(t, "function_call_output", call_id=cid, output=f'{{"output":"","metadata":{{"exit_code":{code}}}}}')


def patch(t: str, cid: str) -> dict:
    return item(t, "custom_tool_call", name="apply_patch", call_id=cid, status="completed",
                input="*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n*** End Patch")


def patch_out(t: str, cid: str) -> dict:
    return item(t, "custom_tool_call_output", call_id=cid, output='{"output":"Success.","metadata":{"exit_code":0}}')


def said(t: str, text: str) -> dict:
    return ev(t, "agent_message", message=text)


def written(t: str, text: str) -> dict:
    return item(t, "message", role="assistant", content=[{"type": "output_text", "text": text}])


def reasoning(t: str) -> dict:
    return item(t, "reasoning", summary=[], content=None, encrypted_content="gAAAA")


def head(version: str | None, tid: str) -> list[dict]:
    m = meta(f"{T}0.000Z", tid)
    if version is None:
        del m["payload"]["cli_version"]
    else:
        m["payload"]["cli_version"] = version
    return [m, ev(f"{T}0.001Z", "task_started", turn_id="1"),
            item(f"{T}0.002Z", "message", role="user", content=[{"type": "input_text", "text": "<environment_context/>"}]),
            ev(f"{T}0.003Z", "user_message", message="fix the bug", kind="plain")]


def count_first(version: str | None = "0.60.1", tid: str = "cf-1") -> list[dict]:
    """A turn of three requests as 0.60.x writes it: each request's turn_context and what it
    shows while streaming (reasoning, messages), its token_count at the response's end, then
    its output items, tool calls with their outputs (recorded together, after the request)."""
    ctx = {"cwd": "/w", "approval_policy": "on-request", "model": "gpt-5.1-codex", "summary": "auto"}
    return [*head(version, tid),
            rec(f"{T}0.004Z", "turn_context", ctx),
            ev(f"{T}1.000Z", "agent_reasoning", text="**Looking at the test**"),
            count(f"{T}1.100Z", 1),
            reasoning(f"{T}1.101Z"), shell(f"{T}1.101Z", "call_a", "pytest -x"), shell_out(f"{T}1.101Z", "call_a", 1),
            rec(f"{T}1.200Z", "turn_context", ctx),
            ev(f"{T}2.000Z", "agent_reasoning", text="**Patching**"),
            said(f"{T}2.100Z", "I'll patch a.py."),
            count(f"{T}2.200Z", 2),
            reasoning(f"{T}2.201Z"), written(f"{T}2.201Z", "I'll patch a.py."), patch(f"{T}2.201Z", "call_b"),
            patch_out(f"{T}2.201Z", "call_b"),
            rec(f"{T}2.300Z", "turn_context", ctx),
            said(f"{T}3.000Z", "Done: the test passes."),
            count(f"{T}3.100Z", 3),
            written(f"{T}3.101Z", "Done: the test passes."),
            ev(f"{T}3.200Z", "task_complete", turn_id="1", last_agent_message="Done: the test passes.")]


def items_first(version: str = "0.123.0", tid: str = "if-1") -> list[dict]:
    """The same turn as 0.123.0 writes it (the corpus's real files): each item as it completes,
    the request's token_count after its items, the tool outputs after the count."""
    return [*head(version, tid),
            rec(f"{T}0.004Z", "turn_context", {"cwd": "/w", "model": "gpt-5.1-codex"}),
            reasoning(f"{T}1.000Z"), shell(f"{T}1.001Z", "call_a", "pytest -x"),
            count(f"{T}1.100Z", 1),
            shell_out(f"{T}1.200Z", "call_a", 1),
            reasoning(f"{T}2.000Z"), said(f"{T}2.001Z", "I'll patch a.py."), written(f"{T}2.002Z", "I'll patch a.py."),
            patch(f"{T}2.003Z", "call_b"),
            count(f"{T}2.100Z", 2),
            patch_out(f"{T}2.200Z", "call_b"),
            reasoning(f"{T}2.900Z"),
            said(f"{T}3.000Z", "Done: the test passes."), written(f"{T}3.001Z", "Done: the test passes."),
            count(f"{T}3.100Z", 3),
            ev(f"{T}3.200Z", "task_complete", turn_id="1", last_agent_message="Done: the test passes.")]


def asked_by(conv: Conversation, step: Step) -> Step:
    """The model call that asked for a step: the last call before it in its stream."""
    before = [c for c in conv.model_calls() if c.stream == step.stream and c.seq < step.seq]
    return before[-1]


def own(call: Step) -> tuple[int | None, int | None, int | None]:
    u = call.usage
    assert u is not None
    return u.input, u.cache_read, u.output


def fresh(req: tuple[int, int, int]) -> tuple[int, int, int]:
    inp, cached, out = req
    return inp - cached, cached, out


def events_of(path: Path) -> list[dict]:
    return [e for x in CodexAdapter().read(path, Cursor()) if not isinstance(x, Problem) for e in x.events]


def check_attribution(conv: Conversation, path: Path) -> None:
    """Three calls, each with its own request's count; each tool charged to the request that
    asked for it; each message once, on its own request."""
    calls = conv.model_calls()
    assert [own(c) for c in calls] == [fresh(r) for r in REQUESTS]
    assert all(c.model == "gpt-5.1-codex" for c in calls)
    tools = {s.tool_id: s for s in conv.steps if s.kind == "tool"}
    assert list(tools) == ["call_a", "call_b"]
    assert asked_by(conv, tools["call_a"]).call == calls[0].call
    assert asked_by(conv, tools["call_b"]).call == calls[1].call
    assert tools["call_a"].status == "failed" and tools["call_b"].status == "returned"
    replies = [s for s in conv.steps if s.kind == "reply"]
    assert [(s.text, s.call) for s in replies] == [("I'll patch a.py.", calls[1].call), ("Done: the test passes.", calls[2].call)]
    # The adapter's own events say the same: each tool_use names the call that asked for it.
    by_tool = {e["id"]: e["call"] for e in events_of(path) if e["e"] == "tool_use"}
    assert by_tool == {"call_a": calls[0].call, "call_b": calls[1].call}
    talk = conv.main_talks[0]
    assert conv.step(talk.reply).text == "Done: the test passes."


# --- the order each version writes ----------------------------------------------------------

@pytest.mark.parametrize(("version", "order"), [
    ("0.60.1", COUNT_FIRST), ("0.60.0", COUNT_FIRST), ("0.46.0", COUNT_FIRST), ("0.1.2504301751", COUNT_FIRST),
    ("0.123.0", ITEMS_FIRST), ("0.146.0", ITEMS_FIRST), ("1.0.0", ITEMS_FIRST), ("v0.130.0", ITEMS_FIRST),
    ("0.61.0", READ_ORDER), ("0.106.0", READ_ORDER), ("0.63.0-alpha.2", READ_ORDER),
    (None, READ_ORDER), ("", READ_ORDER), ("dev", READ_ORDER), (60, READ_ORDER), ("0.x", READ_ORDER)])
def test_order_of_each_version(version: object, order: str) -> None:
    assert order_of(version) == order


def test_count_first_rollout_of_0_60(store: Store, tmp_path: Path) -> None:
    """The issue's case: a 0.60.x rollout, each request's count before its items. No invented
    call, usage whole, each tool on the request that asked for it."""
    path = write(tmp_path / "rollout-cf.jsonl", count_first())
    res = collect_into(store, path)
    assert not res.problems
    check_attribution(only(store), path)


def test_items_first_rollout_of_0_123(store: Store, tmp_path: Path) -> None:
    path = write(tmp_path / "rollout-if.jsonl", items_first())
    res = collect_into(store, path)
    assert not res.problems
    check_attribution(only(store), path)


def test_version_decides_when_the_file_cannot_tell(tmp_path: Path) -> None:
    """A 0.60 turn with no message shown (nothing in the file tells its order): its version
    does. Read in the newer order (what asz did, and does for a version it cannot place), the
    last request's items made a call of unknown usage: the issue's invented calls."""
    recs = [r for r in count_first() if r["payload"].get("type") != "agent_message"]
    path = write(tmp_path / "known" / "rollout.jsonl", recs)
    known = Store.open(tmp_path / "known" / "home")
    collect_into(known, path)
    conv = only(known)
    calls = conv.model_calls()
    assert [own(c) for c in calls] == [fresh(r) for r in REQUESTS]
    tools = {s.tool_id: s for s in conv.steps if s.kind == "tool"}
    assert [asked_by(conv, tools[t]).call for t in ("call_a", "call_b")] == [calls[0].call, calls[1].call]
    recs[0]["payload"]["cli_version"] = "0.61.0"
    path = write(tmp_path / "unplaced" / "rollout.jsonl", recs)
    unplaced = Store.open(tmp_path / "unplaced" / "home")
    collect_into(unplaced, path)
    calls = only(unplaced).model_calls()
    assert len(calls) == 4 and own(calls[-1]) == (None, None, None)


def test_count_first_without_a_known_version_is_read_from_the_file(store: Store, tmp_path: Path) -> None:
    """No cli_version (or one between the two known releases): the first request that shows a
    message before its count and writes it after tells the order. From there on each item goes
    to its own request; before it, a tool may be charged one request late, but no call is
    invented and the usage is whole."""
    for version, name in ((None, "none"), ("0.90.0", "gap")):
        path = write(tmp_path / name / "rollout.jsonl", count_first(version=version, tid=f"cf-{name}"))
        s = Store.open(tmp_path / name / "home")
        collect_into(s, path)
        conv = only(s)
        calls = conv.model_calls()
        assert [own(c) for c in calls] == [fresh(r) for r in REQUESTS]
        tools = {x.tool_id: x for x in conv.steps if x.kind == "tool"}
        assert asked_by(conv, tools["call_b"]).call == calls[1].call
        assert [x.call for x in conv.steps if x.kind == "reply"] == [calls[1].call, calls[2].call]


def test_items_first_file_is_not_taken_for_count_first(store: Store, tmp_path: Path) -> None:
    """A file without a version whose messages are written on both sides before the count stays
    in the newer order (the corpus's files, read without their cli_version, count the same)."""
    recs = items_first()
    del recs[0]["payload"]["cli_version"]
    path = write(tmp_path / "rollout-nov.jsonl", recs)
    collect_into(store, path)
    check_attribution(only(store), path)


@pytest.mark.parametrize("begun", ["message shown", "reasoning shown", "turn_context only"])
def test_count_first_interrupted_request_keeps_its_own_items(begun: str, store: Store, tmp_path: Path) -> None:
    """A 0.60 request interrupted before its count: what it showed and the items Codex still
    wrote (the aborted turn's dangling items) are a call of unknown usage, not the previous
    request's, however the new request showed it had begun; the previous keeps its count."""
    recs = count_first()[:9]  # request 1 whole (its count, then its items)
    recs += {"message shown": [said(f"{T}2.100Z", "I'll patch a.py.")],
             "reasoning shown": [ev(f"{T}2.000Z", "agent_reasoning", text="**Patching**")],
             "turn_context only": [rec(f"{T}1.200Z", "turn_context", {"cwd": "/w", "model": "gpt-5.1-codex"})]}[begun]
    recs += [reasoning(f"{T}2.150Z"), written(f"{T}2.150Z", "I'll patch a.py."), patch(f"{T}2.150Z", "call_b"),
             patch_out(f"{T}2.150Z", "call_b"),
             ev(f"{T}2.160Z", "turn_aborted", turn_id="1", reason="interrupted")]
    path = write(tmp_path / "rollout-int.jsonl", recs)
    collect_into(store, path)
    conv = only(store)
    calls = conv.model_calls()
    assert [own(c) for c in calls] == [fresh(REQUESTS[0]), (None, None, None)]
    tools = {s.tool_id: s for s in conv.steps if s.kind == "tool"}
    assert asked_by(conv, tools["call_a"]).call == calls[0].call
    by_tool = {e["id"]: e["call"] for e in events_of(path) if e["e"] == "tool_use"}
    assert by_tool == {"call_a": calls[0].call, "call_b": calls[1].call}
    assert [s.call for s in conv.steps if s.kind == "reply"] == [calls[1].call]


def test_items_first_message_shown_without_markup_is_not_count_first(store: Store, tmp_path: Path) -> None:
    """Items first, a shown message may leave out markup its written item keeps (a citation):
    the two texts differ, but a message was written before the count, so the order stays."""
    recs = items_first()
    del recs[0]["payload"]["cli_version"]
    for r in recs:
        if r["payload"].get("type") == "message" and r["payload"].get("role") == "assistant":
            r["payload"]["content"][0]["text"] += " <oai-mem-citation>x</oai-mem-citation>"
    path = write(tmp_path / "rollout-cite.jsonl", recs)
    collect_into(store, path)
    conv = only(store)
    calls = conv.model_calls()
    assert [own(c) for c in calls] == [fresh(r) for r in REQUESTS]
    tools = {s.tool_id: s for s in conv.steps if s.kind == "tool"}
    assert [asked_by(conv, tools[t]).call for t in ("call_a", "call_b")] == [calls[0].call, calls[1].call]
    # Each request's reasoning (the first item of each) on its own call, the last one's too.
    assert [e["call"] for e in events_of(path) if e["e"] == "thinking"] == [c.call for c in calls]


def test_count_first_tool_failure_reported_before_its_call(store: Store, tmp_path: Path) -> None:
    """Count first, a tool's end event (written while the request streamed) comes before the
    call item it ends: its failure still marks the step."""
    recs = count_first()
    at = [i for i, r in enumerate(recs) if r["payload"].get("type") == "token_count"][1]
    recs.insert(at, ev(f"{T}2.150Z", "patch_apply_end", call_id="call_b", success=False, changes={}))
    path = write(tmp_path / "rollout-fail.jsonl", recs)
    collect_into(store, path)
    tools = {s.tool_id: s for s in only(store).steps if s.kind == "tool"}
    assert tools["call_b"].status == "failed"


# --- usage values that are not numbers -------------------------------------------------------

@pytest.mark.parametrize("shape", ["values", "whole", "last only"])
def test_redacted_usage_warns_once_and_invents_no_request(shape: str, store: Store, tmp_path: Path) -> None:
    """Every count redacted, each written twice (Codex writes a count again with new rate
    limits): three requests of unknown usage, not six, and not one; one warning naming the file
    and the first such line; a notice that the number of requests is not known."""
    recs = items_first()
    out: list[dict] = []
    for r in recs:
        if r["payload"].get("type") == "token_count":
            info = r["payload"]["info"]
            if shape == "values":
                info["total_token_usage"] = dict.fromkeys(info["total_token_usage"], "[REDACTED]")
                info["last_token_usage"] = dict.fromkeys(info["last_token_usage"], "[REDACTED]")
            elif shape == "whole":
                info["total_token_usage"] = info["last_token_usage"] = "[REDACTED]"
            else:
                del info["total_token_usage"]
                info["last_token_usage"] = dict.fromkeys(info["last_token_usage"], "***")
            out += [r, r]
        else:
            out.append(r)
    path = write(tmp_path / "rollout-red.jsonl", out)
    res = collect_into(store, path)
    first = next(i for i, r in enumerate(out, 1) if r["payload"].get("type") == "token_count")
    assert [(p.file, p.line) for p in res.problems] == [(str(path), first)]
    assert "not numbers" in res.problems[0].message and "not known" in res.problems[0].message
    conv = only(store)
    calls = conv.model_calls()
    assert len(calls) == 3
    assert all(c.usage.input is None and c.usage.output is None and c.usage.cache_read is None for c in calls)
    tools = {s.tool_id: s for s in conv.steps if s.kind == "tool"}
    assert asked_by(conv, tools["call_a"]).call == calls[0].call
    assert asked_by(conv, tools["call_b"]).call == calls[1].call
    assert [s.notice for s in conv.steps if s.kind == "notice"] == ["requests_unknown"] * 3


def test_redacted_warning_once_per_file_across_collects(store: Store, tmp_path: Path) -> None:
    recs = items_first()
    for r in recs:
        if r["payload"].get("type") == "token_count":
            r["payload"]["info"]["last_token_usage"]["output_tokens"] = "[REDACTED]"
            r["payload"]["info"]["total_token_usage"]["output_tokens"] = "[REDACTED]"
    cut = 9
    path = write(tmp_path / "rollout-grow.jsonl", recs[:cut])
    first = collect_into(store, path)
    write(path, recs)
    second = collect_into(store, path)
    assert len(first.problems) == 1 and not second.problems
    calls = only(store).model_calls()
    # Only the redacted count is unknown; the others are read.
    assert [(c.usage.input, c.usage.cache_read, c.usage.output) for c in calls] == [
        (r[0] - r[1], r[1], None) for r in REQUESTS]


def test_readable_repeat_still_dropped_and_other_files_warn_apart(store: Store, tmp_path: Path) -> None:
    """A count with a readable running total that repeats the last is no request, whatever its
    own values; two redacted files each get their warning."""
    recs = items_first(tid="rep-1")
    i = next(i for i, r in enumerate(recs) if r["payload"].get("type") == "token_count")
    again = count(f"{T}1.150Z", 1)
    again["payload"]["info"]["last_token_usage"] = "[REDACTED]"
    recs.insert(i + 1, again)
    a = write(tmp_path / "a" / "rollout-a.jsonl", recs)
    b = write(tmp_path / "b" / "rollout-b.jsonl", [*items_first(tid="rep-2")[:-2],
                                                  count(f"{T}3.100Z", 3, values="n/a")])
    res = collect_into(store, a, b)
    assert sorted((Path(p.file).name, p.line) for p in res.problems) == [("rollout-a.jsonl", i + 2), ("rollout-b.jsonl", len(items_first()) - 1)]
    convs = {x: only_of(store, x) for x in ("rep-1", "rep-2")}
    assert [own(c) for c in convs["rep-1"].model_calls()] == [fresh(r) for r in REQUESTS]
    assert [own(c) for c in convs["rep-2"].model_calls()] == [fresh(REQUESTS[0]), fresh(REQUESTS[1]), (None, None, None)]


def only_of(store: Store, cid: str) -> Conversation:
    from asz_core.assembly import assemble

    rnd = store.round(cid)
    row = next(r for r in store.conversations() if r.id == cid)
    return assemble(cid, row.runtime, rnd, store.records(cid, rnd.number))


def test_count_first_redacted_repeat_is_no_request(store: Store, tmp_path: Path) -> None:
    """Count first, a redacted count written again right after the first is no request either,
    while each request that began (its turn_context) is one."""
    recs = []
    for r in count_first(tid="cfr-1"):
        if r["payload"].get("type") == "token_count":
            r["payload"]["info"]["total_token_usage"] = r["payload"]["info"]["last_token_usage"] = "[REDACTED]"
            recs += [r, r]
        else:
            recs.append(r)
    path = write(tmp_path / "rollout-cfr.jsonl", recs)
    res = collect_into(store, path)
    assert len(res.problems) == 1
    conv = only(store)
    calls = conv.model_calls()
    assert len(calls) == 3 and all(c.usage.input is None for c in calls)
    tools = {s.tool_id: s for s in conv.steps if s.kind == "tool"}
    assert asked_by(conv, tools["call_a"]).call == calls[0].call
    assert asked_by(conv, tools["call_b"]).call == calls[1].call


def test_redacted_running_total_is_no_base_for_the_next(store: Store, tmp_path: Path) -> None:
    """Only running totals (older builds), the first one redacted whole: the next request's
    usage (its total minus the one before) is unknown, never its whole running total."""
    recs = items_first(tid="tot-1")
    counts = [r for r in recs if r["payload"].get("type") == "token_count"]
    for n, r in enumerate(counts):
        info = r["payload"]["info"]
        del info["last_token_usage"]
        if n == 0:
            info["total_token_usage"] = "[REDACTED]"
    path = write(tmp_path / "rollout-tot.jsonl", recs)
    collect_into(store, path)
    calls = only(store).model_calls()
    assert [own(c) for c in calls] == [(None, None, None), (None, None, None), fresh(REQUESTS[2])]


def test_a_file_an_earlier_asz_read_part_of_reads_on(tmp_path: Path) -> None:
    """The state an earlier asz kept for a grown file (no order, the open call's texts a list)
    is taken up: the rest of the file is read in its release's order, without warnings."""
    recs = count_first(tid="up-1")
    path = write(tmp_path / "rollout-up.jsonl", recs[:9])  # request 1 whole
    cursor = Cursor()
    adapter = CodexAdapter()
    for x in adapter.read(path, cursor):
        assert not isinstance(x, Problem)
    for k in ("order", "counted", "unreadable", "counts"):
        cursor.state.pop(k)
    cursor.state["texts"] = []
    write(path, recs)
    rest = list(adapter.read(path, cursor))
    assert not [x for x in rest if isinstance(x, Problem)]
    events = [e for x in rest for e in x.events]
    counted = [e["id"] for e in events if e["e"] == "call" and e["final"]]
    asked = {e["id"]: e["call"] for e in events if e["e"] == "tool_use"}
    assert len(counted) == 2 and asked == {"call_b": counted[0]}
