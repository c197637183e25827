"""Worker races driven step by step in this process, against a real redis-server: a
worker that lost its lease reading once more, and an outage met mid-fold."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from services.projection.read import wait_until
from services.projection.rebuild import rebuild
from services.projection.worker import Worker
from services.store.keys import KeySpace
from services.store.redis_store import RedisEventStore, connect
from tests.integration.workers.support import (
    Tables,
    applied,
    assert_identical_to_a_rebuild,
    feed_length,
    in_process_worker,
    pending,
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
    assert 0 not in first.owned and pending(redis_client, ONE, "directory") > 0
    tables.open(["s002"])
    for _ in range(5):
        second.step()
    assert applied(redis_client, ONE, "directory") == feed_length(redis_client, ONE), "every entry, once"
    assert pending(redis_client, ONE, "directory") == 0
    assert_identical_to_a_rebuild(redis_client, ONE, ("directory",))
    second.shutdown()


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
