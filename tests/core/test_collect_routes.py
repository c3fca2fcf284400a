"""Collect keeps each folder's plan (which adapter reads which file, in which order) in
``cache/routes.json``, signed, and gives it again while every folder under it and every file it
lists is as it was (device, inode, size, mtime, ctime, mode) and the adapters' code the same: a
collect with nothing new asks no adapter to list or look. Over the four runtimes' corpora laid in
one folder (the plan of a mixed folder is the one where adapters matter)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import orjson
import pytest

from asz_core import looks, signed
from asz_core.collect import collect, plan_files
from asz_core.registry import Registry
from asz_core.store import Store

from .test_collect_looks import mixed  # noqa: F401 (the fixture: the four runtimes' corpora in one folder)


@pytest.fixture(autouse=True)
def no_racy_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """Folders made by the test are trusted at once (as in test_collect_listings)."""
    monkeypatch.setattr(looks, "RACY_NS", 0)


def _plan(folder: Path, cache: Path | None) -> list[tuple[str, str]]:
    with looks.looking(cache):
        return [(a.name, str(f)) for a, f in plan_files([folder], Registry(), None, [])]


def _asked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The adapters asked for their files, by name (collect asks each through ``_files``)."""
    from asz_core import collect as collect_mod

    asked: list[str] = []
    real = collect_mod._files

    def files(adapter, path, problems):  # type: ignore[no-untyped-def]
        asked.append(adapter.name)
        return real(adapter, path, problems)

    monkeypatch.setattr(collect_mod, "_files", files)
    return asked


def _routes(home: Path) -> Path:
    return home / "cache" / "routes.json"


def test_nothing_new_asks_no_adapter_and_the_plan_is_the_fresh_one(mixed: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    store = Store.open(home)
    first = collect([mixed], store)
    assert signed.read(home, _routes(home), 1 << 30) is not None  # kept, signed with the home's key
    fresh = _plan(mixed, None)
    asked = _asked(monkeypatch)
    kept = _plan(mixed, home / "cache" / "looks.json")
    assert asked == [] and kept == fresh and len(kept) > 60
    looked = orjson.loads(signed.read(home, home / "cache" / "looks.json", 1 << 30))["files"]
    again = collect([mixed], store)
    assert asked == [] and again.files_read + again.files_unchanged == first.files_read + first.files_unchanged
    # the files' looks are kept although no adapter looked (a growth after it looks at what grew only)
    assert orjson.loads(signed.read(home, home / "cache" / "looks.json", 1 << 30))["files"] == looked
    store.close()


def test_a_file_that_is_another_now_is_routed_again(mixed: Path, tmp_path: Path) -> None:
    """A Claude Code transcript overwritten with a Codex session: its identity changed, the
    folder's plan is made again and gives it to Codex (red when the files' identities are not
    compared)."""
    home = tmp_path / "home"
    store = Store.open(home)
    collect([mixed], store)
    before = _plan(mixed, home / "cache" / "looks.json")
    claude = next(f for a, f in before if a == "claudecode" and "subagents" not in f)
    codex = next(f for a, f in before if a == "codex")
    shutil.copyfile(codex, claude)
    fresh = _plan(mixed, None)
    assert ("codex", claude) in fresh and ("claudecode", claude) not in fresh
    assert _plan(mixed, home / "cache" / "looks.json") == fresh
    store.close()


def test_a_plan_kept_by_other_adapters_or_not_signed_is_not_used(mixed: Path, tmp_path: Path) -> None:
    """A plan kept by other code (another signature) is made again (red when the signature is not
    compared); one not signed by the home (a plan that sends every file to one adapter, planted)
    is as if none were kept (red when routes.json is read without its tag checked)."""
    home = tmp_path / "home"
    store = Store.open(home)
    collect([mixed], store)
    fresh = _plan(mixed, None)
    data = orjson.loads(signed.read(home, _routes(home), 1 << 30))
    [(root, (sig, plan, idents))] = data["folders"].items()
    wrong = [["langsmith", f] for _, f in plan]
    data["folders"][root] = ["other code", wrong, idents]
    assert signed.write(home, _routes(home), orjson.dumps(data))
    assert _plan(mixed, home / "cache" / "looks.json") == fresh
    data["folders"][root] = [sig, wrong, idents]
    _routes(home).write_bytes(bytes(signed.TAG) + orjson.dumps(data))
    assert _plan(mixed, home / "cache" / "looks.json") == fresh
    store.close()


def test_a_file_added_or_removed_is_routed(mixed: Path, tmp_path: Path) -> None:
    """A name added or removed changes its folder (red when the folders' identities are not
    compared)."""
    home = tmp_path / "home"
    store = Store.open(home)
    collect([mixed], store)
    plan = _plan(mixed, home / "cache" / "looks.json")
    gone = Path(next(f for a, f in plan if a == "claudecode"))
    aside = tmp_path / "aside.jsonl"
    shutil.move(gone, aside)
    assert _plan(mixed, home / "cache" / "looks.json") == _plan(mixed, None)
    assert str(gone) not in [f for _, f in _plan(mixed, home / "cache" / "looks.json")]
    collect([mixed], store)
    shutil.move(aside, gone)
    assert _plan(mixed, home / "cache" / "looks.json") == _plan(mixed, None) == plan
    os.sync()
    store.close()
