"""What the agent-CLI evaluators (``claude``, ``codex``, ``kiro-cli``) share.

Each CLI call gets the navigation as an MCP server of its own: ``asz judge mcp`` over the call's
window, with the call's reading budget, logging every read into the attempt's ``reads.jsonl``
(it ends after three refused answers). The CLI runs in an empty directory inside the attempt's
own directory, its standard input closed, and its whole event stream is kept as ``stream.jsonl``
beside the other files of the attempt. After the call, the reads the server logged are counted
into the call's navigator, so the attempt's record says what the CLI read.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import orjson

from asz_core.errors import EvaluatorError
from asz_core.interfaces import Availability
from asz_core.judge.context import write_once
from asz_core.judge.judgment import EvaluatorCall, Request

SERVER = "asz"
"""The MCP server's name as every CLI is given it (claude names its tools mcp__asz__<tool>)."""

ASZ_LAUNCHER = "import sys; from asz_core.cli import main; sys.argv[0] = 'asz'; main()"
DEFAULT_TIMEOUT = 3600.0


def window_text(window: Any) -> str:
    """The window as ``asz judge mcp --window`` takes it."""
    return window.spec.text()


def mcp_command(call: EvaluatorCall) -> list[str]:
    """``asz judge mcp`` for this call: its conversation, head, window, budget, run directory and
    log, all given explicitly (a stage may give the navigator a state directory of its own)."""
    nav = call.navigator
    cmd = [sys.executable, "-c", ASZ_LAUNCHER, "judge", "mcp", nav.conv.id, "--head", str(nav.w.head),
           "--window", window_text(nav.w), "--budget", str(call.budget),
           "--log", str(Path(call.directory).resolve() / "reads.jsonl")]
    if nav.run_dir is not None:
        cmd += ["--run", str(nav.run_dir)]
    return cmd


def mcp_env(call: EvaluatorCall) -> dict[str, str]:
    """The environment ``asz judge mcp`` needs: the store the run reads (ASZ_HOME, and the store's
    address when it is no SQLite file there: the server runs in a folder of its own, where the
    asz.yaml or --config that named the store is not read)."""
    env: dict[str, str] = {}
    store = call.navigator.store
    path = getattr(store, "path", None)
    if path is not None and Path(path).name == "asz.db":
        env["ASZ_HOME"] = str(Path(path).resolve().parent)
    elif os.environ.get("ASZ_HOME"):
        env["ASZ_HOME"] = os.environ["ASZ_HOME"]
    url = getattr(store, "url", None)
    if isinstance(url, str) and url and not _has_password(url):
        # (never a password: these variables are written into the CLI's MCP settings in the run's
        # folder; a store reached with one gives it the server as libpq does, PGPASSWORD or ~/.pgpass)
        env["ASZ_STORE"] = url
    return env


def _has_password(url: str) -> bool:
    from urllib.parse import urlsplit

    try:
        return urlsplit(url).password is not None
    except ValueError:
        return True


def workdir(call: EvaluatorCall) -> Path:
    """An empty directory inside the attempt's own directory: the CLI's cwd."""
    d = Path(call.directory).resolve() / "cwd"
    d.mkdir(parents=True, exist_ok=True)
    return d


def locate(name: str, env_var: str, options: dict[str, Any]) -> str | None:
    """The CLI to run: ``command`` in the backend's section of asz.yaml, else ``$env_var``, else
    ``name`` on the PATH; None when none is found."""
    given = options.get("command") or os.environ.get(env_var)
    return str(given) if given else shutil.which(name)


def run_briefly(cmd: list[str], timeout: float = 30.0) -> subprocess.CompletedProcess[str] | str:
    """``cmd`` run to its end with nothing on its input (a CLI asked its version or its login, for
    ``available``), or why it could not run."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return f"it did not answer within {timeout:g} s"
    except (OSError, ValueError) as exc:
        return f"it does not run ({getattr(exc, 'strerror', None) or exc})"


def version_of(exe: str, timeout: float = 30.0) -> tuple[str | None, str]:
    """What ``exe --version`` says (its first line), or None and why it did not say it: a CLI that
    cannot tell its version is not taken to run."""
    r = run_briefly([exe, "--version"], timeout)
    if isinstance(r, str):
        return None, r
    line = next((x.strip() for x in (r.stdout + r.stderr).splitlines() if x.strip()), "")
    if r.returncode != 0 or not line:
        return None, f"`{exe} --version` failed (exit code {r.returncode})"
    return line[:100], ""


def runnable(name: str, env_var: str, options: dict[str, Any], label: str, setup: str) -> tuple[str, str] | Availability:
    """For ``available``: the CLI found (:func:`locate`) and its version, or why it cannot run here
    (``setup`` says what to install and set when it is not found; ``label`` names it in words)."""
    exe = locate(name, env_var, options)
    if not exe:
        return not_found(name, env_var, setup)
    version, why = version_of(exe)
    if version is None:
        return Availability(False, f"{label} ({exe}) cannot be run: {why}")
    return exe, version


def not_found(name: str, env_var: str, setup: str) -> Availability:
    """For ``available``: the CLI ``name`` is not found; ``setup`` says what to install and set."""
    return Availability(False, f"{setup}, and put `{name}` on the PATH (or set {env_var} to it)")


def model_option(options: dict[str, Any]) -> str | None:
    """For ``available``: the model the backend's section of asz.yaml names (``model``), or None."""
    model = options.get("model")
    return str(model) if model else None


