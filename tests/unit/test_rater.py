"""The rater over every partition (services/projection/rater.py, docs/ratings.md): the
watermark the partitions' checkpoints give, hands held back behind it and applied in key
order, the lease that fences a second rater. Over fakeredis."""

from __future__ import annotations

from typing import Any

import fakeredis
import pytest

from projections.docs import DocKey, decode, encode
from projections.ratings import (
    HOUR_MS,
    HOURS_DOC,
    RatedHand,
    decode_cursor,
    decode_rating,
    hand_field,
    hands_doc,
)
from services.archive.keys import ArchiveKeys
from services.projection.keys import ProjectionKeys
from services.projection.rater import Rater, RatingsKeys, watermark
from services.store.keys import KeySpace

SPACE = KeySpace(2)
HANDS = ProjectionKeys(SPACE, "ratings")


@pytest.fixture
def client() -> Any:
    return fakeredis.FakeRedis(protocol=2)


def _append(client: Any, partition: int) -> str:
    """One feed entry, as the store appends it; its id."""
    found = client.xadd(SPACE.feed(partition), {"t": "x", "v": 1, "e": b"{}", "h": "h", "a": 0})
    return str(found.decode())


def _checkpoint(client: Any, partition: int, entry: str) -> None:
    client.hset(HANDS.checkpoint(partition), mapping={"id": entry, "n": 1})


def _store_hand(client: Any, partition: int, hand: RatedHand) -> None:
    hour = hand.at_ms // HOUR_MS
    client.hset(HANDS.key_of(partition, DocKey(hands_doc(hour))), hand_field(hand), encode(hand))
    client.hset(HANDS.doc(partition, HOURS_DOC), str(hour), hand_field(hand))  # as the kind marks it


def _hand(at_ms: int, table: str, ranks: tuple[int, ...] = (0, 1)) -> RatedHand:
    return RatedHand(at_ms=at_ms, table_id=table, hand_no=0, rules="mighty-5", rated=True,
                     players=("a", "b", "c", "d", "e"), away=(False,) * 5, sides=((0, 1), (2, 3, 4)), ranks=ranks)


def _now_ms(client: Any) -> int:
    seconds, micros = client.time()
    return int(seconds) * 1000 + int(micros) // 1000


def test_with_every_partition_at_its_feeds_end_the_watermark_is_the_servers_clock(client: Any) -> None:
    for partition in range(SPACE.partitions):
        _checkpoint(client, partition, _append(client, partition))
    before = _now_ms(client)
    assert before - 1 <= watermark(client, SPACE) <= _now_ms(client)


def test_a_partition_behind_holds_the_watermark_at_its_checkpoints_time(client: Any) -> None:
    first = _append(client, 0)
    _checkpoint(client, 0, first)
    _append(client, 0)  # not applied yet
    _checkpoint(client, 1, _append(client, 1))
    assert watermark(client, SPACE) == int(first.split("-")[0]) - 1


def test_a_partition_the_kind_never_ran_in_holds_everything_back(client: Any) -> None:
    _append(client, 0)
    assert watermark(client, SPACE) == -1


def test_the_rater_applies_hands_up_to_the_watermark_in_key_order_and_holds_the_rest(client: Any) -> None:
    first = _append(client, 0)
    _checkpoint(client, 0, first)
    _append(client, 0)  # partition 0 is behind: its time is its checkpoint's
    _checkpoint(client, 1, _append(client, 1))
    mark = int(first.split("-")[0]) - 1
    early, later, held = _hand(mark - 5, "t2"), _hand(mark - 5, "t1", (1, 0)), _hand(mark + 1, "t3")
    _store_hand(client, 1, early)
    _store_hand(client, 0, later)
    _store_hand(client, 1, held)
    rater = Rater(client, SPACE)
    assert rater.hold()
    assert rater.step() == 2
    keys = RatingsKeys(SPACE)
    assert decode_cursor(client.get(keys.cursor)) == early.key()  # (at, "t2") after (at, "t1")
    a = decode_rating(client.hget(keys.ratings("mighty-5"), "a"))
    assert a.hands == 2 and a.history[-1][0] == mark - 5
    assert rater.step() == 0  # the held hand waits for partition 0
    _checkpoint(client, 0, client.xrevrange(SPACE.feed(0), count=1)[0][0].decode())
    assert rater.step() == 1
    assert decode_cursor(client.get(keys.cursor)) == held.key()
    board = client.zrevrange(keys.board("mighty-5"), 0, -1, withscores=True)
    assert len(board) == 5 and board == sorted(board, key=lambda kv: -kv[1])


