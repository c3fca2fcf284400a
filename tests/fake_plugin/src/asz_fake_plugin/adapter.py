"""A tiny runtime adapter: a ``*.fake`` file is one conversation (its file name), one record a line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

from asz_core import Cursor, Entry, Problem, RuntimeAdapter


class FakeAdapter(RuntimeAdapter):
    name: ClassVar[str] = "fake"

    def detect(self, path: Path) -> bool:
        return path.suffix == ".fake" if path.is_file() else any(path.glob("*.fake"))

    def files(self, path: Path) -> list[Path]:
        return [path] if path.is_file() else sorted(path.glob("*.fake"))

    def read(self, path: Path, cursor: Cursor) -> Iterator[Entry | Problem]:
        with open(path, "rb") as f:
            f.seek(cursor.offset)
            for raw in f:
                if not raw.endswith(b"\n"):
                    break  # still being written: read it next time
                cursor.offset += len(raw)
                cursor.line += 1
                body = raw.rstrip(b"\n")
                if body:
                    yield Entry(key=f"{path.stem}:{cursor.line}", session=path.stem, stream="main", kind="line",
                                file=str(path), line=cursor.line, raw=body)
