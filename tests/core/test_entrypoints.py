"""asz finds its plugins' entry points without importing importlib.metadata, and finds exactly
what importlib.metadata finds: the same entry points of the same distributions in the same order,
on this environment and on folders of distributions laid out the ways installers lay them out
(and where it cannot be sure, importlib.metadata itself answers)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from asz_core import entrypoints


def _ours(group: str) -> list[tuple[str, str, str, str]]:
    return [(e.name, e.value, e.group, e.dist.metadata["Name"]) for e in entrypoints.entry_points(group)]


def _theirs(group: str) -> list[tuple[str, str, str, str]]:
    metadata.FastPath.__new__.cache_clear()  # (it keeps a folder's listing while its mtime stands)
    return [(e.name, e.value, e.group, e.dist.metadata["Name"]) for e in metadata.entry_points(group=group)]


def _dist(where: Path, folder: str, name: str, eps: str | None) -> None:
    d = where / folder
    d.mkdir(parents=True)
    (d / ("PKG-INFO" if folder.lower().endswith(".egg-info") else "METADATA")).write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    if eps is not None:
        (d / "entry_points.txt").write_text(eps)


def test_this_environment_s_entry_points_are_importlib_metadata_s() -> None:
    groups = {e.group for d in metadata.distributions() for e in d.entry_points}
    assert {"asz", "console_scripts"} <= groups
    assert entrypoints._scan("asz") is not None  # found by the scan, not handed to importlib.metadata
    for group in sorted(groups):
        assert _ours(group) == _theirs(group), group
    assert {e.name for e in entrypoints.entry_points("asz")} >= {"claudecode", "codex", "kiro", "langsmith"}


def test_folders_of_distributions_are_read_as_importlib_metadata_reads_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    one, two, three = tmp_path / "one", tmp_path / "two", tmp_path / "three"
    _dist(one, "Alpha_Plug-1.0.dist-info", "Alpha_Plug",
          "# a comment\n\n[asz]\n  alpha = alpha_mod:Thing.inner [extra1]  \nbeta=beta_mod\n[other]\nx = y:z\n")
    _dist(one, "gamma-2.0.dist-info", "gamma", None)  # no entry points at all
    _dist(one, "delta.egg-info", "delta", "[asz]\ndelta = delta_mod:plugin\n")
    (one / "epsilon.egg-info").write_text("Metadata-Version: 1.0\nName: epsilon\n")  # an egg-info file, not a folder
    _dist(two, "alpha.plug-3.0.dist-info", "alpha.plug", "[asz]\nalpha = shadowed:x\n")  # alpha_plug again: skipped
    _dist(two, "zeta-1.0.dist-info", "zeta", "[asz]\nzeta = zeta_mod\n[asz]\nzeta2 = zeta_mod:b\n")
    _dist(three, "eta-1.0.dist-info", "eta", "[console_scripts]\neta = eta_mod:main\n")
    _dist(three, "eta-0.9.dist-info", "eta", "[asz]\nold_eta = eta_old\n")  # the same name twice in one folder
    monkeypatch.setattr(sys, "path", [str(one), str(tmp_path / "missing"), str(two), str(three), *sys.path])
    assert entrypoints._scan("asz") is not None
    for group in ("asz", "other", "console_scripts"):
        assert _ours(group) == _theirs(group), group
    names = {e[0] for e in _ours("asz")}
    assert {"alpha", "beta", "delta", "zeta", "zeta2"} <= names and "shadowed:x" not in {e[1] for e in _ours("asz")}


@pytest.mark.parametrize("odd", ["a zip on the path", "a name only its metadata says", "an egg's own metadata",
                                 "a line that is not an entry point"])
def test_what_only_importlib_metadata_decides_it_decides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         odd: str) -> None:
    site = tmp_path / "site"
    _dist(site, "plain-1.0.dist-info", "plain", "[asz]\nplain = plain_mod\n")
    path = [str(site)]
    if odd == "a zip on the path":
        z = tmp_path / "dists.zip"
        with zipfile.ZipFile(z, "w") as f:
            f.writestr("zipped-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: zipped\nVersion: 1.0\n")
            f.writestr("zipped-1.0.dist-info/entry_points.txt", "[asz]\nzipped = zipped_mod\n")
        path.append(str(z))
    elif odd == "a name only its metadata says":
        _dist(site, "Odd.DIST-INFO", "odd", "[asz]\nodd = odd_mod\n")
    elif odd == "an egg's own metadata":
        egg = tmp_path / "thing-1.0.egg"
        _dist(egg, "EGG-INFO", "thing", "[asz]\nthing = thing_mod\n")
        path.append(str(egg))
    else:
        _dist(site, "broken-1.0.dist-info", "broken", "[asz]\nno value here\n")
    monkeypatch.setattr(sys, "path", [*path, *sys.path])
    assert entrypoints._scan("asz") is None
    if odd == "a line that is not an entry point":
        with pytest.raises(Exception) as theirs:
            _theirs("asz")
        with pytest.raises(type(theirs.value)):
            entrypoints.entry_points("asz")
        return
    assert _ours("asz") == _theirs("asz")
    assert len({e[0] for e in _ours("asz")[:2]} & {"plain", "zipped", "odd", "thing"}) == 2


def test_an_entry_point_loads_what_importlib_metadata_s_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    (site / "lean_mod").mkdir(parents=True)
    (site / "lean_mod" / "__init__.py").write_text("class Outer:\n    class Inner:\n        pass\n")
    _dist(site, "lean-1.0.dist-info", "lean", "[asz]\nwhole = lean_mod\nnested = lean_mod : Outer.Inner [x]\n")
    monkeypatch.syspath_prepend(str(site))
    ours = {e.name: e for e in entrypoints.entry_points("asz")}
    metadata.FastPath.__new__.cache_clear()
    theirs = {e.name: e for e in metadata.entry_points(group="asz")}
    for name in ("whole", "nested"):
        assert ours[name].load() is theirs[name].load()
        assert ours[name].module == theirs[name].module == "lean_mod"
        assert ours[name].dist.version == theirs[name].dist.version == "1.0"


def test_making_the_plugin_manager_imports_no_importlib_metadata() -> None:
    code = ("import sys\nfrom asz_core.plugins import make_plugin_manager\nfrom asz_core.registry import Registry\n"
            "names = [a.name for a in Registry(make_plugin_manager()).runtimes()]\n"
            "print(sorted(names), 'importlib.metadata' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True).stdout
    runtimes: Any = out.rsplit(" ", 1)
    assert "claudecode" in runtimes[0] and runtimes[1].strip() == "False", out


def test_a_folder_whose_stem_names_no_distribution_is_named_by_its_metadata(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # "-1.0.dist-info": importlib.metadata takes its name from METADATA ("plain"), so of it and
    # plain-1.0.dist-info only the first listed counts; read by its stem it would be a third.
    site = tmp_path / "site"
    _dist(site, "-1.0.dist-info", "plain", "[asz]\nnameless = nameless_mod\n")
    _dist(site, "plain-1.0.dist-info", "plain", "[asz]\nplain = plain_mod\n")
    monkeypatch.setattr(sys, "path", [str(site), *sys.path])
    assert entrypoints._scan("asz") is None
    assert _ours("asz") == _theirs("asz")
    assert len({e[0] for e in _ours("asz")} & {"nameless", "plain"}) == 1


class _OwnDistributions:
    """A finder listing distributions of its own (as an import hook serving a bundle may)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def find_spec(self, *args: Any) -> None:
        return None

    def find_distributions(self, context: Any = None) -> Any:
        return [metadata.PathDistribution(self.folder)]


def test_another_finder_of_distributions_is_left_to_importlib_metadata(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _dist(tmp_path, "hooked-1.0.dist-info", "hooked", "[asz]\nhooked = hooked_mod\n")
    monkeypatch.setattr(sys, "meta_path", [_OwnDistributions(tmp_path / "hooked-1.0.dist-info"), *sys.meta_path])
    assert entrypoints._scan("asz") is None
    assert _ours("asz") == _theirs("asz") and _ours("asz")[0][0] == "hooked"


def test_without_the_path_s_finder_importlib_metadata_finds_nothing_and_neither_does_asz(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib.machinery import PathFinder

    monkeypatch.setattr(sys, "meta_path", [f for f in sys.meta_path if f is not PathFinder])
    ours, theirs = entrypoints.entry_points("asz"), list(metadata.entry_points(group="asz"))
    monkeypatch.undo()
    assert ours == theirs == []
