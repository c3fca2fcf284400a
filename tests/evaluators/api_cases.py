"""The cases every API evaluator is tested on, with the real SDK against a local fake server
(api_fakes.py). Each test_api_<provider>.py imports them with its own ``dialect`` fixture.

Every case runs a real targets stage over a corpus conversation, and checks what the attempt
directories hold (requests.jsonl, api.jsonl, reads.jsonl) and what the stage file counted, exactly
against the usage the fake server sent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from asz_core.judge import runner
from asz_core.assembly import PERSON_SOURCES
from asz_core.convert import unstructure
from asz_core.judge.judgment import Request

try:
    from .api_fakes import Dialect, FakeAPI
except ImportError:
    from api_fakes import Dialect, FakeAPI  # type: ignore[no-redef]


@pytest.fixture(autouse=True)
def hermetic_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ASZ_HOME", str(tmp_path / "home"))
    for name in ("ASZ_DISABLE_PLUGINS", "ASZ_DISABLE_PLUGIN_AUTOLOAD", "ASZ_KIT", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL",
                 "AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID",
                 "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-fake")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAFAKE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fake-secret")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    for proxy in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(proxy, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


# --- helpers --------------------------------------------------------------------------------------

def inputs_of(store: Any, cid: str) -> list[Any]:
    from asz_core import window

    w = window.build(store, cid)
    out = []
    for kid in w.judged:
        for s in w.conv.talk(kid).inputs:
            st = w.conv.step(s)
            if st.source in PERSON_SOURCES and st.input:
                out.append(st)
    return out


def small_conversation(store: Any) -> tuple[str, list[Any]]:
    """The corpus conversation with the fewest inputs (at least one)."""
    best = None
    for r in store.conversations():
        ins = inputs_of(store, r.id)
        if ins and (best is None or len(ins) < len(best[1])):
            best = (r.id, ins)
            if len(ins) <= 2:
                break
    if best is None:
        pytest.skip("no corpus conversation with an input")
    return best


def answer_for(inputs: list[Any]) -> dict[str, Any]:
    """A valid targets answer: one goal, one target, every later input continuing it."""
    ans: dict[str, Any] = {"inputs": [], "targets": [], "goals": []}
    for k, s in enumerate(inputs):
        if k == 0:
            ans["inputs"].append({"input": s.input, "actions": [{"target": "new:a", "action": "create"}],
                                  "relations": [{"relation": "new", "goal": "new:A", "statement": "do a"}]})
        else:
            ans["inputs"].append({"input": s.input, "actions": [{"target": "new:a", "action": "refine"}],
                                  "relations": [{"relation": "continue", "goal": "new:A", "follows": inputs[k - 1].input}]})
    ans["targets"].append({"target": "new:a", "statement": "the outcome a", "kind": "change",
                           "criteria": [{"text": "a works"}], "state": "open"})
    return ans


class Judged:
    def __init__(self, res: runner.RunResult, fake: FakeAPI) -> None:
        self.res, self.fake = res, fake
        self.path = res.path
        self.stage = json.loads((res.path / "stages" / "targets.json").read_text())

    def why(self) -> str:
        out = [f"{self.stage['status']}: {self.stage['reason']}"]
        for a in self.stage["run"]["attempt_log"]:
            d = self.path / a["directory"]
            out.append(f"{a['directory']}: {a['status']} {a['error']}\n{(d / 'stderr.txt').read_text()}")
        return "\n".join(out)

    def attempt(self, call: int, attempt: int) -> Path:
        return self.path / "calls" / "targets" / str(call) / str(attempt)

    def requests(self, call: int = 1, attempt: int = 1) -> list[dict[str, Any]]:
        return [json.loads(x) for x in (self.attempt(call, attempt) / "requests.jsonl").read_text().splitlines()]

    def api(self, call: int = 1, attempt: int = 1) -> list[dict[str, Any]]:
        return [json.loads(x) for x in (self.attempt(call, attempt) / "api.jsonl").read_text().splitlines()]

    def reads(self, call: int = 1, attempt: int = 1) -> list[dict[str, Any]]:
        p = self.attempt(call, attempt) / "reads.jsonl"
        return [json.loads(x) for x in p.read_text().splitlines()] if p.is_file() else []


def judge(store: Any, tmp_path: Path, dialect: Dialect, script: list[Any], *, settings: dict[str, Any] | None = None,
          options: dict[str, Any] | None = None) -> Judged:
    cid, _ = small_conversation(store)
    with FakeAPI(script) as fake:
        opts = {**dialect.setup(fake.url), "retry_wait": 0, **(options or {})}
        cfg = tmp_path / f"asz-{len(list(tmp_path.glob('asz-*.yaml')))}.yaml"
        cfg.write_text(json.dumps({"evaluators": {dialect.name: opts}}))
        res = runner.judge(runner.JudgeOptions(cid, evaluator=f"{dialect.name}:{dialect.model}", config=cfg,
                                               stages=("targets",), settings={"judge.mode": "single", **(settings or {})}),
                           store=store)
    return Judged(res, fake)


def _line(r: Request) -> dict[str, Any]:
    """A request as requests.jsonl writes it (``credits`` only when a provider bills in them)."""
    d = unstructure(r)
    if d.get("credits") is None:
        d.pop("credits", None)
    return d


def said(dialect: Dialect, k: int, reads: tuple[str, ...] = (), model: str | None = None) -> dict[str, Any]:
    """requests.jsonl's line for request ``k`` whose usage the server said."""
    return _line(Request(**dialect.usage(k)[1], model=model or dialect.model, reads=reads))


