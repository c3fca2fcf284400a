"""`asz server` and `asz push` (docs/server.md): pushed rounds land once, in chain order, each
checked by the server (parent, head digest); tokens (hashed, revocable, read-only, a machine's own
conversations); one-line 4xx refusals that change nothing; the reading commands with --server;
and the faults: a server SIGKILLed mid-push, PostgreSQL's connection dropped mid-round, two pushes
of the same rounds at once, a client cut mid-body. The server is started by the test, bound to
127.0.0.1, and stopped by it."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import psycopg
import pytest

from asz_core import server as srv
from asz_core.collect import collect
from asz_core.push import PushError, push
from asz_core.server_store import Http, ServerError, ServerStore, wait_until_up
from asz_core.store import Store
from asz_core.store_pg import PgStore

from tests.conftest import CLAUDE_CORPUS, skip_without_corpus

from .helpers import ORIGIN, copy, head_digest

ASZ = Path(sys.executable).parent / "asz"
needs_corpus = skip_without_corpus(CLAUDE_CORPUS)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """An `asz server` process of the test's own on 127.0.0.1."""

    def __init__(self, url: str, home: Path) -> None:
        self.store_url, self.home, self.port = url, home, _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {**os.environ, "ASZ_STORE": self.store_url, "ASZ_HOME": str(self.home)}
        self.proc = subprocess.Popen([str(ASZ), "server", "--port", str(self.port)], env=env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wait_until_up(self.url, None, seconds=30)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=30)


