"""All or nothing on a real redis-server: a refused write leaves stream, feed and version.

The script's own guarantees (an error injected after the checks, keys of the wrong type,
arguments it refuses) run here too, through the contract suite
(test_store_contract_redis.py). This module adds what only a real server shows: running
out of memory, and Redis Cluster's rule that a script touches one slot.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
import redis

from services.commands.handler import CommandHandler
from services.redis_runtime import PrivateRedis
from services.store import (
    EMPTY_HEAD,
    RedisEventStore,
    StoreCorrupt,
    StoreUnavailable,
    connect,
)
from services.store.redis_store import APPEND_SCRIPT
from tests.counter import Add, CounterDecider, Note, Open
from tests.integration.conftest import config_set_everywhere
from tests.store_contract import redis_snapshot

pytestmark = pytest.mark.integration


def test_a_server_out_of_memory_refuses_the_whole_append(redis_client: redis.Redis) -> None:
    store = RedisEventStore(redis_client)
    handler = CommandHandler(store, CounterDecider())
    handler.handle("t1", Open(2), command_id="open")
    before = redis_snapshot(redis_client, store, "t1")
    config_set_everywhere(redis_client, "maxmemory", 1)  # noeviction: every write is refused now
    try:
        with pytest.raises(StoreUnavailable, match="memory"):
            handler.handle("t1", Note(0, "x" * 1000), command_id="c1")
        assert redis_snapshot(redis_client, store, "t1") == before
    finally:
        config_set_everywhere(redis_client, "maxmemory", 0)
    assert handler.handle("t1", Add(0, 1), command_id="c1").version == 2


def wait_for_cluster(client: redis.Redis) -> None:
    for _ in range(250):
        info: Any = client.cluster("INFO")
        if info.get("cluster_state") == "ok":
            return
        time.sleep(0.02)
    raise AssertionError("the one-node cluster did not come up")


def test_the_script_touches_one_cluster_slot(redis_factory: Callable[..., PrivateRedis]) -> None:
    """On a cluster node a script flagged with a shebang may only touch keys of the slot
    its KEYS hash to (Redis 7); without the flag Redis lets a node-local key through, so
    the test runs the very same script with the flag to prove it needs nothing else."""
    server = redis_factory(extra_args=["--cluster-enabled", "yes"])
    client = connect(server.url)
    client.cluster("ADDSLOTSRANGE", 0, 16383)
    wait_for_cluster(client)
    strict = RedisEventStore(client, script="#!lua\n" + APPEND_SCRIPT)
    for table_id in ("t1", "t2", "another-table", "z" * 64):
        appended = strict.append(
            table_id, [b"a", b"b"], expected=EMPTY_HEAD, command_id="c1", outcome=b"o"
        )
        assert appended.head.version == 2
    sloppy = "#!lua\nredis.call('SET', 'elsewhere', 1)\n" + APPEND_SCRIPT
    with pytest.raises(StoreCorrupt, match="same slot"):
        RedisEventStore(client, script=sloppy).append(
            "t3", [b"a"], expected=EMPTY_HEAD, command_id="c1", outcome=b"o"
        )
