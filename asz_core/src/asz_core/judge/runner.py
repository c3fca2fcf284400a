"""The stage runner: a judge run from its directory to its close (docs/judge.md).

``judge(options)`` pins a run to one head and window, writes ``run.json``, runs the stages in
order and writes each as one Session Judgment file, once, atomically; a stage that fails is
written failed with the reason, and the run still closes. Stages not built yet are written
skipped. Runs are never merged: judging the same head again makes a new run directory.

What each evaluator call is sent and gives back is kept under
``calls/<stage>/<call>/<attempt>/``: ``prompt.md``, ``requests.jsonl`` (one request a line),
``answer.txt`` (the raw answer), ``stderr.txt`` and ``reads.jsonl`` (the navigation log). A call
that gives nothing readable is tried once more in its own directory; what the failed attempt
consumed still counts.
"""

from __future__ import annotations

import datetime as dt
import glob
import os
import secrets
import socket
from pathlib import Path
from typing import Any

from attrs import field, frozen

from ..convert import dumps
from ..errors import AszError, ConfigError, os_error_text
from ..id_paths import child, id_folders, inside
from ..store import Store, asz_home
from . import config as configs
from .context import (EvaluatorSpec, Progress, Run, consumed_line, evaluator_ref, failed_stage_line, keep_traceback, now,
                      parse_evaluator, write_once)
from .judgment import VERSION, CloseFile, PriceRef, RunFile
from .stages import STAGE_FUNCTIONS

BUILT = tuple(STAGE_FUNCTIONS)
"""Stages this asz can run (those :data:`~asz_core.judge.stages.STAGE_FUNCTIONS` holds); the
others are written skipped, "not built yet"."""
SOURCE_STAGES = ("reference", "divergence")


@frozen
class JudgeOptions:
    """What ``asz judge`` was asked (flags); the configuration file fills the rest."""

    conversation: str
    head: str | None = None
    window: str | None = None
    evaluator: str | None = None
    stage_evaluators: dict[str, str] = field(factory=dict)
    config: Path | None = None
    stages: tuple[str, ...] | None = None
    prices: str | None = None
    settings: dict[str, Any] = field(factory=dict)
    """Flat overrides of the configuration (``judge.mode``: ``stream``)."""
    goals: Path | None = None
    """The person's label file: regrouped once the run closes, never shown to its stages (docs/regroup.md)."""
    sources: tuple[str, ...] = ()
    """``--source PATH|URL``: judged against besides asz.yaml's ``sources:``."""


@frozen
class RunResult:
    path: Path
    stages: dict[str, str]
    close: CloseFile
    regroup: Any = None
    """The regroup made with the person's goals (:class:`~.regroup.RegroupResult`), when they were given."""


# --- judge ------------------------------------------------------------------------------------

