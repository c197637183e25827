"""The event store contract: one suite, run against every store, sync and async.

``tests/unit/test_store_contract.py`` runs it on the in-memory twins and on fakeredis,
``tests/integration/test_store_contract_redis.py`` on a real redis-server. A subclass
provides a ``store`` fixture (and, for the Redis suite, ``client``, a sync client of the
same server for looking at the keys). An async store takes the very same test bodies
through ``SyncOverAsync``, which runs each call to completion on the test's event loop.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
import time
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

import pytest
import redis

from services.store import (
    EMPTY_HEAD,
    GENESIS,
    BadAppend,
    BadCommandId,
    BadTableId,
    ChainMismatch,
    EventStore,
    Head,
    KeySpace,
    PayloadTooLarge,
    RedisEventStore,
    StoreCorrupt,
    VersionConflict,
    record,
)
from services.store.async_redis_store import AsyncRedisEventStore
from services.store.base import (
    HASH_EVERY,
    HASH_V1,
    HASH_VERSION,
    MAX_APPEND_BYTES,
    MAX_EVENT_BYTES,
    Appended,
    AsyncEventStore,
    FeedEntry,
    StoredEvent,
    event_hash,
    verify_chain,
)
from services.store.compact import pack
from services.store.redis_store import APPEND_SCRIPT
from tests.stream_entries import as_fields, as_stored

T = TypeVar("T")


class SyncOverAsync:
    """An ``AsyncEventStore`` behind the sync ``EventStore`` API, for the contract: each
    call runs on ``runner``'s event loop (the loop the async client belongs to)."""

    def __init__(self, inner: AsyncEventStore, runner: asyncio.Runner) -> None:
        self.inner = inner
        self.runner = runner
        self.keys: KeySpace = getattr(inner, "keys", None) or KeySpace()

    def _run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return self.runner.run(coroutine)

    def append(
        self, table_id: str, events: Sequence[bytes], *, expected: Head, command_id: str,
        outcome: bytes,
    ) -> Appended:
        return self._run(self.inner.append(
            table_id, events, expected=expected, command_id=command_id, outcome=outcome
        ))

    def read(self, table_id: str, after_version: int = 0, to_version: int | None = None
             ) -> list[StoredEvent]:
        return self._run(self.inner.read(table_id, after_version, to_version))

    def head(self, table_id: str) -> Head:
        return self._run(self.inner.head(table_id))

    def outcome_of(self, table_id: str, command_id: str) -> bytes | None:
        return self._run(self.inner.outcome_of(table_id, command_id))

    def partition_of(self, table_id: str) -> int:
        return self.inner.partition_of(table_id)

    def read_feed(self, partition: int, after: str = "0-0", count: int = 100) -> list[FeedEntry]:
        return self._run(self.inner.read_feed(partition, after, count))

    def table_ids(self) -> list[str]:
        return self._run(self.inner.table_ids())

    def append_raw(self, keys: list[str], args: list[Any]) -> Any:
        assert isinstance(self.inner, AsyncRedisEventStore)
        store = self.inner

        async def call() -> Any:
            return await store.append_raw(keys, args)

        return self._run(call())

    def with_script(self, script: str) -> SyncOverAsync:
        assert isinstance(self.inner, AsyncRedisEventStore)
        inner = AsyncRedisEventStore(self.inner.client, keys=self.inner.keys, script=script)
        return SyncOverAsync(inner, self.runner)


def append(store: EventStore, table_id: str, *events: bytes, at: Head, cid: str) -> Head:
    return store.append(
        table_id, list(events), expected=at, command_id=cid, outcome=cid.encode()
    ).head


def snapshot(store: EventStore, table_id: str) -> tuple[Any, ...]:
    partition = store.partition_of(table_id)
    return (store.head(table_id), store.read(table_id), store.read_feed(partition, count=10_000))


