"""The ``openai`` evaluator: the real SDK against a local fake server (api_fakes.py), on every case
of api_cases.py."""

from __future__ import annotations

import pytest

try:
    from .api_cases import *  # noqa: F403
    from .api_fakes import FakeAPI, OpenAIDialect
except ImportError:
    from api_cases import *  # type: ignore[no-redef]  # noqa: F403
    from api_fakes import FakeAPI, OpenAIDialect  # type: ignore[no-redef]


@pytest.fixture
def dialect() -> OpenAIDialect:
    return OpenAIDialect()


def test_asz_judge_with_the_openai_evaluator(corpus_store, tmp_path, monkeypatch, dialect) -> None:  # type: ignore[no-untyped-def]
    """`asz judge CONV --evaluator openai:MODEL`, the SDK finding the fake through OPENAI_BASE_URL."""
    from pathlib import Path

    from typer.testing import CliRunner

    from asz_core import cli

    cid, inputs = small_conversation(corpus_store)  # noqa: F405
    monkeypatch.setenv("ASZ_HOME", str(Path(corpus_store.path).parent))
    script = [dialect.tools([("card", {})], 1), dialect.tools([("submit", answer_for(inputs))], 2)]  # noqa: F405
    with FakeAPI(script) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url + "/v1")
        r = CliRunner().invoke(cli.app, ["judge", cid[:8], "--evaluator", f"openai:{dialect.model}", "--stages", "targets"])
    assert r.exit_code == 0, r.output
    assert "targets: complete" in r.output or "targets: partial" in r.output
    assert [p for p, _ in fake.seen] == ["/v1/chat/completions"] * 2
    assert fake.seen[0][1]["model"] == dialect.model
