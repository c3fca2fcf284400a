"""The recorder's hook entry point: what Claude Code runs before and after every tool call.

``asz-claude-hook pre|post|stop`` (or ``python -m asz_adapters_claudecode.hook``) reads the hook
input JSON Claude Code sends on stdin and records, per tool call, the workspace files the call
changed (a **change record**) and, for a command tool, how the command ran (an **execution
record**). Records are appended, one JSON line each, to ``$ASZ_HOME/recorder/spool/<session>.jsonl``;
``asz collect`` publishes them into the session's conversation. docs/recorder.md describes it all.

Rules this module keeps:

* It never blocks or breaks the agent: it prints nothing, always exits 0, logs any error to
  ``$ASZ_HOME/recorder/hook.log``, and stops itself after ``ASZ_RECORDER_BUDGET`` seconds
  (default 8; the hooks' timeout is 30).
* It never writes to the workspace: everything it keeps is under ``$ASZ_HOME/recorder``; git is
  run with ``GIT_OPTIONAL_LOCKS=0`` (``git status`` then never refreshes the index).
* A file matched by ``.gitignore`` is never inlined: it is named and hashed, no diff.
* Standard library only, imported lazily: Python's start-up is most of its time.
"""

from __future__ import annotations

import os
import sys
import time

try:  # the built-in SHA-256: hashlib would load OpenSSL first (2-10 ms); the digests are the same
    from _sha256 import sha256  # Python 3.11
except ImportError:  # pragma: no cover - other Pythons
    try:
        from _sha2 import sha256  # type: ignore[no-redef]  # Python 3.12+
    except ImportError:
        from hashlib import sha256  # type: ignore[no-redef]

# Imported lazily where used (re, subprocess, difflib, traceback, signal): start-up is most of a
# hook's time. Annotations are strings (``from __future__``), so typing is never imported.

VERSION = 1
COMMAND_TOOLS = frozenset({"Bash", "PowerShell"})
READ_ONLY_TOOLS = frozenset({"Read", "Grep", "Glob", "LS", "NotebookRead", "WebFetch", "WebSearch", "TodoWrite", "TodoRead",
                             "BashOutput", "AskUserQuestion", "ExitPlanMode", "EnterPlanMode", "ListMcpResourcesTool",
                             "ReadMcpResourceTool", "Task", "Agent", "TaskOutput", "Skill", "ToolSearch"})
"""Claude Code tools that never write the workspace themselves: no comparison, no change record
(``Task``/``Agent``: the sub-agent's own tool calls are captured, each by its own hooks)."""
EDIT_TOOLS = {"Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}

TEXT_MAX = 256 * 1024
"""A text file larger than this (before or after) is named and hashed, not diffed (``oversized``)."""
DIFF_MAX = 64 * 1024
"""A diff is cut to this many bytes (``diff_cut``)."""
HASH_MAX = 64 * 1024 * 1024
"""A file larger than this is not read: its digest is ``size:<n>:mtime:<ns>`` (``oversized``)."""
FILES_MAX = 1000
"""A change record naming more files than this has its list taken out (``cut``)."""
LINE_MAX = 2 * 1024 * 1024
"""A record's line is kept under this size: diffs are dropped first, then the file list."""
SCAN_MAX = int(os.environ.get("ASZ_RECORDER_SCAN_MAX") or 20000)
"""Files a plain-folder scan looks at; beyond it the scan is ``scan_cut``."""
DIRTY_MAX = 5000
"""Dirty files of a git work tree hashed before a call; beyond them, before digests are unknown."""


def home() -> str:
    return os.path.join(os.environ.get("ASZ_HOME") or os.path.join(os.path.expanduser("~"), ".asz"), "recorder")


# --- entry point ---------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        budget = float(os.environ.get("ASZ_RECORDER_BUDGET") or 8)
        if budget > 0 and hasattr(os, "fork"):
            import _signal  # the C module: ``signal`` imports enum, 8 ms

            def _late(*_: Any) -> None:
                raise TimeoutError(f"hook took longer than {budget:g}s; gave up")

            _signal.signal(_signal.SIGALRM, _late)
            _signal.setitimer(_signal.ITIMER_REAL, budget)
        data = _loads(_read_input() or b"{}")
        handle(argv[0] if argv else "", data)
    except BaseException as exc:  # noqa: BLE001 - a hook never breaks the agent
        if isinstance(exc, SystemExit) and not exc.code:
            return 0
        _log(exc)
    return 0


INPUT_WAIT = 0.5
"""Seconds the hook waits for its input: Claude Code writes it whole at once; a stdin that is
never closed is read until what came parses as the JSON object, and never waited on longer."""


def _read_input(fd: int = 0, wait: float = INPUT_WAIT) -> bytes:
    """The hook input: stdin to its end, or as soon as what arrived is a whole JSON object, or what
    arrived within ``wait`` seconds (a writer that keeps stdin open never holds the agent)."""
    import select

    chunks: list[bytes] = []
    deadline = time.monotonic() + wait
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not poller.poll(left * 1000):
            break  # nothing more in time: what came is all there is
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
        if chunk.rstrip().endswith(b"}"):
            try:
                _loads(b"".join(chunks))
                break  # whole: stdin may stay open, the hook goes on
            except ValueError:
                pass
    return b"".join(chunks)


def handle(event: str, data: dict[str, Any]) -> None:
    """Act on one hook input: its ``hook_event_name``, else ``event`` (pre, post, post-failure, stop)."""
    if not isinstance(data, dict):
        raise ValueError("hook input is not a JSON object")
    name = str(data.get("hook_event_name") or event or "")
    if name in ("pre", "PreToolUse"):
        pre(data)
    elif name in ("post", "PostToolUse"):
        post(data, failed=False)
    elif name in ("post-failure", "PostToolUseFailure"):
        post(data, failed=True)
    elif name in ("stop", "Stop", "SessionEnd"):
        stop(data)


def _note(line: str) -> None:
    """One line in hook.log (no traceback): what the hook chose not to do, and why."""
    try:
        d = home()
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "hook.log"), "a", encoding="utf-8") as f:
            f.write(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {line}\n")
    except Exception:  # noqa: BLE001 - never break the agent
        pass


def _log(exc: BaseException) -> None:
    try:
        import traceback

        d = home()
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "hook.log")
        if os.path.exists(path) and os.path.getsize(path) > 1024 * 1024:
            os.replace(path, path + ".1")
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {text}\n")
    except Exception:  # noqa: BLE001
        pass


