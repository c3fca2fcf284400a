"""A run's saved sources read back (work/sources/srcN/: manifest.json, copy, text.txt), below
every part that reads them: the navigation's ``sources`` tool, the reference and divergence
stages, the close and the reports. Written by :mod:`.sources`."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import orjson
from attrs import frozen

from ..convert import structure
from ..errors import AszError, RecordError
from ..regular import read_below

MANIFEST_VERSION = 1
SOURCES_DIR = Path("work") / "sources"
_ID = re.compile(r"^src[1-9][0-9]{0,5}$")


@frozen
class SourceText:
    """The text an evaluator reads of a source."""

    file: str
    bytes: int
    sha256: str
    lines: int
    kind: str
    """html, pdf, text, markdown or json."""
    extractor: str
    cut: bool = False
    """Longer than asz keeps of a text: cut, the rest never read."""


@frozen
class SourceSays:
    """What the source says of itself (each None when it says nothing)."""

    title: str | None = None
    revision: str | None = None
    published: str | None = None
    author: str | None = None


@frozen
class Manifest:
    """``work/sources/srcN/manifest.json``."""

    version: int
    id: str
    source: str
    """As it was given (a path resolved against where it was given)."""
    status: str
    """``saved``, or ``failed`` (``why`` says why; its comparison is unavailable)."""
    taken: str
    """When asz took the copy (UTC), never when what it says was knowable."""
    why: str | None = None
    fetcher: str | None = None
    """The fetcher plugin that fetched it."""
    how: str | None = None
    location: str | None = None
    content_type: str | None = None
    content_type_said: bool = False
    """The source said its content type (else asz took it from the name or the bytes)."""
    bytes: int | None = None
    """Bytes saved in ``copy``."""
    size: int | None = None
    """The source's whole size, when known."""
    cut: bool = False
    """The source was larger than a copy keeps: ``copy`` holds its first ``bytes``."""
    sha256: str | None = None
    """Of the bytes saved."""
    copy: str | None = None
    text: SourceText | None = None
    says: SourceSays = SourceSays()


@frozen
class Saved:
    """A source of a run as read back: its manifest, or why it does not read."""

    id: str
    manifest: Manifest | None
    problem: str | None = None

    @property
    def usable(self) -> bool:
        return self.manifest is not None and self.manifest.status == "saved" and self.manifest.text is not None

    @property
    def why_unavailable(self) -> str | None:
        if self.manifest is None:
            return self.problem
        return None if self.usable else (self.manifest.why or "it was not saved")


def read_saved(run_path: Path) -> list[Saved]:
    """Every source a run saved, by id (src1, src2, ...)."""
    base = run_path / SOURCES_DIR
    if not base.is_dir() or base.is_symlink():
        return []
    ids = sorted((p.name for p in base.iterdir() if _ID.match(p.name)), key=lambda s: int(s[3:]))
    out = []
    for sid in ids:
        try:  # from the run's folder down, no link followed (work/, sources/, srcN/ or the file)
            m = structure(orjson.loads(read_below(run_path, SOURCES_DIR / sid / "manifest.json", 1 << 20)), Manifest)
            out.append(Saved(sid, m) if m.id == sid else Saved(sid, None, f"its manifest names {m.id!r}"))
        except (OSError, ValueError, RecordError) as exc:
            out.append(Saved(sid, None, f"its manifest does not read ({type(exc).__name__}: {str(exc)[:200]})"))
    return out


def text_of(run_path: Path, sid: str) -> str:
    """A saved source's text, checked against its manifest's digest (a text changed since the copy
    is refused: what an evaluator reads is what was saved)."""
    got = {s.id: s for s in read_saved(run_path)}.get(sid)
    if got is None or not got.usable:
        raise AszError(f"no saved text of source {sid}" + (f": {got.why_unavailable}" if got else ""))
    t = got.manifest.text  # type: ignore[union-attr]
    if "/" in t.file or "\\" in t.file or t.file in ("", ".", ".."):  # type: ignore[union-attr]
        raise AszError(f"source {sid}'s manifest names {t.file!r} as its text: no file of its own folder")  # type: ignore[union-attr]
    b = read_below(run_path, SOURCES_DIR / sid / t.file, t.bytes + 1)  # type: ignore[union-attr]
    if hashlib.sha256(b).hexdigest() != t.sha256:  # type: ignore[union-attr]
        raise AszError(f"the saved text of source {sid} no longer matches its manifest's digest")
    return b.decode("utf-8", "replace")


__all__ = ["Manifest", "SourceText", "SourceSays", "Saved", "read_saved", "text_of", "SOURCES_DIR", "MANIFEST_VERSION"]
