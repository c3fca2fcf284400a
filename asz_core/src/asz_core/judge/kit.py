"""The kit: one shared prompt, and per stage a prompt and an answer schema (docs/kit.md).

The kit ships as package data of asz_core (``asz_core/kit/``); the repository's top-level
``kit/prompts`` and ``kit/schemas`` are links to it, so there is one copy. ``ASZ_KIT`` (a folder
holding ``prompts/`` and ``schemas/``) judges with another kit. Every stage file names the kit
and the stage's prompt template by SHA-256 digest.
"""

from __future__ import annotations

import hashlib
import os
import re
from functools import cached_property
from pathlib import Path
from typing import Any

import orjson
from attrs import frozen

from ..errors import ConfigError
from .judgment import KitRef


def default_path() -> Path:
    env = os.environ.get("ASZ_KIT")
    if env:
        return Path(env)
    return Path(__file__).resolve().parent.parent / "kit"  # asz_core/kit, the package data


@frozen
class Kit:
    path: Path

    @classmethod
    def load(cls, path: Path | None = None) -> Kit:
        p = Path(path) if path else default_path()
        if not (p / "prompts" / "shared.md").is_file():
            raise ConfigError(f"no kit at {p}: it needs prompts/shared.md (set ASZ_KIT to a kit folder, or unset it)")
        return cls(p.resolve())

    def files(self) -> list[Path]:
        return sorted(f for d in ("prompts", "schemas") for f in (self.path / d).glob("*") if f.is_file())

    @cached_property
    def digest(self) -> str:
        """SHA-256 over every file of the kit: its path in the kit and its own digest, in order."""
        h = hashlib.sha256()
        for f in self.files():
            h.update(f"{f.relative_to(self.path).as_posix()}\0{hashlib.sha256(f.read_bytes()).hexdigest()}\n".encode())
        return h.hexdigest()

    def template(self, stage: str) -> str:
        """The stage's prompt template as sent: the shared prompt, then the stage's prompt, each
        ``{{include NAME}}`` in it replaced by the kit's ``prompts/NAME.md`` (the one definition
        of the work labels the sub-task and efficiency stages share)."""
        p = self.path / "prompts" / f"{stage}.md"
        if not p.is_file():
            raise ConfigError(f"the kit at {self.path} has no prompt for the {stage} stage (prompts/{stage}.md)")
        text = (self.path / "prompts" / "shared.md").read_text(encoding="utf-8").rstrip() + "\n\n" + p.read_text(encoding="utf-8")
        return _INCLUDE.sub(lambda m: self._part(m.group(1), stage), text)

    def _part(self, name: str, stage: str) -> str:
        p = self.path / "prompts" / f"{name}.md"
        if not p.is_file():
            raise ConfigError(f"the {stage} prompt of the kit at {self.path} includes prompts/{name}.md, which it lacks")
        return p.read_text(encoding="utf-8").rstrip()

    def schema_bytes(self, stage: str) -> bytes:
        p = self.path / "schemas" / f"{stage}.json"
        if not p.is_file():
            raise ConfigError(f"the kit at {self.path} has no answer schema for the {stage} stage (schemas/{stage}.json)")
        return p.read_bytes()

    def schema(self, stage: str) -> dict[str, Any]:
        return orjson.loads(self.schema_bytes(stage))  # type: ignore[no-any-return]

    def ref(self, stage: str) -> KitRef:
        return KitRef(digest=self.digest, prompt_template=hashlib.sha256(self.template(stage).encode()).hexdigest(),
                      schema=hashlib.sha256(self.schema_bytes(stage)).hexdigest(), path=str(self.path))


_INCLUDE = re.compile(r"\{\{include (\w+)\}\}")
_SLOT = re.compile(r"\{\{(\w+)\}\}")


def render(template: str, values: dict[str, Any]) -> str:
    """Fill ``{{name}}`` slots in one pass (a value's own text is never filled again)."""
    def fill(m: re.Match[str]) -> str:
        if m.group(1) not in values:
            raise KeyError(f"the prompt template has a slot {{{{{m.group(1)}}}}} that asz does not fill")
        return str(values[m.group(1)])
    return _SLOT.sub(fill, template)
