"""A minimal PEP 517 build backend for the fake plugin: a pure-Python wheel from ``src/``.

It reads name, version, description, dependencies and entry points from pyproject.toml's
``[project]`` table, so the distribution is declared there as any plugin's is. Only what pip
needs to install from this folder is implemented (``build_wheel``, and ``build_sdist`` which
PEP 517 requires).
"""

from __future__ import annotations

import base64
import hashlib
import io
import re
import tarfile
import tomllib
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _project() -> dict:
    return tomllib.loads((HERE / "pyproject.toml").read_text())["project"]


def _names() -> tuple[str, str]:
    p = _project()
    return re.sub(r"[-_.]+", "_", p["name"]).lower(), p["version"]


def _metadata() -> str:
    p = _project()
    lines = ["Metadata-Version: 2.1", f"Name: {p['name']}", f"Version: {p['version']}",
             f"Summary: {p.get('description', '')}", f"Requires-Python: {p.get('requires-python', '')}"]
    lines += [f"Requires-Dist: {d}" for d in p.get("dependencies", [])]
    return "\n".join(lines) + "\n"


def _entry_points() -> str:
    out = []
    for group, eps in _project().get("entry-points", {}).items():
        out.append(f"[{group}]")
        out += [f"{name} = {value}" for name, value in eps.items()]
        out.append("")
    return "\n".join(out)


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name, version = _names()
    info = f"{name}-{version}.dist-info"
    files: list[tuple[str, bytes]] = []
    src = HERE / "src"
    for f in sorted(src.rglob("*.py")):
        files.append((f.relative_to(src).as_posix(), f.read_bytes()))
    files.append((f"{info}/METADATA", _metadata().encode()))
    files.append((f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: asz-fake-backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n"))
    files.append((f"{info}/entry_points.txt", _entry_points().encode()))
    record = [_record_line(p, d) for p, d in files] + [f"{info}/RECORD,,"]
    files.append((f"{info}/RECORD", ("\n".join(record) + "\n").encode()))
    filename = f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(Path(wheel_directory) / filename, "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in files:
            z.writestr(path, data)
    return filename


def build_sdist(sdist_directory, config_settings=None):
    name, version = _names()
    base = f"{name}-{version}"
    filename = f"{base}.tar.gz"
    with tarfile.open(Path(sdist_directory) / filename, "w:gz") as tar:
        for f in sorted([HERE / "pyproject.toml", HERE / "_backend.py", *(HERE / "src").rglob("*.py")]):
            tar.add(f, arcname=f"{base}/{f.relative_to(HERE).as_posix()}")
        pkg_info = _metadata().encode()
        ti = tarfile.TarInfo(f"{base}/PKG-INFO")
        ti.size = len(pkg_info)
        tar.addfile(ti, io.BytesIO(pkg_info))
    return filename
