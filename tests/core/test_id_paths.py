"""Ids from transcripts never become paths as they are (docs/store.md#ids-as-file-names).

Hostile session ids (``../../x``, ``/abs/path``, ``a/b``, ``.``, NUL, a lone surrogate, a very
long one) are collected from hand-made Claude Code transcripts; loading and judging them writes
only inside ASZ_HOME, the cache's upkeep deletes nothing outside it, and a pickle planted where
the cache would look is never loaded.
"""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

import pytest

from asz_core import api
from asz_core.assembly_cache import load_assembled
from asz_core.collect import collect
from asz_core.errors import AszError
from asz_core.id_paths import LONGEST, OutsideHome, child, decode, encode, id_folders, inside, names

from tests.adapters.cc_shapes import Session, text, usage

HOSTILE = ["../../x", "/abs/path", "a/b", ".", "..", "", "\0", "%", "%2F", "~", ".hidden", "a\\b", "con",
           "x" * 300, "é/../..", "\ud83d", "\x1b]0;title\x07", "a b", "A", "a"]


@pytest.mark.parametrize("ident", HOSTILE)
def test_every_id_is_one_safe_name(ident):
    name = encode(ident)
    assert name and "\0" not in name and ("/" not in name or len(ident) > 60) and "\\" not in name
    assert name not in (".", "..") and not name.startswith(".")
    assert name.isascii() and name.isprintable()
    assert all(len(n.encode()) <= LONGEST for n in name.split("/"))
    assert decode(name) == ident


def test_different_ids_never_share_a_name():
    many = HOSTILE + ["x" * 300 + "y", "%25", "%%", "a%2Fb", "a/b/"]
    names = [encode(i) for i in many]
    assert len(set(names)) == len(set(many))


def _long(n: int, seed: str) -> str:
    """An id of exactly ``n`` UTF-8 bytes built from ``seed`` (ASCII fills the last bytes)."""
    out, size = [], 0
    while True:
        for ch in seed:
            b = len(ch.encode("utf-8", "surrogatepass"))
            if size + b > n:
                return "".join(out) + "x" * (n - size)
            out.append(ch)
            size += b


LONG_SEEDS = ["a", "é/../", "\0%..", "日本/%2F\0", "../" * 3 + "é~"]


@pytest.mark.parametrize("n", [199, 200, 201, 1_000, 10_000])
@pytest.mark.parametrize("seed", LONG_SEEDS)
def test_a_long_id_is_a_chain_of_names_that_decodes(tmp_path, n, seed):
    ident = _long(n, seed)
    assert len(ident.encode()) == n
    parts = names(ident)
    assert decode(encode(ident)) == ident
    for p in parts:
        assert 0 < len(p.encode()) <= min(LONGEST, 255) and "/" not in p and "\0" not in p
        assert p not in (".", "..") and not p.startswith(".")
    home = tmp_path / "home"
    home.mkdir()
    path = child(home, "runs", ids=(ident,))
    assert path.parts[-len(parts):] == parts and os.path.commonpath([home, path]) == str(home)
    assert path.relative_to(home / "runs").as_posix() == encode(ident)


def test_a_chain_and_its_short_neighbours_never_share_a_folder(tmp_path):
    base = tmp_path / "runs"
    ids = [_long(300, "a"), _long(600, "a"), _long(198, "a"), _long(200, "a"), _long(201, "a"), "b"]
    for i in ids:
        (base / encode(i) / "r1").mkdir(parents=True)
    old = base / ("a" * 167 + "~" + "0" * 32)  # a long id's folder as asz named it before chains
    (old / "r1").mkdir(parents=True)
    got = id_folders(base)
    assert sorted(decode(rel) for _, rel in got if decode(rel) is not None) == sorted(ids)
    assert (old, old.name) in got and decode(old.name) is None
    assert all(f.is_dir() and (f / "r1").is_dir() for f, _ in got)