class StoreContract:
    def test_an_unknown_table_is_empty(self, store: EventStore) -> None:
        assert store.head("nobody") == EMPTY_HEAD
        assert store.read("nobody") == []
        assert store.outcome_of("nobody", "c1") is None

    def test_table_ids_lists_every_table_with_events_sorted(self, store: EventStore) -> None:
        assert store.table_ids() == []
        for table_id in ("t-b", "t-a", "t_c"):
            append(store, table_id, b"x", at=EMPTY_HEAD, cid="c1")
        store.head("t-none")  # reading a table does not create it
        assert store.table_ids() == ["t-a", "t-b", "t_c"]

    def test_an_append_numbers_and_chains_its_events(self, store: EventStore) -> None:
        head = append(store, "t1", b"a", b"b", at=EMPTY_HEAD, cid="c1")
        events = store.read("t1")
        assert [(e.version, e.data, e.command_id) for e in events] == [
            (1, b"a", "c1"),
            (2, b"b", "c1"),
        ]
        assert events[0].prev_hash == GENESIS
        assert events[0].hash == event_hash(GENESIS, b"a", "c1")
        assert events[1].prev_hash == events[0].hash
        assert head == Head(2, events[1].hash) == store.head("t1")
        assert verify_chain(EMPTY_HEAD, events) == head

    def test_every_event_hash_covers_its_command_id(self, store: EventStore) -> None:
        append(store, "t1", b"a", at=EMPTY_HEAD, cid="c1")
        (event,) = store.read("t1")
        assert event.hash_version == HASH_VERSION == 2
        assert event.hash == event_hash(GENESIS, b"a", "c1") != event_hash(GENESIS, b"a", "c2")
        with pytest.raises(StoreCorrupt, match="does not match its hash"):
            verify_chain(EMPTY_HEAD, [dataclasses.replace(event, command_id="c2")])

    def test_a_version_1_entry_is_checked_by_the_version_1_hash(self, store: EventStore) -> None:
        old = StoredEvent(1, b"a", event_hash(GENESIS, b"a"), GENESIS, "c1", HASH_V1)
        assert verify_chain(EMPTY_HEAD, [old]) == Head(1, old.hash)
        with pytest.raises(StoreCorrupt):
            verify_chain(EMPTY_HEAD, [dataclasses.replace(old, hash_version=HASH_VERSION)])

    def test_appends_continue_the_chain(self, store: EventStore) -> None:
        head = append(store, "t1", b"a", at=EMPTY_HEAD, cid="c1")
        head = append(store, "t1", b"b", b"c", at=head, cid="c2")
        assert head.version == 3
        assert verify_chain(EMPTY_HEAD, store.read("t1")) == head

    def test_read_takes_a_version_range(self, store: EventStore) -> None:
        append(store, "t1", b"a", b"b", b"c", b"d", at=EMPTY_HEAD, cid="c1")
        assert [e.data for e in store.read("t1", after_version=2)] == [b"c", b"d"]
        assert [e.data for e in store.read("t1", 1, 3)] == [b"b", b"c"]
        assert store.read("t1", after_version=4) == []

    def test_a_read_from_the_middle_links_its_first_event_to_the_event_before_it(
        self, store: EventStore
    ) -> None:
        head = append(store, "t1", b"a", b"b", at=EMPTY_HEAD, cid="c1")
        append(store, "t1", b"c", b"d", at=head, cid="c2")
        whole = store.read("t1")
        assert store.read("t1", after_version=2)[0].prev_hash == whole[1].hash
        assert store.read("t1", 1, 3)[0].prev_hash == whole[0].hash != whole[0].prev_hash
        for after in range(5):
            assert store.read("t1", after_version=after) == whole[after:]
        assert verify_chain(head, store.read("t1", after_version=2)).version == 4

    def test_a_read_longer_than_a_chunk_links_every_event_wherever_it_starts(
        self, store: EventStore
    ) -> None:
        head = EMPTY_HEAD
        for n in range(17):  # 1088 events: more than one XRANGE chunk (READ_CHUNK, 1000)
            head = append(store, "t1", *[b"e%d" % i for i in range(64)], at=head, cid=f"c{n}")
        whole = store.read("t1")
        assert len(whole) == 1088 and verify_chain(EMPTY_HEAD, whole) == head
        for after in (1, 87, 999, 1000, 1001, 1087, 1088):
            assert store.read("t1", after_version=after) == whole[after:], after
        assert store.read("t1", 500, 1500) == whole[500:]

    def test_a_read_from_after_any_version_is_the_tail_of_a_whole_read(self, store: EventStore) -> None:
        """Whatever version a read starts after (an anchor, just past one, just before one,
        in the first run of entries), its events, hashes and previous hashes are a whole
        read's; so with an upper bound."""
        head = EMPTY_HEAD
        for n, size in enumerate((1, 5, 9, 2, 16, 1, 7)):  # 41 events, appends across the anchors
            head = append(store, "t1", *[b"e%d-%d" % (n, i) for i in range(size)], at=head, cid=f"c{n}")
        whole = store.read("t1")
        assert len(whole) == 41 and verify_chain(EMPTY_HEAD, whole) == head
        for after in range(42):
            tail = store.read("t1", after_version=after)
            assert tail == whole[after:], after
            assert [(e.hash, e.prev_hash) for e in tail] == [(e.hash, e.prev_hash) for e in whole[after:]]
            assert [e.hash_stored for e in tail] == [e.hash_stored for e in whole[after:]]
            assert store.read("t1", after, min(after + 3, 41)) == whole[after:after + 3]

    def test_a_stale_version_is_a_conflict_and_writes_nothing(self, store: EventStore) -> None:
        append(store, "t1", b"a", at=EMPTY_HEAD, cid="c1")
        before = snapshot(store, "t1")
        with pytest.raises(VersionConflict) as caught:
            append(store, "t1", b"b", at=EMPTY_HEAD, cid="c2")
        assert (caught.value.expected, caught.value.actual) == (0, 1)
        assert caught.value.code == "version_conflict"
        assert snapshot(store, "t1") == before
        assert store.outcome_of("t1", "c2") is None

    def test_a_version_ahead_of_the_table_is_a_conflict(self, store: EventStore) -> None:
        with pytest.raises(VersionConflict):
            append(store, "t1", b"a", at=Head(3, GENESIS), cid="c1")
        assert store.read("t1") == []

    def test_a_wrong_head_hash_is_refused_and_writes_nothing(self, store: EventStore) -> None:
        append(store, "t1", b"a", at=EMPTY_HEAD, cid="c1")
        before = snapshot(store, "t1")
        with pytest.raises(ChainMismatch):
            append(store, "t1", b"b", at=Head(1, "f" * 64), cid="c2")
        assert snapshot(store, "t1") == before

    def test_a_seen_command_id_returns_the_first_outcome_and_writes_nothing(
        self, store: EventStore
    ) -> None:
        first = store.append("t1", [b"a"], expected=EMPTY_HEAD, command_id="c1", outcome=b"one")
        head = append(store, "t1", b"b", at=first.head, cid="c2")
        before = snapshot(store, "t1")
        again = store.append("t1", [b"x", b"y"], expected=EMPTY_HEAD, command_id="c1", outcome=b"2")
        assert again.duplicate and not first.duplicate
        assert again.outcome == b"one"
        assert again.head == head
        assert snapshot(store, "t1") == before
        assert store.outcome_of("t1", "c1") == b"one"

    def test_command_ids_belong_to_their_table(self, store: EventStore) -> None:
        append(store, "t1", b"a", at=EMPTY_HEAD, cid="c1")
        appended = store.append("t2", [b"a"], expected=EMPTY_HEAD, command_id="c1", outcome=b"o")
        assert not appended.duplicate

    def test_the_feed_holds_every_event_of_its_partition_in_order(self, store: EventStore) -> None:
        tables = [t for t in (f"t{i}" for i in range(40)) if store.partition_of(t) == 3][:2]
        heads = {t: EMPTY_HEAD for t in tables}
        for round_ in range(3):
            for t in tables:
                heads[t] = append(store, t, f"{t}/{round_}".encode(), at=heads[t], cid=f"c{round_}")
        feed = store.read_feed(3, count=100)
        assert [(f.table_id, f.version, f.data) for f in feed] == [
            (t, r + 1, f"{t}/{r}".encode()) for r in range(3) for t in tables
        ]
        stored = {(e.version, e.hash) for e in store.read(tables[0])}
        assert {(f.version, f.hash) for f in feed if f.table_id == tables[0]} == stored

    def test_the_feed_reads_on_after_a_position(self, store: EventStore) -> None:
        append(store, "t1", b"a", b"b", b"c", at=EMPTY_HEAD, cid="c1")
        partition = store.partition_of("t1")
        first = store.read_feed(partition, count=2)
        rest = store.read_feed(partition, after=first[-1].id)
        assert [f.data for f in first + rest] == [b"a", b"b", b"c"]

    def test_other_partitions_feeds_stay_empty(self, store: EventStore) -> None:
        append(store, "t1", b"a", at=EMPTY_HEAD, cid="c1")
        others = [p for p in range(16) if p != store.partition_of("t1")]
        assert all(store.read_feed(p) == [] for p in others)

    @pytest.mark.parametrize(
        "table_id", ["", "a b", "a:b", "{p01}", "x" * 65, "é", "t\n", 7, None, b"t1"]
    )
    def test_a_bad_table_id_is_refused(self, store: EventStore, table_id: Any) -> None:
        with pytest.raises(BadTableId):
            store.append(table_id, [b"a"], expected=EMPTY_HEAD, command_id="c1", outcome=b"")
        with pytest.raises(BadTableId):
            store.read(table_id)

    @pytest.mark.parametrize("command_id", ["", "a b", "x" * 129, "c\n", 3, None])
    def test_a_bad_command_id_is_refused(self, store: EventStore, command_id: Any) -> None:
        with pytest.raises(BadCommandId):
            store.append("t1", [b"a"], expected=EMPTY_HEAD, command_id=command_id, outcome=b"")
        assert store.read("t1") == []

    def test_an_append_without_events_is_refused(self, store: EventStore) -> None:
        with pytest.raises(BadAppend):
            append(store, "t1", at=EMPTY_HEAD, cid="c1")
        assert store.outcome_of("t1", "c1") is None

    def test_too_many_events_are_refused(self, store: EventStore) -> None:
        with pytest.raises(BadAppend):
            append(store, "t1", *([b"e"] * 65), at=EMPTY_HEAD, cid="c1")
        assert store.read("t1") == []

    def test_events_that_are_not_bytes_are_refused(self, store: EventStore) -> None:
        with pytest.raises(BadAppend):
            store.append("t1", ["text"], expected=EMPTY_HEAD, command_id="c1", outcome=b"")  # type: ignore[list-item]
        assert store.read("t1") == []

    def test_an_event_at_the_size_limit_is_taken(self, store: EventStore) -> None:
        append(store, "t1", b"x" * MAX_EVENT_BYTES, at=EMPTY_HEAD, cid="c1")
        assert store.read("t1")[0].data == b"x" * MAX_EVENT_BYTES

    def test_a_huge_event_is_refused_and_writes_nothing(self, store: EventStore) -> None:
        head = append(store, "t1", b"a", at=EMPTY_HEAD, cid="c1")
        before = snapshot(store, "t1")
        with pytest.raises(PayloadTooLarge):
            append(store, "t1", b"x" * (MAX_EVENT_BYTES + 1), at=head, cid="c2")
        with pytest.raises(PayloadTooLarge):
            append(store, "t1", *([b"x" * MAX_EVENT_BYTES] * 5), at=head, cid="c3")
        with pytest.raises(PayloadTooLarge):
            store.append("t1", [b"a"], expected=head, command_id="c4", outcome=b"o" * 5000)
        assert snapshot(store, "t1") == before
        assert MAX_APPEND_BYTES < 5 * MAX_EVENT_BYTES


