"""Reading a table wherever it lives: Redis while it is live, PostgreSQL once archived.

``ArchivedEventStore`` is the Redis event store (``RedisEventStore``: appends, feeds and
live reads unchanged) whose reads fall through to the archive for a table Redis knows only
by its index entry (``services/archive/keys.py``). The fall-through costs nothing on the
hot path: Redis is asked for the index only when a read finds no events (a new table, an
archived one) or a head finds no table. Without an archive configured, reading an
archived table raises ``ArchiveUnavailable`` instead of answering "no events": a caller
must never take an archived table for a new one (the command handler would let its id be
created again).

``services/bootstrap.py`` builds this store for every process, so ``mighty verify``,
``export``, ``log``, the command handler, ``projections rebuild`` and the gateway read
archived tables without knowing they are. ``AsyncArchivedEventStore`` is the same on the
asyncio store (the gateway's): its PostgreSQL reads, rare by design (a table is archived
once it has been closed for a while), run in a thread, the archive's one connection
guarded by its lock, so the event loop never waits on PostgreSQL.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Final, Protocol

from projections.docs import DocKey
from projections.ledger import table_name
from projections.ratings import hand_docs, table_of_hand_doc
from services.archive.errors import ArchiveUnavailable
from services.archive.keys import ArchiveKeys, IndexEntry, decode_entry
from services.archive.postgres import PostgresArchive
from services.projection.rater import stored_table_hands
from services.store.async_redis_store import AsyncRedisEventStore
from services.store.base import Head, StoredEvent
from services.store.cluster import AsyncClient, SyncClient
from services.store.keys import KeySpace
from services.store.redis_store import READ_CHUNK, RedisEventStore, _redis_errors

# The projection kinds whose documents outlive a table's archiving: the ledger's players'
# totals and the ratings' hands (the kind ``ratings``, docs/ratings.md), partition
# documents its events went into. A rebuild of these kinds folds the archived tables too.
# Its views are deleted with it, and so is its directory entry among the finished tables
# (dir:closed).
KINDS_KEPT_ARCHIVED: Final = ("ledger", "ratings")


class TableDocs(Protocol):
    """The documents of a kind that are one table's own: the archive worker deletes them
    with the table, and a rebuild of the kind leaves them out for an archived table."""

    def of_table(self, table_id: str, events: Sequence[StoredEvent]) -> list[DocKey]:
        """The table's own documents, from its events."""
        ...

    def owner(self, doc: DocKey) -> str | None:
        """The table ``doc`` is the own document of (None: a partition's document)."""
        ...


class TableLedgerDoc:
    """The table's ledger: the gateway folds an archived table's from its archived events."""

    def of_table(self, table_id: str, events: Sequence[StoredEvent]) -> list[DocKey]:
        return [DocKey(table_name(table_id))]

    def owner(self, doc: DocKey) -> str | None:
        prefix = table_name("")
        return doc.name[len(prefix):] if doc.field is None and doc.name.startswith(prefix) else None


class RatedHandDocs:
    """The partition's record of each of the table's hands (``ratings:hands:<hour>``): once
    the rater has applied them (the archive waits for it), a re-rating takes them from the
    archived events instead (docs/ratings.md, "Archived tables")."""

    def of_table(self, table_id: str, events: Sequence[StoredEvent]) -> list[DocKey]:
        return hand_docs(stored_table_hands(table_id, events))

    def owner(self, doc: DocKey) -> str | None:
        return table_of_hand_doc(doc)


# By kind, the documents of a kind kept archived that are a table's own.
TABLE_DOCS_ARCHIVED: Final[dict[str, TableDocs]] = {"ledger": TableLedgerDoc(), "ratings": RatedHandDocs()}


def _no_archive(table_id: str) -> ArchiveUnavailable:
    return ArchiveUnavailable(
        f"table {table_id} is archived in PostgreSQL and no archive is configured: "
        "set MIGHTY_ARCHIVE_URL (or --archive-url)")


