"""A saved source for the terminal: its manifest (``asz sources fetch``, ``asz judge -show``).
Every value from a source or a fetcher is data: its control characters are shown escaped,
never sent to the terminal."""

from __future__ import annotations

from typing import Any

from rich.console import Group

from ..tables import InertText as Text  # every text of a report inert (terminal_text)
from ..terminal_text import inert as shown


def manifest_lines(m: dict[str, Any]) -> list[tuple[str, str]]:
    """(what, value) rows of a manifest (its JSON), the failed ones saying why first."""
    rows: list[tuple[str, str]] = [("source", m.get("source", "")), ("status", m.get("status", ""))]
    if m.get("why"):
        rows.append(("why", m["why"]))
    if m.get("status") == "failed" and not m.get("sha256"):
        rows.append(("comparison", "unavailable (not the same as no contradiction found)"))
    rows.append(("taken", f"{m.get('taken')} (when asz took the copy, never when what it says was knowable)"))
    for k in ("fetcher", "how", "location"):
        if m.get(k):
            rows.append((k, m[k]))
    if m.get("content_type"):
        rows.append(("content type", m["content_type"] + ("" if m.get("content_type_said") else " (from its name or bytes)")))
    if m.get("sha256"):
        size = f"{m.get('bytes'):,} bytes saved"
        if m.get("cut"):
            size += " (cut: the source is larger" + (f", {m['size']:,} bytes" if m.get("size") else "") + ")"
        rows += [("size", size), ("sha256", m["sha256"])]
    t = m.get("text")
    if isinstance(t, dict):
        rows.append(("text", f"{t.get('lines'):,} lines, {t.get('bytes'):,} bytes, {t.get('kind')} by {t.get('extractor')}"
                             + (" (cut)" if t.get("cut") else "")))
        rows.append(("text sha256", t.get("sha256", "")))
    says = m.get("says") or {}
    for k in ("title", "author", "published", "revision"):
        if says.get(k):
            rows.append((f"says: {k}", says[k]))
    return rows


def manifest_text(m: dict[str, Any], text: str | None = None, head: int = 10) -> Group:
    """A manifest for the terminal, and the first ``head`` numbered lines of its text."""
    out = [Text.assemble((f"{m.get('id', 'source')}", "bold"), " ", shown(m.get("source", "")))]
    width = max(len(k) for k, _ in manifest_lines(m))
    for k, v in manifest_lines(m)[1:]:
        out.append(Text.assemble((f"  {k:<{width}}  ", "dim"), shown(v)))
    if text:
        lines = text.splitlines()
        out.append(Text(f"  first {min(head, len(lines))} of {len(lines):,} lines of its text:", style="dim"))
        for n, line in enumerate(lines[:head], 1):
            out.append(Text.assemble((f"  {n:>4}  ", "dim"), shown(line[:200])))
    return Group(*out)




def _conclusion_line(c: dict[str, Any]) -> Text:
    """One conclusion: its id, what it says, its verdict, what it changed or why not."""
    verdict = c.get("verdict") or "not compared"
    about = " ".join(x for x in (c.get("target"), c.get("delivery")) if x)
    if c.get("disproves") == "criteria" and c.get("criteria"):
        about += f" on {', '.join(c['criteria'])}"
    elif c.get("disproves") == "conclusion":
        about += " (the delivered conclusion)"
    style = "red" if c.get("applied") else ("yellow" if verdict in ("contradicted", "rolled_back") else "")
    out = Text.assemble(("  " + c["id"], "bold"), f" {shown(c.get('kind') or '?')}, {shown(c.get('role') or '?')}, "
                        f"{shown(c.get('support') or '?')}: ", shown(c.get("statement", "")))
    out.append(f"\n    {verdict}" + (" (the evaluator's judgment)" if c.get("judgment") else "")
               + (f" — {shown(about)}" if about else ""), style=style)
    if c.get("superseded_by"):
        out.append(f"; corrected later by {c['superseded_by']}", style="dim")
    if c.get("changed") and c.get("applied"):
        out.append(f"\n    changed: {shown(c['changed'])}", style="red")
    elif c.get("why_not"):
        out.append(f"\n    changes no score: {shown(c['why_not'])}", style="dim")
    if c.get("causes"):
        out.append(f"\n    why the work went another way: {shown(', '.join(c['causes']))}", style="dim")
    if c.get("unbound"):
        out.append(f"\n    inputs it names that the conversation does not hold: {shown(', '.join(c['unbound']))}", style="dim")
    return out