def test_a_name_encode_did_not_make_does_not_decode():
    for name in ("a/b", "..", "%zz", "%2f", "~abc", "é", ".x", "%2", "a~/b", "a/~b", "a~/~b~", "~a~/~b",
                 "a" * 198 + "~/~b", "a~/~b~/c"):
        assert decode(name) is None


def _transcript(folder: Path, sid: str) -> Path:
    s = Session(sid)
    s.user("u1", None, "do the thing")
    s.assistant("a1", "u1", "msg_1", "req_1", text("done"), usage(10, 0, 0, 5, final=True))
    return s.write(folder / "t.jsonl")


def _everything_under(root: Path) -> set[str]:
    return {str(p) for p in root.rglob("*")}


@pytest.mark.parametrize("sid", ["../../../../x-outside", "/tmp/asz-abs-target", "a/b", "../é" * 120])
def test_a_hostile_session_is_cached_and_judged_inside_home(tmp_path, monkeypatch, sid):
    from asz_core.judge import runner
    from asz_core.judge.runs import list_runs
    from asz_core.store import Store

    home = tmp_path / "w" / "x" / "y" / "home"
    monkeypatch.setenv("ASZ_HOME", str(home))
    src = _transcript(tmp_path / "src", sid)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"calls": []}))
    store = Store.open(home)
    before = _everything_under(tmp_path) - _everything_under(home)
    collect([src], store)
    (row,) = store.conversations()
    assert row.id == sid
    conv = api.load(row.id, store=store)
    assert conv.id == row.id
    res = runner.judge(runner.JudgeOptions(row.id, evaluator=f"scripted:{script}", stages=("targets",)), store=store)
    assert res.path.resolve().is_relative_to(home.resolve() / "runs")
    assert res.path.parent.relative_to(home / "runs").as_posix() == encode(row.id)
    after = _everything_under(tmp_path) - _everything_under(home)
    assert after - before == set(), "asz wrote outside ASZ_HOME"
    assert not Path("/tmp/asz-abs-target").exists()
    (listed,) = list_runs(row.id, home=home, store=store)
    assert listed.conversation == row.id
    (res.path / "run.json").unlink()  # without its run.json, the folder's names still say the id
    (res.path / "run.json").write_text("{}")
    (listed,) = list_runs(sid[:3], home=home)
    assert listed.conversation == row.id
    store.close()


def test_cache_upkeep_never_deletes_outside_home(tmp_path, monkeypatch):
    from asz_core.store import Store

    home = tmp_path / "home"
    monkeypatch.setenv("ASZ_HOME", str(home))
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious.pickle").write_bytes(b"the user's own")
    # cache/assembly/<id>: an id walking up three folders lands on tmp_path/victim when taken raw
    sid = "../../../victim"
    store = Store.open(home)
    collect([_transcript(tmp_path / "src", sid)], store)
    api.load(sid, store=store)
    assert (victim / "precious.pickle").read_bytes() == b"the user's own"
    assert list((home / "cache" / "assembly").iterdir()) == [home / "cache" / "assembly" / encode(sid)]
    store.close()


class _Plant:
    def __reduce__(self):
        return (os.system, (f"touch {MARK}",))


MARK = ""


def test_a_planted_pickle_is_never_loaded(tmp_path, monkeypatch):
    """A pickle put where the cache looks (as one the cache made, named as it names them) is not
    loaded: it carries no tag of the home's key. Goes red when the tag's check is removed."""
    global MARK
    from asz_core.store import Store

    home = tmp_path / "home"
    monkeypatch.setenv("ASZ_HOME", str(home))
    MARK = str(tmp_path / "ran")
    store = Store.open(home)
    collect([_transcript(tmp_path / "src", "plain-session")], store)
    good = api.load("plain-session", store=store)
    (kept,) = (home / "cache" / "assembly" / "plain-session").glob("*.pickle")
    evil = pickle.dumps(_Plant())
    for data in (evil, bytes(32) + evil, kept.read_bytes()[:32] + evil):  # bare, a zero tag, another file's tag
        kept.write_bytes(data)
        assert load_assembled(store, "plain-session", store.round("plain-session")) == good
        assert not os.path.exists(MARK), "a planted pickle ran"
    # and the key: made once, the owner's only
    key = home / "cache" / "assembly.key"
    assert key.stat().st_mode & 0o077 == 0 and len(key.read_bytes()) == 32
    store.close()


