"""A closed table's seat views are a last word (projections/docs.py ``LastWord``): the
views worker announces each on its seat's channel, so a follower learns the table
closed, and keeps none of them; the spectator view stays. A rebuild keeps none either."""

from __future__ import annotations

from typing import Any

import pytest

from domain.table import CloseTable, Submission
from projections import KINDS
from projections.docs import decode
from services.projection.notify import channel_of
from services.projection.rebuild import rebuild
from services.store.keys import KeySpace
from tests.integration.workers.support import (
    Tables,
    assert_identical_to_a_rebuild,
    catch_up,
    in_process_worker,
    store_of,
)

pytestmark = pytest.mark.integration
SPACE = KeySpace(4)


def test_a_closed_tables_seat_views_are_announced_to_their_followers_and_not_kept(redis_client: Any) -> None:
    tables = Tables(redis_client, SPACE, seed=12)
    tables.open(["c1", "c2"])
    tables.play(hands=1)
    running = {kind: in_process_worker(redis_client, kind, SPACE, linger_ms=0, block_ms=10) for kind in KINDS}
    for worker in running.values():
        catch_up(worker, redis_client, SPACE)
    seats = [channel_of(SPACE, "c1", str(seat)) for seat in range(5)]
    spectator = channel_of(SPACE, "c1", "spectator")
    assert all(redis_client.exists(key) for key in seats), "an open table keeps its seat views"
    listener = redis_client.pubsub()
    listener.ssubscribe(*seats)
    listener.get_sharded_message(timeout=0.5)
    tables.send("c1", Submission(command=CloseTable(reason="test")))
    for worker in running.values():
        catch_up(worker, redis_client, SPACE)
    told: dict[str, dict[str, Any]] = {}
    for _ in range(50):
        message = listener.get_sharded_message(timeout=0.2)
        if message is not None and message["type"] == "smessage":
            told[message["channel"].decode()] = decode(message["data"])
        if len(told) == len(seats):
            break
    listener.close()
    assert sorted(told) == sorted(seats), "every seat's follower was told"
    assert all(view["status"] == "closed" and view["hand"] is None for view in told.values())
    assert not any(redis_client.exists(key) for key in seats), "and none of them is kept"
    assert redis_client.exists(spectator), "the public face is"
    assert all(redis_client.exists(channel_of(SPACE, "c2", str(seat))) for seat in range(5)), "the open table's are"
    assert_identical_to_a_rebuild(redis_client, SPACE)
    for partition in range(SPACE.partitions):
        rebuild(store_of(redis_client, SPACE, "views"), partition)
    assert not any(redis_client.exists(key) for key in seats), "a rebuild makes none"
    assert redis_client.exists(spectator)
    for worker in running.values():
        worker.shutdown()
