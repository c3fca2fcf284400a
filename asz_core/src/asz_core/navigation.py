"""The navigation: how an evaluator reads a conversation (docs/navigation.md).

Plain functions, one per tool of decisions.md section 10, over one :class:`~asz_core.window.Window`:
``card``, ``talks``, ``talk``, ``step``, ``records``, ``diff``, ``operations``, ``search``,
``subtasks``, ``targets``, ``sources``. Each answer is one JSON page of at most 16 KiB as
written, names the head and says the reading budget left. A row too large for a page stands as
a note naming its item, which the same tool reads whole in slices (``item=…, offset=…``).

The reading budget (``judge.read_bytes``) is counted in bytes of answers exactly as written. An
answer that would read past it is refused whole, never cut; a refusal is not counted. Errors
(an unknown id, an offset past the end, a malformed argument) are answers like any other and
counted. Every call is logged with the bytes of its answer.

Nothing here writes: the store is read through a connection set ``query_only``, the run
directory is only read, and transcript text is data that is never interpreted.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import orjson

from .assembly import Conversation, Step, Talk
from .convert import INT64, int64
from .digits import ID_NUMBER
from .operations import operations as operations_of, record_files
from .window import LOOSE, UNATTRIBUTED, Window, descendants, raw_at

PAGE_BYTES = 16384
"""Every answer, as written, is at most this long."""
READ_BYTES = 131072
"""Default reading budget of one evaluator call (judge.read_bytes)."""
CLIP = 200
"""Inputs and replies in rows are clipped to this many bytes."""
SEARCH_BYTES = 2000
"""Conversation-wide search covers each step's first 2,000 bytes."""
SLICE_BYTES = 8192
"""A slice of a step's record or of a large row: at most this many bytes before JSON escaping."""
SEARCH_ROWS = 40
MAX_REFUSALS = 3

TOOLS = ("card", "talks", "talk", "step", "records", "diff", "operations", "search", "subtasks", "targets", "sources")

REFUSAL = ("This answer ({n} bytes) would read past your reading budget ({left} bytes left of {budget}); it is "
           "refused whole. Answer now with what you have read, and say unknown for what you could not read.")


class NavError(Exception):
    """A bad argument: answered as an error (counted against the budget), never a crash."""


def _clip(text: str | None, limit: int = CLIP) -> str | None:
    if text is None:
        return None
    b = text.encode("utf-8", "surrogatepass")
    return text if len(b) <= limit else b[:limit].decode("utf-8", "ignore") + "…"


def _dump(obj: Any) -> bytes:
    return orjson.dumps(obj, default=_default)


def _default(o: Any) -> Any:
    if isinstance(o, Decimal):
        return str(o)
    if isinstance(o, (set, frozenset, tuple)):
        return list(o)
    raise TypeError(type(o).__name__)


def _int(v: Any, name: str, lo: int = 0) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, str)):
        raise NavError(f"{name} must be an integer, got {v!r}")
    try:
        n = int(v)
    except ValueError:
        raise NavError(f"{name} must be an integer, got {v!r}") from None
    if n < lo:
        raise NavError(f"{name} must be at least {lo}, got {n}")
    return n


ARG_BYTES = 4096
"""The longest argument a tool takes (a search's words, an id, a path: a few hundred bytes at most);
a longer one is a bad argument, answered as an error and counted like any answer."""
MAX_ARGS = 16
"""The most arguments a call may name (every tool takes fewer than ten)."""
ARG_DEPTH = 8
"""The deepest an argument may nest (a tool takes a string, a number or a list of ids: one or two)."""


def depth_of(v: Any, bound: int = ARG_DEPTH + 1) -> int:
    """How deep ``v`` nests (a string or a number: 0), counted up to ``bound``; walked without recursion."""
    deepest, stack = 0, [(v, 0)]
    while stack:
        x, d = stack.pop()
        if isinstance(x, (list, dict)):
            if d + 1 >= bound:
                return bound
            deepest = max(deepest, d + 1)
            stack.extend((y, d + 1) for y in (x.values() if isinstance(x, dict) else x))
    return deepest


def _check_args(args: dict[str, Any]) -> None:
    """Arguments the answer and the log can hold, or a NavError saying which is not: too many, one
    named past 100 characters or longer than :data:`ARG_BYTES` (a list or an object as its text), a string with a lone surrogate
    (not Unicode), an integer past 64 bits."""
    if len(args) > MAX_ARGS:
        raise NavError(f"{len(args)} arguments: a tool takes at most {MAX_ARGS}")
    for k, v in args.items():
        if len(str(k)) > 100:
            raise NavError(f"an argument name of {len(str(k)):,} characters; a name is at most 100")
        if depth_of(v) > ARG_DEPTH:
            raise NavError(f"{_printable(str(k))[:100]}: an argument nested more than {ARG_DEPTH} levels deep; a tool's "
                           "argument is a string, a number or a list of ids")
        if size_of(v) > ARG_BYTES:
            raise NavError(f"{_printable(str(k))}: an argument of {size_of(v):,} characters; a tool's argument is at "
                           f"most {ARG_BYTES:,} (give an id, a page, or a few words)")
        name = _printable(str(k))[:100]
        if name != str(k)[:100]:
            raise NavError(f"an argument name is not valid Unicode (a lone surrogate): {name!r}")
        if isinstance(v, str) and _printable(v) != v:
            raise NavError(f"{name}: not valid Unicode (it holds a lone surrogate)")
        # An argument integer is a page, a part or an offset: one past 64 bits is no argument.
        if isinstance(v, int) and not isinstance(v, bool) and not int64(v):
            raise NavError(f"{name}: {v} is out of range (at most {INT64 - 1})")


def size_of(v: Any) -> int:
    """How long an argument is, in characters (a list or an object as its text)."""
    if isinstance(v, str):
        return len(v)
    if v is None or isinstance(v, (int, float, bool)):
        return 0
    try:
        return len(repr(v))
    except (RecursionError, ValueError):
        return ARG_BYTES + 1


