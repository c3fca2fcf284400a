"""The text an evaluator reads of a saved source, and what the source says of itself (spec:
"Judging against a source"; docs/sources.md).

A page's text and its metadata (title, author, date) are taken out with a library made for it:
HTML with trafilatura, PDF with pypdf, never with hand-written patterns. Plain text, Markdown
and JSON are read as they are. The text is then laid out in numbered lines an evaluator cites:
a line longer than :data:`LINE_CHARS` is broken into lines of at most that many characters,
so every line fits a page of the navigation whole and a citation of a line is a citation of a
bounded piece of text.
"""

from __future__ import annotations

import io
import re
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from attrs import frozen

from ..terminal_text import inert

LINE_CHARS = 1000
"""The longest line of a saved text; a longer one is broken into several."""
TEXT_BYTES = 2 << 20
"""The most text a source gives an evaluator; past it the text is cut, saying so."""


@frozen
class Extracted:
    text: str
    """The text, in lines of at most LINE_CHARS characters, ending with a line break."""
    kind: str
    """html, pdf, text, markdown or json."""
    extractor: str
    """What took the text out: ``trafilatura 2.0.0``, ``pypdf 5.1.0``, ``as is``."""
    cut: bool = False
    """The text was longer than TEXT_BYTES and is cut there."""
    title: str | None = None
    author: str | None = None
    published: str | None = None
    """The date the page or document says of itself."""


class NoText(Exception):
    """The source's text cannot be taken out (a PDF that does not parse, a page with no text)."""


def kind_of(content_type: str | None, name: str, data: bytes) -> str:
    """What the bytes are: by the content type the source gave, else by the name, else the bytes."""
    ct = (content_type or "").split(";")[0].strip().lower()
    lname = name.lower().split("?")[0].split("#")[0]
    if ct in ("text/html", "application/xhtml+xml"):
        return "html"
    if ct == "application/pdf":
        return "pdf"
    if ct in ("application/json",) or ct.endswith("+json"):
        return "json"
    if ct in ("text/markdown", "text/x-markdown"):
        return "markdown"
    if ct.startswith("text/"):
        return "text"
    if lname.endswith((".html", ".htm", ".xhtml")):
        return "html"
    if lname.endswith(".pdf"):
        return "pdf"
    if lname.endswith(".json"):
        return "json"
    if lname.endswith((".md", ".markdown")):
        return "markdown"
    head = data[:1024].lstrip().lower()
    if head.startswith(b"%pdf-"):
        return "pdf"
    if head.startswith((b"<!doctype html", b"<html")):
        return "html"
    return "text"


def charset_of(content_type: str | None) -> str:
    m = re.search(r"charset=([A-Za-z0-9_.:-]+)", content_type or "", re.I)
    if m:
        try:
            import codecs

            return codecs.lookup(m.group(1)).name
        except LookupError:
            pass
    return "utf-8"


def extract(data: bytes, content_type: str | None, name: str) -> Extracted:
    """The text of a source's bytes, by its kind (see the module's docstring)."""
    kind = kind_of(content_type, name, data)
    if kind == "html":
        return _html(data)
    if kind == "pdf":
        return _pdf(data)
    text = data.decode(charset_of(content_type), "replace")
    return _laid_out(text, kind, "as is")


def _html(data: bytes) -> Extracted:
    import trafilatura

    doc = trafilatura.bare_extraction(data, include_comments=False, include_tables=True, with_metadata=True,
                                      favor_recall=True)
    text = _field(doc, "text")
    if not text:
        raise NoText("the page holds no text trafilatura could take out")
    return _laid_out(text, "html", f"trafilatura {_version('trafilatura')}", title=_field(doc, "title"),
                     author=_field(doc, "author"), published=_field(doc, "date"))


def _pdf(data: bytes) -> Extracted:
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(io.BytesIO(data))
        pages = [p.extract_text() or "" for p in reader.pages]
        meta = reader.metadata
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError) as exc:
        raise NoText(f"the PDF does not read ({type(exc).__name__}: {str(exc)[:200]})") from None
    text = "\n\n".join(p.strip("\n") for p in pages)
    if not text.strip():
        raise NoText("the PDF holds no text pypdf could take out (scanned pages?)")
    published = _safe(lambda: (meta.modification_date or meta.creation_date).isoformat()) if meta else None
    return _laid_out(text, "pdf", f"pypdf {_version('pypdf')}", title=_safe(lambda: meta.title) if meta else None,
                     author=_safe(lambda: meta.author) if meta else None, published=published)


def _safe(fn: Any) -> Any:
    try:
        v = fn()
    except Exception:  # noqa: BLE001 - a document's metadata that does not read is unknown
        return None
    return str(v) if v is not None and not isinstance(v, bool) else v


def _field(doc: Any, name: str) -> str | None:
    v = doc.get(name) if isinstance(doc, dict) else getattr(doc, name, None)
    return str(v) if v else None


def _version(dist: str) -> str:
    try:
        return version(dist)
    except PackageNotFoundError:
        return "?"


def _laid_out(text: str, kind: str, extractor: str, **said: str | None) -> Extracted:
    """``text`` as numbered lines are cut (see the module's docstring), control characters other
    than tab made visible, at most TEXT_BYTES."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = inert(text)  # escape sequences, bidi overrides, NUL written visibly (as asz prints them)
    lines: list[str] = []
    for line in text.split("\n"):
        while len(line) > LINE_CHARS:
            lines.append(line[:LINE_CHARS])
            line = line[LINE_CHARS:]
        lines.append(line)
    while lines and not lines[-1].strip():
        lines.pop()
    out, size, cut = [], 0, False
    for line in lines:
        n = len(line.encode("utf-8", "surrogatepass")) + 1
        if size + n > TEXT_BYTES:
            cut = True
            break
        out.append(line)
        size += n
    body = "".join(f"{line}\n" for line in out)
    body = body.encode("utf-8", "replace").decode("utf-8")  # a lone surrogate is no UTF-8
    clean = {k: (inert(v, one_line=True)[:500] if isinstance(v, str) else None) for k, v in said.items()}
    return Extracted(body, kind, extractor, cut, **clean)


__all__ = ["Extracted", "NoText", "extract", "kind_of", "LINE_CHARS", "TEXT_BYTES"]
