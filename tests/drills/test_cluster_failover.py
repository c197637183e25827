"""Drill 6: a Redis Cluster primary fails over mid-play, and a node stops answering.

The whole service (as ``mighty serve --cluster`` runs it) on a local cluster of the
drill's own (services/redis_cluster.py: three primaries, three replicas, AOF on,
``cluster-node-timeout`` 1 s), two tables played by their clients through the gateway;
the outage hits the shard that serves the first table (its events, its feed, its views:
one hash slot, docs/store.md):

- ``CLUSTER FAILOVER``, the operator's failover: the replica takes the slots over once
  it has everything, so nothing is lost under any profile;
- the primary killed (SIGKILL): its replica is promoted after the node timeout, and the
  dead node, restarted, rejoins as its replica; under ``replicated`` nothing
  acknowledged is lost (an append is acknowledged only once a replica has it, so the
  shard refuses until the restarted node is its replica); under ``everysec`` the loss is
  counted and reported (drill figures);
- the primary stopped (SIGSTOP) longer than the node timeout, then continued: calls to
  it time out, the cluster promotes the replica meanwhile, and the old primary rejoins as
  a replica when it is continued. Continued, it first runs what was sent to it while it
  was stopped, as the primary it still believes it is, and answers reads from that state
  for a few milliseconds, until it hears of the failover and drops it all: under
  ``replicated`` nothing it took was acknowledged (no replica had it), but a retried
  command may be refused by the rules on that doomed state. The client then acts again
  on its view, as a person would; the drill counts these refusals
  (docs/reliability.md, drill 6).

In every case no part of the service crashes, the probes of the API are answered
``unavailable`` (retryable) or as with the store up, the clients' refusals are only
``unavailable``, the tables finish, and ``mighty verify`` and ``mighty projections check``
pass on the promoted primaries.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from services.redis_cluster import LocalCluster
from tests.drills.outage import Outage, run_outage_drill

pytestmark = pytest.mark.timeout(240)

# What the API answers a probe with the store up: the view, and the prober's command
# refused (it holds no seat at the table).
ANSWERS_UP = frozenset({"200 ok", "403 not_your_seat"})
STOPPED_S = 5.0  # longer than the node timeout (1 s): the cluster fails the node over


def _shard(drill: Outage, cluster: LocalCluster) -> tuple[int, int]:
    return cluster.shard_of(drill.service.space.table(drill.table).events)


@pytest.mark.parametrize("durability", ["replicated", "everysec"])
def test_a_manual_failover_mid_play_loses_nothing_and_play_goes_on(
    tmp_path: Path, cluster: LocalCluster, figures: Any, durability: str,
) -> None:
    async def outage(drill: Outage) -> None:
        _, replica = _shard(drill, cluster)
        drill.began()
        await drill.probe_during(asyncio.to_thread(cluster.fail_over, replica))
        drill.ended()

    found = run_outage_drill(tmp_path, cluster.url, outage, durability=durability, answers_up=ANSWERS_UP)
    figures(durability=durability, failover="CLUSTER FAILOVER", **found.figures())
    assert found.lost == 0


@pytest.mark.parametrize("durability", ["replicated", "everysec"])
def test_a_primary_killed_mid_play_is_replaced_by_its_replica_and_play_goes_on(
    tmp_path: Path, cluster: LocalCluster, figures: Any, durability: str,
) -> None:
    async def outage(drill: Outage) -> None:
        primary, replica = _shard(drill, cluster)
        await asyncio.to_thread(cluster.node(primary).kill, signal.SIGKILL)
        drill.began()

        async def replaced() -> None:
            await asyncio.to_thread(cluster.await_promotion, replica)
            # the dead node restarted, as its supervisor would: it rejoins as the promoted
            # primary's replica (until then ``replicated`` refuses every append there)
            await asyncio.to_thread(cluster.node(primary).start)
            await asyncio.to_thread(cluster.wait_until_ok)

        await drill.probe_during(replaced())
        drill.ended()

    found = run_outage_drill(tmp_path, cluster.url, outage, durability=durability, answers_up=ANSWERS_UP)
    figures(durability=durability, failover="primary SIGKILL", **found.figures())
    if durability == "replicated":
        assert found.lost == 0  # acknowledged means on the replica too


def test_a_primary_stopped_mid_play_times_out_fails_over_and_rejoins_when_continued(
    tmp_path: Path, cluster: LocalCluster, figures: Any,
) -> None:
    async def outage(drill: Outage) -> None:
        primary, replica = _shard(drill, cluster)
        pid = cluster.node(primary).pid
        assert pid is not None
        os.kill(pid, signal.SIGSTOP)
        drill.began()
        try:
            await drill.probe_during(asyncio.sleep(STOPPED_S))
        finally:
            os.kill(pid, signal.SIGCONT)
        await asyncio.to_thread(cluster.await_promotion, replica)
        drill.ended()

    found = run_outage_drill(tmp_path, cluster.url, outage, durability="replicated", answers_up=ANSWERS_UP,
                             refused_by_lost_writes=True)
    figures(durability="replicated", stopped_s=STOPPED_S, **found.figures())
    assert found.lost == 0
