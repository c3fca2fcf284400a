"""The stages of a judge run, in order (decisions.md section 4). Each built stage is a function
``(run, evaluator spec, backend) -> StageFile``; the runner writes what it returns."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..config import STAGES
from .achievement import run_achievement
from .divergence import run_divergence
from .efficiency import run_efficiency
from .reference import run_reference
from .subtasks import run_subtasks
from .targets import run_targets

STAGE_FUNCTIONS: dict[str, Callable[..., Any]] = {"targets": run_targets, "achievement": run_achievement,
                                                  "subtasks": run_subtasks, "efficiency": run_efficiency,
                                                  "reference": run_reference, "divergence": run_divergence}

__all__ = ["STAGES", "STAGE_FUNCTIONS"]
