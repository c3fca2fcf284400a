"""The whole plugin contract of asz.

asz finds plugins through pluggy. A plugin is a module with functions marked ``@hookimpl``
whose names are the hooks below; a distribution makes it known through the entry-point group
``asz`` in its own pyproject.toml::

    [project.entry-points.asz]
    myruntime = "asz_myruntime.plugin"

The three plugin-kind hooks return *classes*, never instances. The classes implement the
interfaces in :mod:`asz_core.interfaces` and carry a unique ``name``. They are called with no
arguments and all results are collected (no first-result-wins); the registry rejects two classes
of one kind that claim one name, naming both distributions. ``asz_register_commands`` is the
fourth hook: it adds a plugin's own commands to the ``asz`` command line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    import typer

    from .interfaces import EvaluatorBackend, RuntimeAdapter, SourceFetcher

PROJECT = "asz"
_spec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@_spec
def asz_runtime_adapters() -> Sequence[type[RuntimeAdapter]]:
    """Return the runtime adapter classes this plugin provides.

    Called once when the registry is first asked for a runtime adapter (``asz collect``,
    ``asz plugins``, assembly of a stored conversation). Each class reads one runtime's files
    (Claude Code, Kiro, LangSmith, ...) into stored records and normalized events; assembly in
    core turns those into streams, talks and steps, so an adapter never builds talks itself.

    Each class's ``name`` (``"claudecode"``, ``"kiro"``, ...) must be unique across all
    installed plugins; it is stored with every conversation the adapter collected and used to
    find the adapter again. Import nothing heavy here: do it inside the class.
    """


@_spec
def asz_evaluator_backends() -> Sequence[type[EvaluatorBackend]]:
    """Return the evaluator backend classes this plugin provides.

    Called once per run, when the stage runner first resolves a backend name. Each class's
    ``name`` must be unique across all installed plugins (``"anthropic"``, ``"claude"``,
    ``"codex"``, ``"kiro-cli"``, ``"scripted"``, ...); a clash is an error.
    Do not import provider SDKs here; import them inside the class.
    """


@_spec
def asz_source_fetchers() -> Sequence[type[SourceFetcher]]:
    """Return the source fetcher classes this plugin provides.

    Called when a run is given a source (a file, a URL, a ticket) to judge against. Each class
    says which sources it can fetch and fetches one into bytes plus a manifest; it is never
    given the conversation. ``name`` is unique across all installed plugins.
    """


@_spec
def asz_register_commands(app: typer.Typer) -> None:
    """Add this plugin's commands to the ``asz`` command line (as simonw/llm's ``register_commands``).

    Called when ``asz`` is asked for a command it does not hold itself, or lists its commands
    (``asz --help``); never to run one of core's own commands. ``app`` is a fresh ``typer.Typer``
    given to this plugin alone: add commands to it (``@app.command()``) or groups
    (``app.add_typer(sub, name="recorder")``); each becomes ``asz NAME``. A command's name must be
    unique across installed plugins and cannot be one of core's; a clash is an error naming both.
    Import what a command needs inside the command, so listing the commands stays cheap. A command
    that fails for bad input raises an :class:`~asz_core.errors.AszError`: ``asz`` prints its message.
    """
