"""The sources a run is judged against: fetched through the fetcher plugins and saved, once,
before any evaluator runs (spec: "Judging against a source"; docs/sources.md).

Each source is saved in the run's ``work/sources/srcN/``, every file written once, atomically:

* ``copy``: the fetched bytes (at most ``fetch.max_bytes``; a larger source is saved cut, and
  the manifest says so);
* ``text.txt``: the text an evaluator reads (:mod:`.source_text`), in numbered lines it cites;
* ``manifest.json`` (last, so a manifest means its files are there): where the source came
  from, when asz took the copy, how it was fetched (which fetcher, in its words), its content
  type, size and SHA-256, the text's own digest, and what the source says of its revision, its
  publication and its author.

A source that cannot be fetched, or whose text cannot be taken out, is kept as failed with why:
its comparison is unavailable, which is not the same as no contradiction found. The time of the
copy says when asz took it, never when what it says was knowable.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs
from attrs import frozen

from ..convert import dumps
from ..errors import ConfigError
from ..interfaces import Fetched, FetchError, FetchSettings, SourceFetcher
from . import config as configs
from .context import now, write_once
from .source_files import MANIFEST_VERSION, SOURCES_DIR, Manifest, SourceSays, SourceText
from .source_text import Extracted, NoText, extract, kind_of

_TYPES = {"html": "text/html", "pdf": "application/pdf", "json": "application/json", "markdown": "text/markdown",
          "text": "text/plain"}


# --- fetching ---------------------------------------------------------------------------------

def settings_for(cfg: configs.Config, fetcher: str) -> FetchSettings:
    f = cfg.fetch
    options: dict[str, Any] = {"commands": list(f.commands)} if fetcher == "command" else dict(f.plugins.get(fetcher) or {})
    return FetchSettings(max_bytes=int(f.max_bytes), connect_timeout=float(f.connect_timeout),
                         read_timeout=float(f.read_timeout), total_seconds=float(f.total_seconds),
                         redirects=f.redirects, options=options)


def fetchers(registry: Any) -> list[SourceFetcher]:
    """Every installed fetcher, in the order they are asked (``order``, then name)."""
    classes = [registry.fetcher(p.name) for p in registry.plugins() if p.kind == "source fetcher"]
    return [c() for c in sorted(classes, key=lambda c: (getattr(c, "order", 50), c.name))]


def resolve(source: str, base: Path | None = None) -> str:
    """A source as a run keeps it: a plain path made absolute (against ``base``, else the
    working folder; ``~`` expanded); a URL or ``file:`` URL as given."""
    from ..fetchers import scheme_of

    s = source.strip()
    if not s:
        raise ConfigError("a source is empty: give a path or a URL")
    if scheme_of(s) is None:
        p = Path(os.path.expanduser(s))
        return str(p if p.is_absolute() else (base or Path.cwd()) / p)
    return s


def fetch(source: str, cfg: configs.Config, registry: Any) -> tuple[str | None, Fetched | None, str | None]:
    """(the fetcher's name, what it fetched, why it could not). Nothing raised for a source."""
    for f in fetchers(registry):
        settings = settings_for(cfg, f.name)
        try:
            if not f.accepts(source, settings):
                continue
        except Exception as exc:  # noqa: BLE001 - a third party's fetcher that fails to answer is skipped, said
            return f.name, None, f"the {f.name} fetcher failed to say whether it fetches this: {type(exc).__name__}: {exc}"
        try:
            got = f.fetch(source, settings)
        except FetchError as exc:
            return f.name, None, str(exc) or "the fetcher gave no reason"
        except Exception as exc:  # noqa: BLE001 - a fetcher's crash fails the source, never the run
            return f.name, None, f"the {f.name} fetcher failed: {type(exc).__name__}: {exc}"
        if not isinstance(got, Fetched) or not isinstance(got.data, bytes):
            return f.name, None, f"the {f.name} fetcher returned {type(got).__name__}, not a Fetched with bytes"
        if len(got.data) > settings.max_bytes:  # a fetcher that kept more than its bound: asz cuts it
            got = attrs.evolve(got, data=got.data[: settings.max_bytes], cut=True)
        return f.name, got, None
    return None, None, "no fetcher takes it (a file, an http or https URL, or a prefix or scheme fetch.commands names)"


@frozen
class Copy:
    """A fetched source before it is saved: its manifest, bytes and text."""

    manifest: Manifest
    data: bytes | None
    text: str | None


def take(sid: str, source: str, cfg: configs.Config, registry: Any) -> Copy:
    """Fetch ``source`` and take out its text; a source that fails is a failed manifest."""
    taken = now()
    name, got, why = fetch(source, cfg, registry)
    if got is None:
        return Copy(Manifest(MANIFEST_VERSION, sid, source, "failed", taken, why=why, fetcher=name), None, None)
    data = got.data
    guessed = _TYPES[kind_of(got.content_type, got.location or source, data)]
    base = dict(version=MANIFEST_VERSION, id=sid, source=source, taken=taken, fetcher=name, how=got.how,
                location=got.location, content_type=got.content_type or guessed, content_type_said=bool(got.content_type),
                bytes=len(data), size=got.size, cut=got.cut, sha256=hashlib.sha256(data).hexdigest(), copy="copy")
    says = dict(revision=got.revision, published=got.published, author=got.author)
    try:
        ex: Extracted = extract(data, got.content_type, got.location or source)
    except NoText as exc:
        why = f"its text cannot be taken out: {exc}" + (" (the copy was cut, which may be why)" if got.cut else "")
        return Copy(Manifest(status="failed", why=why, says=SourceSays(**says), **base), data, None)
    except Exception as exc:  # noqa: BLE001 - an extractor's crash on hostile bytes fails the source, never the run
        return Copy(Manifest(status="failed", why=f"its text cannot be taken out: {type(exc).__name__}: {exc}",
                             says=SourceSays(**says), **base), data, None)
    tb = ex.text.encode("utf-8")
    text = SourceText("text.txt", len(tb), hashlib.sha256(tb).hexdigest(), ex.text.count("\n"), ex.kind, ex.extractor, ex.cut)
    says = {k: v or getattr(ex, k, None) for k, v in says.items()}
    return Copy(Manifest(status="saved", text=text, says=SourceSays(title=ex.title, **says), **base), data, ex.text)


def save(run_path: Path, copy: Copy) -> Manifest:
    """Write a copy into the run's work/sources/srcN/, each file once, the manifest last."""
    d = run_path / SOURCES_DIR / copy.manifest.id
    if copy.data is not None:
        write_once(d / "copy", copy.data)
    if copy.text is not None:
        write_once(d / "text.txt", copy.text.encode("utf-8"))
    write_once(d / "manifest.json", dumps(copy.manifest, indent=True) + b"\n")
    return copy.manifest


def save_all(run_path: Path, sources: Sequence[str], cfg: configs.Config, registry: Any,
             say: Callable[[str], None] | None = None) -> list[Manifest]:
    """Fetch and save every source, in the order given (src1, src2, ...)."""
    out = []
    for n, source in enumerate(sources, 1):
        m = save(run_path, take(f"src{n}", source, cfg, registry))
        if say:
            say(f"source {m.id}: " + (f"saved, {m.bytes:,} bytes" + (" (cut)" if m.cut else "") + f", {m.text.lines:,} lines of text"
                                       if m.status == "saved" and m.text else f"failed: {m.why}") + f" ({m.source})")
        out.append(m)
    return out


def sources_of(cfg: configs.Config, given: Iterable[str]) -> list[str]:
    """The run's sources: asz.yaml's (relative to the file), then the flags' (relative to the
    working folder), each once."""
    base = Path(cfg.source).parent if cfg.source else None
    got = [resolve(s, base) for s in cfg.sources] + [resolve(s) for s in given]
    return list(dict.fromkeys(got))


__all__ = ["Copy", "take", "save", "save_all", "fetch", "fetchers", "resolve", "sources_of", "settings_for"]
