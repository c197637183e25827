"""A table whose meta and stream disagree (edited behind the store's back) is refused
with ``store_corrupt``, naming it, by a fresh handler and by one that had it cached;
nothing is written; the handler is never wedged retrying an append that cannot succeed."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from services.commands.handler import CommandHandler
from services.store import StoreCorrupt
from services.store.base import Head, stored_hash
from tests.counter import Add, CounterDecider, Open
from tests.memory_store import InMemoryEventStore


def played(store: InMemoryEventStore) -> CommandHandler:  # type: ignore[type-arg]
    handler = CommandHandler(store, CounterDecider())
    handler.handle("t1", Open(2), command_id="c1")
    for n in range(2, 6):
        handler.handle("t1", Add(n % 2, n), command_id=f"c{n}")
    return handler


def delete_last(store: InMemoryEventStore) -> None:
    store._tables["t1"].events.pop()


def meta_behind(store: InMemoryEventStore) -> None:
    table = store._tables["t1"]
    table.head = Head(table.events[-2].version, table.events[-2].hash)


def rechained_edit(store: InMemoryEventStore) -> None:
    """The last event edited and its hash recomputed: the chain holds, the meta's head
    hash no longer names it."""
    events = store._tables["t1"].events
    edited = dataclasses.replace(events[-1], data=events[-1].data.replace(b"5", b"6"))
    digest = stored_hash(edited.prev_hash, edited)
    assert digest is not None
    events[-1] = dataclasses.replace(edited, hash=digest)


TAMPERS: dict[str, Callable[[InMemoryEventStore], None]] = {
    "last event deleted": delete_last,
    "meta behind the stream": meta_behind,
    "last event edited, chain recomputed": rechained_edit,
}


@pytest.mark.parametrize("tamper", TAMPERS.values(), ids=TAMPERS.keys())
def test_a_table_whose_meta_and_stream_disagree_is_refused_as_corrupt_by_name(
    tamper: Callable[[InMemoryEventStore], None]
) -> None:
    store = InMemoryEventStore()
    played(store)
    tamper(store)
    before = (list(store.read("t1")), store.head("t1"), store.read_feed(store.partition_of("t1"), count=1000))
    handler = CommandHandler(store, CounterDecider())  # a fresh process: it reads the stream
    for attempt in range(3):  # again and again: refused each time, never wedged in retries
        with pytest.raises(StoreCorrupt, match="table t1 is corrupt") as refused:
            handler.handle("t1", Add(0, 1), command_id=f"after-{attempt}")
        assert refused.value.code == "store_corrupt"
    assert (store.read("t1"), store.head("t1"), store.read_feed(store.partition_of("t1"), count=1000)) == before


def test_a_cached_handler_refuses_a_stream_longer_than_its_meta() -> None:
    store = InMemoryEventStore()
    handler = played(store)  # it has version 5 cached; the meta now says 4
    meta_behind(store)
    with pytest.raises(StoreCorrupt, match="table t1 is corrupt: its meta says version 4"):
        handler.handle("t1", Add(0, 1), command_id="after")
    assert store.head("t1").version == 4 and len(store.read("t1")) == 5


@pytest.mark.parametrize("tamper", [delete_last, rechained_edit], ids=["deleted", "rechained"])
def test_a_cached_handler_appends_on_the_meta_head_it_knows_and_a_fresh_one_then_refuses(
    tamper: Callable[[InMemoryEventStore], None]
) -> None:
    """The meta is the head every append is checked against: a process whose cache is that
    head appends on it (it cannot see the stream changed below); the stream, now with a
    gap or a fork, is refused by the next process that reads it (and by mighty verify)."""
    store = InMemoryEventStore()
    handler = played(store)
    tamper(store)
    assert handler.handle("t1", Add(0, 1), command_id="after").version == 6
    with pytest.raises(StoreCorrupt, match="table t1 is corrupt"):
        CommandHandler(store, CounterDecider()).handle("t1", Add(1, 1), command_id="later")


def test_a_stream_that_does_not_decode_is_refused_as_corrupt_by_name() -> None:
    store = InMemoryEventStore()
    played(store)
    events = store._tables["t1"].events
    events[1] = dataclasses.replace(events[1], data=b'{"type":"added","seat":"x"}')
    for event in events[1:]:  # re-chained: only the bytes are wrong
        index = event.version - 1
        prev = events[index - 1].hash
        fixed = dataclasses.replace(events[index], prev_hash=prev)
        digest = stored_hash(prev, fixed)
        assert digest is not None
        events[index] = dataclasses.replace(fixed, hash=digest)
    store._tables["t1"].head = Head(events[-1].version, events[-1].hash)
    with pytest.raises(StoreCorrupt, match="table t1 is corrupt: an event does not decode"):
        CommandHandler(store, CounterDecider()).handle("t1", Add(0, 1), command_id="after")


def test_a_table_meta_and_stream_agreeing_after_a_race_is_not_corrupt() -> None:
    """Two handlers racing on one table conflict and catch up: never store_corrupt."""
    store = InMemoryEventStore()
    first = played(store)
    second = CommandHandler(store, CounterDecider())
    second.handle("t1", Add(0, 1), command_id="s1")
    for n in range(5):
        first.handle("t1", Add(1, 1), command_id=f"f{n}")
        second.handle("t1", Add(0, 1), command_id=f"s{n + 2}")
    assert store.head("t1").version == 16
