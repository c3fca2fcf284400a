"""Building the plugin manager. Nothing is loaded at import time: call make_plugin_manager()."""

from __future__ import annotations

import os
import sys
import warnings

import pluggy

from . import hookspecs

# Built-in plugins registered in-process, through the same hooks a third party uses.
DEFAULT_PLUGINS: tuple[str, ...] = ("asz_core.builtin",)



def make_plugin_manager(*, autoload: bool | None = None) -> pluggy.PluginManager:
    """A fresh plugin manager: hookspecs, blocked names, entry points of group ``asz``, built-ins.

    ``ASZ_DISABLE_PLUGINS`` (comma-separated entry-point names) blocks plugins;
    ``ASZ_DISABLE_PLUGIN_AUTOLOAD=1`` skips entry points; ``ASZ_TRACE_PLUGINS=1`` traces hook calls.
    """
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    for name in filter(None, (n.strip() for n in os.environ.get("ASZ_DISABLE_PLUGINS", "").split(","))):
        pm.set_blocked(name)
    if autoload is None:
        autoload = os.environ.get("ASZ_DISABLE_PLUGIN_AUTOLOAD", "") in ("", "0")
    if autoload:
        _load_entry_points(pm)
    import importlib

    for modname in DEFAULT_PLUGINS:
        if pm.get_plugin(modname) is None and not pm.is_blocked(modname):
            pm.register(importlib.import_module(modname), name=modname)
    pm.check_pending()
    if os.environ.get("ASZ_TRACE_PLUGINS"):
        pm.trace.root.setwriter(lambda s: print(s, end="", file=sys.stderr))
        pm.enable_tracing()
    return pm


def _load_entry_points(pm: pluggy.PluginManager) -> None:
    """Load each entry point on its own, so one broken plugin is a warning, not a crash."""
    from importlib.metadata import distributions

    seen: set[str] = set()
    for dist in distributions():
        for ep in dist.entry_points:
            if ep.group != hookspecs.PROJECT or ep.name in seen:
                continue
            seen.add(ep.name)
            if pm.is_blocked(ep.name) or pm.get_plugin(ep.name) is not None:
                continue
            try:
                plugin = ep.load()
            except Exception as exc:  # a broken third-party plugin must not stop asz
                warnings.warn(f"asz plugin {ep.name!r} ({ep.value}) failed to load: {exc}", stacklevel=2)
                continue
            pm.register(plugin, name=ep.name)
            distributions_of(pm)[ep.name] = (dist.metadata["Name"], dist.version)


def distributions_of(pm: pluggy.PluginManager) -> dict[str, tuple[str, str]]:
    """plugin name -> (distribution, version) for the plugins this manager loaded from entry points."""
    if not hasattr(pm, "asz_distributions"):
        pm.asz_distributions = {}  # type: ignore[attr-defined]
    return pm.asz_distributions  # type: ignore[attr-defined]
