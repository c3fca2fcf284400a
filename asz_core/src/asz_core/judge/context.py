"""What a stage is given and gives back, below both the runner and the stages: the run (its
directory, window, store, configuration, kit and prices), the stage's evaluator (its spec and
backend) and its calls (each attempt's files, the retry, what it consumed, the progress meter).

The runner (:mod:`asz_core.judge.runner`) builds a :class:`Run` and hands each stage function
``(run, spec, backend)``; a stage runs its calls through :class:`StageCalls` and returns a
:class:`~asz_core.judge.judgment.StageFile` made with :meth:`Run.stage_file`.
"""

from __future__ import annotations

import datetime as dt
import os
import secrets
import threading
import time
import traceback
from collections.abc import Callable, Collection, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import attrs
import orjson
from attrs import frozen

from ..convert import dumps, unstructure
from ..errors import AszError, ConfigError
from ..records import USAGE_TYPES
from ..store import Store
from . import config as configs
from .judgment import (VERSION, AttemptRecord, CallResult, Check, Consumed, EvaluatorCall, EvaluatorRef, Request,
                       StageFile, StageRun, add_consumed)

Progress = Callable[[str], None]


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def write_once(path: Path, data: bytes) -> None:
    """Write ``path`` atomically (a temp file, then a link that fails if it exists): once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        tmp.write_bytes(data)
        os.link(tmp, path)
    except FileExistsError:
        raise AszError(f"{path} exists already: a run's files are written once") from None
    except OSError as exc:  # a full disk says no path of itself: name the file it was writing
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None
    finally:
        try:
            tmp.unlink(missing_ok=True)  # nothing left behind, whatever happened
        except OSError:
            pass


def keep_traceback(run_dir: Path, stem: str) -> None:
    """The traceback being handled, kept as ``calls/STEM.traceback.txt`` (``STEM.2.traceback.txt``
    when a second failure of the same part came): written once, atomically. One that cannot be
    written (a full disk) is let go: the stage file or the progress says the failure already."""
    text = traceback.format_exc().encode("utf-8", "backslashreplace")
    for k in range(1, 10):
        try:
            write_once(run_dir / "calls" / f"{stem}{'' if k == 1 else f'.{k}'}.traceback.txt", text)
            return
        except AszError:  # that name is taken: the next
            continue
        except OSError:
            return


def attempt_line(r: Request) -> bytes:
    line = unstructure(r)
    if line.get("credits") is None:
        line.pop("credits", None)  # only a provider that bills in credits says them
    return orjson.dumps(line) + b"\n"


def write_attempt_files(d: Path, result: CallResult) -> str | None:
    """An attempt's requests.jsonl, answer.txt and stderr.txt, each written once, atomically; the
    reason (naming the file) when one could not be written, e.g. on a full disk."""
    # A lone surrogate (which a backend's json module reads from "\ud800") is no UTF-8: kept escaped.
    files = (("requests.jsonl", lambda: b"".join(attempt_line(r) for r in result.requests)),
             ("answer.txt", lambda: str(result.raw).encode("utf-8", "backslashreplace")),
             ("stderr.txt", lambda: str(result.stderr).encode("utf-8", "backslashreplace")))
    for name, data in files:
        try:
            write_once(d / name, data())
        except OSError as exc:
            return f"its {name} could not be written: {exc}"
    return None


# --- evaluators ----------------------------------------------------------------------------------

@frozen
class EvaluatorSpec:
    spec: str
    name: str
    argument: str | None
    options: dict[str, Any]


def parse_evaluator(spec: str, cfg: configs.Config) -> EvaluatorSpec:
    """``NAME`` or ``NAME:ARGUMENT``; options from the configuration's ``evaluators:`` section
    (a relative ``script`` is read relative to the configuration file)."""
    name, _, arg = spec.partition(":")
    if not name:
        raise ConfigError(f"evaluator {spec!r}: give NAME or NAME:ARGUMENT")
    opts = dict(cfg.evaluators.get(name) or {})
    base = Path(cfg.source).parent if cfg.source else Path.cwd()
    if isinstance(opts.get("script"), str):
        opts["script"] = str((base / opts["script"]).resolve())
    if arg:
        arg = str(Path(arg).resolve()) if name == "scripted" else arg
    return EvaluatorSpec(spec, name, arg or None, opts)



# --- usage --------------------------------------------------------------------------------------

def consumed_of(result: CallResult) -> Consumed:
    said = [r for r in result.requests if r.said]
    unknown: dict[str, int] = {}
    tot = dict.fromkeys(USAGE_TYPES, 0)
    for r in said:
        for k in tot:
            v = getattr(r, k)
            if v is None:
                unknown[k] = unknown.get(k, 0) + 1
            else:
                tot[k] += v
    sides = [r.input_side for r in said if r.input_side is not None]
    credits = [r.credits for r in result.requests if r.credits is not None]
    return Consumed(requests=len(said), unknown_requests=len(result.requests) - len(said), **tot, unknown=unknown,
                    largest_input_side=max(sides) if sides else None, model_window=result.model_window,
                    reported_cost=result.reported_cost, credits=sum(credits) if credits else None)  # type: ignore[arg-type]


def tokens(c: Consumed) -> int:
    return c.input + c.output + c.cache_read + c.cache_write


def failed_stage_line(name: str, reason: str | None, path: Path) -> str:
    """A failed stage said once, plainly, with what to do (`asz judge`'s error line and report.html)."""
    return (f"the {name} stage failed: {reason or 'no reason was given'}. Each attempt's prompt, answer and stderr "
            f"are in {path / 'calls' / name}; fix what the reason says (or give another evaluator: "
            f"--stage-evaluator {name}=NAME) and judge again.")


def consumed_line(c: Consumed, seconds: float, rate: bool = True) -> str:
    """What a stage (or a run) consumed; ``rate``: with its tokens a minute (said once, for the run)."""
    mins = max(seconds, 1e-9) / 60
    s = (f"{c.requests} request{'' if c.requests == 1 else 's'}" + (f" (+{c.unknown_requests} whose usage was never said)" if c.unknown_requests else "")
         + f"; in {c.input:,} · out {c.output:,} · cache read {c.cache_read:,} · cache write {c.cache_write:,}"
         + f"; {seconds:.1f} s")
    if seconds > 0 and rate:
        s += f"; {(c.input + c.cache_read + c.cache_write) / mins:,.0f} input-side and {c.output / mins:,.0f} output tokens/min"
    return s


# --- progress ---------------------------------------------------------------------------------

class Meter:
    """What a running stage has consumed so far; says it every ``every`` seconds."""

    def __init__(self, stage: str, every: float, say: Progress | None) -> None:
        self.stage, self.every, self.say = stage, every, say
        self.lock = threading.Lock()
        self.ended = 0
        self.running: dict[str, Any] = {}  # call/attempt -> navigator
        self.so_far: dict[str, tuple[Request, ...]] = {}  # call/attempt -> the requests it said ended, while it runs
        self.parts: list[Consumed] = []
        self.t0 = time.monotonic()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Meter:
        if self.say:
            self._thread = threading.Thread(target=self._loop, name=f"asz-progress-{self.stage}", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join()

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            self.say(self.line())  # type: ignore[misc]

    def requests_of(self, key: str) -> Callable[[tuple[Request, ...]], None]:
        """What a running call says of its requests so far goes here, under its key."""
        def said(requests: tuple[Request, ...]) -> None:
            with self.lock:
                if key in self.running:
                    self.so_far[key] = requests
        return said

    def line(self) -> str:
        with self.lock:
            c = add_consumed([*self.parts, *(consumed_of(CallResult(requests=r)) for r in self.so_far.values())])
            read = sum(n.used for n in self.running.values())
            running = len(self.running)
            ended = self.ended
        secs = time.monotonic() - self.t0
        mins = max(secs, 1e-9) / 60
        return (f"{self.stage}: {ended} calls ended, {running} running (reading {read:,} bytes so far); "
                f"{c.requests} requests" + (f" (+{c.unknown_requests} unsaid)" if c.unknown_requests else "")
                + f", {tokens(c):,} tokens; {(c.input + c.cache_read + c.cache_write) / mins:,.0f} in and "
                f"{c.output / mins:,.0f} out per minute; {secs:.0f} s")


# --- the run ----------------------------------------------------------------------------------

class Run:
    """One run directory and what its stages share."""

    def __init__(self, path: Path, window: Any, store: Store, cfg: configs.Config, kit: Any, prices: Any,
                 adapter: Any, registry: Any, window_text: str, say: Progress | None) -> None:
        self.path, self.window, self.store, self.cfg, self.kit = path, window, store, cfg, kit
        self.prices, self.adapter, self.registry, self.window_text, self.say = prices, adapter, registry, window_text, say
        self.cuts: dict[str, list[str]] = {}
        """Stage -> what was cut of its calls' answers (:func:`bound_answer`): the stage is partial, saying so."""

    def navigator(self, budget: int, log: Path, run_dir: Path | None = None) -> Any:
        from ..mcp_server import jsonl_sink
        from ..navigation import Navigator

        return Navigator(self.window, self.store, budget=budget, run_dir=run_dir or self.path, prices=self.prices,
                         adapter=self.adapter, log=jsonl_sink(log))

    def reader(self) -> Any:
        """A navigator no call's budget counts and no log keeps: what a stage reads to build its
        prompts (the card, the rows it answers for, the outlines its calls are cut by). A new one
        each time: it reads the stage files written so far."""
        from ..navigation import Navigator

        return Navigator(self.window, self.store, budget=10**12, run_dir=self.path, prices=self.prices, adapter=self.adapter)

    def card(self) -> str:
        """The card as the tool answers it, for the prompt (read once, counted against no call)."""
        card = orjson.loads(self.reader().call("card"))
        card.pop("budget_left", None)  # the call's own budget is stated in the prompt
        card.pop("tool", None)
        return orjson.dumps(card).decode()

    def stage_file(self, stage: str, status: str, reason: str | None, **kw: Any) -> StageFile:
        w = self.window
        return StageFile(version=VERSION, stage=stage, status=status, reason=reason, note=kw.pop("note", ()),
                         conversation=w.conv.id, head=w.head, head_digest=w.round.head, window=self.window_text,
                         kit=kw.pop("kit", None), evaluator=kw.pop("evaluator", None),
                         run=kw.pop("run", StageRun("none")), **kw)

    def write_stage(self, sf: StageFile) -> None:
        write_once(self.path / "stages" / f"{sf.stage}.json", dumps(sf, indent=True) + b"\n")


@frozen
class CallOutcome:
    ok: bool
    answer: Any
    error: str | None
    attempts: tuple[AttemptRecord, ...]


class StageCalls:
    """Runs a stage's calls against one backend, with the retry, the files and the meter."""

    def __init__(self, run: Run, stage: str, spec: EvaluatorSpec, backend: Any, meter: Meter) -> None:
        self.run, self.stage, self.spec, self.backend, self.meter = run, stage, spec, backend, meter
        self.attempts: list[AttemptRecord] = []
        self.models: set[str] = set()
        self.lock = threading.Lock()

    def call(self, n: int, prompt: str, schema: dict[str, Any], readable: Callable[[Any], str | None],
             run_dir: Path | None = None) -> CallOutcome:
        got: list[AttemptRecord] = []
        why = "no attempt"
        for attempt in (1, 2):
            rel = Path("calls") / self.stage / str(n) / str(attempt)
            d = self.run.path / rel
            pb = prompt.encode()
            try:
                d.mkdir(parents=True, exist_ok=False)
                write_once(d / "prompt.md", pb)
            except OSError as exc:  # a full disk fails this attempt, never the run
                why = f"its prompt.md could not be written: {exc}"
                got.append(self._unwritten(n, attempt, rel, len(pb), why))
                continue
            budget = self.run.cfg.judge.read_bytes
            nav = self.run.navigator(budget, d / "reads.jsonl", run_dir)
            key = f"{n}/{attempt}"
            with self.meter.lock:
                self.meter.running[key] = nav
            t0 = time.monotonic()
            ec = EvaluatorCall(stage=self.stage, call=n, attempt=attempt, prompt=prompt, schema=schema, budget=budget,
                               directory=d, navigator=nav, argument=self.spec.argument, options=self.spec.options,
                               progress=self.meter.requests_of(key))
            try:
                result = self.backend.judge(ec)
                if not isinstance(result, CallResult):
                    result = CallResult(error=f"the {self.spec.name} backend returned {type(result).__name__}, not a CallResult")
            except AszError as exc:
                result = CallResult(error=str(exc), stderr=str(exc))
            except Exception as exc:  # a backend's crash fails the call, never the run
                result = CallResult(error=f"{type(exc).__name__}: {exc}", stderr=traceback.format_exc())
            secs = time.monotonic() - t0
            unkept = write_attempt_files(d, result)
            if unkept:  # what it answered is not on disk, so the attempt failed: its usage still counts
                result = attrs.evolve(result, answer=None, error=f"{result.error}; {unkept}" if result.error else unkept)
            answer = parse_answer(result)
            answer, cuts, deep = bound_answer(answer) if answer is not None else (None, [], too_deep(result))
            why = result.error or deep or (readable(answer) if answer is not None else "the answer holds no JSON object")
            if why is None and cuts:
                with self.lock:
                    self.run.cuts.setdefault(self.stage, []).extend(f"call {n}: {c}" for c in cuts)
            c = consumed_of(result)
            rec = AttemptRecord(call=n, attempt=attempt, directory=str(rel), prompt_bytes=len(pb),
                                status="ok" if why is None else ("failed" if result.error else "unreadable"), error=why,
                                read_bytes=nav.used, tool_calls=nav.calls, seconds=round(secs, 3), consumed=c)
            got.append(rec)
            with self.meter.lock:
                self.meter.running.pop(key, None)
                self.meter.so_far.pop(key, None)  # what it returned counts now, in its place
                self.meter.parts.append(c)
            with self.lock:
                self.attempts.append(rec)
                if result.model:
                    self.models.add(result.model)
                self.models.update(r.model for r in result.requests if r.model)
            if why is None:
                with self.meter.lock:
                    self.meter.ended += 1
                return CallOutcome(True, answer, None, tuple(got))
        with self.meter.lock:
            self.meter.ended += 1
        return CallOutcome(False, None, why, tuple(got))

    def _unwritten(self, n: int, attempt: int, rel: Path, prompt_bytes: int, why: str) -> AttemptRecord:
        """The record of an attempt that never reached its evaluator: its files could not be written."""
        rec = AttemptRecord(call=n, attempt=attempt, directory=str(rel), prompt_bytes=prompt_bytes, status="failed",
                            error=why, read_bytes=0, tool_calls=0, seconds=0.0, consumed=Consumed())
        with self.lock:
            self.attempts.append(rec)
        return rec

    def side_by_side(self, jobs: Sequence[Callable[[], CallOutcome]]) -> list[CallOutcome]:
        """Calls side by side, up to judge.concurrency at once, results in order."""
        with ThreadPoolExecutor(max_workers=self.run.cfg.judge.concurrency) as pool:
            return list(pool.map(lambda j: j(), jobs))

    def stage_run(self, mode: str, calls: int, started: str, t0: float) -> StageRun:
        att = sorted(self.attempts, key=lambda a: (a.call, a.attempt))
        return StageRun(mode=mode, calls=calls, attempts=len(att),
                        largest_prompt_bytes=max((a.prompt_bytes for a in att), default=0),
                        read_bytes=sum(a.read_bytes for a in att), consumed=add_consumed(a.consumed for a in att),
                        started=started, ended=now(), seconds=round(time.monotonic() - t0, 3), attempt_log=tuple(att))

    def evaluator_ref(self) -> EvaluatorRef:
        return evaluator_ref(self.run.registry, self.spec, self.models)


def evaluator_ref(registry: Any, spec: EvaluatorSpec, models: Iterable[str] = ()) -> EvaluatorRef:
    dist, version = "(built-in)", ""
    for p in registry.plugins():
        if p.kind == "evaluator backend" and p.name == spec.name:
            dist, version = p.distribution, p.version
    try:
        notes = tuple(registry.evaluator(spec.name).notes)
    except AszError:
        notes = ()
    return EvaluatorRef(spec=spec.spec, name=spec.name, distribution=dist, version=version, models=tuple(sorted(models)),
                        notes=notes)


def readable_with(key: str) -> Callable[[Any], str | None]:
    """A stage's test of an answer it can read: a JSON object holding a list under ``key`` (the
    stage's entries). What it says is why not; None when it can."""
    def readable(answer: Any) -> str | None:
        if not isinstance(answer, dict):
            return "the answer is not a JSON object"
        if not isinstance(answer.get(key), list):
            return f"the answer has no {key} list"
        return None
    return readable


def own_entries(entries: Iterable[Any], names: Callable[[Any], Sequence[str]], own: Collection[str],
                known: Collection[str], noun: str, call: int, checks: list[Check]) -> dict[str, Any]:
    """The one rule every stage sorts a call's answer entries by: each entry answers for the items
    it names (``names``: the string ids it names, empty when none). An entry naming none is left out
    (at ``call N``); a name that is not one of the call's own (``own``) is left out, as another
    call's when the stage knows it (``known``) and as no such item otherwise; a second entry for the
    same item is left out and the first kept. Returns item -> its entry, for the call's own items
    answered; a left-out check each, in ``checks``, in the same words in every stage."""
    out: dict[str, Any] = {}
    for e in entries:
        got = names(e)
        if not got:
            checks.append(Check("left_out", f"call {call}", f"an answer entry that names no {noun}"))
        for x in got:
            if x not in own:
                why = f"it is not one of this call's {noun}s" if x in known else f"no such {noun}"
                checks.append(Check("left_out", x, f"an answer for {x}: {why}"))
            elif x in out:
                checks.append(Check("left_out", x, f"a second answer for the same {noun}"))
            else:
                out[x] = e
    return out


def naming(key: str) -> Callable[[Any], list[str]]:
    """``names`` for :func:`own_entries` of entries naming one item under ``key``."""
    def names(e: Any) -> list[str]:
        v = e.get(key) if isinstance(e, dict) else None
        return [v] if isinstance(v, str) and v else []
    return names


def parse_answer(result: CallResult) -> Any:
    """The answer's JSON object: given as a value, or read from the raw text (a code fence and
    text around one object are tolerated). None when there is none. Every string of it is text
    a stage file can hold: a lone surrogate becomes U+FFFD."""
    if isinstance(result.answer, dict):
        return clean(result.answer)
    return json_object_of(clean_text(result.raw) if isinstance(result.raw, str) else "")


def too_deep(result: CallResult) -> str | None:
    """Why an answer's text that holds no JSON object is refused, when it is one nested past what
    any reader takes (orjson's 1,024 levels): said as such, not as no JSON."""
    raw = result.raw if isinstance(result.raw, str) else ""
    if raw.count("[") + raw.count("{") <= 1024:
        return None
    t = raw.strip()
    try:
        orjson.loads(t[t.find("{"): t.rfind("}") + 1] if "{" in t else t)
    except orjson.JSONDecodeError as exc:
        if "depth limit" in str(exc) or "ecursion" in str(exc):
            return f"the answer is nested deeper than {ANSWER_DEPTH} levels: refused; no stage's answer nests more than a few"
    return None


def clean_text(s: str) -> str:
    """``s`` with each lone surrogate replaced by U+FFFD (JSON and UTF-8 cannot hold one)."""
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        return s.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def clean(v: Any) -> Any:
    """A copy of a JSON value whose strings (keys included) are :func:`clean_text`; walked without
    recursion, so a value nested however deep is copied, not a crash."""
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(v, root, 0)]
    while stack:
        src, dst, key = stack.pop()
        if isinstance(src, str):
            dst[key] = clean_text(src)
        elif isinstance(src, dict):
            d: dict[Any, Any] = {}
            dst[key] = d
            for k, x in src.items():
                k = clean_text(k) if isinstance(k, str) else k
                d[k] = None
                stack.append((x, d, k))
        elif isinstance(src, (list, tuple)):
            lst: list[Any] = [None] * len(src)
            dst[key] = lst
            stack.extend((x, lst, i) for i, x in enumerate(src))
        else:
            dst[key] = src
    return root[0]


ANSWER_TEXT = 16_384
"""The longest string an evaluator's answer may hold (a statement, a reason, an excerpt: a few
hundred characters); a longer one is cut to it, saying so."""
ANSWER_ITEMS = 2_000
"""The most items a list of an answer may hold (citations of a criterion, criteria of a target,
entries of a call); the rest are cut, saying so."""
ANSWER_ALL_TEXT = 4_000_000
"""The most characters of text one answer may hold in all (a stage's answer holds tens of
kilobytes; labelling thousands of calls in one, a megabyte): past it, every later string is cut to
:data:`ANSWER_SHORT`, saying so. Without it, two thousand claims of 16,384 characters each, every
list within :data:`ANSWER_ITEMS`, made a stage file of 163 MB."""
ANSWER_ALL_ITEMS = 50_000
"""The most list items one answer may hold in all (thousands of criteria each citing thousands
of steps kept every list within :data:`ANSWER_ITEMS`); the lists past it are cut, saying so."""
ANSWER_SHORT = 200
"""What a string is cut to once the answer's text passed :data:`ANSWER_ALL_TEXT` (an id is shorter)."""
ANSWER_DEPTH = 32
"""The deepest an answer may nest (every stage's schema is a few levels deep); deeper, the answer
is refused with that reason (the converter would fail on it)."""


def bound_answer(v: Any) -> tuple[Any, list[str], str | None]:
    """An answer within the bounds: ``(the value, what was cut, None)``, or ``(None, [], why)`` for
    one nested past :data:`ANSWER_DEPTH`. A string past :data:`ANSWER_TEXT` and a list past
    :data:`ANSWER_ITEMS` are cut (each cut said, by where it was: ``$.targets[0].criteria:
    1,000,000 items, the first 2,000 kept``), and so is what comes once the whole answer holds
    :data:`ANSWER_ALL_TEXT` characters or :data:`ANSWER_ALL_ITEMS` list items: it is walked in
    order (without recursion), so what is kept is the answer's beginning. Values are copied only
    where cut. A 10 MB reason or a million citations would otherwise be rendered, kept and read
    back whole."""
    cuts: list[str] = []
    said = 0
    text = items = 0
    root: list[Any] = [v]
    stack: list[tuple[list[Any] | dict[Any, Any], Any, str, int]] = [(root, 0, "$", 0)]

    firsts: set[str] = set()

    def cut(what: str, kind: str | None = None) -> None:
        nonlocal said
        said += 1
        if kind is not None:  # a cut of the bound in all: said the first time, the later ones counted
            if kind in firsts:
                return
            firsts.add(kind)
            what += ", and every later one of the answer"
        if len(cuts) < 19:  # with the count of the others: the 20 notes a stage keeps of them
            cuts.append(what)

    while stack:
        holder, key, where, depth = stack.pop()
        x = holder[key]
        if isinstance(x, str):
            room = ANSWER_TEXT if text + ANSWER_TEXT <= ANSWER_ALL_TEXT else max(ANSWER_ALL_TEXT - text, ANSWER_SHORT)
            if len(x) > room:
                holder[key] = x[:room] + f"… (cut: {len(x):,} characters in all)"
                if room == ANSWER_TEXT:
                    cut(f"{where}: a text of {len(x):,} characters, cut to {room:,}")
                else:
                    cut(f"{where}: a text of {len(x):,} characters, cut to {room:,} (the answer holds "
                        f"{ANSWER_ALL_TEXT:,} characters in all)", "text")
            text += min(len(x), room)
        elif isinstance(x, (dict, list)):
            if depth >= ANSWER_DEPTH:
                return None, [], (f"the answer is nested deeper than {ANSWER_DEPTH} levels (at {where[:200]}): refused; "
                                  "no stage's answer nests more than a few")
            if isinstance(x, list):
                room = min(ANSWER_ITEMS, ANSWER_ALL_ITEMS - items)
                if len(x) > room:
                    if room == ANSWER_ITEMS:
                        cut(f"{where}: {len(x):,} items, the first {room:,} kept")
                    else:
                        cut(f"{where}: {len(x):,} items, the first {room:,} kept (the answer holds "
                            f"{ANSWER_ALL_ITEMS:,} list items in all)", "items")
                    x = holder[key] = x[:room]
                items += len(x)
                stack.extend((x, i, f"{where}[{i}]", depth + 1) for i in range(len(x) - 1, -1, -1))
            else:
                stack.extend((x, k, f"{where}.{str(k)[:40]}", depth + 1) for k in reversed(list(x)))
    if said > len(cuts):
        cuts.append(f"{said - len(cuts):,} more cuts")
    return root[0], cuts, None


def json_object_of(text: str) -> dict[str, Any] | None:
    """A JSON object from an answer's text: the whole text, or the text from its first ``{`` to
    its last ``}`` (a code fence or words around one object tolerated)."""
    t = text.strip()
    for cand in (t, t[t.find("{"): t.rfind("}") + 1] if "{" in t else ""):
        if not cand:
            continue
        try:
            v = orjson.loads(cand)
        except orjson.JSONDecodeError:
            continue
        if isinstance(v, dict):
            return v
    return None
