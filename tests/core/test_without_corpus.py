"""A clone without ../shared beside it: every test that reads the corpus is skipped with a reason,
none fails or errors (fixtures that copy corpus files skip before they copy). The whole suite is
run once more in a child process with ASZ_CORPUS pointing at an empty folder; most of it skips,
so it takes a fraction of the full run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NESTED = "ASZ_TEST_WITHOUT_CORPUS"


@pytest.mark.skipif(bool(os.environ.get(NESTED)), reason="this is the run without the corpus")
def test_the_suite_without_the_corpus_skips_what_reads_it_and_nothing_fails(tmp_path: Path) -> None:
    empty = tmp_path / "no-corpus"
    empty.mkdir()
    env = {**os.environ, "ASZ_CORPUS": str(empty), NESTED: "1"}
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rfEs", "-p", "no:cacheprovider", "tests"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    tail = r.stdout[-4000:]
    assert r.returncode == 0, tail
    assert " failed" not in tail and " error" not in tail, tail
    skipped = [line for line in r.stdout.splitlines() if line.startswith("SKIPPED")]
    assert any(f"corpus not found: {empty}" in line or f"not found at {empty}" in line for line in skipped), tail
