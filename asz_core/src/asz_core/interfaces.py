"""The behaviour behind each plugin kind. Hooks (see :mod:`asz_core.hookspecs`) only advertise
these classes; asz instantiates them when it needs them.

A third-party runtime adapter is a distribution with two files that matter::

    # pyproject.toml
    [project.entry-points.asz]
    myruntime = "asz_myruntime.plugin"

    # asz_myruntime/plugin.py
    from asz_core import hookimpl
    from .adapter import MyRuntimeAdapter

    @hookimpl
    def asz_runtime_adapters():
        return [MyRuntimeAdapter]

See docs/writing-plugins.md for a whole template.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from attrs import field, frozen

from .errors import ConfigError
from .records import Cursor, Entry, Problem

if TYPE_CHECKING:
    from .judge.judgment import CallResult, EvaluatorCall


class RuntimeAdapter(ABC):
    """Reads one runtime's recorded conversations.

    The adapter knows its runtime's files and vocabulary; it never builds talks. For each raw
    record it yields an :class:`~asz_core.records.Entry`: the record kept whole, the key that
    identifies it within its conversation, the stream it belongs to, and normalized *events*
    (docs/events.md lists them) that carry the joins the runtime recorded. Assembly in core
    turns events into streams, talks, steps and starts relations for every runtime alike.
    """

    name: ClassVar[str]
    """Unique name, stored with each conversation the adapter collects."""

    @abstractmethod
    def detect(self, path: Path) -> bool:
        """Whether this adapter can read ``path`` (a file or a folder). Must be cheap."""

    @abstractmethod
    def files(self, path: Path) -> list[Path]:
        """The files under ``path`` this adapter reads, in the order they must be read.

        Order matters: records land in this order, and the store orders everything by landing.
        Something named like this runtime's files that is not a regular file (a FIFO, a device
        behind a symlink) is listed without being opened: collect skips it with a warning naming
        it. Every read goes through :func:`asz_core.regular.open_regular`, never plain ``open``.
        """

    @abstractmethod
    def read(self, path: Path, cursor: Cursor) -> Iterator[Entry | Problem]:
        """Read ``path`` from ``cursor`` on, yielding entries and problems.

        ``cursor.offset`` and ``cursor.line`` say where the last read stopped (0 for a new file).
        The adapter advances them past every *complete* record it consumed, and may keep small
        JSON-able state in ``cursor.state`` for the next read of the same file (a grown
        transcript is read from where it stopped). A record that cannot be read is a
        :class:`~asz_core.records.Problem` naming file and line; reading goes on after it.
        """

    def default_paths(self) -> list[Path]:
        """Where this runtime keeps its transcripts on this machine (read by ``asz collect`` when
        it is given no path). Paths that do not exist are skipped. Default: none."""
        return []

    def companions(self) -> list[Path]:
        """Files this runtime's plugins write beside its transcripts (Claude Code: the recorder's
        spool of change and execution records), read by every ``asz collect`` after the paths it
        was given, so their records land after the steps they describe. Default: none."""
        return []

    def file_requests(self, tool: str, request: Mapping[str, Any]) -> list[str]:
        """The files an editing tool's request names, as the request names them.

        ``tool`` is the tool's name and ``request`` its input. A runtime with no editing tools
        returns ``[]`` (the default).
        """
        return []


@frozen
class Availability:
    """What an evaluator backend says of this machine, asked when ``asz judge`` is given no
    evaluator (docs/evaluators.md: how the default is picked)."""

    ok: bool
    """Whether it can run here as things are (a CLI installed and logged in, a key set, an SDK installed)."""
    why: str
    """Why it can (said when it is picked), or what to set up so that it could (said when none can)."""
    argument: str | None = None
    """What it runs with when picked, the ``ARGUMENT`` of ``NAME:ARGUMENT`` (an API backend's default model)."""

    def require(self, backend: str) -> None:
        """For :meth:`EvaluatorBackend.check`: a named evaluator that could not be picked here
        cannot run either, and says so before the run starts, in one line (not once per call)."""
        if not self.ok:
            raise ConfigError(f"the {backend} evaluator cannot run here: {' '.join(self.why.split())}")


class EvaluatorBackend(ABC):
    """Runs one evaluator call: a prompt, an answer schema, the navigation and a reading budget.

    The stage runner gives it an :class:`~asz_core.judge.judgment.EvaluatorCall` (the prompt, the
    stage's answer schema, a ``navigator`` holding the reading budget, the attempt's directory)
    and takes back a :class:`~asz_core.judge.judgment.CallResult`: the answer, the raw text, and every
    request's usage as the provider reported it (unknown kept unknown, never 0). The runner
    retries a call that gives nothing readable and writes everything to the run directory.
    """

    name: ClassVar[str]
    notes: ClassVar[tuple[str, ...]] = ()
    """What every stage this backend judged must say of it (written with the evaluator in the
    stage file and run.json): e.g. a session the backend cannot help leaving behind."""

    default_order: ClassVar[int | None] = None
    """Where this backend stands when asz picks the evaluator nobody named: the installed backends
    that set it are asked in this order (lower first, ties by name) and the first available runs.
    None (the default): never picked unasked (e.g. one that needs a script)."""

    @classmethod
    def available(cls, options: dict[str, Any]) -> Availability:
        """Whether this backend can run on this machine now, and why (or what to set up), asked
        only when no evaluator was named and only of backends with a :attr:`default_order`.
        ``options`` is the backend's section of asz.yaml. Cheap and local: it may look for a CLI
        or ask it whether it is logged in, never send a model request. The default: cannot."""
        return Availability(False, f"the {cls.name} backend does not say whether it can run here")

    @classmethod
    def check(cls, argument: str | None, options: dict[str, Any]) -> None:
        """What can be checked before a run starts (an SDK installed, a CLI found, a model given),
        so a run that cannot work fails at once, with what to set up, instead of twice per call.
        ``argument`` is what follows ``NAME:`` in ``--evaluator``; ``options`` the backend's section
        of asz.yaml. Raise an :class:`~asz_core.errors.AszError`; the default checks nothing. A
        backend with :meth:`available` asks it here too (:meth:`Availability.require`), so a named
        evaluator that is not installed, not logged in or has no credentials is refused at once."""

    @abstractmethod
    def judge(self, call: EvaluatorCall) -> CallResult:
        """Run one call and return its result; raise EvaluatorError when it failed."""


@frozen
class FetchSettings:
    """What a fetcher is given besides the source: its bounds and its section of asz.yaml. asz
    fills it from ``fetch:`` in asz.yaml (docs/sources.md); a fetcher honours every bound."""

    max_bytes: int = 8 << 20
    """The most bytes a copy keeps: a larger source is saved cut, saying so (``Fetched.cut``)."""
    connect_timeout: float = 10.0
    """Seconds to connect (HTTP) or to start (a command)."""
    read_timeout: float = 30.0
    """Seconds a read may wait for the next bytes (HTTP)."""
    total_seconds: float = 120.0
    """Seconds one fetch may take in all, however its bytes trickle in (HTTP, a command)."""
    redirects: int = 5
    """Redirects an HTTP fetch follows at most; never one to another scheme."""
    options: Mapping[str, Any] = field(factory=dict)
    """The fetcher's own section of asz.yaml: ``fetch: {commands: [...]}`` for ``command``,
    ``fetch: {NAME: {...}}`` for a third party's fetcher named NAME."""


@frozen
class Fetched:
    """What a fetcher gives back: the bytes it took (at most ``max_bytes``) and what it knows of
    them. Everything but ``data`` and ``how`` may be unknown (None)."""

    data: bytes
    how: str
    """How it was fetched, in words a person reads: ``read /x/note.md``, ``GET https://... (200)``,
    ``command acme-fetch (exit 0)``."""
    cut: bool = False
    """The source held more than ``max_bytes``: ``data`` is its first ``max_bytes``."""
    size: int | None = None
    """The source's whole size when known (a file's, a Content-Length)."""
    content_type: str | None = None
    """As the source said it (a Content-Type); None: asz guesses from the bytes and the name."""
    location: str | None = None
    """Where the bytes came from in the end: the resolved path, the URL after redirects."""
    revision: str | None = None
    """What the source says of its revision (an ETag, a version, a ticket's update number)."""
    published: str | None = None
    """What the source says of when it was published or last changed (Last-Modified)."""
    author: str | None = None
    """Who the source says wrote it."""


class FetchError(Exception):
    """A source that cannot be fetched; the message says why, in words a person reads. asz keeps
    the source as failed with this reason (its comparison is then unavailable)."""


class SourceFetcher(ABC):
    """Fetches one source (a file, a URL, a ticket) to judge a conversation against.

    It is given the source and its settings only, never the conversation. asz asks the fetchers
    in ``order`` (lowest first, then by name) whether they ``accept`` a source, and the first
    that does fetches it; asz then saves the copy, its manifest and its text
    (:mod:`asz_core.judge.sources`), so a fetcher only brings the bytes and what it knows of them.
    """

    name: ClassVar[str]
    order: ClassVar[int] = 50
    """Who is asked first: core's ``command`` is 10 (a configured prefix wins over plain https),
    ``http`` 80, ``file`` 90; a third party's fetcher 50 unless it says otherwise."""

    @abstractmethod
    def accepts(self, source: str, settings: FetchSettings) -> bool:
        """Whether this fetcher fetches ``source`` (cheap: no I/O beyond a look at the settings)."""

    @abstractmethod
    def fetch(self, source: str, settings: FetchSettings) -> Fetched:
        """Fetch ``source`` within ``settings``' bounds; raise :class:`FetchError` saying why when
        it cannot be fetched."""
