"""Configuration of a judge run: ``asz.yaml`` (ruamel.yaml) and flags, through the one converter.

Where the file is: ``--config PATH``; else ``asz.yaml`` in the working folder once a person
trusted it (``asz config trust``: :mod:`asz_core.config_trust`); else ``$ASZ_HOME/asz.yaml``; else
the defaults below (decisions.md section 14). Flags override the file. A path inside the file (a scripted evaluator's script) is read relative to the file.

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
    sources:                  # what the run is judged against (--source adds to them)
      - incident.md           # a file, relative to this file
      - https://acme.atlassian.net/browse/OPS-12
    fetch:                    # how sources are fetched (docs/sources.md)
      max_bytes: 8388608      # a copy keeps at most this, and says it was cut
      connect_timeout: 10
      read_timeout: 30
      total_seconds: 120
      redirects: 5
      commands:               # login-required sources: argv, never a shell, given only the source
        - prefix: "https://acme.atlassian.net/"
          argv: ["acme-fetch", "{source}"]
          env: {ACME_CONFIG: /home/me/.acme}   # the command's whole environment, with pass:
          pass: [HOME]                         # variables copied from asz's own environment
"""

from __future__ import annotations

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


def _seconds(inst: Any, att: attrs.Attribute, value: float) -> None:  # type: ignore[type-arg]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(f"jobs.{att.name} must be a positive number of seconds, got {value!r}")


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


def _positive_number(inst: Any, att: attrs.Attribute, value: float) -> None:  # type: ignore[type-arg]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(f"fetch.{att.name} must be a positive number, got {value!r}")


def _redirects(inst: Any, att: attrs.Attribute, value: int) -> None:  # type: ignore[type-arg]
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 20:
        raise ValueError(f"fetch.redirects must be an integer from 0 to 20, got {value!r}")


def _commands(inst: Any, att: attrs.Attribute, value: list[dict[str, Any]]) -> None:  # type: ignore[type-arg]
    for n, c in enumerate(value, 1):
        where = f"fetch.commands[{n}]"
        if not isinstance(c, dict):
            raise ValueError(f"{where} must be a mapping with prefix: or scheme:, and argv:")
        if not any(isinstance(c.get(k), str) and c.get(k) for k in ("prefix", "scheme")):
            raise ValueError(f"{where} names neither a prefix: nor a scheme: it would match nothing")
        argv = c.get("argv")
        if not (isinstance(argv, list) and argv and all(isinstance(a, str) and a for a in argv)):
            raise ValueError(f"{where}.argv must be a list of words (the program first), such as [acme-fetch, '{{source}}']")
        if not isinstance(c.get("env") or {}, dict) or not isinstance(c.get("pass") or [], list):
            raise ValueError(f"{where}: env: must be a mapping and pass: a list of variable names")
        sec = c.get("seconds")
        if sec is not None and (isinstance(sec, bool) or not isinstance(sec, (int, float)) or sec <= 0):
            raise ValueError(f"{where}.seconds must be a positive number, got {sec!r}")
        unknown = set(c) - {"prefix", "scheme", "argv", "env", "pass", "seconds", "content_type"}
        if unknown:
            raise ValueError(f"{where} has keys asz does not read: {', '.join(sorted(map(str, unknown)))}")


@frozen
class FetchConfig:
    """The ``fetch`` section: how sources are fetched (:class:`asz_core.interfaces.FetchSettings`)."""

    max_bytes: int = field(default=8 << 20, validator=_positive_number)
    connect_timeout: float = field(default=10.0, validator=_positive_number)
    read_timeout: float = field(default=30.0, validator=_positive_number)
    total_seconds: float = field(default=120.0, validator=_positive_number)
    redirects: int = field(default=5, validator=_redirects)
    commands: list[dict[str, Any]] = field(factory=list, validator=_commands)
    """Login-required sources: ``{prefix or scheme, argv, env, pass, seconds, content_type}``."""
    plugins: dict[str, Any] = field(factory=dict)
    """A third party's fetcher's options, by its name."""


