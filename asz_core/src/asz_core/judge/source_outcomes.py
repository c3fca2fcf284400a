"""What the sources change (spec: "Judging against a source"; docs/sources.md): the divergence
stage's contradictions and rollbacks the close applies, and what the final statement says of
each source.

A contradiction or a rollback of a delivery standing at the end applies to the final score as
one the conversation shows does (:func:`asz_core.judge.outcomes.judge_target` applies both): a
contradiction of the delivered conclusion, or a rollback of the whole result, leaves the target
0; one naming criteria counts them not met. A rollback of a correct result makes the target
reverted; it is contradicted only when evidence also shows it wrong. One that changes no score
is kept, with why: its delivery no longer stands at the end, another conclusion about the
target disagrees (a verdict of consistent, or a conclusion the reference stage found in conflict
with it), or the source corrected the conclusion later (superseded_by: the correction applies).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..convert import fraction_text
from . import outcomes
from . import statement as S
from .source_files import read_saved

DISPROVING = ("contradicted", "rolled_back")


class SourceView:
    """The run's sources, conclusions and verdicts, read from its files and stage files (JSON)."""

    def __init__(self, path: Path, stages: dict[str, dict[str, Any] | None]) -> None:
        self.saved = read_saved(path)
        ref, div = stages.get("reference"), stages.get("divergence")
        self.ref_status = (ref or {}).get("status")
        self.div_status = (div or {}).get("status")
        self.ref_ok = self.ref_status in ("complete", "partial")
        self.div_ok = self.div_status in ("complete", "partial")
        self.ref_reason, self.div_reason = (ref or {}).get("reason"), (div or {}).get("reason")
        self.conclusions = {c["id"]: c for c in (ref or {}).get("conclusions") or [] if isinstance(c, dict)} if self.ref_ok else {}
        self.verdicts = {v["conclusion"]: v for v in (div or {}).get("verdicts") or [] if isinstance(v, dict)} if self.div_ok else {}
        self.causes: dict[str, list[dict[str, Any]]] = {}
        for c in (div or {}).get("causes") or [] if self.div_ok else []:
            if isinstance(c, dict):
                self.causes.setdefault(c.get("conclusion"), []).append(c)
        self.why_not: dict[str, str] = {}
        """Conclusion -> why its contradiction or rollback changes no score."""
        self.changed: dict[str, str] = {}
        """Conclusion -> what it changed."""

    def disproving(self, tid: str) -> list[dict[str, Any]]:
        return [v for v in self.verdicts.values() if v.get("target") == tid and v.get("verdict") in DISPROVING]

    def _disagreeing(self, v: dict[str, Any]) -> list[str]:
        """The conclusions about the same target that disagree with ``v``'s."""
        tid, cid = v.get("target"), v["conclusion"]
        mine = self.conclusions.get(cid, {})
        out = []
        for other in self.verdicts.values():
            oid = other["conclusion"]
            if oid == cid or other.get("target") != tid or self.conclusions.get(oid, {}).get("superseded_by"):
                continue
            if other.get("verdict") == "consistent":
                out.append(oid)
            elif other.get("verdict") in DISPROVING and (oid in (mine.get("conflicts") or ())
                                                          or cid in (self.conclusions.get(oid, {}).get("conflicts") or ())):
                out.append(oid)
        return out

    def with_sources(self, tid: str, a: dict[str, Any], seq_of: Callable[[str | None], int]) -> dict[str, Any]:
        """The target's achievement (close's words) with the source contradictions and rollbacks
        that apply added: contradictions beside the record's, a rollback as an undoing after the
        last recorded step. Why each other one does not apply is kept in :attr:`why_not`."""
        cands = self.disproving(tid)
        if not cands:
            return a
        events = sorted((e for e in a.get("events") or [] if isinstance(e, dict)), key=lambda e: seq_of(e.get("step")))
        at_end, _ = outcomes.standing((e["id"], e.get("kind"), e.get("corrects") or (), e.get("deliveries") or ())
                                      for e in events if e.get("id"))
        end = set(at_end)
        contra, undone = list(a.get("contradictions") or []), list(a.get("events") or [])
        for v in cands:
            cid = v["conclusion"]
            sup = self.conclusions.get(cid, {}).get("superseded_by")
            others = self._disagreeing(v)
            if sup:
                self.why_not[cid] = f"the source corrects it later ({sup}): the correction changes the score, not it"
            elif others:
                self.why_not[cid] = f"another conclusion about {tid} disagrees ({', '.join(others)}): the sources do not agree"
            elif v.get("delivery") not in end:
                self.why_not[cid] = f"its delivery {v.get('delivery')} no longer stands at the end (a later delivery replaced it)"
            elif v["verdict"] == "contradicted":
                contra.append({"id": cid, "delivery": v.get("delivery"), "source": True,
                               "criteria": [] if v.get("disproves") == "conclusion" else list(v.get("criteria") or ()),
                               "citations": list(v.get("cites") or ())})
            else:
                undone.append({"id": cid, "kind": "undone", "step": None, "corrects": [], "source": True,
                               "criteria": list(v.get("criteria") or ()), "deliveries": [v.get("delivery")]})
        return {**a, "contradictions": contra, "events": undone}

    def note_change(self, tid: str, before: outcomes.Judged, after: outcomes.Judged, judged: bool) -> None:
        """What the applied ones of ``tid`` changed, in words (or why they changed nothing)."""
        applied = [x["id"] for x in [*after.contradictions, *after.undoings] if x.get("source")]
        if not applied:
            return
        if not judged:
            words = f"{tid} was not judged, so it has no score to change"
        elif (before.final, before.class_) == (after.final, after.class_):
            words = f"{tid}'s final score and class are the same without it (the record already shows as much)"
        else:
            words = (f"{tid}: final score {fraction_text(before.final)} -> {fraction_text(after.final)}, class "
                     f"{before.class_} -> {after.class_}")
        for cid in applied:
            self.changed[cid] = words

    def statement(self) -> tuple[S.SourceStatement, ...]:
        out = []
        for s in self.saved:
            m = s.manifest
            if m is None or not s.usable:
                comparison = f"unavailable: {s.why_unavailable} (not the same as no contradiction found)"
            elif not self.ref_ok:
                comparison = f"not compared: the reference stage is {self.ref_status or 'missing'}" + \
                    (f" ({self.ref_reason})" if self.ref_reason else "")
            elif not self.div_ok:
                comparison = f"conclusions found, not compared: the divergence stage is {self.div_status or 'missing'}" + \
                    (f" ({self.div_reason})" if self.div_reason else "")
            else:
                comparison = "compared"
            concl = []
            for cid, c in self.conclusions.items():
                if c.get("source") != s.id:
                    continue
                v = self.verdicts.get(cid, {})
                verdict = v.get("verdict")
                concl.append(S.ConclusionStatement(
                    id=cid, statement=c.get("statement") or "", kind=c.get("kind"), role=c.get("role"),
                    support=c.get("support"), lines=tuple(tuple(x) for x in c.get("lines") or ()),
                    inputs=tuple(c.get("inputs") or ()), unbound=tuple(c.get("unbound") or ()),
                    superseded_by=c.get("superseded_by"), verdict=verdict, judgment=bool(v.get("judgment")),
                    target=v.get("target"), delivery=v.get("delivery"), disproves=v.get("disproves"),
                    criteria=tuple(v.get("criteria") or ()), applied=cid in self.changed and cid not in self.why_not,
                    changed=self.changed.get(cid), why_not=self.why_not.get(cid) if verdict in DISPROVING else None,
                    causes=tuple(f"{x.get('cause')}" + (f" at {x['at']}" if x.get("at") else "") + (" (judgment)" if x.get("judgment") else "")
                                 for x in self.causes.get(cid, ()))))
            out.append(S.SourceStatement(
                id=s.id, source=m.source if m else None, status=m.status if m else "unreadable", why=s.why_unavailable,
                taken=m.taken if m else None, fetcher=m.fetcher if m else None, how=m.how if m else None,
                content_type=m.content_type if m else None, bytes=m.bytes if m else None, cut=bool(m and m.cut),
                sha256=m.sha256 if m else None, text_sha256=m.text.sha256 if m and m.text else None,
                title=m.says.title if m else None, author=m.says.author if m else None,
                published=m.says.published if m else None, revision=m.says.revision if m else None,
                comparison=comparison, conclusions=tuple(concl)))
        return tuple(out)


__all__ = ["SourceView"]
