"""A local Redis Cluster for one run: six ``redis-server`` nodes on loopback.

``start_local_cluster`` starts three primaries and three replicas (``PrivateRedis``, of
``services/redis_runtime.py``: free ports of 127.0.0.1, a directory each, AOF on with the
durability profile's fsync), forms the cluster with ``redis-cli --cluster create ...
--cluster-replicas 1 --cluster-yes``, and waits until every node says
``cluster_state:ok``, knows all six, and every replica's link to its primary is up. Its
``url`` (``redis+cluster://127.0.0.1:<port>,...``) is what ``REDIS_URL`` takes
(docs/store.md, "Redis Cluster"). It never touches the machine's shared Redis.

Used by the tests (``MIGHTY_TEST_CLUSTER=1``, ``make test-cluster``), by ``mighty serve
--cluster`` and ``mighty bench load --cluster``, and by ``deploy/cluster/local-cluster``
(``python -m services.redis_cluster``: start, print the URL, stop on Ctrl-C).
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import redis
import structlog

from services.redis_runtime import PrivateRedis, RedisStartError, free_port

log = structlog.get_logger("mighty.redis")

PRIMARIES: Final = 3
REPLICAS_PER_PRIMARY: Final = 1
# How long a node may be unreachable before the others count it failed and its replica
# takes over (Redis's default is 15 s; a local cluster fails over in about 2 s).
NODE_TIMEOUT_MS: Final = 1000
_FORM_TIMEOUT_S: Final = 30.0


def cluster_url(addresses: Sequence[tuple[str, int]]) -> str:
    """The ``REDIS_URL`` of a cluster whose nodes (any of them; the primaries suffice)
    listen at ``addresses``."""
    return "redis+cluster://" + ",".join(f"{host}:{port}" for host, port in addresses)


def _two_free_ports() -> tuple[int, int]:
    """A port for clients and one for the cluster bus (``cluster-port``)."""
    while True:
        first, second = free_port(), free_port()
        if first != second:
            return first, second


@dataclass
class LocalCluster:
    """Six nodes of one cluster, owned by this program. ``nodes[:3]`` are the primaries
    the cluster was created with (a failover may promote a replica since: ``roles``)."""

    dir: Path
    appendfsync: str = "everysec"
    node_timeout_ms: int = NODE_TIMEOUT_MS
    own_session: bool = False  # each node in a session of its own (PrivateRedis)
    nodes: list[PrivateRedis] = field(default_factory=list)

    @property
    def url(self) -> str:
        return cluster_url([("127.0.0.1", node.port) for node in self.nodes[:PRIMARIES]])

    def start(self) -> None:
        """Start the nodes and form the cluster (or, restarted on the same dirs, wait for
        it to come back from its ``nodes.conf``)."""
        fresh = not self.nodes
        if fresh:
            for index in range(PRIMARIES * (1 + REPLICAS_PER_PRIMARY)):
                port, bus = _two_free_ports()
                self.nodes.append(PrivateRedis(
                    self.dir / f"node-{index}", appendonly=True, appendfsync=self.appendfsync, port=port,
                    own_session=self.own_session,
                    extra_args=["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                                "--cluster-node-timeout", str(self.node_timeout_ms),
                                "--cluster-port", str(bus),
                                # a replica syncs at once (the default waits 5 s for others)
                                "--repl-diskless-sync-delay", "0"]))
        try:
            for node in self.nodes:
                node.start()
            if fresh:
                self._create()
            self.wait_until_ok()
        except BaseException:
            self.stop()
            raise

    def _create(self) -> None:
        binary = shutil.which("redis-cli")
        if binary is None:
            raise RedisStartError("redis-cli is not on the PATH (it forms the cluster)")
        addresses = [f"127.0.0.1:{node.port}" for node in self.nodes]
        done = subprocess.run(
            [binary, "--cluster", "create", *addresses, "--cluster-replicas", str(REPLICAS_PER_PRIMARY),
             "--cluster-yes"],
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=_FORM_TIMEOUT_S, check=False)
        if done.returncode != 0:
            raise RedisStartError(f"redis-cli --cluster create failed: {done.stdout[-2000:]} {done.stderr[-2000:]}")

    def wait_until_ok(self, timeout_s: float = _FORM_TIMEOUT_S) -> None:
        """Until every running node says ``cluster_state:ok``, knows every node, and each
        replica's link to its primary is up (a write can then reach a replica: WAIT)."""
        deadline = time.monotonic() + timeout_s
        problem: str | None = "not asked yet"
        while time.monotonic() < deadline:
            problem = self._not_ok()
            if problem is None:
                return
            time.sleep(0.05)
        raise RedisStartError(f"the local cluster did not come up in {timeout_s} s: {problem}")

    def _not_ok(self) -> str | None:
        running = [node for node in self.nodes if node.running()]
        for node in running:
            client = redis.Redis(host="127.0.0.1", port=node.port, protocol=2, socket_timeout=1.0,
                                 decode_responses=True)
            try:
                info = client.cluster("INFO")  # parsed by redis-py into a dict
                if info.get("cluster_state") != "ok":
                    return f"node {node.port}: cluster state not ok"
                if str(info.get("cluster_known_nodes")) != str(len(self.nodes)):
                    return f"node {node.port} does not know every node yet"
                replication = client.info("replication")
                if replication.get("role") == "slave" and replication.get("master_link_status") != "up":
                    return f"replica {node.port}: link to its primary not up"
                if replication.get("role") == "master" and int(replication.get("connected_slaves", 0)) \
                        < self._replicas_expected(node, running):
                    return f"primary {node.port}: replica not connected"
                if len(running) == len(self.nodes):  # every node's slot map shows each replica
                    shards: Any = client.cluster("SLOTS")
                    if any(len(shard) < 3 + REPLICAS_PER_PRIMARY for shard in shards):
                        return f"node {node.port} does not know every replica yet"
            except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError) as error:
                return f"node {node.port}: {error}"
            finally:
                client.close()
        return None

    def _replicas_expected(self, node: PrivateRedis, running: list[PrivateRedis]) -> int:
        # a primary whose replica is down (a test stopped it) has none to wait for
        return REPLICAS_PER_PRIMARY if len(running) == len(self.nodes) else 0

    def roles(self) -> dict[int, str]:
        """Port -> ``master`` or ``slave``, as each running node says now."""
        found: dict[int, str] = {}
        for node in self.nodes:
            if not node.running():
                continue
            client = redis.Redis(host="127.0.0.1", port=node.port, protocol=2, socket_timeout=1.0,
                                 decode_responses=True)
            try:
                found[node.port] = str(client.info("replication").get("role"))
            finally:
                client.close()
        return found

    def node(self, port: int) -> PrivateRedis:
        return next(node for node in self.nodes if node.port == port)

    def shard_of(self, key: str) -> tuple[int, int]:
        """The ports of the primary serving ``key``'s hash slot and of its replica, as the
        primary itself says (a node that is not the primary may lag behind a failover)."""
        from services.store.cluster import slot_of

        slot = slot_of(key)
        for node in (n for n in self.nodes if n.running()):
            client: Any = redis.Redis(host="127.0.0.1", port=node.port, protocol=2, socket_timeout=1.0)
            try:
                for start, end, primary, *replicas in client.execute_command("CLUSTER SLOTS"):
                    if int(start) <= slot <= int(end) and int(primary[1]) == node.port and replicas:
                        return int(primary[1]), int(replicas[0][1])
            except (redis.ConnectionError, redis.TimeoutError):
                continue  # stopped (SIGSTOP): another node answers
            finally:
                client.close()
        raise RedisStartError(f"no primary with a replica says it serves slot {slot}")

    def await_promotion(self, replica: int, timeout_s: float = 30.0) -> None:
        """Until ``replica`` is a primary and every running node says the cluster is ok."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.roles().get(replica) == "master":
                self.wait_until_ok(timeout_s=max(1.0, deadline - time.monotonic()))
                return
            time.sleep(0.1)
        raise RedisStartError(f"replica {replica} was not promoted in {timeout_s} s")

    def fail_over(self, replica: int, timeout_s: float = 30.0) -> None:
        """A manual failover (``CLUSTER FAILOVER`` sent to ``replica``: its primary stops
        taking writes, the replica catches up, then takes the slots over), waited for."""
        client: Any = redis.Redis(host="127.0.0.1", port=replica, protocol=2, socket_timeout=5.0)
        try:
            client.execute_command("CLUSTER FAILOVER")
        finally:
            client.close()
        self.await_promotion(replica, timeout_s)

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def kill(self, sig: int = signal.SIGKILL) -> None:
        for node in self.nodes:
            node.kill(sig)

    def restart(self) -> None:
        """Stop every node and start them again on their dirs and AOFs: the cluster comes
        back from each node's ``nodes.conf``."""
        self.stop()
        self.start()

    def running(self) -> bool:
        return all(node.running() for node in self.nodes)


