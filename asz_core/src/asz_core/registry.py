"""The one place that calls hooks: name -> class maps per plugin kind, with clear errors."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import attrs
import pluggy

from .errors import DuplicatePlugin, PluginError, UnknownPlugin
from .interfaces import EvaluatorBackend, RuntimeAdapter, SourceFetcher
from .plugins import distributions_of, failures_of, make_plugin_manager

T = TypeVar("T")

KINDS = {
    "runtime adapter": "asz_runtime_adapters",
    "evaluator backend": "asz_evaluator_backends",
    "source fetcher": "asz_source_fetchers",
}
INTERFACES: dict[str, type] = {
    "runtime adapter": RuntimeAdapter,
    "evaluator backend": EvaluatorBackend,
    "source fetcher": SourceFetcher,
}


@attrs.frozen
class PluginInfo:
    kind: str
    name: str
    cls: str
    plugin: str
    distribution: str
    version: str


class Registry:
    """Typed facade over the plugin manager."""

    def __init__(self, pm: pluggy.PluginManager | None = None) -> None:
        self.pm = pm if pm is not None else make_plugin_manager()
        self._maps: dict[str, dict[str, tuple[type, str]]] = {}

    # -- lookups --------------------------------------------------------------------------
    def runtime(self, name: str) -> RuntimeAdapter:
        return self._get("runtime adapter", name)()

    def runtimes(self) -> list[RuntimeAdapter]:
        return [cls() for cls, _ in self._map("runtime adapter").values()]

    def evaluator(self, name: str) -> type[EvaluatorBackend]:
        return self._get("evaluator backend", name)

    def evaluators(self) -> list[type[EvaluatorBackend]]:
        """Every installed evaluator backend class, by name."""
        return [cls for _, (cls, _) in sorted(self._map("evaluator backend").items())]

    def fetcher(self, name: str) -> type[SourceFetcher]:
        return self._get("source fetcher", name)

    def detect_runtime(self, path: Path) -> RuntimeAdapter | None:
        """The first adapter (by name) that says it reads ``path``."""
        for name in sorted(self._map("runtime adapter")):
            adapter = self.runtime(name)
            if adapter.detect(path):
                return adapter
        return None

    def commands(self) -> dict[str, tuple[Any, str]]:
        """The commands plugins add to ``asz`` (hook ``asz_register_commands``): name -> (click
        command, plugin name). A plugin whose hook fails is a warning, as a broken import is."""
        import typer
        import typer.main

        found: dict[str, tuple[Any, str]] = {}
        for impl in self.pm.hook.asz_register_commands.get_hookimpls():
            app = typer.Typer(add_completion=False)
            try:
                impl.function(**({"app": app} if "app" in impl.argnames else {}))
                added = typer.main.get_group(app).commands
            except Exception as exc:
                message = f"{type(exc).__name__}: {exc}"
                failures_of(self.pm)[impl.plugin_name] = message
                warnings.warn(f"asz plugin {impl.plugin_name!r}: asz_register_commands() failed: {message}", stacklevel=3)
                continue
            for name, cmd in added.items():
                if name in found:
                    raise DuplicatePlugin(f"two plugins add the command asz {name}: {found[name][1]!r} (distribution "
                                          f"{self._dist_of(found[name][1])[0]}) and {self._where(impl.plugin_name)()}; "
                                          "uninstall one, or block one with ASZ_DISABLE_PLUGINS=<plugin>")
                found[name] = (cmd, impl.plugin_name)
        return found

    def plugins(self) -> list[PluginInfo]:
        out = []
        for kind in KINDS:
            for name, (cls, plugin) in sorted(self._map(kind).items()):
                dist, version = self._dist_of(plugin)
                out.append(PluginInfo(kind, name, f"{cls.__module__}.{cls.__qualname__}", plugin, dist, version))
        return out

    # -- internals ------------------------------------------------------------------------
    def _get(self, kind: str, name: str) -> Any:
        m = self._map(kind)
        if name not in m:
            exc = UnknownPlugin(kind, name, list(m))
            failed = failures_of(self.pm)
            if failed:  # the one asked for may be among them: say so rather than only "unknown"
                exc.args = (f"{exc}; plugins that failed to load: "
                            + "; ".join(f"{n} ({why})" for n, why in sorted(failed.items())),)
            raise exc
        return m[name][0]

    def _map(self, kind: str) -> dict[str, tuple[type, str]]:
        if kind in self._maps:
            return self._maps[kind]
        hook: Callable[..., Any] = getattr(self.pm.hook, KINDS[kind])
        found: dict[str, tuple[type, str]] = {}
        trace = self.pm.trace.root.get("registry")  # writes only with ASZ_TRACE_PLUGINS=1
        for impl in hook.get_hookimpls():
            where = self._where(impl.plugin_name)
            try:
                classes = impl.function()
                trace(f"{KINDS[kind]}() of plugin {impl.plugin_name!r} ->", classes)
            except Exception as exc:  # e.g. the lazy import of its classes failed: skip it, as a broken import
                message = f"{type(exc).__name__}: {exc}"
                failures_of(self.pm)[impl.plugin_name] = message
                warnings.warn(f"asz plugin {impl.plugin_name!r}: {KINDS[kind]}() failed: {message}", stacklevel=4)
                continue
            if classes is None:
                continue
            if isinstance(classes, (type, str, bytes)) or not isinstance(classes, Iterable):
                raise PluginError(f"{where()}: {KINDS[kind]}() must return a list of classes, not {classes!r}")
            for cls in classes:
                if not (isinstance(cls, type) and issubclass(cls, INTERFACES[kind])):
                    raise PluginError(f"{where()}: {KINDS[kind]}() returned {cls!r}, which is not a "
                                      f"{INTERFACES[kind].__name__} subclass")
                name = getattr(cls, "name", None)
                if not isinstance(name, str) or not name:
                    raise PluginError(f"{where()}: {kind} {cls.__module__}.{cls.__qualname__} has no name")
                if name in found:
                    other_cls, other_plugin = found[name]
                    d1, _ = self._dist_of(other_plugin)
                    dist, _ = self._dist_of(impl.plugin_name)
                    raise DuplicatePlugin(
                        f"two {kind}s are named {name!r}: {other_cls.__module__}.{other_cls.__qualname__} "
                        f"(distribution {d1}, plugin {other_plugin!r}) and {cls.__module__}.{cls.__qualname__} "
                        f"(distribution {dist}, plugin {impl.plugin_name!r}); uninstall one, or block one "
                        f"with ASZ_DISABLE_PLUGINS=<plugin>"
                    )
                found[name] = (cls, impl.plugin_name)
        self._maps[kind] = found
        return found

    def _where(self, plugin_name: str) -> Callable[[], str]:
        return lambda: f"plugin {plugin_name!r} (distribution {self._dist_of(plugin_name)[0]})"

    def _dist_of(self, plugin_name: str) -> tuple[str, str]:
        loaded = distributions_of(self.pm)
        if plugin_name in loaded:
            return loaded[plugin_name]
        plugin = self.pm.get_plugin(plugin_name)
        # Registered in-process: attribute it to the distribution that holds its module.
        mod = getattr(plugin, "__name__", plugin_name).split(".")[0]
        from importlib.metadata import PackageNotFoundError, version

        for dname in _packages_distributions().get(mod, []):
            try:
                return dname, version(dname)
            except PackageNotFoundError:
                pass
        return "(built-in)", ""


@functools.cache
def _packages_distributions() -> Mapping[str, list[str]]:
    """Top-level module -> distributions, read once per process: it scans every installed
    distribution's files, which costs seconds in a large environment, and is asked once per
    in-process plugin."""
    from importlib.metadata import packages_distributions

    return packages_distributions()