# --- JSON without the json package ---------------------------------------------------------------
# ``import json`` costs a hook about 7 ms (json.decoder imports re); the C scanner and encoder it
# wraps cost nothing. Any surprise (another Python's _json) falls back to the json package.

class _ScanContext:
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    memo: dict[str, Any] = {}

    @staticmethod
    def parse_constant(name: str) -> float:
        return {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}[name]


def _loads(data: bytes) -> Any:
    text = data.decode("utf-8")
    try:
        import _json

        body = text.strip(" \t\n\r")
        obj, end = _json.make_scanner(_ScanContext)(body, 0)
        if end != len(body):
            raise ValueError("extra data after the JSON value")
    except (ImportError, AttributeError, TypeError):
        import json

        obj = json.loads(text)
    except StopIteration as exc:
        raise ValueError(f"not JSON (at {exc.value})") from None
    # Claude Code's JSON.stringify writes half a pair cut from a string (a model's file_path) as a
    # lone escape, which this reader keeps: no path, git call or record can hold one (the call was
    # not recorded, a traceback in hook.log). Each becomes U+FFFD, as asz reads such a transcript.
    return _mended(obj) if "\\ud" in text or "\\uD" in text else obj


def _mended(v: Any) -> Any:
    """``v`` with every string (keys too) holding a lone surrogate made U+FFFD there; walked without recursion."""
    root: list[Any] = [v]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        holder, key = stack.pop()
        x = holder[key]
        if isinstance(x, str):
            try:
                x.encode("utf-8")
            except UnicodeEncodeError:
                holder[key] = x.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        elif isinstance(x, dict):
            d = {(_mended(k) if isinstance(k, str) else k): y for k, y in x.items()}
            holder[key] = d
            stack.extend((d, k) for k in d)
        elif isinstance(x, list):
            stack.extend((x, i) for i in range(len(x)))
    return root[0]


def _dumps(obj: Any) -> str:
    try:
        import _json

        def default(o: Any) -> Any:
            raise TypeError(f"{type(o).__name__} is not JSON serializable")

        enc = _json.make_encoder(None, default, _json.encode_basestring, None, ":", ",", False, False, True)
        return "".join(enc(obj, 0))
    except (ImportError, AttributeError):
        import json

        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


# --- names and places ------------------------------------------------------------------------

_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def _safe(name: Any) -> str:
    s = str(name or "")
    if 0 < len(s) <= 128 and _SAFE.issuperset(s) and s not in (".", ".."):
        return s
    return "h-" + sha256(s.encode()).hexdigest()[:32]


def _pending(session: str, tool_id: str) -> str:
    return os.path.join(home(), "pending", _safe(session), _safe(tool_id) + ".state")


def _now() -> str:
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1000) % 1000:03d}Z"


def git_root(cwd: str) -> str | None:
    """The work tree holding ``cwd`` (a ``.git`` folder or file above it), without running git."""
    d = os.path.abspath(cwd)
    while True:
        if os.path.exists(os.path.join(d, ".git")):
            return d
        up = os.path.dirname(d)
        if up == d:
            return None
        d = up


def _git(root: str, *args: str, stdin: bytes | None = None) -> bytes:
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
    env.pop("GIT_DIR", None)
    env.pop("GIT_WORK_TREE", None)
    code, out, err = _run(["git", "-C", root, "-c", "core.quotepath=off", *args], stdin, env, timeout=20)
    if code not in (0, 1):
        raise RuntimeError(f"git {args[0]} failed ({code}): {err[:300]!r}")
    return out