def find_executable(name: str, call: EvaluatorCall | None, env_var: str, options: dict[str, Any] | None = None) -> str:
    """The CLI to run (:func:`locate`), or an EvaluatorError saying how to give it."""
    exe = locate(name, env_var, call.options if call is not None else (options or {}))
    if not exe:
        raise EvaluatorError(f"the {name} evaluator needs the {name} CLI: put it on the PATH, set {env_var}, or set "
                             f"evaluators: {{{name}: {{command: PATH}}}} in asz.yaml")
    return exe


def timeout_of(call: EvaluatorCall) -> float:
    t = call.options.get("timeout")
    return float(t) if isinstance(t, (int, float)) and not isinstance(t, bool) and t > 0 else DEFAULT_TIMEOUT


class Finished:
    """How a CLI process ended."""

    def __init__(self, rc: int | None, stderr: str, timed_out: bool, stopped: str | None) -> None:
        self.rc, self.stderr, self.timed_out, self.stopped = rc, stderr, timed_out, stopped


def run_lines(cmd: list[str], *, cwd: Path, env: dict[str, str], timeout: float, stream_file: Path,
              on_line: Callable[[str], str | None], tick: Callable[[], None] | None = None) -> Finished:
    """Run ``cmd`` with stdin closed; give each stdout line to ``on_line`` as it comes (kept in
    ``stream_file``). ``on_line`` returns a reason to stop the process at once, or None. The
    process is stopped (its whole group) on that reason or when ``timeout`` passes. ``tick`` is
    called at most once a second, on a line (the reads so far, for the stage's progress)."""
    try:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        raise EvaluatorError(f"cannot run {cmd[0]}: {exc}") from exc
    err_chunks: list[bytes] = []
    t_err = threading.Thread(target=lambda: err_chunks.append(proc.stderr.read() if proc.stderr else b""), daemon=True)
    t_err.start()
    state: dict[str, Any] = {"timed_out": False, "stopped": None}

    def stop() -> None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            return
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def on_timeout() -> None:
        state["timed_out"] = True
        stop()

    timer = threading.Timer(timeout, on_timeout)
    timer.daemon = True
    timer.start()
    last_tick = time.monotonic()
    try:
        with stream_file.open("wb") as keep:
            assert proc.stdout is not None
            for raw in proc.stdout:
                keep.write(raw)
                keep.flush()
                if state["stopped"]:
                    continue
                why = on_line(raw.decode("utf-8", "replace").strip())
                if why:
                    state["stopped"] = why
                    stop()
                if tick is not None and time.monotonic() - last_tick >= 1.0:
                    last_tick = time.monotonic()
                    tick()
        proc.wait()
    finally:
        timer.cancel()
        if proc.poll() is None:
            stop()
    t_err.join(10)
    # Whatever the CLI left running in its group (an MCP server) ends with it.
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    stderr = b"".join(err_chunks).decode("utf-8", "replace")
    return Finished(proc.returncode, stderr, state["timed_out"], state["stopped"])


def json_line(line: str) -> dict[str, Any] | None:
    if not line.startswith("{"):
        return None
    try:
        v = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return v if isinstance(v, dict) else None


def count_reads(call: EvaluatorCall, final: bool = True) -> None:
    """Count the reads ``asz judge mcp`` logged for this call into its navigator (bytes used,
    tool calls, refusals), so the attempt's record says what the CLI read; ``final`` also adds
    the log's entries to the navigator's (once, when the call ended)."""
    log = Path(call.directory) / "reads.jsonl"
    nav = call.navigator
    if not log.is_file():
        return
    entries = []
    for line in log.read_bytes().splitlines():
        try:
            e = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(e, dict):
            entries.append(e)
    if not entries:
        return
    nav.calls = len(entries)
    nav.used = max(int(e.get("used") or 0) for e in entries)
    nav.refusals = sum(1 for e in entries if e.get("status") == "refused")
    if final:
        nav.log.extend(entries)


def tick_of(call: EvaluatorCall, so_far: Callable[[], Iterable[Request]] | None = None) -> Callable[[], None]:
    """What :func:`run_lines` calls about once a second while the CLI runs: the reads so far, and
    the requests the stream showed ending so far (``so_far``), for the stage's progress lines."""
    def tick() -> None:
        count_reads(call, final=False)
        if so_far is not None:
            call.requests_so_far([r for r in so_far() if r.said])
    return tick


def write_usage(call: EvaluatorCall, data: dict[str, Any]) -> None:
    """``usage.json`` in the attempt's directory: what the CLI itself reported, in its own terms
    (totals, per model, its cost, credits), beside asz's requests.jsonl."""
    write_once(Path(call.directory) / "usage.json", orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS,
                                                                    default=str) + b"\n")


def parse_json_answer(text: str) -> Any:
    """A JSON object from an answer's text, read as the stage runner reads an answer."""
    from asz_core.judge.context import json_object_of

    return json_object_of(text or "")


def plain_schema(schema: Any) -> Any:
    """The answer schema without its ``$schema`` and ``$id`` keys (claude's validator knows no
    draft 2020-12 meta-schema; the constraints themselves are kept)."""
    if isinstance(schema, dict):
        return {k: plain_schema(v) for k, v in schema.items() if k not in ("$schema", "$id")}
    if isinstance(schema, list):
        return [plain_schema(v) for v in schema]
    return schema


def clock() -> float:
    return time.monotonic()
