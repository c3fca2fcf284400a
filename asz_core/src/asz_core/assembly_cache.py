"""Assembled conversations kept per head, so a second look at the same head costs a file read.

A round's records never change, so the conversation assembled at a head is always the same for
the same assembly code: the cache key is the conversation, the round, its head digest and a
digest of the code that assembles. The store stays the only truth; a cache file that is
missing, stale or unreadable is simply assembled again. Files are written once, atomically.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from pathlib import Path

from . import assembly, records, store as store_mod
from .assembly import Conversation, assemble
from .store import Round, Store

_CODE = hashlib.sha256(b"".join(Path(m.__file__).read_bytes() for m in (assembly, records, store_mod))).hexdigest()[:16]


def load_assembled(store: Store, conversation: str, rnd: Round, *, keep: bool = True) -> Conversation:
    """The conversation at ``rnd``: from the cache when it holds it, else assembled (and kept,
    unless ``keep`` is False: the ledger's summaries want its figures once, not the conversation)."""
    folder = store.path.parent / "cache" / "assembly" / conversation
    path = folder / f"r{rnd.number}-{rnd.head[:16]}-{_CODE}.pickle"
    try:
        with open(path, "rb") as f:
            conv = pickle.load(f)  # written by asz itself, in the user's own ASZ_HOME, as the store is
        if isinstance(conv, Conversation) and conv.id == conversation and conv.round == rnd:
            return conv
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, TypeError, ValueError):
        pass
    # Copies are fixed at a head: a call another conversation landed first had landed before this
    # conversation's record of it, and landing order never changes.
    conv = assemble(conversation, store.runtime_of(conversation), rnd, store.records(conversation, rnd.number),
                    store.copied_calls(conversation))
    if keep:
        _keep(folder, path, conv)
    return conv


def _keep(folder: Path, path: Path, conv: Conversation) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("*.pickle"):
            if not old.name.endswith(f"-{_CODE}.pickle"):
                old.unlink(missing_ok=True)  # made by other assembly code: never valid again
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            pickle.dump(conv, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except OSError:
        pass  # a store we may read but not write to: no cache, same answer


def load_named(store: Store, name: str, head: str | int | None = None) -> Conversation:
    """The conversation named by id, session id or a unique prefix of either, assembled at a round
    (default: the newest)."""
    from .gcpause import no_gc

    cid = store.resolve(name)
    rnd = store.round(cid, head)
    with no_gc():
        return load_assembled(store, cid, rnd)
