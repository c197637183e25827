"""Events stored packed (services/store/compact.py): what a store writes reads back as the
event's own bytes, whatever they are, and a packed event that was altered is refused as
corrupt, never read as another event."""

from __future__ import annotations

import hashlib
import zlib

import fakeredis
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.event_dictionary import fixture_events
from services.store.base import EMPTY_HEAD
from services.store.compact import DICTIONARIES, PACKED_WITH, pack, unpack
from services.store.errors import StoreCorrupt
from services.store.keys import KeySpace
from services.store.redis_store import RedisEventStore
from tests.stream_entries import as_fields

CARD_PLAYED = b'{"type":"card_played","v":2,"seat":4,"card":"9C","suit":null,"joker_call":false}'


def test_the_dictionary_events_are_packed_with_is_the_one_they_were_packed_with() -> None:
    assert hashlib.sha256(DICTIONARIES[1]).hexdigest() == (
        "35ae66b05cd65d557d34b2cf11889c499d5b6996bd3683a2c61fa7a7816fa9f0")


def test_a_card_played_is_stored_in_a_quarter_of_its_bytes() -> None:
    packed = pack(CARD_PLAYED)
    assert packed[0] == PACKED_WITH
    assert len(packed) * 4 <= len(CARD_PLAYED), len(packed)
    assert unpack(packed) == CARD_PLAYED


def test_the_stored_fixture_streams_pack_to_less_than_a_quarter() -> None:
    events = fixture_events()
    assert sum(len(pack(event)) for event in events) * 4 < sum(len(event) for event in events)
    assert all(unpack(pack(event)) == event for event in events)


@given(st.binary(max_size=2048))
def test_any_bytes_read_back_as_they_were(event: bytes) -> None:
    stored = pack(event)
    assert unpack(stored) == event
    assert len(stored) <= len(event) or event[:1] in {bytes((n,)) for n in range(1, 9)}


def test_an_event_that_does_not_shrink_is_stored_as_it_is() -> None:
    assert pack(b"{}") == b"{}"
    assert pack(b"") == b""


@pytest.mark.parametrize("altered", [
    lambda packed: packed[:-2],  # cut short
    lambda packed: packed + b"more",  # followed by other bytes
    lambda packed: bytes((7,)) + packed[1:],  # a dictionary never made
    lambda packed: packed[:1] + b"\xff" * (len(packed) - 1),  # not deflate
])
def test_a_packed_event_altered_is_corrupt_not_another_event(altered: object) -> None:
    with pytest.raises(StoreCorrupt):
        unpack(altered(pack(CARD_PLAYED)))  # type: ignore[operator]


def test_a_packed_event_unpacking_past_an_events_limit_is_corrupt() -> None:
    deflate = zlib.compressobj(9, zlib.DEFLATED, -13, 9, zlib.Z_DEFAULT_STRATEGY, zdict=DICTIONARIES[1])
    bomb = bytes((1,)) + deflate.compress(b"{" * (65 * 1024)) + deflate.flush()
    assert len(bomb) < 1024
    with pytest.raises(StoreCorrupt):
        unpack(bomb)


def test_the_store_hashes_the_event_and_stores_it_packed_and_every_read_gives_the_event() -> None:
    client = fakeredis.FakeRedis()
    space = KeySpace(namespace="packed")
    store = RedisEventStore(client, keys=space)
    done = store.append("t1", [CARD_PLAYED, b"{}"], expected=EMPTY_HEAD, command_id="c1", outcome=b"{}")
    stored = [fields[b"e"] for _, fields in as_fields(client.xrange(space.table("t1").events))]
    assert stored[0][0] == PACKED_WITH and stored[1] == b"{}"
    read = store.read("t1")
    assert [event.data for event in read] == [CARD_PLAYED, b"{}"]
    assert read[-1].hash == done.head.hash
    assert [entry.data for entry in store.read_feed(space.partition_of("t1"))] == [CARD_PLAYED, b"{}"]
