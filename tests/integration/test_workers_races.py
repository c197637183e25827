"""Worker races driven step by step in this process, against a real redis-server: an
outage met mid-fold."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from services.store.keys import KeySpace
from services.store.redis_store import RedisEventStore, connect
from services.workers.read import wait_until
from services.workers.worker import Worker
from tests.integration.workers.support import (
    Tables,
    applied,
    assert_identical_to_a_rebuild,
    feed_length,
    wait_for,
)

pytestmark = pytest.mark.integration
SPACE = KeySpace(16)


def test_a_views_worker_rides_out_an_outage_met_while_reading_a_table_stream(redis_client: Any) -> None:
    tables = Tables(redis_client, SPACE, seed=22)
    tables.open([f"u{i:03d}" for i in range(4)])
    earlier = Worker(redis_client, "views", space=SPACE, linger_ms=0, block_ms=10)
    while applied(redis_client, SPACE, "views") < feed_length(redis_client, SPACE):
        earlier.step()
    earlier.shutdown()
    tables.play(hands=1, steps=2)  # a worker meeting these restores the tables from their streams
    worker = Worker(redis_client, "views", space=SPACE, linger_ms=0, block_ms=10)
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