class ArchivedEventStore(RedisEventStore):
    def __init__(self, client: SyncClient, *, keys: KeySpace | None = None,
                 archive: PostgresArchive | None = None, **options: Any) -> None:
        super().__init__(client, keys=keys, **options)
        self.archive = archive
        self.archive_keys = ArchiveKeys(self.keys)

    def index_entry(self, table_id: str) -> IndexEntry | None:
        """The table's archive index entry, or None while it is not archived."""
        with _redis_errors():
            found: Any = self.client.hget(self.archive_keys.index_of(table_id), table_id)
        return None if found is None else decode_entry(bytes(found))

    def _archive(self, table_id: str) -> PostgresArchive:
        if self.archive is None:
            raise _no_archive(table_id)
        return self.archive

    def read(self, table_id: str, after_version: int = 0, to_version: int | None = None) -> list[StoredEvent]:
        events = super().read(table_id, after_version, to_version)
        # An empty answer, or one long enough to have been read in several chunks (the
        # archive may have deleted the stream between two of them), is checked against
        # the index; a table with events in Redis and no index entry is live.
        if events and len(events) < READ_CHUNK:
            return events
        if self.index_entry(table_id) is None:
            return events
        return self._archive(table_id).read(table_id, after_version, to_version)

    def head(self, table_id: str) -> Head:
        head = super().head(table_id)
        if head.version:
            return head
        entry = self.index_entry(table_id)
        return head if entry is None else Head(entry.version, entry.head)

    def archived_ids(self, partition: int) -> list[str]:
        """The archived tables of a partition, from their index entries, sorted."""
        with _redis_errors():
            names: Any = self.client.hkeys(self.archive_keys.index(partition))
        return sorted(name.decode() for name in names)

    def table_ids(self) -> list[str]:
        """Every table, live or archived."""
        archived = [t for p in range(self.keys.partitions) for t in self.archived_ids(p)]
        return sorted(set(super().table_ids()) | set(archived))


class AsyncArchivedEventStore(AsyncRedisEventStore):
    """``ArchivedEventStore`` for asyncio: appends as ``AsyncRedisEventStore``'s, reads that
    fall through to PostgreSQL for an archived table (in a thread)."""

    def __init__(self, client: AsyncClient, *, keys: KeySpace | None = None,
                 archive: PostgresArchive | None = None, **options: Any) -> None:
        super().__init__(client, keys=keys, **options)
        self.archive = archive
        self.archive_keys = ArchiveKeys(self.keys)

    async def index_entry(self, table_id: str) -> IndexEntry | None:
        with _redis_errors():
            found: Any = await self.client.hget(self.archive_keys.index_of(table_id), table_id)
        return None if found is None else decode_entry(bytes(found))

    def _archive(self, table_id: str) -> PostgresArchive:
        if self.archive is None:
            raise _no_archive(table_id)
        return self.archive

    async def read(self, table_id: str, after_version: int = 0,
                   to_version: int | None = None) -> list[StoredEvent]:
        events = await super().read(table_id, after_version, to_version)
        if events and len(events) < READ_CHUNK:  # as ArchivedEventStore.read decides
            return events
        if await self.index_entry(table_id) is None:
            return events
        archive = self._archive(table_id)
        return await asyncio.to_thread(archive.read, table_id, after_version, to_version)

    async def head(self, table_id: str) -> Head:
        head = await super().head(table_id)
        if head.version:
            return head
        entry = await self.index_entry(table_id)
        return head if entry is None else Head(entry.version, entry.head)

    async def archived_ids(self, partition: int) -> list[str]:
        with _redis_errors():
            names: Any = await self.client.hkeys(self.archive_keys.index(partition))
        return sorted(name.decode() for name in names)

    async def table_ids(self) -> list[str]:
        """Every table, live or archived."""
        archived = [t for p in range(self.keys.partitions) for t in await self.archived_ids(p)]
        return sorted(set(await super().table_ids()) | set(archived))
