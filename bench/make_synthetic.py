"""Build one large synthetic Claude Code session (2.1 layout) from the corpus, for benchmarks.

    python bench/make_synthetic.py [OUT_DIR] [--size-mb 90] [--clip 256] [--hook-keep 0.15] [--seed 1]

Writes ``OUT_DIR/<session>.jsonl`` and ``OUT_DIR/<session>/subagents/agent-<id>.jsonl``
(default OUT_DIR: bench/out/, git-ignored). Nothing is copied into the repository; the corpus
is read in place.

How it is made:

* The corpus sessions (a main file plus its sub-agent files) are the units. Units are emitted
  in a seeded random order, cycling through all of them, until the files reach ``--size-mb``.
* Every emission gets its own id namespace: uuid, parentUuid, logicalParentUuid, leafUuid,
  messageId, sourceToolAssistantUUID, sourceToolUseID, toolUseID, parentToolUseID, requestId,
  message.id, tool_use ids, tool_use_id and agentId are rewritten with a deterministic mapping
  (blake2b of seed, emission and old id), the same inside a line's nested objects (progress
  ``data.message``, ``normalizedMessages``), in the main file and in the sub-agent files, so
  every join still holds. ``sessionId`` becomes the one synthetic session id. The first root
  line of an emission is chained to the last line of the previous one, and timestamps are
  shifted so emissions follow each other in time.
* Sub-agents go to ``<session>/subagents/`` as in 2.1: flat 2.0 ``agent-*.jsonl`` files, and
  the inline sidechain blocks of <= 2.0.27 files (made into files; the parent's Task result
  gets ``toolUseResult.agentId`` so the link holds). Sub-agent files whose parent session is
  not in the corpus are left out.
* Real sessions run at ~6 KB of transcript per step (big tool results); the benchmark asks for
  ~90 MB and ~50,000 steps (~1.8 KB a step), so every string value longer than ``--clip``
  characters is cut to that length (ids are never cut), and only a share (``--hook-keep``) of
  the ``hook_progress`` lines is kept (they make no steps; a line whose parent was left out
  gets that line's parent, so the tree still holds). ``--clip 0 --hook-keep 1`` keeps every
  line whole.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import re
import shutil
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

CORPUS = Path("/work/shared/corpus/claude-code")
HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "out"

# Keys whose string value is an id to rewrite (any depth).
_ID_KEYS = {"uuid", "parentUuid", "logicalParentUuid", "leafUuid", "messageId", "sourceToolAssistantUUID",
            "sourceToolUseID", "toolUseID", "parentToolUseID", "requestId", "tool_use_id"}
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_PREFIXED = re.compile(r"^(msg_|req_|toolu_|srvtoolu_|call_)([A-Za-z0-9]+)$")
_AGENT_TEXT = re.compile(r"agentId: ([0-9a-z-]+)")
_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


class Ids:
    """The old -> new id mapping of one emission (deterministic)."""

    def __init__(self, seed: int, emission: int) -> None:
        self.salt = f"{seed}:{emission}:".encode()
        self.map: dict[str, str] = {}

    def _h(self, old: str, n: int) -> bytes:
        return hashlib.blake2b(self.salt + old.encode(), digest_size=n).digest()

    def id(self, old: str) -> str:
        new = self.map.get(old)
        if new is not None:
            return new
        if _UUID.match(old):
            h = self._h(old, 16).hex()
            new = f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) % 4]}{h[17:20]}-{h[20:32]}"
        elif m := _PREFIXED.match(old):
            body = m.group(2)
            h = self._h(old, len(body))
            new = m.group(1) + "".join(_B62[b % 62] for b in h)
        else:
            new = "x" + self._h(old, 12).hex()
        self.map[old] = new
        return new

    def agent(self, old: str) -> str:
        key = "agent:" + old
        new = self.map.get(key)
        if new is None:
            h = self._h(key, 8).hex()
            # 2.1 ids: a + 16 hex (newer builds), acompact-<6 hex> for the compaction helper.
            new = f"acompact-{h[:6]}" if old.startswith("acompact-") else "a" + h[:16]
            self.map[key] = new
        return new


class Rewriter:
    def __init__(self, ids: Ids, session: str, shift: timedelta, clip: int) -> None:
        self.ids, self.session, self.shift, self.clip = ids, session, shift, clip

    def value(self, key: str | None, v: Any) -> Any:
        if isinstance(v, dict):
            return {k: self.value(k, x) for k, x in v.items()}
        if isinstance(v, list):
            return [self.value(None, x) for x in v]
        if not isinstance(v, str) or not v:
            return v
        if key in _ID_KEYS:
            return self.ids.id(v)
        if key == "id" and (_UUID.match(v) or _PREFIXED.match(v)):
            return self.ids.id(v)
        if key == "agentId":
            return self.ids.agent(v)
        if key == "sessionId":
            return self.session
        if key == "timestamp":
            return _shift(v, self.shift)
        if "agentId: " in v:
            v = _AGENT_TEXT.sub(lambda m: "agentId: " + self.ids.agent(m.group(1)), v)
        if self.clip and len(v) > self.clip:
            v = v[: self.clip]
        return v


def _parse_ts(s: Any) -> datetime | None:
    if not isinstance(s, str):
        return None
    try:
        return datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        return None


def _shift(s: str, d: timedelta) -> str:
    t = _parse_ts(s)
    if t is None:
        return s
    t = (t + d).astimezone(UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


# --- units ---------------------------------------------------------------------------------

class Unit:
    def __init__(self, main: Path) -> None:
        self.main = main
        self.agents: list[Path] = []

    @property
    def name(self) -> str:
        return str(self.main.relative_to(CORPUS))


def _lines(p: Path) -> list[dict[str, Any]]:
    out = []
    with open(p, "rb") as f:
        for raw in f:
            raw = raw.strip()
            if raw:
                try:
                    obj = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    continue
                if isinstance(obj, dict):
                    out.append(obj)
    return out


def find_units(corpus: Path) -> tuple[list[Unit], list[Path]]:
    files = sorted(corpus.rglob("*.jsonl"))
    mains = [p for p in files if not p.name.startswith("agent-")]
    agents = [p for p in files if p.name.startswith("agent-")]
    units = {p: Unit(p) for p in mains}
    by_session: dict[str, Unit] = {}
    for p in mains:  # a main file's own session is the id most of its lines carry
        counts: dict[str, int] = {}
        for o in _lines(p):
            s = o.get("sessionId")
            if isinstance(s, str):
                counts[s] = counts.get(s, 0) + 1
        if counts:
            by_session.setdefault(max(counts, key=lambda s: (counts[s], s)), units[p])
    skipped = []
    for a in agents:
        if a.parent.name == "subagents":
            main = a.parent.parent.parent / (a.parent.parent.name + ".jsonl")
            unit = units.get(main)
        else:
            first = next((o.get("sessionId") for o in _lines(a) if o.get("sessionId")), None)
            unit = by_session.get(first) if isinstance(first, str) else None
        if unit is None:
            skipped.append(a)
        else:
            unit.agents.append(a)
    return list(units.values()), skipped


def split_inline(lines: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    """Move inline sidechain blocks (<= 2.0.27: isSidechain, no agentId) out of a main file into
    agent files, linking each to the Task whose prompt it starts with (§5b)."""
    main: list[dict[str, Any]] = []
    blocks: dict[str, list[dict[str, Any]]] = {}
    task_prompt: dict[str, str] = {}  # tool_use id -> prompt
    block_of_prompt: dict[str, list[str]] = {}  # prompt -> block agent keys, in order
    cur: str | None = None
    for o in lines:
        if o.get("isSidechain") and not o.get("agentId"):
            if cur is None or (o.get("parentUuid") is None and o.get("type") == "user"):
                cur = "inline" + hashlib.blake2b(str(o.get("uuid")).encode(), digest_size=4).hexdigest()
                blocks[cur] = []
                msg = o.get("message") or {}
                c = msg.get("content")
                text = c if isinstance(c, str) else "\n".join(
                    b.get("text", "") for b in c or [] if isinstance(b, dict) and b.get("type") == "text")
                block_of_prompt.setdefault(text, []).append(cur)
            o = dict(o, agentId=cur)
            blocks[cur].append(o)
            continue
        cur = None
        msg = o.get("message") if isinstance(o.get("message"), dict) else {}
        content = msg.get("content")
        if isinstance(content, list):
            for b in content:
                if not isinstance(b, dict):
                    continue
                if b.get("type") == "tool_use" and b.get("name") in ("Task", "Agent"):
                    inp = b.get("input") if isinstance(b.get("input"), dict) else {}
                    if isinstance(inp.get("prompt"), str):
                        task_prompt[b.get("id")] = inp["prompt"]
                elif b.get("type") == "tool_result" and b.get("tool_use_id") in task_prompt:
                    keys = block_of_prompt.get(task_prompt[b["tool_use_id"]])
                    tur = o.get("toolUseResult")
                    if keys and isinstance(tur, dict) and "agentId" not in tur:
                        o = dict(o, toolUseResult=dict(tur, agentId=keys.pop(0)))
        main.append(o)
    return main, blocks


def thin_hooks(lines: list[dict[str, Any]], keep: float, rng: random.Random) -> list[dict[str, Any]]:
    """Leave out all but ``keep`` of the hook_progress lines, re-parenting what pointed at them."""
    if keep >= 1:
        return lines
    gone: dict[str, Any] = {}
    out = []
    for o in lines:
        parent = o.get("parentUuid")
        while parent in gone:
            parent = gone[parent]
        if (o.get("type") == "progress" and isinstance(o.get("data"), dict)
                and o["data"].get("type") == "hook_progress" and isinstance(o.get("uuid"), str)
                and rng.random() >= keep):
            gone[o["uuid"]] = parent
            continue
        if parent != o.get("parentUuid"):
            o = dict(o, parentUuid=parent)
        if o.get("logicalParentUuid") in gone:
            lp = o["logicalParentUuid"]
            while lp in gone:
                lp = gone[lp]
            o = dict(o, logicalParentUuid=lp)
        out.append(o)
    return out


def _agent_of_file(p: Path) -> str:
    return p.stem[len("agent-"):]


def build(out: Path, size_mb: float, clip: int, hook_keep: float, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    session = str(_session_id(seed))
    units, skipped = find_units(CORPUS)
    units.sort(key=lambda u: u.name)
    main_path = out / f"{session}.jsonl"
    sub_dir = out / session / "subagents"
    if main_path.exists():
        main_path.unlink()
    if (out / session).exists():
        shutil.rmtree(out / session)
    sub_dir.mkdir(parents=True, exist_ok=True)
    others = [p for p in out.glob("*.jsonl") if p != main_path]
    if others:
        print(f"warning: {out} holds other .jsonl files ({others[0].name}, ...); a collect of it reads them too", file=sys.stderr)

    target = int(size_mb * 1e6)
    total = emissions = lines_out = agent_files = 0
    clock = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    last_uuid: str | None = None
    cache: dict[Path, list[dict[str, Any]]] = {}

    def lines_of(p: Path) -> list[dict[str, Any]]:
        if p not in cache:
            cache[p] = _lines(p)
        return cache[p]

    with open(main_path, "wb") as mf:
        while total < target:
            order = units[:]
            rng.shuffle(order)
            for unit in order:
                if total >= target:
                    break
                main_lines, inline = split_inline(lines_of(unit.main))
                agent_sets = [(_agent_of_file(a), lines_of(a)) for a in unit.agents] + list(inline.items())
                main_lines = thin_hooks(main_lines, hook_keep, rng)
                agent_sets = [(k, thin_hooks(ls, hook_keep, rng)) for k, ls in agent_sets]
                stamps = [t for o in main_lines + [x for _, ls in agent_sets for x in ls]
                          if (t := _parse_ts(o.get("timestamp"))) is not None]
                shift = (clock - min(stamps)) if stamps else timedelta(0)
                rw = Rewriter(Ids(seed, emissions), session, shift, clip)
                buf = bytearray()
                chained = False
                for o in main_lines:
                    new = rw.value(None, o)
                    if not chained and "uuid" in new and new.get("parentUuid") is None and last_uuid:
                        new["parentUuid"] = last_uuid
                        chained = True
                    if isinstance(new.get("uuid"), str):
                        last_uuid = new["uuid"]
                    buf += orjson.dumps(new) + b"\n"
                    lines_out += 1
                mf.write(buf)
                total += len(buf)
                for old_agent, ls in agent_sets:
                    agent = rw.ids.agent(old_agent)
                    data = b"".join(orjson.dumps(rw.value(None, o)) + b"\n" for o in ls)
                    with open(sub_dir / f"agent-{agent}.jsonl", "wb") as af:
                        af.write(data)
                    total += len(data)
                    lines_out += len(ls)
                    agent_files += 1
                if stamps:
                    clock = max(stamps) + shift + timedelta(minutes=1)
                emissions += 1
    return {"session": session, "main": str(main_path), "subagents": agent_files, "emissions": emissions,
            "lines": lines_out, "bytes": total, "skipped": [str(p.relative_to(CORPUS)) for p in skipped]}


def _session_id(seed: int) -> str:
    h = hashlib.blake2b(f"asz-bench-synthetic:{seed}".encode(), digest_size=16).hexdigest()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--size-mb", type=float, default=90.0, help="stop once the files hold this many MB (default 90)")
    ap.add_argument("--clip", type=int, default=256, help="cut string values longer than this many characters (0: never)")
    ap.add_argument("--hook-keep", type=float, default=0.15, help="share of hook_progress lines kept (1: all)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    info = build(args.out.resolve(), args.size_mb, args.clip, args.hook_keep, args.seed)
    print(f"session {info['session']}: {info['bytes'] / 1e6:.1f} MB, {info['lines']} lines, "
          f"{info['emissions']} corpus sessions copied, {info['subagents']} sub-agent files")
    print(f"main file {info['main']}")
    if info["skipped"]:
        print(f"left out (parent session not in the corpus): {', '.join(info['skipped'])}")


if __name__ == "__main__":
    main()
