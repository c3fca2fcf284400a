"""``asz judge``: the command group beside ``asz judge mcp``. ``asz judge CONV …`` runs the
stages, ``asz judge -show RUN`` renders a run (``--json`` prints it). Parses and prints only."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import click
import typer
from rich.markup import escape
from typer.core import TyperCommand, TyperGroup

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
        config: Annotated[Optional[Path], typer.Option("--config", help="Configuration file (default: ./asz.yaml, else $ASZ_HOME/asz.yaml).")] = None,
        stages: Annotated[Optional[str], typer.Option("--stages", help="Comma-separated stages to run (default: all six; the others are written skipped).")] = None,
        mode: Annotated[Optional[str], typer.Option("--mode", help="judge.mode: auto, single or stream.")] = None,
        prices: Annotated[Optional[Path], typer.Option("--prices", help="Price file instead of the shipped snapshot.")] = None,
        show: Annotated[Optional[str], typer.Option("-show", "--show", help="Render a run: its directory, id or id prefix.")] = None,
        json: Annotated[bool, typer.Option("--json", help="Print the run as JSON.")] = False,
    ) -> None:
        """Judge a conversation at one head: a new run directory under $ASZ_HOME/runs, its stages, its close.

        Exits 3 when the run closed but a stage it ran failed (the run is still written whole). `asz judge -show RUN` renders a run again; `asz runs` lists them. `asz judge mcp CONV` serves the read-only navigation tools over stdio (what a CLI evaluator reads through; `asz judge mcp -h`).
        """
        from ..commands import registry_of
        from . import pick, runner
        from . import report as judge_report

        if show:
            d = runner.read_run(runner.find_run(show))
            emit(d if json else judge_report.run_text(d), json)
            return
        if not conversation:
            raise typer.BadParameter("give a conversation to judge, or -show RUN", param_hint="CONVERSATION")
        per_stage: dict[str, str] = {}
        for s in stage_evaluator or []:
            name, eq, spec = s.partition("=")
            if not eq or not name or not spec:
                raise typer.BadParameter(f"{s!r}: give STAGE=NAME", param_hint="--stage-evaluator")
            per_stage[name.strip()] = spec.strip()
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
            prices=str(prices) if prices else None, settings={"judge.mode": mode} if mode else {})
        say = None if json else (lambda line: err.print(escape(line), highlight=False))  # wrapped to the terminal
        result = runner.judge(opts, registry=registry, progress=say)
        d = runner.read_run(result.path)
        if json:
            emit(d, True)
        else:
            out.print(f"run {escape(str(result.path))}", soft_wrap=True, highlight=False)
            emit(judge_report.run_text(d), False)
            if (result.path / "report.html").is_file():
                out.print(f"report {escape(str(result.path / 'report.html'))}", soft_wrap=True, highlight=False)
        failed = runner.failures(result.path)
        for line in failed:
            err.print(f"[red]error:[/] {escape(line)}", highlight=False, soft_wrap=True)
        if failed:
            raise typer.Exit(runner.STAGE_FAILED_EXIT)
