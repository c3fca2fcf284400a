"""Where the ledger keeps its summaries between runs: ``ASZ_HOME/cache/ledger/``, sixteen files,
each conversation's summaries in the one the first hex digit of its id's SHA-256 names.

A day's growth changes a conversation or two: only their files are written again (a sixteenth of
what a history keeps each), the others are read as they are. Each file is written once,
atomically (a file of this process's own, renamed over the old one), and holds, per price file
(SHA-256) and conversation, the one head its summary is of: a new round replaces its
conversation's summary instead of adding one more. What a summary is, and how it is written as
JSON, is the ledger's (:mod:`.ledger`); here only where it lives. Each file is signed with the
home's key (:mod:`.signed`): one written by anything but asz (another money planted, a FIFO, a
link to ``/dev/zero``, a file of gigabytes) is not read, and its summaries are computed again.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import orjson

from . import signed
from .id_paths import OutsideHome, inside

KEPT_BYTES = 256 << 20
"""The most a kept file is read of (a 1 GB history's sixteen make 4 MB); a larger one is not read."""
SHARDS = "0123456789abcdef"


def shard_of(conversation: str) -> str:
    return hashlib.sha256(conversation.encode("utf-8", "surrogatepass")).hexdigest()[0]


class Kept:
    """The summaries kept in ``folder`` by code that hashes to ``code``: each file read once, when a
    conversation of it is first asked for, changed in memory (:meth:`put`), and the files that
    changed written back (:meth:`write`)."""

    def __init__(self, folder: Path, code: str, *, read: bool = True) -> None:
        self.folder, self.code = folder, code
        self.home = folder.parent.parent  # (ASZ_HOME/cache/ledger)
        self.shards: dict[str, dict[str, Any]] = {}
        """shard -> {"prices": {sha: meta}, "summaries": {sha: {conversation: [head, dump]}}}."""
        self.changed: set[str] = set()
        self.read = read
        """Whether kept files are read: each the first time a conversation of it is asked for."""

    def _read(self, path: Path) -> dict[str, Any]:
        try:
            data = orjson.loads(signed.read(self.home, path, KEPT_BYTES) or b"null")
        except ValueError:
            data = None
        if not isinstance(data, dict) or data.get("code") != self.code:
            return {"prices": {}, "summaries": {}}
        prices, sums = data.get("prices"), data.get("summaries")
        return {"prices": prices if isinstance(prices, dict) else {}, "summaries": sums if isinstance(sums, dict) else {}}

    def _shard(self, conversation: str) -> dict[str, Any]:
        s = shard_of(conversation)
        got = self.shards.get(s)
        if got is None:  # read when first needed: a day's growth reads the files of what grew only
            got = self.shards[s] = self._read(self.folder / f"{s}.json") if self.read else {"prices": {}, "summaries": {}}
        return got

    def get(self, sha: str, conversation: str, head: str) -> Any:
        """The dump kept for ``conversation`` at ``head`` priced with ``sha``, or None."""
        got = self._shard(conversation)["summaries"].get(sha, {}).get(conversation)
        if isinstance(got, list) and len(got) == 2 and got[0] == head:
            return got[1]
        return None

    def put(self, sha: str, conversation: str, head: str, dump: Any) -> None:
        self._shard(conversation)["summaries"].setdefault(sha, {})[conversation] = [head, dump]
        self.changed.add(shard_of(conversation))

    def price_meta(self, sha: str) -> Any:
        """What was kept of the price file ``sha`` (its source and date), from any file (those not
        read yet are read only when none read holds it: a home of few conversations)."""
        got = next((sh["prices"][sha] for sh in self.shards.values() if sha in sh["prices"]), None)
        if got is None and self.read:
            for s in SHARDS:
                if s not in self.shards:
                    self.shards[s] = self._read(self.folder / f"{s}.json")
                    if sha in self.shards[s]["prices"]:
                        return self.shards[s]["prices"][sha]
        return got

    def put_price_meta(self, sha: str, meta: dict[str, Any]) -> None:
        for s in self.changed:
            self.shards[s]["prices"][sha] = meta

    def write(self) -> None:
        """The files that changed, each written whole over a temp file of this process's own. A
        home that cannot be written keeps nothing, and the numbers are the same."""
        for s in sorted(self.changed):
            try:
                data = orjson.dumps({"code": self.code, **self.shards[s]})
            except TypeError:  # a sum JSON cannot hold: not kept, computed again next time
                continue
            signed.write(self.home, self.folder / f"{s}.json", data)
        self.changed.clear()
        try:  # the one file earlier versions kept them all in: nothing reads it now
            (inside(self.home, self.folder.parent) / "ledger.json").unlink(missing_ok=True)
        except (OSError, OutsideHome):
            pass
