"""The evaluator ``asz judge`` uses when none is given (no ``--evaluator``, no
``--stage-evaluator``, none in asz.yaml): the first available of

1. ``claude``: the claude CLI on the PATH (or ``ASZ_CLAUDE``, or ``evaluators.claude.command``)
   and logged in (``claude auth status`` says ``loggedIn``);
2. an API key in the environment: ``anthropic`` (ANTHROPIC_API_KEY), ``openai``
   (OPENAI_API_KEY), ``bedrock`` (AWS_BEARER_TOKEN_BEDROCK), each with the model set in asz.yaml
   (``evaluators: {NAME: {model: ...}}``) or, for anthropic and openai, a default one.

It says which it chose and why; with none, it says what to set up.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from asz_core.errors import ConfigError

DEFAULT_MODELS = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-5.5"}
"""The model an API evaluator chosen by default uses when asz.yaml names none."""
API_ORDER = (("anthropic", "ANTHROPIC_API_KEY"), ("openai", "OPENAI_API_KEY"), ("bedrock", "AWS_BEARER_TOKEN_BEDROCK"))

SETUP = """no evaluator given, and none is available here. Set up one of:
  - the claude CLI (Claude Code): install it, run `claude auth login` (or set ANTHROPIC_API_KEY), and make sure
    `claude` is on the PATH (or set ASZ_CLAUDE to it); asz judge then uses --evaluator claude
  - an API key: ANTHROPIC_API_KEY (anthropic), OPENAI_API_KEY (openai) or AWS_BEARER_TOKEN_BEDROCK (bedrock, with
    evaluators: {bedrock: {model: MODEL}} in asz.yaml), and pip install 'asz-evaluators[anthropic|openai|bedrock]'
  - or name one: asz judge CONV --evaluator NAME[:MODEL] (claude, codex, kiro-cli, anthropic, openai, bedrock, scripted:FILE)"""


def claude_status(exe: str, timeout: float = 30.0) -> dict[str, Any] | None:
    """What ``claude auth status`` says (a JSON object), or None when it says nothing readable."""
    try:
        r = subprocess.run([exe, "auth", "status"], capture_output=True, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    try:
        v = json.loads(r.stdout)
    except ValueError:
        return None
    return v if isinstance(v, dict) else None


def claude_available(options: dict[str, Any]) -> str | None:
    """Why claude can run here (on the PATH and logged in), or None."""
    exe = options.get("command") or os.environ.get("ASZ_CLAUDE") or shutil.which("claude")
    if not exe:
        return None
    st = claude_status(str(exe))
    if not st or st.get("loggedIn") is not True:
        return None
    how = st.get("apiKeySource") or st.get("authMethod") or "logged in"
    return f"the claude CLI is on the PATH ({exe}) and logged in ({how})"


def _sdk(name: str) -> bool:
    import importlib.util

    mod = {"anthropic": "anthropic", "openai": "openai", "bedrock": "boto3"}[name]
    return importlib.util.find_spec(mod) is not None


def pick(evaluators: dict[str, Any] | None = None, env: dict[str, str] | None = None) -> tuple[str, str]:
    """The evaluator spec to use (NAME or NAME:MODEL) and why. Raises ConfigError saying what to
    set up when none is available."""
    evaluators = evaluators or {}
    env = dict(os.environ if env is None else env)
    why = claude_available(dict(evaluators.get("claude") or {}))
    if why:
        return "claude", why
    missing_sdk: list[str] = []
    for name, key in API_ORDER:
        if not env.get(key):
            continue
        if not _sdk(name):
            missing_sdk.append(f"{key} is set, but the {name} SDK is not installed (pip install 'asz-evaluators[{name}]')")
            continue
        model = (evaluators.get(name) or {}).get("model") or DEFAULT_MODELS.get(name)
        if not model:
            missing_sdk.append(f"{key} is set, but the {name} evaluator needs a model: set evaluators: "
                               f"{{{name}: {{model: MODEL}}}} in asz.yaml or give --evaluator {name}:MODEL")
            continue
        configured = bool((evaluators.get(name) or {}).get("model"))
        spec = name if configured else f"{name}:{model}"
        return spec, f"{key} is set" + ("" if configured else f"; model {model} (give --evaluator {name}:MODEL for another)")
    raise ConfigError(SETUP + ("".join(f"\n  ({m})" for m in missing_sdk)))


def choose(config: Path | None, say: Callable[[str], None] | None = None, stages: tuple[str, ...] | None = None) -> str | None:
    """For ``asz judge`` with no evaluator given: None when asz.yaml names one for every stage
    asked for (it decides), else the picked spec, said through ``say``."""
    from asz_core.judge import config as configs
    from asz_core.judge import runner

    cfg = configs.load(config)
    asked = [s for s in (stages or configs.STAGES) if s in runner.BUILT]
    if all(cfg.evaluator_for(s) for s in asked):
        return None
    spec, why = pick(dict(cfg.evaluators or {}))
    if say:
        say(f"evaluator: {spec}, the first available ({why}); give --evaluator NAME[:MODEL] to choose another")
    return spec