def test_a_cache_file_that_is_a_link_is_not_followed(tmp_path, monkeypatch):
    from asz_core.store import Store

    home = tmp_path / "home"
    monkeypatch.setenv("ASZ_HOME", str(home))
    store = Store.open(home)
    collect([_transcript(tmp_path / "src", "s1")], store)
    good = api.load("s1", store=store)
    (kept,) = (home / "cache" / "assembly" / "s1").glob("*.pickle")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    kept.unlink()
    kept.symlink_to(fifo)  # followed, reading would wait forever
    assert load_assembled(store, "s1", store.round("s1")) == good
    store.close()


def test_a_link_out_of_home_in_the_way_is_refused(tmp_path, monkeypatch):
    from asz_core.judge.runner import run_dir_for

    home = tmp_path / "home"
    (home / "runs").mkdir(parents=True)
    out = tmp_path / "elsewhere"
    out.mkdir()
    (home / "runs" / "conv").symlink_to(out)
    with pytest.raises(OutsideHome, match="outside the asz home"):
        run_dir_for("conv", home)
    assert list(out.iterdir()) == []
    with pytest.raises(OutsideHome):
        inside(home, home / "runs" / "conv" / "x")
    assert inside(home, home / "runs" / "other" / "x") == home / "runs" / "other" / "x"


@pytest.mark.parametrize("call", ["../../x", "/etc", "a/../../b", "", ".", "a\0b", "targets/../../.."])
def test_mcp_call_option_names_only_a_call_folder_of_the_run(tmp_path, call):
    from asz_core.mcp_server import call_log

    run = tmp_path / "run"
    (run / "calls").mkdir(parents=True)
    with pytest.raises(AszError, match="--call"):
        call_log(run, call)


def test_mcp_call_option_refuses_a_link_out_of_the_run(tmp_path):
    from asz_core.mcp_server import call_log

    run = tmp_path / "run"
    (run / "calls").mkdir(parents=True)
    (run / "calls" / "targets").symlink_to(tmp_path)
    with pytest.raises(AszError, match="outside"):
        call_log(run, "targets/1/1")
    assert call_log(run, "achievement/1/2") == run / "calls" / "achievement" / "1" / "2" / "reads.jsonl"


def test_find_run_takes_no_pattern_or_path_in_a_run_id(tmp_path):
    from asz_core.judge.runner import find_run, run_dir_for

    home = tmp_path / "home"
    d = run_dir_for("c1", home)
    (d / "run.json").write_text("{}")
    assert find_run(d.name[:10], home) == d
    for name in ("*", "?" * 10, "[0-9]*", "..", ".*"):
        with pytest.raises(AszError, match="no run"):
            find_run(name, home)


CASED = ["A", "a", "Session-ABC", "session-abc", "SESSION-abc", "%41", "%61", "x" * 300 + "A", "x" * 300 + "a",
         "É", "é", "Ab" * 200, "aB" * 200, "ROLLOUT-1", "rollout-1"]


def test_ids_differing_only_in_case_never_share_a_folder_where_case_is_not_told_apart():
    """macOS's and Windows' file systems take ``A`` and ``a`` for one name: two conversations whose
    ids differ only in case would share a runs folder and an assembly-cache folder. No two names
    the encoding gives differ only in case (red when capital letters are kept as they are)."""
    folded = {encode(i).casefold() for i in CASED}
    assert len(folded) == len(CASED)
    for i in CASED:
        assert decode(encode(i)) == i
    assert encode("5e1f0c2a-7b3d-4c8e-9a61-0d2f4b8c9e13") == "5e1f0c2a-7b3d-4c8e-9a61-0d2f4b8c9e13"  # a UUID is its own name


