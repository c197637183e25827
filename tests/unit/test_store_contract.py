"""The store contract on the in-memory twin and on fakeredis (fast tier)."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator
from typing import Any

import fakeredis
import pytest
import redis
from hypothesis import given, settings
from hypothesis import strategies as st

from services.store import AsyncRedisEventStore, EventStore, Head, RedisEventStore, StoreError
from services.store.base import StoredEvent
from tests.memory_store import AsyncInMemoryEventStore, InMemoryEventStore
from tests.store_contract import RedisScriptContract, StoreContract, SyncOverAsync


@pytest.fixture
def runner() -> Iterator[asyncio.Runner]:
    with asyncio.Runner() as loop:
        yield loop


class TestInMemoryStore(StoreContract):
    @pytest.fixture
    def store(self) -> InMemoryEventStore:
        return InMemoryEventStore()


class TestAsyncInMemoryStore(StoreContract):
    @pytest.fixture
    def store(self, runner: asyncio.Runner) -> SyncOverAsync:
        return SyncOverAsync(AsyncInMemoryEventStore(), runner)


class TestFakeRedisStore(StoreContract, RedisScriptContract):
    @pytest.fixture
    def client(self) -> Iterator[redis.Redis]:
        # RESP2 as in services.store.redis_store.connect: the adapter parses RESP2 replies.
        client = fakeredis.FakeRedis(server=fakeredis.FakeServer(), protocol=2)
        yield client
        client.close()

    @pytest.fixture
    def store(self, client: redis.Redis) -> RedisEventStore:
        return RedisEventStore(client)


class TestAsyncFakeRedisStore(StoreContract, RedisScriptContract):
    @pytest.fixture
    def server(self) -> fakeredis.FakeServer:
        return fakeredis.FakeServer()

    @pytest.fixture
    def client(self, server: fakeredis.FakeServer) -> Iterator[redis.Redis]:
        client = fakeredis.FakeRedis(server=server, protocol=2)
        yield client
        client.close()

    @pytest.fixture
    def store(self, server: fakeredis.FakeServer, runner: asyncio.Runner) -> Iterator[SyncOverAsync]:
        client = fakeredis.FakeAsyncRedis(server=server, protocol=2)
        yield SyncOverAsync(AsyncRedisEventStore(client), runner)
        runner.run(client.aclose())


Step = tuple[str, int, str, int, bool]  # table, events, command id, version skew, bad hash

steps = st.lists(
    st.tuples(
        st.sampled_from(["a", "b"]),
        st.integers(1, 3),
        st.sampled_from([f"c{i}" for i in range(6)]),
        st.sampled_from([0, 0, 0, -1, 1]),
        st.sampled_from([False, False, False, True]),
    ),
    max_size=25,
)


def run_steps(store: EventStore, script: list[Step]) -> list[Any]:
    """Apply ``script`` and note what each step answered: the same for every store."""
    answers: list[Any] = []
    for n, (table_id, count, cid, skew, bad_hash) in enumerate(script):
        head = store.head(table_id)
        expected = Head(max(0, head.version + skew), "f" * 64 if bad_hash else head.hash)
        events = [f"{table_id}{n}.{i}".encode() for i in range(count)]
        try:
            got = store.append(
                table_id, events, expected=expected, command_id=cid, outcome=b"%d" % n
            )
            answers.append((got.head, got.outcome, got.duplicate))
        except StoreError as error:
            answers.append(error.as_dict())
    feed = [(f.table_id, f.version, f.data, f.hash) for p in range(16) for f in store.read_feed(p)]
    # the append time is the store's clock (tests/store_contract.py pins it): not compared
    return [answers, untimed(store.read("a")), untimed(store.read("b")), feed]


def untimed(events: list[StoredEvent]) -> list[StoredEvent]:
    return [dataclasses.replace(event, at_ms=None) for event in events]


@settings(max_examples=60, deadline=None)
@given(steps)
def test_the_in_memory_twin_answers_as_redis_does(script: list[Step]) -> None:
    fake = RedisEventStore(fakeredis.FakeRedis(server=fakeredis.FakeServer(), protocol=2))
    assert run_steps(InMemoryEventStore(), script) == run_steps(fake, script)


@settings(max_examples=30, deadline=None)
@given(steps)
def test_the_async_redis_store_answers_as_the_sync_one_does(script: list[Step]) -> None:
    fake = RedisEventStore(fakeredis.FakeRedis(server=fakeredis.FakeServer(), protocol=2))
    with asyncio.Runner() as runner:
        client = fakeredis.FakeAsyncRedis(server=fakeredis.FakeServer(), protocol=2)
        async_fake = SyncOverAsync(AsyncRedisEventStore(client), runner)
        assert run_steps(async_fake, script) == run_steps(fake, script)
        runner.run(client.aclose())
