"""The in-memory twin of the Redis event store: same contract, same refusals.

For unit tests (the store contract runs on it too, tests/store_contract.py). One lock makes each append atomic, the
way one script is on Redis.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from services.store.base import (
    EMPTY_HEAD,
    Appended,
    FeedEntry,
    Head,
    StoredEvent,
    chain_hashes,
    check_append,
)
from services.store.errors import ChainMismatch, VersionConflict
from services.store.keys import KeySpace, check_command_id, check_table_id


@dataclass
class _Table:
    head: Head = EMPTY_HEAD
    events: list[StoredEvent] = field(default_factory=list)
    outcomes: dict[str, bytes] = field(default_factory=dict)


class InMemoryEventStore:
    def __init__(self, *, keys: KeySpace | None = None) -> None:
        self.keys = keys or KeySpace()
        self._tables: dict[str, _Table] = {}
        self._feeds: dict[int, list[FeedEntry]] = {}
        self._lock = threading.Lock()

    def append(
        self,
        table_id: str,
        events: Sequence[bytes],
        *,
        expected: Head,
        command_id: str,
        outcome: bytes,
    ) -> Appended:
        check_append(table_id, events, expected, command_id, outcome)
        hashes = chain_hashes(expected.hash, events)
        with self._lock:
            table = self._tables.setdefault(table_id, _Table())
            if command_id in table.outcomes:
                return Appended(table.head, table.outcomes[command_id], duplicate=True)
            if expected.version != table.head.version:
                raise VersionConflict(expected.version, table.head.version)
            if expected.hash != table.head.hash:
                raise ChainMismatch(
                    f"the table's head hash is {table.head.hash}, not {expected.hash}"
                )
            self._write(table_id, table, list(events), hashes, command_id)
            table.outcomes[command_id] = outcome
            return Appended(table.head, outcome, duplicate=False)

    def _write(
        self, table_id: str, table: _Table, events: list[bytes], hashes: list[str], command_id: str
    ) -> None:
        feed = self._feeds.setdefault(self.keys.partition_of(table_id), [])
        prev = table.head
        for data, digest in zip(events, hashes, strict=True):
            version = prev.version + 1
            table.events.append(StoredEvent(version, data, digest, prev.hash, command_id))
            feed.append(FeedEntry(f"0-{len(feed) + 1}", table_id, version, data, digest))
            prev = Head(version, digest)
        table.head = prev

    def read(
        self, table_id: str, after_version: int = 0, to_version: int | None = None
    ) -> list[StoredEvent]:
        check_table_id(table_id)
        with self._lock:
            table = self._tables.get(table_id)
            events = [] if table is None else table.events[max(after_version, 0) : to_version]
        return list(events)

    def table_ids(self) -> list[str]:
        with self._lock:
            return sorted(t for t, table in self._tables.items() if table.events)

    def head(self, table_id: str) -> Head:
        check_table_id(table_id)
        with self._lock:
            table = self._tables.get(table_id)
            return EMPTY_HEAD if table is None else table.head

    def outcome_of(self, table_id: str, command_id: str) -> bytes | None:
        check_table_id(table_id)
        check_command_id(command_id)
        with self._lock:
            table = self._tables.get(table_id)
            return None if table is None else table.outcomes.get(command_id)

    def partition_of(self, table_id: str) -> int:
        return self.keys.partition_of(table_id)

    def read_feed(self, partition: int, after: str = "0-0", count: int = 100) -> list[FeedEntry]:
        self.keys.tag(partition)
        position = int(after.split("-", 1)[1])
        with self._lock:
            return list(self._feeds.get(partition, [])[position : position + count])


class AsyncInMemoryEventStore:
    """The in-memory twin for asyncio: the very same store behind ``await``.

    ``sync`` is the ``InMemoryEventStore`` holding the data, so a test can look at what
    the async side wrote through the sync API (and the two can never answer differently).
    """

    def __init__(self, *, keys: KeySpace | None = None, sync: InMemoryEventStore | None = None) -> None:
        self.sync = sync if sync is not None else InMemoryEventStore(keys=keys)
        self.keys = self.sync.keys

    async def append(
        self,
        table_id: str,
        events: Sequence[bytes],
        *,
        expected: Head,
        command_id: str,
        outcome: bytes,
    ) -> Appended:
        return self.sync.append(
            table_id, events, expected=expected, command_id=command_id, outcome=outcome
        )

    async def read(
        self, table_id: str, after_version: int = 0, to_version: int | None = None
    ) -> list[StoredEvent]:
        return self.sync.read(table_id, after_version, to_version)

    async def table_ids(self) -> list[str]:
        return self.sync.table_ids()

    async def head(self, table_id: str) -> Head:
        return self.sync.head(table_id)

    async def outcome_of(self, table_id: str, command_id: str) -> bytes | None:
        return self.sync.outcome_of(table_id, command_id)

    def partition_of(self, table_id: str) -> int:
        return self.sync.partition_of(table_id)

    async def read_feed(
        self, partition: int, after: str = "0-0", count: int = 100
    ) -> list[FeedEntry]:
        return self.sync.read_feed(partition, after, count)
