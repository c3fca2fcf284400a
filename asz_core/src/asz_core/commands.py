"""The ``asz`` command group: core's own commands, then the ones plugins add through the hook
``asz_register_commands``, loaded only when a command core does not hold is asked for (or all are
listed), so ``asz collect`` never builds a plugin's commands."""

from __future__ import annotations

import os
from typing import Annotated, Any, Optional

import typer
from typer.core import TyperGroup

from .errors import PluginError
from .registry import Registry


def _use_server(value: str | None) -> str | None:
    """``--server URL``: the command reads that server's store (as ``ASZ_STORE`` would say, so an
    ``asz judge mcp`` the judge starts reads it too)."""
    if value:
        os.environ["ASZ_STORE"] = value
    return value


Server = Annotated[Optional[str], typer.Option(
    "--server", callback=_use_server, is_eager=True, metavar="URL",
    help="Read an asz server's store instead of this machine's: http(s)://HOST:PORT (the token: ASZ_TOKEN).")]


def _name_config(value: Any) -> Any:
    """``--config FILE``: the file every part of the command reads (the store's choice too)."""
    from .config_trust import name

    name(value)
    return value


def config_option(help_text: str = "Configuration file (default: ./asz.yaml once trusted with `asz config trust`, else $ASZ_HOME/asz.yaml).") -> Any:
    """The ``--config FILE`` option of every command that reads asz.yaml."""
    from pathlib import Path

    return Annotated[Optional[Path], typer.Option("--config", callback=_name_config, is_eager=True, help=help_text)]


def registry_of(ctx: Any) -> Registry:
    """The registry a command line runs with: the one its context was given (``obj``, as a test
    gives its own plugin manager's), else the installed plugins'."""
    given = ctx.find_object(Registry) if ctx is not None else None
    return given if given is not None else Registry()


class AszGroup(TyperGroup):
    """A typer group whose commands beyond its own come from plugins."""

    def _from_plugins(self, ctx: Any) -> dict[str, Any]:
        cached = getattr(self, "_plugin_commands", None)
        if cached is None:
            cached = {}
            for name, (cmd, plugin) in registry_of(ctx).commands().items():
                if name in self.commands:
                    raise PluginError(f"plugin {plugin!r} adds the command asz {name}, which is asz's own; upgrade the "
                                      f"plugin, or block it with ASZ_DISABLE_PLUGINS={plugin}")
                cached[name] = cmd
            self._plugin_commands = cached
        return cached

    def invoke(self, ctx: Any) -> Any:
        from .config_trust import name

        # A command reads the file its own --config names, never an earlier one's (one process
        # running many commands: a test's, a worker's)
        name(None)
        try:
            return super().invoke(ctx)
        finally:
            name(None)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        return super().get_command(ctx, cmd_name) or self._from_plugins(ctx).get(cmd_name)

    def list_commands(self, ctx: Any) -> list[str]:
        return [*super().list_commands(ctx), *sorted(self._from_plugins(ctx))]
