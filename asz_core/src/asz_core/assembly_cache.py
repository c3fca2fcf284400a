"""Assembled conversations kept per head, so a second look at the same head costs a file read.

A round's records never change, so the conversation assembled at a head is always the same for
the same assembly code: the cache key is the conversation, the round, its head digest and a
digest of the code that assembles. The store stays the only truth; a cache file that is
missing, stale or unreadable is simply assembled again. Files are written once, atomically.

A cache file is a pickle (the fastest to load of a conversation's many records), and a pickle
runs code when loaded: so each file begins with an HMAC-SHA256 of the rest, keyed with a random
key asz keeps in ``ASZ_HOME/cache/assembly.key`` (mode 0600), and nothing is unpickled whose tag
does not verify. A file planted by anyone who cannot read the key is never loaded. The
conversation's folder is its id encoded (:mod:`.id_paths`), checked to stay inside ASZ_HOME,
and cache files are opened only as regular files, no link followed.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import pickle
import secrets
import tempfile
from pathlib import Path

from . import assembly, records, store as store_mod
from .assembly import Conversation, assemble
from .id_paths import child
from .regular import read_regular
from .store import Round, Store

KEY_BYTES = 32
_TAG = hashlib.sha256().digest_size

_CODE = hashlib.sha256(b"".join(Path(m.__file__).read_bytes() for m in (assembly, records, store_mod))).hexdigest()[:16]


def load_assembled(store: Store, conversation: str, rnd: Round, *, keep: bool = True) -> Conversation:
    """The conversation at ``rnd``: from the cache when it holds it, else assembled (and kept,
    unless ``keep`` is False: the ledger's summaries want its figures once, not the conversation)."""
    home = store.path.parent
    folder = child(home, "cache", "assembly", ids=(conversation,))
    path = folder / f"r{rnd.number}-{rnd.head[:16]}-{_CODE}.pickle"
    key = cache_key(home)
    try:
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
    if keep:
        key = key if key is not None else cache_key(home, make=True)
        if key is not None:
            _keep(home, folder, path, conv, key)
    return conv


def _tag(key: bytes, payload: bytes | memoryview) -> bytes:
    return hmac.new(key, payload, hashlib.sha256).digest()


class _Signing:
    """A file pickle writes to that signs what passes (the pickle is never held whole twice)."""

    def __init__(self, f: object, key: bytes) -> None:
        self.f, self.mac = f, hmac.new(key, digestmod=hashlib.sha256)

    def write(self, b: bytes) -> int:
        self.mac.update(b)
        return self.f.write(b)  # type: ignore[attr-defined]


def cache_key(home: Path, *, make: bool = False) -> bytes | None:
    """The key the cache's files are signed with (None when there is none, or it cannot be read
    as asz wrote it); with ``make``, one is made when missing, once (two asz at once keep the
    first one linked)."""
    path = home / "cache" / "assembly.key"
    try:
        key = read_regular(path, follow=False)
        if len(key) == KEY_BYTES:
            return key
        if not make:
            return None
        os.unlink(path)  # not a key asz made: replaced (it signed nothing asz will load)
    except FileNotFoundError:
        if not make:
            return None
    except OSError:
        return None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(secrets.token_bytes(KEY_BYTES))
            os.chmod(tmp, 0o600)
            try:
                os.link(tmp, path)  # never replaces a key another asz made meanwhile
            except FileExistsError:
                pass
        finally:
            os.unlink(tmp)
        key = read_regular(path, follow=False)
    except OSError:
        return None
    return key if len(key) == KEY_BYTES else None


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
    except OSError:
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
