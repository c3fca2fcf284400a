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
        return "single", [Chunk(tuple(i.id for i in items), tuple(r for i in items for r in i.rows),
                                tuple(x for i in items for x in i.row_ids))]
    chunks: list[Chunk] = []
    cur: list[Item] = []
    size = 0

    def flush() -> None:
        nonlocal cur, size
        if cur:
            chunks.append(Chunk(tuple(i.id for i in cur), tuple(r for i in cur for r in i.rows),
                                tuple(x for i in cur for x in i.row_ids)))
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
