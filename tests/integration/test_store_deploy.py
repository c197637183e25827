"""deploy/redis.conf and deploy/redis-always.conf start a redis-server with the settings
docs/store.md promises, and differ only in the fsync policy."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from services.redis_runtime import STREAM_NODE_MAX_BYTES, PrivateRedis
from services.store import connect

pytestmark = pytest.mark.integration

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def settings(path: Path) -> dict[str, str]:
    lines = [line.split(None, 1) for line in path.read_text().splitlines()]
    return {
        words[0]: words[1] if len(words) > 1 else ""
        for words in lines
        if words and not words[0].startswith("#")
    }


def test_the_two_profiles_differ_only_in_appendfsync() -> None:
    everysec, always = settings(DEPLOY / "redis.conf"), settings(DEPLOY / "redis-always.conf")
    assert (everysec.pop("appendfsync"), always.pop("appendfsync")) == ("everysec", "always")
    assert everysec == always
    assert everysec["stream-node-max-bytes"] == str(STREAM_NODE_MAX_BYTES)  # as the private servers


@pytest.mark.parametrize(
    ("name", "fsync"), [("redis.conf", "everysec"), ("redis-always.conf", "always")]
)
def test_redis_server_takes_the_deploy_config(
    redis_factory: Callable[..., PrivateRedis], name: str, fsync: str
) -> None:
    # The test's own port, dir and fsync override the file's; the rest is the file's.
    server = redis_factory(config_file=DEPLOY / name, appendfsync=fsync)
    client = connect(server.url)
    config: Any = client.config_get("*")
    assert config["appendonly"] == "yes"
    assert config["appendfsync"] == fsync
    assert config["maxmemory-policy"] == "noeviction"
    assert config["no-appendfsync-on-rewrite"] == "no"
    assert config["save"] == ""
    assert int(config["maxmemory"]) == 1024**3
    assert int(config["stream-node-max-bytes"]) == STREAM_NODE_MAX_BYTES


def test_a_live_tables_stream_costs_a_node_of_2_kb_not_4(redis_factory: Callable[..., PrivateRedis]) -> None:
    """Redis allocates a stream's newest node whole when it begins it: a table of a few
    events costs the node size (docs/capacity.md)."""
    from services.store.base import EMPTY_HEAD
    from services.store.keys import KeySpace
    from services.store.redis_store import RedisEventStore

    server = redis_factory(config_file=DEPLOY / "redis.conf", appendfsync="everysec")
    client = connect(server.url)
    store = RedisEventStore(client, keys=KeySpace(namespace="node"))
    head = EMPTY_HEAD
    for n in range(8):
        head = store.append("t1", [b'{"type":"player_joined","seat":%d}' % n], expected=head,
                            command_id=f"c{n}", outcome=b"{}").head
    used = client.memory_usage(store.keys.table("t1").events, samples=0)
    assert used is not None and 2048 <= used < 3000, used
