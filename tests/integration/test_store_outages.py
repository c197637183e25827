"""The store on a redis-server that is up but cannot serve now: loading its data after a
restart (LOADING) or unable to persist (MISCONF). Each is an outage: the append is
``StoreUnavailable`` (the API's 503 ``unavailable``, retried with the same command id),
never a crash of the caller's code nor ``StoreCorrupt``; once Redis serves again, the
same append goes through (docs/reliability.md, drill 7)."""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
import redis

from services.redis_runtime import PrivateRedis
from services.store.async_redis_store import AsyncRedisEventStore, connect_async
from services.store.base import GENESIS, Head
from services.store.errors import StoreUnavailable
from services.store.redis_store import RedisEventStore, connect

pytestmark = [pytest.mark.integration, pytest.mark.single_node, pytest.mark.timeout(120)]


def _raw(server: PrivateRedis) -> redis.Redis:
    return redis.Redis(host="127.0.0.1", port=server.port, protocol=2, socket_timeout=5)


def _restarted_loading(server: PrivateRedis) -> threading.Thread:
    """Restart ``server`` on its AOF, slowly loading 10,000 filler keys; return once it
    answers LOADING (the thread ends once it is loaded)."""
    client = _raw(server)
    pipe = client.pipeline(transaction=False)
    for n in range(10_000):
        pipe.set(f"filler:{n}", "x")
    pipe.execute()
    client.bgrewriteaof()
    while client.info("persistence")["aof_rewrite_in_progress"] or client.info("persistence")["aof_rewrite_scheduled"]:
        time.sleep(0.05)
    client.close()
    server.kill(signal.SIGTERM)
    server.extra_args = (*server.extra_args, "--key-load-delay", "200",
                         "--loading-process-events-interval-bytes", "1024")
    starting = threading.Thread(target=server.start)
    starting.start()
    deadline = time.monotonic() + 15
    while not server.loading():
        assert time.monotonic() < deadline and starting.is_alive(), "redis never answered LOADING"
        time.sleep(0.01)
    return starting


def _misconf(server: PrivateRedis) -> Callable[[], None]:
    """Make ``server`` refuse writes with MISCONF (a failed background save with save
    points on); return what makes it accept them again."""
    client = _raw(server)
    client.config_set("dir", "/proc")  # no file can be made there: the save fails
    client.config_set("save", "3600 1")
    client.bgsave()
    while client.info("persistence")["rdb_last_bgsave_status"] != "err":
        time.sleep(0.02)

    def heal() -> None:
        client.config_set("save", "")
        client.config_set("dir", str(server.dir))
        client.close()

    return heal


def _append(store: Any, command_id: str, head: Head) -> Any:
    return store.append("t1", [b'{"n":1}'], expected=head, command_id=command_id, outcome=b"{}")


@pytest.fixture
def server(redis_factory: Callable[..., PrivateRedis]) -> PrivateRedis:
    return redis_factory(extra_args=("--enable-protected-configs", "local"))


def test_an_async_append_while_redis_loads_is_unavailable_and_goes_through_after(server: PrivateRedis) -> None:
    async def run() -> None:
        client = connect_async(server.url, retries=1)
        store = AsyncRedisEventStore(client)
        first = await _append(store, "c1", Head(0, GENESIS))  # the connection is up, the script loaded
        starting = await asyncio.to_thread(_restarted_loading, server)
        with pytest.raises(StoreUnavailable, match="loading"):
            await _append(store, "c2", first.head)
        await asyncio.to_thread(starting.join)
        assert (await _append(store, "c2", first.head)).head.version == 2
        await client.aclose()

    asyncio.run(run())


def test_a_sync_append_while_redis_loads_is_unavailable(server: PrivateRedis) -> None:
    store = RedisEventStore(connect(server.url, retries=1))
    first = _append(store, "c1", Head(0, GENESIS))
    starting = _restarted_loading(server)
    with pytest.raises(StoreUnavailable):
        _append(store, "c2", first.head)
    starting.join()
    assert _append(store, "c2", first.head).head.version == 2


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_an_append_redis_refuses_with_misconf_is_unavailable_not_corrupt(server: PrivateRedis, kind: str) -> None:
    async def run() -> None:
        if kind == "sync":
            store: Any = RedisEventStore(connect(server.url, retries=1))

            async def append(command_id: str, head: Head) -> Any:
                return _append(store, command_id, head)
        else:
            client = connect_async(server.url, retries=1)
            store = AsyncRedisEventStore(client)

            async def append(command_id: str, head: Head) -> Any:
                return await _append(store, command_id, head)
        first = await append("c1", Head(0, GENESIS))
        heal = await asyncio.to_thread(_misconf, server)
        with pytest.raises(StoreUnavailable, match="MISCONF"):
            await append("c2", first.head)
        await asyncio.to_thread(heal)
        assert (await append("c2", first.head)).head.version == 2

    asyncio.run(run())
