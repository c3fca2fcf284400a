"""A regroup: a closed run's targets placed in the person's own goals, by one evaluator call, and
the two groupings compared (spec: "The person's goals"; docs/regroup.md).

``make(run_dir, label)`` reserves the next version with its work directory
(``regroups/v<N>/``, made with one ``mkdir``, so two regroups made at once never share one),
makes one evaluator call that reads the conversation as the run did (its head, its window, the
rates of its price file) and is given the person's goals and the run's targets, never the judge's
goals: the navigation it reads through serves the run's stage files with the goals taken out
(``state/stages/``) and the sources the run saved (``state/work/sources/``), as the run's did.
It checks every placement and every "worked on" against the record (:mod:`.evidence`: only an
input of the person shows one), compares the groupings goal by goal (:mod:`.regroup_compare`)
and computes the person's goals' outcomes as the close computes the judge's
(:mod:`.goal_outcome`), and writes ``regroup.json`` once. The run is never changed. A
regroup whose call failed is kept, failed, with what its call consumed.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import orjson

from ..convert import dumps, structure, unstructure
from ..errors import AszError, ConfigError
from . import config as configs
from .context import EvaluatorSpec, Meter, Progress, Run, StageCalls, now, parse_evaluator, write_once
from .judgment import WHERE_BYTES, Check, _bounded, check_notes
from .person_goals import LabelFile
from .regroup_compare import Placement, WorkedOn, compare
from .regroup_files import FILE, VERSION, RegroupFile, RegroupResult, latest, read, reserve, versions

STAGE = "regroup"


# --- the call ------------------------------------------------------------------------------------

def _state_dir(run_dir: Path, work: Path, read: dict[str, Any]) -> Path:
    """The stage files the regroup's navigation serves: the run's, with the judge's goals taken
    out (no target names its goal, no input its relations), so the call is never shown them."""
    state = work / "state"
    for stage, r in read.items():
        if r.data is None:
            continue
        data = dict(r.data)
        if stage == "targets":
            data["goals"] = []
            data["targets"] = [{**t, "goal": None} for t in data.get("targets", [])]
            data["inputs"] = [{**i, "relations": []} for i in data.get("inputs", [])]
            if isinstance(data.get("header"), dict):
                data["header"] = {**data["header"], "goals": 0, "targets_in_no_goal": len(data["targets"])}
        write_once(state / "stages" / f"{stage}.json", orjson.dumps(data))
    return state


def _sources_into(run_dir: Path, state: Path) -> None:
    """The run's saved sources served by the regroup's navigation as by the run's: each source's
    manifest and the text it names, copied byte for byte into ``state/work/sources/`` (the
    ``sources`` tool reads only those; the text is checked against the manifest's digest as it is
    read). A file that is no regular file, or reached through a link, is not copied: the tool then
    says that source is unavailable, as it says of one whose manifest does not read."""
    from ..regular import read_below
    from .source_files import SOURCES_DIR, read_saved

    for s in read_saved(run_dir):
        here, there = SOURCES_DIR / s.id, state / SOURCES_DIR / s.id
        there.mkdir(parents=True, exist_ok=True)  # listed even when nothing of it reads
        names = ["manifest.json"]
        t = s.manifest.text if s.manifest is not None else None
        if t is not None and "/" not in t.file and t.file not in ("", ".", ".."):
            names.append(t.file)
        for name in names:
            try:
                data = read_below(run_dir, here / name)
            except OSError:
                continue
            write_once(there / name, data)


_cut = _bounded(WHERE_BYTES)  # what the answer gave, quoted back: cut as a check quotes it, never copied whole


def _readable(answer: Any) -> str | None:
    if not isinstance(answer, dict):
        return "the answer is not a JSON object"
    for k in ("targets", "goals"):
        if not isinstance(answer.get(k), list):
            return f"the answer has no {k} list"
    return None


def _target_row(t: dict[str, Any]) -> dict[str, Any]:
    return {"id": t["id"], "statement": t.get("statement"), "kind": t.get("kind"), "state": t.get("state"),
            "criteria": [c.get("text") for c in t.get("criteria", []) if not c.get("dropped")],
            "talks": t.get("talks"), "created_by": t.get("created_by"), "inputs": t.get("inputs")}


def check(answer: dict[str, Any], goals: tuple[str, ...], targets: list[dict[str, Any]], ev: Any,
          checks: list[Check]) -> tuple[tuple[Placement, ...], tuple[WorkedOn, ...]]:
    """Every placement and every "worked on" held to the record: a goal the person gave, and a
    cited input of the person that shows it (an input the targets stage found was not the
    person's shows nothing); else unknown. What the answer leaves out is not answered."""
    from .context import naming, own_entries

    tids = [t["id"] for t in targets]
    got = own_entries(answer["targets"], naming("target"), tids, tids, "target", 1, checks)

    def person_cites(e: dict[str, Any]) -> tuple[str, ...]:
        raw = e.get("cites")
        return tuple(c.input or c.id for c in ev.cites(raw if isinstance(raw, list) else []) if ev.person(c))

    def note(e: dict[str, Any]) -> str | None:
        n = e.get("note")
        return n if isinstance(n, str) else None  # the evaluator's own words, kept once as a stage keeps its notes

    placements = []
    for tid in tids:
        e = got.get(tid)
        if e is None:
            checks.append(Check("filled_in", tid, "not answered: the answer gives it no goal"))
            placements.append(Placement(tid, "not_answered"))
            continue
        g = e.get("goal")
        if g is None and "goal" in e:
            placements.append(Placement(tid, "none", note=note(e)))
            continue
        if not isinstance(g, str) or g not in goals:
            why = f"{g!r} is no goal the person gave" if g is not None or "goal" in e else "it names no goal"
            checks.append(Check("changed", tid, f"unknown: {why}"))
            placements.append(Placement(tid, "unknown", given=_cut(str(g)) if g is not None else None, reason=_cut(why),
                                        note=note(e)))
            continue
        cites = person_cites(e)
        if not cites:
            why = "nothing it cites is an input of the person that shows it"
            checks.append(Check("changed", tid, f"unknown: placed in {g}, but {why}"))
            placements.append(Placement(tid, "unknown", given=g, reason=why, note=note(e)))
            continue
        placements.append(Placement(tid, "goal", g, cites, note=note(e)))
    gw = own_entries(answer["goals"], naming("goal"), goals, goals, "goal", 1, checks)
    worked = []
    for gid in goals:
        e = gw.get(gid)
        v = e.get("worked_on") if e else None
        if not isinstance(v, bool):
            checks.append(Check("filled_in", gid, "not answered: the answer does not say whether it was worked on"))
            worked.append(WorkedOn(gid, "not_answered"))
        elif not v:
            worked.append(WorkedOn(gid, "not_worked_on", note=note(e)))  # type: ignore[arg-type]
        else:
            cites = person_cites(e)  # type: ignore[arg-type]
            if cites:
                worked.append(WorkedOn(gid, "worked_on", cites, note=note(e)))  # type: ignore[arg-type]
            else:
                why = "nothing it cites is an input of the person that asked for it"
                checks.append(Check("changed", gid, f"unknown: worked on, but {why}"))
                worked.append(WorkedOn(gid, "unknown", reason=why, note=note(e)))  # type: ignore[arg-type]
    return tuple(placements), tuple(worked)


def make(run_dir: Path, label: LabelFile, *, evaluator: str | None = None, store: Any = None, registry: Any = None,
         progress: Progress | None = None, view: Any = None) -> RegroupResult:
    """A regroup of the closed run at ``run_dir`` by the person's goals of ``label`` (see the module's docstring)."""
    from ..registry import Registry
    from ..store import Store
    from .close import load_view
    from .evidence import for_run
    from .goal_outcome import of_statement
    from .kit import Kit, render
    from .run_files import close_json, run_json
    from .stage_files import Pin, read as read_stage, read_all
    from .stages.targets import inputs_of

    run_dir = Path(run_dir)
    run = run_json(run_dir)
    close = close_json(run_dir, run["run"])
    if close is None:
        raise AszError(f"{run_dir} has not closed: a regroup is made over a closed run")
    given = evaluator or ((run.get("evaluators") or {}).get("targets") or {}).get("spec")
    if not given:
        raise ConfigError(f"{run_dir}: its run had no targets stage's evaluator to regroup with: give --evaluator NAME[:ARG]")
    data = dict(run.get("config") or {})
    data.pop("source", None)
    try:
        cfg = structure(data, configs.Config)
    except Exception as exc:  # noqa: BLE001 - run.json's configuration is data read back
        raise AszError(f"{run_dir / 'run.json'}: its config does not read ({exc})") from None
    source = (run.get("config") or {}).get("source")
    if isinstance(source, str):
        import attrs

        cfg = attrs.evolve(cfg, source=source)
    registry = registry or Registry()
    spec: EvaluatorSpec = parse_evaluator(given, cfg)
    registry.evaluator(spec.name).check(spec.argument, spec.options)
    kit = Kit.load()
    template, schema = kit.template(STAGE), kit.schema(STAGE)
    own_store = store is None
    store = store or Store.open()
    try:
        v = view or load_view(run_dir, store)
        work = reserve(run_dir)
        started, t0 = now(), time.monotonic()
        pin = Pin.of_json(run)
        tread = read_stage(run_dir, "targets", pin)
        ts = tread.data if tread.usable else {}
        targets = [t for t in (ts or {}).get("targets", []) if isinstance(t, dict) and t.get("id")]
        judge_goals = list((ts or {}).get("goals", []))
        rec = tread.record if tread.usable else None
        ev = for_run(v.window, store, rec.targets if rec else (), rec.inputs if rec else ())
        state = _state_dir(run_dir, work, read_all(run_dir, pin))
        _sources_into(run_dir, state)
        try:
            adapter = registry.runtime(v.window.conv.runtime)
        except AszError:
            adapter = None
        r = Run(work, v.window, store, cfg, kit, v.prices, adapter, registry, run["window"], progress)
        items, _, _ = inputs_of(r)
        goals = tuple(g.id for g in label.goals)
        prompt = render(template, {
            "budget": f"{cfg.judge.read_bytes:,}", "card": r.card(),
            "goals": "\n".join(orjson.dumps({"goal": g.id, "text": g.text}).decode() for g in label.goals),
            "targets": "\n".join(orjson.dumps(_target_row(t)).decode() for t in targets) or "(the run found no target)",
            "inputs": "\n".join(b.decode() for it in items for b in it.rows) or "(no input)"})
        backend = registry.evaluator(spec.name)()
        with Meter(STAGE, cfg.judge.progress, progress) as meter:
            calls = StageCalls(r, STAGE, spec, backend, meter)
            out = calls.call(1, prompt, schema, _readable, run_dir=state)
            stage_run = calls.stage_run("single", 1, started, t0)
            ref = calls.evaluator_ref()
        common = dict(version=VERSION, regroup=work.name, run=run["run"], conversation=run["conversation"], head=run["head"],
                      head_digest=run["head_digest"], window=run["window"], label=label, kit=kit.ref(STAGE),
                      evaluator=ref, call=stage_run, started=started, ended=stage_run.ended or now())
        notes: list[str] = []
        if not tread.usable:
            notes.append(f"the run's targets: {tread.not_used_note()}; every goal it worked on is missed")
        if not out.ok:
            f = RegroupFile(status="failed", reason=f"its call gave nothing readable twice: {out.error}",
                            note=tuple(notes), checks=(), **common)  # type: ignore[arg-type]
        else:
            checks: list[Check] = []
            placements, worked = check(out.answer, goals, targets, ev, checks)
            comp = compare([(g.id, g.text) for g in label.goals], placements, worked, targets, judge_goals)
            st = (close or {}).get("statement")
            if st:
                outs = tuple(of_statement(g.goal, g.targets, g.main_target, st) for g in comp.goals)
                onote = None
            else:
                outs, onote = (), f"no goal outcome: the run has no final statement ({(close or {}).get('error')})"
            f = RegroupFile(status="partial" if checks else "complete", reason=None,
                            note=tuple(notes) + check_notes(checks), checks=tuple(checks), placements=placements,
                            worked_on=worked, comparison=comp, outcomes=outs, outcomes_note=onote,
                            **common)  # type: ignore[arg-type]
        written = dumps(f, indent=True) + b"\n"
        write_once(work / FILE, written)
        if f.comparison is not None:  # the run's page, following this regroup: its own report.html
            from . import report_html

            try:  # this regroup by name: one made at once that ended first is the latest when this page is written
                report_html.write(run_dir, store, v, out=work / "report.html", regroup=orjson.loads(written))
            except Exception as exc:  # noqa: BLE001 - a view of regroup.json: its failure loses nothing, and is said
                if progress:
                    progress(f"the regroup's report.html was not written: {type(exc).__name__}: {exc}")
        if progress:
            from .context import consumed_line

            progress(f"regroup {work.name}: {f.status}" + (f" ({f.reason})" if f.reason else "") + "; "
                     + consumed_line(stage_run.consumed, stage_run.seconds))
        return RegroupResult(work, f)
    finally:
        if own_store:
            store.close()


def as_json(f: RegroupFile) -> dict[str, Any]:
    return unstructure(f)  # type: ignore[no-any-return]


__all__ = ["make", "reserve", "versions", "latest", "read", "RegroupFile", "RegroupResult", "check", "STAGE", "FILE"]
