"""Which ``asz.yaml`` a command reads, and the working folder's only once a person trusted it.

A configuration names programs asz runs (an evaluator's ``command``, ``fetch: {commands:}``),
servers it sends conversations and keys to (an API evaluator's ``base_url``, ``store:
postgresql://...``) and files it reads into a run (``sources:``). A folder a person works in can
be a repository someone else wrote: its ``asz.yaml`` must not steer asz by being there, as a
repository's ``.envrc`` does not steer direnv until it is allowed. So the file read is:

1. ``--config PATH``: the person named it;
2. ``./asz.yaml`` when it is trusted: ``asz config trust`` recorded its absolute path and SHA-256
   in ``$ASZ_HOME/trusted-configs.json`` (a changed file must be trusted again); an untrusted one
   stops the command in one line saying how to trust it or name it;
3. ``$ASZ_HOME/asz.yaml`` (the person's own);
4. none: the defaults.

Nothing here imports ruamel.yaml: the daily commands ask which file may name their store.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from pathlib import Path

import orjson

from .errors import AszError
from .regular import read_regular

HERE = "asz.yaml"
TRUSTED = "trusted-configs.json"
_MOST = 1 << 20
"""Bytes of the trust file read (thousands of entries); past it, nothing is trusted."""
_CONFIG_MOST = 16 << 20
"""Bytes of a configuration file digested: a larger one is no configuration."""


class UntrustedConfig(AszError):
    """The working folder's asz.yaml, not trusted (as it is now)."""


def asz_home() -> Path:
    return Path(os.environ.get("ASZ_HOME") or Path.home() / ".asz")


def digest(path: Path) -> str:
    """SHA-256 of a configuration file's bytes (read as a regular file, bounded)."""
    return hashlib.sha256(read_regular(path, at_most=_CONFIG_MOST)).hexdigest()


def trusted() -> dict[str, str]:
    """The trusted files (absolute path -> SHA-256); none when the trust file is missing, no
    regular file, a link, too large or not of the shape asz writes."""
    try:
        got = orjson.loads(read_regular(asz_home() / TRUSTED, at_most=_MOST, follow=False))
    except (OSError, orjson.JSONDecodeError):
        return {}
    if not isinstance(got, dict):
        return {}
    return {k: v for k, v in got.items() if isinstance(k, str) and isinstance(v, str)}


def is_trusted(path: Path) -> bool:
    try:
        return trusted().get(str(path.resolve())) == digest(path)
    except OSError:
        return False


def trust(path: Path | None = None) -> tuple[Path, str]:
    """Record ``path`` (default ``./asz.yaml``) as trusted as it is now: its absolute path and SHA-256."""
    p = Path(path or HERE).resolve()
    try:
        sha = digest(p)
    except OSError as exc:
        raise AszError(f"{p}: cannot trust it ({exc.strerror or exc})") from None
    known = trusted()
    known[str(p)] = sha
    home = asz_home()
    home.mkdir(parents=True, exist_ok=True)
    _replace(home / TRUSTED, orjson.dumps(known, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
    return p, sha


def _replace(path: Path, data: bytes) -> None:
    """``path`` written whole or not at all: a temp file of this process's own, renamed over it."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError as exc:  # a full disk names no path of itself
        raise AszError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass


_named: Path | None = None
"""The file ``--config`` named for this command (:func:`name`): the store's choice reads it too."""


def name(path: Path | None) -> None:
    """``--config PATH`` given: every part of the command reads that file (the judge's settings,
    and the store it names)."""
    global _named
    _named = path


def config_file(given: Path | None = None) -> Path | None:
    """The configuration file a command reads (see the module's docstring), or None."""
    given = given or _named
    if given is not None:
        return given
    here = Path(HERE)
    if here.is_file():
        if is_trusted(here):
            return here
        raise UntrustedConfig(
            f"{here.resolve()} is not trusted: a folder's asz.yaml can name programs asz runs and servers it "
            f"sends conversations to, so asz reads it only once you trust it (`asz config trust`, again after "
            f"it changes) or name it (`--config {HERE}`)")
    home = asz_home() / HERE
    return home if home.is_file() else None
