"""The ``anthropic`` evaluator: the real SDK against a local fake server (api_fakes.py), on every case
of api_cases.py."""

from __future__ import annotations

import pytest

try:
    from .api_cases import *  # noqa: F403
    from .api_fakes import AnthropicDialect
except ImportError:
    from api_cases import *  # type: ignore[no-redef]  # noqa: F403
    from api_fakes import AnthropicDialect  # type: ignore[no-redef]


@pytest.fixture
def dialect() -> AnthropicDialect:
    return AnthropicDialect()


def test_the_exchange_is_cached(corpus_store, tmp_path, dialect) -> None:  # type: ignore[no-untyped-def]
    """Each request sends the whole exchange again: automatic prompt caching is asked for, unless
    the options say cache: false."""
    _, inputs = small_conversation(corpus_store)  # noqa: F405
    script = [dialect.tools([("submit", answer_for(inputs))], 1)]  # noqa: F405
    j = judge(corpus_store, tmp_path, dialect, script)  # noqa: F405
    assert j.fake.seen[0][1]["cache_control"] == {"type": "ephemeral"}
    j = judge(corpus_store, tmp_path, dialect, script, options={"cache": False})  # noqa: F405
    assert "cache_control" not in j.fake.seen[0][1]