def _run(argv: list[str], stdin: bytes | None, env: dict[str, str], timeout: float) -> tuple[int, bytes, bytes]:
    """Run a program with pipes, like subprocess.run, without importing subprocess (10 ms of
    imports: signal, threading, selectors...): posix_spawn and poll."""
    import select

    r_out, w_out = os.pipe()
    r_err, w_err = os.pipe()
    if stdin is None:
        r_in, w_in = os.open(os.devnull, os.O_RDONLY), -1
    else:
        r_in, w_in = os.pipe()
    try:
        pid = os.posix_spawnp(argv[0], argv, env, file_actions=[
            (os.POSIX_SPAWN_DUP2, r_in, 0), (os.POSIX_SPAWN_DUP2, w_out, 1), (os.POSIX_SPAWN_DUP2, w_err, 2)])
    finally:
        for fd in (r_in, w_out, w_err):
            os.close(fd)  # the pipes' other ends are close-on-exec: the child holds only 0, 1, 2
    out: list[bytes] = []
    err: list[bytes] = []
    pending = memoryview(stdin or b"")
    poller = select.poll()
    fds = {r_out: out, r_err: err}
    for fd in fds:
        poller.register(fd, select.POLLIN)
    if w_in >= 0:
        if pending:
            os.set_blocking(w_in, False)
            poller.register(w_in, select.POLLOUT)
        else:
            os.close(w_in)
            w_in = -1
    deadline = time.monotonic() + timeout
    try:
        while fds or w_in >= 0:
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, 9)
                raise TimeoutError(f"{argv[0]} {argv[3] if len(argv) > 3 else ''} took longer than {timeout:g}s")
            for fd, ev in poller.poll(left * 1000):
                if fd == w_in:
                    try:
                        n = os.write(w_in, pending[:65536])
                    except BrokenPipeError:
                        n = len(pending)
                    pending = pending[n:]
                    if not pending:
                        poller.unregister(w_in)
                        os.close(w_in)
                        w_in = -1
                    continue
                chunk = os.read(fd, 1 << 16)
                if chunk:
                    fds[fd].append(chunk)
                else:
                    poller.unregister(fd)
                    os.close(fd)
                    del fds[fd]
    finally:
        for fd in list(fds) + ([w_in] if w_in >= 0 else []):
            try:
                os.close(fd)
            except OSError:
                pass
        _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), b"".join(out), b"".join(err)


# --- the workspace's state ---------------------------------------------------------------------

def _digest_file(path: str) -> tuple[str | None, int, bool]:
    """(digest, size, read): ``None`` when absent (or not a regular file, or unreadable); a stat
    signature when too large to read."""
    fd = _open_file(path)
    if fd is None:
        return None, 0, False
    try:
        st = os.fstat(fd)
        if st.st_size > HASH_MAX:
            return f"size:{st.st_size}:mtime:{st.st_mtime_ns}", st.st_size, False
        h = sha256()
        while chunk := os.read(fd, 1 << 20):
            h.update(chunk)
    except OSError:  # a read that would wait or fails: no digest, as for a file that is not there
        return None, 0, False
    finally:
        os.close(fd)
    return "sha256:" + h.hexdigest(), st.st_size, True


def _read_file(path: str, limit: int) -> bytes | None:
    """At most ``limit`` bytes of a regular file, or None (absent, not a regular file, unreadable)."""
    fd = _open_file(path)
    if fd is None:
        return None
    try:
        out = b""
        while len(out) < limit and (chunk := os.read(fd, limit - len(out))):
            out += chunk
        return out
    except OSError:
        return None
    finally:
        os.close(fd)


_OPEN = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)


def _open_file(path: str) -> int | None:
    """A descriptor of ``path`` when it is a regular file, checked on what was opened; never waits
    (a FIFO, a device or /proc/kmsg is refused, or its read fails at once instead of blocking).
    asz_core.regular does the same for collect; the hook imports nothing of asz (start-up time)."""
    try:
        fd = os.open(path, _OPEN)
    except OSError:
        return None
    try:
        if _is_file(os.fstat(fd)):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _escapes(root: str, path: str) -> bool:
    """Whether ``path`` lies outside the workspace ``root``: by name (``../x``, ``/etc/passwd``) or
    through a symlink (a link in the workspace to a file outside it, ``/proc/kmsg``). Such a file
    is named in the record, never read: the hook reads nothing of the machine beyond the workspace."""
    p = os.path.normpath(os.path.join(root, path))
    if not _inside(p, os.path.normpath(root)):
        return True
    return not _inside(os.path.realpath(p), _real(root))


_REAL: dict[str, str] = {}


def _real(root: str) -> str:
    if root not in _REAL:
        _REAL[root] = os.path.realpath(root)
    return _REAL[root]


def _is_file(st: os.stat_result) -> bool:
    import stat as _st

    return _st.S_ISREG(st.st_mode)


def _git_status(root: str) -> tuple[set[str], str | None]:
    """The paths git status lists (changed, staged, untracked; ignored files are not listed) and
    the commit HEAD names, from one ``git status --porcelain=v2 --branch``."""
    out = _git(root, "status", "--porcelain=v2", "-z", "--branch", "--no-ahead-behind", "--untracked-files=all", "--no-renames")
    paths: set[str] = set()
    head = None
    for item in out.split(b"\0"):
        if not item:
            continue
        c = item[:1]
        if c == b"1":
            parts = item.split(b" ", 8)
        elif c == b"u":
            parts = item.split(b" ", 10)
        elif c == b"?":
            paths.add(item[2:].decode("utf-8", "surrogateescape"))
            continue
        elif item.startswith(b"# branch.oid "):
            oid = item[13:].decode()
            head = None if oid == "(initial)" else oid
            continue
        else:
            continue
        paths.add(parts[-1].decode("utf-8", "surrogateescape"))
    return paths, head


def _scan(root: str, skip: str | None, ignore: Any) -> tuple[dict[str, tuple[int, int]], bool]:
    """A plain folder's files (relative path -> size, mtime), at most SCAN_MAX of them."""
    found: dict[str, tuple[int, int]] = {}
    stack = [""]
    while stack:
        rel = stack.pop()
        d = os.path.join(root, rel) if rel else root
        if skip and (d == skip or d.startswith(skip + os.sep)):
            continue
        try:
            it = os.scandir(d)
        except OSError:
            continue
        with it:
            for e in it:
                r = f"{rel}/{e.name}" if rel else e.name
                try:
                    if e.is_dir(follow_symlinks=False):
                        if e.name != ".git" and not (ignore and ignore(r + "/")):
                            stack.append(r)
                    elif e.is_file(follow_symlinks=False):
                        if ignore and ignore(r):
                            continue
                        st = e.stat(follow_symlinks=False)
                        found[r] = (st.st_size, st.st_mtime_ns)
                        if len(found) >= SCAN_MAX:
                            return found, True
                except OSError:
                    continue
    return found, False


