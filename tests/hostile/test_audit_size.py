"""Audit at any size: on a 50,000-event table ``/verify`` and ``/hands`` answer within
bounds, reading only what follows the table's audit checkpoint (today: the whole stream
read on every call, 500 after 10-14 s on a loaded service); an event edited after the
checkpoint is still named; ``verify --all`` and ``projections check`` find the tables
without a SCAN of the keyspace.

The table is built once for the module (``bench/audit.py``: played at random in process,
then appended through the append script, pipelined: a few seconds).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from typing import Any

import httpx
import pytest
import redis

from bench.audit import copy_into, played_events
from services.audit.checkpoint import decode_checkpoint
from services.store.base import HASH_EVERY, StoredEvent
from services.store.keys import KeySpace
from services.store.redis_store import connect
from tests.drills.service import NAMESPACE
from tests.hostile.conftest import Running

TABLE = "long50k"
EVENTS = 50_000
BOUND_S = 5.0  # an answer's bound on a loaded two-core machine (it takes ~0.05 s idle)
SPACE = KeySpace(namespace=NAMESPACE)


@pytest.fixture(scope="module")
def long_table(service: Running) -> list[StoredEvent]:
    """A 50,000-event table in the service's Redis, but its last few hands (appended by
    the tests, after a checkpoint)."""
    stored = played_events(TABLE, EVENTS + 400, seed=1)
    cut = next(e.version for e in stored if e.version >= EVENTS and e.command_id != stored[e.version].command_id)
    copy_into(connect(service.redis.url), SPACE, TABLE, stored[:cut])
    return stored


def commandstat(service: Running, command: str) -> int:
    stats: Any = connect(service.redis.url).info("commandstats")
    return int(stats.get(f"cmdstat_{command}", {}).get("calls", 0))


class StreamReads:
    """The XRANGEs on one key while it is open, seen through MONITOR: the service's other
    reads (its workers' and the gateway's on the feed) are not counted, however slow the
    machine makes the calls."""

    def __init__(self, service: Running, key: str) -> None:
        self.key = key.encode()
        self.calls = 0
        self.done = threading.Event()
        self.client = redis.Redis.from_url(service.redis.url, socket_timeout=0.2)
        self.watcher = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> StreamReads:
        self.monitor = self.client.monitor().__enter__()
        self.watcher.start()
        return self

    def __exit__(self, *exc: object) -> None:
        time.sleep(0.3)  # MONITOR reports a call after it ran: the last ones still arriving
        self.done.set()
        self.watcher.join(timeout=5)
        self.monitor.__exit__(None, None, None)
        self.client.close()

    def _watch(self) -> None:
        while not self.done.is_set():
            try:
                command = self.monitor.next_command()["command"]
            except redis.TimeoutError:
                continue
            except (redis.ConnectionError, ValueError):
                return
            words = command.split()
            if words[:2] == ["XRANGE", self.key.decode()]:
                self.calls += 1


def timed_get(service: Running, path: str) -> tuple[float, httpx.Response]:
    started = time.monotonic()
    answer = httpx.get(f"{service.base}/api/v1/tables/{TABLE}{path}", timeout=30)
    return time.monotonic() - started, answer


def caught_up(service: Running, path: str) -> httpx.Response:
    """The route asked until it answers 200: each answer within the bound, 200 or 503
    ``unavailable`` with Retry-After (the first call on a table without a checkpoint
    stores how far it got)."""
    for _ in range(20):
        took, answer = timed_get(service, path)
        assert took < BOUND_S, f"{path} took {took:.1f} s"
        if answer.status_code == 200:
            return answer
        assert answer.status_code == 503 and answer.json()["code"] == "unavailable", answer.text
        assert "Retry-After" in answer.headers
    raise AssertionError(f"{path} never caught up")


def test_verify_and_hands_of_a_50000_event_table_answer_within_bounds_from_the_checkpoint(
        service: Running, long_table: list[StoredEvent]) -> None:
    verified = caught_up(service, "/verify").json()
    assert verified["ok"] is True and verified["problem"] is None and verified["events"] >= EVENTS
    with StreamReads(service, SPACE.table(TABLE).events) as reads:
        took, answer = timed_get(service, "/verify")
        assert answer.status_code == 200 and answer.json() == verified and took < BOUND_S
        took, hands = timed_get(service, "/hands")
        assert hands.status_code == 200 and took < BOUND_S
        assert len(hands.json()["hands"]) == verified["hands"] > 500
        middle = len(hands.json()["hands"]) // 2
        took, hand = timed_get(service, f"/hands/{middle}")
        assert hand.status_code == 200 and took < BOUND_S
    # the whole stream is 50 XRANGEs of 1,000 a read (150 for the three calls); from the
    # checkpoint, one or two each
    assert 0 < reads.calls <= 9, reads.calls


def test_an_event_edited_after_the_checkpoint_is_named(service: Running, long_table: list[StoredEvent]) -> None:
    caught_up(service, "/verify")
    client = connect(service.redis.url)
    checkpoint = decode_checkpoint(client.get(SPACE.table(TABLE).audit))
    head = int(client.hget(SPACE.table(TABLE).meta, "v"))
    assert checkpoint.version > EVENTS - 200
    rest = long_table[head:]
    forged = rest[len(rest) // 2].version
    copy_into(client, SPACE, TABLE, rest, forge=forged)
    verified = caught_up(service, "/verify").json()
    # its bytes are edited (not what the rules derive) and only every 16th entry stores its
    # hash: the next one that does names it (docs/store.md, "What `mighty verify` checks")
    anchor = forged + (-forged % HASH_EVERY)
    assert verified["ok"] is False and verified["version"] == anchor
    assert f"one of events {anchor - HASH_EVERY + 1}–{anchor} was changed" in verified["problem"]


@pytest.mark.parametrize("argv", [["verify", "--all"], ["projections", "check", "--kind", "ledger"]])
def test_operator_tools_find_tables_without_scanning_the_keyspace(service: Running, long_table: list[StoredEvent],
                                                                  argv: list[str]) -> None:
    scans = commandstat(service, "scan")
    done = subprocess.run([sys.executable, "-m", "services.cli", *argv, "--redis-url", service.redis.url,
                           "--namespace", NAMESPACE], capture_output=True, timeout=120,
                          env={**os.environ, "MIGHTY_LOG_LEVEL": "warning"})
    assert TABLE.encode() in done.stdout or argv[0] == "projections", done.stderr[-2000:]
    assert commandstat(service, "scan") == scans
