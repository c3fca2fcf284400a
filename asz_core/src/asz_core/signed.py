"""What asz keeps in ``ASZ_HOME/cache`` (collect's looks and listings, the ledger's summaries,
assembled conversations): files only asz's own writing makes usable.

A cache file is data asz made and reads back as the truth of what it would compute again, so one
put there by anyone else must never count: a summary planted with other money, a listing naming
files outside the folders given, a look that sends a file to no adapter (``{"files": {"x": 5}}``
made collect read nothing), a pickle that runs code. Each file begins with an HMAC-SHA256 of the
rest, keyed with 32 random bytes kept in ``ASZ_HOME/cache/assembly.key`` (mode 0600, made once:
two asz at once keep the first one made); a file whose tag does not verify is as good as
missing, and what it held is computed again. It is read only as a regular file, no link followed
(a FIFO would make the read wait forever, a link to ``/dev/zero`` never end), at most a bound of
bytes, and only inside ASZ_HOME once every link on the way is resolved (a ``cache`` folder
leading elsewhere is neither read nor written: a key there would be anyone's). Written once,
atomically: a temp file of this process's own, then renamed over the old one; a full disk or a
home that cannot be written keeps nothing, and leaves no temp file.

No rich, no pickle here: the lean command path (``asz ledger``) reads its summaries through it.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
from pathlib import Path

from .id_paths import OutsideHome, inside
from .regular import read_regular

KEY_BYTES = 32
TAG = hashlib.sha256().digest_size
KEY = "assembly.key"
"""The key's file in ``ASZ_HOME/cache`` (named when it signed only the assembly cache)."""


def key(home: Path, *, make: bool = False) -> bytes | None:
    """The key cache files are signed with (None when there is none, or it cannot be read as asz
    wrote it); with ``make``, one is made when missing, once (two asz at once keep the first one
    linked)."""
    path = Path(home) / "cache" / KEY
    known = _keys.get(os.fspath(home))
    if known is not None:
        return known
    try:
        inside(home, path)
        got = read_regular(path, KEY_BYTES + 1, follow=False)
        if len(got) == KEY_BYTES:
            _keys[os.fspath(home)] = got
            return got
        if not make:
            return None
        os.unlink(path)  # not a key asz made: replaced (it signed nothing asz will load)
    except FileNotFoundError:
        if not make:
            return None
    except (OSError, OutsideHome):
        return None
    tmp = path.with_name(f".{KEY}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        inside(home, path.parent)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(os.urandom(KEY_BYTES))
        try:
            os.link(tmp, path)  # never replaces a key another asz made meanwhile
        except FileExistsError:
            pass
        got = read_regular(path, KEY_BYTES + 1, follow=False)
    except (OSError, OutsideHome):
        return None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    if len(got) != KEY_BYTES:
        return None
    _keys[os.fspath(home)] = got
    return got


_keys: dict[str, bytes] = {}
"""The key of each home, once read in this process (a command reads a dozen cache files)."""


def tag(k: bytes, payload: bytes | memoryview) -> bytes:
    return hmac.new(k, payload, hashlib.sha256).digest()


def read(home: Path, path: Path, limit: int) -> bytes | None:
    """What ``path`` holds after its tag, when it is a regular file (no link) inside ``home`` of at
    most ``limit`` bytes whose tag the home's key verifies; else None (as if there were none)."""
    k = key(home)
    if k is None:
        return None
    try:
        inside(home, path)
        data = read_regular(path, TAG + limit + 1, follow=False)
    except (OSError, OutsideHome):
        return None
    if len(data) <= TAG or len(data) > TAG + limit:
        return None
    body = data[TAG:]
    return body if hmac.compare_digest(data[:TAG], tag(k, body)) else None


def write(home: Path, path: Path, data: bytes) -> bool:
    """``data`` kept at ``path`` (inside ``home``), signed, atomically; False when it could not be
    (no key can be made, the folder leads out of ``home``, a full disk): nothing is left then."""
    k = key(home, make=True)
    if k is None:
        return False
    # This process's own temp file (O_EXCL: never another's); one a killed process of the same id
    # left is no one's now, and goes.
    tmp = path.with_name(f".{path.name}-{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        inside(home, path.parent)  # made: no link in its way leads out
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(tmp, flags, 0o600)
        except FileExistsError:
            tmp.unlink()
            fd = os.open(tmp, flags, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(tag(k, data))
            f.write(data)
        os.replace(tmp, path)
        return True
    except (OSError, OutsideHome):
        with contextlib.suppress(OSError):
            tmp.unlink()
        return False