def gitignore_matcher(root: str) -> Any:
    """A matcher for the patterns of ``root/.gitignore`` (a plain folder's; git itself judges a
    work tree). It reads ``*``, ``?``, ``**``, a leading ``/``, a trailing ``/`` and ``!``."""
    import re

    data = None if _escapes(root, ".gitignore") else _read_file(os.path.join(root, ".gitignore"), 1 << 20)
    if data is None:
        return lambda rel: False
    lines = data.decode("utf-8", "replace").splitlines()
    rules: list[tuple[re.Pattern[str], bool, bool]] = []
    for line in lines:
        s = line.rstrip()
        if not s or s.startswith("#"):
            continue
        neg = s.startswith("!")
        if neg:
            s = s[1:]
        dir_only = s.endswith("/")
        s = s.strip("/") if dir_only else s
        anchored = "/" in s.lstrip("/") or s.startswith("/")
        s = s.lstrip("/")
        rx = ""
        i = 0
        while i < len(s):
            if s[i:i + 3] == "**/":
                rx += "(?:.*/)?"
                i += 3
            elif s[i:i + 2] == "**":
                rx += ".*"
                i += 2
            elif s[i] == "*":
                rx += "[^/]*"
                i += 1
            elif s[i] == "?":
                rx += "[^/]"
                i += 1
            else:
                rx += re.escape(s[i])
                i += 1
        full = ("^" if anchored else "^(?:.*/)?") + rx + "(?:/.*)?$"
        rules.append((re.compile(full), neg, dir_only))

    def ignored(rel: str) -> bool:
        is_dir = rel.endswith("/")
        path = rel.rstrip("/")
        hit = False
        for rx, neg, dir_only in rules:
            if dir_only and not is_dir and not _under_dir(rx, path):
                continue
            if rx.match(path):
                hit = not neg
        return hit

    return ignored


def _under_dir(rx: Any, path: str) -> bool:
    # A directory-only pattern matches a file inside such a directory.
    parts = path.split("/")
    return any(rx.match("/".join(parts[:i])) for i in range(1, len(parts)))


def _named(data: dict[str, Any]) -> str | None:
    key = EDIT_TOOLS.get(str(data.get("tool_name")))
    inp = data.get("tool_input") if isinstance(data.get("tool_input"), dict) else {}
    v = inp.get(key) if key else None
    # A NUL names no file a system call can reach (and breaks git's -z lists): not a path to look at.
    return v if isinstance(v, str) and v and "\0" not in v else None


SECRET_DIRS = frozenset({".ssh", ".aws", ".gnupg", ".kube", ".docker", ".azure", "gcloud"})
SECRET_NAMES = frozenset({".env", ".envrc", ".netrc", ".pgpass", ".npmrc", ".pypirc", ".git-credentials", ".htpasswd",
                          "credentials"})
SECRET_SUFFIXES = (".pem", ".key", ".p12", ".pfx", ".ppk", ".jks", ".keystore", ".kdbx")


def is_secret(rel: str) -> bool:
    """Whether a workspace file is one whose content is never copied (only its digest is
    recorded): anything under ``.ssh``, ``.aws``, ``.gnupg``, ``.kube``, ``.docker``, ``.azure``,
    ``gcloud``; ``.env`` and ``.env.*``, ``.envrc``, ``.netrc``, ``.pgpass``, ``.npmrc``,
    ``.pypirc``, ``.git-credentials``, ``.htpasswd``, ``credentials``; ``id_*`` (SSH keys);
    ``*.pem``, ``*.key``, ``*.p12``, ``*.pfx``, ``*.ppk``, ``*.jks``, ``*.keystore``, ``*.kdbx``
    (tokens and keys tools keep in such files)."""
    parts = [p for p in rel.replace("\\", "/").split("/") if p]
    if not parts:
        return False
    name = parts[-1].lower()
    return (any(p in SECRET_DIRS for p in parts[:-1]) or name in SECRET_NAMES or name.startswith((".env.", "id_"))
            or name.endswith(SECRET_SUFFIXES))


def home_workspace(root: str) -> str | None:
    """Why a workspace is not recorded when it is a home directory or holds one (its change
    records would copy what lies in it: ~/.ssh, ~/.aws), else None."""
    real = os.path.realpath(root)
    homes = {os.path.realpath(h) for h in (os.environ.get("HOME"), os.path.expanduser("~")) if h}
    for h in homes:
        if h and h != os.sep and _inside(h, real.rstrip(os.sep) or os.sep):
            return f"the workspace {root} is a home directory or holds one ({h})"
    if real == os.sep or os.path.dirname(real) in ("/home", "/Users") or real in ("/home", "/Users", "/root"):
        return f"the workspace {root} is a home directory or holds one"
    return None


def _rel(root: str, path: str) -> str:
    """A path relative to the workspace root (posix), or the absolute path when outside it."""
    p = os.path.normpath(os.path.join(root, path))
    if p == root or p.startswith(root.rstrip(os.sep) + os.sep):
        return os.path.relpath(p, root).replace(os.sep, "/")
    return p


def _blob_dir() -> str:
    return os.path.join(home(), "blobs")


