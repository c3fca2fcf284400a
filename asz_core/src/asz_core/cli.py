"""The `asz` command: parses, calls one library function, prints. Nothing else lives here."""

from __future__ import annotations

import sys
import warnings
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import click
import orjson
import typer
from rich.markup import escape
from typer.core import TyperCommand

from . import api, commands, help_labels, ledger_report, outputs, pricing, report, times
from .collect_report import progress_bar
from .plain import PlainLine
from .plain import emit as emit_plain
from .commands import AszGroup, Server, config_option
from .errors import AszError, os_error_text
from .tables import InertText, console
from .terminal_text import inert, json_inert

help_labels.install()  # -h: no <bool>, choices that wrap between names

HELP = {"help_option_names": ["-h", "--help"]}
"""-h and --help on every command (click hands it down to sub-commands, plugins' too)."""
# Commands plugins add (asz_register_commands: `asz recorder` comes from asz-adapters-claudecode)
# join core's through AszGroup, loaded only when asked for.
app = typer.Typer(cls=AszGroup, no_args_is_help=True, add_completion=False, context_settings=HELP,
                  help="Judge recorded coding-agent conversations. Start with `asz collect`, then `asz conversations`.")
out = console()
err = console(stderr=True)


def _version(value: bool) -> None:
    if value:
        v = api.versions()
        sys.stdout.write(inert(report.versions_text(v)) + "\n")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[bool, typer.Option("--version", "-V", callback=_version, is_eager=True,
                                          help="Print the versions of asz and its plugins, and exit.")] = False,
) -> None:
    """Judge recorded coding-agent conversations. Start with `asz collect`, then `asz conversations`."""

Head = Annotated[Optional[str], typer.Option("--head", help="Round to view: r3, 3, or a head digest prefix (default: newest).")]
Json = Annotated[bool, typer.Option("--json", help="Print JSON for programs instead of a table.")]


class _CollectCommand(TyperCommand):
    """``asz collect``, whose help names every folder it reads with no path given (each installed
    runtime's, and whether it is on this machine), learnt from the runtimes when -h is asked."""

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        from .collect import default_places

        try:
            places = default_places(commands.registry_of(ctx))
        except Exception:  # noqa: BLE001 - help is printed whatever a plugin does
            places = []
        lines = [escape(inert(f"{name}: {p}")) + ("" if here else " (not on this machine)") for name, p, here in places]
        self.epilog = "With no path, it reads:\n" + "\n".join(lines) if lines else None
        super().format_help(ctx, formatter)


@app.command(cls=_CollectCommand)
def collect(
    paths: Annotated[Optional[list[Path]], typer.Argument(help="Session files or folders (default: every installed runtime's own folders, listed below).")] = None,
    runtime: Annotated[Optional[str], typer.Option("--runtime", help="Force a runtime adapter instead of detecting one.")] = None,
    json: Json = False,
) -> None:
    """Read runtime transcripts and publish what is new as one round per conversation."""
    from .collect import STOPPED

    try:
        result, thing = outputs.collect(paths, runtime, json, out)
    except KeyboardInterrupt:  # collect writes in one transaction: it was not committed
        err.print(inert(STOPPED), highlight=False, soft_wrap=True)
        raise typer.Exit(130) from None
    for p in result.problems:
        err.print(f"[yellow]warning:[/] {escape(inert(p, one_line=True))}", highlight=False)
    _emit(thing, json)
    if result.read_nothing:
        raise typer.Exit(1)


Since = Annotated[Optional[str], typer.Option("--since", help="From this date or time on: 2025-01-31, 2025-01-31T14:00, today, yesterday, 3d, 12h (local time unless --timezone).")]
Until = Annotated[Optional[str], typer.Option("--until", help="Up to this date (all of it) or time: same forms as --since.")]
Zone = Annotated[Optional[str], typer.Option("--timezone", "--tz", help="Time zone of dates, times and days: an IANA name (Europe/Paris), UTC or +02:00 (default: local).")]
Project = Annotated[Optional[list[str]], typer.Option("--project", help="Only conversations whose project (working directory) path holds this, e.g. its folder name; repeatable.")]
Runtime = Annotated[Optional[list[str]], typer.Option("--runtime", help="Only conversations of this runtime (claudecode, codex, kiro, langsmith); repeatable.")]


