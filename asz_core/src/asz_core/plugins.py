"""Building the plugin manager. Nothing is loaded at import time: call make_plugin_manager()."""

from __future__ import annotations

import importlib
import os
import sys
import warnings
from typing import Any

import pluggy

from . import hookspecs
from .errors import DuplicatePlugin, PluginError

# Built-in plugins registered in-process, through the same hooks a third party uses.
DEFAULT_PLUGINS: tuple[str, ...] = ("asz_core.builtin",)


def make_plugin_manager(*, autoload: bool | None = None) -> pluggy.PluginManager:
    """A fresh plugin manager: hookspecs, blocked names, entry points of group ``asz``, built-ins.

    ``ASZ_DISABLE_PLUGINS`` (comma-separated entry-point names) blocks plugins;
    ``ASZ_DISABLE_PLUGIN_AUTOLOAD=1`` skips entry points; ``ASZ_TRACE_PLUGINS=1`` traces hook calls.
    A plugin that fails to load is a warning naming its entry point (see :func:`failures_of`);
    two distributions registering one entry-point name is a :class:`DuplicatePlugin` error.
    """
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    for name in filter(None, (n.strip() for n in os.environ.get("ASZ_DISABLE_PLUGINS", "").split(","))):
        pm.set_blocked(name)
    if autoload is None:
        autoload = os.environ.get("ASZ_DISABLE_PLUGIN_AUTOLOAD", "") in ("", "0")
    if autoload:
        _load_entry_points(pm)
    for modname in DEFAULT_PLUGINS:
        if pm.get_plugin(modname) is None and not pm.is_blocked(modname):
            pm.register(importlib.import_module(modname), name=modname)
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        name = pm.get_name(exc.plugin) or repr(exc.plugin)
        dist = distributions_of(pm).get(name, ("(built-in)", ""))[0]
        raise PluginError(f"asz plugin {name!r} (distribution {dist}) implements a hook asz does not define: "
                          f"{exc}; upgrade asz or the plugin, or block it with ASZ_DISABLE_PLUGINS={name}") from exc
    if os.environ.get("ASZ_TRACE_PLUGINS"):
        pm.trace.root.setwriter(lambda s: print(s, end="", file=sys.stderr))
        pm.enable_tracing()
    return pm


def _load_entry_points(pm: pluggy.PluginManager) -> None:
    """Load each entry point on its own, so one broken plugin is a warning, not a crash."""
    from .entrypoints import entry_points

    seen: dict[str, Any] = {}  # entry-point name -> its entry point
    # Only the entry points of group ``asz`` (a distribution found twice on sys.path is listed
    # once, the first, as imports take it); a distribution's metadata is read only when a
    # message or `asz plugins` names it.
    for ep in entry_points(group=hookspecs.PROJECT):
        if ep.name in seen:
            other = seen[ep.name]
            if _canonical(_name(other)) == _canonical(_name(ep)):
                continue  # one distribution found twice on sys.path: the first one wins, as for imports
            raise DuplicatePlugin(
                f"two distributions register the asz plugin {ep.name!r}: {_name(other)} ({other.value}) and "
                f"{_name(ep)} ({ep.value}); uninstall one of them"
            )
        seen[ep.name] = ep
        if pm.is_blocked(ep.name) or pm.get_plugin(ep.name) is not None:
            continue
        try:
            plugin = ep.load()
            pm.register(plugin, name=ep.name)
        except Exception as exc:  # a broken third-party plugin must not stop asz
            if pm.get_plugin(ep.name) is not None:
                pm.unregister(name=ep.name)  # registered halfway before a hook failed validation
            message = f"{type(exc).__name__}: {exc}"
            failures_of(pm)[ep.name] = message
            warnings.warn(f"asz plugin {ep.name!r} ({ep.value}, distribution {_name(ep)}) failed to load: {message}",
                          stacklevel=3)
            continue
        _loaded(pm)[ep.name] = ep


def _name(ep: Any) -> str:
    return ep.dist.metadata["Name"] if ep.dist is not None else ep.module


def _loaded(pm: pluggy.PluginManager) -> dict[str, Any]:
    if not hasattr(pm, "asz_entry_points"):
        pm.asz_entry_points = {}  # type: ignore[attr-defined]
    return pm.asz_entry_points  # type: ignore[attr-defined]


def _canonical(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def distributions_of(pm: pluggy.PluginManager) -> dict[str, tuple[str, str]]:
    """plugin name -> (distribution, version) for the plugins this manager loaded from entry points."""
    return {name: (_name(ep), ep.dist.version if ep.dist is not None else "") for name, ep in _loaded(pm).items()}


def failures_of(pm: pluggy.PluginManager) -> dict[str, str]:
    """entry-point name -> why it failed to load, for the plugins this manager had to skip."""
    if not hasattr(pm, "asz_failures"):
        pm.asz_failures = {}  # type: ignore[attr-defined]
    return pm.asz_failures  # type: ignore[attr-defined]
