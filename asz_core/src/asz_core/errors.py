"""The errors asz shows to a person. Each message is displayed as it is, so it must say what to do."""

from __future__ import annotations


class AszError(Exception):
    """Base of every error whose message is meant for the user (the CLI prints it, exit 1).

    Printed as one line (a newline shown ``\\x0a``): a name in it (a path, an id) may hold a
    newline that must not forge a line of its own. ``lines`` marks one written in several lines
    on purpose (a list of what to do), printed so."""

    lines = False


class ConfigError(AszError):
    """A configuration file or option is wrong."""


class RecordError(AszError):
    """A stored or given record does not have the shape asz expects."""


class PluginError(AszError):
    """A plugin could not be found, loaded or registered."""


class UnknownPlugin(PluginError):
    """A plugin name that no installed plugin provides."""

    def __init__(self, kind: str, name: str, available: list[str]) -> None:
        self.kind, self.name, self.available = kind, name, available
        names = ", ".join(sorted(available)) or "none installed"
        super().__init__(f"no {kind} named {name!r}; available: {names}")


class DuplicatePlugin(PluginError):
    """Two plugins claim the same name for one kind."""


class MissingDependency(AszError):
    """An optional dependency is not installed; the message holds the exact pip line."""


class EvaluatorError(AszError):
    """An evaluator call failed."""


class StoreError(AszError):
    """The store cannot be opened or is not an asz store."""


class NotFound(AszError):
    """A conversation, round or run that the store does not hold."""


def os_error_text(exc: OSError) -> str:
    """One line for an environment problem, naming the file."""
    what = exc.strerror or str(exc)
    names = " → ".join(str(x) for x in (exc.filename, exc.filename2) if x is not None)
    return f"{what}: {names}" if names else what