@app.command()
def conversations(
    since: Since = None, until: Until = None, timezone: Zone = None, project: Project = None, runtime: Runtime = None,
    last: Annotated[Optional[int], typer.Option("--last", "-n", min=1, help="Only the N most recently active.")] = None,
    wide: Annotated[bool, typer.Option("--wide", "-w", help="Every word of each project and first input, wrapped (default: one line a conversation).")] = False,
    json: Json = False,
    server: Server = None,
) -> None:
    """List collected conversations, newest activity last: when, project, cost, talks, calls, first input."""
    _emit(outputs.conversations(since, until, timezone, project or (), runtime or (), last, json, wide), json)


@app.command()
def show(
    conversation: Annotated[str, typer.Argument(help="Conversation id, unique prefix, or session id (or a prefix of one).")],
    head: Head = None,
    talk: Annotated[Optional[str], typer.Option("--talk", "-k", help="One talk's steps in outline (k3; loose for the work before the first input): tools with their status, sub-agents, replies.")] = None,
    timezone: Zone = None,
    json: Json = False,
    operations: Annotated[bool, typer.Option("--operations", help="List the file operations the record shows (o1, o2, … in landing order).")] = False,
    server: Server = None,
) -> None:
    """Show a conversation's talks (start, duration, inputs and replies, tokens, money), sub-agents and streams."""
    _emit(outputs.show(conversation, head, talk, timezone, json, operations), json)


@app.command()
def plugins(json: Json = False) -> None:
    """List installed plugins with their distributions and versions."""
    rows = api.plugins()
    _emit(report.plugins_json(rows) if json else report.plugins_table(rows), json)


class By(str, Enum):
    talk = "talk"
    stream = "stream"
    model = "model"
    day = "day"
    month = "month"
    block = "block"
    project = "project"


@app.command()
def ledger(
    conversation: Annotated[Optional[str], typer.Argument(help="Conversation id, unique prefix or session id (default: all collected).")] = None,
    head: Head = None,
    by: Annotated[Optional[By], typer.Option("--by", help="Rows: talk (with the sub-agents each started), stream, model, day or month (local), block (5-hour usage windows, all conversations) or project.")] = None,
    since: Since = None, until: Until = None, timezone: Zone = None, project: Project = None, runtime: Runtime = None,
    json: Json = False,
    prices: Annotated[Optional[Path], typer.Option("--prices", help="Price file (genai-prices data, JSON or YAML) instead of the shipped snapshot.")] = None,
    server: Server = None,
) -> None:
    """Tokens and money of every model call, each counted once under one owner, priced on its own."""
    if head and not conversation:
        raise typer.BadParameter("--head needs a conversation", param_hint="--head")
    if conversation and by in (By.project, By.block):
        raise typer.BadParameter(f"--by {by.value} is for the ledger of all conversations", param_hint="--by")
    _emit(outputs.ledger(conversation, head, by.value if by else None, since, until, timezone, project or (), runtime or (),
                         json, str(prices) if prices else None), json)


class TeamBy(str, Enum):
    project = "project"
    week = "week"