def test_a_rater_that_lost_its_lease_writes_nothing(client: Any) -> None:
    _checkpoint(client, 0, _append(client, 0))
    _checkpoint(client, 1, _append(client, 1))
    _store_hand(client, 0, _hand(1000, "t1"))
    first, second = Rater(client, SPACE), Rater(client, SPACE)
    assert first.hold() and not second.hold()
    client.set(RatingsKeys(SPACE).lease, b"someone-else")
    assert first.step() == 0
    assert client.get(RatingsKeys(SPACE).cursor) is None


def test_a_hand_the_cursor_has_passed_is_never_applied_twice(client: Any) -> None:
    _checkpoint(client, 0, _append(client, 0))
    _checkpoint(client, 1, _append(client, 1))
    _store_hand(client, 0, _hand(1000, "t1"))
    rater = Rater(client, SPACE)
    assert rater.hold() and rater.step() == 1
    stored = client.hget(RatingsKeys(SPACE).ratings("mighty-5"), "a")
    assert Rater(client, SPACE, token=rater.token).step() == 0  # a fresh rater, nothing cached
    assert client.hget(RatingsKeys(SPACE).ratings("mighty-5"), "a") == stored
    assert decode(stored)["hands"] == 1


def test_the_rater_holds_only_its_backlog_and_fetches_only_the_hands_it_has_not_seen(
    client: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An hour's bucket grows all hour: the rater keeps no hand the cursor has passed, and
    a bucket that grew is read by its fields, only the new hands fetched (not the hour
    whole, step after step)."""
    _checkpoint(client, 0, _append(client, 0))
    _checkpoint(client, 1, _append(client, 1))
    rater = Rater(client, SPACE)
    assert rater.hold()
    for n in range(5):
        _store_hand(client, 0, _hand(1000 + n, f"t{n}"))
    assert rater.step() == 5
    rater.pending(_now_ms(client))  # the cursor at the fifth: nothing is held any more
    assert all(not held for _, held in rater._buckets.values())
    _store_hand(client, 0, _hand(2000, "t9"))
    fetched: list[list[bytes]] = []
    pipeline = type(client.pipeline())
    original = pipeline.hmget

    def counting(self: Any, name: Any, keys: Any, *args: Any) -> Any:
        fetched.append(list(keys))
        return original(self, name, keys, *args)

    monkeypatch.setattr(pipeline, "hmget", counting)
    assert rater.step() == 1
    assert fetched == [[hand_field(_hand(2000, "t9")).encode()]]
    assert decode_cursor(client.get(RatingsKeys(SPACE).cursor)) == _hand(2000, "t9").key()


def test_a_hand_stored_after_an_archived_tables_hand_left_its_bucket_is_applied(client: Any) -> None:
    """The archive deletes an archived table's hands from their hour's bucket (they left
    Redis with it); a hand stored after that may bring the bucket back to the length the
    rater last read it at. It is applied all the same: a bucket is read again when its
    partition's count of archived tables changed too, not only when its length did (the
    drill test_postgres_down found a table whose hand was never rated, so never
    archived)."""
    _checkpoint(client, 0, _append(client, 0))
    _checkpoint(client, 1, _append(client, 1))
    rater = Rater(client, SPACE)
    assert rater.hold()
    archived = _hand(1000, "t1")
    _store_hand(client, 0, archived)
    assert rater.step() == 1
    bucket = HANDS.key_of(0, DocKey(hands_doc(archived.at_ms // HOUR_MS)))
    # archived: its record leaves with the table, which its partition's index takes in
    # the same MULTI (services/archive/worker.py)
    client.hdel(bucket, hand_field(archived))
    client.hset(ArchiveKeys(SPACE).index(0), archived.table_id, b"{}")
    assert rater.step() == 0
    later = _hand(2000, "t2")
    _store_hand(client, 0, later)  # the bucket holds one hand again
    assert rater.step() == 1
    assert decode_cursor(client.get(RatingsKeys(SPACE).cursor)) == later.key()
