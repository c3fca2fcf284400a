"""The ``bedrock`` evaluator: the real SDK against a local fake server (api_fakes.py), on every case
of api_cases.py."""

from __future__ import annotations

import json

import pytest

try:
    from .api_cases import *  # noqa: F403
    from .api_fakes import BedrockDialect
except ImportError:
    from api_cases import *  # type: ignore[no-redef]  # noqa: F403
    from api_fakes import BedrockDialect  # type: ignore[no-redef]


@pytest.fixture
def dialect() -> BedrockDialect:
    return BedrockDialect()


def test_cache_points_when_asked(corpus_store, tmp_path, dialect) -> None:  # type: ignore[no-untyped-def]
    """Bedrock caches only at the checkpoints a request marks, and only some models take them:
    asked for with cache_points: true."""
    _, inputs = small_conversation(corpus_store)  # noqa: F405
    script = [dialect.tools([("submit", answer_for(inputs))], 1)]  # noqa: F405
    j = judge(corpus_store, tmp_path, dialect, script, options={"cache_points": True})  # noqa: F405
    body = j.fake.seen[0][1]
    assert body["system"][-1] == {"cachePoint": {"type": "default"}}
    assert body["messages"][-1]["content"][-1] == {"cachePoint": {"type": "default"}}
    j = judge(corpus_store, tmp_path, dialect, script)  # noqa: F405
    assert "cachePoint" not in json.dumps(j.fake.seen[0][1])
