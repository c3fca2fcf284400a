"""The Claude Code recorder plugin: installing it, and reading what its hooks spooled.

``install``/``uninstall`` back ``asz recorder install|uninstall``. The plugin is shipped in
``claude_plugin/`` (a one-plugin marketplace named ``asz``: the manifest and the hooks
configuration). Installing writes a copy under ``$ASZ_HOME/claude-plugin`` whose hooks run this
machine's ``asz-claude-hook`` by absolute path, then has Claude Code install it
(``claude plugin marketplace add`` + ``claude plugin install asz-recorder@asz --scope S``). With no
``claude`` on the PATH, it declares the marketplace and enables the plugin in the settings file
itself, and says so: Claude Code then installs it once the person accepts it.

``read_spool`` turns the spool's lines into entries with ``change`` and ``execution`` events
(docs/events.md); docs/recorder.md describes the records.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

from asz_core.errors import AszError
from asz_core.jsonl import read_objects
from asz_core.records import Cursor, Entry, Problem
from asz_core.regular import read_regular
from asz_core.textclip import clip_text

from .spool import asz_home, is_spool_file, spool_dir  # noqa: F401 - where they were

MARKETPLACE = "asz"
PLUGIN = "asz-recorder"
PLUGIN_ID = f"{PLUGIN}@{MARKETPLACE}"
SHIPPED = Path(__file__).resolve().parent / "claude_plugin"




# --- install ---------------------------------------------------------------------------------

@attrs.frozen
class InstallResult:
    action: str
    """installed, uninstalled."""
    scope: str
    settings: str
    """The settings file that declares the plugin."""
    plugin_dir: str
    hook_command: str
    via: str
    """``claude`` (Claude Code installed it) or ``settings`` (declared in the settings file only)."""
    notes: tuple[str, ...] = ()


LAUNCHER = "bin/asz-record.py"
"""Written into the installed plugin: runs the hook module with ``python -S`` (no site, no .pth
processing): a few milliseconds less per hook, which runs twice per tool call."""


def hook_command(plugin_dir: Path | None = None) -> str:
    """The command the hooks run: this Python, without site, on the plugin's launcher (with
    ASZ_HOME fixed when it is set, so the hooks spool where this asz collects)."""
    plugin_dir = plugin_dir or asz_home() / "claude-plugin"
    cmd = f"{shlex.quote(sys.executable)} -S {shlex.quote(str(plugin_dir / PLUGIN / LAUNCHER))}"
    if os.environ.get("ASZ_HOME"):
        cmd = f"ASZ_HOME={shlex.quote(str(asz_home().resolve()))} {cmd}"
    return cmd


def build_plugin(dest: Path | None = None) -> Path:
    """Write the marketplace with the plugin, its hooks running this asz's hook module; returns
    its folder. The hook module is compiled ahead, so no hook pays for compiling it."""
    from . import hook

    dest = (dest or asz_home() / "claude-plugin").resolve()
    command = hook_command(dest)
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(SHIPPED, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "__init__.py"))
    src = Path(hook.__file__).resolve().parent.parent
    launcher = dest / PLUGIN / LAUNCHER
    launcher.parent.mkdir(parents=True, exist_ok=True)
    launcher.write_text("# asz recorder hook launcher, written by `asz recorder install`.\n"
                        f"import sys\nsys.path.insert(0, {str(src)!r})\n"
                        "from asz_adapters_claudecode.hook import main\nsys.exit(main(sys.argv[1:]))\n")
    hooks_file = dest / PLUGIN / "hooks" / "hooks.json"
    hooks = json.loads(hooks_file.read_text())
    for groups in hooks["hooks"].values():
        for g in groups:
            for h in g["hooks"]:
                h["command"] = h["command"].replace("asz-claude-hook", command, 1)
    hooks_file.write_text(json.dumps(hooks, indent=2) + "\n")
    try:
        import py_compile

        for m in ("__init__.py", "hook.py"):
            py_compile.compile(str(src / "asz_adapters_claudecode" / m), doraise=True)
    except (OSError, py_compile.PyCompileError):
        pass  # a read-only install: Python compiles it on each run, a little slower
    return dest


def settings_file(scope: str, project: Path | None) -> Path:
    if scope == "user":
        config = os.environ.get("CLAUDE_CONFIG_DIR")
        return (Path(config) if config else Path.home() / ".claude") / "settings.json"
    return (project or Path.cwd()).resolve() / ".claude" / "settings.json"


def find_claude(claude: str | None = None) -> str | None:
    return claude or os.environ.get("ASZ_CLAUDE") or shutil.which("claude")


def install(scope: str = "project", project: Path | None = None, claude: str | None = None) -> InstallResult:
    _check_scope(scope, project)
    cwd = (project or Path.cwd()).resolve()
    if scope == "project" and not cwd.is_dir():
        raise AszError(f"no folder {cwd}")
    plugin_dir = build_plugin()
    settings = settings_file(scope, project)
    exe = find_claude(claude)
    notes: list[str] = []
    via = "settings"
    if exe:
        _run(exe, cwd, "plugin", "marketplace", "add", str(plugin_dir), "--scope", scope, ok_if="already")
        _run(exe, cwd, "plugin", "marketplace", "update", MARKETPLACE, ok_if="")
        r = _run(exe, cwd, "plugin", "install", PLUGIN_ID, "--scope", scope, ok_if="already")
        if "already" in r.lower():
            _run(exe, cwd, "plugin", "update", PLUGIN_ID, "--scope", scope, ok_if="")
        via = "claude"
    else:
        _declare(settings, plugin_dir)
        notes.append("no `claude` command found: the plugin is declared in the settings file; Claude Code installs it "
                     f"when the person accepts it (or run `claude plugin install {PLUGIN_ID} --scope {scope}`)")
    return InstallResult("installed", scope, str(settings), str(plugin_dir), hook_command(plugin_dir), via, tuple(notes))


def uninstall(scope: str = "project", project: Path | None = None, claude: str | None = None) -> InstallResult:
    _check_scope(scope, project)
    cwd = (project or Path.cwd()).resolve()
    settings = settings_file(scope, project)
    exe = find_claude(claude)
    via = "settings"
    if exe:
        _run(exe, cwd, "plugin", "uninstall", PLUGIN_ID, "--scope", scope, ok_if="*")
        _run(exe, cwd, "plugin", "marketplace", "remove", MARKETPLACE, ok_if="*")
        via = "claude"
    _undeclare(settings)
    return InstallResult("uninstalled", scope, str(settings), str(asz_home() / "claude-plugin"), hook_command(), via,
                         ("the spool and records already collected are kept",))


def _check_scope(scope: str, project: Path | None) -> None:
    if scope not in ("project", "user"):
        raise AszError(f"scope must be project or user, not {scope!r}")
    if scope == "user" and project is not None:
        raise AszError("--project and --user exclude each other")


def _run(exe: str, cwd: Path, *args: str, ok_if: str) -> str:
    try:
        r = subprocess.run([exe, *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise AszError(f"could not run {exe} {' '.join(args)}: {exc}") from exc
    text = (r.stdout or "") + (r.stderr or "")
    if r.returncode != 0 and ok_if != "*" and not (ok_if and ok_if in text.lower()):
        raise AszError(f"`claude {' '.join(args)}` failed ({r.returncode}): {text.strip()[:500]}")
    return text


def _load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(read_regular(path).decode("utf-8") or "{}")  # (a FIFO: refused, not waited on)
    except OSError as exc:
        raise AszError(f"{path} cannot be read ({exc}); not changed") from exc
    except ValueError as exc:
        raise AszError(f"{path} is not valid JSON ({exc}); not changed") from exc
    if not isinstance(data, dict):
        raise AszError(f"{path} does not hold a JSON object; not changed")
    return data


def _save(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.asz-tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, path)


def _declare(settings: Path, plugin_dir: Path) -> None:
    data = _load(settings)
    data.setdefault("extraKnownMarketplaces", {})[MARKETPLACE] = {"source": {"source": "directory", "path": str(plugin_dir)}}
    data.setdefault("enabledPlugins", {})[PLUGIN_ID] = True
    _save(settings, data)


def _undeclare(settings: Path) -> None:
    if not settings.exists():
        return
    data = _load(settings)
    changed = False
    for key, name in (("extraKnownMarketplaces", MARKETPLACE), ("enabledPlugins", PLUGIN_ID)):
        if isinstance(data.get(key), dict) and name in data[key]:
            del data[key][name]
            changed = True
            if not data[key]:
                del data[key]
    if changed:
        _save(settings, data)


# --- the spool -> entries ----------------------------------------------------------------------

def read_spool(path: Path, cursor: Cursor) -> Iterator[Entry | Problem]:
    """Entries of a spool file (one session's records), from ``cursor`` on."""
    fname = str(path)
    for item in read_objects(path, cursor):
        if isinstance(item, Problem):
            yield item
            continue
        lineno, body, obj = item
        typ, session, tid = obj.get("type"), obj.get("session"), obj.get("tool_use_id")
        if typ not in ("change", "execution") or not isinstance(session, str) or not session or not isinstance(tid, str) or not tid:
            yield Problem(fname, lineno, "not a recorder record (type change or execution, with session and tool_use_id); skipped")
            continue
        try:
            event = change_event(obj) if typ == "change" else execution_event(obj)
        except (TypeError, ValueError, AttributeError, KeyError) as exc:
            yield Problem(fname, lineno, f"{typ} record of unexpected shape ({exc}); skipped")
            continue
        ts = obj.get("ts")
        yield Entry(key=f"rec:{session}:{tid}:{typ}", session=session, stream="main", kind=typ, file=fname, line=lineno,
                    raw=body, events=(event,), ts=ts if isinstance(ts, str) else None)


_FILE_FIELDS = ("kind", "before", "after", "size_before", "size_after", "binary", "ignored", "oversized", "diff_cut", "outside")


def change_event(obj: dict[str, Any]) -> dict[str, Any]:
    root = str(obj.get("workspace") or "")
    files = []
    for f in obj.get("files") or ():
        rel = str(f["path"])
        path = rel if os.path.isabs(rel) or not root else os.path.join(root, rel)
        d: dict[str, Any] = {"path": path, "rel": rel}
        d.update({k: f[k] for k in _FILE_FIELDS if f.get(k) is not None})
        if isinstance(f.get("diff"), str):
            d["diff_lines"] = f["diff"].count("\n")
        files.append(d)
    ev: dict[str, Any] = {"e": "change", "tool": obj["tool_use_id"], "name": obj.get("tool"), "status": obj.get("status"),
                          "workspace": root, "vcs": obj.get("vcs"), "files": files, "cut": bool(obj.get("cut"))}
    if obj.get("cut"):
        ev["count"] = obj.get("count")
    if obj.get("scan_cut"):
        ev["scan_cut"] = True
    if obj.get("agent_id"):
        ev["agent"] = obj["agent_id"]
    return ev


def execution_event(obj: dict[str, Any]) -> dict[str, Any]:
    cmd = obj.get("command")
    ev: dict[str, Any] = {"e": "execution", "tool": obj["tool_use_id"], "name": obj.get("tool"), "status": obj.get("status")}
    ev["command"] = clip_text(cmd)["text"] if isinstance(cmd, str) else None
    for k in ("exit_code", "duration_ms", "output_size", "output_digest", "interrupted", "background"):
        if obj.get(k) is not None:
            ev[k] = obj[k]
    ev.setdefault("exit_code", None)
    return ev