def unsaid(dialect: Dialect, reads: tuple[str, ...] = (), model: str | None = None) -> dict[str, Any]:
    return _line(Request(model=model or dialect.model, said=False, reads=reads))


def consumed(dialect: Dialect, said_ks: list[int], unsaid_n: int = 0) -> dict[str, Any]:
    """What the stage must count: the sums of what the server said, and the unsaid apart."""
    tot = {k: 0 for k in ("input", "output", "cache_read", "cache_write")}
    sides = []
    for k in said_ks:
        u = dialect.usage(k)[1]
        for t in tot:
            tot[t] += u[t]  # type: ignore[operator]
        sides.append(u["input"] + u["cache_read"] + u["cache_write"])  # type: ignore[operator]
    return {"requests": len(said_ks), "unknown_requests": unsaid_n, **tot, "unknown": {},
            "largest_input_side": max(sides) if sides else None}


def check_consumed(j: Judged, want: dict[str, Any]) -> None:
    got = j.stage["run"]["consumed"]
    assert {k: got[k] for k in want} == want
    close = json.loads((j.path / "close.json").read_text())["consumed"]
    assert {k: close[k] for k in want} == want


# --- the cases ------------------------------------------------------------------------------------

def test_clean_call(corpus_store: Any, tmp_path: Path, dialect: Dialect) -> None:
    _, inputs = small_conversation(corpus_store)
    ans = answer_for(inputs)
    script = [dialect.tools([("talks", {}), ("card", {})], 1, text="Reading the talks first."),
              dialect.tools([("submit", ans)], 2)]
    j = judge(corpus_store, tmp_path, dialect, script)
    assert j.stage["status"] in ("complete", "partial") and j.stage["reason"] is None, j.why()
    assert j.stage["run"]["attempts"] == 1
    assert j.requests() == [said(dialect, 1, ("talks", "card")), said(dialect, 2)]
    check_consumed(j, consumed(dialect, [1, 2]))
    # api.jsonl keeps each response's usage exactly as the provider said it
    assert [a["usage"] for a in j.api()] == [dialect.usage(1)[0], dialect.usage(2)[0]]
    # the tools the model was given: the navigation's, then submit with the stage's schema
    path, first = j.fake.seen[0]
    names = dialect.tool_names(first)
    assert names[-1] == "submit" and {"card", "talks", "talk", "step", "search"} <= set(names)
    # the navigation answered in-process, through the call's own navigator (its log and budget)
    reads = j.reads()
    assert [(r["tool"], r["status"]) for r in reads] == [("talks", "ok"), ("card", "ok")]
    results = dialect.results(j.fake.seen[1][1])
    assert [json.loads(t)["tool"] for t in results] == ["talks", "card"]
    assert sum(len(t.encode()) for t in results) == reads[-1]["used"]
    assert j.stage["targets"] and j.stage["targets"][0]["statement"] == "the outcome a"
    assert j.stage["evaluator"]["name"] == dialect.name and dialect.model in j.stage["evaluator"]["models"]