def _plugin_versions(registry: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for p in registry.plugins():
        out.setdefault(p.distribution, p.version)
    return out


RUN_PATHS = 512
"""Room a run directory's path leaves for the run's own files below it (calls/<stage>/<call>/<attempt>/…,
a regroup's work/state/…; the deepest is under 200 bytes)."""


def run_dir_for(conversation: str, home: Path | None = None) -> Path:
    """A new run directory ``runs/<conversation encoded>/<run id>`` (:mod:`..id_paths`: a session
    id from a transcript is never a path as it is), checked to stay inside the asz home."""
    home = home or asz_home()
    base = child(home, "runs", ids=(conversation,))
    try:
        longest = os.pathconf(home if os.path.isdir(home) else os.path.dirname(os.path.abspath(home)) or ".", "PC_PATH_MAX")
    except (OSError, ValueError):
        longest = 4096
    if len(os.fsencode(base)) + RUN_PATHS > longest:
        # An id of thousands of bytes (a hostile transcript's) makes a path the system refuses: said
        # before anything is made, in a line (the system's error names the whole path, ten thousand bytes)
        n = len(conversation.encode("utf-8", "surrogatepass"))
        raise AszError(f"conversation {conversation[:40]!r}…: its id is {n:,} bytes long, too long for a run "
                       f"folder's path here (at most {longest:,} bytes, with room for the run's own files); "
                       "asz show and asz ledger read it, a judge run of it cannot be written")
    base.mkdir(parents=True, exist_ok=True)
    inside(home, base)  # made: no link in its way leads out
    while True:
        rid = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(2)
        try:
            (base / rid).mkdir()
            return inside(home, base / rid)
        except FileExistsError:
            continue


def judge(options: JudgeOptions, *, store: Store | None = None, registry: Any = None,
          progress: Progress | None = None) -> RunResult:
    """A judge run over one conversation at one head (see the module's docstring)."""
    from importlib.metadata import PackageNotFoundError, version

    from .. import ledger
    from .. import window as windows
    from ..registry import Registry
    from .kit import Kit

    started = now()
    overrides = dict(options.settings)
    cfg = configs.load(options.config, overrides=overrides)
    asked = tuple(options.stages) if options.stages else configs.STAGES
    for s in asked:
        if s not in configs.STAGES:
            raise ConfigError(f"no stage {s!r}; stages: {', '.join(configs.STAGES)}")
    registry = registry or Registry()
    specs: dict[str, EvaluatorSpec] = {}
    for s in asked:
        if s not in BUILT:
            continue
        given = options.stage_evaluators.get(s) or options.evaluator or cfg.evaluator_for(s)
        if not given:
            names = sorted(p.name for p in registry.plugins() if p.kind == "evaluator backend")
            raise ConfigError(f"no evaluator for the {s} stage: give --evaluator NAME, --stage-evaluator {s}=NAME or "
                              f"judge.evaluator in asz.yaml (installed: {', '.join(names) or 'none'})")
        specs[s] = parse_evaluator(given, cfg)
    # An unknown name, a missing SDK or CLI, a model not given, a CLI not logged in: each fails
    # before the run starts (each evaluator asked once, whatever stages it runs).
    for sp in {(sp.name, sp.argument, repr(sp.options)): sp for sp in specs.values()}.values():
        registry.evaluator(sp.name).check(sp.argument, sp.options)
    for s in options.stage_evaluators:
        if s not in configs.STAGES:
            raise ConfigError(f"--stage-evaluator names {s!r}, which is no stage; stages: {', '.join(configs.STAGES)}")
    label, regroup_with = None, None
    if options.goals is not None:  # a label file that is not read stops the run before it starts
        from .person_goals import read as read_label

        label = read_label(options.goals)
        regroup_with = (specs["targets"].spec if "targets" in specs else
                        options.stage_evaluators.get("targets") or options.evaluator or cfg.evaluator_for("targets"))
        if not regroup_with:
            raise ConfigError("--goals: no evaluator to regroup with: give --evaluator NAME (the targets stage's is used)")
    from .sources import save_all, sources_of

    given_sources = sources_of(cfg, options.sources)
    kit = Kit.load()
    store = store or Store.open()
    w = windows.build(store, options.conversation, options.head, options.window)
    window_text = options.window or "all"
    prices = ledger.load_prices(options.prices)
    try:
        adapter = registry.runtime(w.conv.runtime)
    except AszError:
        adapter = None
    path = run_dir_for(w.conv.id, getattr(store, "runs_home", None) or (Path(store.path).parent if getattr(store, "path", None) else None))
    try:
        asz_version = version("asz-core")
    except PackageNotFoundError:
        asz_version = ""
    evals = {s: evaluator_ref(registry, sp) for s, sp in specs.items()}
    rf = RunFile(version=VERSION, run=path.name, conversation=w.conv.id, runtime=w.conv.runtime, head=w.head,
                 head_digest=w.round.head, window=window_text, window_detail=w.to_json(),
                 prices=PriceRef(name=prices.file.name, path=prices.file.path, sha256=prices.file.sha256),
                 kit=kit.digest, kit_path=str(kit.path), config=configs.to_json(cfg), stages=asked, evaluators=evals,
                 plugins=_plugin_versions(registry), asz=asz_version, started=started, pid=os.getpid(),
                 host=socket.gethostname(), sources=tuple(given_sources))
    write_once(path / "run.json", dumps(rf, indent=True) + b"\n")
    # Every source is saved before any evaluator runs: a run whose reference stage never runs
    # still holds what it was given.
    saved = save_all(path, given_sources, cfg, registry, progress)
    usable = [m for m in saved if m.status == "saved"]
    run = Run(path, w, store, cfg, kit, prices, adapter, registry, window_text, progress)
    statuses: dict[str, str] = {}
    for stage in configs.STAGES:
        if stage not in asked:
            sf = run.stage_file(stage, "skipped", "not asked for (--stages)")
        elif stage in SOURCE_STAGES and not saved:
            sf = run.stage_file(stage, "skipped", "no sources were given")
        elif stage in SOURCE_STAGES and not usable:
            sf = run.stage_file(stage, "skipped", "no source could be saved, so every comparison is unavailable: "
                                + "; ".join(f"{m.id}: {m.why}" for m in saved))
        elif stage not in BUILT:
            sf = run.stage_file(stage, "skipped", "not built yet")
        else:
            sp = specs[stage]
            backend = registry.evaluator(sp.name)()
            try:
                sf = STAGE_FUNCTIONS[stage](run, sp, backend)
            except AszError as exc:
                sf = run.stage_file(stage, "failed", str(exc))
            except Exception as exc:  # a stage's own failure is written, and the run still closes
                sf = run.stage_file(stage, "failed", f"{type(exc).__name__}: {exc}")
                keep_traceback(path, stage)
            if progress:
                from ..tables import plural  # what says a count as tables do; rich only once someone watches

                progress(f"{stage}: {sf.status}" + (f" ({sf.reason})" if sf.reason else "")
                         + f"; {plural(sf.run.calls, 'call')}, {plural(sf.run.attempts, 'attempt')}; "
                         + consumed_line(sf.run.consumed, sf.run.seconds, rate=False))  # the rate once, at the close
        sf = _write_stage(run, sf)
        statuses[stage] = sf.status
    from . import call_costs, report_html, run_files
    from .close import View, close_file, read_stages

    # The close reads the window and prices the run was pinned to (as load_view would build them
    # again from run.json, without assembling a large conversation twice).
    run_json = run_files.run_json(path)
    view = View(run_json, read_stages(path, run_json), w, ledger.build(w.conv, prices), prices)
    close = close_file(path, store, registry, view)
    # Before close.json, so that a closed run holds what each call cost: a reader of its files
    # (asz compare) needs no store.
    try:
        call_costs.write(path, store, view)
    except OSError as exc:  # the machine's (a full disk): said, naming the file; `-show RUN --costs` writes it again
        if progress:
            progress(f"{call_costs.FILE} was not written: {os_error_text(exc)}; `asz judge -show {path.name} --costs` "
                     "writes it again")
    except Exception as exc:  # asz's own fault: the run still closes, and says so (compare will say it is missing)
        keep_traceback(path, "call-costs")
        if progress:
            progress(f"{call_costs.FILE} was not written: {type(exc).__name__}: {exc}")
    write_once(path / "close.json", dumps(close, indent=True) + b"\n")
    regrouped = None
    if label is not None:  # applied once the run closed: its stages never saw the goals
        from . import regroup

        try:
            regrouped = regroup.make(path, label, evaluator=regroup_with, store=store, registry=registry,
                                     progress=progress, view=view)
        except AszError as exc:
            if progress:
                progress(f"the regroup was not made: {exc}")
        except Exception as exc:  # asz's own fault: the closed run keeps its report, and the regroup can be made again
            keep_traceback(path, "regroup")
            if progress:
                progress(f"the regroup was not made: {type(exc).__name__}: {exc}; `asz judge regroup {path.name} "
                         f"--goals {options.goals}` makes it again")
    try:
        report_html.write(path, store, view)
    except OSError as exc:  # the machine's (a full disk), not asz's fault: no traceback kept; -show says it is missing
        if progress:
            progress(f"report.html was not written: {os_error_text(exc)}; `asz judge -show {path.name} --html` "
                     "writes it again")
    except Exception as exc:  # the report is a view of close.json: its failure loses nothing, and is said
        keep_traceback(path, "report")
        if progress:
            progress(f"report.html was not written: {type(exc).__name__}: {exc}")
    if progress:
        progress("run closed: the evaluator stages consumed " + consumed_line(close.consumed, close.evaluator_seconds)
                 + (f"; no final statement: {close.error}" if close.error else ""))
    return RunResult(path, statuses, close, regrouped)


def _write_stage(run: Run, sf: Any) -> Any:
    """Write a stage's file; one that cannot be written (asz's fault: something of the answer it
    kept is no JSON) is written failed with the reason and its traceback, and the run goes on. A
    stage whose answers were cut (:func:`~.context.bound_answer`) is partial, its note saying what."""
    cuts = getattr(run, "cuts", {}).get(sf.stage)
    if cuts and sf.status in ("complete", "partial"):
        import attrs

        said = [f"an answer past asz's bounds was cut: {c}" for c in cuts[:20]]
        sf = attrs.evolve(sf, status="partial", note=tuple(said) + tuple(sf.note or ()))
    try:
        run.write_stage(sf)
        return sf
    except Exception as exc:  # noqa: BLE001 - a stage file that cannot be written never loses the run
        keep_traceback(run.path, sf.stage)
        why = f"its stage file could not be written: {type(exc).__name__}: {exc}"
        try:
            failed = run.stage_file(sf.stage, "failed", why, kit=sf.kit, evaluator=sf.evaluator, run=sf.run)
            run.write_stage(failed)
        except Exception:  # noqa: BLE001 - what the evaluator said of itself is no JSON either
            failed = run.stage_file(sf.stage, "failed", why, kit=sf.kit, run=sf.run)
            run.write_stage(failed)
        return failed


STAGE_FAILED_EXIT = 3
"""``asz judge``'s exit status when the run closed but a stage it ran failed, or its final
statement could not be computed (docs/judge.md)."""


def failures(path: Path) -> list[str]:
    """What went wrong in a closed run, one line each with what to do; empty when nothing did."""
    d = read_run(path)
    out = []
    for name, sf in d["stages"].items():
        if sf.get("status") == "failed":
            out.append(failed_stage_line(name, sf.get("reason"), path))
    err = (d["close"] or {}).get("error")
    if err:
        out.append(f"the final statement could not be computed: {err}")
    elif (path / "calls" / "report.traceback.txt").is_file():
        out.append(f"report.html could not be written (asz's fault: {path / 'calls' / 'report.traceback.txt'} says "
                   "where); close.json holds the whole statement, and asz judge -show renders it")
    return out


# --- reading a run ----------------------------------------------------------------------------

def find_run(name: str | Path, home: Path | None = None) -> Path:
    """A run directory by path, by run id, or by a unique prefix of a run id."""
    p = Path(name)
    if os.path.lexists(p / "run.json"):
        return p
    base = (home or asz_home()) / "runs"
    # a run id is asz's own (a time and hex), so a name with a glob's or a path's characters names none
    plain = str(name) and not set(str(name)) & set("/\\*?[]\0") and not str(name).startswith(".")
    # (a run folder that is a link is no run of ASZ_HOME's: it leads anywhere, and is never followed)
    hits = sorted(d for f, _ in id_folders(base) for d in f.glob(f"{glob.escape(str(name))}*")
                  if not d.is_symlink() and os.path.lexists(d / "run.json")) if base.is_dir() and plain else []
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise AszError(f"no run {str(name)!r}: give a run directory or a run id (under {base})")
    raise AszError(f"{str(name)!r} names {len(hits)} runs: " + ", ".join(h.name for h in hits[:5]))


def write_call_costs(path: Path, store: Store | None = None) -> Path:
    """call-costs.json of a closed run written (``asz judge -show RUN --costs``): a run closed
    before asz saved what each call cost has none, and ``asz compare`` reads only a run's files.
    Computed as the close computes it, from the store at the run's head and its price file."""
    from . import call_costs
    from .run_files import close_json, run_json

    run = run_json(path)
    if close_json(path, run["run"]) is None:
        raise AszError(f"{path} has not closed: its close writes {call_costs.FILE}")
    return call_costs.write(path, store)


def write_report(path: Path, store: Store | None = None) -> Path:
    """report.html of a closed run written again (``asz judge -show RUN --html``): a run killed
    between close.json and its report has none. A run that has not closed has nothing to report;
    one whose report is there keeps it (a run's files are written once)."""
    from . import report_html
    from .run_files import REPORT, close_json, run_json

    run = run_json(path)
    if close_json(path, run["run"]) is None:
        raise AszError(f"{path} has not closed: there is no statement to write a report of")
    out = Path(path) / REPORT
    if os.path.lexists(out):
        raise AszError(f"{out} is there already (a run's files are written once): open it, or remove it to write it again")
    return report_html.write(path, store or Store.open())


def read_run(path: Path) -> dict[str, Any]:
    """A run as plain JSON: run.json, every stage file written, close.json when it closed, and the
    latest regroup that compared anything (``regroup``, None when none did). A
    stage file that does not read (:mod:`.stage_files`) stands as ``{stage, status: unreadable,
    reason}``, the reason saying why; a run.json or close.json that does not read is a
    :class:`~.run_files.RunFileError` naming it (:mod:`.run_files`). ``problems``: what a closed run
    lacks (:func:`~.run_files.closed_run_problems`: a stage file, report.html)."""
    from .run_files import close_json, closed_run_problems, run_json
    from .stage_files import Pin, present, read_all

    run = run_json(path)
    close = close_json(path, run["run"])
    read = read_all(path, Pin.of_json(run))
    stages = {s: r.data if r.data is not None else {"stage": s, "status": r.status, "reason": r.problem}
              for s, r in present(read).items()}
    from .regroup_files import latest

    return {"path": str(path), "run": run, "stages": stages, "close": close, "regroup": latest(path),
            "problems": closed_run_problems(path, read, close is not None)}