@app.command()
def runs(
    conversation: Annotated[Optional[str], typer.Argument(help="Only this conversation's runs (id, prefix or session id).")] = None,
    timezone: Zone = None,
    json: Json = False,
    team: Annotated[bool, typer.Option("--team", help="The team's runs, from the team database ($ASZ_JOBS): queued, running, closed or failed, each listed once.")] = False,
    by: Annotated[Optional[TeamBy], typer.Option("--by", help="With --team: cost and scores per project or per week, each conversation once.")] = None,
    html: Annotated[Optional[Path], typer.Option("--html", help="With --team: write the team view as one HTML page with plots to this file.")] = None,
    server: Server = None,
) -> None:
    """List judge runs under ASZ_HOME, newest first: conversation, head, window, status, evaluators, what judging consumed, scores."""
    if (by or html) and not team:
        raise typer.BadParameter("--by and --html are for --team", param_hint="--team")
    if team:
        from .team import remote, team_report, view

        rows = remote.rows(conversation)
        if html:
            team_report.write_page(html, team_report.page(view.groups(rows, "project"), view.groups(rows, "week"), rows))
            err.print(f"wrote {escape(str(html))}", highlight=False, soft_wrap=True)
        if by:
            gs = view.groups(rows, by.value)
            _emit(view.to_json(gs, by.value) if json else team_report.view_text(gs, by.value), json)
        elif not html or json:
            _emit(rows if json else team_report.runs_text(rows, times.zone(timezone)), json)
        return

    _emit(outputs.runs(conversation, timezone, json), json)


@app.command()
def worker(
    concurrency: Annotated[int, typer.Option("--concurrency", "-c", help="Runs this worker makes at once (each in a process of its own).")] = 1,
    until_empty: Annotated[bool, typer.Option("--until-empty", help="Stop once the queue has nothing for this worker (default: run until Ctrl-C or SIGTERM).")] = False,
    config: config_option() = None,
) -> None:
    """Run the team's queued judge runs (`asz judge --all` queues them) from the team database ($ASZ_JOBS)."""
    from .team import jobs

    jobs.work(concurrency=concurrency, until_empty=until_empty, config=config,
              say=lambda line: err.print(escape(line), highlight=False, soft_wrap=True))


@app.command()
def push(
    server: Annotated[Optional[str], typer.Option("--server", metavar="URL", help="The asz server: http(s)://HOST:PORT (default: ASZ_SERVER).")] = None,
    json: Json = False,
) -> None:
    """Send this store's rounds the server lacks, in chain order, in bounded parts; a cut push goes on where it stopped (token: ASZ_TOKEN)."""
    import os

    from . import push as pushing
    from .store import Store

    url = server or os.environ.get("ASZ_SERVER")
    if not url:
        raise typer.BadParameter("give the server: --server URL, or set ASZ_SERVER", param_hint="--server")
    st = Store.open()
    try:
        with progress_bar(err, enabled=not json, what="push") as bar:
            result = pushing.push(st, url, os.environ.get("ASZ_TOKEN"), progress=(lambda d, t: bar(d, t, "")) if bar else None)
    finally:
        st.close()
    _emit(result.to_json() if json else report.push_text(result), json)


server_app = typer.Typer(no_args_is_help=False, add_completion=False, context_settings=HELP,
                         help="A team's store over HTTP (on the PostgreSQL store: store: postgresql://... in asz.yaml, or ASZ_STORE).")
app.add_typer(server_app, name="server")
token_app = typer.Typer(no_args_is_help=True, add_completion=False, context_settings=HELP,
                        help="The machines' tokens: each machine pushes and reads with its own.")
server_app.add_typer(token_app, name="token")


