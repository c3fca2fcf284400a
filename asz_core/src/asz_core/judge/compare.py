"""Comparing runs (spec: "A run never compares conversations. Comparing runs is left to a later
mode, run on request, that will read only the results runs have saved"; "Agreement between
evaluators, or with a person, is measured by comparing runs"; docs/compare.md).

``compare(paths)`` reads the runs' saved files (run.json, the stage files, close.json,
call-costs.json) and nothing else: no store, no evaluator, and it never changes a run. Runs of
one conversation, at one head or at several: each pair is compared over the main talks both
judged. Per pair:

* **targets**: two targets match when the same input created them and their talks overlap
  (input and talk ids are stable across heads); each is matched once, in the first run's order.
  Unmatched ones are listed per run; a target none of whose talks both runs judged is outside.
* **agreement of matched targets**: level, class, basis, criteria met (met of live), rounds of
  rework, final score (close.json's outcomes), over the pairs both runs judged: a pair with a
  target of class ``not_judged`` is listed apart (``not_judged``).
* **work labels**: each model call of the shared talks, weighted by what it cost (money when every
  such call is priced, else tokens): the part both call avoidable, the part both call not
  avoidable, the part they disagree on, over the calls both reviewed; the parts only one or
  neither reviewed apart; Cohen's kappa of avoidable / not avoidable over those calls, each call
  one item. What a call cost is what the earlier head's run saved as it closed (call-costs.json:
  the ledger's at its head with its price file, the numbers its close computed), so compare opens
  no store: the judgments and the costs are the runs' saved files alone.
* **sub-task decisions**: per sub-task both judged (by stream id), outcome, report, used,
  dispatch and label.

Per run, side by side: its scores, what judging consumed (each stage's evaluator), and what it
could not judge (the statement's basis, stages failed or skipped, targets not judged).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

from ..errors import AszError
from .goal_outcome import frac
from .statement import AVOIDABLE, NOT_AVOIDABLE, NOT_JUDGED, NOT_REVIEWED

FIELDS = ("level", "class", "basis", "met", "rework", "final_score")
_ROUND = re.compile(r"r[1-9][0-9]{0,17}")
SUBTASK_FIELDS = ("outcome", "report", "used", "dispatch", "label")


def rounded(f: Fraction | None, places: int = 4) -> str | None:
    """An exact value rounded for reading (the exact fraction is kept beside it)."""
    if f is None:
        return None
    return str(Decimal(round(f * 10**places)).scaleb(-places))


def kappa(pairs: Sequence[tuple[bool, bool]]) -> tuple[Fraction | None, Fraction | None, Fraction | None]:
    """Cohen's kappa of two raters over items rated avoidable (True) or not (False): (kappa,
    observed agreement, agreement expected by chance); kappa is None when there is no item, or
    when chance alone gives full agreement (both rate every item the same way)."""
    n = len(pairs)
    if not n:
        return None, None, None
    po = Fraction(sum(1 for a, b in pairs if a == b), n)
    a1 = Fraction(sum(1 for a, _ in pairs if a), n)
    b1 = Fraction(sum(1 for _, b in pairs if b), n)
    pe = a1 * b1 + (1 - a1) * (1 - b1)
    return ((po - pe) / (1 - pe) if pe != 1 else None), po, pe


class _Run:
    """One run as compare reads it: its saved files, and nothing else."""

    def __init__(self, path: Path) -> None:
        from .close import _labels, json_of, read_stages, usable
        from .run_files import call_costs_json, close_json, run_json

        self.path = path
        self.run = run_json(path)
        self.id = self.run["run"]
        head = self.run["head"]
        if not _ROUND.fullmatch(head):  # ASCII digits: isdigit() takes '²', which int() refuses
            raise AszError(f"{path / 'run.json'}: its head {head[:40]!r} is no round (r1, r2, ...)")
        self.round = int(head[1:])
        self.close = close_json(path, self.id)
        if self.close is None:
            raise AszError(f"{path} has not closed: compare reads closed runs")
        self.read = read_stages(path, self.run)
        self.stages = json_of(self.read)
        costs = call_costs_json(path, self.id, self.run)
        self.calls: list[dict[str, Any]] = list(costs["calls"])
        self.judged = list(costs["judged"])
        st = self.close.get("statement") or {}
        self.statement = st
        self.targets = list(st.get("targets") or ())
        ts = self.stages.get("targets") if usable(self.stages.get("targets")) else None
        self.created = {t["id"]: t.get("created_by") for t in (ts or {}).get("targets", []) if isinstance(t, dict)}
        self.labels = _labels(self.stages)
        sub = self.stages.get("subtasks")
        self.subtasks = {d["stream"]: d for d in (sub or {}).get("subtasks", []) if isinstance(d, dict) and d.get("stream")} \
            if usable(sub) else {}

    def side(self) -> dict[str, Any]:
        """What is set side by side with the other runs: scores, consumption, what it could not judge."""
        st, close = self.statement, self.close or {}
        judging = st.get("judging") or {}
        could_not = [f"{k}: {v}" for k, v in (st.get("basis") or {}).items() if not str(v).startswith("used")]
        for s, r in self.read.items():
            if r.data is None and not r.missing:
                could_not.append(f"{s}: {r.said}")
        ach = self.stages.get("achievement") or {}
        for k, n in ((ach.get("header") or {}).get("not_judged") or {}).items():
            could_not.append(f"{n} target{'s' if n != 1 else ''} not judged: {k}")
        if close.get("error"):
            could_not.append(f"no final statement: {close['error']}")
        could_not += list(st.get("notes") or ())
        cov = (st.get("scores") or {}).get("coverage") or {}
        return {"run": self.id, "path": str(self.path), "head": self.run["head"], "head_digest": self.run["head_digest"],
                "window": self.run["window"], "kit": self.run["kit"],
                "evaluators": {s: e.get("spec") for s, e in (self.run.get("evaluators") or {}).items()},
                "stages": dict(close.get("stages") or {}), "scores": st.get("scores"), "consumed": close.get("consumed"),
                "judging": {"total": judging.get("total"), "stages": judging.get("stages"),
                            "conversation": judging.get("conversation")},
                "coverage": cov.get("rounded"), "could_not_judge": could_not}


def _outcome(t: dict[str, Any]) -> dict[str, Any]:
    o = t.get("outcome") or {}
    return {"level": o.get("level"), "class": o.get("class"), "basis": o.get("basis"),
            "met": f"{o.get('met', 0)}/{o.get('live', 0)}", "rework": len(o.get("rework") or ()),
            "final_score": o.get("final_score")}


def _targets(a: _Run, b: _Run, shared: set[str]) -> dict[str, Any]:
    def inside(t: dict[str, Any]) -> bool:
        return any(k in shared for k in t.get("talks") or ())

    ta = [t for t in a.targets if inside(t)]
    tb = [t for t in b.targets if inside(t)]
    taken: set[str] = set()
    matched = []
    for x in ta:
        made = a.created.get(x["id"])
        for y in tb:
            if y["id"] in taken or made is None or b.created.get(y["id"]) != made:
                continue
            common = [k for k in x.get("talks") or () if k in set(y.get("talks") or ()) and k in shared]
            if common:
                taken.add(y["id"])
                oa, ob = _outcome(x), _outcome(y)
                both = NOT_JUDGED not in (oa["class"], ob["class"])
                matched.append({"a": x["id"], "b": y["id"], "created_by": made, "talks": common, "a_outcome": oa,
                                "b_outcome": ob, "judged": both, "agree": {f: oa[f] == ob[f] for f in FIELDS}})
                break
    mine_a = {m["a"] for m in matched}
    # a pair one run did not judge (its call failed twice) says nothing of agreement: left out of it
    judged = [m for m in matched if m["judged"]]
    agreement = {f: {"agree": sum(1 for m in judged if m["agree"][f]), "of": len(judged)} for f in FIELDS}
    return {"matched": matched, "agreement": agreement, "not_judged": [[m["a"], m["b"]] for m in matched if not m["judged"]],
            "unmatched": {"a": [t["id"] for t in ta if t["id"] not in mine_a], "b": [t["id"] for t in tb if t["id"] not in taken]},
            "outside": {"a": [t["id"] for t in a.targets if not inside(t)], "b": [t["id"] for t in b.targets if not inside(t)]}}


def _part(cost: Fraction, total: Fraction, calls: int, unit: str) -> dict[str, Any]:
    share = cost / total if total else None
    return {"calls": calls, "cost": frac(cost), "cost_rounded": rounded(cost, 6 if unit == "money" else 0),
            "share": frac(share), "share_rounded": rounded(share)}


def _work_labels(a: _Run, b: _Run, shared: set[str]) -> dict[str, Any]:
    first = a if a.round <= b.round else b  # what both saw: the earlier head's count of a call
    calls = [c for c in first.calls if c["root"] in shared]
    unit = "money" if calls and all(c["money"] is not None for c in calls) else "tokens"

    def cost(c: dict[str, Any]) -> Fraction:
        if unit == "money":
            return Fraction(Decimal(c["money"]))
        return Fraction(sum(c[k] or 0 for k in ("input", "output", "cache_read", "cache_write")))

    groups: dict[str, list[Any]] = {k: [] for k in ("both_avoidable", "both_not_avoidable", "a_avoidable_b_not",
                                                     "b_avoidable_a_not", "a_only_reviewed", "b_only_reviewed", "neither_reviewed")}
    items = []
    labels_agree = 0
    for c in calls:
        la = a.labels.get(c["step"], (NOT_REVIEWED, None))[0]
        lb = b.labels.get(c["step"], (NOT_REVIEWED, None))[0]
        ra, rb = la in (*AVOIDABLE, *NOT_AVOIDABLE), lb in (*AVOIDABLE, *NOT_AVOIDABLE)
        if ra and rb:
            va, vb = la in AVOIDABLE, lb in AVOIDABLE
            items.append((va, vb))
            labels_agree += la == lb
            key = "both_avoidable" if va and vb else "both_not_avoidable" if not va and not vb else \
                "a_avoidable_b_not" if va else "b_avoidable_a_not"
        else:
            key = "a_only_reviewed" if ra else "b_only_reviewed" if rb else "neither_reviewed"
        groups[key].append(c)
    both = [c for k in ("both_avoidable", "both_not_avoidable", "a_avoidable_b_not", "b_avoidable_a_not") for c in groups[k]]
    total_both = sum((cost(c) for c in both), Fraction(0))
    total_all = sum((cost(c) for c in calls), Fraction(0))
    parts = {k: _part(sum((cost(c) for c in v), Fraction(0)), total_both if k in ("both_avoidable", "both_not_avoidable",
                                                                                    "a_avoidable_b_not", "b_avoidable_a_not")
                      else total_all, len(v), unit) for k, v in groups.items()}
    dis = groups["a_avoidable_b_not"] + groups["b_avoidable_a_not"]
    parts["disagree"] = _part(sum((cost(c) for c in dis), Fraction(0)), total_both, len(dis), unit)
    k, po, pe = kappa(items)
    return {"unit": unit, "costed_at": first.run["head"], "calls": len(calls), "both_reviewed": len(both),
            "cost_both_reviewed": frac(total_both), "cost_all": frac(total_all), "parts": parts,
            "same_label": {"calls": labels_agree, "of": len(both)},
            "kappa": frac(k), "kappa_rounded": rounded(k), "observed": frac(po), "expected": frac(pe),
            "kappa_note": None if k is not None else ("no call both reviewed" if not items
                                                      else "undefined: chance alone gives full agreement")}


def _subtasks(a: _Run, b: _Run, shared: set[str]) -> dict[str, Any]:
    def value(d: dict[str, Any], f: str) -> Any:
        v = d.get(f)
        if f == "label":
            return (v or {}).get("label") if isinstance(v, dict) else v
        return v.get("value") if isinstance(v, dict) else v

    rows = []
    for s, da in a.subtasks.items():
        db = b.subtasks.get(s)
        if db is None or not da.get("judged") or not db.get("judged"):
            continue
        if da.get("root") not in shared and da.get("root") not in ("loose", "unattributed"):
            continue  # a talk one run did not judge
        va, vb = {f: value(da, f) for f in SUBTASK_FIELDS}, {f: value(db, f) for f in SUBTASK_FIELDS}
        rows.append({"stream": s, "a": va, "b": vb, "agree": {f: va[f] == vb[f] for f in SUBTASK_FIELDS}})
    return {"both_judged": len(rows), "agreement": {f: {"agree": sum(1 for r in rows if r["agree"][f]), "of": len(rows)}
                                                    for f in SUBTASK_FIELDS}, "rows": rows,
            "judged": {"a": sum(1 for d in a.subtasks.values() if d.get("judged")),
                       "b": sum(1 for d in b.subtasks.values() if d.get("judged"))}}


def compare(paths: Sequence[Path]) -> dict[str, Any]:
    """Runs of one conversation compared (see the module's docstring): ``runs`` side by side and
    ``pairs``, each pair of runs in the order given."""
    if len(paths) < 2:
        raise AszError("give two runs or more to compare")
    seen: set[Path] = set()
    for p in paths:
        if Path(p).resolve() in seen:
            raise AszError(f"{p} is given twice: compare different runs")
        seen.add(Path(p).resolve())
    runs = [_Run(Path(p)) for p in paths]
    convs = {r.run["conversation"] for r in runs}
    if len(convs) > 1:
        raise AszError("compare measures runs of one conversation; these judge " + ", ".join(sorted(c[:8] for c in convs)))
    pairs = []
    for i in range(len(runs)):
        for j in range(i + 1, len(runs)):
            a, b = runs[i], runs[j]
            shared = [k for k in a.judged if k in set(b.judged)]
            sh = set(shared)
            pairs.append({"a": a.id, "b": b.id, "same_head": a.run["head_digest"] == b.run["head_digest"],
                          "talks": {"shared": len(shared), "first": shared[0] if shared else None,
                                    "last": shared[-1] if shared else None,
                                    "a_only": [k for k in a.judged if k not in sh], "b_only": [k for k in b.judged if k not in set(a.judged)]},
                          "targets": _targets(a, b, sh), "labels": _work_labels(a, b, sh), "subtasks": _subtasks(a, b, sh)})
    return {"conversation": runs[0].run["conversation"], "runs": [r.side() for r in runs], "pairs": pairs}


__all__ = ["compare", "kappa", "FIELDS", "SUBTASK_FIELDS"]
