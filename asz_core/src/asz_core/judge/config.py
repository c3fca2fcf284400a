"""Configuration of a judge run: ``asz.yaml`` (ruamel.yaml) and flags, through the one converter.

Where the file is: ``--config PATH``; else ``asz.yaml`` in the working folder; else
``$ASZ_HOME/asz.yaml``; else the defaults below (decisions.md section 14). Flags override the
file. A path inside the file (a scripted evaluator's script) is read relative to the file.

.. code-block:: yaml

    judge:
      read_bytes: 131072      # reading budget of one evaluator call, bytes of answers
      single_bytes: 49152     # rows that fit this go to one call
      chunk_bytes: 32768      # else calls of at most this many bytes of rows
      state_bytes: 16384      # the catalogue given to a call takes at most this
      mode: auto              # auto, single or stream
      concurrency: 4          # calls side by side, where a stage allows it
      progress: 10            # seconds between progress lines
      evaluator: scripted     # the evaluator of every stage (NAME or NAME:ARGUMENT)
      stages:                 # an evaluator per stage, overriding the one above
        targets: scripted:examples/scripts/5e1f0c2a.yaml
    evaluators:               # options per backend name
      scripted: {script: examples/scripts/5e1f0c2a.yaml}
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import attrs
from attrs import field, frozen

from ..convert import structure, unstructure
from ..errors import ConfigError, RecordError

MODES = ("auto", "single", "stream")
STAGES = ("targets", "achievement", "subtasks", "efficiency", "reference", "divergence")
"""The six stages, in the order a run runs them (decisions.md section 4)."""


def _positive(inst: Any, att: attrs.Attribute, value: int) -> None:  # type: ignore[type-arg]
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"judge.{att.name} must be a positive integer, got {value!r}")


def _mode(inst: Any, att: attrs.Attribute, value: str) -> None:  # type: ignore[type-arg]
    if value not in MODES:
        raise ValueError(f"judge.mode must be one of {', '.join(MODES)}, got {value!r}")


def _progress(inst: Any, att: attrs.Attribute, value: float) -> None:  # type: ignore[type-arg]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(f"judge.progress must be a positive number of seconds, got {value!r}")


def _stage_names(inst: Any, att: attrs.Attribute, value: dict[str, str]) -> None:  # type: ignore[type-arg]
    for k in value:
        if k not in STAGES:
            raise ValueError(f"judge.stages names {k!r}, which is no stage; stages: {', '.join(STAGES)}")


@frozen
class JudgeConfig:
    """The ``judge`` section."""

    read_bytes: int = field(default=131072, validator=_positive)
    """Reading budget of one evaluator call, in bytes of navigation answers."""
    single_bytes: int = field(default=49152, validator=_positive)
    """A stage whose rows fit this many bytes is one call (mode auto)."""
    chunk_bytes: int = field(default=32768, validator=_positive)
    """Else the rows are cut into calls of at most this many bytes."""
    state_bytes: int = field(default=16384, validator=_positive)
    """The catalogue of targets given to one call takes at most this many bytes of its prompt."""
    mode: str = field(default="auto", validator=_mode)
    """``auto``; ``single`` forces one call, ``stream`` forces chunks."""
    concurrency: int = field(default=4, validator=_positive)
    """Calls side by side, in stages that allow it."""
    progress: float = field(default=10.0, validator=_progress)
    """Seconds between the progress lines of a running stage."""
    evaluator: str | None = None
    """The evaluator of every stage: a backend name, or ``NAME:ARGUMENT`` (scripted: the script)."""
    stages: dict[str, str] = field(factory=dict, validator=_stage_names)
    """An evaluator per stage, overriding ``evaluator``."""


@frozen
class Config:
    """A whole ``asz.yaml``."""

    judge: JudgeConfig = JudgeConfig()
    evaluators: dict[str, dict[str, Any]] = field(factory=dict)
    """Options per evaluator backend name (``scripted: {script: FILE}``)."""
    source: str | None = None
    """The file this was read from (None: defaults only). Not read from the file."""

    def evaluator_for(self, stage: str) -> str | None:
        return self.judge.stages.get(stage) or self.judge.evaluator


def find(path: Path | None = None) -> Path | None:
    """The configuration file a run reads (None: none, the defaults)."""
    if path is not None:
        if not path.is_file():
            raise ConfigError(f"configuration file {path} does not exist")
        return path
    here = Path("asz.yaml")
    if here.is_file():
        return here
    home = Path(os.environ.get("ASZ_HOME") or Path.home() / ".asz") / "asz.yaml"
    return home if home.is_file() else None


def load(path: Path | None = None, *, overrides: dict[str, Any] | None = None) -> Config:
    """Read the configuration (see the module's docstring), then apply ``overrides``: flat keys
    such as ``judge.mode`` or ``judge.stages.targets`` set to a value (None: not given)."""
    from ruamel.yaml import YAML, YAMLError

    src = find(path)
    data: dict[str, Any] = {}
    if src is not None:
        try:
            got = YAML(typ="safe", pure=True).load(src.read_text(encoding="utf-8"))
        except (YAMLError, UnicodeDecodeError, OSError) as exc:
            raise ConfigError(f"{src}: cannot read it as YAML ({exc})") from exc
        if got is None:
            got = {}
        if not isinstance(got, dict):
            raise ConfigError(f"{src}: the file must hold a mapping with a judge: section")
        data = got
    for key, value in (overrides or {}).items():
        if value is None:
            continue
        node = data
        parts = key.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
            if not isinstance(node, dict):
                raise ConfigError(f"{key}: {p} is not a section")
        node[parts[-1]] = value
    data.pop("source", None)
    try:
        cfg = structure(data, Config)
    except RecordError as exc:
        msg = str(exc)
        j = data.get("judge")
        if isinstance(j, dict) and "invalid value" in msg:  # a validator's own message says more
            try:
                JudgeConfig(**j)
            except ValueError as inner:
                msg = str(inner)
        raise ConfigError(f"{src or 'configuration'}: {msg}") from exc
    if src is not None:
        cfg = attrs.evolve(cfg, source=str(src.resolve()))
    return cfg


def to_json(cfg: Config) -> dict[str, Any]:
    return unstructure(cfg)  # type: ignore[no-any-return]