@pytest.fixture
def team(pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """A server on a PostgreSQL store of the test's own, and tokens: laptop, desk, reader (read-only), gone (revoked)."""
    monkeypatch.setenv("ASZ_HOME", str(tmp_path / "reader-home"))
    monkeypatch.delenv("ASZ_STORE", raising=False)
    pg = PgStore(pg_url)
    tokens = {n: srv.add_token(pg, n) for n in ("laptop", "desk", "gone")}
    tokens["reader"] = srv.add_token(pg, "reader", readonly=True)
    srv.revoke_token(pg, "gone")
    s = Server(pg_url, tmp_path / "server-home")
    s.start()
    try:
        yield {"server": s, "url": s.url, "pg": pg, "tokens": tokens}
    finally:
        s.kill()
        pg.close()


def _rounds(pg: PgStore) -> list[tuple[Any, ...]]:
    return pg.db.execute("SELECT conversation, number, parent, head, records FROM rounds ORDER BY conversation, number").fetchall()


def _local_rounds(store: Store) -> list[tuple[Any, ...]]:
    return sorted((r.conversation, r.number, r.parent, r.head, r.records) for c in store.conversations() for r in store.rounds(c.id))


def _held(pg: PgStore) -> tuple[Any, ...]:
    """Everything a refused request must leave as it was."""
    q = pg.db.execute
    return (_rounds(pg), q("SELECT count(*) FROM records").fetchone(), q("SELECT count(*) FROM pending").fetchone(),
            q("SELECT id, machine FROM conversations ORDER BY id").fetchall(), q("SELECT count(*) FROM leans").fetchone())


def _assert_each_round_once_in_chain_order(pg: PgStore) -> None:
    rounds = _rounds(pg)
    by: dict[str, list[tuple[Any, ...]]] = {}
    for r in rounds:
        by.setdefault(r[0], []).append(r)
    for conv, rs in by.items():
        assert [r[1] for r in rs] == list(range(1, len(rs) + 1))
        assert [r[2] for r in rs] == ["", *(r[3] for r in rs[:-1])]
        for r in rs:  # each head as the server's records give it, and each record once
            raws = [bytes(x) for (x,) in pg.db.execute("SELECT raw FROM records WHERE conversation = ? AND round = ? "
                                                      "ORDER BY seq", (conv, r[1]))]
            assert len(raws) == r[4] and head_digest(r[2], raws) == r[3]
    assert pg.db.execute("SELECT count(*) FROM (SELECT 1 FROM records GROUP BY conversation, key, version "
                         "HAVING count(*) > 1) d").fetchone() == (0,)


# -- pushing ------------------------------------------------------------------------------------------

def test_a_push_lands_every_round_once_in_chain_order_and_the_commands_read_it_back(team: dict[str, Any],
                                                                                   corpus_store: Store, tmp_path: Path) -> None:
    home = Path(corpus_store.path).parent
    env = {**os.environ, "ASZ_HOME": str(home), "ASZ_TOKEN": team["tokens"]["laptop"]}
    env.pop("ASZ_STORE", None)
    r = subprocess.run([str(ASZ), "push", "--server", team["url"], "--json"], env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    local = _local_rounds(corpus_store)
    assert (got["rounds"], got["already"], got["conversations"]) == (len(local), 0, len({x[0] for x in local}))
    assert got["records"] == sum(x[4] for x in local) and got["requests"] > got["rounds"]  # the big rounds went in parts
    assert _rounds(team["pg"]) == local
    _assert_each_round_once_in_chain_order(team["pg"])
    again = subprocess.run([str(ASZ), "push", "--server", team["url"], "--json"], env=env, capture_output=True, text=True,
                           timeout=600)
    assert again.returncode == 0 and json.loads(again.stdout)["rounds"] == 0
    assert _rounds(team["pg"]) == local
    # the reading commands say through the server what they say on the local store (a read-only token)
    env["ASZ_TOKEN"] = team["tokens"]["reader"]
    for command in (["conversations", "--json"], ["ledger", "--json"], ["ledger", "fa812bfe", "--by", "talk", "--json"],
                    ["show", "b277cc60", "--json"], ["show", "fa812bfe", "--talk", "k2"]):
        a = subprocess.run([str(ASZ), *command], env=env, capture_output=True, text=True, timeout=300)
        b = subprocess.run([str(ASZ), *command, "--server", team["url"]], env={**env, "ASZ_HOME": str(tmp_path / "h")},
                           capture_output=True, text=True, timeout=300)
        assert a.returncode == b.returncode == 0, b.stderr
        assert b.stdout == a.stdout and len(a.stdout) > 20, command


def test_judge_reads_a_conversation_through_the_server_as_from_its_own_store(team: dict[str, Any], tmp_path: Path) -> None:
    from .test_store_pg import EXAMPLE, judged_example

    local = Store.open(tmp_path / "laptop")
    collect([EXAMPLE], local)
    push(local, team["url"], team["tokens"]["laptop"])
    here = judged_example(tmp_path / "laptop", None)
    there = judged_example(tmp_path / "elsewhere", None, "--server", team["url"], token=team["tokens"]["reader"])
    assert there == here and there["close.json"]["statement"]["targets"]


@needs_corpus
def test_a_grown_conversation_pushes_its_new_round_onto_the_server_s_head(team: dict[str, Any], tmp_path: Path) -> None:
    lines = ORIGIN.read_bytes().splitlines(keepends=True)
    f = tmp_path / "p" / ORIGIN.name
    f.parent.mkdir()
    local = Store.open(tmp_path / "laptop")
    heads = []
    for part in (lines[:40], lines[40:41], lines[41:]):
        with open(f, "ab") as fh:
            fh.write(b"".join(part))
        collect([f], local)
        res = push(local, team["url"], team["tokens"]["laptop"])
        heads.append(local.round(ORIGIN.stem).head)
        assert (res.rounds, res.already) == (1, 0)
    assert [r[3] for r in _rounds(team["pg"])] == heads
    assert _rounds(team["pg"]) == _local_rounds(local)
    # the server's store answers the views at each head as the local one does
    remote = ServerStore(team["url"], team["tokens"]["reader"])
    for n in (1, 2, 3):
        assert remote.records(ORIGIN.stem, n) == local.records(ORIGIN.stem, n)
        assert remote.records(ORIGIN.stem, n, lean=True) == [list(x) for x in local.records(ORIGIN.stem, n, lean=True)]
    assert remote.round(ORIGIN.stem, heads[1][:10]).number == 2


# -- tokens and who may push what -----------------------------------------------------------------------

@needs_corpus
def test_tokens_are_kept_hashed_revocable_and_read_only_ones_only_read(team: dict[str, Any], tmp_path: Path) -> None:
    pg, url, tokens = team["pg"], team["url"], team["tokens"]
    kept = dict(pg.db.execute("SELECT name, digest FROM tokens").fetchall())
    assert kept["laptop"] == hashlib.sha256(tokens["laptop"].encode()).hexdigest()
    assert not any(t in json.dumps(kept) for t in tokens.values())
    local = Store.open(tmp_path / "laptop")
    collect([copy(ORIGIN, tmp_path / "p")], local)
    for token, status, says in ((None, 401, "no token"), ("asz_wrong", 401, "unknown token"),
                                (tokens["gone"], 401, "the token of 'gone' was revoked"),
                                (tokens["reader"], 403, "the token of 'reader' is read-only")):
        with pytest.raises(PushError, match=says):
            push(local, url, token)
        assert _rounds(pg) == []
    with pytest.raises(ServerError, match="unknown token") as e:
        ServerStore(url, "asz_wrong").conversations()
    assert e.value.status == 401
    assert ServerStore(url, tokens["reader"]).conversations() == []
    push(local, url, tokens["laptop"])
    # the CLI: add prints the token once, list never shows it, revoke refuses it from then on
    env = {**os.environ, "ASZ_STORE": pg.url, "ASZ_HOME": str(tmp_path / "admin")}
    made = subprocess.run([str(ASZ), "server", "token", "add", "ci-box"], env=env, capture_output=True, text=True, timeout=120)
    token = made.stdout.strip()
    assert made.returncode == 0 and token.startswith("asz_") and "shown this once" in made.stderr
    assert ServerStore(url, token).conversations()
    listed = subprocess.run([str(ASZ), "server", "token", "list", "--json"], env=env, capture_output=True, text=True, timeout=120)
    assert token not in listed.stdout and {r["name"] for r in json.loads(listed.stdout)} >= {"ci-box", "laptop"}
    dup = subprocess.run([str(ASZ), "server", "token", "add", "ci-box"], env=env, capture_output=True, text=True, timeout=120)
    assert dup.returncode == 1 and "exists" in dup.stderr and "Traceback" not in dup.stderr
    subprocess.run([str(ASZ), "server", "token", "revoke", "ci-box"], env=env, check=True, capture_output=True, timeout=120)
    with pytest.raises(ServerError, match="revoked"):
        ServerStore(url, token).conversations()


@needs_corpus
def test_a_machine_appends_only_to_conversations_it_pushed_first(team: dict[str, Any], tmp_path: Path) -> None:
    lines = ORIGIN.read_bytes().splitlines(keepends=True)
    a, b = Store.open(tmp_path / "a"), Store.open(tmp_path / "b")
    for st, name in ((a, "a"), (b, "b")):
        f = tmp_path / name / "p" / ORIGIN.name
        f.parent.mkdir(parents=True)
        f.write_bytes(b"".join(lines[:30]))
        collect([f], st)
    push(a, team["url"], team["tokens"]["laptop"])
    held = _held(team["pg"])
    # the desk holds the same r1 (the same bytes): nothing to send; its r2 is refused
    assert push(b, team["url"], team["tokens"]["desk"]).rounds == 0
    with open(tmp_path / "b" / "p" / ORIGIN.name, "ab") as fh:
        fh.write(b"".join(lines[30:]))
    collect([tmp_path / "b" / "p" / ORIGIN.name], b)
    with pytest.raises(PushError, match="pushed first by another machine"):
        push(b, team["url"], team["tokens"]["desk"])
    assert _held(team["pg"]) == held


# -- bad input: a one-line 4xx, and nothing changes -------------------------------------------------------

def _body(conv: str, number: int, parent: str, head: str, records: list[Any], part: int = 0, last: bool = True,
          **extra: Any) -> bytes:
    h = {"conversation": conv, "runtime": "claudecode", "sessions": [conv], "number": number, "parent": parent,
         "head": head, "part": part, "last": last, **extra}
    return b"\n".join([orjson.dumps(h), *(r if isinstance(r, bytes) else orjson.dumps(r) for r in records)])


def _rec(raw: bytes, key: str) -> list[Any]:
    return [key, "main", "user", "f.jsonl", 1, None, base64.b64encode(raw).decode(), []]


def test_bad_pushes_get_a_4xx_with_one_line_and_change_nothing(team: dict[str, Any]) -> None:
    http = Http(team["url"], team["tokens"]["laptop"])
    raws = [b'{"a": 1}', b'{"a": 2}']
    good = head_digest("", raws)
    recs = [_rec(raws[0], "k1"), _rec(raws[1], "k2")]
    assert http.post("/v1/rounds", _body("c1", 1, "", good, recs))["status"] == "landed"
    held = _held(team["pg"])
    r2 = [_rec(b'{"a": 3}', "k3")]
    h2 = head_digest(good, [b'{"a": 3}'])
    cases = [
        (_body("c1", 2, good, "0" * 64, r2), 400, "the records sent give head"),  # a forged digest
        (_body("c1", 2, good, head_digest(good, [b'{"a": 4}']), r2), 400, "the records sent give head"),  # other records
        (_body("c1", 2, "1" * 64, h2, r2), 409, "is not the server's head"),  # a parent that is not the head
        (_body("c1", 3, good, h2, r2), 409, "is not the server's head"),  # a round skipped
        (_body("c1", 1, "", good, recs[::-1]), 200, None),  # r1 again, reordered: its head landed already
        (_body("c2", 1, "", head_digest("", [raws[1], raws[0]]), recs), 400, "the records sent give head"),  # reordered
        (_body("c1", 2, good, h2, [b"{not json"]), 400, "line 2: not JSON"),
        (_body("c1", 2, good, h2, [["k3", "main"]]), 400, "line 2: a record is [key, stream"),
        (_body("c1", 2, good, h2, [[*r2[0][:6], "!!", []]]), 400, "line 2: raw is not base64"),
        (b"not json\n", 400, "line 1: the header is not JSON"),
        (_body("c1", 2, good, "XYZ", r2), 400, "head and parent: give 64 lowercase hex"),
        (_body("", 2, good, h2, r2), 400, "conversation: give"),
        (_body("c1", 2, good, h2, [*r2, r2[0]]), 400, "stored already with these bytes"),
        (b"x" * (srv.MAX_BODY + 1), 413, "this server takes at most"),
    ]
    for body, status, says in cases:
        if status == 200:
            assert http.post("/v1/rounds", body)["status"] == "already"
            continue
        with pytest.raises(ServerError) as e:
            http.post("/v1/rounds", body)
        assert e.value.status == status and says in str(e.value) and "\n" not in str(e.value), (says, str(e.value))
        assert _held(team["pg"]) == held, says
    assert http.post("/v1/rounds", _body("c1", 2, good, h2, r2))["status"] == "landed"  # the right one still lands
    # reads: an unknown method, wrong arguments
    for q, says in (({"method": "db", "args": []}, "method: one of"), ({"method": "records", "args": ["c1"]}, "wrong arguments")):
        with pytest.raises(ServerError, match=says) as e:
            http.post("/v1/read", orjson.dumps(q))
        assert e.value.status == 400


# -- faults -------------------------------------------------------------------------------------------------

def test_a_server_killed_mid_push_then_restarted_lets_the_push_finish_with_nothing_lost_or_doubled(
        team: dict[str, Any], corpus_store: Store) -> None:
    s, pg = team["server"], team["pg"]
    env = {**os.environ, "ASZ_HOME": str(Path(corpus_store.path).parent), "ASZ_TOKEN": team["tokens"]["laptop"]}
    env.pop("ASZ_STORE", None)
    pusher = subprocess.Popen([str(ASZ), "push", "--server", s.url, "--json"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        end = time.monotonic() + 120
        while pg.db.execute("SELECT count(*) FROM rounds").fetchone()[0] < 3:  # some rounds in
            assert time.monotonic() < end and pusher.poll() is None
            time.sleep(0.02)
        s.kill()  # SIGKILL, mid-push: the round being landed is rolled back by PostgreSQL
        landed_then = pg.db.execute("SELECT count(*) FROM rounds").fetchone()[0]
        time.sleep(1)
        s.start()  # the push is retrying meanwhile: it goes on
        out, errs = pusher.communicate(timeout=600)
    finally:
        if pusher.poll() is None:
            pusher.kill()
    assert pusher.returncode == 0, errs
    got = json.loads(out)
    assert got["retries"] >= 1 and got["rounds"] + got["already"] >= len(_local_rounds(corpus_store)) - landed_then
    assert _rounds(pg) == _local_rounds(corpus_store)
    _assert_each_round_once_in_chain_order(pg)
    assert pg.db.execute("SELECT count(*) FROM pending").fetchone() == (0,)
    assert push(corpus_store, s.url, team["tokens"]["laptop"]).rounds == 0  # a second push: nothing left


@needs_corpus
def test_postgresql_s_connection_dropped_mid_round_rolls_the_round_back_whole(team: dict[str, Any], tmp_path: Path) -> None:
    pg = team["pg"]
    local = Store.open(tmp_path / "laptop")
    collect([copy(ORIGIN, tmp_path / "p")], local)
    key = local.records(ORIGIN.stem, 1)[120].key
    # the 121st record's insert sleeps, once, so the test can drop the server's connection right then
    pg.db.execute("CREATE SEQUENCE once")
    pg.db.execute(f"""CREATE FUNCTION slow() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        IF NEW.key = '{key}' AND nextval('once') = 1 THEN PERFORM pg_sleep(20); END IF; RETURN NEW; END $$""")
    pg.db.execute("CREATE TRIGGER slow AFTER INSERT ON records FOR EACH ROW EXECUTE FUNCTION slow()")
    result: dict[str, Any] = {}
    t = threading.Thread(target=lambda: result.setdefault("r", push(local, team["url"], team["tokens"]["laptop"])))
    t.start()
    end = time.monotonic() + 60
    victim = None
    while victim is None:
        assert time.monotonic() < end, "the server's insert never reached the record"
        victim = pg.db.execute("SELECT pid FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND application_name = 'asz'"
                               ).fetchone()
        time.sleep(0.02)
    # mid-round: 120 of its records are written, uncommitted; none can be seen
    assert pg.db.execute("SELECT count(*) FROM records").fetchone() == (0,)
    pg.db.execute("SELECT pg_terminate_backend(?)", (victim[0],))
    t.join(timeout=120)
    assert not t.is_alive() and result["r"].retries >= 1 and result["r"].rounds == 1
    assert _rounds(pg) == _local_rounds(local)
    _assert_each_round_once_in_chain_order(pg)


def test_two_pushes_of_the_same_rounds_at_once_land_each_once(team: dict[str, Any], corpus_store: Store) -> None:
    results: list[Any] = []
    threads = [threading.Thread(target=lambda: results.append(push(corpus_store, team["url"], team["tokens"]["laptop"])))
               for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert len(results) == 2
    local = _local_rounds(corpus_store)
    assert sum(r.rounds for r in results) == len(local)  # each round landed by exactly one of them
    assert _rounds(team["pg"]) == local
    _assert_each_round_once_in_chain_order(team["pg"])


def test_a_client_cut_mid_body_leaves_nothing(team: dict[str, Any]) -> None:
    raws = [b'{"a": %d}' % i for i in range(50)]
    recs = [_rec(r, f"k{i}") for i, r in enumerate(raws)]
    head = head_digest("", raws)
    for last in (True, False):  # a round's last part, and a part to stage
        body = _body("cut", 1, "", head, recs, last=last)
        with socket.create_connection(("127.0.0.1", team["server"].port), timeout=10) as s:
            s.sendall(b"POST /v1/rounds HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + team["tokens"]["laptop"].encode()
                      + b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body[: len(body) // 2])
        time.sleep(0.5)
        assert _held(team["pg"]) == ([], (0,), (0,), [], (0,))
    http = Http(team["url"], team["tokens"]["laptop"])
    assert http.post("/v1/rounds", _body("cut", 1, "", head, recs))["status"] == "landed"  # sent whole, it lands
