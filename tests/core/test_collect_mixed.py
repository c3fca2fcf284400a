"""A folder holding several runtimes' files side by side (issue 12): each file goes to the adapter
that recognises it, so `asz collect DIR` gives the same conversations as collecting each
runtime's folder on its own. Over copies of the real corpus of all four runtimes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from asz_core.collect import collect
from asz_core.registry import Registry
from asz_core.store import Store

from .helpers import CORPUS, db_rows, run_asz

RUNTIMES = {"claude-code": "claudecode", "codex": "codex", "kiro": "kiro", "langsmith": "langsmith"}


@pytest.fixture(scope="module")
def copies(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each runtime's corpus in a folder of its own, and all four merged into one (their trees
    overlap: two repositories hold files of two runtimes, which then lie in the same folders)."""
    for folder in RUNTIMES:
        if not (CORPUS / folder).is_dir():
            pytest.skip(f"corpus not found at {CORPUS / folder}")
    base = tmp_path_factory.mktemp("mixed")
    out = {}
    for folder in RUNTIMES:
        out[folder] = base / "alone" / folder
        shutil.copytree(CORPUS / folder, out[folder])  # copytree keeps mtimes: Kiro orders its saves by them
        shutil.copytree(CORPUS / folder, base / "mixed", dirs_exist_ok=True)
    out["mixed"] = base / "mixed"
    return out


def _conversations(db: Path) -> list[tuple[Any, ...]]:
    """Every conversation with its runtime, sessions, and rounds (number, head, records)."""
    rows = db_rows(db, "SELECT c.id, c.runtime, r.number, r.head, r.records FROM conversations c "
                       "JOIN rounds r ON r.conversation = c.id ORDER BY c.id, r.number")
    sessions = db_rows(db, "SELECT conversation, session FROM sessions ORDER BY conversation, session")
    return [*rows, *sessions]


def test_a_mixed_folder_gives_what_each_runtimes_folder_gives_alone(copies: dict[str, Path], tmp_path: Path) -> None:
    alone = tmp_path / "alone"
    for folder in RUNTIMES:
        r = run_asz("collect", str(copies[folder]), "--json", home=alone)
        assert r.returncode == 0, r.stderr
    mixed = tmp_path / "mixed"
    r = run_asz("collect", str(copies["mixed"]), "--json", home=mixed)
    assert r.returncode == 0, r.stderr
    expected = _conversations(alone / "asz.db")
    assert {row[1] for row in expected if len(row) == 5} == set(RUNTIMES.values())  # every runtime is in it
    assert _conversations(mixed / "asz.db") == expected
    # every file was read by the runtime that reads it alone; a .jsonl no runtime recognises
    # (a test's mock data) is looked at by Claude Code's adapter, whose folder this is too, and
    # skipped with a warning
    rel = {str(copies[f]): f for f in RUNTIMES}

    def read_by(db: Path, mixed_root: Path | None) -> dict[str, str]:
        out = {}
        for p, rt in db_rows(db, "SELECT path, runtime FROM files"):
            if mixed_root is not None:
                out[str(Path(p).relative_to(mixed_root))] = rt
            else:
                root = next(k for k in rel if p.startswith(k + "/"))
                out[str(Path(p).relative_to(root))] = rt
        return out

    got, want = read_by(mixed / "asz.db", copies["mixed"]), read_by(alone / "asz.db", None)
    assert {k: got[k] for k in want} == want
    warnings = json.loads(r.stdout)["warnings"]
    # One Codex fixture had its timestamps replaced by "[trimmed for fixture]" from line 27 on:
    # no time, said alone as in the mixed folder (docs/hostile-input.md, values that are no values).
    trimmed = f"{copies['mixed'] / 'jazzyalex__agent-sessions/Resources/Fixtures/stage0/agents/codex/small.jsonl'}:27: " \
              'a timestamp that is no time (timestamp: "[trimmed for fixture]")'
    bad_values = [w for w in warnings if "that is no time" in w or "that is no count" in w]
    assert len(bad_values) == 1 and bad_values[0].startswith(trimmed), bad_values
    warnings = [w for w in warnings if w not in bad_values]
    extra = set(got) - set(want)
    assert len(extra) == len(warnings) == 3 and all(got[k] == "claudecode" for k in extra)
    assert all("not a Claude Code transcript" in w and any(w.startswith(f"{copies['mixed'] / k}:") for k in extra)
               for w in warnings), warnings


def test_a_file_given_by_name_goes_to_its_runtime(copies: dict[str, Path], tmp_path: Path) -> None:
    mixed = copies["mixed"]
    files = {
        "codex": next(mixed.rglob("rollout-editing.jsonl")),
        "kiro": next(mixed.rglob("q.json")),
        "langsmith": next(mixed.rglob("langsmith_py_wrap_openai_stream.json")),
        "claudecode": next(mixed.rglob("tool_heavy.jsonl")),
    }
    store = Store.open(tmp_path / "home")
    collect(list(files.values()), store, Registry())
    got = {rt for _, rt in db_rows(store.path, "SELECT path, runtime FROM files")}
    assert got == set(files)
    assert dict(db_rows(store.path, "SELECT path, runtime FROM files")) == {str(f): rt for rt, f in files.items()}
    store.close()


def test_a_file_another_adapter_read_before_is_read_again_by_its_own(copies: dict[str, Path], tmp_path: Path) -> None:
    # An earlier asz sent every file of a folder to the Claude Code adapter, which read a Codex
    # rollout as a Claude Code session of unknown lines and kept its read position at the end.
    rollout = next(copies["codex"].rglob("rollout-editing.jsonl"))
    store = Store.open(tmp_path / "home")
    wrong = collect([rollout], store, Registry(), runtime="claudecode")
    assert {c.runtime for c in store.conversations()} == {"claudecode"}
    again = collect([rollout], store, Registry())
    assert again.files_read == 1 and again.records_published > 0
    codex = [c for c in store.conversations() if c.runtime == "codex"]
    alone = Store.open(tmp_path / "alone")
    collect([rollout], alone, Registry())
    assert [(c.id, c.head.head) for c in codex] == [(c.id, c.head.head) for c in alone.conversations()]  # type: ignore[union-attr]
    assert wrong.records_published == again.records_published  # one record a line, both times
    store.close()
    alone.close()
    store.close()