@server_app.callback(invoke_without_command=True)
def server_main(
    ctx: typer.Context,
    host: Annotated[str, typer.Option("--host", help="Address to listen on (default: this machine only; put a TLS proxy in front to open it, docs/server.md).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8047,
) -> None:
    """Serve the team's store: machines push rounds (`asz push`) and read (`--server URL`) with their tokens."""
    if ctx.invoked_subcommand:
        return
    from . import server as srv

    url = srv.team_store_url()
    err.print(f"asz server on http://{host}:{port}, store {escape(srv.redacted(url))}; Ctrl-C stops it", highlight=False)
    srv.serve(url, host, port)


@token_app.command("add")
def token_add(
    name: Annotated[str, typer.Argument(help="The machine's name (letters, digits, - _ .).")],
    read_only: Annotated[bool, typer.Option("--read-only", help="A token that reads, never pushes.")] = False,
    json: Json = False,
) -> None:
    """Make a machine's token and print it, once: the store keeps only its digest."""
    from . import server as srv

    with srv.team_store() as st:
        token = srv.add_token(st, name, readonly=read_only)
    if json:
        _emit({"name": name, "read_only": read_only, "token": token}, True)
    else:
        sys.stdout.write(f"{token}\n")
        err.print(f"the token of {escape(name)}{' (read-only)' if read_only else ''}: shown this once; on that machine "
                  "set ASZ_TOKEN to it", highlight=False)


@token_app.command("revoke")
def token_revoke(name: Annotated[str, typer.Argument(help="The machine's name.")]) -> None:
    """Revoke a machine's token: its requests are refused from now on."""
    from . import server as srv

    with srv.team_store() as st:
        srv.revoke_token(st, name)
    err.print(f"revoked the token of {escape(name)}", highlight=False)


@token_app.command("list")
def token_list(json: Json = False) -> None:
    """The machines' tokens: name, read-only, made, revoked (never the tokens themselves)."""
    from . import server as srv

    with srv.team_store() as st:
        rows = srv.tokens(st)
    _emit(rows if json else report.tokens_table(rows), json)


prices_app = typer.Typer(no_args_is_help=True, add_completion=False, context_settings=HELP, help="The price data ledgers are priced with.")
app.add_typer(prices_app, name="prices")


@prices_app.command("update")
def prices_update(
    to: Annotated[Optional[Path], typer.Option("--to", help="Folder to write the snapshot in (default: the one asz ships).")] = None,
    json: Json = False,
) -> None:
    """Write the installed genai-prices package's data as a dated snapshot (nothing when unchanged)."""
    result = pricing.update_snapshot(to)
    _emit(ledger_report.update_json(result) if json else ledger_report.update_text(result), json)


config_app = typer.Typer(no_args_is_help=True, add_completion=False, context_settings=HELP,
                         help="Which asz.yaml asz reads: --config FILE, a working folder's once trusted, else $ASZ_HOME's.")
app.add_typer(config_app, name="config")


@config_app.command("trust", help="Trust a working folder's asz.yaml as it is now: asz reads it there until it changes "
                                   "(it can name programs asz runs and servers it sends conversations to).")
def config_trust_cmd(
    file: Annotated[Optional[Path], typer.Argument(help="The configuration file to trust (default: ./asz.yaml).")] = None,
    json: Json = False,
) -> None:
    from .config_trust import trust

    path, sha = trust(file)
    _emit({"path": str(path), "sha256": sha} if json
          else PlainLine(f"trusted {path} (sha256 {sha[:12]}): asz reads it in its folder until it changes"), json)


@app.command("compare")
def compare_cmd(
    runs: Annotated[list[str], typer.Argument(help="Two runs or more of one conversation: run directories, ids or unique prefixes.")],
    json: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON.")] = False,
) -> None:
    """Compare judge runs of one conversation from their saved files: targets matched, agreement of level, class, basis, criteria met, rework and final score, work labels weighted by cost with Cohen's kappa, sub-task decisions, scores and judging cost side by side, and what each could not judge."""
    from .judge import compare, compare_report, runner

    d = compare.compare([runner.find_run(r) for r in runs])
    _emit(d if json else compare_report.compare_text(d), json)


sources_app = typer.Typer(no_args_is_help=True, add_completion=False, context_settings=HELP,
                          help="Sources a run is judged against (an incident report, a ticket): `asz sources fetch SRC`.")
app.add_typer(sources_app, name="sources")


@sources_app.command("fetch")
def sources_fetch(
    ctx: typer.Context,
    source: Annotated[str, typer.Argument(help="A path, an http or https URL, or what a fetch command of asz.yaml takes.")],
    config: config_option("Configuration file (its fetch: section; default: ./asz.yaml once trusted, else $ASZ_HOME/asz.yaml).") = None,
    json: Json = False,
) -> None:
    """Fetch one source as a run would, and print its manifest and the first lines of its text (nothing is saved).

    Checks a configured fetch command before judging with it. Exits 1 when the source cannot be fetched.
    """
    from .commands import registry_of
    from .judge import config as configs
    from .judge import sources, sources_report
    from .convert import unstructure

    cfg = configs.load(config)
    copy = sources.take("src1", sources.resolve(source), cfg, registry_of(ctx))
    m = unstructure(copy.manifest)
    if json:
        _emit(m, True)
    else:
        out.print(sources_report.manifest_text(m, copy.text), highlight=False, soft_wrap=True)
    if copy.manifest.status != "saved":
        raise typer.Exit(1)


from .judge import cli as judge_cli  # noqa: E402

judge_app = typer.Typer(cls=judge_cli.JudgeGroup, no_args_is_help=True, add_completion=False, context_settings=HELP,
                        help="Judge a conversation: `asz judge CONV` runs the stages into a new run directory; "
                             "`asz judge -show RUN` renders a run; `asz judge mcp` serves the navigation.")
app.add_typer(judge_app, name="judge")
judge_cli.register(judge_app, out, err, lambda thing, json: _emit(thing, json))
judge_cli.register_regroup(judge_app, out, err, lambda thing, json: _emit(thing, json))


@judge_app.command("mcp")
def judge_mcp(
    conversation: Annotated[Optional[str], typer.Argument(help="Conversation id, unique prefix or session id (default: the one --run names).")] = None,
    head: Head = None,
    window: Annotated[Optional[str], typer.Option("--window", help="all (default), a talk range k3..k7, or a time range FROM..TO (ISO 8601).")] = None,
    budget: Annotated[Optional[int], typer.Option("--budget", help="Reading budget in bytes of answers (judge.read_bytes, default 131072).")] = None,
    log: Annotated[Optional[Path], typer.Option("--log", help="Write every tool call and its answer's bytes to this JSONL file.")] = None,
    run: Annotated[Optional[Path], typer.Option("--run", help="Run directory: its run.json, stages and saved sources.")] = None,
    call: Annotated[Optional[str], typer.Option("--call", help="Call id: the log goes to RUN/calls/CALL/reads.jsonl.")] = None,
    server: Server = None,
) -> None:
    """Serve the read-only navigation tools over one conversation's window on stdio (MCP)."""
    from . import mcp_server

    raise typer.Exit(mcp_server.serve(conversation, head=head, window=window, budget=budget, log=log, run=run, call=call))


def _emit(thing: object, json: bool) -> None:
    if json:
        sys.stdout.write(json_inert(orjson.dumps(thing, option=orjson.OPT_INDENT_2).decode()) + "\n")
    elif isinstance(thing, PlainLine):
        if not emit_plain(thing):
            out.print(InertText(thing))
    else:
        out.print(thing)


def _warn(message: Warning | str, category: type[Warning], filename: str, lineno: int, file: object = None, line: str | None = None) -> None:
    # A plugin that failed to load (or any other warning) reads as one line, like collect's own.
    err.print(f"[yellow]warning:[/] {escape(inert(message, one_line=True))}", highlight=False)


def main() -> None:
    warnings.showwarning = _warn
    try:
        app()
    except AszError as exc:
        err.print(f"[red]error:[/] {escape(inert(str(exc), one_line=not exc.lines))}", highlight=False, soft_wrap=True)
        sys.exit(1)
    except KeyboardInterrupt:
        err.print("interrupted", highlight=False)
        sys.exit(130)
    except BrokenPipeError:  # `asz … | head`: the reader left; nothing more to say
        sys.stderr.close()
        sys.exit(0)
    except OSError as exc:  # the machine, not asz: a file or folder that cannot be read or written
        # (one line: a file's name may hold a newline, which must not forge a line of its own)
        err.print(f"[red]error:[/] {escape(inert(os_error_text(exc), one_line=True))}", highlight=False, soft_wrap=True)
        sys.exit(1)

