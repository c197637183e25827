"""The store contract on the in-memory twin and on fakeredis (fast tier)."""

from __future__ import annotations

from collections.abc import Iterator

import fakeredis
import pytest
import redis

from services.store import InMemoryEventStore, RedisEventStore
from tests.store_contract import RedisScriptContract, StoreContract


class TestInMemoryStore(StoreContract):
    @pytest.fixture
    def store(self) -> InMemoryEventStore:
        return InMemoryEventStore()


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
