"""Each of an append's keys holding the wrong type is refused as store_corrupt, naming
the key, before anything is written: for the sync and the async Redis store, through the
5-key call (with the idempotency window) and the 4-key one."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis

from services.store import (
    EMPTY_HEAD,
    AsyncRedisEventStore,
    KeySpace,
    RedisEventStore,
    StoreCorrupt,
    connect_async,
)

pytestmark = pytest.mark.integration
SPACE = KeySpace(16)
KEY_KINDS = [("events", "stream"), ("meta", "hash"), ("commands", "hash"), ("feed", "stream"),
             ("previous_commands", "hash")]


def snapshot(client: redis.Redis, table_id: str) -> list[Any]:
    return [client.dump(key) for key in SPACE.table(table_id).with_index()]


@pytest.mark.parametrize(("field", "kind"), KEY_KINDS)
@pytest.mark.parametrize("window_s", [60.0, 0.0])
@pytest.mark.parametrize("shell", ["sync", "async"])
def test_a_key_of_the_wrong_type_is_refused_naming_it_before_any_write(
    redis_server: Any, redis_client: redis.Redis, field: str, kind: str, window_s: float, shell: str
) -> None:
    store = RedisEventStore(redis_client, keys=SPACE, idempotency_s=window_s)
    first = store.append("t1", [b"a"], expected=EMPTY_HEAD, command_id="c1", outcome=b"{}")
    key = getattr(SPACE.table("t1"), field)
    redis_client.delete(key)
    redis_client.set(key, "hostile")
    before = snapshot(redis_client, "t1")

    def append_again() -> Any:
        if shell == "sync":
            return store.append("t1", [b"b"], expected=first.head, command_id="c2", outcome=b"{}")

        async def run() -> Any:
            client = connect_async(redis_server.url)
            try:
                async_store = AsyncRedisEventStore(client, keys=SPACE, idempotency_s=window_s)
                return await async_store.append(
                    "t1", [b"b"], expected=first.head, command_id="c2", outcome=b"{}"
                )
            finally:
                await client.aclose()

        return asyncio.run(run())

    if field == "previous_commands" and not window_s:
        append_again()  # without a window the generation before is not read
        return
    with pytest.raises(StoreCorrupt, match=f"{key} is a string, not a {kind}"):
        append_again()
    assert snapshot(redis_client, "t1") == before
