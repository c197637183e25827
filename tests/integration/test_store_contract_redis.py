"""The store contract on a real redis-server (started by the fixtures)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
import redis

from services.redis_runtime import PrivateRedis
from services.store import AsyncRedisEventStore, RedisEventStore, connect_async
from tests.store_contract import RedisScriptContract, StoreContract, SyncOverAsync

pytestmark = pytest.mark.integration


class TestRedisStore(StoreContract, RedisScriptContract):
    @pytest.fixture
    def client(self, redis_client: redis.Redis) -> redis.Redis:
        return redis_client

    @pytest.fixture
    def store(self, client: redis.Redis) -> RedisEventStore:
        return RedisEventStore(client)


class TestAsyncRedisStore(StoreContract, RedisScriptContract):
    @pytest.fixture
    def client(self, redis_client: redis.Redis) -> redis.Redis:
        return redis_client

    @pytest.fixture
    def store(self, redis_server: PrivateRedis) -> Iterator[SyncOverAsync]:
        with asyncio.Runner() as runner:
            client = connect_async(redis_server.url)
            yield SyncOverAsync(AsyncRedisEventStore(client), runner)
            runner.run(client.aclose())
