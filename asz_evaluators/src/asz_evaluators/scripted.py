"""``scripted``: an evaluator that replays a file instead of asking a model.

For tests, the bundled example, and reproducing a past run without a model. The script is a
YAML or JSON file (docs/judge.md, "The scripted evaluator")::

    calls:
      - stage: targets        # which call this entry answers: its stage,
        call: 1               #   its number in the stage (default 1),
        attempt: 1            #   and its attempt (default: any attempt)
        model: scripted-demo  # optional, as a real evaluator would say it
        model_window: 200000  # optional
        requests:             # the model requests the call made, in order ([]: none, as a person's
                              #   answers by hand; left out: one whose usage was never said)
          - reads:            # navigation tool calls, replayed against the real tools
              - {tool: talks}
              - {tool: step, args: {id: s3}}
            usage: {input: 5200, output: 310, cache_read: 0, cache_write: 0}
          - usage: null       # a request whose usage was never said: counted apart
        answer: {...}         # the answer (a JSON value), or
        raw: "..."            # the answer as text, exactly (to replay an unreadable one)
        stderr: ""
        pause: 0.5            # optional: seconds to wait before answering, as a model would

Reads go through the same navigation and reading budget a real evaluator's do, so a refused
answer is refused here too, and every read is logged in the attempt's reads.jsonl.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, ClassVar

import orjson

from asz_core.errors import EvaluatorError
from asz_core.interfaces import EvaluatorBackend
from asz_core.judge.judgment import CallResult, EvaluatorCall, Request
from asz_core.regular import read_regular

USAGE_KEYS = ("input", "output", "cache_read", "cache_write")


def load_script(path: Path) -> list[dict[str, Any]]:
    """The entries of a script file (YAML or JSON)."""
    try:
        text = read_regular(path).decode("utf-8")  # a FIFO given as the script is refused, not waited on
    except (OSError, UnicodeDecodeError) as exc:
        raise EvaluatorError(f"scripted evaluator: cannot read the script {path} ({exc})") from exc
    try:
        if path.suffix == ".json":
            data = orjson.loads(text)
        else:
            from ruamel.yaml import YAML

            data = YAML(typ="safe", pure=True).load(text)
    except Exception as exc:
        raise EvaluatorError(f"scripted evaluator: {path} is not a script ({exc})") from exc
    calls = data.get("calls") if isinstance(data, dict) else None
    if not isinstance(calls, list) or not all(isinstance(c, dict) for c in calls):
        raise EvaluatorError(f"scripted evaluator: {path} must hold a mapping with a list of calls:")
    return calls


def _script(argument: str | None, options: dict[str, Any]) -> str:
    """The script file: ``scripted:FILE``'s, else asz.yaml's ``evaluators: {scripted: {script: FILE}}``."""
    script = argument or options.get("script")
    if not script:
        raise EvaluatorError("the scripted evaluator needs a script: give it as scripted:FILE, or set "
                             "evaluators: {scripted: {script: FILE}} in asz.yaml")
    return str(script)


def _count(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


class ScriptedEvaluator(EvaluatorBackend):
    """Replays a script file: its reads through the navigation, its usage and its answers."""

    name: ClassVar[str] = "scripted"

    @classmethod
    def check(cls, argument: str | None, options: dict[str, Any]) -> None:
        """The script is there and reads as one, before the run starts: a missing or broken file
        would otherwise fail every call of every stage, each the same way."""
        load_script(Path(_script(argument, options)))

    def judge(self, call: EvaluatorCall) -> CallResult:
        script = _script(call.argument, call.options)
        entries = load_script(Path(script))
        entry = next((e for e in entries if e.get("stage") == call.stage and e.get("call", 1) == call.call
                      and e.get("attempt", call.attempt) == call.attempt), None)
        if entry is None:
            return CallResult(error=f"the script {script} has no answer for {call.stage} call {call.call} "
                                    f"(attempt {call.attempt})")
        requests = []
        model = entry.get("model")
        given = entry.get("requests")
        # no requests: one whose usage was never said (it may have been billed); requests: [] is a
        # call that asked no model at all, as a person's answers written by hand
        for r in given if isinstance(given, list) else [{}]:
            r = r if isinstance(r, dict) else {}
            names = []
            for read in r.get("reads") or []:
                if not isinstance(read, dict) or not isinstance(read.get("tool"), str):
                    continue
                args = read.get("args") if isinstance(read.get("args"), dict) else {}
                call.navigator.call(read["tool"], args)
                names.append(read["tool"])
            usage = r.get("usage")
            if isinstance(usage, dict):
                requests.append(Request(**{k: _count(usage.get(k)) for k in USAGE_KEYS}, model=model, said=True,
                                        reads=tuple(names)))
            else:
                requests.append(Request(model=model, said=False, reads=tuple(names)))
            call.requests_so_far(requests)  # the stage's progress counts it while the call goes on
        pause = entry.get("pause")
        if isinstance(pause, (int, float)) and not isinstance(pause, bool) and pause > 0:
            time.sleep(min(float(pause), 60.0))
        if "raw" in entry:
            raw = str(entry["raw"])
            answer = None
        else:
            answer = entry.get("answer")
            raw = orjson.dumps(answer, option=orjson.OPT_INDENT_2).decode()
        return CallResult(answer=answer, raw=raw, requests=tuple(requests), stderr=str(entry.get("stderr") or ""),
                          model=model, model_window=_count(entry.get("model_window")))