def test_reading_past_the_budget_is_refused(corpus_store: Any, tmp_path: Path, dialect: Dialect) -> None:
    _, inputs = small_conversation(corpus_store)
    script = [dialect.tools([("card", {})], 1),
              dialect.tools([("talks", {}), ("talks", {}), ("talks", {}), ("talks", {})], 2),
              dialect.tools([("submit", answer_for(inputs))], 3)]
    j = judge(corpus_store, tmp_path, dialect, script, settings={"judge.read_bytes": 1500})
    reads = j.reads()
    assert [r["status"] for r in reads] == ["ok", "refused", "refused", "refused", "ended"]
    results = dialect.results(j.fake.seen[2][1])
    assert [json.loads(t).get("refused", False) for t in results] == [True, True, True, False]
    assert json.loads(results[3])["ended"] is True and "refused whole" in json.loads(results[0])["message"]
    assert any(t.startswith("The navigation has ended") for t in dialect.user_texts(j.fake.seen[2][1]))
    assert j.requests() == [said(dialect, 1, ("card",)), said(dialect, 2, ("talks",) * 4), said(dialect, 3)]
    check_consumed(j, consumed(dialect, [1, 2, 3]))
    assert j.stage["run"]["read_bytes"] == reads[0]["bytes"] <= 1500


def test_malformed_answer_is_tried_once_more(corpus_store: Any, tmp_path: Path, dialect: Dialect) -> None:
    _, inputs = small_conversation(corpus_store)
    ans = answer_for(inputs)
    bad = {"inputs": "none", "targets": []}
    script = [  # attempt 1: a text, a reminder, a text again: nothing readable
        dialect.text("I think there is one target.", 1), dialect.text("Still no object here.", 2),
        # attempt 2: a submit that breaks the schema, its errors, then a good one
        dialect.tools([("submit", bad)], 1), dialect.tools([("submit", ans)], 3)]
    j = judge(corpus_store, tmp_path, dialect, script)
    assert j.stage["run"]["attempts"] == 2
    log = j.stage["run"]["attempt_log"]
    assert [(a["attempt"], a["status"]) for a in log] == [(1, "unreadable"), (2, "ok")]
    assert log[0]["directory"] == "calls/targets/1/1" and log[1]["directory"] == "calls/targets/1/2"
    assert (j.attempt(1, 1) / "answer.txt").read_text() == "Still no object here."
    assert j.requests(1, 1) == [said(dialect, 1), said(dialect, 2)]
    assert j.requests(1, 2) == [said(dialect, 1), said(dialect, 3)]
    # the reminder, and the schema's complaint, reached the model
    assert any("submit" in t for t in dialect.user_texts(j.fake.seen[1][1]))
    complaint = dialect.results(j.fake.seen[3][1])[0]
    assert complaint.startswith("Not accepted") and "inputs" in complaint
    assert "did not match the answer schema" in (j.attempt(1, 2) / "stderr.txt").read_text()
    check_consumed(j, consumed(dialect, [1, 2, 1, 3]))


