"""The store contract on a real redis-server (started by the fixtures)."""

from __future__ import annotations

import pytest
import redis

from services.store import RedisEventStore
from tests.store_contract import RedisScriptContract, StoreContract

pytestmark = pytest.mark.integration


class TestRedisStore(StoreContract, RedisScriptContract):
    @pytest.fixture
    def client(self, redis_client: redis.Redis) -> redis.Redis:
        return redis_client

    @pytest.fixture
    def store(self, client: redis.Redis) -> RedisEventStore:
        return RedisEventStore(client)