def start_local_cluster(dir: Path, *, appendfsync: str = "everysec",
                        node_timeout_ms: int = NODE_TIMEOUT_MS, own_session: bool = False) -> LocalCluster:
    """Start six nodes in ``dir`` and form a cluster (``LocalCluster``); on a port race
    (a free port taken meanwhile) try again with other ports."""
    for attempt in range(3):
        cluster = LocalCluster(dir / f"cluster-{attempt}", appendfsync=appendfsync, node_timeout_ms=node_timeout_ms,
                               own_session=own_session)
        try:
            cluster.start()
            log.info("local cluster started", url=cluster.url, dir=str(cluster.dir))
            return cluster
        except RedisStartError:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


@contextlib.contextmanager
def local_cluster(appendfsync: str = "everysec") -> Iterator[LocalCluster]:
    """A local cluster in a temp dir, stopped and removed when the block ends."""
    with tempfile.TemporaryDirectory(prefix="mighty-cluster-") as dir:
        cluster = start_local_cluster(Path(dir), appendfsync=appendfsync)
        try:
            yield cluster
        finally:
            cluster.stop()


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m services.redis_cluster [--appendfsync always|everysec]``: start a
    local cluster, print its URL, keep it until SIGINT/SIGTERM, then stop it and remove
    its data (deploy/cluster/local-cluster)."""
    import argparse

    parser = argparse.ArgumentParser(prog="local-cluster", description=main.__doc__)
    parser.add_argument("--appendfsync", default="everysec", choices=("everysec", "always", "no"))
    args = parser.parse_args(argv)
    from services.logs import configure_logging

    configure_logging()  # to stderr: standard output is the URL alone
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    with local_cluster(args.appendfsync) as cluster:
        sys.stdout.write(cluster.url + "\n")
        sys.stdout.flush()
        sys.stderr.write(f"local cluster: 3 primaries, 3 replicas, data in {cluster.dir}; Ctrl-C stops it\n")
        sys.stderr.flush()
        while not stop.wait(0.5):
            if not cluster.running():
                sys.stderr.write("local cluster: a node exited; stopping\n")
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