def test_api_error(corpus_store: Any, tmp_path: Path, dialect: Dialect) -> None:
    _, inputs = small_conversation(corpus_store)
    ans = answer_for(inputs)
    script = [dialect.tools([("card", {})], 1), dialect.error(400, "prompt is too long"),  # attempt 1 fails
              dialect.error(503, "overloaded"), dialect.tools([("submit", ans)], 2)]  # attempt 2: retried, then ok
    j = judge(corpus_store, tmp_path, dialect, script, options={"retries": 1})
    log = j.stage["run"]["attempt_log"]
    assert [(a["attempt"], a["status"]) for a in log] == [(1, "failed"), (2, "ok")], j.why()
    assert "400" in log[0]["error"] and "prompt is too long" in log[0]["error"]
    assert j.requests(1, 1) == [said(dialect, 1, ("card",)), unsaid(dialect)]
    assert j.requests(1, 2) == [unsaid(dialect), said(dialect, 2)]
    assert "503" in (j.attempt(1, 2) / "stderr.txt").read_text()
    check_consumed(j, consumed(dialect, [1, 2], unsaid_n=2))
    assert len(j.fake.seen) == 4


def test_connection_cut_off_mid_answer(corpus_store: Any, tmp_path: Path, dialect: Dialect) -> None:
    _, inputs = small_conversation(corpus_store)
    cut = dialect.tools([("talks", {})], 2)
    script = [dialect.tools([("card", {})], 1), ("cut", 200, cut[2], {}),  # attempt 1: the answer lost on the way
              dialect.tools([("submit", answer_for(inputs))], 3)]
    j = judge(corpus_store, tmp_path, dialect, script, options={"retries": 0})
    log = j.stage["run"]["attempt_log"]
    assert [(a["attempt"], a["status"]) for a in log] == [(1, "failed"), (2, "ok")], j.why()
    assert "lost on the way" in log[0]["error"]
    assert j.requests(1, 1) == [said(dialect, 1, ("card",)), unsaid(dialect)]
    assert j.requests(1, 2) == [said(dialect, 3)]
    check_consumed(j, consumed(dialect, [1, 3], unsaid_n=1))
    assert [r["tool"] for r in j.reads(1, 1)] == ["card"]  # nothing of the lost answer was read


def test_response_with_no_usage(corpus_store: Any, tmp_path: Path, dialect: Dialect) -> None:
    _, inputs = small_conversation(corpus_store)
    script = [dialect.tools([("talks", {})], 1, usage=False), dialect.tools([("submit", answer_for(inputs))], 2)]
    j = judge(corpus_store, tmp_path, dialect, script)
    assert j.stage["run"]["attempts"] == 1
    # the answer was read and its reads kept; its usage is counted apart, never as zero
    assert j.requests() == [unsaid(dialect, ("talks",)), said(dialect, 2)]
    check_consumed(j, consumed(dialect, [2], unsaid_n=1))
    assert "usage" not in j.api()[0] or j.api()[0]["usage"] is None


def test_old_results_are_replaced_past_the_bound(corpus_store: Any, tmp_path: Path, dialect: Dialect) -> None:
    _, inputs = small_conversation(corpus_store)
    script = [dialect.tools([("card", {})], 1), dialect.tools([("talks", {})], 2),
              dialect.tools([("submit", answer_for(inputs))], 3)]
    j = judge(corpus_store, tmp_path, dialect, script, options={"keep_bytes": 100})
    reads = j.reads()
    card_bytes = reads[0]["bytes"]
    second = dialect.all_results(j.fake.seen[1][1])
    assert [json.loads(t)["tool"] for t in second] == ["card"]  # the latest results are always sent whole
    third = dialect.all_results(j.fake.seen[2][1])
    assert third[0] == (f"[card {{}} was read here ({card_bytes} bytes); it was taken out to keep the context small. "
                        "Call the tool again if you need it.]")
    assert json.loads(third[1])["tool"] == "talks"
    assert "1 older tool results replaced" in (j.attempt(1, 1) / "stderr.txt").read_text()
    assert j.requests() == [said(dialect, 1, ("card",)), said(dialect, 2, ("talks",)), said(dialect, 3)]
    check_consumed(j, consumed(dialect, [1, 2, 3]))