def sources_text(st: dict[str, Any]) -> Group:
    """The final statement's sources for ``asz judge -show``: each with its manifest's facts, its
    comparison (unavailable said apart from no contradiction found) and its conclusions."""
    out: list[Any] = [Text("sources", style="bold")]
    for s in st.get("sources") or []:
        comp = s.get("comparison") or ""
        out.append(Text.assemble((s["id"], "bold"), " ", shown(s.get("source") or ""), "  ",
                                 (shown(comp), "green" if comp == "compared" else "yellow")))
        facts = [f"taken {s.get('taken')}" if s.get("taken") else None, shown(s.get("how")) if s.get("how") else None,
                 f"sha256 {str(s.get('sha256'))[:16]}" if s.get("sha256") else None,
                 f"text sha256 {str(s.get('text_sha256'))[:16]}" if s.get("text_sha256") else None,
                 "cut at the bound" if s.get("cut") else None,
                 *(f"{k} {shown(s[k])}" for k in ("title", "author", "published", "revision") if s.get(k))]
        out.append(Text("  " + " · ".join(f for f in facts if f), style="dim"))
        if comp == "compared" and not s.get("conclusions"):
            out.append(Text("  the reference stage found no conclusion in it", style="dim"))
        for c in s.get("conclusions") or []:
            out.append(_conclusion_line(c))
    return Group(*out)


def sources_html(st: dict[str, Any], esc: Any) -> str:
    """The same for report.html; ``esc`` is the page's HTML escape."""
    srcs = st.get("sources") or []
    if not srcs:
        return ""
    h = ['<h2 id="sources">sources</h2>']
    for s in srcs:
        comp = s.get("comparison") or ""
        h.append(f'<h3 data-source="{esc(s["id"])}">{esc(s["id"])} <span class="mono">{esc(s.get("source") or "")}</span></h3>')
        h.append(f'<div class="{"dim" if comp == "compared" else "note"}">{esc(comp)}</div>')
        facts = [("taken", s.get("taken")), ("how", s.get("how")), ("content type", s.get("content_type")),
                 ("bytes", f"{s['bytes']:,}" + (" (cut at the bound)" if s.get("cut") else "") if s.get("bytes") is not None else None),
                 ("sha256", s.get("sha256")), ("text sha256", s.get("text_sha256")), ("title", s.get("title")),
                 ("author", s.get("author")), ("published", s.get("published")), ("revision", s.get("revision"))]
        # in a scrolling box, as every table of the page: a path or a digest never widens the page on a phone
        h.append('<div class="scroll"><table class="manifest">' + "".join(f'<tr><th>{esc(k)}</th><td class="mono">{esc(v)}</td></tr>'
                                                                          for k, v in facts if v) + "</table></div>")
        cs = s.get("conclusions") or []
        if cs:
            rows = []
            for c in cs:
                about = " ".join(x for x in (c.get("target"), c.get("delivery")) if x)
                if c.get("criteria"):
                    about += f" on {', '.join(c['criteria'])}"
                effect = (f'<b>changed</b>: {esc(c["changed"])}' if c.get("applied") and c.get("changed")
                          else (f'changes no score: {esc(c["why_not"])}' if c.get("why_not") else ""))
                rows.append(f'<tr data-conclusion="{esc(c["id"])}"><td class="mono">{esc(c["id"])}</td>'
                            f'<td>{esc(c.get("statement"))}<div class="dim">{esc(c.get("kind"))}, {esc(c.get("role"))}, '
                            f'{esc(c.get("support"))}' + (f'; corrected by {esc(c["superseded_by"])}' if c.get("superseded_by") else "")
                            + f'</div></td><td>{esc(c.get("verdict") or "not compared")}'
                            + (" <span class=\"dim\">(judgment)</span>" if c.get("judgment") else "")
                            + f'</td><td>{esc(about)}</td><td>{effect}'
                            + (f'<div class="dim">{esc(", ".join(c["causes"]))}</div>' if c.get("causes") else "") + "</td></tr>")
            h.append('<div class="scroll"><table><tr><th>conclusion</th><th>what it says</th><th>verdict</th><th>about</th>'
                     "<th>what it changed</th></tr>" + "".join(rows) + "</table></div>")
    return "".join(h)


__all__ = ["manifest_text", "manifest_lines", "shown", "sources_text", "sources_html"]
