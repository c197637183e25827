"""The ratings worker on a real redis-server (docs/ratings.md): the hands of random rated
and unrated tables of several sizes and Mitigati, applied live by the kind ``ratings``
and its rater, then rebuilt from the streams: the same bytes."""

from __future__ import annotations

import random
import time
from typing import Any

import pytest

from domain.registry import game_named
from domain.table import CreateTable, Submission, initial_state
from projections.docs import decode
from projections.ratings import HANDS_DOC, decode_cursor, decode_hand
from services.players import seating
from services.projection.rater import (
    Rater,
    RatingsKeys,
    check_ratings,
    dump,
    rebuild_ratings,
    watermark,
)
from services.projection.rebuild import rebuild
from services.store.keys import KeySpace
from tests.integration.workers.support import (
    Tables,
    applied,
    feed_length,
    in_process_worker,
    store_of,
)

pytestmark = pytest.mark.integration
SPACE = KeySpace(16)
NAMES = [f"r{i:02d}" for i in range(12)]


def _open(tables: Tables, table_id: str, variant: str, rated: bool, rng: random.Random) -> None:
    game = game_named(variant)
    players = game.players(game.make_rules(variant, {}))
    tables.states[table_id] = (initial_state(table_id), 0)
    seated = rng.sample(NAMES, players)
    tables.send(table_id, Submission(CreateTable(variant=variant, name=table_id, rated=rated), seated[0]))
    for submission in seating(seated):
        tables.send(table_id, submission)


def _last_hand(client: Any) -> tuple[int, str, int] | None:
    """The key of the last hand the partitions stored."""
    store = store_of(client, SPACE, "ratings")
    keys = [decode_hand(data).key() for p in range(SPACE.partitions) for doc, data in store.docs(p).items()
            if doc.name.startswith(HANDS_DOC)]
    return max(keys, default=None)


def _run_until_rated(client: Any, worker: Any, rater: Rater, timeout_s: float = 60.0) -> None:
    """Step the worker until it applied the whole feed and its rater every hand."""
    keys = RatingsKeys(SPACE)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        worker.step()
        caught_up = applied(client, SPACE, "ratings") >= feed_length(client, SPACE)
        if caught_up and watermark(client, SPACE) >= 0 and rater.hold():
            rater.step()
            if decode_cursor(client.get(keys.cursor)) == _last_hand(client):
                return
    raise AssertionError(f"not rated within {timeout_s} s; cursor {client.get(keys.cursor)!r}")


def test_ratings_rebuilt_from_the_streams_equal_the_live_ones_byte_for_byte(redis_client: Any) -> None:
    rng = random.Random(22)
    tables = Tables(redis_client, SPACE, seed=22)
    variants = ["mighty-5", "mighty-3", "mighty-6", "mighty-7", "mitigati", "mighty-5", "mitigati", "mighty-4"]
    for i, variant in enumerate(variants):
        _open(tables, f"rt{i}", variant, rated=i != 5, rng=rng)
    rater = Rater(redis_client, SPACE)
    worker = in_process_worker(redis_client, "ratings", SPACE, linger_ms=0, block_ms=10, after_step=rater.tick)
    try:
        tables.play(hands=1)
        _run_until_rated(redis_client, worker, rater)  # live: some hands rated while others still play
        tables.play(hands=3)
        _run_until_rated(redis_client, worker, rater)
    finally:
        worker.shutdown()
    assert check_ratings(redis_client, SPACE) == []
    live = dump(redis_client, SPACE)
    keys = RatingsKeys(SPACE)
    assert any(k.startswith(keys.ratings("mighty-5")) for k in live)
    assert any(k.startswith(keys.ratings("mitigati")) for k in live)
    reputation = {k.decode(): decode(v) for k, v in live[keys.reputation].items()}
    assert all(r["finished"] > 0 and r["abandoned"] == 0 for r in reputation.values())

    for partition in range(SPACE.partitions):
        rebuild(store_of(redis_client, SPACE, "ratings"), partition)
    rated = rebuild_ratings(redis_client, SPACE)
    assert rated > 0
    assert dump(redis_client, SPACE) == live
    redis_client.hset(keys.ratings("mighty-5"), "intruder", b"{}")  # a check finds a stored rating no hand made
    assert check_ratings(redis_client, SPACE) == [f"{keys.ratings('mighty-5')} intruder"]
