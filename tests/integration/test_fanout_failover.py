"""The fan-out hub on a Redis Cluster whose node fails over (services/projection/fanout.py,
"Redis Cluster"): a follower of a view on the failed shard follows on on the promoted
replica, whether the old primary said so (``CLUSTER FAILOVER``: it unsubscribes its
shard channels) or died (SIGKILL: the link's connection is lost and the slot map, asked
again, names the replica). Nothing published after the failover is missed: the follower
gets the message or, subscribed again, re-reads the stored view. Each test on a local
cluster of its own (services/redis_cluster.py)."""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import AsyncGenerator

import msgspec
import pytest
import redis

from services.projection.fanout import FanoutHub
from services.projection.notify import channel_of, follow_async
from services.redis_cluster import LocalCluster
from services.store import KeySpace, connect, connect_async

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]
SPACE = KeySpace(16, namespace="fanover")


def _doc(version: int) -> bytes:
    return msgspec.json.encode({"version": version})


def _version(data: bytes) -> int:
    return int(msgspec.json.decode(data)["version"])


def _store_and_publish(url: str, channel: str, version: int, timeout_s: float = 30.0) -> None:
    """What the views worker does for a view (SET, then SPUBLISH), retried through the
    failover as the worker's batch is."""
    deadline = time.monotonic() + timeout_s
    while True:
        client = connect(url, retries=0)
        try:
            client.set(channel, _doc(version))
            client.execute_command("SPUBLISH", channel, _doc(version))
            return
        except (redis.RedisError, OSError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
        finally:
            client.close()


@pytest.mark.parametrize("failover", ["CLUSTER FAILOVER", "primary SIGKILL"])
def test_a_follower_of_a_failed_over_shard_follows_on_on_the_promoted_replica(
    cluster: LocalCluster, failover: str
) -> None:
    channel = channel_of(SPACE, "t1", "0")
    _store_and_publish(cluster.url, channel, 1)

    async def main() -> list[int]:
        client = connect_async(cluster.url)
        hub = FanoutHub.on(client, keepalive_s=0.5)
        follower: AsyncGenerator[bytes, None] = follow_async(client, SPACE, "t1", "0", 0, hub)
        try:
            seen = [_version(await asyncio.wait_for(anext(follower), 10))]
            primary, replica = cluster.shard_of(channel)
            if failover == "CLUSTER FAILOVER":
                await asyncio.to_thread(cluster.fail_over, replica)
            else:
                await asyncio.to_thread(cluster.node(primary).kill, signal.SIGKILL)
                await asyncio.to_thread(cluster.await_promotion, replica)
            for version in (2, 3):
                await asyncio.to_thread(_store_and_publish, cluster.url, channel, version)
                while seen[-1] < version:
                    seen.append(_version(await asyncio.wait_for(anext(follower), 30)))
            return seen
        finally:
            await follower.aclose()
            await hub.aclose()
            await client.aclose()

    seen = asyncio.run(main())
    assert seen == [1, 2, 3]
