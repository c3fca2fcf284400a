"""Plugin discipline: every hook is documented (docstring, docs/plugin-hooks.md with its exact
signature and a runnable example) and has a test named test_hook_<name>."""

from __future__ import annotations

import inspect
import re
import types
from pathlib import Path

import pytest
from typer.testing import CliRunner

import asz_core
from asz_core import cli, hookspecs
from asz_core.collect import collect
from asz_core.plugins import make_plugin_manager
from asz_core.registry import KINDS, Registry
from asz_core.store import Store

from .helpers import ROOT

DOC = ROOT / "docs" / "plugin-hooks.md"
HOOKS = sorted(
    name for name, fn in vars(hookspecs).items()
    if inspect.isfunction(fn) and hasattr(fn, f"{hookspecs.PROJECT}_spec")
)


def _signature(fn: types.FunctionType) -> str:
    """``def name(args) -> Return`` as written in hookspecs.py (annotations stay strings)."""
    params = ", ".join(
        p.name + (f": {p.annotation}" if p.annotation is not inspect.Parameter.empty else "")
        for p in inspect.signature(fn).parameters.values()
    )
    return f"def {fn.__name__}({params}) -> {fn.__annotations__['return']}"


def _sections() -> dict[str, str]:
    """Hook name -> its section of docs/plugin-hooks.md."""
    parts = re.split(r"^## `(asz_\w+)`\s*$", DOC.read_text(), flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def _code_blocks(section: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


COMMANDS = "asz_register_commands"


def test_there_are_the_three_hooks_one_per_plugin_kind_and_the_commands_hook() -> None:
    assert sorted(KINDS.values()) == ["asz_evaluator_backends", "asz_runtime_adapters", "asz_source_fetchers"]
    assert HOOKS == sorted([*KINDS.values(), COMMANDS])
    # hookimpl is public, the spec marker private
    assert asz_core.hookimpl is hookspecs.hookimpl and not hasattr(hookspecs, "hookspec")


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_has_a_docstring(hook: str) -> None:
    doc = inspect.getdoc(getattr(hookspecs, hook)) or ""
    assert doc.startswith("Add " if hook == COMMANDS else "Return the "), doc
    assert "Called " in doc, "say when it is called"
    assert "unique" in doc, "say that names must be unique"


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_is_in_the_docs_with_its_exact_signature(hook: str) -> None:
    sections = _sections()
    assert hook in sections, f"docs/plugin-hooks.md has no section '## `{hook}`'"
    blocks = _code_blocks(sections[hook])
    assert blocks and blocks[0].strip() == _signature(getattr(hookspecs, hook)), \
        "the section's first code block must be the hook's signature as in hookspecs.py"


def test_the_docs_document_no_hook_that_does_not_exist() -> None:
    assert sorted(_sections()) == HOOKS


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_has_a_test(hook: str) -> None:
    tests = "\n".join(p.read_text() for p in (ROOT / "tests").rglob("test_*.py"))
    assert re.search(rf"^def test_hook_{hook}\(", tests, flags=re.M), f"no test_hook_{hook} in tests/"


def _example_plugin(hook: str) -> types.ModuleType:
    """Run the example of a hook's section as a module, the way a plugin's plugin.py is imported."""
    blocks = _code_blocks(_sections()[hook])
    assert len(blocks) == 2, "a signature and one example"
    module = types.ModuleType(f"example_{hook}")
    exec(compile(blocks[1], f"docs/plugin-hooks.md#{hook}", "exec"), module.__dict__)
    return module


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_example_is_a_working_plugin(hook: str) -> None:
    pm = make_plugin_manager(autoload=False)
    pm.register(_example_plugin(hook))
    pm.check_pending()
    if hook == COMMANDS:
        (name, (cmd, plugin)), = Registry(pm).commands().items()
        assert name == "hello" and plugin.startswith("example_")
        r = CliRunner().invoke(cli.app, ["hello", "--name", "you"], obj=Registry(pm))
        assert (r.exit_code, r.output) == (0, "hello you\n")
        return
    kind = next(k for k, h in KINDS.items() if h == hook)
    rows = [p for p in Registry(pm).plugins() if p.kind == kind and p.plugin != "asz_core.builtin"]  # core's own fetchers
    assert len(rows) == 1 and rows[0].plugin.startswith("example_")


def test_runtime_adapter_example_collects_and_reads_a_grown_file(tmp_path: Path) -> None:
    pm = make_plugin_manager(autoload=False)
    pm.register(_example_plugin("asz_runtime_adapters"))
    reg, store = Registry(pm), Store.open(tmp_path / "home")
    f = tmp_path / "chat.lines"
    f.write_bytes(b"hello\nwor")
    first = collect([f], store, reg)
    assert [(r.conversation, r.records) for r in first.rounds] == [("chat", 1)]
    with open(f, "ab") as fh:
        fh.write(b"ld\n")
    second = collect([f], store, reg)
    assert [(r.number, r.records) for r in second.rounds] == [(2, 1)]
    assert store.raw("chat", store.records("chat", 2)[-1].seq) == b"world"


def test_evaluator_and_fetcher_examples_work(tmp_path: Path) -> None:
    pm = make_plugin_manager(autoload=False)
    pm.register(_example_plugin("asz_evaluator_backends"))
    pm.register(_example_plugin("asz_source_fetchers"))
    reg = Registry(pm)
    assert reg.evaluator("fixed")().judge(None)["answer"] == {"verdict": "achieved"}
    (tmp_path / "spec.md").write_text("the spec")
    fetcher = reg.fetcher("ticket-example")()
    from asz_core import FetchError, FetchSettings

    settings = FetchSettings(options={"folder": str(tmp_path)})
    (tmp_path / "OPS-12.md").write_text("the ticket")
    assert fetcher.accepts("ticket:OPS-12", settings) and not fetcher.accepts("https://example.org", settings)
    got = fetcher.fetch("ticket:OPS-12", settings)
    assert got.data == b"the ticket" and got.content_type == "text/markdown" and got.revision == "1"
    with pytest.raises(FetchError, match="no ticket OPS-13"):
        fetcher.fetch("ticket:OPS-13", settings)
