"""Installing from a checkout: the root distribution names every member as a direct reference to
the checkout (so `pip install .`, `pipx install .` and `uv tool install .` reach only the package
registries), carries the `asz` command, and the README's first command installs asz alone."""

from __future__ import annotations

import email
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _members() -> dict[str, str]:
    """Distribution name -> its folder, for every asz_*/pyproject.toml in the checkout."""
    out = {}
    for p in sorted(ROOT.glob("asz_*/pyproject.toml")):
        out[tomllib.loads(p.read_text())["project"]["name"]] = p.parent.name
    return out


def test_the_root_names_every_member_from_this_checkout() -> None:
    root = tomllib.loads((ROOT / "pyproject.toml").read_text())
    deps = root["project"]["dependencies"]
    members = _members()
    assert len(members) >= 6
    assert sorted(deps) == sorted(f"{name} @ {{root:uri}}/{folder}" for name, folder in members.items())
    core = tomllib.loads((ROOT / "asz_core" / "pyproject.toml").read_text())
    assert root["project"]["scripts"]["asz"] == core["project"]["scripts"]["asz"]  # pipx / uv tool expose it
    assert set(root["tool"]["uv"]["workspace"]["members"]) == set(members.values())


def test_the_built_wheel_points_at_the_checkout(tmp_path: Path) -> None:
    pytest.importorskip("hatchling")
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                        "--isolated", "-q", "-w", str(tmp_path), str(ROOT)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    (whl,) = tmp_path.glob("asz-*.whl")
    with zipfile.ZipFile(whl) as z:
        meta = email.message_from_bytes(z.read(next(n for n in z.namelist() if n.endswith("METADATA"))))
        entry = z.read(next(n for n in z.namelist() if n.endswith("entry_points.txt"))).decode()
    req = sorted(x for x in meta.get_all("Requires-Dist") if "extra ==" not in x)
    want = sorted(f"{name}@ {(ROOT / folder).as_uri()}" for name, folder in _members().items())
    assert [x.replace(" @ ", "@ ") for x in req] == want
    assert "asz = asz_core.main:main" in entry


def test_the_first_command_installs_asz_alone() -> None:
    example = (ROOT / "kit" / "example").read_text()
    install = (ROOT / "kit" / "install-asz").read_text()
    assert "kit/install-asz" in example and "kit/setup" not in example.split("#")[0]
    for needed_by_tests_only in ("install-claude-cli", "install-codex-cli", "test-requirements", "npm"):
        assert needed_by_tests_only not in install.replace("claude or codex npm CLIs", ""), needed_by_tests_only
    assert all(f"-e {folder}" in install for folder in _members().values())


def test_a_stamp_changes_with_what_decides_the_install(tmp_path: Path) -> None:
    """kit/setup and kit/install-asz skip pip when the stamp is the same: it must change when a
    pyproject (or, for setup, the test requirements) does."""
    import shutil

    copy = tmp_path / "repo"
    (copy / "kit").mkdir(parents=True)
    shutil.copy(ROOT / "kit" / "stamp", copy / "kit")
    for p in [ROOT / "pyproject.toml", *ROOT.glob("asz_*/pyproject.toml"), ROOT / "kit" / "test-requirements.txt",
              ROOT / "kit" / "dev-install"]:
        dst = copy / p.relative_to(ROOT)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(p, dst)

    def stamp(kind: str) -> str:
        return subprocess.run([str(copy / "kit" / "stamp"), kind], capture_output=True, text=True, check=True).stdout.strip()

    a, s = stamp("install"), stamp("setup")
    assert len(a) == 64 and a != s and stamp("install") == a
    (copy / "kit" / "test-requirements.txt").write_text("pytest>=9\n")
    assert stamp("install") == a and stamp("setup") != s
    p = copy / "asz_core" / "pyproject.toml"
    p.write_text(p.read_text() + "\n# changed\n")
    assert stamp("install") != a
