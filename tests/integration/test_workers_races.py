"""Worker races driven step by step in this process, against a real redis-server: a
worker that lost its lease reading once more, and an outage met mid-fold."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from services.projection.read import wait_until
from services.projection.rebuild import rebuild
from services.projection.store import Applied
from services.projection.worker import Worker
from services.store.keys import KeySpace
from services.store.redis_store import RedisEventStore, connect
from tests.integration.workers.support import (
    Tables,
    applied,
    assert_identical_to_a_rebuild,
    feed_length,
    in_process_worker,
    read_not_applied,
    store_of,
    wait_for,
)

pytestmark = pytest.mark.integration
ONE = KeySpace(1)  # one partition: every table's entries share a feed
SPACE = KeySpace(16)


def _worker(client: Any, kind: str, space: KeySpace = ONE) -> Worker:
    # a long lease: maintain() runs on the first step only, unless a test asks again
    return in_process_worker(client, kind, space, lease_ms=60_000, linger_ms=0, block_ms=10)


def test_entries_read_by_a_worker_that_lost_its_lease_are_not_skipped_by_the_new_owner(
    redis_client: Any,
) -> None:
    tables = Tables(redis_client, ONE, seed=21)
    tables.open(["s000"])
    first = _worker(redis_client, "directory")
    while applied(redis_client, ONE, "directory") < feed_length(redis_client, ONE):
        first.step()
    # A rebuild fences the owner and frees the lease; a second worker, under its share,
    # takes the partition before the first one's next maintain() notices.
    rebuild(store_of(redis_client, ONE, "directory"), 0)
    second = _worker(redis_client, "directory")
    second.maintain()
    assert 0 in second.owned and 0 in first.owned
    tables.open(["s001"])
    first.step()  # still thinks it owns the partition: reads s001's entries, is fenced
    assert 0 not in first.owned, "fenced: its batch was refused"
    assert read_not_applied(redis_client, ONE, "directory") == 0, "its read moved nothing the new owner reads by"
    tables.open(["s002"])
    for _ in range(5):
        second.step()
    assert applied(redis_client, ONE, "directory") == feed_length(redis_client, ONE), "every entry, once"
    assert read_not_applied(redis_client, ONE, "directory") == 0
    assert_identical_to_a_rebuild(redis_client, ONE, ("directory",))
    second.shutdown()


def _entries_read(client: Any, space: KeySpace, kind: str, partition: int) -> int:
    keys = store_of(client, space, kind).keys
    return int(next(g for g in client.xinfo_groups(keys.feed(partition)) if g["name"].decode() == keys.group)
               ["entries-read"])


def test_a_worker_reads_the_feed_writing_nothing_and_its_group_trails_its_checkpoint(redis_client: Any) -> None:
    # XREAD from the checkpoint the worker holds: the stored checkpoint is the one record of
    # what was applied, and a read writes nothing, so Redis logs nothing for it (no XCLAIM,
    # no XACK, no XGROUP SETID; docs/workers.md, "Delivery"). The group only shows operators
    # how far the kind is, set to the checkpoint every group_every_s.
    tables = Tables(redis_client, ONE, seed=24)
    tables.open(["n000", "n001"])
    worker = in_process_worker(redis_client, "ledger", ONE, lease_ms=60_000, linger_ms=0, block_ms=10,
                               group_every_s=3600.0)
    worker.maintain()
    keys = worker.store.keys
    taken_at = _entries_read(redis_client, ONE, "ledger", 0)
    before = _dumps(redis_client)
    read = worker.read()
    assert sum(len(entries) for _, entries in read) == feed_length(redis_client, ONE)
    assert _dumps(redis_client) == before, "a read writes nothing"
    assert int(redis_client.xpending(keys.feed(0), keys.group)["pending"]) == 0
    worker.process(read)
    assert applied(redis_client, ONE, "ledger") == feed_length(redis_client, ONE)
    assert _entries_read(redis_client, ONE, "ledger", 0) == taken_at, "the group moves on its own time"
    worker.group_every_s = 0.0
    worker._next_group = worker._next_maintain = 0.0
    worker.maintain()
    assert _entries_read(redis_client, ONE, "ledger", 0) == worker.store.checkpoint(0).count
    worker.shutdown()


def test_a_worker_taking_over_after_another_read_entries_without_applying_them_applies_each_once(
    redis_client: Any,
) -> None:
    tables = Tables(redis_client, ONE, seed=25)
    tables.open(["t000", "t001"])
    first = _worker(redis_client, "directory")
    while applied(redis_client, ONE, "directory") < feed_length(redis_client, ONE):
        first.step()
    tables.open(["t002", "t003"])
    # The first worker reads the new entries, then dies before it applies them: its read
    # moved nothing, and the next owner reads from the stored checkpoint.
    stranded = first.read()
    assert sum(len(entries) for _, entries in stranded) > 0
    first.shutdown()  # its lease is free at once (a SIGKILL would wait for it to expire)
    assert read_not_applied(redis_client, ONE, "directory") == 0, "a read moves no group"
    second = _worker(redis_client, "directory")
    second.maintain()  # takes the partition: the group set to the checkpoint
    assert 0 in second.owned and read_not_applied(redis_client, ONE, "directory") == 0
    assert _entries_read(redis_client, ONE, "directory", 0) == second.store.checkpoint(0).count
    for _ in range(5):
        second.step()
    store = store_of(redis_client, ONE, "directory")
    assert store.checkpoint(0).count == feed_length(redis_client, ONE), "every entry, once"
    assert_identical_to_a_rebuild(redis_client, ONE, ("directory",))
    second.shutdown()


def test_a_batch_that_does_not_start_right_after_the_checkpoint_is_refused_writing_nothing_and_the_worker_recovers(
    redis_client: Any,
) -> None:
    tables = Tables(redis_client, ONE, seed=26)
    tables.open(["g000"])
    worker = _worker(redis_client, "directory")
    while applied(redis_client, ONE, "directory") < feed_length(redis_client, ONE):
        worker.step()
    tables.open(["g001", "g002"])
    keys = worker.store.keys
    # A read that does not start at the checkpoint (a fault of the worker's own: the feed
    # lost no entry) passes over the first new entries: the script must refuse its batch.
    skipped = redis_client.xrange(keys.feed(0), f"({worker.owned[0].checkpoint.id}", "+", count=2)
    assert len(skipped) == 2
    read = worker.store.read_new({0: skipped[1][0].decode()}, 10_000, 10)
    assert read and read[0][1][0].id != skipped[0][0].decode()
    answers: list[Applied] = []
    after_refusal: list[dict[bytes, bytes]] = []
    store_apply = worker.store.apply

    def apply_and_look(*args: Any, **kwargs: Any) -> list[Applied]:
        found = store_apply(*args, **kwargs)
        answers.extend(found)
        after_refusal.append(_dumps(redis_client))
        return found

    before = _dumps(redis_client)
    worker.store.apply = apply_and_look  # type: ignore[method-assign]
    worker.process(read)
    worker.store.apply = store_apply  # type: ignore[method-assign]
    assert [a.status for a in answers] == ["gap"]
    assert after_refusal == [before], "a refused batch writes nothing"
    assert 0 in worker.owned, "the lease is still the worker's: it reads again from the checkpoint"
    for _ in range(5):
        worker.step()
    assert worker.store.checkpoint(0).count == feed_length(redis_client, ONE), "every entry, once"
    assert_identical_to_a_rebuild(redis_client, ONE, ("directory",))
    worker.shutdown()


def test_a_consumer_an_earlier_release_left_holding_pending_entries_is_removed_when_a_worker_takes_the_partition(
    redis_client: Any,
) -> None:
    tables = Tables(redis_client, ONE, seed=27)
    tables.open(["c000", "c001"])
    keys = store_of(redis_client, ONE, "ledger").keys
    redis_client.xgroup_create(keys.feed(0), keys.group, id="0-0", mkstream=True)
    # a worker of an earlier release read without NOACK and died before acknowledging
    redis_client.xreadgroup(keys.group, "earlier-release", {keys.feed(0): ">"}, count=3)
    assert int(redis_client.xpending(keys.feed(0), keys.group)["pending"]) == 3
    time.sleep(0.3)  # idle longer than the lease below
    worker = in_process_worker(redis_client, "ledger", ONE, lease_ms=200, linger_ms=0, block_ms=10)
    worker.maintain()
    names = [c["name"].decode() for c in redis_client.xinfo_consumers(keys.feed(0), keys.group)]
    assert "earlier-release" not in names
    assert int(redis_client.xpending(keys.feed(0), keys.group)["pending"]) == 0
    for _ in range(5):
        worker.step()
    assert worker.store.checkpoint(0).count == feed_length(redis_client, ONE), "every entry, once"
    assert_identical_to_a_rebuild(redis_client, ONE, ("ledger",))
    worker.shutdown()


def _dumps(client: Any) -> dict[bytes, bytes]:
    """Every key's value (DUMP: a stream's groups included)."""
    return {key: client.dump(key) for key in client.scan_iter(count=1000)}


def test_a_views_worker_rides_out_an_outage_met_while_reading_a_table_stream(redis_client: Any) -> None:
    tables = Tables(redis_client, SPACE, seed=22)
    tables.open([f"u{i:03d}" for i in range(4)])
    earlier = in_process_worker(redis_client, "views", SPACE, linger_ms=0, block_ms=10)
    while applied(redis_client, SPACE, "views") < feed_length(redis_client, SPACE):
        earlier.step()
    earlier.shutdown()
    tables.play(hands=1, steps=2)  # a worker meeting these restores the tables from their streams
    worker = in_process_worker(redis_client, "views", SPACE, linger_ms=0, block_ms=10)
    views: Any = worker.kind
    reachable = views.events
    # Redis is gone just when the worker reads a table's stream to restore its state.
    views.events = RedisEventStore(connect("redis://127.0.0.1:1/0", retries=0), keys=SPACE)
    met = threading.Event()
    lose = worker._lose_everything

    def lose_and_tell() -> None:
        met.set()
        lose()

    worker._lose_everything = lose_and_tell  # type: ignore[method-assign]
    stop = threading.Event()
    died: list[BaseException] = []

    def run() -> None:
        try:
            worker.run(stop)
        except BaseException as error:
            died.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    try:
        wait_for(lambda: met.is_set() or not thread.is_alive(), what="the worker to meet the outage")
        assert not died, f"the worker died: {died!r}"
        views.events = reachable  # Redis is back
        wait_until(redis_client, SPACE, "views", timeout_s=30, check=lambda: _alive(thread, died))
    finally:
        stop.set()
        thread.join(timeout=15)
    assert not died
    assert_identical_to_a_rebuild(redis_client, SPACE, ("views",))


def _alive(thread: threading.Thread, died: list[BaseException]) -> None:
    assert thread.is_alive() and not died, f"the worker died: {died!r}"



@pytest.mark.parametrize("when", ["while reading the feed", "just before the write"])
def test_a_rebuild_whose_lease_was_taken_writes_nothing(redis_client: Any, monkeypatch: pytest.MonkeyPatch,
                                                         when: str) -> None:
    from services.projection import rebuild as module

    tables = Tables(redis_client, ONE, seed=23)
    tables.open(["r000", "r001"])
    store = store_of(redis_client, ONE, "ledger")
    worker = _worker(redis_client, "ledger")
    while applied(redis_client, ONE, "ledger") < feed_length(redis_client, ONE):
        worker.step()
    worker.shutdown()
    doc = next(iter(store.docs(0)))  # stored differently from what a rebuild makes, so a write would show
    if doc.field is None:
        redis_client.set(store.keys.key_of(0, doc), b"tampered")
    else:
        redis_client.hset(store.keys.key_of(0, doc), doc.field, b"tampered")
    before = (store.checkpoint(0), store.docs(0))
    lease = store.keys.lease(0)

    def steal() -> None:
        redis_client.set(lease, "another-worker", px=60_000)

    if when == "while reading the feed":
        real_renew = store.renew
        monkeypatch.setattr(store, "renew", lambda *a, **k: (steal(), real_renew(*a, **k))[1])
    else:
        real_compute = module.compute
        monkeypatch.setattr(module, "compute", lambda *a, **k: (real_compute(*a, **k), steal())[0])
    with pytest.raises(module.RebuildInterrupted, match="lease was taken"):
        rebuild(store, 0)
    assert (store.checkpoint(0), store.docs(0)) == before
    assert redis_client.get(lease) == b"another-worker", "the rebuild does not release another's lease"