def test_runs_in_a_folder_of_an_earlier_scheme_are_still_listed_by_their_run_json(tmp_path, monkeypatch):
    """A folder named before capital letters were encoded (``Mixed-Case``) does not decode: its
    runs are listed by what their run.json names, for that conversation and for all."""
    from asz_core.judge import runner
    from asz_core.judge.runs import list_runs
    from asz_core.store import Store

    home = tmp_path / "home"
    monkeypatch.setenv("ASZ_HOME", str(home))
    store = Store.open(home)
    collect([_transcript(tmp_path / "src", "Mixed-Case")], store)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"calls": []}))
    res = runner.judge(runner.JudgeOptions("Mixed-Case", evaluator=f"scripted:{script}", stages=("targets",)), store=store)
    assert res.path.parent.name == "%4Dixed-%43ase"
    res.path.parent.rename(home / "runs" / "Mixed-Case")  # as asz named it before
    assert decode("Mixed-Case") is None
    for asked in ("Mixed-Case", "Mixed", None):
        (row,) = list_runs(asked, home=home, store=store)
        assert row.conversation == "Mixed-Case" and row.run == res.path.name
    assert runner.find_run(res.path.name, home) == home / "runs" / "Mixed-Case" / res.path.name
    store.close()


def test_a_run_folder_that_is_a_link_is_no_run(tmp_path, monkeypatch):
    """A link put among a conversation's runs (to another run, or anywhere) is neither listed nor
    found by a run id: it is never followed (red when the listing or the lookup follows it)."""
    from asz_core.judge import runner
    from asz_core.judge.runs import list_runs
    from asz_core.store import Store

    home = tmp_path / "home"
    monkeypatch.setenv("ASZ_HOME", str(home))
    store = Store.open(home)
    collect([_transcript(tmp_path / "src", "linked-1")], store)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"calls": []}))
    res = runner.judge(runner.JudgeOptions("linked-1", evaluator=f"scripted:{script}", stages=("targets",)), store=store)
    elsewhere = tmp_path / "elsewhere-run"
    import shutil

    shutil.copytree(res.path, elsewhere)
    (res.path.parent / "29990101T000000Z-beef").symlink_to(elsewhere)
    assert [r.run for r in list_runs(home=home)] == [res.path.name]
    assert [r.run for r in list_runs("linked-1", home=home, store=store)] == [res.path.name]
    with pytest.raises(AszError, match="no run"):
        runner.find_run("29990101T000000Z-beef", home)
    store.close()


def test_an_id_too_long_for_a_path_is_read_and_its_judging_refused_in_a_line(tmp_path):
    """A session id of 10,000 bytes is collected, shown and priced; a judge run of it, whose folder's
    path would pass the system's limit, is refused before anything is made, in one short line
    (the system's own error named the whole path of some 30,000 bytes)."""
    from tests.core.helpers import run_asz

    sid = _long(10_000, "é/../")
    home = tmp_path / "home"
    src = _transcript(tmp_path / "src", sid)
    assert run_asz("collect", str(src), home=home).returncode == 0
    shown = run_asz("show", sid[:30], "--json", home=home)
    assert shown.returncode == 0 and json.loads(shown.stdout)["id"] == sid
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"calls": []}))
    got = run_asz("judge", sid[:30], "--evaluator", f"scripted:{script}", "--stages", "targets", home=home)
    assert got.returncode == 1 and "Traceback" not in got.stderr
    assert "its id is 10,000 bytes long, too long for a run folder's path" in got.stderr
    assert len(got.stderr) < 600, got.stderr
    assert not (home / "runs").exists() or list((home / "runs").iterdir()) == []
