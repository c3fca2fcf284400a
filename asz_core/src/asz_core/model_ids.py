"""Model ids as runtimes write them, and the other spellings of the same model that a price
lookup tries when the id as written has no price (docs/ledger.md, "Model ids").

Runtimes record a model under whichever spelling their provider used: a dated snapshot
(``gpt-5-1-codex-2025-11-13``), dashes for the dots of a version (``gpt-5-1``), Amazon's
model enum (``CLAUDE_SONNET_4_20250514_V1_0``), a provider before the name (``openai/gpt-5.4``,
Bedrock's ``us.anthropic.claude-…``). Bedrock's ``-v1:0`` after a Claude model needs no rule:
the price data takes a Claude name by how it begins. The price data names each model under a few spellings only. The
id as written is always tried first; the others only when it has no price, fewest changes
first, so no id that has a price of its own is ever priced as another.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from typing import NamedTuple


class Rule(NamedTuple):
    """One way providers spell a model id differently."""

    name: str
    written: str
    """An id as a runtime records it (the rule's example, tested)."""
    looked_up: str
    """What the rule makes of it."""
    apply: Callable[[str], str]
    """The id respelled, or the id itself when the rule does not apply."""


_PROVIDER = re.compile(r"^(?:[a-z0-9][a-z0-9_.-]*/)+", re.I)
_BEDROCK = re.compile(r"^(?:(?:us|eu|apac|global|us-gov)\.)?(?:anthropic|amazon|meta|mistral|cohere|ai21|deepseek|openai)\.", re.I)
_DATE = re.compile(r"[-@](\d{4})-?(\d{2})-?(\d{2})$")
# A version is one or two short numbers right after a word of the name (``gpt-5-1``,
# ``claude-3-5``, ``llama-3-1-8b``): never the parts of a date (``2025-11-13``).
_DASHED_VERSION = re.compile(r"(?<=[a-z]-)(\d{1,2})-(\d{1,2})(?![\d.:])", re.I)
_DOTTED_VERSION = re.compile(r"(?<=[a-z]-)(\d{1,2})\.(\d{1,2})(?![\d.:])", re.I)


def _no_provider(ref: str) -> str:
    """``openai/gpt-5.4`` → ``gpt-5.4``; Bedrock's ``us.anthropic.claude-…`` → ``claude-…``."""
    return _BEDROCK.sub("", _PROVIDER.sub("", ref))


def _amazon_enum(ref: str) -> str:
    """Amazon Q's enum ``CLAUDE_SONNET_4_20250514_V1_0``: lower case, dashes, its ``V1_0`` as
    Bedrock's ``-v1:0``."""
    if "_" not in ref or "-" in ref:
        return ref
    low = ref.lower()
    low = re.sub(r"_v(\d+)_(\d+)$", r"-v\1:\2", low)
    return low.replace("_", "-")


def _no_date(ref: str) -> str:
    """A snapshot's date after the name: ``-2025-11-13``, ``-20251113``, Vertex's ``@20240620``."""
    m = _DATE.search(ref)
    if m is None or m.start() == 0:
        return ref
    try:
        dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return ref
    return ref[: m.start()]


def _dots(ref: str) -> str:
    """Dashes for the dots of a version: ``gpt-5-1-codex`` → ``gpt-5.1-codex``."""
    return _DASHED_VERSION.sub(r"\1.\2", ref)


def _dashes(ref: str) -> str:
    """Dots for the dashes of a version: ``claude-sonnet-4.0`` → ``claude-sonnet-4-0``."""
    return _DOTTED_VERSION.sub(r"\1-\2", ref)


RULES: tuple[Rule, ...] = (
    Rule("a provider before the name", "openai/gpt-5.4", "gpt-5.4", _no_provider),
    Rule("Amazon's model enum", "CLAUDE_SONNET_4_20250514_V1_0", "claude-sonnet-4-20250514-v1:0", _amazon_enum),
    Rule("a snapshot's date after the name", "gpt-5-1-codex-2025-11-13", "gpt-5-1-codex", _no_date),
    Rule("dashes for the dots of a version", "gpt-4-1-mini", "gpt-4.1-mini", _dots),
    Rule("dots for the dashes of a version", "claude-sonnet-4.0", "claude-sonnet-4-0", _dashes),
)
"""In the order they are applied; docs/ledger.md has them as a table."""


def spellings(model: str) -> list[str]:
    """The spellings a price lookup tries for ``model``: itself first, then each respelling,
    those with fewer rules applied before those with more (rules in :data:`RULES` order), each
    once."""
    seen = {model: 0}
    layer = [model]
    for rule in RULES:
        more = []
        for ref in layer:
            new = rule.apply(ref)
            if new and new not in seen:
                seen[new] = seen[ref] + 1
                more.append(new)
        layer = layer + more
    return sorted(seen, key=lambda r: seen[r])  # stable: rules' order within a count
