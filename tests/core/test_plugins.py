"""The plugin system: a manager built on demand, built-ins through the same hooks, entry points of
group ``asz``, blocking, clear errors for unknown and duplicate names, broken plugins as warnings,
and discovery of a real installed distribution (tests/fake_plugin)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import warnings
from importlib.metadata import distributions
from pathlib import Path
from typing import ClassVar

import pluggy
import pytest

import asz_core.builtin
from asz_core import hookimpl
from asz_core.collect import collect
from asz_core.errors import DuplicatePlugin, PluginError, UnknownPlugin
from asz_core.interfaces import EvaluatorBackend, RuntimeAdapter, SourceFetcher
from asz_core.plugins import DEFAULT_PLUGINS, distributions_of, failures_of, make_plugin_manager
from asz_core.registry import Registry
from asz_core.store import Store

from .helpers import asz_env, run_asz


def _first_party_entry_points() -> dict[str, str]:
    """entry-point name -> distribution, for the asz-* distributions installed here."""
    out = {}
    for dist in distributions():
        if dist.metadata["Name"].startswith("asz-") and dist.metadata["Name"] != "asz-fake-plugin":
            for ep in dist.entry_points:
                if ep.group == "asz":
                    out[ep.name] = dist.metadata["Name"]
    return out


def _bare_manager(*plugins: object) -> pluggy.PluginManager:
    """A manager with the hookspecs and built-ins only, plus the given in-process plugins."""
    pm = make_plugin_manager(autoload=False)
    for p in plugins:
        pm.register(p)
    return pm


def _write_dist(site: Path, name: str, version: str, entry_points: dict[str, str], modules: dict[str, str]) -> None:
    """Install a distribution by hand: a dist-info folder plus top-level modules (for odd cases)."""
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text("[asz]\n" + "".join(f"{k} = {v}\n" for k, v in entry_points.items()))
    for mod, source in modules.items():
        (site / f"{mod}.py").write_text(textwrap.dedent(source))


# -- the manager ---------------------------------------------------------------------------------

def test_importing_asz_builds_no_manager_and_loads_no_plugin() -> None:
    code = textwrap.dedent("""
        import json, sys, pluggy
        made = []
        init = pluggy.PluginManager.__init__
        def counting(self, *a, **k):
            made.append(1)
            init(self, *a, **k)
        pluggy.PluginManager.__init__ = counting
        import asz_core, asz_core.cli, asz_core.api, asz_core.registry, asz_core.collect, asz_core.plugins
        loaded = [m for m in sys.modules if m.startswith(("asz_adapters", "asz_evaluators", "asz_fake"))]
        print(json.dumps([len(made), loaded]))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == [0, []]


def test_each_call_builds_a_fresh_manager() -> None:
    a, b = make_plugin_manager(), make_plugin_manager()
    assert a is not b
    a.register(_OnePlugin(), name="only-in-a")
    assert b.get_plugin("only-in-a") is None and make_plugin_manager().get_plugin("only-in-a") is None


def test_check_pending_passes_with_every_first_party_package_installed() -> None:
    pm = make_plugin_manager()
    pm.check_pending()
    first_party = _first_party_entry_points()
    assert "claudecode" in first_party
    for name, dist in first_party.items():
        assert pm.get_plugin(name) is not None, f"{name} of {dist} not registered"
        assert distributions_of(pm)[name][0] == dist
    assert not failures_of(pm)


def test_builtins_are_registered_in_process_through_the_same_hooks() -> None:
    pm = make_plugin_manager(autoload=False)
    assert DEFAULT_PLUGINS == ("asz_core.builtin",)
    assert pm.get_plugin("asz_core.builtin") is asz_core.builtin
    assert "asz_core.builtin" not in distributions_of(pm)  # not an entry point
    # the same hookspecs a third party implements
    assert {h for h in dir(pm.hook) if h.startswith("asz_")} == {
        "asz_runtime_adapters", "asz_evaluator_backends", "asz_source_fetchers", "asz_register_commands"}


def test_a_builtin_can_be_blocked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASZ_DISABLE_PLUGINS", "asz_core.builtin")
    pm = make_plugin_manager(autoload=False)
    assert pm.get_plugin("asz_core.builtin") is None and pm.is_blocked("asz_core.builtin")


def test_autoload_switch_skips_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASZ_DISABLE_PLUGIN_AUTOLOAD", "1")
    reg = Registry()
    assert reg.pm.get_plugin("claudecode") is None
    with pytest.raises(UnknownPlugin, match=r"no runtime adapter named 'claudecode'; available: none installed"):
        reg.runtime("claudecode")
    monkeypatch.setenv("ASZ_DISABLE_PLUGIN_AUTOLOAD", "0")
    assert Registry().runtime("claudecode").name == "claudecode"


