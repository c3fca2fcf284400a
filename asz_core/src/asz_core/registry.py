"""The one place that calls hooks: name -> class maps per plugin kind, with clear errors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import attrs
import pluggy

from .errors import DuplicatePlugin, UnknownPlugin
from .interfaces import EvaluatorBackend, RuntimeAdapter, SourceFetcher
from .plugins import distributions_of, make_plugin_manager

T = TypeVar("T")

KINDS = {
    "runtime adapter": "asz_runtime_adapters",
    "evaluator backend": "asz_evaluator_backends",
    "source fetcher": "asz_source_fetchers",
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

    def fetcher(self, name: str) -> type[SourceFetcher]:
        return self._get("source fetcher", name)

    def detect_runtime(self, path: Path) -> RuntimeAdapter | None:
        """The first adapter (by name) that says it reads ``path``."""
        for name in sorted(self._map("runtime adapter")):
            adapter = self.runtime(name)
            if adapter.detect(path):
                return adapter
        return None

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
            raise UnknownPlugin(kind, name, list(m))
        return m[name][0]

    def _map(self, kind: str) -> dict[str, tuple[type, str]]:
        if kind in self._maps:
            return self._maps[kind]
        hook: Callable[..., Any] = getattr(self.pm.hook, KINDS[kind])
        found: dict[str, tuple[type, str]] = {}
        for impl in hook.get_hookimpls():
            for cls in impl.function() or ():
                name = getattr(cls, "name", None)
                if not isinstance(name, str) or not name:
                    raise DuplicatePlugin(f"{kind} {cls!r} from plugin {impl.plugin_name!r} has no name")
                if name in found:
                    other_cls, other_plugin = found[name]
                    d1, _ = self._dist_of(other_plugin)
                    d2, _ = self._dist_of(impl.plugin_name)
                    raise DuplicatePlugin(
                        f"two {kind}s are named {name!r}: {other_cls.__module__}.{other_cls.__qualname__} "
                        f"(distribution {d1}) and {cls.__module__}.{cls.__qualname__} (distribution {d2}); "
                        f"uninstall one, or block one with ASZ_DISABLE_PLUGINS"
                    )
                found[name] = (cls, impl.plugin_name)
        self._maps[kind] = found
        return found

    def _dist_of(self, plugin_name: str) -> tuple[str, str]:
        loaded = distributions_of(self.pm)
        if plugin_name in loaded:
            return loaded[plugin_name]
        plugin = self.pm.get_plugin(plugin_name)
        # Registered in-process: attribute it to the distribution that holds its module.
        mod = getattr(plugin, "__name__", plugin_name).split(".")[0]
        from importlib.metadata import PackageNotFoundError, packages_distributions, version

        for dname in packages_distributions().get(mod, []):
            try:
                return dname, version(dname)
            except PackageNotFoundError:
                pass
        return "(built-in)", ""