def _keep_blob(path: str, digest: str | None) -> str | None:
    """Keep a small text file's content (for a diff after the call), by digest, under ASZ_HOME."""
    if not digest or not digest.startswith("sha256:"):
        return None
    try:
        if os.path.getsize(path) > TEXT_MAX:
            return None
        d = _blob_dir()
        dst = os.path.join(d, digest[7:])
        if not os.path.exists(dst):
            data = _read_file(path, TEXT_MAX + 1)
            if data is None or len(data) > TEXT_MAX or _binary(data):
                return None
            os.makedirs(d, exist_ok=True)
            _write_atomic(dst, data)
        return digest
    except OSError:
        return None


def _write_atomic(path: str, data: bytes) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)  # a full disk leaves nothing half-written behind
        except OSError:
            pass
        raise


def _binary(data: bytes) -> bool:
    if b"\0" in data[:8192]:
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


# --- PreToolUse ------------------------------------------------------------------------------

def pre(data: dict[str, Any]) -> None:
    session, tool_id = data.get("session_id"), data.get("tool_use_id")
    if not session or not tool_id:
        return
    name = str(data.get("tool_name") or "")
    if name in READ_ONLY_TOOLS:
        return
    cwd = str(data.get("cwd") or os.getcwd())
    root = git_root(cwd)
    why = home_workspace(root or cwd)
    if why is not None:  # nothing of it is read or copied: the call gets no change record
        _note(f"not recorded: {why}")
        return
    mine = os.path.abspath(home())
    state: dict[str, Any] = {"v": VERSION, "t": time.time(), "tool": data.get("tool_name"), "cwd": cwd,
                             "tool_use_id": tool_id, "agent_id": data.get("agent_id"),
                             "input": data.get("tool_input") if isinstance(data.get("tool_input"), dict) else {}}
    before: dict[str, Any] = {}
    if root is not None:
        state["mode"], state["root"] = "git", root
        status, state["head"] = _git_status(root)
        dirty = sorted(p for p in status if not _inside(os.path.join(root, p), mine))
        cache = _load_digests(str(session))
        n = len(cache)
        for i, rel in enumerate(dirty):
            if i >= DIRTY_MAX:
                before[rel] = _stat_of(os.path.join(root, rel))
                continue
            before[rel] = _before_of(root, rel, cache=cache)
        if len(cache) != n or cache.get("\0changed"):
            cache.pop("\0changed", None)
            _save_digests(str(session), cache)
        state["dirty"] = dirty
    else:
        root = os.path.abspath(cwd)
        state["mode"], state["root"] = "plain", root
        files, cut = _scan(root, mine, gitignore_matcher(root))
        state["scan"], state["scan_cut"] = files, cut
    named = _named(data)
    if named:
        rel = _rel(root, named)
        if rel not in before:
            # A file matched by .gitignore is hashed, never copied (not even under ASZ_HOME).
            secret = is_secret(rel) or rel in _ignored(root, state["mode"], [rel])
            before[rel] = _before_of(root, rel, keep=not secret)
        state["named"] = rel
    state["before"] = before
    path = _pending(str(session), str(tool_id))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    _write_atomic(path, _pack(state))


def _pack(state: dict[str, Any]) -> bytes:
    # marshal: several times faster than JSON for a plain folder's 10,000-file scan. A state
    # written by another Python version does not load: that call gets no change record (logged).
    import marshal

    return b"asz1" + marshal.dumps(state)


