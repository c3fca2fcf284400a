"""The shortest prefix of each conversation's id that names it alone: what every table shows of an
id. Apart from conversations.py so that a table naming conversations (collect's rounds, the runs)
needs only the store, not the modules that assemble and price them."""

from __future__ import annotations

from collections.abc import Sequence

from .store import ConversationRow, Store

SHORT_ID = 8
"""Ids are shown by at least this many characters, more where another id or session id starts alike."""


def shortest_prefixes(rows: Sequence[ConversationRow], minimum: int = SHORT_ID) -> dict[str, str]:
    """Each conversation's shortest id prefix (at least ``minimum`` characters) that names it alone:
    no other conversation's id, nor any session id of another, starts with it (``Store.resolve``
    takes a prefix of either)."""
    names = sorted({(n, r.id) for r in rows for n in (r.id, *r.sessions)})
    need: dict[str, int] = {r.id: min(minimum, len(r.id)) for r in rows}
    # Sorted, a name's longest common prefix with a name of another conversation is with the
    # nearest such name on either side.
    for i, (name, conv) in enumerate(names):
        if name != conv:
            continue
        for step in (-1, 1):
            j = i + step
            while 0 <= j < len(names) and names[j][1] == conv:
                j += step
            if 0 <= j < len(names):
                need[conv] = max(need[conv], min(len(name), _common(name, names[j][0]) + 1))
    return {r.id: r.id[: need[r.id]] for r in rows}


def _common(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def short_ids(store: Store | None = None) -> dict[str, str]:
    """Each collected conversation's shortest unique id prefix (what tables show)."""
    return shortest_prefixes((store or Store.open()).conversations())


_NEAREST = (
    "SELECT id FROM conversations WHERE id < ? AND id != ? ORDER BY id DESC LIMIT 1",
    "SELECT id FROM conversations WHERE id > ? AND id != ? ORDER BY id LIMIT 1",
    "SELECT session FROM sessions WHERE session <= ? AND conversation != ? ORDER BY session DESC LIMIT 1",
    "SELECT session FROM sessions WHERE session >= ? AND conversation != ? ORDER BY session LIMIT 1",
)
"""The names of other conversations nearest to an id in sorted order, on either side, from the
tables' own keys (a name equal to it, another's session, is one of them)."""
FEW = 64
"""Up to this many ids, :func:`short_ids_of` asks for each one's neighbours; more, it reads them all."""


def short_ids_of(ids: Sequence[str], store: Store | None = None, minimum: int = SHORT_ID) -> dict[str, str]:
    """:func:`short_ids` of ``ids`` alone (what collect's table shows of the conversations it
    published): each id against the nearest names of other conversations on either side, four
    look-ups on the tables' keys, rather than every conversation of the store read and sorted (on
    1,850 conversations, 6 ms for a day's growth that published one)."""
    store = store or Store.open()
    ids = list(dict.fromkeys(ids))
    if len(ids) > FEW or type(store) is not Store:  # (another store's text order may be its locale's)
        every = short_ids(store)
        return {i: every[i] for i in ids if i in every}
    out: dict[str, str] = {}
    for cid in ids:
        need = min(minimum, len(cid))
        for q in _NEAREST:
            row = store.db.execute(q, (cid, cid)).fetchone()
            if row is not None:
                need = max(need, min(len(cid), _common(cid, row[0]) + 1))
        out[cid] = cid[:need]
    return out
