"""What a redis-py error becomes in the store (services/store/redis_store.store_error): an
outage the caller retries with the same command id (``StoreUnavailable``, the API's 503
``unavailable``), or a refusal nobody can retry away (``StoreCorrupt``)."""

from __future__ import annotations

import pytest
import redis

from services.store.errors import StoreCorrupt, StoreUnavailable
from services.store.redis_store import store_error


@pytest.mark.parametrize("error", [
    redis.ConnectionError("Connection refused"),
    redis.TimeoutError("Timeout reading from socket"),
    redis.exceptions.ReadOnlyError("You can't write against a read only replica."),
    redis.exceptions.OutOfMemoryError("command not allowed when used memory > 'maxmemory'."),
    redis.exceptions.ClusterDownError("The cluster is down"),
    redis.exceptions.TryAgainError("Multiple keys request during rehashing of slot"),
    # the replicated profile's WAIT on a primary that became a replica mid-failover
    redis.ResponseError("UNBLOCKED force unblock from blocking operation, instance state changed "
                        "(master -> replica?)"),
], ids=lambda error: type(error).__name__ + ":" + str(error)[:12])
def test_an_outage_or_a_failover_is_unavailable_and_retryable(error: Exception) -> None:
    assert isinstance(store_error(error), StoreUnavailable)


def test_any_other_refusal_is_corrupt_and_says_what_redis_said() -> None:
    found = store_error(redis.ResponseError("WRONGTYPE Operation against a key holding the wrong kind of value"))
    assert isinstance(found, StoreCorrupt)
    assert "WRONGTYPE" in str(found)
