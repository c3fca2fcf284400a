"""What someone else puts in ASZ_HOME/cache is never asz's (asz_core.signed): collect's looks and
listings, the ledger's summaries and the assembly cache are used only when the home's key signs
them, read only as regular files (a FIFO or a link to /dev/zero in their place is not waited on),
within a bound, and only inside ASZ_HOME (a cache folder leading out of it is neither read nor
written, nor is anything deleted there). The planted files are made here; the transcripts are the
bundled example."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.core.helpers import run_asz

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "claude-code"
SID = "5e1f0c2a-7b3d-4c8e-9a61-0d2f4b8c9e13"
SHARDS = "0123456789abcdef"


def _asz(home: Path, *args: str) -> str:
    got = run_asz(*args, home=home, timeout=60)  # a read that waits forever fails the test here
    assert got.returncode == 0 and "Traceback" not in got.stderr, (args, got.stderr)
    return got.stdout


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home that collected the example and kept its looks, listings, summaries and assembly."""
    h = tmp_path / "home"
    _asz(h, "collect", str(EXAMPLE))
    _asz(h, "ledger")
    _asz(h, "show", SID[:8])
    cache = h / "cache"
    assert (cache / "looks.json").is_file() and (cache / "listings.json").is_file() and (cache / "assembly.key").is_file()
    assert list((cache / "ledger").glob("*.json")) and list((cache / "assembly").rglob("*.pickle"))
    return h


def _kept(home: Path) -> list[Path]:
    cache = home / "cache"
    return [cache / "looks.json", cache / "listings.json", *sorted((cache / "ledger").glob("*.json")),
            *sorted((cache / "assembly").rglob("*.pickle"))]


def _answers(home: Path) -> tuple[str, str, str, str]:
    """What the commands reading the cache print (as JSON, their figures)."""
    collected = json.loads(_asz(home, "collect", str(EXAMPLE), "--json"))
    return (json.dumps({k: collected[k] for k in ("files_read", "files_unchanged", "records_published")}),
            _asz(home, "ledger", "--json"), _asz(home, "ledger", "--by", "model", "--json"), _asz(home, "show", SID[:8], "--json"))


@pytest.mark.parametrize("which", ["files", "key"])
@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "folder"])
def test_a_cache_file_that_is_no_regular_file_is_never_waited_on(home: Path, kind: str, which: str) -> None:
    want = _answers(home)
    for f in _kept(home) if which == "files" else [home / "cache" / "assembly.key"]:
        f.unlink()
        if kind == "fifo":
            os.mkfifo(f)
        elif kind == "dev-zero":
            f.symlink_to("/dev/zero")
        else:
            f.mkdir()
    assert _answers(home) == want


def test_a_planted_cache_is_never_used(home: Path, tmp_path: Path) -> None:
    """Files of the right shape but not signed by the home's key: a look sending the example to no
    adapter, a listing naming a file outside the folder given, a summary of other money."""
    want = _answers(home)
    cache = home / "cache"
    wrong = bytes(32)  # where the tag goes: not one the home's key made
    files = json.loads((cache / "looks.json").read_bytes()[32:])["files"]
    (cache / "looks.json").write_bytes(wrong + json.dumps({"v": 1, "codes": {}, "files": {k: [0, 0, 0, 0, 0, {"x": 5}]
                                                                                   for k in files}}).encode())
    secret = tmp_path / "elsewhere" / "secret.jsonl"
    secret.parent.mkdir()
    shutil.copyfile(next(EXAMPLE.rglob(f"{SID}.jsonl")), secret)
    roots = json.loads((cache / "listings.json").read_bytes()[32:])["roots"]
    for listing in roots.values():
        for entry in listing:
            entry[3] = [*entry[3], os.path.relpath(secret, entry[0])]
    (cache / "listings.json").write_bytes(wrong + json.dumps({"v": 1, "roots": roots}).encode())
    for f in (cache / "ledger").glob("*.json"):
        data = json.loads(f.read_bytes()[32:])
        for convs in data["summaries"].values():
            for _, s in convs.values():
                s["total"]["money"] = "999"
        f.write_bytes(wrong + json.dumps(data).encode())
    assert _answers(home) == want
    assert "999" not in _asz(home, "ledger")


def test_a_cache_file_past_its_bound_is_not_read(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from asz_core import ledger, looks, summary_keep
    from asz_core.store import Store

    monkeypatch.setenv("ASZ_HOME", str(home))
    store = Store.open(home)
    got, _ = ledger.summaries(store=store)
    monkeypatch.setattr(summary_keep, "KEPT_BYTES", 16)
    computed = []
    real = ledger.summary_of
    monkeypatch.setattr(ledger, "summary_of", lambda *a, **k: computed.append(1) or real(*a, **k))
    again, _ = ledger.summaries(store=store)
    assert computed and [s.total for s in again] == [s.total for s in got]
    monkeypatch.setattr(looks, "KEPT_BYTES", 16)
    with looks.looking(home / "cache" / "looks.json") as lk:
        assert lk.kept == {} and lk.listings == {}
    store.close()


@pytest.mark.parametrize("which", ["cache", "ledger", "assembly"])
def test_a_cache_folder_leading_out_of_home_is_neither_read_nor_written(home: Path, tmp_path: Path, which: str) -> None:
    want = _answers(home)
    outside = tmp_path / "outside"
    (outside / "ledger").mkdir(parents=True)
    (outside / "ledger.json").write_text("the user's own")  # the file an earlier ledger kept, deleted when seen
    folder = home / "cache" if which == "cache" else home / "cache" / which
    shutil.rmtree(folder)
    folder.symlink_to(outside if which != "ledger" else outside / "ledger")
    assert _answers(home) == want
    assert sorted(str(p.relative_to(outside)) for p in outside.rglob("*")) == ["ledger", "ledger.json"]
    assert (outside / "ledger.json").read_text() == "the user's own"


def test_signed_files_reached_through_a_link_out_of_home_are_not_read(home: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Copies of the home's own signed summaries, in a folder outside it that cache/ledger leads to:
    never read (what is outside the home is anyone's), computed again."""
    from asz_core import ledger
    from asz_core.store import Store

    monkeypatch.setenv("ASZ_HOME", str(home))
    outside = tmp_path / "outside-ledger"
    shutil.copytree(home / "cache" / "ledger", outside)
    shutil.rmtree(home / "cache" / "ledger")
    (home / "cache" / "ledger").symlink_to(outside)
    computed = []
    real = ledger.summary_of
    monkeypatch.setattr(ledger, "summary_of", lambda *a, **k: computed.append(1) or real(*a, **k))
    store = Store.open(home)
    ledger.summaries(store=store)
    assert computed  # (read through the link, nothing would have been computed)
    store.close()
