"""The `asz` command's entry point. The two commands programs run all the time, ``asz collect
--json`` and ``asz ledger --json``, run here without typer, rich and pydantic (about a third of a
second of imports, more than either command's own work when nothing is new). They parse the same
options as asz_core.cli's commands and call the same library functions; anything else (another
command, a table, ``-h``, an option or a value this parser does not take, a mistake to explain)
goes to the full CLI, which says what is wrong exactly as it always did."""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path
from typing import Any

_LEDGER_BY = ("talk", "stream", "model", "day", "month", "project")

# command -> (flags, options taking a value (name -> repeatable), how many arguments at most)
_SPEC: dict[str, tuple[frozenset[str], dict[str, bool], int | None]] = {
    "collect": (frozenset({"--json"}), {"--runtime": False}, None),
    "ledger": (frozenset({"--json"}), {"--head": False, "--by": False, "--since": False, "--until": False,
                                       "--timezone": False, "--project": True, "--runtime": True, "--prices": False}, 1),
}
_ALIASES = {"--tz": "--timezone"}


def parse(argv: list[str]) -> tuple[str, dict[str, Any], list[str]] | None:
    """``(command, options, arguments)`` when this path runs ``argv``, else None (the full CLI does)."""
    if not argv or argv[0] not in _SPEC:
        return None
    command, rest = argv[0], argv[1:]
    flags, valued, most = _SPEC[command]
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
    if not opts.get("--json") or (most is not None and len(args) > most):
        return None
    if command == "ledger":
        by = opts.get("--by")
        if by is not None and by not in _LEDGER_BY:
            return None
        if (opts.get("--head") is not None and not args) or (args and by == "project"):
            return None  # the CLI's usage errors
    return command, opts, args


def run(command: str, opts: dict[str, Any], args: list[str]) -> int:
    if command == "collect":
        from .api import collect_paths
        from .collect import STOPPED, collect_json

        try:
            result = collect_paths([Path(a) for a in args] or None, runtime=opts.get("--runtime"))
        except KeyboardInterrupt:  # collect writes in one transaction: it was not committed
            sys.stderr.write(STOPPED + "\n")
            return 130
        for p in result.problems:
            _say("warning:", "33", str(p))
        _print_json(collect_json(result))
        return 1 if result.read_nothing else 0
    from . import conversations as convs
    from .gcpause import no_gc
    from .ledger_data import all_ledger_json, ledger_json

    prices = str(Path(opts["--prices"])) if opts.get("--prices") else None
    f = convs.Filter.of(opts.get("--since"), opts.get("--until"), opts.get("--timezone"), opts.get("--project") or (),
                        opts.get("--runtime") or ())
    by = opts.get("--by")
    with no_gc():  # many objects, few cycles: the cycle collector only costs time here
        if args:
            led = convs.ledger_of_one(args[0], opts.get("--head"), f, prices=prices)
            _print_json(ledger_json(led, by, f.tz))
        else:
            _print_json(all_ledger_json(convs.ledger_of_all(f, by, prices=prices)))
    return 0


def _print_json(thing: object) -> None:
    import orjson

    from .terminal_text import json_inert

    sys.stdout.write(json_inert(orjson.dumps(thing, option=orjson.OPT_INDENT_2).decode()) + "\n")


def _say(label: str, color: str, text: str) -> None:
    # As the full CLI says it (rich: coloured on a terminal), one line each, inert as every line
    # printed for a person (a file name may hold an escape sequence).
    from .terminal_text import inert

    text = inert(text, one_line=True)
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
        _say("error:", "31", str(exc))
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
