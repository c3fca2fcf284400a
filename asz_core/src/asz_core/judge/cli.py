"""``asz judge``: the command group beside ``asz judge mcp``. ``asz judge CONV …`` runs the
stages, ``asz judge -show RUN`` renders a run (``--json`` prints it). Parses and prints only."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import click
import typer
from rich.markup import escape
from typer.core import TyperCommand, TyperGroup

from ..commands import Server, config_option

HELP_FLAGS = ("--help", "-h")


class JudgeGroup(TyperGroup):
    """``asz judge CONV`` and ``asz judge -show RUN`` without a sub-command name: anything that is
    not a sub-command (``mcp``) goes to the hidden ``run`` command, help included: ``asz judge
    --help`` (and ``asz judge -show --help``, ``asz judge CONV -h``) lists the run's options."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands:
            # Help asked anywhere among the run's words is the run's help (a value-taking option
            # such as -show must not swallow it as its value).
            args = ["run", "--help"] if any(a in HELP_FLAGS for a in args) else ["run", *args]
        elif not args:
            args = ["run", "--help"]
        return super().parse_args(ctx, args)


class JudgeRun(TyperCommand):
    """The run command, whose usage reads as the person types it: ``asz judge [OPTIONS] [CONVERSATION]``."""

    def get_usage(self, ctx: click.Context) -> str:
        return super().get_usage(ctx).replace(" judge run ", " judge ", 1)

    def format_usage(self, ctx: click.Context, formatter: Any) -> None:
        formatter.write_usage(ctx.command_path.replace(" judge run", " judge"), " ".join(self.collect_usage_pieces(ctx)))


