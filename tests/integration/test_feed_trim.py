"""The feed is a queue: trimmed below the slowest kind's checkpoint, never past a kind
that has not passed an entry; rebuilds read the table streams and come out
byte-identical to what the workers stored from the feed."""

from __future__ import annotations

from typing import Any

import pytest

from projections import KINDS
from services.projection.rebuild import rebuild
from services.projection.worker import Worker
from services.store.keys import KeySpace
from tests.integration.workers.support import (
    Tables,
    assert_identical_to_a_rebuild,
    catch_up,
    feed_length,
    in_process_worker,
    store_of,
)

pytestmark = pytest.mark.integration
SPACE = KeySpace(4)


def _retained(client: Any) -> int:
    return sum(int(client.xlen(SPACE.feed(p))) for p in range(SPACE.partitions))


def _nodes(client: Any, partition: int) -> int:
    """The feed's listpack nodes: a node whose entries are only marked deleted keeps its memory."""
    return int(client.xinfo_stream(SPACE.feed(partition))["radix-tree-keys"])


def _catch_up(worker: Worker, client: Any) -> None:
    catch_up(worker, client, SPACE)
    worker._next_maintain = 0.0
    worker.maintain()  # trims


def test_the_feed_is_trimmed_only_below_every_kinds_checkpoint_and_rebuilds_read_the_streams(
        redis_client: Any) -> None:
    tables = Tables(redis_client, SPACE, seed=31)
    tables.open([f"q{i}" for i in range(6)])
    tables.play(hands=1)
    total = feed_length(redis_client, SPACE)
    running = {kind: in_process_worker(redis_client, kind, SPACE, linger_ms=0, block_ms=10) for kind in KINDS}
    for kind in ("views", "ledger", "ratings"):
        _catch_up(running[kind], redis_client)
    assert _retained(redis_client) == total, "directory has passed nothing: nothing is trimmed"
    _catch_up(running["directory"], redis_client)
    assert _retained(redis_client) == 0, "every kind passed it all: the checkpoints' own entries go too"
    assert all(_nodes(redis_client, p) == 0 for p in range(SPACE.partitions)), "no node is left holding its memory"
    tables.play(hands=2)
    for worker in running.values():
        _catch_up(worker, redis_client)
    stored = {(k, p): store_of(redis_client, SPACE, k).docs(p) for k in KINDS for p in range(SPACE.partitions)}
    assert_identical_to_a_rebuild(redis_client, SPACE)  # check folds the streams to the stored checkpoint
    for kind in KINDS:
        for partition in range(SPACE.partitions):
            rebuild(store_of(redis_client, SPACE, kind), partition)
    rebuilt = {(k, p): store_of(redis_client, SPACE, k).docs(p) for k in KINDS for p in range(SPACE.partitions)}
    assert rebuilt == stored, "a rebuild from the table streams writes the very bytes the workers stored"
    for worker in running.values():
        worker.shutdown()