def test_no_answer_after_the_navigation_ended(corpus_store: Any, tmp_path: Path, dialect: Dialect) -> None:
    script = [dialect.tools([("talks", {})] * 3, 1)] + [dialect.tools([("card", {})], k) for k in (2, 3, 4)]
    script.append(dialect.error(400, "stop here"))  # attempt 2
    j = judge(corpus_store, tmp_path, dialect, script, settings={"judge.read_bytes": 10})
    log = j.stage["run"]["attempt_log"]
    assert [a["status"] for a in log] == ["failed", "failed"] and j.stage["status"] == "failed", j.why()
    assert "the navigation ended and no answer came in 3 more requests" in log[0]["error"]
    assert j.requests(1, 1) == [said(dialect, 1, ("talks",) * 3)] + [said(dialect, k, ("card",)) for k in (2, 3, 4)]
    assert [r["status"] for r in j.reads(1, 1)] == ["refused"] * 3 + ["ended"] * 3
    assert j.requests(1, 2) == [unsaid(dialect)]
    check_consumed(j, consumed(dialect, [1, 2, 3, 4], unsaid_n=1))


def test_a_lone_surrogate_in_the_submitted_answer_is_replaced(corpus_store: Any, tmp_path: Path, dialect: Dialect) -> None:
    """The SDK reads ``"\\ud800"`` in a tool's input as a lone surrogate, which no UTF-8 file holds:
    the answer is kept with U+FFFD in its place, never a call failed over it."""
    _, inputs = small_conversation(corpus_store)
    ans = answer_for(inputs)
    ans["targets"][0]["statement"] = "the outcome \ud800a"
    j = judge(corpus_store, tmp_path, dialect, [dialect.tools([("submit", ans)], 1)])
    assert j.stage["status"] in ("complete", "partial") and j.stage["run"]["attempts"] == 1, j.why()
    assert j.stage["targets"][0]["statement"] == "the outcome \ufffda"


def test_a_submitted_answer_past_the_bounds_is_cut_or_refused(corpus_store: Any, tmp_path: Path, dialect: Dialect) -> None:
    """Through each provider's SDK and the submit tool, as through the scripted backend: a 10 MB
    statement and criteria past the bounds in all are cut, the stage partial saying so (the
    schema passes them: strings and lists); an answer nested deeper than any stage's is refused
    with that reason, never a recursion error."""
    from asz_core.judge.context import ANSWER_ALL_TEXT, ANSWER_ITEMS, ANSWER_TEXT

    _, inputs = small_conversation(corpus_store)
    ans = answer_for(inputs)
    target = ans["targets"][0]
    target["statement"] = "s" * 10_000_000
    target["criteria"] = [{"text": f"criterion {i} " + "c" * (ANSWER_TEXT - 40)} for i in range(ANSWER_ITEMS + 5)]
    j = judge(corpus_store, tmp_path, dialect, [dialect.tools([("submit", ans)], 1)])
    assert j.stage["status"] == "partial", j.stage.get("reason")
    said = " ".join(j.stage["note"])
    assert "a text of 10,000,000 characters, cut to 16,384" in said
    assert f"{ANSWER_ITEMS + 5:,} items, the first {ANSWER_ITEMS:,} kept" in said
    assert f"the answer holds {ANSWER_ALL_TEXT:,} characters in all" in said
    (kept,) = j.stage["targets"]
    assert kept["criteria"][0]["text"].startswith("criterion 0 ") and len(kept["criteria"]) <= ANSWER_ITEMS
    assert (j.path / "stages" / "targets.json").stat().st_size < 2 * ANSWER_ALL_TEXT
    deep: Any = "leaf"
    for _ in range(200):
        deep = {"a": deep}
    nested = {**answer_for(inputs), "goals": [deep]}
    j = judge(corpus_store, tmp_path, dialect, [dialect.tools([("submit", nested)], k) for k in (1, 2, 3, 4, 5, 6)])
    assert j.stage["status"] == "failed"
    assert "Recursion" not in json.dumps(j.stage) and "did not match the answer schema" in j.stage["reason"], j.stage["reason"]
