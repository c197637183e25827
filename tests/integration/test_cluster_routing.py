"""How the cluster clients route the workers' stream reads and script calls: by the keys
the command names, with no ``COMMAND GETKEYS`` round trip to a node before each one."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from services.redis_cluster import LocalCluster
from services.store import connect, connect_async
from services.store.cluster import evalsha_many

pytestmark = pytest.mark.integration

_ECHO = "return redis.call('XLEN', KEYS[1]) .. ':' .. ARGV[1]"


def _getkeys_calls(client: Any) -> int:
    found = 0
    for node in client.get_nodes():
        stats = client.info("commandstats", target_nodes=node)
        found += int(stats.get("cmdstat_command|getkeys", {}).get("calls", 0))
    return found


def test_stream_reads_and_script_calls_on_a_cluster_ask_no_node_for_their_keys(local_cluster: LocalCluster) -> None:
    client: Any = connect(local_cluster.url)
    feeds = [f"routing:{{p{p:02d}}}:feed" for p in range(16)]
    try:
        for feed in feeds:
            client.xadd(feed, {"n": feed})
            client.xgroup_create(feed, "g", id="0", mkstream=True)
        before = _getkeys_calls(client)
        pipe = client.pipeline(transaction=False)
        for feed in feeds:
            pipe.xreadgroup("g", "c", {feed: ">"}, count=10)
        replies = pipe.execute()
        assert [reply[0][1][0][1][b"n"].decode() for reply in replies] == feeds  # each read its own feed
        assert client.xreadgroup("g", "c", {feeds[0]: "0"}, count=10)[0][0] == feeds[0].encode()
        sha = client.script_load(_ECHO)
        answers = evalsha_many(client, _ECHO, sha, [([feed], [n]) for n, feed in enumerate(feeds)])
        assert answers == [f"1:{n}".encode() for n in range(16)]
        assert _getkeys_calls(client) == before

        async def through_the_asyncio_client() -> list[Any]:
            aclient: Any = connect_async(local_cluster.url)
            try:
                apipe = aclient.pipeline(transaction=False)
                for n, feed in enumerate(feeds):
                    apipe.execute_command("EVALSHA", sha, 1, feed, n)
                return list(await apipe.execute())
            finally:
                await aclient.aclose()

        assert asyncio.run(through_the_asyncio_client()) == answers
        assert _getkeys_calls(client) == before
    finally:
        for feed in feeds:
            client.delete(feed)
        client.close()