def _slots(inst: Any, att: attrs.Attribute, value: dict[str, int]) -> None:  # type: ignore[type-arg]
    for k, v in value.items():
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            raise ValueError(f"jobs.slots.{k} must be a positive integer, got {v!r}")


@frozen
class JobsConfig:
    """The ``jobs`` section: team runs on the job engine (docs/team.md)."""

    database: str | None = None
    """The team database (else $ASZ_JOBS, else the store's when it is PostgreSQL)."""
    slots: dict[str, int] = field(factory=lambda: {"default": 2}, validator=_slots)
    """Runs at once per evaluator name, across all workers (``default``: an evaluator not named)."""
    attempts: int = field(default=3, validator=_positive)
    """Attempts of one run before it is failed."""
    retry_wait: int = 30
    """Seconds before a failed run is tried again."""
    stalled_after: float = field(default=60.0, validator=_seconds)
    """Seconds without a worker's heartbeat before its running jobs are given to another worker."""

    def slots_of(self, evaluator: str) -> int:
        name = evaluator.split(":", 1)[0]
        return self.slots.get(name, self.slots.get("default", 2))


@frozen
class Config:
    """A whole ``asz.yaml``."""

    judge: JudgeConfig = JudgeConfig()
    jobs: JobsConfig = JobsConfig()
    evaluators: dict[str, dict[str, Any]] = field(factory=dict)
    """Options per evaluator backend name (``scripted: {script: FILE}``)."""
    sources: tuple[str, ...] = ()
    """Sources to judge against (a relative path is read relative to the file)."""
    fetch: FetchConfig = FetchConfig()
    source: str | None = None
    """The file this was read from (None: defaults only). Not read from the file."""

    def evaluator_for(self, stage: str) -> str | None:
        return self.judge.stages.get(stage) or self.judge.evaluator


def find(path: Path | None = None) -> Path | None:
    """The configuration file a run reads (None: none, the defaults)."""
    if path is not None:
        if not path.is_file():
            from ..regular import not_regular

            why = not_regular(path) if path.exists() else None
            raise ConfigError(f"configuration file {path} " + (f"is {why}" if why else "does not exist"))
        return path
    from ..config_trust import config_file

    return config_file()  # ./asz.yaml once trusted, else $ASZ_HOME/asz.yaml (config_trust.py)


def load(path: Path | None = None, *, overrides: dict[str, Any] | None = None) -> Config:
    """Read the configuration (see the module's docstring), then apply ``overrides``: flat keys
    such as ``judge.mode`` or ``judge.stages.targets`` set to a value (None: not given)."""
    from ruamel.yaml import YAML, YAMLError

    src = find(path)
    data: dict[str, Any] = {}
    if src is not None:
        try:
            from ..regular import read_regular  # (a FIFO swapped in since it was found is refused, not waited on)

            got = YAML(typ="safe", pure=True).load(read_regular(src).decode("utf-8"))
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
        for key, cls in (("judge", JudgeConfig), ("fetch", FetchConfig)):
            j = data.get(key)
            if isinstance(j, dict) and "invalid value" in msg:  # a validator's own message says more
                try:
                    cls(**j)
                except (ValueError, TypeError) as inner:
                    msg = str(inner)
                    break
        raise ConfigError(f"{src or 'configuration'}: {msg}") from exc
    if src is not None:
        cfg = attrs.evolve(cfg, source=str(src.resolve()))
    return cfg


def to_json(cfg: Config) -> dict[str, Any]:
    """What a run records of its configuration: all but ``jobs`` (the team database's address,
    which may hold a password, is no part of how a run judged)."""
    out = unstructure(cfg)
    out.pop("jobs", None)
    return out  # type: ignore[no-any-return]
