"""A third-party plugin, defined here and registered on a fresh plugin manager (no entry points),
reaches the command line through the hooks alone: it adds its own command, and its evaluator is
the one `asz judge` picks when none is named, because it says it can run here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest
import typer
from typer.testing import CliRunner

from asz_core import Availability, EvaluatorBackend, cli, hookimpl
from asz_core.errors import ConfigError, DuplicatePlugin, PluginError
from asz_core.judge import pick
from asz_core.judge.judgment import CallResult, EvaluatorCall, Request
from asz_core.plugins import make_plugin_manager
from asz_core.registry import Registry

from .conftest import cid_with, inputs_of, plain_answer


def _registry(*plugins: object) -> Registry:
    pm = make_plugin_manager(autoload=False)
    for p in plugins:
        pm.register(p)
    return Registry(pm)


class _Commands:
    """Adds `asz hello` and a group `asz tp ping`."""

    calls = 0

    @hookimpl
    def asz_register_commands(self, app: typer.Typer) -> None:
        type(self).calls += 1

        @app.command()
        def hello(name: str = "world") -> None:
            """Say hello."""
            typer.echo(f"hello {name}")

        tp = typer.Typer(help="The third party's group.")

        @tp.command("ping")
        def ping() -> None:
            typer.echo("pong")

        app.add_typer(tp, name="tp")


def test_hook_asz_register_commands() -> None:
    reg = _registry(_Commands())
    r = CliRunner().invoke(cli.app, ["hello", "--name", "you"], obj=reg)
    assert r.exit_code == 0, r.output
    assert r.output == "hello you\n"
    r = CliRunner().invoke(cli.app, ["tp", "ping"], obj=reg)
    assert (r.exit_code, r.output) == (0, "pong\n")
    r = CliRunner().invoke(cli.app, ["--help"], obj=reg)
    assert r.exit_code == 0 and "hello" in r.output and "tp" in r.output and "collect" in r.output


def test_core_commands_never_build_the_plugins_commands(asz_home: Path) -> None:
    _Commands.calls = 0
    r = CliRunner().invoke(cli.app, ["conversations", "--json"], obj=_registry(_Commands()))
    assert r.exit_code == 0, r.output
    assert _Commands.calls == 0


def test_a_command_of_no_plugin_is_the_usual_error() -> None:
    r = CliRunner().invoke(cli.app, ["nope"], obj=_registry(_Commands()))
    assert r.exit_code == 2 and "No such command 'nope'" in r.output


def test_a_plugin_cannot_take_a_core_command_or_anothers() -> None:
    class Takes:
        @hookimpl
        def asz_register_commands(self, app: typer.Typer) -> None:
            @app.command("ledger")
            def mine() -> None: ...

    r = CliRunner().invoke(cli.app, ["--help"], obj=_registry(Takes()))
    assert isinstance(r.exception, PluginError) and "asz ledger, which is asz's own" in str(r.exception)
    with pytest.raises(DuplicatePlugin, match="two plugins add the command asz hello"):
        _registry(_Commands(), _Commands()).commands()


def test_a_broken_commands_hook_is_a_warning_and_the_others_still_come() -> None:
    class Broken:
        @hookimpl
        def asz_register_commands(self, app: typer.Typer) -> None:
            raise ImportError("its CLI library is missing")

    reg = _registry(Broken(), _Commands())
    with pytest.warns(UserWarning, match="asz_register_commands\\(\\) failed: ImportError: its CLI library is missing"):
        assert sorted(reg.commands()) == ["hello", "tp"]


def test_the_recorder_comes_from_the_claude_code_plugin() -> None:
    """`asz recorder` is the installed asz-adapters-claudecode's command, not core's: without that
    plugin registered there is no such command."""
    r = CliRunner().invoke(cli.app, ["recorder", "--help"])
    assert r.exit_code == 0 and "install" in r.output and "uninstall" in r.output
    (cmd, plugin) = Registry().commands()["recorder"]
    assert plugin == "claudecode"
    r = CliRunner().invoke(cli.app, ["recorder", "--help"], obj=_registry())
    assert r.exit_code == 2 and "No such command 'recorder'" in r.output


# --- an evaluator that gets picked -------------------------------------------------------------

def _evaluator(name: str, order: int | None, ok: bool, answer: Any = None, *, asked: list[str] | None = None) -> type:
    class ThirdParty(EvaluatorBackend):
        default_order: ClassVar[int | None] = order

        @classmethod
        def available(cls, options: dict[str, Any]) -> Availability:
            if asked is not None:
                asked.append(cls.name)
            return Availability(ok, f"{cls.name} {'is ready' if ok else 'wants its token set'} (options {options})",
                                "model-x" if ok else None)

        def judge(self, call: EvaluatorCall) -> CallResult:
            return CallResult(answer=answer, raw=json.dumps(answer), model=call.argument,
                              requests=(Request(input=10, output=5, cache_read=0, cache_write=0, model=call.argument),))

    ThirdParty.name = name
    return ThirdParty


def _backends(*classes: type) -> object:
    class Plugin:
        @hookimpl
        def asz_evaluator_backends(self) -> list[type]:
            return list(classes)

    return Plugin()


def test_an_evaluator_a_plugin_says_is_available_is_picked_and_runs(corpus_store: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    cid = cid_with(corpus_store, 1)
    monkeypatch.setenv("ASZ_HOME", str(Path(corpus_store.path).parent))
    answer = plain_answer(inputs_of(corpus_store, cid))
    asked: list[str] = []
    reg = _registry(_backends(_evaluator("tp-later", 50, True, answer, asked=asked),
                              _evaluator("tp-first", 5, False, asked=asked),
                              _evaluator("tp-picked", 20, True, answer, asked=asked),
                              _evaluator("tp-never", None, True, answer, asked=asked)))
    r = CliRunner().invoke(cli.app, ["judge", cid[:8], "--stages", "targets", "--json"], obj=reg)
    assert r.exit_code == 0, r.output
    # asked lowest first, stopped at the first available; one without a default_order never asked
    assert asked == ["tp-first", "tp-picked"]
    assert ("evaluator: tp-picked:model-x, the first available (tp-picked is ready (options {})); "
            "give --evaluator NAME[:MODEL] to choose another") in r.output
    data = json.loads(r.output[r.output.index("\n{") + 1:])
    assert data["run"]["evaluators"]["targets"]["spec"] == "tp-picked:model-x"
    assert data["stages"]["targets"]["status"] == "complete"
    assert data["stages"]["targets"]["evaluator"]["models"] == ["model-x"]


def test_with_none_available_each_says_what_it_needs() -> None:
    class Crashes(EvaluatorBackend):
        name: ClassVar[str] = "tp-crash"
        default_order: ClassVar[int | None] = 1

        @classmethod
        def available(cls, options: dict[str, Any]) -> Availability:
            raise RuntimeError("cannot tell")

        def judge(self, call: EvaluatorCall) -> CallResult:
            raise AssertionError("never run")

    reg = _registry(_backends(Crashes, _evaluator("tp-a", 3, False), _evaluator("tp-b", 3, False),
                              _evaluator("tp-quiet", None, True)))
    with pytest.raises(ConfigError) as e:
        pick.pick(reg, {"tp-b": {"token": "t"}})
    lines = str(e.value).splitlines()
    assert lines[0] == pick.NONE_AVAILABLE
    assert lines[1:4] == ["  - tp-crash: could not tell (RuntimeError: cannot tell)",
                          "  - tp-a: tp-a wants its token set (options {})",
                          "  - tp-b: tp-b wants its token set (options {'token': 't'})"]
    assert "(installed: tp-a, tp-b, tp-crash, tp-quiet)" in lines[4]
