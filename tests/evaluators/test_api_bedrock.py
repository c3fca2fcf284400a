"""The ``bedrock`` evaluator: the real SDK against a local fake server (api_fakes.py), on every case
of api_cases.py."""

from __future__ import annotations

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
