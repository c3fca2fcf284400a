"""The evaluator ``asz judge`` uses when none is named (no ``--evaluator``, no
``--stage-evaluator``, none in asz.yaml for a stage asked for).

Core names no backend here: it asks the installed evaluator backends that set a
``default_order`` (:class:`~asz_core.interfaces.EvaluatorBackend`), lowest first and ties by
name, whether they can run on this machine (:meth:`~asz_core.interfaces.EvaluatorBackend.available`),
runs the first that can, and says which it picked and why. With none, the error lists what each
would need. The shipped backends' order is in docs/judge.md (claude, then anthropic, openai,
bedrock by the key set, then codex and kiro-cli).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..interfaces import Availability, EvaluatorBackend
from . import config as configs
from .runner import BUILT

NONE_AVAILABLE = "no evaluator given, and none is available here. Set up one of:"


def ranked(registry: Any) -> list[type[EvaluatorBackend]]:
    """The installed backends asz may pick unasked, in the order it asks them."""
    return sorted((c for c in registry.evaluators() if c.default_order is not None),
                  key=lambda c: (c.default_order, c.name))


def availability(cls: type[EvaluatorBackend], options: dict[str, Any]) -> Availability:
    try:
        got = cls.available(options)
    except Exception as exc:  # a backend that cannot say is not picked; the others still are
        return Availability(False, f"could not tell ({type(exc).__name__}: {exc})")
    return got if isinstance(got, Availability) else Availability(False, f"available() returned {got!r}, not an Availability")


def pick(registry: Any, evaluators: dict[str, Any] | None = None) -> tuple[str, str]:
    """The evaluator spec to use (NAME or NAME:ARGUMENT) and why. Raises ConfigError saying what
    each backend would need when none is available."""
    evaluators = evaluators or {}
    missing: list[str] = []
    for cls in ranked(registry):
        a = availability(cls, dict(evaluators.get(cls.name) or {}))
        if a.ok:
            return (f"{cls.name}:{a.argument}" if a.argument else cls.name), a.why
        missing.append(f"  - {cls.name}: {a.why}")
    names = ", ".join(c.name for c in registry.evaluators()) or "none"
    err = ConfigError("\n".join([NONE_AVAILABLE, *missing,
                                 f"  - or name one: asz judge CONV --evaluator NAME[:MODEL] (installed: {names})"]))
    err.lines = True  # a list of what to do, one line each
    raise err


def choose(registry: Any, config: Path | None, say: Callable[[str], None] | None = None,
           stages: tuple[str, ...] | None = None) -> str | None:
    """For ``asz judge`` with no evaluator given: None when asz.yaml names one for every stage
    asked for (it decides), else the picked spec, said through ``say``."""
    cfg = configs.load(config)
    asked = [s for s in (stages or configs.STAGES) if s in BUILT]
    if all(cfg.evaluator_for(s) for s in asked):
        return None
    spec, why = pick(registry, dict(cfg.evaluators or {}))
    if say:
        say(f"evaluator: {spec}, the first available ({why}); give --evaluator NAME[:MODEL] to choose another")
    return spec