def register(judge_app: typer.Typer, out: Any, err: Any, emit: Any) -> None:
    @judge_app.command("run", hidden=True, cls=JudgeRun)
    def judge_run(
        ctx: typer.Context,
        conversation: Annotated[Optional[str], typer.Argument(help="Conversation id, unique prefix or session id.")] = None,
        head: Annotated[Optional[str], typer.Option("--head", help="Round to judge: r3, 3 or a head digest prefix (default: newest).")] = None,
        window: Annotated[Optional[str], typer.Option("--window", help="all (default), a talk range k3..k7, or a time range FROM..TO.")] = None,
        evaluator: Annotated[Optional[str], typer.Option("--evaluator", help="Evaluator of every stage: NAME or NAME:MODEL (claude, codex, kiro-cli, anthropic, openai, bedrock) or scripted:FILE. Default: asz.yaml's, else the first available (claude logged in, else an API key), said.")] = None,
        stage_evaluator: Annotated[Optional[list[str]], typer.Option("--stage-evaluator", help="STAGE=NAME[:ARGUMENT], repeatable.")] = None,
            config: config_option() = None,
        stages: Annotated[Optional[str], typer.Option("--stages", help="Comma-separated stages to run (default: all six; the others are written skipped).")] = None,
        mode: Annotated[Optional[str], typer.Option("--mode", help="judge.mode: auto, single or stream.")] = None,
        prices: Annotated[Optional[Path], typer.Option("--prices", help="Price file instead of the shipped snapshot.")] = None,
        source: Annotated[Optional[list[str]], typer.Option("--source", help="A source to judge against: a path or an http(s) URL, or what a fetch command of asz.yaml takes (repeatable; besides asz.yaml's sources:).")] = None,
        show: Annotated[Optional[str], typer.Option("-show", "--show", help="Render a run: its directory, id or id prefix.")] = None,
        json: Annotated[bool, typer.Option("--json", help="Print the run as JSON.")] = False,
        html: Annotated[bool, typer.Option("--html", help="With -show: write the run's report.html again (a run stopped before it was written has none).")] = False,
        costs: Annotated[bool, typer.Option("--costs", help="With -show: write the run's call-costs.json (what each call of its window cost, which `asz compare` reads), for a run closed before asz saved it.")] = False,
        brief: Annotated[bool, typer.Option("--brief", help="Print only the run's summary (its scores, each target's class, cost and time) and where report.html is, for a run made now or given to -show; `asz judge -show RUN` alone prints every table.")] = False,
        goals: Annotated[Optional[Path], typer.Option("--goals", help="The person's label file (goals: a list of goals in your words): regrouped once the run closes, never shown to its stages.")] = None,
        all_: Annotated[bool, typer.Option("--all", help="Queue a run of every conversation the filters keep, at its current head, for the team's workers (`asz worker`); needs the team database ($ASZ_JOBS).")] = False,
        since: Annotated[Optional[str], typer.Option("--since", help="With --all: conversations active from this date or time on (2025-01-31, yesterday, 7d).")] = None,
        until: Annotated[Optional[str], typer.Option("--until", help="With --all: active up to this date (all of it) or time.")] = None,
        timezone: Annotated[Optional[str], typer.Option("--timezone", "--tz", help="With --all: time zone of dates (default: local).")] = None,
        project: Annotated[Optional[list[str]], typer.Option("--project", help="With --all: only conversations whose project path holds this; repeatable.")] = None,
        runtime: Annotated[Optional[list[str]], typer.Option("--runtime", help="With --all: only conversations of this runtime; repeatable.")] = None,
        server: Server = None,
    ) -> None:
        """Judge a conversation at one head: a new run directory under $ASZ_HOME/runs, its stages, its close.

        Exits 3 when the run closed but a stage it ran failed (the run is still written whole). `asz judge -show RUN` renders a run again; `asz runs` lists them. `asz judge mcp CONV` serves the read-only navigation tools over stdio (what a CLI evaluator reads through; `asz judge mcp -h`). `asz judge regroup RUN --goals FILE` regroups a closed run by the person's own goals (`asz judge regroup -h`); `asz compare RUN RUN` compares runs.
        """
        from ..commands import registry_of
        from . import pick, runner
        from . import report as judge_report

        if html and not show:
            raise typer.BadParameter("--html writes a run's report again: give -show RUN", param_hint="--html")
        if costs and not show:
            raise typer.BadParameter("--costs writes a closed run's call-costs.json: give -show RUN", param_hint="--costs")
        if show and costs:
            written = runner.write_call_costs(runner.find_run(show))
            out.print(f"call costs {escape(str(written))}", soft_wrap=True, highlight=False)
            return
        if show and html:
            written = runner.write_report(runner.find_run(show))
            out.print(f"report {escape(str(written))}", soft_wrap=True, highlight=False)
            return
        if show:
            d = runner.read_run(runner.find_run(show))
            emit(d if json else judge_report.summary_text(d) if brief else judge_report.run_text(d), json)
            return
        per_stage: dict[str, str] = {}
        for s in stage_evaluator or []:
            name, eq, spec = s.partition("=")
            if not eq or not name or not spec:
                raise typer.BadParameter(f"{s!r}: give STAGE=NAME", param_hint="--stage-evaluator")
            per_stage[name.strip()] = spec.strip()
        filtering = since or until or timezone or project or runtime
        if all_:
            if conversation:
                raise typer.BadParameter("give a conversation or --all, not both", param_hint="--all")
            if goals:
                raise typer.BadParameter("--goals regroups one conversation's run: `asz judge regroup RUN --goals FILE`",
                                         param_hint="--goals")
            from ..conversations import Filter
            from ..team import remote, team_report

            done = remote.judge_all(
                Filter.of(since, until, timezone, project or (), runtime or ()), evaluator, stage_evaluators=per_stage,
                window=window, stages=tuple(x.strip() for x in stages.split(",") if x.strip()) if stages else None,
                config=config)
            emit(team_report.queued_json(done) if json else team_report.queued_text(done), json)
            return
        if filtering:
            raise typer.BadParameter("--since, --until, --timezone, --project and --runtime choose conversations for --all",
                                     param_hint="--all")
        if not conversation:
            raise typer.BadParameter("give a conversation to judge, --all, or -show RUN", param_hint="CONVERSATION")
        from ..store import Store

        st = Store.open()  # a mistyped id or head is said before any evaluator is looked for
        try:
            st.round(st.resolve(conversation), head)
        finally:
            st.close()
        registry = registry_of(ctx)
        if not evaluator and not per_stage:  # none given: the first available the backends say, said
            evaluator = pick.choose(registry, config, lambda line: err.print(escape(line), highlight=False, soft_wrap=True),
                                    tuple(x.strip() for x in stages.split(",") if x.strip()) if stages else None)
        opts = runner.JudgeOptions(
            conversation, head=head, window=window, evaluator=evaluator, stage_evaluators=per_stage, config=config,
            stages=tuple(x.strip() for x in stages.split(",") if x.strip()) if stages else None,
            prices=str(prices) if prices else None, settings={"judge.mode": mode} if mode else {}, goals=goals,
            sources=tuple(source or ()))
        say = None if json else (lambda line: err.print(escape(line), highlight=False))  # wrapped to the terminal
        result = runner.judge(opts, registry=registry, progress=say)
        d = runner.read_run(result.path)
        if json:
            emit(d, True)
        else:
            out.print(f"run {escape(str(result.path))}", soft_wrap=True, highlight=False)
            # the rate was said as the run closed (its progress): not again under the report
            emit(judge_report.summary_text(d) if brief else judge_report.run_text(d, rate=False), False)
            if (result.path / "report.html").is_file():
                out.print(f"report {escape(str(result.path / 'report.html'))}", soft_wrap=True, highlight=False)
        failed = runner.failures(result.path)
        if result.regroup is not None and result.regroup.file.status == "failed":
            failed.append(f"the regroup {result.regroup.path} failed: {result.regroup.file.reason}")
        for line in failed:
            err.print(f"[red]error:[/] {escape(line)}", highlight=False, soft_wrap=True)
        if failed:
            raise typer.Exit(runner.STAGE_FAILED_EXIT)


