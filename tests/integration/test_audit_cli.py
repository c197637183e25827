"""`mighty verify / export / log` against a real redis-server: a faithful table verifies;
an event edited, deleted or reordered in the stream itself is named."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
import redis

from domain.table import CreateTable, Submission
from services.commands.tables import table_handler
from services.players import next_submission, seating
from services.redis_runtime import PrivateRedis
from services.store.compact import pack, unpack
from services.store.keys import KeySpace
from services.store.redis_store import RedisEventStore
from tests.stream_entries import as_fields, as_stored

pytestmark = pytest.mark.integration

def play(client: redis.Redis, table_id: str, hands: int) -> None:
    handler = table_handler(RedisEventStore(client))
    rng = random.Random(11)
    subs = [Submission(CreateTable(), "ana"), *seating(["ana", "bo", "cy", "di", "ed"])]
    for n, sub in enumerate(subs):
        handler.handle(table_id, sub, command_id=f"{table_id}-{n}")
    n = len(subs)
    while handler.state_of(table_id)[0].hands_scored < hands:
        sub = next_submission(handler.state_of(table_id)[0], rng)
        assert sub is not None
        handler.handle(table_id, sub, command_id=f"{table_id}-{n}")
        n += 1


def mighty(server: PrivateRedis, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "REDIS_URL": server.url}
    return subprocess.run([sys.executable, "-m", "services.cli", *args], env=env,
                          capture_output=True, text=True, timeout=60)


def rewrite_stream(client: redis.Redis, key: str, entries: list[tuple[bytes, dict[bytes, bytes]]]) -> None:
    """What someone with write access could do: rebuild the stream with other contents
    (``entries`` as ``as_fields`` shows them, written back as records: tests/stream_entries.py)."""
    client.delete(key)
    for entry_id, fields in as_stored(entries):
        client.xadd(key, fields, id=entry_id)


@pytest.fixture
def played(redis_server: PrivateRedis, redis_client: redis.Redis) -> tuple[str, list[tuple[bytes, dict[bytes, bytes]]]]:
    play(redis_client, "audit1", hands=2)
    key = KeySpace().table("audit1").events
    return key, as_fields(redis_client.xrange(key))


def test_verify_accepts_a_faithful_table(redis_server: PrivateRedis, played: tuple[str, list]) -> None:
    done = mighty(redis_server, "verify", "audit1")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is True and report["events"] == len(played[1]) and report["hands"] >= 2


def test_verify_names_an_edited_event(redis_server: PrivateRedis, redis_client: redis.Redis, played: tuple[str, list]) -> None:
    key, entries = played
    k = 25
    fields = dict(entries[k][1])
    fields[b"e"] = pack(unpack(fields[b"e"])[:-1] + b" }")  # same JSON, other bytes, stored packed
    rewrite_stream(redis_client, key, entries[:k] + [(entries[k][0], fields)] + entries[k + 1:])
    done = mighty(redis_server, "verify", "audit1")
    assert done.returncode == 1
    assert json.loads(done.stdout)["first_bad"]["version"] == k + 1


def test_verify_names_a_deleted_event(redis_server: PrivateRedis, redis_client: redis.Redis, played: tuple[str, list]) -> None:
    key, entries = played
    redis_client.xdel(key, entries[30][0])
    done = mighty(redis_server, "verify", "audit1")
    assert done.returncode == 1
    assert json.loads(done.stdout)["first_bad"]["version"] == 32


def test_verify_names_reordered_events(redis_server: PrivateRedis, redis_client: redis.Redis, played: tuple[str, list]) -> None:
    key, entries = played
    k = 40
    swapped = [(entries[k][0], entries[k + 1][1]), (entries[k + 1][0], entries[k][1])]
    rewrite_stream(redis_client, key, entries[:k] + swapped + entries[k + 2:])
    done = mighty(redis_server, "verify", "audit1")
    assert done.returncode == 1
    # the entry at 0-41 holds event 42: a record's version is its entry id
    assert json.loads(done.stdout)["first_bad"]["version"] == k + 1


def test_verify_all_checks_every_table_and_names_the_bad_ones(
        redis_server: PrivateRedis, redis_client: redis.Redis, played: tuple[str, list]) -> None:
    play(redis_client, "audit2", hands=1)
    play(redis_client, "audit3", hands=1)
    done = mighty(redis_server, "verify", "--all")
    assert done.returncode == 0, done.stderr
    *lines, summary = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["table"] for line in lines] == ["audit1", "audit2", "audit3"]
    assert all(line["ok"] for line in lines) and summary == {"tables": 3, "ok": 3, "bad": []}

    key = KeySpace().table("audit2").events
    entries = redis_client.xrange(key)
    redis_client.xdel(key, entries[10][0])
    done = mighty(redis_server, "verify", "--all")
    assert done.returncode == 1
    *lines, summary = [json.loads(line) for line in done.stdout.splitlines()]
    assert summary == {"tables": 3, "ok": 2, "bad": ["audit2"]}
    assert [line["first_bad"]["version"] for line in lines if not line["ok"]] == [12]


def test_verify_wants_one_table_or_all(redis_server: PrivateRedis) -> None:
    for args in ([], ["t1", "--all"]):
        done = mighty(redis_server, "verify", *args)
        assert done.returncode == 2 and "name one TABLE, or --all" in done.stderr


def test_exported_hand_replays_to_the_same_result(redis_server: PrivateRedis, played: tuple[str, list], tmp_path: Path) -> None:
    out = tmp_path / "hand.json"
    done = mighty(redis_server, "export", "audit1", "--hand", "1", "-o", str(out))
    assert done.returncode == 0, done.stderr
    replayed = mighty(redis_server, "replay", str(out))
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    result = json.loads(replayed.stdout)
    stored = [json.loads(unpack(f[b"e"])) for _, f in played[1]]
    scored = next(e for e in stored if e["type"] in ("hand_scored", "hand_passed_out", "misdeal_claimed"))
    assert result["result"].get("scores") == scored.get("scores")


def test_log_prints_one_line_per_event_and_hides_the_deal(redis_server: PrivateRedis, played: tuple[str, list]) -> None:
    done = mighty(redis_server, "log", "audit1")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == len(played[1])
    dealt = next(line for line in lines if "hand_dealt" in line)
    assert "salt=…" in dealt and "hands=10,10,10,10,10" in dealt
