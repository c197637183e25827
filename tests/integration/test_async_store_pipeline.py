"""The async store's pipelines against a real redis-server: replies read straight from
hiredis, one caller's error reply nobody else's, a script cache emptied mid-run."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis
from redis.asyncio.cluster import RedisCluster

from services.store import EMPTY_HEAD, AsyncRedisEventStore, KeySpace, StoreCorrupt, connect_async
from services.store.redis_store import APPEND_SCRIPT
from services.store.replies import HiredisReplies

pytestmark = pytest.mark.integration
SPACE = KeySpace(16)


def test_replies_of_a_real_connection_are_read_straight_from_hiredis(redis_server: Any) -> None:
    """The fast reading of replies depends on redis-py's internals: if an upgrade moves
    them, the store still works (through read_response) but this says it got slower."""

    async def scenario() -> bool:
        client: Any = connect_async(redis_server.url)
        try:
            await client.ping()
            if isinstance(client, RedisCluster):  # a node's connection, as the cluster path takes it
                node = client.get_primaries()[0]
                connection = node.acquire_connection()
                try:
                    await connection.connect()
                    return HiredisReplies.of(connection) is not None
                finally:
                    node.release(connection)
            connection = await client.connection_pool.get_connection()
            try:
                return HiredisReplies.of(connection) is not None
            finally:
                await client.connection_pool.release(connection)
        finally:
            await client.aclose()

    assert asyncio.run(scenario())


@pytest.mark.single_node("one connection, made again under its reader")
def test_replies_read_from_a_connection_made_again_are_a_lost_connection(redis_server: Any) -> None:
    """What is read goes to the connection's reader of the moment: a reader taken before
    the connection was made again would wait for ever on replies fed to the new one."""

    async def scenario() -> None:
        client: Any = connect_async(redis_server.url)
        try:
            connection = await client.connection_pool.get_connection()
            try:
                replies = HiredisReplies.of(connection)
                assert replies is not None
                await connection.disconnect()
                await connection.connect()
                with pytest.raises(redis.ConnectionError):
                    await replies.read_more()
                fresh = HiredisReplies.of(connection)
                assert fresh is not None
                await connection.send_packed_command([b"*1\r\n$4\r\nPING\r\n"], check_health=False)
                reply = fresh.gets()
                while reply is fresh.not_enough_data:
                    await fresh.read_more()
                    reply = fresh.gets()
                assert reply in (b"PONG", "PONG")
            finally:
                await client.connection_pool.release(connection)
        finally:
            await client.aclose()

    asyncio.run(scenario())


def test_an_error_reply_in_a_pipeline_fails_only_its_own_append(redis_server: Any) -> None:
    """A script that raises for one table (a Lua error is an error reply, not an array)
    gives that caller StoreCorrupt; the appends around it in the same pipeline land."""
    failing = APPEND_SCRIPT.replace(
        "local table_id, command_id", "if ARGV[1] == 'boom' then error('injected') end\n"
        "local table_id, command_id", 1
    )
    assert failing != APPEND_SCRIPT

    async def scenario() -> list[Any]:
        client = connect_async(redis_server.url)
        store = AsyncRedisEventStore(client, keys=SPACE, script=failing)
        try:
            return await asyncio.gather(
                *(store.append(t, [b"e"], expected=EMPTY_HEAD, command_id="c1", outcome=b"{}")
                  for t in ["a1", "a2", "boom", "a3", "a4"]),
                return_exceptions=True,
            )
        finally:
            await client.aclose()

    results = asyncio.run(scenario())
    assert isinstance(results[2], StoreCorrupt), results[2]
    assert [r.head.version for n, r in enumerate(results) if n != 2] == [1, 1, 1, 1]


def test_a_script_cache_flushed_between_pipelines_is_reloaded(
    redis_server: Any, redis_client: Any
) -> None:
    async def scenario() -> list[int]:
        client = connect_async(redis_server.url)
        store = AsyncRedisEventStore(client, keys=SPACE)
        try:
            first = await asyncio.gather(
                *(store.append(f"f{n}", [b"e"], expected=EMPTY_HEAD, command_id="c1", outcome=b"")
                  for n in range(20))
            )
            redis_client.script_flush()
            second = await asyncio.gather(
                *(store.append(f"f{n}", [b"e"], expected=a.head, command_id="c2", outcome=b"")
                  for n, a in enumerate(first))
            )
            return [a.head.version for a in second]
        finally:
            await client.aclose()

    assert asyncio.run(scenario()) == [2] * 20