def _unpack(data: bytes) -> dict[str, Any]:
    import marshal

    if not data.startswith(b"asz1"):
        raise ValueError("not a pending state of this recorder")
    state = marshal.loads(data[4:])
    if not isinstance(state, dict):
        raise ValueError("not a pending state of this recorder")
    return state


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _stat_of(path: str) -> list[Any] | None:
    """A file too many to hash: its stat signature stands for its content (before digest unknown)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return ["?stat", st.st_size, st.st_mtime_ns]


def _before_of(root: str, rel: str, keep: bool = True, cache: dict[str, Any] | None = None) -> list[Any] | None:
    """[digest, size, blob, mtime_ns] of a file before the call, or None when it does not exist
    (or lies outside the workspace: never read).

    ``cache`` (path -> [size, mtime_ns, digest, blob]) spares reading a dirty file again at each
    call while its size and modification time stand."""
    link = _link_of(root, rel)
    if link is not None:
        return link
    if _escapes(root, rel):
        return None
    keep = keep and not is_secret(rel)  # a secret file: its digest, never its content
    path = os.path.join(root, rel)
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not _is_file(st):
        return None
    hit = cache.get(path) if cache is not None else None
    if hit and hit[0] == st.st_size and hit[1] == st.st_mtime_ns and (not hit[3] or os.path.exists(os.path.join(_blob_dir(), hit[3][7:]))):
        return [hit[2], st.st_size, hit[3], st.st_mtime_ns]
    digest, size, _ = _digest_file(path)
    if digest is None:
        return None
    blob = _keep_blob(path, digest) if keep else None
    if cache is not None:
        cache[path] = [size, st.st_mtime_ns, digest, blob]
        cache["\0changed"] = True
    return [digest, size, blob, st.st_mtime_ns]


def _link_of(root: str, rel: str) -> list[Any] | None:
    """A symbolic link in the workspace (by its own name) as its own content: the digest of its
    target's text (as git stores a link), so an untouched link is unchanged at every call wherever
    it points; None for anything else."""
    path = os.path.normpath(os.path.join(root, rel))
    if not _inside(path, os.path.normpath(root)) or not os.path.islink(path):
        return None
    try:
        target = os.fsencode(os.readlink(path))
        st = os.lstat(path)
    except OSError:
        return None
    return ["sha256:" + sha256(target).hexdigest(), len(target), None, st.st_mtime_ns]


def _digests_path(session: str) -> str:
    return os.path.join(home(), "pending", _safe(session), "digests.cache")


def _load_digests(session: str) -> dict[str, Any]:
    try:
        with open(_digests_path(session), "rb") as f:
            return _unpack(f.read())
    except (OSError, ValueError, EOFError, TypeError):
        return {}


def _save_digests(session: str, cache: dict[str, Any]) -> None:
    if len(cache) > 4 * DIRTY_MAX:
        cache = {}
    path = _digests_path(session)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    _write_atomic(path, _pack(cache))


# --- PostToolUse / PostToolUseFailure ------------------------------------------------------

def post(data: dict[str, Any], *, failed: bool) -> None:
    session, tool_id = data.get("session_id"), data.get("tool_use_id")
    if not session or not tool_id:
        return
    path = _pending(str(session), str(tool_id))
    state: dict[str, Any] | None = None
    try:
        with open(path, "rb") as f:
            state = _unpack(f.read())
    except FileNotFoundError:
        state = None
    status = "failed" if failed else "returned"
    lines: list[bytes] = []
    if state is None and str(data.get("tool_name") or "") in READ_ONLY_TOOLS:
        return
    if state is not None:
        try:
            lines.append(_change_line(data, state, status))
        except Exception as exc:  # noqa: BLE001 - the execution record is still written
            _log(exc)
    name = str(data.get("tool_name") or (state or {}).get("tool") or "")
    if name in COMMAND_TOOLS:
        lines.append(_execution_line(data, state, status))
    if lines:
        append(str(session), lines)
    if state is not None:
        try:
            os.unlink(path)
        except OSError:
            pass


def stop(data: dict[str, Any]) -> None:
    """The agent's turn (or session) ended: a tool call that never returned is captured as it
    stands, with status ``no_result``."""
    session = data.get("session_id")
    if not session:
        return
    _prune()
    d = os.path.dirname(_pending(str(session), "x"))
    try:
        names = sorted(os.listdir(d))
    except OSError:
        return
    lines = []
    for n in names:
        if not n.endswith(".state"):
            continue
        p = os.path.join(d, n)
        try:
            with open(p, "rb") as f:
                state = _unpack(f.read())
            os.unlink(p)
        except (OSError, ValueError, EOFError, TypeError):
            continue
        fake = {"session_id": session, "tool_use_id": state.get("tool_use_id") or n[:-5], "tool_name": state.get("tool"),
                "tool_input": state.get("input"), "cwd": state.get("cwd"), "agent_id": state.get("agent_id")}
        try:
            lines.append(_change_line(fake, state, "no_result"))
        except Exception as exc:  # noqa: BLE001 - one call's failure does not lose the others
            _log(exc)
        if state.get("tool") in COMMAND_TOOLS:
            lines.append(_execution_line(fake, state, "no_result"))
    if lines:
        append(str(session), lines)


KEEP_DAYS = 14
"""Kept blobs and the pending notes of sessions untouched this long are removed (at most once a
day, by a Stop hook). Spool files are kept: they are what collect publishes."""


def _prune() -> None:
    mark = os.path.join(home(), "pruned")
    now = time.time()
    try:
        if now - os.path.getmtime(mark) < 86400:
            return
    except OSError:
        pass
    os.makedirs(home(), exist_ok=True)
    with open(mark, "w"):
        pass
    old = now - KEEP_DAYS * 86400
    for sub in ("blobs", "pending"):
        top = os.path.join(home(), sub)
        for dp, dns, fns in os.walk(top, topdown=False):
            for fn in fns:
                p = os.path.join(dp, fn)
                try:
                    if os.path.getmtime(p) < old:
                        os.unlink(p)
                except OSError:
                    pass
            if dp != top:
                try:
                    os.rmdir(dp)  # only when empty
                except OSError:
                    pass


def append(session: str, lines: list[bytes]) -> None:
    """Append whole lines to the session's spool file: one write, opened O_APPEND, so lines of
    concurrent hooks never interleave."""
    d = os.path.join(home(), "spool")
    os.makedirs(d, exist_ok=True)
    fd = os.open(os.path.join(d, _safe(session) + ".jsonl"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        buf = b"".join(lines)
        while buf:
            n = os.write(fd, buf)
            buf = buf[n:]
    finally:
        os.close(fd)


def _base(data: dict[str, Any], typ: str, status: str) -> dict[str, Any]:
    rec: dict[str, Any] = {"v": VERSION, "type": typ, "session": data.get("session_id"), "tool_use_id": data.get("tool_use_id"),
                           "tool": data.get("tool_name"), "status": status, "ts": _now()}
    if data.get("agent_id"):
        rec["agent_id"] = data.get("agent_id")
    return rec


def _change_line(data: dict[str, Any], state: dict[str, Any], status: str) -> bytes:
    root = state["root"]
    before: dict[str, Any] = state.get("before") or {}
    mine = os.path.abspath(home())
    rec = _base(data, "change", status)
    rec.update({"workspace": root, "vcs": "git" if state.get("mode") == "git" else "none"})
    candidates: dict[str, Any] = {}  # rel -> before ([digest, size, blob] / None absent / "?" unknown)
    blobs_from: dict[str, str] = {}  # rel -> "<rev>:<rel>" for a file clean before the call
    if state.get("mode") == "git":
        status, head_after = _git_status(root)
        now = {p for p in status if not _inside(os.path.join(root, p), mine)}
        head_before = state.get("head")
        rev = head_before
        for rel in set(state.get("dirty") or ()) | now:
            if rel in before:
                candidates[rel] = before[rel]
            else:
                blobs_from[rel] = f"{rev}:{rel}" if rev else ""
        if head_before != head_after and head_before and head_after:
            rec["head"] = [head_before, head_after]
            out = _git(root, "diff", "--name-only", "-z", "--no-renames", head_before, head_after)
            for p in out.split(b"\0"):
                rel = p.decode("utf-8", "surrogateescape")
                if rel and rel not in candidates and rel not in blobs_from:
                    blobs_from[rel] = f"{head_before}:{rel}"
        if state.get("named") and state["named"] not in candidates:
            candidates[state["named"]] = before.get(state["named"])
            blobs_from.pop(state["named"], None)
        git_before = _git_blobs(root, blobs_from)
        for rel, spec in blobs_from.items():
            candidates[rel] = git_before.get(rel)
    else:
        old: dict[str, Any] = state.get("scan") or {}
        new, cut = _scan(root, mine, gitignore_matcher(root))
        if cut or state.get("scan_cut"):
            rec["scan_cut"] = True
        for rel in set(old) | set(new):
            if old.get(rel) is not None and new.get(rel) is not None and list(old[rel]) == list(new[rel]):
                continue
            candidates[rel] = before[rel] if rel in before else ("?" if rel in old else None)
        if state.get("named"):
            candidates.setdefault(state["named"], before.get(state["named"]))
    for rel in list(candidates):
        b = candidates[rel]
        if isinstance(b, list) and len(b) == 4:  # size and mtime as they were: unchanged, not read
            try:
                st = os.stat(rel if os.path.isabs(rel) else os.path.join(root, rel))
            except OSError:
                continue
            if st.st_size == b[1] and st.st_mtime_ns == b[3]:
                del candidates[rel]
    files = []
    ignored = _ignored(root, state.get("mode"), list(candidates))
    for rel in sorted(candidates):
        f = _file_change(root, rel, candidates[rel], rel in ignored, rel == state.get("named"))
        if f is not None:
            files.append(f)
    rec["files"], rec["cut"] = files, False
    line = _dump(rec)
    if len(line) > LINE_MAX:
        for f in sorted(files, key=lambda f: -len(f.get("diff") or "")):
            if f.get("diff"):
                f["diff"], f["diff_cut"] = None, True
                line = _dump(rec)
                if len(line) <= LINE_MAX:
                    break
    if len(files) > FILES_MAX or len(line) > LINE_MAX:
        rec["files"], rec["cut"], rec["count"] = [], True, len(files)
        line = _dump(rec)
    return line


def _dump(rec: dict[str, Any]) -> bytes:
    return _dumps(rec).encode("utf-8", "surrogateescape") + b"\n"


def _git_blobs(root: str, specs: dict[str, str]) -> dict[str, Any]:
    """The before state of files clean before the call, from git: rel -> [digest, size, blob] or None."""
    want = {rel: s for rel, s in specs.items() if s}
    out: dict[str, Any] = {}
    if not want:
        return out
    order = list(want)
    raw = _git(root, "cat-file", "--batch", stdin="".join(want[r] + "\n" for r in order).encode("utf-8", "surrogateescape"))
    pos = 0
    for rel in order:
        nl = raw.index(b"\n", pos)
        head = raw[pos:nl].split()
        pos = nl + 1
        if len(head) < 3 or head[-1] == b"missing" or head[1] != b"blob":
            out[rel] = None
            if len(head) >= 3 and head[1] != b"blob" and head[-1] != b"missing":
                pos += int(head[2]) + 1
            continue
        size = int(head[2])
        content = raw[pos:pos + size]
        pos += size + 1
        digest = "sha256:" + sha256(content).hexdigest()
        blob = None
        if size <= TEXT_MAX and not is_secret(rel) and not _binary(content):
            d = _blob_dir()
            dst = os.path.join(d, digest[7:])
            if not os.path.exists(dst):
                os.makedirs(d, exist_ok=True)
                _write_atomic(dst, content)
            blob = digest
        out[rel] = [digest, size, blob]
    return out


def _ignored(root: str, mode: Any, rels: list[str]) -> set[str]:
    inside = [r for r in rels if not os.path.isabs(r)]
    if not inside:
        return set()
    if mode == "git":
        out = _git(root, "check-ignore", "--no-index", "-z", "--stdin",
                   stdin=b"\0".join(r.encode("utf-8", "surrogateescape") for r in inside) + b"\0")
        return {p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p}
    m = gitignore_matcher(root)
    return {r for r in inside if m(r)}


def _file_change(root: str, rel: str, before: Any, ignored: bool, named: bool = False) -> dict[str, Any] | None:
    path = rel if os.path.isabs(rel) else os.path.join(root, rel)
    link = None if os.path.isabs(rel) else _link_of(root, rel)
    if link is not None:  # a link: changed only when where it points changed; never followed
        b_digest = before[0] if isinstance(before, list) else None
        if before != "?" and b_digest == link[0] and not named:
            return None  # an untouched link (an untracked one is in every git status): no phantom
        if _escapes(root, rel):
            return {"path": rel, "outside": True}  # named, never read: no digest, no diff
        if before != "?" and b_digest == link[0]:
            return None
        return {"path": rel, "kind": "added" if b_digest is None else "modified", "link": True,
                "before": b_digest, "after": link[0]}
    if _escapes(root, rel):
        return {"path": rel, "outside": True}  # named, never read: no digest, no diff
    if is_secret(rel):
        ignored = True  # a secret file: named and hashed, its content never read into a record
    if isinstance(before, list) and before[0] == "?stat":
        try:
            st = os.stat(path)
            if [st.st_size, st.st_mtime_ns] == before[1:]:
                return None
        except OSError:
            pass
        before = "?"
    after, size_after, _ = _digest_file(path)
    b_digest = None if before in (None, "?") else before[0]
    if before != "?" and b_digest == after:
        return None  # unchanged (or absent before and after)
    f: dict[str, Any] = {"path": rel}
    if before == "?":
        f["kind"] = "deleted" if after is None else "modified"
    else:
        f["kind"] = "added" if b_digest is None else "deleted" if after is None else "modified"
    f["before"] = b_digest
    f["after"] = after
    if before not in (None, "?"):
        f["size_before"] = before[1]
    if after is not None:
        f["size_after"] = size_after
    if ignored:
        f["ignored"] = True
        return f
    old: bytes | None = b""
    if before == "?":
        old = None
    elif before is not None:
        if not before[2]:  # not kept before the call: too large or not text
            f["oversized" if before[1] > TEXT_MAX else "binary"] = True
            return f
        old = _read_blob(before[2])
        if old is None:
            return f  # its content is no longer kept: named and hashed, no diff
    new: bytes | None = b""
    if after is not None:
        if size_after > TEXT_MAX or after.startswith("size:"):
            f["oversized"] = True
            return f
        new = _read_file(path, TEXT_MAX + 1)
        if new is None:
            return f
        if len(new) > TEXT_MAX:
            f["oversized"] = True
            return f
        if _binary(new):
            f["binary"] = True
            return f
    if old is None:
        return f  # the content before is unknown: no diff
    _diff(f, rel, old, new or b"", b_digest is None, after is None)
    return f


def _read_blob(digest: Any) -> bytes | None:
    if not digest:
        return None
    try:
        with open(os.path.join(_blob_dir(), str(digest)[7:]), "rb") as f:
            return f.read()
    except OSError:
        return None


def _diff(f: dict[str, Any], rel: str, old: bytes, new: bytes, added: bool, deleted: bool) -> None:
    import difflib

    a = old.decode("utf-8").splitlines(keepends=True)
    b = new.decode("utf-8").splitlines(keepends=True)
    lines = difflib.unified_diff(a, b, "/dev/null" if added else f"a/{rel}", "/dev/null" if deleted else f"b/{rel}")
    out: list[str] = []
    size = 0
    n = 0
    cut = False
    for line in lines:
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        size += len(line.encode())
        if size > DIFF_MAX:
            cut = True
            break
        out.append(line)
        n += 1
    f["diff"] = "".join(out)
    if cut:
        f["diff_cut"] = True


# --- execution records -----------------------------------------------------------------------

def _execution_line(data: dict[str, Any], state: dict[str, Any] | None, status: str) -> bytes:
    rec = _base(data, "execution", status)
    inp = data.get("tool_input") if isinstance(data.get("tool_input"), dict) else (state or {}).get("input") or {}
    cmd = inp.get("command")
    rec["command"] = cmd if isinstance(cmd, str) else None
    if inp.get("run_in_background"):
        rec["background"] = True
    resp = data.get("tool_response")
    out = b""
    exit_code: int | None = None
    interrupted = None
    if isinstance(resp, dict):
        stdout = resp.get("stdout") if isinstance(resp.get("stdout"), str) else ""
        stderr = resp.get("stderr") if isinstance(resp.get("stderr"), str) else ""
        out = stdout.encode() + stderr.encode()
        rec["stdout_size"], rec["stderr_size"] = len(stdout.encode()), len(stderr.encode())
        interrupted = resp.get("interrupted")
        for k in ("exitCode", "exit_code", "returnCode", "code"):
            if isinstance(resp.get(k), int) and not isinstance(resp.get(k), bool):
                exit_code = resp[k]
                break
        if exit_code is None and status == "returned" and not interrupted and not inp.get("run_in_background"):
            exit_code = 0  # Claude Code reports a non-zero exit as a failure
    elif isinstance(resp, str):
        out = resp.encode()
    if status == "failed":
        err = data.get("error")
        text = err if isinstance(err, str) else _dumps(err) if err is not None else ""
        if not out:
            out = text.encode()
        import re

        m = re.match(r"\s*(?:Error:\s*)?Exit code ([0-9]{1,18})", text)
        if m:
            exit_code = int(m.group(1))
        if data.get("is_interrupt"):
            interrupted = True
    rec["exit_code"] = exit_code
    if interrupted:
        rec["interrupted"] = True
    dur = data.get("duration_ms")
    if isinstance(dur, (int, float)) and not isinstance(dur, bool) and -(2**63) <= dur < 2**63:  # NaN, inf: no time
        rec["duration_ms"], rec["duration_from"] = int(dur), "runtime"
    elif state is not None and status != "no_result":
        rec["duration_ms"], rec["duration_from"] = int((time.time() - float(state.get("t") or 0)) * 1000), "hooks"
    else:
        rec["duration_ms"] = None
    if status == "no_result":
        rec["output_size"] = rec["output_digest"] = None
    else:
        rec["output_size"] = len(out)
        rec["output_digest"] = "sha256:" + sha256(out).hexdigest()
    return _dump(rec)


if __name__ == "__main__":
    sys.exit(main())