def _printable(text: str) -> str:
    """``text`` with any lone surrogate written as its escape (``\\ud800``), so it can be written out."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _loggable(args: dict[str, Any]) -> dict[str, Any]:
    """Arguments as the log keeps them: JSON values, long strings clipped; a value the log could not
    hold (a lone surrogate, an integer past 64 bits, a list) as its text."""
    out = {}
    for k, v in args.items():
        if isinstance(v, int) and not isinstance(v, bool) and not int64(v):
            v = str(v)
        elif not isinstance(v, (str, int, float, bool, type(None))):
            v = _printable(repr(v))
        out[_printable(str(k))[:100]] = _clip(_printable(v), 500) if isinstance(v, str) else v
    return out


def _cut_utf8(b: bytes, end: int) -> int:
    """Move ``end`` back to a UTF-8 character boundary."""
    while 0 < end < len(b) and (b[end] & 0xC0) == 0x80:
        end -= 1
    return end


_FACTS: dict[int, tuple[Any, Any]] = {}
_FACTS_LOCK = threading.Lock()


def _window_facts(window: Window, repeats: Callable[[], dict[str, str]]) -> Any:
    """A window's steps by stream and its repeated tool steps, found once per window: a stage
    that runs many calls side by side makes a navigator for each (on the 90 MB conversation
    finding them took 42 ms a navigator)."""
    with _FACTS_LOCK:
        got = _FACTS.get(id(window))
        if got is not None and got[0]() is window:
            return got[1]
    by_stream: dict[str, list[Step]] = {}
    for s in window.conv.steps:
        if s.id in window.steps:
            by_stream.setdefault(s.stream, []).append(s)
    facts = (by_stream, repeats())
    with _FACTS_LOCK:
        key = id(window)
        _FACTS[key] = (weakref.ref(window, lambda _r, k=key: _FACTS.pop(k, None)), facts)
    return facts


class Navigator:
    """The tools over one window. ``call`` answers a tool by name, with the budget and the log."""

    def __init__(self, window: Window, store: Any, *, budget: int = READ_BYTES, run_dir: Path | None = None,
                 prices: Any = None, adapter: Any = None, log: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.w, self.conv, self.store = window, window.conv, store
        self.budget, self.used, self.refusals, self.calls = budget, 0, 0, 0
        self.run_dir = Path(run_dir).resolve() if run_dir else None
        self.adapter = adapter
        self.prices = prices
        self.log: list[dict[str, Any]] = []
        self._sink = log
        self._cache: dict[Any, Any] = {}
        self._fts: sqlite3.Connection | None = None
        self._ro = store.readonly()
        self._head = {"conversation": self.conv.id, "round": window.head, "digest": window.round.head}
        self._steps_by_stream, self._repeats = _window_facts(window, self._find_repeats)

    def resume(self, entries: list[dict[str, Any]]) -> None:
        """Go on from a log of this call's earlier reads (the server restarted mid-call: an agent CLI
        starts it again when it ended): what was read stays spent, the refusals stay counted."""
        for e in entries:
            if isinstance(e, dict):
                self.calls = max(self.calls, e.get("n") if type(e.get("n")) is int else 0)
                self.used = max(self.used, e.get("used") if type(e.get("used")) is int else 0)
                self.refusals += e.get("status") == "refused"

    def warm(self) -> None:
        """Build what the first calls would (the card, the row lists, the search index), so that no
        call waits for it; the server does this before it serves. Nothing is counted."""
        self._card()
        self._pages("talks", self._talk_rows, "talks")
        self._pages("subtasks", self._subtask_rows, "subtasks")
        self._pages("operations", self._operation_rows, "operations")
        self._index()

    def rows(self, tool: str) -> list[dict[str, Any]]:
        """The rows of ``talks`` or ``subtasks`` as those tools list them (for a stage's prompt,
        which gives its evaluator the rows it answers for as the tools show them). Not counted."""
        fn = {"talks": self._talk_rows, "subtasks": self._subtask_rows}[tool]
        key = ("rows", tool)
        if key not in self._cache:
            self._cache[key] = {r["id"]: r for r in fn()}
        return list(self._cache[key].values())

    def outline_bytes(self, talk: str) -> int:
        """Bytes of reading one talk's outline whole with the ``talk`` tool, every page (what a
        call that labels it needs of its budget to open it). Not counted."""
        first = self._talk(id=talk, page=1)
        return sum(len(self._envelope("talk", first if p == 1 else self._talk(id=talk, page=p)))
                   for p in range(1, first["pages"] + 1))

    def talk_row(self, kid: str) -> dict[str, Any] | None:
        """A main talk's row as ``talks`` shows it (None for a talk the window does not list)."""
        return self._row("talks", self._talk_rows, kid)

    def operation_rows(self) -> list[dict[str, Any]]:
        """The file operations as ``operations`` shows them, in landing order."""
        got = self._cache.get("operation_rows")
        if got is None:
            got = self._cache["operation_rows"] = self._operation_rows()
        return list(got)

    # --- the envelope, budget and log ---------------------------------------------------------

    @property
    def left(self) -> int:
        return self.budget - self.used

    @property
    def ended(self) -> bool:
        return self.refusals >= MAX_REFUSALS

    def call(self, tool: str, args: dict[str, Any] | None = None) -> str:
        """Answer tool ``tool`` with ``args``: the JSON text, as written."""
        t0 = time.perf_counter()
        tool = _printable(str(tool))[:100]  # written back in the answer and the log, whatever was asked
        shape = None  # arguments that are no JSON object (a plugin backend may pass a model's on as given)
        if args is None:
            args = {}
        elif isinstance(args, dict):
            args = dict(args)
        else:
            shape = f"the arguments are not a JSON object: {_clip(_printable(repr(args)), 200)}"
            args = {"(arguments)": _clip(_printable(repr(args)), 500)}
        self.calls += 1
        status = "ok"
        if self.ended:  # after three refusals nothing more is read
            text = _dump({"tool": tool, "head": self._head, "ended": True, "budget_left": self.left,
                          "message": f"the navigation ended after {MAX_REFUSALS} refused answers; answer with what you "
                                     "have read and say unknown for the rest"})
            self.log.append({"n": self.calls, "tool": tool, "args": _loggable(args), "bytes": len(text),
                             "status": "ended", "used": self.used, "left": self.left, "ms": 0.0})
            if self._sink:
                self._sink(self.log[-1])
            return text.decode()
        try:
            if shape is not None:
                raise NavError(shape)
            _check_args(args)
            if tool not in TOOLS:
                raise NavError(f"no tool named {tool!r}; tools: {', '.join(TOOLS)}")
            fn = getattr(self, "_" + tool)
            try:
                payload = fn(**{k: v for k, v in args.items() if v is not None})
            except TypeError as exc:
                raise NavError(f"{tool}: bad arguments {sorted(args)} ({exc})") from None
        except NavError as exc:
            payload, status = {"error": str(exc)}, "error"
        except Exception as exc:  # never a crash: an answer that says what failed, counted like any other
            payload, status = {"error": f"{tool} could not answer: {type(exc).__name__}: {_clip(str(exc), 300)}"}, "error"
        text = self._envelope(tool, payload)
        n = len(text)
        if n > self.left:
            self.refusals += 1
            status = "refused"
            text = _dump({"tool": tool, "head": self._head, "refused": True, "answer_bytes": n,
                          "budget_left": self.left, "refusals": self.refusals, "ends_after": MAX_REFUSALS,
                          "message": REFUSAL.format(n=n, left=self.left, budget=self.budget)})
        else:
            self.used += n
        entry = {"n": self.calls, "tool": tool, "args": _loggable(args), "bytes": len(text), "status": status,
                 "used": self.used, "left": self.left, "ms": round((time.perf_counter() - t0) * 1000, 3)}
        self.log.append(entry)
        if self._sink:
            self._sink(entry)
        return text.decode()

    def _envelope(self, tool: str, payload: dict[str, Any]) -> bytes:
        """The answer as written: the payload with the tool, the head and the budget left after it."""
        body = {"tool": tool, "head": self._head, "budget_left": self.left, **payload}
        top = len(_dump(body))  # the longest it can be: fewer bytes left never takes more digits
        for size in range(top, top - 4, -1):  # the number is inside the answer it counts: settle it
            body["budget_left"] = self.left - size
            b = _dump(body)
            if len(b) == size:
                break
        else:  # the digits would not settle: say what is left after ``top`` bytes and pad to exactly that
            body["budget_left"] = self.left - top
            b = _dump(body)
            b = b[:-1] + b" " * (top - len(b)) + b"}"
        if len(b) > PAGE_BYTES:  # never expected: every tool pages below the limit
            b = _dump({"tool": tool, "head": self._head, "budget_left": self.left,
                       "error": f"internal: answer of {len(b)} bytes exceeds a page; report this"})
        return b

    # --- paging -------------------------------------------------------------------------------

    def _pages(self, key: Any, rows_fn: Callable[[], list[dict[str, Any]]], item_tool: str,
               reserve: int = 2048) -> list[list[bytes]]:
        """Rows packed in order into pages; a row too large for a page becomes a note naming its
        item (``id``), read whole with ``item_tool`` in slices."""
        got = self._cache.get(key)
        if got is not None:
            return got
        limit = PAGE_BYTES - reserve
        pages: list[list[bytes]] = [[]]
        size = 0
        for row in rows_fn():
            b = _dump(row)
            if len(b) > limit:
                b = _dump({"id": row.get("id"), "note": f"this row is {len(b)} bytes, too large for a page; "
                           f"read it whole with {item_tool}(item={row.get('id')!r}, offset=0) in slices",
                           "row_bytes": len(b)})
            if pages[-1] and size + len(b) + 1 > limit:
                pages.append([])
                size = 0
            pages[-1].append(b)
            size += len(b) + 1
        self._cache[key] = pages
        return pages

    def _page(self, pages: list[list[bytes]], page: Any, name: str = "rows") -> dict[str, Any]:
        p = _int(page, "page", 1)
        if p > len(pages):
            raise NavError(f"page {p} is past the end ({len(pages)} page{'s' if len(pages) != 1 else ''})")
        rows = orjson.loads(b"[" + b",".join(pages[p - 1]) + b"]")
        return {"page": p, "pages": len(pages), name: rows}

    def _row(self, name: str, rows_fn: Callable[[], list[dict[str, Any]]], item: Any) -> dict[str, Any] | None:
        """One row of a row list by id (the list's rows kept by id once built)."""
        key = ("rows", name)
        by_id = self._cache.get(key)
        if by_id is None:
            by_id = self._cache[key] = {r["id"]: r for r in rows_fn()}
        return by_id.get(item) if isinstance(item, str) else None

    def _item(self, row: dict[str, Any] | None, item: str, offset: Any) -> dict[str, Any]:
        """One row whole, as JSON text, in slices by byte offset."""
        if row is None:
            raise NavError(f"no item {item!r} here")
        b = _dump(row)
        return self._slice(b, offset, {"item": item})

    def _slice(self, b: bytes, offset: Any, head: dict[str, Any]) -> dict[str, Any]:
        off = _int(offset, "offset")
        if off > len(b) or (off == len(b) and b):
            raise NavError(f"offset {off} is past the end ({len(b)} bytes)")
        size = SLICE_BYTES
        while True:
            end = _cut_utf8(b, min(len(b), off + size))
            text = b[off:end].decode("utf-8", "replace")
            out = {**head, "bytes": len(b), "offset": off, "next_offset": end if end < len(b) else None, "text": text}
            if len(_dump(out)) <= PAGE_BYTES - 1024 or size <= 64:
                return out
            size //= 2

    # --- shared facts ---------------------------------------------------------------------------

    def _find_repeats(self) -> dict[str, str]:
        """Tool steps that ran the same input again: step -> the earlier step it repeats."""
        seen: dict[tuple[str | None, bytes], str] = {}
        out: dict[str, str] = {}
        for s in self.conv.steps:
            if s.kind not in ("tool", "agent_call") or s.id not in self.w.steps:
                continue
            k = (s.name, orjson.dumps(s.request, option=orjson.OPT_SORT_KEYS, default=str))
            if k in seen:
                out[s.id] = seen[k]
            else:
                seen[k] = s.id
        return out

    def _marks(self, steps: list[Step]) -> dict[str, Any]:
        failed = [s.id for s in steps if s.kind in ("tool", "agent_call") and s.status == "failed"]
        repeated = [{"step": s.id, "same_as": self._repeats[s.id]} for s in steps if s.id in self._repeats]
        no_result = [s.id for s in steps if s.kind in ("tool", "agent_call") and s.status == "no_result"]
        return {"failed": failed, "repeated": repeated, "no_result": no_result}

    def _talk_steps(self, t: Talk) -> list[Step]:
        return [self.conv.step(s) for s in t.steps if s in self.w.steps]

    def _subtree(self, talk: Talk) -> list[Step]:
        """A main talk's steps with those of every sub-task it started (in landing order)."""
        steps = self._talk_steps(talk)
        for sid in descendants(self.conv, self.w.roots, [talk.id]):
            steps.extend(self._steps_by_stream.get(sid, ()))
        return sorted(steps, key=lambda s: s.seq)

    def _ledger(self) -> Any:
        if "ledger" not in self._cache:
            from . import ledger as L

            prices = self.prices or L.load_prices(None)
            self._cache["ledger"] = L.build(self.conv, prices)
        return self._cache["ledger"]

    def _tally(self, t: Any) -> dict[str, Any]:
        from .records import USAGE_TYPES

        return {"calls": t.calls, "tokens": {k: t.tokens[k] for k in USAGE_TYPES},
                "unknown": {k: v for k, v in t.unknown.items() if v},
                "money_usd": str(t.money.quantize(Decimal("0.000001"))) if t.money else "0",
                "unpriced_calls": t.unpriced, "incomplete_calls": t.incomplete}

    def _step_row(self, s: Step) -> dict[str, Any]:
        r: dict[str, Any] = {"id": s.id, "kind": s.kind}
        if s.kind == "input":
            r |= {"input": s.input, "source": s.source, "text": _clip(s.text), "bytes": s.size}
        elif s.kind in ("reply", "summary", "notice"):
            r |= {"text": _clip(s.text), "bytes": s.size}
            if s.notice:
                r["notice"] = s.notice
        elif s.kind == "model_call":
            u = s.usage
            r |= {"model": s.model, "usage": None if u is None else
                  {k: getattr(u, k) if getattr(u, k) is not None else "unknown" for k in ("input", "output", "cache_read", "cache_write")}}
            if s.replay_of:
                r["replay_of"] = s.replay_of  # counted once, as that call
            if s.copy_of:
                r["copy_of"] = s.copy_of  # counted in that conversation, which landed it first
        else:
            req = _dump(s.request).decode() if s.request is not None else None
            r |= {"name": s.name, "status": s.status, "request": _clip(req), "result": _clip(s.text), "result_bytes": s.size}
            if s.starts:
                r["starts"] = list(s.starts)
            if s.id in self._repeats:
                r["repeats"] = self._repeats[s.id]
        if s.ts:
            r["ts"] = s.ts
        return r

    def _visible_talk(self, kid: Any) -> Talk:
        if not isinstance(kid, str) or not re.fullmatch("k" + ID_NUMBER, kid):
            raise NavError(f"a talk id looks like k3, got {kid!r}")
        n = int(kid[1:])
        if n > len(self.conv.talks) or kid not in self.w.talks:
            raise NavError(f"no talk {kid} in this window (see talks and subtasks)")
        return self.conv.talk(kid)

    def _visible_step(self, sid: Any) -> Step:
        if not isinstance(sid, str) or not re.fullmatch("s" + ID_NUMBER, sid):
            raise NavError(f"a step id looks like s12, got {sid!r}")
        n = int(sid[1:])
        if n > len(self.conv.steps) or sid not in self.w.steps:
            raise NavError(f"no step {sid} in this window")
        return self.conv.step(sid)

    # --- the tools ------------------------------------------------------------------------------

    def _card(self) -> dict[str, Any]:
        if "card" in self._cache:
            return self._cache["card"]
        w, c = self.w, self.conv
        # The talks before the window are context: shown, marked before, never counted.
        steps = [s for s in w.shown_steps() if w.whole or (s.talk is not None and w.mark(s.talk) == "judged")]
        kinds: dict[str, int] = {}
        for s in steps:
            kinds[s.kind] = kinds.get(s.kind, 0) + 1
        subs = [st for st in c.streams if st.id != "m" and st.id in w.streams
                and (w.whole or w.roots.get(st.id) in w.judged)]
        led = self._ledger()
        judged = set(w.judged)
        from .ledger import Tally

        cost = Tally.sum(t.with_subagents for t in led.talks if t.id in judged)
        if w.whole:
            cost = Tally.sum([cost, led.loose, led.unattributed])
        m = self._marks(steps)
        out = {
            "conversation": c.id, "runtime": c.runtime,
            "landed": w.round.landed, "window": w.to_json(),
            "counts": {"main_talks_judged": len(w.judged), "main_talks_before": len(w.before), "subtasks": len(subs),
                       "steps": len(steps), "steps_by_kind": kinds,
                       "person_inputs": sum(1 for s in steps if s.kind == "input" and s.source != "agent"),
                       "failed_tool_steps": len(m["failed"]), "repeated_tool_steps": len(m["repeated"]),
                       "tool_steps_without_result": len(m["no_result"]),
                       "loose_steps": len(c.loose) if w.whole else 0,
                       "unattributed_streams": sum(1 for st in subs if w.roots.get(st.id) == UNATTRIBUTED)},
            "cost": {"of": "judged talks with their sub-tasks" + (", loose work and unattributed streams" if w.whole else ""),
                     **self._tally(cost), "prices": led.prices.name if hasattr(led.prices, "name") else None},
            "tools": "talks (overview), talk (one talk's steps), step (one step whole), search, subtasks, operations, "
                     "records, diff, targets, sources",
        }
        self._cache["card"] = out
        return out

    def _talk_rows(self) -> list[dict[str, Any]]:
        led = self._ledger()
        costs = {t.id: t for t in led.talks}
        rows = []
        for kid in (*self.w.before, *self.w.judged):
            t = self.conv.talk(kid)
            mark = "before" if kid in self.w.before else "judged"
            inputs = [self.conv.step(s) for s in t.inputs]
            reply = self.conv.step(t.reply) if t.reply else None
            row: dict[str, Any] = {
                "id": kid, "mark": mark, "start": t.start, "end": t.end,
                "inputs": [{"id": s.input, "step": s.id, "source": s.source, "text": _clip(s.text), "bytes": s.size} for s in inputs],
                "reply": {"step": reply.id, "text": _clip(reply.text), "bytes": reply.size} if reply else None,
                "steps": len(t.steps),
                "subtasks": descendants(self.conv, self.w.roots, [kid]),
            }
            if mark == "judged" and kid in costs:
                row["cost"] = self._tally(costs[kid].with_subagents)
            row |= self._marks(self._subtree(t))
            rows.append(row)
        if self.w.whole and self.conv.loose:
            ls = [self.conv.step(s) for s in self.conv.loose]
            rows.append({"id": LOOSE, "mark": LOOSE, "steps": len(ls), "note": "main-stream work before the first input; "
                         "read it with talk(id='loose')", "cost": self._tally(led.loose), **self._marks(ls)})
        return rows

    def _talks(self, page: Any = 1, item: Any = None, offset: Any = 0) -> dict[str, Any]:
        """Main talks: before (context) and judged, with inputs and replies clipped."""
        if item is not None:
            return self._item(self._row("talks", self._talk_rows, item), item, offset)
        return self._page(self._pages("talks", self._talk_rows, "talks"), page, "talks")

    def _talk(self, id: Any = None, page: Any = 1) -> dict[str, Any]:  # noqa: A002 - the tool's argument name
        """One talk's steps in outline (a main talk, a sub-task's talk, or ``loose``)."""
        if id is None:
            raise NavError("talk needs id, e.g. talk(id='k3')")
        head, steps = self._talk_outline(id)
        pages = self._pages(("talk", id), lambda: [self._step_row(s) for s in steps], "talk")
        return {"talk": head, **self._page(pages, page, "steps")}

    def _talk_outline(self, id: Any) -> tuple[dict[str, Any], list[Step]]:  # noqa: A002
        if id == LOOSE:
            if not self.w.whole:
                raise NavError("loose work is shown only in runs over the whole conversation")
            return {"id": LOOSE, "mark": LOOSE}, [self.conv.step(s) for s in self.conv.loose]
        t = self._visible_talk(id)
        steps = self._talk_steps(t)
        return {"id": t.id, "stream": t.stream, "mark": self.w.mark(t.id), "start": t.start, "end": t.end,
                "steps": len(steps)}, steps

    def outline(self, talk: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """One talk's head and its steps in outline, whole (the ``talk`` tool pages the same rows):
        what ``asz show CONV --talk k3`` prints. Counts nothing against the budget."""
        try:
            head, steps = self._talk_outline(talk)
        except NavError as exc:
            from .errors import NotFound

            # said for a person at the command line: the evaluator's hint names tools they do not have
            said = str(exc).replace(" in this window (see talks and subtasks)", "")
            raise NotFound(f"{said} in conversation {self.conv.id[:8]}; `asz show {self.conv.id[:8]}` lists its talks") from None
        return head, [self._step_row(s) for s in steps]

    def _step(self, id: Any = None, part: Any = 1, offset: Any = 0) -> dict[str, Any]:  # noqa: A002
        """One step whole: its records as written (part n = its n-th record), in slices by offset."""
        if id is None:
            raise NavError("step needs id, e.g. step(id='s12')")
        s = self._visible_step(id)
        p = _int(part, "part", 1)
        if p > len(s.records):
            raise NavError(f"part {p} is past the end: step {s.id} has {len(s.records)} record(s)")
        seq = s.records[p - 1]
        b = self._raw(seq)
        info = self._step_row(s)
        info.pop("result", None)
        info.pop("request", None)
        info.pop("text", None)
        info |= {"talk": s.talk, "stream": s.stream, "mark": self.w.mark(s.talk) if s.talk else LOOSE,
                 "parts": len(s.records)}
        return {"step": info, **self._slice(b, offset, {"part": p, "record_seq": seq})}

    def _raw(self, seq: int) -> bytes:
        key = ("raw", seq)
        b = self._cache.get(key)
        if b is None:
            b = raw_at(self._ro, self.conv.id, seq, self.w.round.number, self.w.cut, self.w.captures)
            if len(self._cache) < 4096:
                self._cache[key] = b
        return b

    def _records(self, step: Any = None) -> dict[str, Any]:
        """Change and execution records of a step (captured per tool call by the recorder)."""
        if step is None:
            raise NavError("records needs step, e.g. records(step='s12')")
        s = self._visible_step(step)
        rows = []
        for ev in (*s.changes, *s.executions):  # the view holds only those written by the window's end
            row = {"record": ev["seq"], "kind": ev.get("e")}
            if ev.get("e") == "change":
                row["files"] = [{k: f.get(k) for k in ("path", "kind", "before", "after", "binary", "ignored", "oversized")
                                 if f.get(k) is not None} for f in (ev.get("files") or ())][:50]
                if ev.get("cut"):
                    row["unlisted"] = ev.get("count")
            else:
                row.update({k: ev.get(k) for k in ("command", "exit_code", "duration_ms", "output_bytes", "output_digest")
                            if ev.get(k) is not None})
            rows.append(row)
        out: dict[str, Any] = {"step": s.id, "records": rows}
        if not rows:
            out["note"] = ("no change or execution record was captured for this step: what it changed is "
                           "not_captured, never unchanged")
        return out

    def _diff(self, record: Any = None, page: Any = 1) -> dict[str, Any]:
        """A change record's diffs, paged by line."""
        if record is None:
            raise NavError("diff needs record, the number of a change record (see records)")
        seq = _int(record, "record")
        if not any(ev["seq"] == seq and ev.get("e") == "change"
                   for s in self.conv.steps if s.id in self.w.steps for ev in s.changes):
            raise NavError(f"no change record {record!r} in this view (records(step=...) lists a step's records)")
        pages = self._pages(("diff", seq), lambda: self._diff_rows(seq), "diff", reserve=2048)
        return {"record": seq, **self._page(pages, page, "lines")}

    def _diff_rows(self, seq: int) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        for f in record_files(self._raw(seq)):
            rows.append({"id": f"{seq}:{f['path']}", "file": f["path"], "kind": f.get("kind")})
            d = f.get("diff")
            if isinstance(d, str):
                rows.extend({"id": f"{seq}:{f['path']}:{n}", "line": line} for n, line in enumerate(d.splitlines(), 1))
            else:
                rows.append({"id": f"{seq}:{f['path']}:-", "line": None,
                             "note": "no diff kept (binary, ignored by .gitignore, oversized, or not text)"})
        return rows

    def _operation_rows(self) -> list[dict[str, Any]]:
        fr = getattr(self.adapter, "file_requests", None)
        whole = self.w.whole
        rows: list[dict[str, Any]] = []
        for op in operations_of(self.conv, fr):  # ids over the whole view, in landing order: the same at one head
            if (op.step is None and not whole) or (op.step is not None and op.step not in self.w.steps):
                continue
            row = {k: v for k, v in op.to_json().items() if v not in (None, [], ())}
            row["mark"] = self.w.mark(op.talk) if op.talk else LOOSE
            rows.append(row)
        return rows

    def _operations(self, page: Any = 1) -> dict[str, Any]:
        """File operations the record shows: captured changes, and files tool requests name."""
        out = self._page(self._pages("operations", self._operation_rows, "operations"), page, "operations")
        out["note"] = ("shows: capture = a change record names the file; request = only the tool's request names it "
                       "(an attempt, not a change: see status); unlisted = a record whose file list was cut. History, "
                       "not a net diff")
        return out

    def _search(self, query: Any = None, step: Any = None, page: Any = 1) -> dict[str, Any]:
        """Search each step's first 2,000 bytes across the window, or one named step's whole text."""
        if not isinstance(query, str) or not query.strip():
            raise NavError("search needs query, some words to find")
        if len(query) > 500:
            raise NavError("query is longer than 500 characters")
        if step is not None:
            return self._search_step(query, step, page)
        words = re.findall(r"\w+", query)
        if not words:
            raise NavError(f"query {query!r} holds no word to search for")
        key = ("search", tuple(w.lower() for w in words))
        ids = self._cache.get(key)
        if ids is None:
            db = self._index()
            fts = " ".join('"' + w.replace('"', '""') + '"' for w in words[:20])
            ids = [r[0] for r in db.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY rowid", (fts,))]
            self._cache[key] = ids
        p = _int(page, "page", 1)
        pages = max(1, -(-len(ids) // SEARCH_ROWS))
        if p > pages:
            raise NavError(f"page {p} is past the end ({pages} pages)")
        chunk = ids[(p - 1) * SEARCH_ROWS:p * SEARCH_ROWS]
        rows = []
        if chunk:
            db = self._index()
            marks = ",".join("?" * len(chunk))
            fts = " ".join('"' + w.replace('"', '""') + '"' for w in words[:20])
            snip = dict(db.execute(f"SELECT rowid, snippet(t, 0, '[', ']', '…', 16) FROM t WHERE t MATCH ? AND rowid IN ({marks})",
                                   (fts, *chunk)))
            for i in chunk:
                s = self.conv.steps[i - 1]
                rows.append({"step": s.id, "kind": s.kind, "talk": s.talk, "mark": self.w.mark(s.talk) if s.talk else LOOSE,
                             "snippet": _clip(snip.get(i, ""), 240)})
        return {"query": query, "covers": "each step's first 2,000 bytes", "matches": len(ids), "page": p, "pages": pages,
                "rows": rows}

    def _index(self) -> sqlite3.Connection:
        if self._fts is None:
            db = sqlite3.connect(":memory:", check_same_thread=False)
            db.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='unicode61 remove_diacritics 2')")
            rows = []
            for s in self.conv.steps:
                if s.id not in self.w.steps:
                    continue
                body = s.text or ""
                if s.kind in ("tool", "agent_call"):
                    body = f"{s.name} {_dump(s.request).decode() if s.request is not None else ''}\n{body}"
                b = body.encode("utf-8", "surrogatepass")[:SEARCH_BYTES]
                rows.append((int(s.id[1:]), b.decode("utf-8", "ignore")))
            db.executemany("INSERT INTO t(rowid, body) VALUES (?, ?)", rows)
            self._fts = db
        return self._fts

    def _search_step(self, query: str, step: Any, page: Any) -> dict[str, Any]:
        s = self._visible_step(step)
        key = ("search_step", s.id, query.lower())
        hits = self._cache.get(key)
        if hits is None:
            hits = []
            needles = {query.lower().encode()}
            esc = orjson.dumps(query.lower())[1:-1]
            needles.add(esc)
            for part, seq in enumerate(s.records, 1):
                b = self._raw(seq)
                low = b.lower()
                found: set[int] = set()
                for nd in needles:
                    i = low.find(nd)
                    while i >= 0 and len(found) < 10000:
                        found.add(i)
                        i = low.find(nd, i + 1)
                for i in sorted(found):
                    a, z = _cut_utf8(b, max(0, i - 80)), _cut_utf8(b, min(len(b), i + len(query) + 80))
                    hits.append({"part": part, "record_seq": seq, "offset": i,
                                 "context": b[a:z].decode("utf-8", "replace")})
            self._cache[key] = hits
        p = _int(page, "page", 1)
        pages = max(1, -(-len(hits) // SEARCH_ROWS))
        if p > pages:
            raise NavError(f"page {p} is past the end ({pages} pages)")
        return {"query": query, "step": s.id, "covers": "the step's whole recorded text (read a match with "
                "step(id, part, offset))", "matches": len(hits), "page": p, "pages": pages,
                "rows": hits[(p - 1) * SEARCH_ROWS:p * SEARCH_ROWS]}

    def _subtask_rows(self) -> list[dict[str, Any]]:
        led = self._ledger()
        tallies = {s.id: s.tally for s in led.streams}
        decisions = self._decisions()
        rows = []
        for st in self.conv.streams:
            if st.id == "m" or st.id not in self.w.streams:
                continue
            steps = self._steps_by_stream.get(st.id, [])
            root = self.w.roots.get(st.id, UNATTRIBUTED)
            first_input = next((s for s in steps if s.kind == "input"), None)
            last_reply = next((s for s in reversed(steps) if s.kind == "reply"), None)
            mark = "before" if root in self.w.before else (root if root in (LOOSE, UNATTRIBUTED) else "judged")
            row: dict[str, Any] = {
                "id": st.id, "kind": st.kind, "talks": list(st.talks), "mark": mark, "root": root,
                "started_by": list(st.started_by), "parent": st.parent, "unattributed": st.unattributed,
                "input": {"step": first_input.id, "text": _clip(first_input.text), "bytes": first_input.size} if first_input else None,
                "reply": {"step": last_reply.id, "text": _clip(last_reply.text), "bytes": last_reply.size} if last_reply else None,
                "steps": len(steps),
            }
            if mark != "before":
                row["cost"] = self._tally(tallies[st.id]) if st.id in tallies else None
            row |= self._marks(steps)
            if st.id in decisions:
                row["decision"] = decisions[st.id]
            rows.append(row)
        return rows

    def _subtasks(self, page: Any = 1, item: Any = None, offset: Any = 0) -> dict[str, Any]:
        """Child streams (sub-agents) the window shows, with the sub-task stage's decisions once it ran."""
        if item is not None:
            return self._item(self._row("subtasks", self._subtask_rows, item), item, offset)
        out = self._page(self._pages("subtasks", self._subtask_rows, "subtasks"), page, "subtasks")
        note = self._stage_note("subtasks")
        if note:
            out["decisions"] = note
        return out

    # --- what a run directory holds -------------------------------------------------------------

    def _run_json(self, rel: str) -> Any:
        """A JSON file of the run directory, read only from inside it and only when it is a
        regular file (None when absent or not JSON)."""
        if self.run_dir is None:
            return None
        from .judge.stage_files import load_json

        try:
            return load_json(self.run_dir / rel, self.run_dir)[1]  # no link followed, no '..'
        except (OSError, ValueError):
            return None

    def _stage(self, stage: str) -> Any:
        """The run's ``stages/<stage>.json`` exactly as its stages read it (:mod:`.judge.stage_files`,
        pinned to this window's conversation, head and window): a file of another head, of another
        stage or of the wrong shape is unreadable, and its content is not used."""
        if ("stage", stage) not in self._cache:
            from .judge.stage_files import MISSING, Pin, StageRead, read

            self._cache[("stage", stage)] = read(self.run_dir, stage, Pin.of_window(self.w)) if self.run_dir \
                else StageRead(stage, MISSING)
        return self._cache[("stage", stage)]

    def _stage_note(self, stage: str) -> str | None:
        """What the answer says of a stage whose file is not used, as the stages say it: not run
        yet (missing), ``could not be read (why)``, or ``is failed (why)`` / ``is skipped (why)``."""
        got = self._stage(stage)
        return f"the {stage} stage has not run" if got.missing else got.not_used_note()

    def _decisions(self) -> dict[str, Any]:
        if "decisions" not in self._cache:
            got = self._stage("subtasks")
            self._cache["decisions"] = {d["stream"]: _decision_row(d) for d in (got.data.get("subtasks", ()) if got.usable else ())}
        return self._cache["decisions"]

    def _targets(self, id: Any = None, page: Any = 1, offset: Any = 0) -> dict[str, Any]:  # noqa: A002
        """The targets catalogue, or one target whole by id."""
        got = self._stage("targets")
        targets = list(got.data.get("targets", ())) if got.usable else []
        note = self._stage_note("targets") or ("the targets stage found no target" if not targets else None)
        if not targets:
            if id is not None:
                raise NavError(f"no target {id!r}: {note}")
            return {"targets": [], "note": note}
        judged = self._achievement()
        if id is not None:
            t = next((t for t in targets if t.get("id") == id), None)
            if t is not None and id in judged:
                t = {**t, "achievement": judged[id]}
            return self._item(t, str(id), offset)
        rows = [{"id": t.get("id"), "statement": _clip(str(t.get("statement", "")), 400), "talks": t.get("talks"),
                 "state": t.get("state")} | ({"level": judged[t["id"]]["level"]} if t.get("id") in judged else {})
                for t in targets]
        out = self._page(self._pages("targets", lambda: rows, "targets"), page, "targets")
        said = None if self._stage("achievement").missing else self._stage_note("achievement")
        return out | ({"achievement": said} if said else {})

    def _achievement(self) -> dict[str, dict[str, Any]]:
        """Per target the achievement stage judged: its level, basis and the steps it cited (what
        the sub-task and efficiency stages are given), once that stage ran."""
        if "achievement" not in self._cache:
            got = self._stage("achievement")
            rows = got.data.get("achievement", ()) if got.usable else ()
            self._cache["achievement"] = {r["target"]: {"level": r.get("level"), "basis": r.get("basis"),
                                                        "cited": r.get("cited") or []}
                                          for r in rows if r["judged"]}
        return self._cache["achievement"]

    def _sources(self, id: Any = None, line: Any = 1, page: Any = 1) -> dict[str, Any]:  # noqa: A002
        """Saved sources: the list (each with its manifest's facts, a failed one with why), or one
        source's text from line ``line`` on, each line numbered, as many whole lines as fit a page."""
        from .judge.source_files import read_saved, text_of

        saved = read_saved(self.run_dir) if self.run_dir else []
        if id is None:
            rows = [_source_row(s) for s in saved]
            if not rows:
                return {"sources": [], "note": "this run was given no sources"}
            return self._page(self._pages("sources", lambda: rows, "sources"), page, "sources")
        got = next((s for s in saved if s.id == id), None) if isinstance(id, str) else None
        if got is None:
            raise NavError(f"no source {_clip(_printable(str(id)), 80)!r}" + ("" if saved else ": this run was given no sources"))
        if not got.usable:
            raise NavError(f"source {id} has no saved text: {got.why_unavailable}; its comparison is unavailable")
        key = ("source", id)
        if key not in self._cache:
            self._cache[key] = text_of(self.run_dir, id).split("\n")[:-1]  # type: ignore[arg-type]
        lines = self._cache[key]
        first = _int(line, "line", 1)
        if first > max(len(lines), 1):
            raise NavError(f"line {first} is past the end ({len(lines)} lines)")
        out, size, n = [], 0, first
        while n <= len(lines):
            b = f"{n}: {lines[n - 1]}\n"
            size += len(b.encode("utf-8"))
            if out and size > PAGE_BYTES - 2048:
                break
            out.append(b)
            n += 1
        return {"source": id, "lines": len(lines), "from": first, "to": n - 1,
                "next_line": n if n <= len(lines) else None, "text": "".join(out)}


def _source_row(s: Any) -> dict[str, Any]:
    """A source as the list shows it: its manifest's facts, or why it is unavailable."""
    m = s.manifest
    if m is None:
        return {"id": s.id, "status": "unreadable", "why": s.problem, "comparison": "unavailable"}
    row: dict[str, Any] = {"id": s.id, "source": _clip(m.source, 400), "status": m.status, "taken": m.taken,
                           "content_type": m.content_type, "bytes": m.bytes, "cut": m.cut, "sha256": m.sha256}
    if m.text is not None:
        row["lines"] = m.text.lines
        row["text_sha256"] = m.text.sha256
    said = {k: _clip(v, 300) for k, v in (("title", m.says.title), ("author", m.says.author),
                                          ("published", m.says.published), ("revision", m.says.revision)) if v}
    if said:
        row["says"] = said
    if not s.usable:
        row |= {"why": m.why, "comparison": "unavailable"}
    return {k: v for k, v in row.items() if v is not None}


def _decision_row(d: dict[str, Any]) -> dict[str, Any]:
    """What a sub-task row says of the sub-task stage's decision: the values kept, and the steps
    misled work and the label rest on."""
    def value(k: str) -> Any:
        v = d.get(k)
        return v.get("value") if isinstance(v, dict) else v

    lab = d.get("label") if isinstance(d.get("label"), dict) else {}
    out = {"judged": d.get("judged"), "outcome": value("outcome"), "report": value("report"), "used": value("used"),
           "dispatch": value("dispatch"), "misled": d.get("misled"), "charge": d.get("charge"),
           "label": lab.get("label"), "label_step": lab.get("step"), "why": lab.get("why")}
    return {k: v for k, v in out.items() if v is not None}


# --- plain functions, one per tool -------------------------------------------------------------

def card(nav: Navigator) -> str:
    """The overview: conversation, head, window, counts, cost."""
    return nav.call("card")


def talks(nav: Navigator, page: int = 1, item: str | None = None, offset: int = 0) -> str:
    """Main talks (before and judged), inputs and replies clipped to 200 bytes, cost, failed and repeated tool steps."""
    return nav.call("talks", {"page": page, "item": item, "offset": offset})


def talk(nav: Navigator, id: str, page: int = 1) -> str:  # noqa: A002
    """One talk's steps in outline."""
    return nav.call("talk", {"id": id, "page": page})


def step(nav: Navigator, id: str, part: int = 1, offset: int = 0) -> str:  # noqa: A002
    """One step whole, its records in slices."""
    return nav.call("step", {"id": id, "part": part, "offset": offset})


def records(nav: Navigator, step: str) -> str:
    """Change and execution records of a step."""
    return nav.call("records", {"step": step})


def diff(nav: Navigator, record: str, page: int = 1) -> str:
    """A change paged by line."""
    return nav.call("diff", {"record": record, "page": page})


def operations(nav: Navigator, page: int = 1) -> str:
    """File operations as tool requests name them."""
    return nav.call("operations", {"page": page})


def search(nav: Navigator, query: str, step: str | None = None, page: int = 1) -> str:
    """Search the window (each step's first 2,000 bytes) or one step's whole text."""
    return nav.call("search", {"query": query, "step": step, "page": page})


def subtasks(nav: Navigator, page: int = 1, item: str | None = None, offset: int = 0) -> str:
    """Sub-tasks (child streams), with the subtasks stage's decisions once it ran."""
    return nav.call("subtasks", {"page": page, "item": item, "offset": offset})


def targets(nav: Navigator, id: str | None = None, page: int = 1, offset: int = 0) -> str:  # noqa: A002
    """The targets catalogue, or one target whole by id."""
    return nav.call("targets", {"id": id, "page": page, "offset": offset})


def sources(nav: Navigator, id: str | None = None, line: int = 1, page: int = 1) -> str:  # noqa: A002
    """The saved sources, or one source's text in numbered lines from ``line`` on."""
    return nav.call("sources", {"id": id, "line": line, "page": page})


def open_navigator(conversation: str, head: str | int | None = None, window: str | None = None, *,
                   budget: int = READ_BYTES, run_dir: Path | None = None, store: Any = None,
                   log: Callable[[dict[str, Any]], None] | None = None) -> Navigator:
    """A navigator over a collected conversation's window at a head."""
    from .errors import AszError
    from .registry import Registry
    from .store import Store, asz_home, store_there
    from .window import build

    if store is None and not store_there():  # never create a store only to read it
        raise AszError(f"no asz store at {asz_home() / 'asz.db'}: run asz collect first (or set ASZ_HOME)")
    st = store or Store.open()
    w = build(st, conversation, head, window)
    try:
        adapter = Registry().runtime(w.conv.runtime)
    except Exception:
        adapter = None
    return Navigator(w, st, budget=budget, run_dir=run_dir, adapter=adapter, log=log)


def outline_of(name: str, talk: str, head: str | int | None = None, *, store: Any = None) -> tuple[Conversation, dict[str, Any], list[dict[str, Any]]]:
    """One talk of a collected conversation in outline (the ``talk`` tool's rows, whole): the
    conversation, the talk's head and its steps; what ``asz show CONV --talk k3`` prints."""
    from .store import Store
    from .window import whole

    st = store or Store.open()
    w = whole(st, name, head)  # the assembly asz show reads, cached
    head_row, steps = Navigator(w, st).outline(talk)
    return w.conv, head_row, steps


__all__ = ["Navigator", "NavError", "TOOLS", "PAGE_BYTES", "READ_BYTES", "card", "talks", "talk", "step", "records",
           "diff", "operations", "search", "subtasks", "targets", "sources", "open_navigator", "outline_of", "Conversation"]
