"""The `asz` command's entry point. The commands a person types every day and the ones programs
run all the time (``asz collect``, ``asz ledger``, ``asz conversations``, ``asz show``, ``asz runs``,
as tables or with ``--json``) run here without typer, click and pydantic (about a third of a second
of imports, more than most of these commands' own work), and without rich where their tables can
be drawn plainly (:mod:`.plain_render`; rich only for a table that needs it). They parse
the same options as asz_core.cli's commands and print what the same functions (``outputs``) give;
anything else (another command, ``-h``, an option or a value this parser does not take, a mistake
to explain) goes to the full CLI, which says what is wrong exactly as it always did."""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path
from typing import Any

_LEDGER_BY = ("talk", "stream", "model", "day", "month", "block", "project")
_SPAN = {"--since": False, "--until": False, "--timezone": False, "--project": True, "--runtime": True}

# command -> (flags, options taking a value (name -> repeatable), fewest and most arguments (None: any))
_SPEC: dict[str, tuple[frozenset[str], dict[str, bool], int, int | None]] = {
    "collect": (frozenset({"--json"}), {"--runtime": False}, 0, None),
    "ledger": (frozenset({"--json"}), {"--head": False, "--by": False, **_SPAN, "--prices": False}, 0, 1),
    "conversations": (frozenset({"--json", "--wide"}), {**_SPAN, "--last": False}, 0, 0),
    "show": (frozenset({"--json", "--operations"}), {"--head": False, "--talk": False, "--timezone": False}, 1, 1),
    "runs": (frozenset({"--json"}), {"--timezone": False}, 0, 1),
}
_ALIASES = {"--tz": "--timezone", "-n": "--last", "-k": "--talk", "-w": "--wide"}


def parse(argv: list[str]) -> tuple[str, dict[str, Any], list[str]] | None:
    """``(command, options, arguments)`` when this path runs ``argv``, else None (the full CLI does)."""
    if not argv or argv[0] not in _SPEC:
        return None
    command, rest = argv[0], argv[1:]
    flags, valued, fewest, most = _SPEC[command]
    opts: dict[str, Any] = {}
    args: list[str] = []
    i, only_args = 0, False
    while i < len(rest):
        a = rest[i]
        i += 1
        if only_args or a == "-" or not a.startswith("-"):
            args.append(a)
            continue
        if a == "--":
            only_args = True
            continue
        name, eq, value = a.partition("=")
        if not name.startswith("--") and eq:
            return None  # -n=5: click reads it as the value "=5"; its own error
        name = _ALIASES.get(name, name)
        if name in flags and not eq:
            opts[name] = True
        elif name in valued:
            if not eq:
                if i >= len(rest) or rest[i].startswith("-"):
                    return None  # a missing value: the full CLI says so
                value = rest[i]
                i += 1
            if valued[name]:
                opts.setdefault(name, []).append(value)
            else:
                opts[name] = value
        else:
            return None  # -h, --help, an option of another command, a typo
    if len(args) < fewest or (most is not None and len(args) > most):
        return None  # the full CLI's usage error
    if "--last" in opts:
        from .digits import whole

        last = whole(opts["--last"])
        if last is None or last < 1:
            return None  # not a count from 1 on: the full CLI says so
        opts["--last"] = last
    if command == "ledger":
        by = opts.get("--by")
        if by is not None and by not in _LEDGER_BY:
            return None
        if (opts.get("--head") is not None and not args) or (args and by in ("project", "block")):
            return None  # the CLI's usage errors
    return command, opts, args


def run(command: str, opts: dict[str, Any], args: list[str]) -> int:
    from . import outputs

    json = bool(opts.get("--json"))
    zone, heads = opts.get("--timezone"), opts.get("--head")
    out = None  # a console only when a table needs rich (_emit), or collect's bar (outputs.collect)
    if command == "collect":
        from .collect import STOPPED

        try:
            result, thing = outputs.collect([Path(a) for a in args], opts.get("--runtime"), json, out)
        except KeyboardInterrupt:  # collect writes in one transaction: it was not committed
            sys.stderr.write(STOPPED + "\n")
            return 130
        for p in result.problems:
            _say("warning:", "33", str(p))
        _emit(thing, out, json)
        return 1 if result.read_nothing else 0
    if command == "ledger":
        prices = str(Path(opts["--prices"])) if opts.get("--prices") else None
        thing = outputs.ledger(args[0] if args else None, heads, opts.get("--by"), opts.get("--since"), opts.get("--until"),
                               zone, opts.get("--project") or (), opts.get("--runtime") or (), json, prices)
    elif command == "conversations":
        thing = outputs.conversations(opts.get("--since"), opts.get("--until"), zone, opts.get("--project") or (),
                                      opts.get("--runtime") or (), opts.get("--last"), json, bool(opts.get("--wide")))
    elif command == "show":
        thing = outputs.show(args[0], heads, opts.get("--talk"), zone, json, bool(opts.get("--operations")))
    else:
        thing = outputs.runs(args[0] if args else None, zone, json)
    _emit(thing, out, json)
    return 0


def _emit(thing: object, out: Any, json: bool) -> None:
    """JSON, or a table on the console ``out`` (as the full CLI prints it; made here if need be)."""
    if json:
        _print_json(thing)
        return
    from .plain import PlainLine, emit

    if isinstance(thing, PlainLine) and emit(thing):
        return
    from .plain_render import emit as emit_plain

    if not isinstance(thing, PlainLine) and emit_plain(thing):  # the bytes rich would write, without rich
        return
    from .tables import InertText, console

    out = out or console()
    out.print(InertText(thing) if isinstance(thing, PlainLine) else thing)


def _print_json(thing: object) -> None:
    import orjson

    from .terminal_text import json_inert

    sys.stdout.write(json_inert(orjson.dumps(thing, option=orjson.OPT_INDENT_2).decode()) + "\n")


def _say(label: str, color: str, text: str, *, lines: bool = False) -> None:
    # As the full CLI says it (rich: coloured on a terminal), one line each, inert as every line
    # printed for a person (a file name may hold an escape sequence).
    from .terminal_text import inert

    text = inert(text, one_line=not lines)
    colored = sys.stderr.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
    head = f"\x1b[{color}m{label}\x1b[0m" if colored else label
    sys.stderr.write(f"{head} {text}\n")


def _warn(message: Warning | str, category: type[Warning], filename: str, lineno: int, file: object = None,
          line: str | None = None) -> None:
    _say("warning:", "33", str(message))


def main() -> None:
    parsed = parse(sys.argv[1:])
    if parsed is None:
        from .cli import main as full

        full()
        return
    from .errors import AszError, os_error_text

    warnings.showwarning = _warn
    try:
        code = run(*parsed)
    except AszError as exc:
        _say("error:", "31", str(exc), lines=exc.lines)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    except BrokenPipeError:  # `asz … | head`: the reader left; nothing more to say
        sys.stderr.close()
        sys.exit(0)
    except OSError as exc:  # the machine, not asz: a file or folder that cannot be read or written
        _say("error:", "31", os_error_text(exc))
        sys.exit(1)
    sys.exit(code)
