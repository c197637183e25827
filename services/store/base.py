"""What every event store offers, the records it returns, its limits and the hash chain.

The records built on every append (``Head``, ``Appended``) are frozen ``msgspec.Struct``s:
as immutable as frozen dataclasses and several times cheaper to build. The records of a
read (``StoredEvent``, ``FeedEntry``) stay frozen dataclasses (``dataclasses.replace``
works on them, which the audit tests use).

A table's events form a chain. Each stored entry says which hash it carries (its ``hv``
field, ``hash_version`` here): version 2, which every append writes, is
``sha256(prev_hash_hex + command_id + "\n" + event)``, so the command id is inside the
chain too (a command id holds no newline, so the split is unambiguous); version 1, in
streams stored before it, is ``sha256(prev_hash_hex + event)``. The first event's prev hash
is ``GENESIS`` (64 zeros); an entry does not store its prev hash, the hash of the entry
before, and stores its own hash only every ``HASH_EVERY`` versions (docs/store.md, "The
stored entry"): a reader derives the rest. The hashes are computed here in Python
(fakeredis's Lua has no ``redis.sha1hex``, and Redis's Lua has no sha256); the append
script checks that the new events continue the stored head and records the hash version.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol

import msgspec

from services.store.errors import (
    BadAppend,
    PayloadTooLarge,
    StoreCorrupt,
)
from services.store.keys import check_command_id, check_table_id

GENESIS: Final = "0" * 64
# Mirrored in append.lua; a contract test sends oversize appends straight to the script.
MAX_EVENT_BYTES: Final = 64 * 1024
MAX_APPEND_BYTES: Final = 256 * 1024
MAX_EVENTS_PER_APPEND: Final = 64
MAX_OUTCOME_BYTES: Final = 4096

HASH_V1: Final = 1  # sha256(prev ‖ event): streams stored before the command id was chained
HASH_V2: Final = 2  # sha256(prev ‖ command id ‖ "\n" ‖ event)
HASH_VERSION: Final = HASH_V2  # what every append writes (append.lua records it as ``hv``)
# A stream entry stores its hash only when its version is a multiple of this (an *anchor*);
# the others store ``h`` empty and readers derive their hash from the entry before
# (docs/store.md, "The stored entry"). Mirrored in append.lua; a contract test pins the two.
HASH_EVERY: Final = 16

_HASH = re.compile(r"[0-9a-f]{64}")


class Head(msgspec.Struct, frozen=True):
    """Where a table's stream ends: its version (event count) and last event hash."""

    version: int
    hash: str


EMPTY_HEAD: Final = Head(0, GENESIS)


@dataclass(frozen=True, slots=True)
class StoredEvent:
    version: int
    data: bytes
    hash: str
    # the hash of the entry before (GENESIS for the first): stored entries do not hold it,
    # the store reads it off that entry; one an older release stored with ``p`` has that
    prev_hash: str
    command_id: str
    hash_version: int = HASH_V1  # an entry without ``hv`` was stored before version 2
    # when it was appended (the Redis server's clock, ms since the epoch; ``a``): the turn
    # that follows starts then (its deadline, projections/views.py). None before it was stored.
    at_ms: int | None = None
    # whether ``hash`` was read as stored (False: the entry stores none, an entry between two
    # anchors, and the reader derived it from ``prev_hash``). Not compared: the archive holds
    # every hash, and an event reads the same from there.
    hash_stored: bool = field(default=True, compare=False)


def one_append(first: StoredEvent, other: StoredEvent) -> bool:
    """Whether ``other`` was appended with ``first``, by one command: the same command id
    and the same append time (an id may be sent again once the idempotency window has
    forgotten it, for a new command: docs/store.md, "Idempotency"); by the id alone where
    either has no time (stored before it was kept)."""
    return other.command_id == first.command_id and (
        first.at_ms is None or other.at_ms is None or other.at_ms == first.at_ms)


@dataclass(frozen=True, slots=True)
class FeedEntry:
    id: str
    table_id: str
    version: int
    data: bytes
    hash: str
    at_ms: int | None = None  # when it was appended (``a``), as in its table's stream


class Appended(msgspec.Struct, frozen=True):
    """The answer to an append.

    ``outcome`` is what the first successful append of this command id stored;
    ``duplicate`` says this call wrote nothing because the command id was seen before.
    ``head`` is the table's head after the call.
    """

    head: Head
    outcome: bytes
    duplicate: bool


class EventStore(Protocol):
    def append(
        self,
        table_id: str,
        events: Sequence[bytes],
        *,
        expected: Head,
        command_id: str,
        outcome: bytes,
    ) -> Appended:
        """Append all of ``events`` or none; raise ``VersionConflict`` if the table moved."""
        ...

    def read(
        self, table_id: str, after_version: int = 0, to_version: int | None = None
    ) -> list[StoredEvent]:
        """Events with ``after_version < version <= to_version``, in order."""
        ...

    def head(self, table_id: str) -> Head: ...

    def outcome_of(self, table_id: str, command_id: str) -> bytes | None:
        """The stored outcome of a command id, or None if it never appended."""
        ...

    def partition_of(self, table_id: str) -> int: ...

    def read_feed(self, partition: int, after: str = "0-0", count: int = 100) -> list[FeedEntry]:
        """Feed entries after the entry id ``after``, oldest first."""
        ...

    def table_ids(self) -> list[str]:
        """Every table with at least one event, sorted (for audits over the whole store)."""
        ...


