"""On a local Redis Cluster (three primaries, three replicas, a cluster of its own per
test): what the durability profiles acknowledge, and what a failover takes.

- ``replicated``: an acknowledged append is on the replica already; with the replica
  gone quiet the append is refused as ``unavailable`` (``NotReplicated``) and its retry
  with the same command id is applied once; a failover then loses nothing acknowledged.
- ``everysec``: the same quiet replica does not hold the append back; the failover that
  promotes that replica loses it although it was acknowledged.
- appends carry on across a failover (MOVED, the slot map asked for again); under
  ``replicated`` a shard left without a replica refuses until one is back.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from typing import Any

import pytest
import redis

from services.commands.handler import AsyncCommandHandler, CommandHandler
from services.redis_cluster import LocalCluster
from services.store import (
    EMPTY_HEAD,
    AsyncRedisEventStore,
    Head,
    RedisEventStore,
    connect,
    connect_async,
)
from services.store.errors import NotReplicated, StoreUnavailable
from services.store.keys import KeySpace
from services.store.redis_store import READ_CHUNK
from tests.counter import Add, CounterDecider, Open, Play

pytestmark = pytest.mark.integration
SPACE = KeySpace(16, namespace="durable")
TIMEOUT_MS = 300


def replica_events(port: int, table_id: str) -> int:
    """How many events of the table a replica holds (read on the replica itself)."""
    client = redis.Redis(host="127.0.0.1", port=port, protocol=2)
    try:
        client.execute_command("READONLY")
        return len(client.xrange(SPACE.table(table_id).events, "-", "+", count=READ_CHUNK))
    finally:
        client.close()


def append_next(store: RedisEventStore, table_id: str, command_id: str) -> Any:
    return store.append(table_id, [command_id.encode()], expected=store.head(table_id),
                        command_id=command_id, outcome=b"{}")


def cut_replica_link(primary: int) -> None:
    """The primary drops its replica's connection (the replica, stopped, cannot come
    back for it): what the primary writes now reaches no replica."""
    client = redis.Redis(host="127.0.0.1", port=primary, protocol=2)
    try:
        client.execute_command("CLIENT", "KILL", "TYPE", "replica")
    finally:
        client.close()


def test_a_replicated_append_is_on_the_replica_when_it_is_acknowledged(cluster: LocalCluster) -> None:
    store = RedisEventStore(connect(cluster.url), keys=SPACE, wait_replicas=1, wait_timeout_ms=TIMEOUT_MS)
    tables = [f"t{n}" for n in range(12)]  # over several partitions, so several primaries
    assert len({cluster.shard_of(SPACE.table(t).events) for t in tables}) == 3
    for table_id in tables:
        for n in range(3):
            append_next(store, table_id, f"{table_id}-c{n}")
        # acknowledged: the replica has it now, not "soon"
        assert replica_events(cluster.shard_of(SPACE.table(table_id).events)[1], table_id) == 3


def test_with_its_replica_quiet_a_replicated_append_is_refused_and_its_retry_applied_once(
    cluster: LocalCluster,
) -> None:
    store = RedisEventStore(connect(cluster.url), keys=SPACE, wait_replicas=1, wait_timeout_ms=TIMEOUT_MS)
    append_next(store, "quiet", "c0")
    _, replica = cluster.shard_of(SPACE.table("quiet").events)
    pid = cluster.node(replica).pid
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)  # the replica stops acknowledging (a partition, a stall)
    try:
        started = time.monotonic()
        with pytest.raises(NotReplicated) as refused:
            append_next(store, "quiet", "c1")
        assert time.monotonic() - started >= TIMEOUT_MS / 1000
        assert isinstance(refused.value, StoreUnavailable) and refused.value.code == "store_unavailable"
        assert "retry with the same command id" in refused.value.message
        assert store.head("quiet").version == 2  # it is stored on the primary, not acknowledged
    finally:
        os.kill(pid, signal.SIGCONT)
    cluster.wait_until_ok()
    retried = store.append("quiet", [b"c1"], expected=Head(1, store.read("quiet")[0].hash),
                           command_id="c1", outcome=b"{}")
    assert retried.duplicate and retried.head.version == 2  # the first outcome, not a second append
    assert [e.command_id for e in store.read("quiet")] == ["c0", "c1"]
    assert replica_events(replica, "quiet") == 2  # and acknowledged only now that the replica has it


def test_through_the_handler_a_command_refused_unreplicated_is_applied_once_when_retried(
    cluster: LocalCluster,
) -> None:
    """What a client sees: ``unavailable``, then the same command id again: the first
    outcome, the table moved by one, not two."""
    store = RedisEventStore(connect(cluster.url), keys=SPACE, wait_replicas=1, wait_timeout_ms=TIMEOUT_MS)
    handler = CommandHandler(store, CounterDecider())
    handler.handle("counted", Open(2), command_id="open")
    _, replica = cluster.shard_of(SPACE.table("counted").events)
    pid = cluster.node(replica).pid
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)
    try:
        with pytest.raises(StoreUnavailable):
            handler.handle("counted", Add(0, 5), command_id="add-5")
    finally:
        os.kill(pid, signal.SIGCONT)
    cluster.wait_until_ok()
    retried = handler.handle("counted", Add(0, 5), command_id="add-5")
    assert retried.duplicate and retried.version == 2
    state, version = handler.state_of("counted")
    assert (state.total, version) == (5, 2)


def test_the_async_store_refuses_a_whole_pipeline_no_replica_acknowledged(cluster: LocalCluster) -> None:
    tables = [f"a{n}" for n in range(20)]
    _, replica = cluster.shard_of(SPACE.table(tables[0]).events)
    stalled = [t for t in tables if cluster.shard_of(SPACE.table(t).events)[1] == replica]
    pid = cluster.node(replica).pid
    assert pid is not None

    async def scenario() -> list[Any]:
        client = connect_async(cluster.url)
        store = AsyncRedisEventStore(client, keys=SPACE, wait_replicas=1, wait_timeout_ms=TIMEOUT_MS)
        try:
            return await asyncio.gather(
                *(store.append(t, [b"e"], expected=EMPTY_HEAD, command_id="c1", outcome=b"{}") for t in tables),
                return_exceptions=True)
        finally:
            await client.aclose()

    os.kill(pid, signal.SIGSTOP)
    try:
        results = dict(zip(tables, asyncio.run(scenario()), strict=True))
    finally:
        os.kill(pid, signal.SIGCONT)
    assert stalled and all(isinstance(results[t], NotReplicated) for t in stalled), results
    assert all(not isinstance(results[t], Exception) for t in tables if t not in stalled), results


@pytest.mark.parametrize(("durability", "acknowledged_then_lost"), [("everysec", 1), ("replicated", 0)])
def test_what_a_failover_takes_of_what_was_acknowledged(
    cluster: LocalCluster, durability: str, acknowledged_then_lost: int
) -> None:
    """The replica falls behind (stopped, its link cut), an append comes, the primary
    dies, the stale replica is promoted: everysec had acknowledged the append and it is
    gone; replicated had refused it (``unavailable``): nothing acknowledged is lost."""
    store = RedisEventStore(connect(cluster.url), keys=SPACE, wait_replicas=1, wait_timeout_ms=TIMEOUT_MS)
    for n in range(5):
        append_next(store, "doomed", f"c{n}")  # on the replica too (acknowledged by it)
    acknowledged = [f"c{n}" for n in range(5)]
    profile = RedisEventStore(connect(cluster.url), keys=SPACE, wait_timeout_ms=TIMEOUT_MS,
                              wait_replicas=1 if durability == "replicated" else 0)
    primary, replica = cluster.shard_of(SPACE.table("doomed").events)
    pid = cluster.node(replica).pid
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)
    try:
        cut_replica_link(primary)
        try:
            append_next(profile, "doomed", "c5")
            acknowledged.append("c5")
        except NotReplicated:
            pass
        cluster.node(primary).kill(signal.SIGKILL)  # before the replica could catch up
    finally:
        os.kill(pid, signal.SIGCONT)
    cluster.await_promotion(replica)
    kept = [e.command_id for e in RedisEventStore(connect(cluster.url), keys=SPACE).read("doomed")]
    lost = [c for c in acknowledged if c not in kept]
    assert len(lost) == acknowledged_then_lost, (acknowledged, kept)
    assert kept == [f"c{n}" for n in range(5)]


def test_appends_carry_on_through_a_failover(cluster: LocalCluster) -> None:
    """The primary of a table's slot dies mid-run: appends fail as unavailable (never as
    anything else) for the seconds the failover takes, then land on the promoted
    replica, and every acknowledged one is there."""
    replicated = RedisEventStore(connect(cluster.url), keys=SPACE, wait_replicas=1, wait_timeout_ms=TIMEOUT_MS)
    acknowledged = [f"c{n}" for n in range(5)]
    for command_id in acknowledged:
        append_next(replicated, "moving", command_id)
    primary, replica = cluster.shard_of(SPACE.table("moving").events)
    store = RedisEventStore(connect(cluster.url), keys=SPACE)  # everysec: the shard has no replica left
    cluster.node(primary).kill(signal.SIGKILL)
    n, refused, deadline = 5, 0, time.monotonic() + 60
    while len(acknowledged) < 15 and time.monotonic() < deadline:
        try:
            append_next(store, "moving", f"c{n}")
            acknowledged.append(f"c{n}")
            n += 1
        except StoreUnavailable:
            refused += 1  # retried with the same id, as a client does
    assert len(acknowledged) == 15, f"no append landed after the failover ({refused} refused)"
    assert cluster.roles().get(replica) == "master"
    assert [e.command_id for e in store.read("moving")] == acknowledged


def test_replicated_refuses_while_a_shard_has_no_replica_and_accepts_once_one_is_back(
    cluster: LocalCluster,
) -> None:
    store = RedisEventStore(connect(cluster.url), keys=SPACE, wait_replicas=1, wait_timeout_ms=TIMEOUT_MS)
    append_next(store, "alone", "c0")
    primary, replica = cluster.shard_of(SPACE.table("alone").events)
    cluster.node(primary).kill(signal.SIGKILL)
    cluster.await_promotion(replica)
    with pytest.raises(NotReplicated):  # the promoted primary has no replica of its own
        append_next(store, "alone", "c1")
    cluster.node(primary).start()  # back from its AOF and nodes.conf: the new primary's replica
    cluster.wait_until_ok()
    deadline = time.monotonic() + 30
    while cluster.shard_of(SPACE.table("alone").events) != (replica, primary):
        assert time.monotonic() < deadline, "the old primary did not come back as the replica"
        time.sleep(0.1)
    # The same id, as a client retries an `unavailable`: refused while the returning
    # replica is still syncing (a loaded machine takes seconds), then acknowledged, once.
    while True:
        try:
            retried = append_next(store, "alone", "c1")
            break
        except NotReplicated:
            assert time.monotonic() < deadline, "no replica acknowledged within 30 s of its return"
            time.sleep(0.2)
    assert retried.duplicate
    append_next(store, "alone", "c2")
    assert [e.command_id for e in store.read("alone")] == ["c0", "c1", "c2"]


def test_a_retry_is_not_acknowledged_from_the_outcome_record_while_no_replica_has_it(
    cluster: LocalCluster,
) -> None:
    """The first try of a command wrote and no replica acknowledged it (``unavailable``);
    its retries, which find the command's outcome record (a duplicate) or the table moved
    on by it (a conflict, then a refusal by the rules and the record), are refused as
    ``unavailable`` too, through the sync and the async store, until a replica has it:
    a command is never acknowledged from a write a failover could still lose."""
    store = RedisEventStore(connect(cluster.url), keys=SPACE, wait_replicas=1, wait_timeout_ms=TIMEOUT_MS)
    handler = CommandHandler(store, CounterDecider())
    handler.handle("fenced", Open(2), command_id="open")
    _, replica = cluster.shard_of(SPACE.table("fenced").events)
    pid = cluster.node(replica).pid
    assert pid is not None

    async def async_retry() -> Any:
        client = connect_async(cluster.url)
        try:
            astore = AsyncRedisEventStore(client, keys=SPACE, wait_replicas=1, wait_timeout_ms=TIMEOUT_MS)
            return await AsyncCommandHandler(astore, CounterDecider()).handle("fenced", Play(0), command_id="play")
        finally:
            await client.aclose()

    os.kill(pid, signal.SIGSTOP)
    try:
        cut_replica_link(cluster.shard_of(SPACE.table("fenced").events)[0])
        with pytest.raises(StoreUnavailable):
            handler.handle("fenced", Play(0), command_id="play")
        with pytest.raises(StoreUnavailable):
            handler.handle("fenced", Play(0), command_id="play")  # the record found: not believed yet
        with pytest.raises(StoreUnavailable):
            CommandHandler(store, CounterDecider()).handle("fenced", Play(0), command_id="play")  # fresh cache
        with pytest.raises(StoreUnavailable):
            asyncio.run(async_retry())
    finally:
        os.kill(pid, signal.SIGCONT)
    cluster.wait_until_ok()
    retried = handler.handle("fenced", Play(0), command_id="play")
    assert retried.duplicate and retried.version == 2