AnyRedisStore = RedisEventStore | SyncOverAsync  # the latter over an AsyncRedisEventStore


def encoded(read: list[StoredEvent], *, delta_from: int, whole: frozenset[int] | set[int] = frozenset()) -> list[bytes]:
    """The records the script writes for the events ``read`` (a whole read), as
    ``record.encode`` writes them: a head on each append's first event (its command id
    differs from the event before's), every anchor and version 1; its time whole on an
    anchor, version 1, before version ``delta_from`` and on the versions ``whole``, else
    as ms after the event before's."""
    out = []
    for n, e in enumerate(read):
        before = read[n - 1] if n else None
        anchor = e.version % HASH_EVERY == 0
        head = e.version == 1 or anchor or before is None or before.command_id != e.command_id
        delta = head and not anchor and e.version != 1 and e.version >= delta_from and e.version not in whole
        assert e.at_ms is not None and (before is None or before.at_ms is not None)
        out.append(record.encode(
            pack(e.data), hash=bytes.fromhex(e.hash) if anchor else None,
            command_id=e.command_id if head else None,
            at_ms=e.at_ms if head and not delta else None,
            delta_ms=e.at_ms - before.at_ms if delta and before and before.at_ms is not None else None))
    return out


def evalsha(store: AnyRedisStore, table_id: str, args: list[Any]) -> Any:
    return store.append_raw(store.keys.table(table_id).as_list(), args)


