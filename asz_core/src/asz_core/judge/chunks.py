"""One call or several: a stage's rows planned into the calls that answer for them (spec: "One
call or several"). One call when every row fits ``judge.single_bytes`` (mode auto), else calls
of at most ``judge.chunk_bytes`` of whole items."""

from __future__ import annotations

from collections.abc import Sequence

from attrs import frozen

from . import config as configs


@frozen
class Item:
    """A thing a stage answers for (a talk, a target), with its rows as the tools show them."""

    id: str
    rows: tuple[bytes, ...]
    row_ids: tuple[str, ...]


@frozen
class Chunk:
    items: tuple[str, ...]
    rows: tuple[bytes, ...]
    own: tuple[str, ...]
    """Ids of every row the call answers for (those past the limit included)."""
    past: tuple[tuple[str, int, str, str], ...] = ()
    """An item larger than a chunk: (item, rows past the limit, first, last row id)."""

    @property
    def bytes(self) -> int:
        return sum(len(r) + 1 for r in self.rows)


def plan_chunks(items: Sequence[Item], cfg: configs.JudgeConfig) -> tuple[str, list[Chunk]]:
    """One call when the rows fit ``single_bytes`` (mode auto), else calls of at most
    ``chunk_bytes`` of whole items; an item larger than a chunk goes alone, its rows past the
    limit named by count."""
    total = sum(len(r) + 1 for it in items for r in it.rows)
    if cfg.mode == "single" or (cfg.mode == "auto" and total <= cfg.single_bytes):
        return "single", [_chunk_of(items)]
    chunks: list[Chunk] = []
    cur: list[Item] = []
    size = 0

    def flush() -> None:
        nonlocal cur, size
        if cur:
            chunks.append(_chunk_of(cur))
        cur, size = [], 0

    for it in items:
        n = sum(len(r) + 1 for r in it.rows)
        if n > cfg.chunk_bytes:
            flush()
            kept, used = [], 0
            for r in it.rows:
                if kept and used + len(r) + 1 > cfg.chunk_bytes:
                    break
                kept.append(r)
                used += len(r) + 1
            rest = it.row_ids[len(kept):]
            chunks.append(Chunk((it.id,), tuple(kept), it.row_ids,
                                ((it.id, len(rest), rest[0], rest[-1]),) if rest else ()))
            continue
        if cur and size + n > cfg.chunk_bytes:
            flush()
        cur.append(it)
        size += n
    flush()
    return "stream", chunks


OUTLINE_SHARE = (3, 4)
"""The part of a call's reading budget the outlines of what it labels may take (spec: "One call
or several": an evaluator that cannot open the work it labels labels it unread)."""


def plan_outlined(items: Sequence[Item], cfg: configs.JudgeConfig, outline: dict[str, int]) -> tuple[str, list[Chunk]]:
    """Calls for the stages that run side by side (sub-tasks, efficiency): planned as
    :func:`plan_chunks` plans them, and each call cut again so the outlines of the items it labels
    (``outline[item]``: the bytes of reading its talk whole with the ``talk`` tool) fit three
    quarters of ``judge.read_bytes``. An item whose outline alone is larger goes alone. ``single``
    forces one call."""
    mode, chunks = plan_chunks(items, cfg)
    if cfg.mode == "single":
        return mode, chunks
    limit = cfg.read_bytes * OUTLINE_SHARE[0] // OUTLINE_SHARE[1]
    by_id = {i.id: i for i in items}
    out: list[Chunk] = []
    for ch in chunks:
        if ch.past:  # an item larger than a chunk goes alone already
            out.append(ch)
            continue
        cur: list[Item] = []
        used = 0
        for iid in ch.items:
            n = outline.get(iid, 0)
            if cur and used + n > limit:
                out.append(_chunk_of(cur))
                cur, used = [], 0
            cur.append(by_id[iid])
            used += n
        if cur:
            out.append(_chunk_of(cur))
    return ("single" if len(out) == 1 and mode == "single" else "stream" if len(out) > 1 else mode), out


def _chunk_of(items: Sequence[Item]) -> Chunk:
    return Chunk(tuple(i.id for i in items), tuple(r for i in items for r in i.rows), tuple(x for i in items for x in i.row_ids))