def test_disable_plugins_blocks_entry_points_by_name(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ASZ_DISABLE_PLUGINS", " nothing-such , claudecode ")
    reg = Registry()
    assert reg.pm.is_blocked("claudecode") and reg.pm.get_plugin("claudecode") is None
    assert "claudecode" not in [p.name for p in reg.plugins()]
    f = tmp_path / "s.jsonl"
    f.write_text('{"type":"user","uuid":"u1","sessionId":"s","message":{"role":"user","content":"hi"}}\n')
    store = Store.open(tmp_path / "home")
    with pytest.raises(UnknownPlugin, match="claudecode"):
        collect([f], store, reg, runtime="claudecode")


def test_trace_switch_writes_hook_calls_to_stderr(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ASZ_TRACE_PLUGINS", "1")
    Registry().plugins()
    err = capsys.readouterr().err
    assert "asz_runtime_adapters() of plugin 'claudecode' -> [<class 'asz_adapters_claudecode.adapter.ClaudeCodeAdapter'>]" in err


# -- the three hooks through the registry ---------------------------------------------------------

class _Adapter(RuntimeAdapter):
    name: ClassVar[str] = "t-adapter"

    def detect(self, path: Path) -> bool:
        return path.suffix == ".t"

    def files(self, path: Path) -> list[Path]:
        return [path]

    def read(self, path, cursor):  # type: ignore[no-untyped-def]
        return iter(())


class _Evaluator(EvaluatorBackend):
    name: ClassVar[str] = "t-evaluator"

    def judge(self, call):  # type: ignore[no-untyped-def]
        return call


class _Fetcher(SourceFetcher):
    name: ClassVar[str] = "t-fetcher"

    def accepts(self, source, settings):  # type: ignore[no-untyped-def]
        return True

    def fetch(self, source, settings):  # type: ignore[no-untyped-def]
        return b""


class _OnePlugin:
    @staticmethod
    @hookimpl
    def asz_runtime_adapters():  # type: ignore[no-untyped-def]
        return [_Adapter]

    @staticmethod
    @hookimpl
    def asz_evaluator_backends():  # type: ignore[no-untyped-def]
        return [_Evaluator]

    @staticmethod
    @hookimpl
    def asz_source_fetchers():  # type: ignore[no-untyped-def]
        return [_Fetcher]


class _AnotherPlugin(_OnePlugin):
    """A second plugin advertising classes of the same names."""


def _hook_case(kind: str, lookup: str, cls: type) -> None:
    reg = Registry(_bare_manager(_OnePlugin()))
    found = getattr(reg, lookup)(cls.name)
    assert found is cls or isinstance(found, cls)
    (row,) = [p for p in reg.plugins() if p.kind == kind and p.plugin != "asz_core.builtin"]  # core's fetchers aside
    assert (row.name, row.cls) == (cls.name, f"{cls.__module__}.{cls.__qualname__}")
    with pytest.raises(UnknownPlugin) as err:
        getattr(reg, lookup)("nope")
    core = ["command", "file", "http"] if kind == "source fetcher" else []
    assert str(err.value) == f"no {kind} named 'nope'; available: {', '.join(sorted([*core, cls.name]))}"
    dup = Registry(_bare_manager(_OnePlugin(), _AnotherPlugin()))
    with pytest.raises(DuplicatePlugin, match=f"two {kind}s are named '{cls.name}'"):
        getattr(dup, lookup)(cls.name)


def test_hook_asz_runtime_adapters(tmp_path: Path) -> None:
    _hook_case("runtime adapter", "runtime", _Adapter)
    reg = Registry(_bare_manager(_OnePlugin()))
    (tmp_path / "x.t").write_text("")
    assert reg.detect_runtime(tmp_path / "x.t").name == "t-adapter"
    assert reg.detect_runtime(tmp_path) is None
    assert [a.name for a in reg.runtimes()] == ["t-adapter"]


def test_hook_asz_evaluator_backends() -> None:
    _hook_case("evaluator backend", "evaluator", _Evaluator)


def test_hook_asz_source_fetchers() -> None:
    _hook_case("source fetcher", "fetcher", _Fetcher)


@pytest.mark.parametrize(("returned", "message"), [
    (_Adapter, "must return a list of classes"),
    ([_Adapter()], "is not a RuntimeAdapter subclass"),
    ([_Evaluator], "is not a RuntimeAdapter subclass"),
    ([type("Nameless", (_Adapter,), {"name": ""})], "has no name"),
])
def test_a_hook_returning_the_wrong_thing_is_a_plugin_error(returned: object, message: str) -> None:
    class Bad:
        @staticmethod
        @hookimpl
        def asz_runtime_adapters():  # type: ignore[no-untyped-def]
            return returned

    with pytest.raises(PluginError, match=message):
        Registry(_bare_manager(Bad())).runtime("t-adapter")


def test_a_hook_that_raises_is_a_warning_not_a_crash() -> None:
    class Broken:
        @staticmethod
        @hookimpl
        def asz_runtime_adapters():  # type: ignore[no-untyped-def]
            raise ImportError("no module named 'heavy_sdk'")

    reg = Registry(_bare_manager(Broken(), _OnePlugin()))
    with pytest.warns(UserWarning, match=r"asz_runtime_adapters\(\) failed: ImportError: no module named 'heavy_sdk'"):
        assert reg.runtime("t-adapter").name == "t-adapter"
    with pytest.raises(UnknownPlugin, match="failed to load: .*heavy_sdk"):
        reg.runtime("broken-one")


# -- the fake plugin distribution, in this process ------------------------------------------------

def test_installed_fake_plugin_is_discovered(fake_plugin: Path, tmp_path: Path) -> None:
    reg = Registry()
    rows = {p.name: p for p in reg.plugins()}
    assert rows["fake"].distribution == "asz-fake-plugin" and rows["fake"].version == "0.3.1"
    assert rows["fake"].plugin == "fake" and rows["fake"].cls == "asz_fake_plugin.adapter.FakeAdapter"
    assert distributions_of(reg.pm)["fake"] == ("asz-fake-plugin", "0.3.1")
    # and it is used: collect detects its files
    (tmp_path / "talk.fake").write_text("one\ntwo\n")
    result = collect([tmp_path / "talk.fake"], Store.open(tmp_path / "home"), reg)
    assert [(r.conversation, r.records) for r in result.rounds] == [("talk", 2)]


def test_two_plugins_claiming_one_name_names_both_distributions(fake_plugin: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASZ_FAKE_PLUGIN_NAME", "claudecode")
    with pytest.raises(DuplicatePlugin) as err:
        Registry().runtime("claudecode")
    msg = str(err.value)
    assert "two runtime adapters are named 'claudecode'" in msg
    assert "(distribution asz-fake-plugin, plugin 'fake')" in msg
    assert "(distribution asz-adapters-claudecode, plugin 'claudecode')" in msg
    assert "asz_fake_plugin.plugin.RenamedFakeAdapter" in msg
    assert "asz_adapters_claudecode.adapter.ClaudeCodeAdapter" in msg
    # blocking one of them resolves it
    monkeypatch.setenv("ASZ_DISABLE_PLUGINS", "fake")
    assert Registry().runtime("claudecode").__class__.__name__ == "ClaudeCodeAdapter"


def test_blocked_plugin_is_not_even_imported(fake_plugin: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASZ_DISABLE_PLUGINS", "fake")
    monkeypatch.setenv("ASZ_FAKE_PLUGIN_BROKEN", "1")  # importing it would warn
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reg = Registry()
        reg.plugins()
    assert not [w for w in caught if "fake" in str(w.message)]
    assert "asz_fake_plugin.plugin" not in sys.modules
    assert "fake" not in [p.name for p in reg.plugins()]


def test_a_plugin_that_fails_to_import_is_a_warning(fake_plugin: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASZ_FAKE_PLUGIN_BROKEN", "1")
    with pytest.warns(UserWarning, match=r"asz plugin 'fake' \(asz_fake_plugin.plugin, distribution asz-fake-plugin\) "
                                         r"failed to load: ImportError: asz_fake_plugin was told to fail"):
        reg = Registry()
    assert reg.pm.get_plugin("fake") is None
    assert reg.runtime("claudecode").name == "claudecode"  # the rest works
    with pytest.raises(UnknownPlugin, match=r"no runtime adapter named 'fake'; .*failed to load: (.*; )?fake \(ImportError"):
        reg.runtime("fake")  # asking for it by name is an error that says why


def test_one_entry_point_name_from_two_distributions_is_an_error(fake_plugin: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    _write_dist(tmp_path, "asz-fake-twin", "1.0", {"fake": "asz_fake_plugin.plugin"}, {})
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(DuplicatePlugin) as err:
        make_plugin_manager()
    msg = str(err.value)
    assert "asz plugin 'fake'" in msg and "asz-fake-twin" in msg and "asz-fake-plugin" in msg


def test_one_distribution_found_twice_on_the_path_is_loaded_once(fake_plugin: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    shutil.copytree(fake_plugin, tmp_path / "again")
    monkeypatch.syspath_prepend(str(tmp_path / "again"))
    pm = make_plugin_manager()
    assert pm.get_plugin("fake") is not None
    assert [p.name for p in Registry(pm).plugins()].count("fake") == 1


def test_a_plugin_implementing_an_unknown_hook_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write_dist(tmp_path, "asz-typo", "0.1", {"typo": "asz_typo_plugin"}, {"asz_typo_plugin": """
        from asz_core import hookimpl

        @hookimpl
        def asz_runtime_adapter():
            return []
    """})
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with pytest.raises(PluginError, match=r"asz plugin 'typo' \(distribution asz-typo\) implements a hook asz does "
                                              r"not define: .*asz_runtime_adapter.*ASZ_DISABLE_PLUGINS=typo"):
            make_plugin_manager()
        monkeypatch.setenv("ASZ_DISABLE_PLUGINS", "typo")
        make_plugin_manager()
    finally:
        sys.modules.pop("asz_typo_plugin", None)


# -- the fake plugin distribution pip-installed into a throwaway venv, `asz` run there -----------

def test_asz_plugins_in_a_venv_lists_the_installed_fake_plugin(plugin_venv: str, tmp_path: Path) -> None:
    r = run_asz("plugins", "--json", home=tmp_path / "home", python=plugin_venv)
    assert r.returncode == 0, r.stderr
    rows = {row["name"]: row for row in json.loads(r.stdout)}
    assert rows["fake"] == {"kind": "runtime adapter", "name": "fake", "cls": "asz_fake_plugin.adapter.FakeAdapter",
                            "plugin": "fake", "distribution": "asz-fake-plugin", "version": "0.3.1"}
    assert rows["claudecode"]["distribution"] == "asz-adapters-claudecode"
    # installed in the venv itself, not merely importable from the tests' folder
    where = subprocess.run([plugin_venv, "-c", "import asz_fake_plugin, sys; print(asz_fake_plugin.__file__, sys.prefix)"],
                           capture_output=True, text=True, check=True, env=asz_env(tmp_path)).stdout.split()
    assert where[0].startswith(where[1]) and "site-packages" in where[0]
    # the project's own environment does not have it
    assert "fake" not in {p.name for p in Registry().plugins()}


def test_the_fake_plugin_collects_in_a_venv(plugin_venv: str, tmp_path: Path) -> None:
    (tmp_path / "chat.fake").write_text("hello\nworld\n")
    r = run_asz("collect", str(tmp_path / "chat.fake"), "--json", home=tmp_path / "home", python=plugin_venv)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert [(x["conversation"], x["records"]) for x in out["rounds"]] == [("chat", 2)]
    r = run_asz("conversations", "--json", home=tmp_path / "home", python=plugin_venv)
    assert [(c["id"], c["runtime"]) for c in json.loads(r.stdout)] == [("chat", "fake")]


def test_duplicate_name_in_a_venv_is_an_error_naming_both_distributions(plugin_venv: str, tmp_path: Path) -> None:
    r = run_asz("plugins", "--json", home=tmp_path / "home", python=plugin_venv, ASZ_FAKE_PLUGIN_NAME="claudecode")
    assert r.returncode == 1
    assert r.stdout == ""
    err = " ".join(r.stderr.split())
    err = err[err.index("error: "):]  # after any warnings about other plugins
    assert err.startswith("error: two runtime adapters are named 'claudecode'")
    assert "distribution asz-fake-plugin" in err and "distribution asz-adapters-claudecode" in err
    assert "Traceback" not in r.stderr


def test_disable_plugins_in_a_venv(plugin_venv: str, tmp_path: Path) -> None:
    r = run_asz("plugins", "--json", home=tmp_path / "home", python=plugin_venv,
                ASZ_DISABLE_PLUGINS="fake", ASZ_FAKE_PLUGIN_NAME="claudecode")
    assert r.returncode == 0, r.stderr
    assert "fake" not in {row["plugin"] for row in json.loads(r.stdout)}


def test_broken_plugin_in_a_venv_warns_and_asz_works(plugin_venv: str, tmp_path: Path) -> None:
    r = run_asz("plugins", "--json", home=tmp_path / "home", python=plugin_venv, ASZ_FAKE_PLUGIN_BROKEN="1")
    assert r.returncode == 0, r.stderr
    assert "asz plugin 'fake'" in r.stderr and "failed to load" in r.stderr
    assert r.stderr.startswith("warning: ") and "UserWarning" not in r.stderr  # one plain line, no Python noise
    assert {row["name"] for row in json.loads(r.stdout)} == {row["name"] for row in json.loads(
        run_asz("plugins", "--json", home=tmp_path / "home", python=plugin_venv).stdout)} - {"fake"}