def raw_args(*events: bytes, expected: int = 0, cid: str = "c1", table_id: str = "t1") -> list[Any]:
    args: list[Any] = [table_id, expected, cid, b"out", GENESIS, len(events)]
    prev = GENESIS
    for data in events:
        prev = event_hash(prev, data, cid)
        args += [data, prev]
    return args


def variant(store: AnyRedisStore, marker: str, injected: str) -> AnyRedisStore:
    """The same store running the append script with ``injected`` Lua after ``marker``."""
    assert marker in APPEND_SCRIPT
    script = APPEND_SCRIPT.replace(marker, marker + "\n" + injected, 1)
    if isinstance(store, SyncOverAsync):
        return store.with_script(script)
    return RedisEventStore(store.client, keys=store.keys, script=script)


def redis_snapshot(client: redis.Redis, store: AnyRedisStore, table_id: str) -> tuple[Any, ...]:
    keys = store.keys.table(table_id)
    return (
        client.xrange(keys.events),
        client.xrange(keys.feed),
        client.hgetall(keys.meta),
        client.hgetall(keys.commands),
    )


CHECKS_DONE = "-- CHECKS DONE: nothing below may fail except the first XADD, which fails whole."
FIRST_XADD = "'r', string.char(flags) .. kept .. stamped .. ARGV[5 + 2 * i])"