def register_regroup(judge_app: typer.Typer, out: Any, err: Any, emit: Any) -> None:
    @judge_app.command("regroup")
    def judge_regroup(
        ctx: typer.Context,
        run: Annotated[str, typer.Argument(help="A closed run: its directory, id or a unique prefix of one.")],
        goals: Annotated[Path, typer.Option("--goals", help="The person's label file: goals: a list of goals in their own words.")],
        evaluator: Annotated[Optional[str], typer.Option("--evaluator", help="NAME[:ARG] of the one call (default: the run's targets stage's).")] = None,
        json: Annotated[bool, typer.Option("--json", help="Print the regroup as JSON.")] = False,
    ) -> None:
        """Regroup a closed run by the person's own goals: one evaluator call places each target in a goal, then the two groupings are compared goal by goal (regroups/v<N>/ beside the run; the run is never changed). Exits 3 when its call failed (the regroup is kept, failed)."""
        from ..commands import registry_of
        from . import regroup, runner
        from .person_goals import read as read_label
        from .regroup_report import regroup_text

        path = runner.find_run(run)
        label = read_label(goals)
        say = None if json else (lambda line: err.print(escape(line), highlight=False))
        got = regroup.make(path, label, evaluator=evaluator, registry=registry_of(ctx), progress=say)
        if json:
            emit(regroup.as_json(got.file), True)
        else:
            out.print(f"regroup {escape(str(got.path))}", soft_wrap=True, highlight=False)
            emit(regroup_text(runner.read_run(path), regroup.as_json(got.file)), False)
            if (got.path / "report.html").is_file():  # the run's page following this regroup (the run's own is written once)
                out.print(f"report {escape(str(got.path / 'report.html'))}", soft_wrap=True, highlight=False)
        if got.file.status == "failed":
            err.print(f"[red]error:[/] {escape(str(got.file.reason))}; the call's files are in "
                      f"{escape(str(got.path / 'calls'))}", highlight=False, soft_wrap=True)
            raise typer.Exit(3)
