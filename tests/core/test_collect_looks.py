"""Collect's look at its files costs what changed (issue 28): the adapters' looks into each file
(first bytes, last timestamp, first line) are kept with the file's identity, so a collect with
nothing new opens no transcript and one after a conversation grew opens that file only; a file
that is another file now (replaced, rewritten) is looked at again, and so is every file when the
code that looks changed. Over copies of the real corpus."""

from __future__ import annotations

import builtins
import io
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from asz_core import looks, signed
from asz_core.collect import collect, plan_files
from asz_core.registry import Registry
from asz_core.store import Store

from tests.conftest import skip_without_corpus

from .helpers import CORPUS, db_rows

RUNTIMES = ("claude-code", "codex", "kiro", "langsmith")
pytestmark = skip_without_corpus(*(CORPUS / r for r in RUNTIMES))
KIRO_SAVES = ("PRO-HUNTER-X__team03-aws-hackathon/suggest-update-readme.md.json",
              "PRO-HUNTER-X__team03-aws-hackathon/tdd-admin-backend.json",
              "metaneutrons__SnapcastClient/q.json",
              "namd0ng__team27-aws-hackathon/C_UsersChangwooDesktopDreamHack.json")
"""The corpus's Kiro /save exports: whole documents, which Kiro's adapter reads again at every
collect (a save rewrites the whole file; docs/runtimes/kiro.md)."""


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    """The four runtimes' corpora laid into one folder (mtimes kept)."""
    for r in RUNTIMES:
        if not (CORPUS / r).is_dir():
            pytest.skip(f"corpus not found at {CORPUS / r}")
    out = tmp_path / "mixed"
    for r in RUNTIMES:
        shutil.copytree(CORPUS / r, out, dirs_exist_ok=True)
    return out


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every file opened while the test runs, however it is opened: ``os.open`` (which
    ``asz_core.regular.open_regular`` opens with) and the built-in ``open``."""
    seen: list[str] = []
    real_os_open, real_open = os.open, builtins.open

    def os_open(path, *a, **k):  # type: ignore[no-untyped-def]
        seen.append(os.fspath(path))
        return real_os_open(path, *a, **k)

    def plain_open(file, *a, **k):  # type: ignore[no-untyped-def]
        if isinstance(file, (str, os.PathLike)):
            seen.append(os.fspath(file))
        return real_open(file, *a, **k)

    monkeypatch.setattr(os, "open", os_open)
    monkeypatch.setattr(builtins, "open", plain_open)
    monkeypatch.setattr(io, "open", plain_open)
    yield seen


def _under(seen: list[str], folder: Path) -> set[str]:
    return {str(Path(p).relative_to(folder)) for p in seen if p.startswith(str(folder) + os.sep)}


def test_a_collect_with_nothing_new_opens_no_transcript(mixed: Path, tmp_path: Path, opened: list[str]) -> None:
    store = Store.open(tmp_path / "home")
    first = collect([mixed], store)
    # 70 files: the 38 Claude Code sessions and 3 .jsonl no runtime recognises (Claude Code's
    # adapter warns of them), 17 Codex rollouts, 4 Kiro saves, 8 LangSmith exports (what each
    # runtime's own folder gives: test_collect_mixed)
    assert first.files_read == 70 and first.records_published > 0
    assert len(_under(opened, mixed)) >= 70  # (the first one looks into every file)
    opened.clear()
    again = collect([mixed], store)
    assert again.records_published == 0
    # Claude Code's sessions, Codex's rollouts and LangSmith's exports are not opened at all;
    # only Kiro's saves are, read whole by their adapter (a save is rewritten in place).
    assert again.files_read == 4 and again.files_unchanged == 66
    assert _under(opened, mixed) == set(KIRO_SAVES)
    store.close()


def test_a_collect_after_one_conversation_grew_opens_that_file_only(tmp_path: Path, opened: list[str]) -> None:
    folder = tmp_path / "projects"
    shutil.copytree(CORPUS / "claude-code", folder)
    grows = folder / "marot__spotter" / "test" / "fixtures" / "transcripts" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
    lines = grows.read_bytes().splitlines(keepends=True)
    keep = len(lines) - len(lines) // 5
    grows.write_bytes(b"".join(lines[:keep]))
    store = Store.open(tmp_path / "home")
    collect([folder], store)
    with open(grows, "ab") as f:
        f.write(b"".join(lines[keep:]))
    opened.clear()
    r = collect([folder], store)
    assert (r.files_read, r.files_unchanged) == (1, 37)
    assert r.records_published > 0
    assert _under(opened, folder) == {str(grows.relative_to(folder))}
    store.close()


def test_kept_looks_give_the_plan_looking_again_gives(mixed: Path, tmp_path: Path) -> None:
    store = Store.open(tmp_path / "home")
    collect([mixed], store)
    registry = Registry()
    cache = tmp_path / "home" / "cache" / "looks.json"
    assert cache.is_file()
    with looks.looking(None):  # nothing kept: every look made
        fresh = plan_files([mixed], registry, None, [])
    with looks.looking(cache) as lk:
        kept = plan_files([mixed], registry, None, [])
        assert not lk.dirty  # every look was given again
    assert [(a.name, str(f)) for a, f in kept] == [(a.name, str(f)) for a, f in fresh]
    assert len(kept) == 70
    store.close()


def test_a_file_that_is_another_file_now_is_looked_at_again(tmp_path: Path) -> None:
    folder = tmp_path / "f"
    folder.mkdir()
    session = folder / "a.jsonl"
    shutil.copyfile(CORPUS / "claude-code" / "marot__spotter" / "test" / "fixtures" / "transcripts" / "tool_heavy.jsonl",
                    session)
    store = Store.open(tmp_path / "home")
    collect([folder], store)
    assert db_rows(store.path, "SELECT runtime FROM files") == [("claudecode",)]
    # The same name now holds a Codex rollout (written over, its time set back): the looks kept
    # of the Claude Code session are not this file's.
    rollout = next((CORPUS / "codex").rglob("rollout-editing.jsonl"))
    stamp = session.stat().st_mtime_ns
    session.write_bytes(rollout.read_bytes())
    os.utime(session, ns=(stamp, stamp))
    r = collect([folder], store)
    assert r.files_read == 1 and r.records_published > 0
    assert db_rows(store.path, "SELECT runtime FROM files") == [("codex",)]
    store.close()


def test_looks_made_by_other_code_are_made_again(tmp_path: Path, opened: list[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "projects"
    shutil.copytree(CORPUS / "claude-code" / "marot__spotter", folder)
    store = Store.open(tmp_path / "home")
    collect([folder], store)
    opened.clear()
    collect([folder], store)
    assert _under(opened, folder) == set()
    # An asz whose adapters look otherwise: what the old code found is not taken for what the new one finds.
    monkeypatch.setattr(looks, "_code_of", lambda fn: "other code")
    opened.clear()
    collect([folder], store)
    # (every .jsonl: Codex's, Kiro's and LangSmith's adapters look into each, whoever reads it)
    assert _under(opened, folder) == {str(f.relative_to(folder)) for f in folder.rglob("*.jsonl")}
    store.close()


def test_the_looks_of_a_removed_file_are_not_kept(tmp_path: Path) -> None:
    folder = tmp_path / "projects"
    shutil.copytree(CORPUS / "claude-code" / "marot__spotter", folder)
    store = Store.open(tmp_path / "home")
    collect([folder], store)
    cache = tmp_path / "home" / "cache" / "looks.json"
    files = sorted(str(f) for f in folder.rglob("*.jsonl"))
    assert sorted(orjson.loads(signed.read(tmp_path / "home", cache, 1 << 30))["files"]) == files
    gone = Path(files[0])
    gone.unlink()
    collect([folder], store)
    assert sorted(orjson.loads(signed.read(tmp_path / "home", cache, 1 << 30))["files"]) == files[1:]
    store.close()


def test_kiro_passes_by_the_folders_it_never_walked_into(tmp_path: Path) -> None:
    """Kiro's adapter lists every file (a save may be named anything) but those under ``.git``,
    ``node_modules`` and ``__pycache__``, at any depth, as before it shared collect's listing."""
    save = CORPUS / "kiro" / "metaneutrons__SnapcastClient" / "q.json"
    for where in ("a/q.json", "a/node_modules/q.json", "a/node_modules/deep/q.json", "b/.git/x/q.json",
                  "b/c/__pycache__/q.json", "b/c/q.json", "b/gitx/q.json"):
        (tmp_path / where).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(save, tmp_path / where)
    kiro = Registry().runtime("kiro")
    for kept in (None, tmp_path / "cache" / "looks.json"):
        with looks.looking(kept):
            got = kiro.files(tmp_path)
        assert sorted(str(p.relative_to(tmp_path)) for p in got) == ["a/q.json", "b/c/q.json", "b/gitx/q.json"]
