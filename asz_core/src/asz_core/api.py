"""Library entry points: every CLI command is one of these, usable from Python as well."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import AszError
from .collect import CollectResult, Progress, collect, default_paths
from .registry import PluginInfo, Registry
from .store import ConversationRow, Store

if TYPE_CHECKING:
    from .assembly import Conversation


def collect_paths(paths: Iterable[Path] | None = None, *, store: Store | None = None, registry: Registry | None = None,
                  runtime: str | None = None, progress: Progress | None = None) -> CollectResult:
    """Collect runtime files (default ~/.claude/projects) into the store."""
    store = store or Store.open()
    paths = list(paths) if paths else default_paths(registry)
    if not paths:
        raise AszError("no transcripts found where the installed runtimes keep them (~/.claude/projects, ...); name a path")
    return collect(paths, store, registry, runtime=runtime, progress=progress)


def conversations(store: Store | None = None) -> list[ConversationRow]:
    return (store or Store.open()).conversations()


def load(name: str, head: str | int | None = None, *, store: Store | None = None) -> Conversation:
    """The conversation named by id, unique prefix or session id, assembled at a round."""
    from .assembly_cache import load_named  # assembly is imported when a conversation is wanted, not by collect

    return load_named(store or Store.open(), name, head)


def plugins(registry: Registry | None = None) -> list[PluginInfo]:
    return (registry or Registry()).plugins()


def versions(registry: Registry | None = None) -> dict[str, object]:
    """asz's version, Python's, and each installed plugin distribution's with what it provides."""
    import platform
    from importlib.metadata import PackageNotFoundError, version

    def of(dist: str) -> str | None:
        try:
            return version(dist)
        except PackageNotFoundError:
            return None

    dists: dict[str, dict[str, object]] = {}
    for p in plugins(registry):
        d = dists.setdefault(p.distribution, {"distribution": p.distribution, "version": p.version, "provides": []})
        d["provides"].append(f"{p.kind} {p.name}")  # type: ignore[union-attr]
    return {"asz": of("asz") or of("asz-core"), "asz_core": of("asz-core"), "python": platform.python_version(),
            "plugins": sorted(dists.values(), key=lambda d: str(d["distribution"]))}