class AsyncEventStore(Protocol):
    """``EventStore`` for asyncio: the same operations, answers and errors, awaited."""

    async def append(
        self,
        table_id: str,
        events: Sequence[bytes],
        *,
        expected: Head,
        command_id: str,
        outcome: bytes,
    ) -> Appended: ...

    async def read(
        self, table_id: str, after_version: int = 0, to_version: int | None = None
    ) -> list[StoredEvent]: ...

    async def head(self, table_id: str) -> Head: ...

    async def outcome_of(self, table_id: str, command_id: str) -> bytes | None: ...

    def partition_of(self, table_id: str) -> int: ...

    async def read_feed(
        self, partition: int, after: str = "0-0", count: int = 100
    ) -> list[FeedEntry]: ...

    async def table_ids(self) -> list[str]: ...


def event_hash(prev_hash: str, data: bytes, command_id: str | None = None) -> str:
    """The hash of an event after ``prev_hash``: version 2 with its ``command_id``,
    version 1 (the hash of streams stored before it) without."""
    if command_id is None:
        digest = hashlib.sha256(prev_hash.encode("ascii"))
    else:
        digest = hashlib.sha256(f"{prev_hash}{command_id}\n".encode("ascii"))
    digest.update(data)
    return digest.hexdigest()


def chain_hashes(prev_hash: str, events: Sequence[bytes], command_id: str) -> list[str]:
    """The version-2 hashes of one command's events, chained after ``prev_hash``."""
    hashes: list[str] = []
    for data in events:
        prev_hash = event_hash(prev_hash, data, command_id)
        hashes.append(prev_hash)
    return hashes


def stored_hash(prev_hash: str, event: StoredEvent) -> str | None:
    """What ``event``'s hash must be after ``prev_hash``, by the hash version it names
    (None: a version this release does not know)."""
    return derived_hash(prev_hash, event.data, event.command_id, event.hash_version)


def derived_hash(prev_hash: str, data: bytes, command_id: str, hash_version: int) -> str | None:
    """The hash of an entry after ``prev_hash`` by ``hash_version`` (None: a version this
    release does not know)."""
    if hash_version == HASH_V2:
        return event_hash(prev_hash, data, command_id)
    if hash_version == HASH_V1:
        return event_hash(prev_hash, data)
    return None


def is_anchor(version: int) -> bool:
    """Whether an entry of this version stores its hash (every ``HASH_EVERY``-th)."""
    return version % HASH_EVERY == 0


def verify_chain(start: Head, events: Sequence[StoredEvent]) -> Head:
    """Check ``events`` continue ``start`` version by version and hash by hash."""
    head = start
    for event in events:
        if event.version != head.version + 1 or event.prev_hash != head.hash:
            raise StoreCorrupt(f"event {event.version} does not follow version {head.version}")
        if stored_hash(head.hash, event) != event.hash:
            raise StoreCorrupt(f"event {event.version} does not match its hash")
        head = Head(event.version, event.hash)
    return head


def check_append(
    table_id: str, events: Sequence[bytes], expected: Head, command_id: str, outcome: bytes
) -> None:
    """Refuse, before any I/O, an append no store could accept."""
    check_table_id(table_id)
    check_command_id(command_id)
    if not events:
        raise BadAppend("an append needs at least one event")
    if len(events) > MAX_EVENTS_PER_APPEND:
        raise BadAppend(f"at most {MAX_EVENTS_PER_APPEND} events per append")
    if not isinstance(expected.version, int) or expected.version < 0:
        raise BadAppend("the expected version is a count of events, 0 or more")
    if not _HASH.fullmatch(expected.hash):
        raise BadAppend("the expected head hash is 64 lowercase hex digits")
    _check_sizes(events, outcome)


def _check_sizes(events: Sequence[bytes], outcome: bytes) -> None:
    total = 0
    for data in events:
        if not isinstance(data, bytes):
            raise BadAppend("events are bytes")
        if len(data) > MAX_EVENT_BYTES:
            raise PayloadTooLarge(f"an event is {len(data)} bytes, the limit is {MAX_EVENT_BYTES}")
        total += len(data)
    if total > MAX_APPEND_BYTES:
        raise PayloadTooLarge(f"an append is {total} bytes, the limit is {MAX_APPEND_BYTES}")
    if not isinstance(outcome, bytes) or len(outcome) > MAX_OUTCOME_BYTES:
        raise PayloadTooLarge(f"an outcome is bytes, at most {MAX_OUTCOME_BYTES}")


def hash_hex(stored: bytes) -> str:
    """A stored hash as 64 hex digits: entries store its 32 bytes; entries stored before
    2026-12-05, and hashes sent as hex, hold the hex digits (docs/store.md, "The stored entry")."""
    if len(stored) == 32:
        return stored.hex()
    if len(stored) == 64:
        return stored.decode("ascii")
    raise ValueError(f"a stored hash is 32 bytes or 64 hex digits, not {len(stored)} bytes")


def appended_at(fields: dict[bytes, bytes]) -> int | None:
    """An entry's append time (``a``, ms), None for an entry stored before it was kept."""
    at = fields.get(b"a")
    return None if at is None else int(at)
