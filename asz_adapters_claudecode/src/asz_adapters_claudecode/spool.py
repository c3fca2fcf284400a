"""Where the recorder plugin's hooks spool their records (docs/recorder.md), apart from the recorder
itself: every collect asks where the spool is and whether a file is of it, and needs none of the
recorder's installing (subprocess, shlex, locale: a fifth of a day's collect's imports)."""

from __future__ import annotations

import os
from pathlib import Path


def asz_home() -> Path:
    return Path(os.environ.get("ASZ_HOME") or Path.home() / ".asz")


def spool_dir() -> Path:
    return asz_home() / "recorder" / "spool"


def is_spool_file(path: Path) -> bool:
    return path.suffix == ".jsonl" and path.parent.name == "spool" and path.parent.parent.name == "recorder"
