"""A day's growth lists no folder (issue 28): collect keeps each folder's listing with the folder's
identity (device, inode, mtime, ctime: a name added, removed or renamed in it changes them) in
``cache/listings.json`` and gives it again while every folder is as it was, one stat each. A
folder changed since is listed again, and so is one changed too shortly before it was listed (a
coarse clock could hide a later change), one holding a symbolic link, or one that could not be
listed. Over copies of the real corpus."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import orjson
import pytest

from asz_core import looks
from asz_core.collect import collect, plan_files
from asz_core.registry import Registry
from asz_core.store import Store

from .helpers import MATCH

pytestmark = pytest.mark.usefixtures("corpus")



@pytest.fixture(autouse=True)
def no_racy_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """Folders made by the test are trusted at once (a real one's last change is seldom within
    seconds of a collect; the test that the window holds sets it)."""
    monkeypatch.setattr(looks, "RACY_NS", 0)


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "projects"
    shutil.copytree(MATCH, root / "match")
    return root


def _listings(home: Path) -> dict[str, list[list[object]]]:
    from asz_core import signed

    return orjson.loads(signed.read(home, home / "cache" / "listings.json", 1 << 30))["roots"]  # type: ignore[no-any-return]


@pytest.fixture
def scandirs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = os.scandir

    def counting(path: str = ".") -> object:
        seen.append(os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", counting)
    return seen


def test_a_collect_with_every_folder_as_it_was_lists_none(tmp_path: Path, scandirs: list[str]) -> None:
    root = _tree(tmp_path)
    store = Store.open(tmp_path / "home")
    first = collect([root], store)
    assert scandirs and all(ident is not None for _, ident, _, _ in _listings(tmp_path / "home")[str(root)])
    scandirs.clear()
    again = collect([root], store)
    assert scandirs == [] and again.files_unchanged == first.files_read
    # the plan from the kept listing is the plan of a fresh one
    registry = Registry()
    with looks.looking(None):
        fresh = plan_files([root], registry, None, [])
    scandirs.clear()
    with looks.looking(tmp_path / "home" / "cache" / "looks.json"):
        kept = plan_files([root], registry, None, [])
    assert scandirs == [] and [(a.name, str(f)) for a, f in kept] == [(a.name, str(f)) for a, f in fresh]
    store.close()


def test_a_file_added_to_a_folder_whose_listing_was_kept_is_found(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    moved = root / "match" / "e720dd6e-5f22-41c5-b148-e7d65b7ddc58.jsonl"
    kept_aside = tmp_path / "aside.jsonl"
    shutil.move(moved, kept_aside)
    store = Store.open(tmp_path / "home")
    collect([root], store)
    shutil.copyfile(kept_aside, moved)  # a new session in a folder listed before
    r = collect([root], store)
    assert r.files_read == 1 and r.records_published > 0


def test_a_file_added_with_its_folders_time_set_back_is_found(tmp_path: Path) -> None:
    """A folder's mtime put back (a restore, a sync tool) still leaves its ctime changed."""
    root = _tree(tmp_path)
    folder = root / "match"
    moved = folder / "e720dd6e-5f22-41c5-b148-e7d65b7ddc58.jsonl"
    kept_aside = tmp_path / "aside.jsonl"
    shutil.move(moved, kept_aside)
    store = Store.open(tmp_path / "home")
    collect([root], store)
    before = folder.stat().st_mtime_ns
    shutil.copyfile(kept_aside, moved)
    os.utime(folder, ns=(before, before))
    r = collect([root], store)
    assert r.files_read == 1 and r.records_published > 0


def test_a_file_removed_from_a_folder_whose_listing_was_kept_is_gone(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    store = Store.open(tmp_path / "home")
    first = collect([root], store)
    (root / "match" / "e720dd6e-5f22-41c5-b148-e7d65b7ddc58.jsonl").unlink()
    r = collect([root], store)
    assert r.files_read + r.files_unchanged == first.files_read - 1 and not r.problems
    store.close()


def test_a_folder_changed_just_before_it_was_listed_is_listed_again(tmp_path: Path, scandirs: list[str],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    root = _tree(tmp_path)
    monkeypatch.setattr(looks, "RACY_NS", 10**12)  # every folder made a moment ago is within it
    store = Store.open(tmp_path / "home")
    collect([root], store)
    assert all(ident is None for _, ident, _, _ in _listings(tmp_path / "home")[str(root)])
    scandirs.clear()
    collect([root], store)
    assert scandirs  # listed again
    store.close()


def test_a_folder_holding_a_symbolic_link_is_listed_again(tmp_path: Path) -> None:
    """Whether a link leads to a folder (listed among the folders, not walked into) or to
    nothing (among the files) can change with nothing in its own folder changing."""
    root = _tree(tmp_path)
    (root / "match" / "elsewhere").symlink_to(tmp_path / "not-yet")
    store = Store.open(tmp_path / "home")
    collect([root], store)
    idents = {d: ident for d, ident, _, _ in _listings(tmp_path / "home")[str(root)]}
    assert idents[str(root / "match")] is None and idents[str(root)] is not None
    store.close()


def test_a_kept_walk_is_the_walk(tmp_path: Path) -> None:
    """What a listing keeps, folder by folder, is os.walk's (folders and files sorted; a link to a
    folder listed among the folders and not walked into; a dangling one or a loop among the files)."""
    root = tmp_path / "t"
    for d in ("a/b/c", "a/d", "e", "f/g"):
        (root / d).mkdir(parents=True)
    for f in ("a/x.jsonl", "a/b/c/y.jsonl", "z.txt", "e/1", "f/g/2"):
        (root / f).write_text("")
    (root / "link-to-a").symlink_to(root / "a")
    (root / "e" / "dangling").symlink_to(root / "nowhere")
    (root / "f" / "loop").symlink_to(root / "f" / "loop")
    walked, kept = looks._walk_kept(str(root))
    assert walked == list(looks._walk(str(root)))
    assert [(d, dirs, files) for d, _, dirs, files in kept] == walked
