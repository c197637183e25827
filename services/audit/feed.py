"""The partition feed against the table streams: the streams are the record; the feed is a
copy of their entries, queued for the projections.

Every append writes a table's events to its stream and to its partition's feed in one
script, so every entry the feed still holds (it is trimmed below the projections'
checkpoints: a missing entry is no fault) must be its table's event at that version, byte
for byte, hash for hash, and each version once, in order. An entry that is not is forged
(or the stream was edited since): ``mighty verify`` names it for a table, ``projections
check`` for a partition, and ``projections rebuild`` refuses to run over it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Final

from services.projection.store import BadFeedEntry, feed_entries
from services.store.base import FeedEntry, StoredEvent
from services.store.cluster import SyncClient
from services.store.errors import BadTableId
from services.store.keys import KeySpace, check_table_id

_PAGE: Final = 1000


@dataclass(frozen=True, slots=True)
class FeedFinding:
    """A feed entry that is not its table's stored event."""

    feed_id: str
    table_id: str
    version: int
    problem: str


def partition_feed(client: SyncClient, space: KeySpace, partition: int) -> Iterator[FeedEntry]:
    """Every entry the partition's feed holds now, oldest first (an unreadable one as a
    ``BadFeedEntry``)."""
    start = "-"
    while True:
        raw = client.xrange(space.feed(partition), start, "+", count=_PAGE)
        chunk = feed_entries(raw)  # type: ignore[arg-type]
        yield from chunk
        if len(chunk) < _PAGE:
            return
        start = f"({chunk[-1].id}"


def by_table(entries: Iterable[FeedEntry]) -> tuple[dict[str, list[FeedEntry]], list[FeedFinding]]:
    """The entries per table, in feed order, and the entries that name no table at all."""
    tables: dict[str, list[FeedEntry]] = {}
    strays: list[FeedFinding] = []
    for entry in entries:
        if isinstance(entry, BadFeedEntry):
            strays.append(FeedFinding(entry.id, entry.table_id, 0, entry.problem))
            continue
        try:
            check_table_id(entry.table_id)
        except BadTableId:
            strays.append(FeedFinding(entry.id, entry.table_id[:64], entry.version,
                                      "the entry names no valid table id"))
            continue
        tables.setdefault(entry.table_id, []).append(entry)
    return tables, strays


def check_table_feed(table_id: str, stored: list[StoredEvent], entries: Iterable[FeedEntry]) -> FeedFinding | None:
    """The first of ``table_id``'s feed entries (in feed order) that is not its stored
    event at that version, or None when every one is."""
    at = {event.version: event for event in stored}
    last = 0
    for entry in entries:
        if entry.version <= last:
            return FeedFinding(entry.id, table_id, entry.version,
                               f"feed entry {entry.id} repeats or goes back to version {entry.version} "
                               f"after version {last}")
        event = at.get(entry.version)
        if event is None:
            return FeedFinding(entry.id, table_id, entry.version,
                               f"feed entry {entry.id} holds version {entry.version} of the table, "
                               "which its stream does not")
        if entry.data != event.data or entry.hash != event.hash:
            return FeedFinding(entry.id, table_id, entry.version,
                               f"feed entry {entry.id} is not the stream's event {entry.version} "
                               "(its bytes or its hash differ): one of the two was forged")
        last = entry.version
    return None


def check_partition_feed(entries: Iterable[FeedEntry],
                         read: Callable[[str, int, int], list[StoredEvent]]) -> list[FeedFinding]:
    """Every table's first bad entry in a partition's feed, and every entry naming no
    table; ``read(table, after, to)`` reads a table's stream (only the versions the feed
    holds are read: it is bounded, the streams are not)."""
    tables, findings = by_table(entries)
    for table_id, held in sorted(tables.items()):
        low = min(e.version for e in held)
        high = max(e.version for e in held)
        stored = read(table_id, max(low - 1, 0), max(high, 0)) if high >= 1 else []
        found = check_table_feed(table_id, stored, held)
        if found is not None:
            findings.append(found)
    return findings
