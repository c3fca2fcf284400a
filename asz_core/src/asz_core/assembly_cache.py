"""Assembled conversations kept per head, so a second look at the same head costs a file read.

A round's records never change, so the conversation assembled at a head is always the same for
the same assembly code: the cache key is the conversation, the round, its head digest and a
digest of the code that assembles. The store stays the only truth; a cache file that is
missing, stale or unreadable is simply assembled again. Files are written once, atomically.

A cache file is a pickle (the fastest to load of a conversation's many records), and a pickle
runs code when loaded: so each file begins with an HMAC-SHA256 of the rest, keyed with the home's
key (:mod:`.signed`, as every cache file is), and nothing is unpickled whose tag does not verify.
A file planted by anyone who cannot read the key is never loaded. The conversation's folder is
its id encoded (:mod:`.id_paths`), checked to stay inside ASZ_HOME (a ``cache`` folder leading
out of it is not used: the conversation is assembled, as with no cache), and cache files are
opened only as regular files, no link followed.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import pickle
import tempfile
from pathlib import Path

from . import assembly, records, store as store_mod
from .assembly import Conversation, assemble
from .id_paths import OutsideHome, child
from .regular import read_regular
from .signed import KEY_BYTES, TAG as _TAG, key as cache_key, tag as _tag
from .store import Round, Store

__all__ = ["load_assembled", "load_named", "cache_key", "KEY_BYTES"]

_CODE = hashlib.sha256(b"".join(Path(m.__file__).read_bytes() for m in (assembly, records, store_mod))).hexdigest()[:16]


def load_assembled(store: Store, conversation: str, rnd: Round, *, keep: bool = True) -> Conversation:
    """The conversation at ``rnd``: from the cache when it holds it, else assembled (and kept,
    unless ``keep`` is False: the ledger's summaries want its figures once, not the conversation)."""
    home = store.path.parent
    try:
        folder: Path | None = child(home, "cache", "assembly", ids=(conversation,))
    except OutsideHome:
        folder = None  # a cache folder leading out of the home: not used, the conversation is assembled
    path = folder / f"r{rnd.number}-{rnd.head[:16]}-{_CODE}.pickle" if folder else Path()
    key = cache_key(home) if folder else None
    try:
        if folder is None:
            raise FileNotFoundError
        data = read_regular(path, follow=False)
        body = memoryview(data)[_TAG:]
        if key is not None and len(data) > _TAG and hmac.compare_digest(data[:_TAG], _tag(key, body)):
            conv = pickle.loads(body)  # verified: written by asz with this home's key
            if isinstance(conv, Conversation) and conv.id == conversation and conv.round == rnd:
                return conv
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, TypeError, ValueError):
        pass
    # Copies are fixed at a head: a call another conversation landed first had landed before this
    # conversation's record of it, and landing order never changes.
    conv = assemble(conversation, store.runtime_of(conversation), rnd, store.records(conversation, rnd.number),
                    store.copied_calls(conversation))
    if keep and folder is not None:
        key = key if key is not None else cache_key(home, make=True)
        if key is not None:
            _keep(home, folder, path, conv, key)
    return conv


class _Signing:
    """A file pickle writes to that signs what passes (the pickle is never held whole twice)."""

    def __init__(self, f: object, key: bytes) -> None:
        self.f, self.mac = f, hmac.new(key, digestmod=hashlib.sha256)

    def write(self, b: bytes) -> int:
        self.mac.update(b)
        return self.f.write(b)  # type: ignore[attr-defined]


def _keep(home: Path, folder: Path, path: Path, conv: Conversation, key: bytes) -> None:
    tmp = None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        child(home, "cache", "assembly", ids=(conv.id,))  # still inside once made (no link put in its way)
        for old in folder.glob("*.pickle"):
            if not old.name.endswith(f"-{_CODE}.pickle"):
                old.unlink(missing_ok=True)  # made by other assembly code: never valid again
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(bytes(_TAG))  # the tag's place, written once the pickle is
            signer = _Signing(f, key)
            pickle.dump(conv, signer, protocol=pickle.HIGHEST_PROTOCOL)
            f.seek(0)
            f.write(signer.mac.digest())
        os.replace(tmp, path)
        tmp = None
    except (OSError, OutsideHome):
        pass  # a store we may read but not write to (or a full disk): no cache, same answer
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def load_named(store: Store, name: str, head: str | int | None = None) -> Conversation:
    """The conversation named by id, session id or a unique prefix of either, assembled at a round
    (default: the newest)."""
    from .gcpause import no_gc

    cid = store.resolve(name)
    rnd = store.round(cid, head)
    with no_gc():
        return load_assembled(store, cid, rnd)
