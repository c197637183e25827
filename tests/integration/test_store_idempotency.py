"""One command id sent 100 times appends once and answers the same every time."""

from __future__ import annotations

from typing import Any

import pytest
import redis

from services.commands.handler import CommandHandler, CommandResult
from services.redis_runtime import PrivateRedis
from services.store import (
    EMPTY_HEAD,
    Appended,
    RedisEventStore,
    connect,
)
from tests.counter import Add, CounterDecider, Open, Play
from tests.integration.writers import run_writers

pytestmark = pytest.mark.integration

TIMES = 100


def opened(client: redis.Redis) -> RedisEventStore:
    store = RedisEventStore(client)
    CommandHandler(store, CounterDecider()).handle("t1", Open(3), command_id="open")
    return store


def test_a_command_sent_100_times_in_a_row_appends_once(redis_client: redis.Redis) -> None:
    store = opened(redis_client)
    handler = CommandHandler(store, CounterDecider())
    results = [handler.handle("t1", Play(0), command_id="same") for _ in range(TIMES)]
    fresh = [CommandHandler(store, CounterDecider()).handle("t1", Play(0), command_id="same")]
    assert [r.duplicate for r in results + fresh] == [False] + [True] * TIMES
    assert {(r.version, r.events) for r in results + fresh} == {(2, results[0].events)}
    assert [e.command_id for e in store.read("t1")] == ["open", "same"]


def test_a_command_sent_100_times_at_once_appends_once(
    redis_server: PrivateRedis, redis_client: redis.Redis
) -> None:
    store = opened(redis_client)

    def send(i: int) -> CommandResult[Any]:
        client = connect(redis_server.url)
        try:
            handler = CommandHandler(RedisEventStore(client), CounterDecider())
            return handler.handle("t1", Add(1, 7), command_id="same")
        finally:
            client.close()

    results = run_writers(TIMES, send)
    assert all(isinstance(r, CommandResult) for r in results), results
    assert sum(not r.duplicate for r in results) == 1
    assert {(r.version, r.events) for r in results} == {(2, results[0].events)}
    assert [e.command_id for e in store.read("t1")] == ["open", "same"]
    assert store.head("t1").version == 2


def test_the_same_append_100_times_at_once_writes_once(
    redis_server: PrivateRedis, redis_client: redis.Redis
) -> None:
    store = RedisEventStore(redis_client)

    def send(i: int) -> Appended:
        client = connect(redis_server.url)
        try:
            return RedisEventStore(client).append(
                "t1", [b"a", b"b"], expected=EMPTY_HEAD, command_id="same", outcome=b"first"
            )
        finally:
            client.close()

    results = run_writers(TIMES, send)
    assert all(isinstance(r, Appended) for r in results), results
    assert sum(not r.duplicate for r in results) == 1
    assert {(r.outcome, r.head) for r in results} == {(b"first", store.head("t1"))}
    assert [e.data for e in store.read("t1")] == [b"a", b"b"]
    feed = store.read_feed(store.partition_of("t1"))
    assert [f.data for f in feed] == [b"a", b"b"]
