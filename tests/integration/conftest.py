"""Integration fixtures: a fresh private redis-server per test, never the shared one.

Each server runs on a free port of 127.0.0.1 in the test's temp dir and is stopped after
the test. A machine without redis-server fails these tests (CI installs it): they must
not silently turn into skips.

With ``MIGHTY_TEST_CLUSTER=1`` (``make test-cluster``) ``redis_server`` is instead a local
Redis Cluster (services/redis_cluster.py: three primaries, three replicas), started once
per session and emptied before each test (every key unlinked, every node's script cache
flushed, as a fresh server's), so the same tests run against the cluster clients. Its
``kill``, ``start``, ``stop`` and ``restart`` act on every node. A test about one
redis-server process itself (its port, its pid: ``@pytest.mark.single_node``) and the
servers ``redis_factory`` starts with options of their own stay single redis-servers.
"""

from __future__ import annotations

import os
import shutil
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
import structlog
from redis.cluster import RedisCluster

from services.redis_cluster import LocalCluster, start_local_cluster
from services.redis_runtime import PrivateRedis, start_private_redis
from services.store import connect
from tests.integration.postgres import archive_url, postgres_server  # noqa: F401 (the archive's fixtures)

CLUSTER = os.environ.get("MIGHTY_TEST_CLUSTER", "") == "1"


@pytest.fixture(autouse=True)
def plain_logging() -> None:
    """structlog's defaults: a CLI test run in this process may have pointed the global
    setup at a captured stream that pytest has closed since."""
    structlog.reset_defaults()


def _require_redis_server() -> None:
    if shutil.which("redis-server") is None:
        pytest.fail("redis-server is not on the PATH: install it (make redis-server)")


class ClusterServer:
    """``redis_server`` on the local cluster: its URL, and what a test does to "the
    server" done to every node (a crash of all six, a restart from their AOFs)."""

    def __init__(self, cluster: LocalCluster) -> None:
        self.cluster = cluster

    @property
    def url(self) -> str:
        return self.cluster.url

    def running(self) -> bool:
        return self.cluster.running()

    def kill(self, sig: int = signal.SIGKILL) -> None:
        self.cluster.kill(sig)

    def stop(self) -> None:
        self.cluster.stop()

    def start(self) -> None:
        self.cluster.start()

    def restart(self) -> None:
        self.cluster.restart()


@pytest.fixture(scope="session")
def local_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    _require_redis_server()
    cluster = start_local_cluster(tmp_path_factory.mktemp("cluster"))
    try:
        yield cluster
    finally:
        cluster.stop()


def config_set_everywhere(client: Any, name: str, value: object) -> None:
    """CONFIG SET on the server, or on every node of a cluster (a cluster client sends
    CONFIG SET to one node unless told otherwise)."""
    if isinstance(client, RedisCluster):
        client.config_set(name, value, target_nodes=RedisCluster.ALL_NODES)
    else:
        client.config_set(name, value)


def empty_cluster(cluster: LocalCluster) -> None:
    """Every key of every primary unlinked (the replicas follow), every node's script
    cache flushed: the cluster as fresh as a new server, without FLUSHALL."""
    if not cluster.running():
        cluster.start()
    cluster.wait_until_ok()
    roles = cluster.roles()
    for node in cluster.nodes:
        client = redis.Redis(host="127.0.0.1", port=node.port, protocol=2)
        try:
            if roles.get(node.port) == "master":
                keys = list(client.scan_iter(count=1000))
                for start in range(0, len(keys), 500):
                    pipe = client.pipeline(transaction=False)
                    for key in keys[start:start + 500]:
                        pipe.unlink(key)
                    pipe.execute()
            client.script_flush()
            client.config_set("maxmemory", 0)
        finally:
            client.close()


@pytest.fixture
def redis_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    _require_redis_server()
    if CLUSTER and request.node.get_closest_marker("single_node") is None:
        cluster: LocalCluster = request.getfixturevalue("local_cluster")
        empty_cluster(cluster)
        yield ClusterServer(cluster)
        if not cluster.running():  # a test stopped it: the next one finds it up
            cluster.start()
        return
    server = start_private_redis(tmp_path / "redis", appendonly=True, appendfsync="everysec")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def redis_client(redis_server: PrivateRedis) -> Iterator[Any]:
    client = connect(redis_server.url)
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def redis_factory(tmp_path: Path) -> Iterator[Callable[..., PrivateRedis]]:
    """Start private servers with other settings (``appendfsync="always"``); all stopped after."""
    _require_redis_server()
    started: list[PrivateRedis] = []

    def start(**options: object) -> PrivateRedis:
        server = start_private_redis(tmp_path / f"redis-{len(started)}", **options)  # type: ignore[arg-type]
        started.append(server)
        return server

    try:
        yield start
    finally:
        for server in started:
            server.stop()



def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On the cluster tier (``MIGHTY_TEST_CLUSTER=1``), a test that meets no cluster (no
    ``redis_server`` nor ``local_cluster`` among its fixtures, or marked ``single_node``)
    would run exactly as it did in ``make test``: it is left out of that tier, not run twice."""
    if not CLUSTER:
        return
    kept: list[pytest.Item] = []
    again: list[pytest.Item] = []
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        on_cluster = (("redis_server" in names and item.get_closest_marker("single_node") is None)
                      or "local_cluster" in names)
        (kept if on_cluster else again).append(item)
    if again:
        config.hook.pytest_deselected(items=again)
        items[:] = kept
