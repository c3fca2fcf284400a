"""The repository holds no symlink leading outside its own tree (a committed `.venv-main` pointed
to one machine's /work/main/.venv: on any other machine a dangling link, on this one a way out)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def committed_links(root: Path) -> dict[str, str]:
    """Each symlink the index holds (mode 120000): path -> its target as committed."""
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files", "-s", "-z"], capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    links = {}
    for entry in out.split(b"\0"):
        if entry.startswith(b"120000 "):
            meta, path = entry.split(b"\t", 1)
            blob = meta.split()[1].decode()
            target = subprocess.run(["git", "-C", str(root), "cat-file", "blob", blob], capture_output=True,
                                    check=True).stdout
            links[path.decode()] = target.decode()
    return links


def leads_outside(root: Path, path: str, target: str) -> bool:
    if os.path.isabs(target):
        return True
    resolved = os.path.normpath(os.path.join(root, os.path.dirname(path), target))
    return os.path.commonpath([str(root), resolved]) != str(root)


def test_no_committed_link_leads_outside_the_tree():
    links = committed_links(ROOT)
    outside = {p: t for p, t in links.items() if leads_outside(ROOT, p, t)}
    assert outside == {}, f"committed symlinks leading out of the repository: {outside}"


def test_the_check_sees_a_link_out(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    assert leads_outside(root, ".venv-main", "/work/main/.venv")
    assert leads_outside(root, "kit/x", "../../elsewhere")
    assert not leads_outside(root, "kit/prompts", "../asz_core/src/asz_core/kit/prompts")