class RedisScriptContract:
    """What the append script itself guarantees, whoever calls it (a Redis store only)."""

    def test_all_keys_of_a_table_share_one_cluster_slot(self, store: AnyRedisStore) -> None:
        for table_id in ("t1", "table-42", "Z" * 64):
            slots = {redis.crc.key_slot(k.encode()) for k in store.keys.table(table_id).as_list()}
            assert len(slots) == 1

    def test_a_flushed_script_cache_is_reloaded(
        self, store: AnyRedisStore, client: redis.Redis
    ) -> None:
        head = append(store, "t1", b"a", at=EMPTY_HEAD, cid="c1")
        client.script_flush()
        assert append(store, "t1", b"b", at=head, cid="c2").version == 2

    @pytest.mark.parametrize(
        "args",
        [
            raw_args(b"x" * (MAX_EVENT_BYTES + 1)),
            raw_args(*([b"x" * MAX_EVENT_BYTES] * 5)),
            raw_args(b"a")[:-1],
            raw_args(b"a") + [b"extra"],
            raw_args(b"a")[:5] + ["1e0", b"a", event_hash(GENESIS, b"a")],
            raw_args(b"a")[:5] + [65] + raw_args(*([b"a"] * 65))[6:],
            ["t1", " 0", "c1", b"o", GENESIS, 1, b"a", event_hash(GENESIS, b"a")],
            ["t1", "0x0", "c1", b"o", GENESIS, 1, b"a", event_hash(GENESIS, b"a")],
            ["t1", 0, "c 1", b"o", GENESIS, 1, b"a", event_hash(GENESIS, b"a")],
            ["t 1", 0, "c1", b"o", GENESIS, 1, b"a", event_hash(GENESIS, b"a")],
            ["t1", 0, "c1", b"o" * 4097, GENESIS, 1, b"a", event_hash(GENESIS, b"a")],
            ["t1", 0, "c1", b"o", "0" * 63, 1, b"a", event_hash(GENESIS, b"a")],
            ["t1", 0, "c1", b"o", GENESIS, 1, b"a", "A" * 64],
        ],
        ids=[
            "event-too-large", "append-too-large", "missing-hash", "extra-arg",
            "count-1e0", "65-events", "version-space", "version-hex", "command-id",
            "table-id", "outcome-too-large", "short-prev-hash", "upper-case-hash",
        ],
    )  # fmt: skip
    def test_the_script_refuses_bad_arguments_itself(
        self, store: AnyRedisStore, client: redis.Redis, args: list[Any]
    ) -> None:
        reply = evalsha(store, "t1", args)
        assert reply[0] == b"bad"
        assert redis_snapshot(client, store, "t1") == ([], [], {}, {})

    def test_a_key_of_the_wrong_type_is_refused_before_any_write(
        self, store: AnyRedisStore, client: redis.Redis
    ) -> None:
        head = append(store, "t1", b"a", at=EMPTY_HEAD, cid="c1")
        keys = store.keys.table("t1")
        client.delete(keys.commands)
        client.set(keys.commands, "hostile")
        before = (client.xrange(keys.events), client.xrange(keys.feed), client.hgetall(keys.meta))
        with pytest.raises(StoreCorrupt):
            append(store, "t1", b"b", at=head, cid="c2")
        after = (client.xrange(keys.events), client.xrange(keys.feed), client.hgetall(keys.meta))
        assert after == before
        assert client.get(keys.commands) == b"hostile"

    def test_an_error_after_the_checks_writes_nothing(
        self, store: AnyRedisStore, client: redis.Redis
    ) -> None:
        head = append(store, "t1", b"a", at=EMPTY_HEAD, cid="c1")
        before = redis_snapshot(client, store, "t1")
        failing = variant(store, CHECKS_DONE, "error('injected after the checks')")
        with pytest.raises(StoreCorrupt, match="injected"):
            append(failing, "t1", b"b", b"c", at=head, cid="c2")
        assert redis_snapshot(client, store, "t1") == before
        assert append(store, "t1", b"b", at=head, cid="c2").version == 2

    def test_redis_keeps_writes_made_before_a_script_error(
        self, store: AnyRedisStore, client: redis.Redis
    ) -> None:
        """Why the script checks everything first: Redis has no rollback.

        With an error injected after the first XADD, that XADD stays while the version
        does not move. The real script has no failure point there; and a table left so
        (by a bug or a hand editing Redis) is then refused whole, never appended to.
        """
        failing = variant(store, FIRST_XADD, "error('injected after the first write')")
        with pytest.raises(StoreCorrupt, match="injected"):
            append(failing, "t1", b"a", b"b", at=EMPTY_HEAD, cid="c1")
        stream, feed, meta, commands = redis_snapshot(client, store, "t1")
        assert [entry_id for entry_id, _ in stream] == [b"0-1"]
        assert (feed, meta, commands) == ([], {}, {})
        with pytest.raises(StoreCorrupt):
            append(store, "t1", b"a", at=EMPTY_HEAD, cid="c2")
        assert redis_snapshot(client, store, "t1") == (stream, [], {}, {})

    def test_stream_entry_ids_are_versions(
        self, store: AnyRedisStore, client: redis.Redis
    ) -> None:
        append(store, "t1", b"a", b"b", at=EMPTY_HEAD, cid="c1")
        entries: Any = client.xrange(store.keys.table("t1").events)
        assert [entry_id for entry_id, _ in entries] == [b"0-1", b"0-2"]
        assert client.hgetall(store.keys.table("t1").meta)[b"v"] == b"2"

    def test_an_appended_entry_stores_no_previous_hash(
        self, store: AnyRedisStore, client: redis.Redis
    ) -> None:
        """The previous hash is the hash of the entry before: every entry written is one
        field, ``r``, a record (services/store/record.py)."""
        head = append(store, "t1", b"a", b"b", at=EMPTY_HEAD, cid="c1")
        append(store, "t1", b"c", at=head, cid="c2")
        entries: Any = client.xrange(store.keys.table("t1").events)
        assert [list(fields) for _, fields in entries] == [[b"r"]] * 3
        read = store.read("t1")
        assert [e.prev_hash for e in read] == [GENESIS, read[0].hash, read[1].hash]
        assert read[1].hash == event_hash(read[0].hash, b"b", "c1")

    def test_only_every_16th_entry_stores_its_hash_and_the_feed_keeps_every_one(
        self, store: AnyRedisStore, client: redis.Redis
    ) -> None:
        """An anchor (a version a multiple of ``HASH_EVERY``) stores its hash as its 32
        bytes in its record; every other record stores none; the feed's entries and the
        meta hold every hash, as sent."""
        head = EMPTY_HEAD
        for n, size in enumerate((3, 20, 1, 16)):
            head = append(store, "t1", *[b"e%d-%d" % (n, i) for i in range(size)], at=head, cid=f"c{n}")
        entries: Any = client.xrange(store.keys.table("t1").events)
        read = store.read("t1")
        assert HASH_EVERY == 16 and len(entries) == 40
        records = [record.decode(f[b"r"], v) for v, (_, f) in enumerate(entries, start=1)]
        assert [v for v, r in enumerate(records, start=1) if r.hash] == [16, 32]
        assert all(list(f) == [b"r"] for _, f in entries)
        assert [records[v - 1].hash for v in (16, 32)] == [bytes.fromhex(read[v - 1].hash) for v in (16, 32)]
        assert [e.version for e in read if e.hash_stored] == [16, 32]
        assert verify_chain(EMPTY_HEAD, read) == head == store.head("t1")
        feed = [e for e in store.read_feed(store.keys.partition_of("t1"), count=100) if e.table_id == "t1"]
        assert [e.hash for e in feed] == [e.hash for e in read]
        raw_feed: Any = client.xrange(store.keys.feed(store.keys.partition_of("t1")))
        assert all(len(f[b"h"]) == 32 for _, f in raw_feed)

    def test_a_record_is_a_head_on_an_append_s_first_event_every_anchor_and_version_1(
        self, store: AnyRedisStore, client: redis.Redis
    ) -> None:
        """A head stores the append's time and command id (docs/store.md, "The stored
        entry"); the other records have those of the entry before, as read."""
        seconds, micros = client.time()
        before = seconds * 1000 + micros // 1000
        head = EMPTY_HEAD
        sizes = (1, 3, 20, 1, 16, 5, 40)  # appends across anchors
        for n, size in enumerate(sizes):
            head = append(store, "t1", *[b"e%d-%d" % (n, i) for i in range(size)], at=head, cid=f"cmd-{n}")
        entries: Any = client.xrange(store.keys.table("t1").events)
        records = [record.decode(f[b"r"], v) for v, (_, f) in enumerate(entries, start=1)]
        firsts = [1 + sum(sizes[:n]) for n in range(len(sizes))]
        assert [v for v, r in enumerate(records, start=1) if r.command_id] == sorted({*firsts, *range(16, 87, 16)})
        assert {r.event for r in records} == {pack(b"e%d-%d" % (n, i)) for n, size in enumerate(sizes)
                                              for i in range(size)}
        read = store.read("t1")
        assert [e.command_id for e in read] == [f"cmd-{n}" for n, size in enumerate(sizes) for _ in range(size)]
        assert [e.version for e in read] == list(range(1, 87))
        assert {e.hash_version for e in read} == {HASH_VERSION}
        # version 1 and the anchors store the time whole; the other heads, as ms after the
        # time before (the append before's)
        whole = {1, *range(16, 87, 16)}
        assert [v for v, r in enumerate(records, start=1) if r.at_ms is not None] == sorted(whole)
        assert [v for v, r in enumerate(records, start=1) if r.delta_ms is not None] == sorted({*firsts} - whole)
        stamps: dict[str, int] = {}
        at = 0
        for r in records:
            if r.command_id:
                at = r.at_ms if r.at_ms is not None else at + (r.delta_ms or 0)
                stamps[r.command_id] = at
        assert [e.at_ms for e in read] == [stamps[e.command_id] for e in read]
        feed = [e.at_ms for e in store.read_feed(store.keys.partition_of("t1"), count=1000) if e.table_id == "t1"]
        assert [e.at_ms for e in read] == feed
        assert all(at is not None and before <= at for at in stamps.values())
        assert verify_chain(EMPTY_HEAD, read) == head == store.head("t1")
        for after in range(87):
            assert store.read("t1", after_version=after) == read[after:], after
        assert [f[b"r"] for _, f in entries] == encoded(read, delta_from=2)  # byte for byte

    def test_a_table_an_earlier_release_wrote_gets_a_whole_time_first_then_deltas(
        self, store: AnyRedisStore, client: redis.Redis
    ) -> None:
        """A table's meta written by a release before 2026-12-06 holds no ``a`` (the last
        append's time): the next append's head stores its time whole (6 bytes), the ones
        after it as deltas; every event reads with the time the feed holds."""
        head = append(store, "t1", b"a", b"b", at=EMPTY_HEAD, cid="c1")
        head = append(store, "t1", b"c", at=head, cid="c2")
        meta = store.keys.table("t1").meta
        assert client.hget(meta, "a") is not None
        client.hdel(meta, "a")  # as an earlier release left it
        head = append(store, "t1", b"d", b"e", at=head, cid="c3")
        head = append(store, "t1", b"f", at=head, cid="c4")
        entries: Any = client.xrange(store.keys.table("t1").events)
        records = [record.decode(f[b"r"], v) for v, (_, f) in enumerate(entries, start=1)]
        assert [(r.at_ms is not None, r.delta_ms is not None) for r in records] == [
            (True, False), (False, False), (False, True), (True, False), (False, False), (False, True)]
        read = store.read("t1")
        feed = [e.at_ms for e in store.read_feed(store.keys.partition_of("t1")) if e.table_id == "t1"]
        assert [e.at_ms for e in read] == feed and None not in feed
        assert [f[b"r"] for _, f in entries] == encoded(read, delta_from=2, whole={4})
        for after in range(7):
            assert store.read("t1", after_version=after) == read[after:], after

    def test_an_append_on_a_clock_that_went_back_stores_its_time_whole(
        self, store: AnyRedisStore, client: redis.Redis
    ) -> None:
        """A delta is never negative: when the server's clock reads earlier than the last
        append's time (here the meta says the last append was a minute ahead), the head
        stores its time whole; the next append is a delta again."""
        head = append(store, "t1", b"a", at=EMPTY_HEAD, cid="c1")
        meta = store.keys.table("t1").meta
        ahead = int(client.hget(meta, "a") or 0) + 60_000
        client.hset(meta, "a", ahead)
        head = append(store, "t1", b"b", b"c", at=head, cid="c2")
        assert int(client.hget(meta, "a") or 0) < ahead  # the append's own time
        head = append(store, "t1", b"d", at=head, cid="c3")
        entries: Any = client.xrange(store.keys.table("t1").events)
        records = [record.decode(f[b"r"], v) for v, (_, f) in enumerate(entries, start=1)]
        assert [(r.at_ms is not None, r.delta_ms is not None) for r in records] == [
            (True, False), (True, False), (False, False), (False, True)]
        read = store.read("t1")
        feed = [e.at_ms for e in store.read_feed(store.keys.partition_of("t1")) if e.table_id == "t1"]
        assert [e.at_ms for e in read] == feed
        assert [f[b"r"] for _, f in entries] == encoded(read, delta_from=2, whole={2})

    def test_a_hash_sent_as_hex_is_stored_as_its_32_bytes_in_the_record(
        self, store: AnyRedisStore, client: redis.Redis
    ) -> None:
        """An older caller sends every hash as 64 hex digits: the feed stores it as sent,
        the anchor's record its 32 bytes."""
        events = [b"x%d" % i for i in range(17)]
        reply = evalsha(store, "t1", raw_args(*events))
        assert reply[0] == b"ok"
        anchor = client.xrange(store.keys.table("t1").events, "0-16", "0-16")[0][1][b"r"]
        read = store.read("t1")
        assert record.decode(anchor, 16).hash == bytes.fromhex(read[15].hash)
        assert [e.hash for e in read] == [event_hash(GENESIS if n == 0 else read[n - 1].hash, e, "c1")
                                          for n, e in enumerate(events)]
        assert verify_chain(EMPTY_HEAD, read).hash == reply[2].decode()

    def test_the_script_keeps_the_hash_of_every_hash_every_th_entry_as_base_py_says(self) -> None:
        """``HASH_EVERY`` lives in base.py and is mirrored in append.lua (the readers count
        on the two agreeing: a read from the middle starts at the anchor before)."""
        found = re.search(r"^local HASH_EVERY = (\d+)", APPEND_SCRIPT, re.MULTILINE)
        assert found is not None and int(found.group(1)) == HASH_EVERY

    @pytest.mark.parametrize("layout", ["hex-with-links", "bytes"])
    def test_a_stream_an_older_release_stored_reads_as_stored_and_takes_sparse_appends(
        self, store: AnyRedisStore, client: redis.Redis, layout: str
    ) -> None:
        """Entries stored by older releases (every hash stored: as hex with its link ``p``,
        or as its 32 bytes) read with their stored hashes; appends on top store only the
        anchors'; the stream verifies whole and reads from any version as a whole read's
        tail."""
        key = store.keys.table("t1").events
        prev = GENESIS
        for version in range(1, 21):
            data, cid = b"old%d" % version, f"o{version // 3}"
            digest = event_hash(prev, data, cid)
            fields: Any = {"hv": 2, "v": version, "e": data, "c": cid}
            if layout == "bytes":
                fields |= {"h": bytes.fromhex(digest), "a": 1_700_000_000_000}
            else:
                fields |= {"h": digest, "p": prev}
            client.xadd(key, fields, id=f"0-{version}")
            prev = digest
        client.hset(store.keys.table("t1").meta, mapping={"v": 20, "h": prev})
        old = store.read("t1")
        assert all(e.hash_stored for e in old) and old[-1].hash == prev
        head = Head(20, prev)
        for n in range(3):
            head = append(store, "t1", *[b"new%d-%d" % (n, i) for i in range(10)], at=head, cid=f"n{n}")
        whole = store.read("t1")
        assert whole[:20] == old and len(whole) == 50
        assert [e.version for e in whole[20:] if e.hash_stored] == [32, 48]
        assert verify_chain(EMPTY_HEAD, whole) == head == store.head("t1")
        for after in range(51):
            assert store.read("t1", after_version=after) == whole[after:], after

    @pytest.mark.parametrize("damage", ["anchor-deleted", "anchor-blanked", "anchors-deleted", "run-deleted"])
    def test_a_read_from_the_middle_links_as_a_whole_read_when_the_anchor_is_damaged(
        self, store: AnyRedisStore, client: redis.Redis, damage: str
    ) -> None:
        """With the anchor a read from the middle would start at deleted or blanked behind
        the store's back (or every entry from it on to where the read starts), the read
        links each entry as a read of the whole stream does: verify then names the damage."""
        head = EMPTY_HEAD
        for n in range(5):
            head = append(store, "t1", *[b"e%d-%d" % (n, i) for i in range(9)], at=head, cid=f"c{n}")
        key = store.keys.table("t1").events
        if damage == "anchor-blanked":
            entries: Any = client.xrange(key)
            client.delete(key)  # rewritten, as someone with write access could
            blanked = [(entry_id, {**fields, b"h": b""} if entry_id == b"0-32" else fields)
                       for entry_id, fields in as_fields(entries)]
            for entry_id, fields in as_stored(blanked):
                client.xadd(key, fields, id=entry_id)
        else:
            gone = {"anchor-deleted": [32], "anchors-deleted": [16, 32], "run-deleted": range(30, 40)}[damage]
            for version in gone:
                client.xdel(key, f"0-{version}")
        whole = store.read("t1")
        for after in range(46):
            expected = [e for e in whole if e.version > after]
            assert store.read("t1", after_version=after) == expected, after
            assert [e.prev_hash for e in store.read("t1", after_version=after)] == [e.prev_hash for e in expected]

    def test_each_event_is_read_with_its_append_time_in_its_stream_and_in_the_feed(
        self, store: AnyRedisStore, client: redis.Redis
    ) -> None:
        """The append time is the server's clock at the append, the same for every event
        of one append and in both places a projection may fold it from (the feed live,
        the table's stream on a rebuild): a turn's deadline starts then."""
        seconds, micros = client.time()
        before = seconds * 1000 + micros // 1000
        head = append(store, "t1", b"a", b"b", at=EMPTY_HEAD, cid="c1")
        time.sleep(0.005)
        append(store, "t1", b"c", at=head, cid="c2")
        seconds, micros = client.time()
        after = seconds * 1000 + micros // 1000
        stream = [e.at_ms for e in store.read("t1")]
        feed = [e.at_ms for e in store.read_feed(store.keys.partition_of("t1")) if e.table_id == "t1"]
        assert stream == feed and len(stream) == 3
        first, second, third = (at for at in stream if at is not None)
        assert before <= first == second < third <= after

    @pytest.mark.parametrize("link", [GENESIS, "f" * 64], ids=["faithful", "forged"])
    def test_an_entry_stored_with_its_previous_hash_is_read_with_it(
        self, store: AnyRedisStore, client: redis.Redis, link: str
    ) -> None:
        """Entries written by releases that stored ``p`` are read with the link they
        store (so a forged one is caught: the chain check compares it with the hash
        before); the next entry, written today, links to the stored entry's hash."""
        first = event_hash(GENESIS, b"a", "c1")
        client.xadd(store.keys.table("t1").events,
                    {"hv": 2, "v": 1, "e": b"a", "h": first, "p": link, "c": "c1"}, id="0-1")
        client.hset(store.keys.table("t1").meta, mapping={"v": 1, "h": first})
        head = append(store, "t1", b"b", at=Head(1, first), cid="c2")
        old, new = store.read("t1")
        assert (old.prev_hash, new.prev_hash) == (link, first)
        assert store.read("t1", after_version=1) == [new]
        if link == GENESIS:
            assert verify_chain(EMPTY_HEAD, [old, new]) == head == store.head("t1")
        else:
            with pytest.raises(StoreCorrupt, match="event 1 does not follow"):
                verify_chain(EMPTY_HEAD, [old, new])

    @pytest.mark.parametrize("deleted", [1, 2])
    def test_a_read_from_after_a_deleted_entry_links_as_a_whole_read_does(
        self, store: AnyRedisStore, client: redis.Redis, deleted: int
    ) -> None:
        """With the entry a read starts after gone (deleted behind the store's back),
        its first entry links to the entry before the gap (GENESIS if none), as in a
        read of the whole stream, which verify then names at the gap."""
        append(store, "t1", b"a", b"b", b"c", b"d", at=EMPTY_HEAD, cid="c1")
        client.xdel(store.keys.table("t1").events, f"0-{deleted}")
        whole = store.read("t1")
        assert [e.version for e in whole] == [v for v in (1, 2, 3, 4) if v != deleted]
        assert store.read("t1", after_version=deleted) == whole[deleted - 1:]
        assert store.read("t1", after_version=deleted)[0].prev_hash == (GENESIS if deleted == 1 else whole[0].hash)

    def test_deleting_an_entry_does_not_move_the_version(
        self, store: AnyRedisStore, client: redis.Redis
    ) -> None:
        head = append(store, "t1", b"a", b"b", at=EMPTY_HEAD, cid="c1")
        client.xdel(store.keys.table("t1").events, "0-2")
        assert store.head("t1") == head
        assert append(store, "t1", b"c", at=head, cid="c2").version == 3
