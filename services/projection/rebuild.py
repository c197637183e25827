"""Rebuild a projection from the table streams, or check the stored one against a rebuild.

The feed is a queue, trimmed below the slowest kind's checkpoint, so a rebuild reads
the tables' own streams (the record, never trimmed), each up to a **cut**: a feed
position and, for every table of the partition, the version it had there. The events
are folded with the very code the live workers run (``projections.replay``); the
projections of different tables are independent (a player's ledger is a sum), so
folding table by table gives the bytes the workers stored folding the feed's
interleaving. ``check`` folds up to the stored checkpoint and compares, byte for byte
(a document an earlier release stored as JSON: as the same document, projections/docs.py).

The cut at a feed position ``at``: every table that has an event at or before ``at``
exists when the partition's tables are listed afterwards (a table's keys are written
with its first event and never deleted); the events a table got after ``at`` are
exactly its entries in the feed after ``at``, which are still there (the feed is never
trimmed past this kind's checkpoint, and ``at`` is at or after it: the stored
checkpoint for ``check``, the feed's end for a rebuild, which holds the lease so the
checkpoint stays put). Each table is folded up to its first such entry, less one.

Archived tables (docs/archive.md) have left Redis: given the read-through store
(``ArchivedEventStore``, what ``services.bootstrap`` wires), a kind whose documents outlive
the archiving (the ledger) folds them from PostgreSQL too; every one of their events is
before any cut, since a table is archived only once every kind has applied its feed entries.
The streams are the truth, the feed only their copy: before either, the partition's feed
is checked against them (``services/audit/feed.py``), every entry it still holds against
its table's event at that version. ``check`` reports an entry that is not (a forged one:
the workers folded it); ``rebuild`` refuses to run over one, writing nothing, so a forged
entry's effect is never made permanent behind a fresh checkpoint: remove it (or restore
the stream it contradicts) and rebuild.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import redis
import structlog

from domain.codec import decode_event
from domain.table import TableEvent
from projections import new_projection, replay
from projections.docs import DocKey, same_document
from services.archive.reads import KINDS_KEPT_ARCHIVED, TABLE_DOCS_ARCHIVED, ArchivedEventStore
from services.audit.feed import FeedFinding, check_partition_feed, partition_feed
from services.projection.keys import ProjectionKeys
from services.projection.store import ANNOUNCED_HASHES, Checkpoint, ProjectionStore
from services.store.base import StoredEvent
from services.store.redis_store import RedisEventStore
from services.store.table_index import indexed_tables

log = structlog.get_logger("mighty.workers")
_CHUNK = 2000
_REBUILD_LEASE_MS = 60_000


@dataclass(frozen=True, slots=True)
class Difference:
    partition: int
    doc: DocKey
    stored: bytes | None
    rebuilt: bytes | None


def table_ids(store: ProjectionStore, partition: int) -> list[str]:
    """Every table of the partition, from its table index (no SCAN of the keyspace:
    services/store/table_index.py), sorted."""
    return indexed_tables(store.client, store.keys.space, partition)


def later_versions(store: ProjectionStore, partition: int, at: str,
                   every_chunk: Callable[[], None] | None = None) -> dict[str, int]:
    """Per table, the first version the feed holds after ``at``: the table's events from
    there on came after the cut. (An entry written into the feed behind the store's back
    counts too; it can only make the cut earlier, and its own table is then held back.)"""
    first: dict[str, int] = {}
    after = at
    while True:
        if every_chunk is not None:
            every_chunk()
        chunk = store.feed_after(partition, after, _CHUNK)
        for entry in chunk:
            if entry.version >= 1 and entry.table_id and entry.version < first.get(entry.table_id, 1 << 62):
                first[entry.table_id] = entry.version
        if len(chunk) < _CHUNK:
            return first
        after = chunk[-1].id


def _stream(events: RedisEventStore, table_id: str, upto: int,
            every_chunk: Callable[[], None] | None) -> Iterator[StoredEvent]:
    after = 0
    while after < upto:
        if every_chunk is not None:
            every_chunk()
        chunk = events.read(table_id, after, min(upto, after + _CHUNK))
        yield from chunk
        if not chunk:
            return
        after = chunk[-1].version


def compute(store: ProjectionStore, partition: int, upto: Checkpoint | None,
            every_chunk: Callable[[], None] | None = None,
            events: RedisEventStore | None = None) -> tuple[dict[DocKey, bytes], Checkpoint]:
    """The documents of a partition folded from the table streams up to the cut at
    ``upto`` (None: the feed's end now), and that cut's checkpoint. ``events``: the
    store to read the streams from (default: Redis alone, which knows no archived table)."""
    cut = store.feed_position(partition) if upto is None else upto
    tables = table_ids(store, partition)
    archived: list[str] = []
    if isinstance(events, ArchivedEventStore) and store.keys.kind in KINDS_KEPT_ARCHIVED:
        archived = events.archived_ids(partition)
        tables = sorted(set(tables) | set(archived))
    later = later_versions(store, partition, cut.id, every_chunk)
    events = events or RedisEventStore(store.client, keys=store.keys.space)
    top = 1 << 62

    def folded() -> Iterator[tuple[str, int, TableEvent, int | None]]:
        for table_id in tables:
            for event in _stream(events, table_id, later.get(table_id, top) - 1, every_chunk):
                yield table_id, event.version, decode_event(event.data), event.at_ms

    docs = replay(new_projection(store.keys.kind), folded())
    # an archived table's own documents left Redis with it (docs/archive.md): its events
    # still count in the partition's (the players' ledgers), its documents are not made
    _leave_out_archived(store, docs, archived)
    return docs, cut


def _leave_out_archived(store: ProjectionStore, docs: dict[DocKey, bytes], archived: Iterable[str]) -> None:
    """Drop the archived tables' own documents (``TABLE_DOCS_ARCHIVED``: a table's ledger,
    the ratings' records of its hands), which left Redis with them."""
    own = TABLE_DOCS_ARCHIVED.get(store.keys.kind)
    gone = set(archived)
    if own is not None and gone:
        for doc in [doc for doc in docs if own.owner(doc) in gone]:
            del docs[doc]


def forged_entries(store: ProjectionStore, partition: int,
                   events: RedisEventStore | None = None) -> list[FeedFinding]:
    """The partition's feed entries that are not their table's stored events (the feed is
    read first, the streams after it, so a genuine entry is always in its stream). Give
    the read-through store (``ArchivedEventStore``) so an archived table's entries still
    in the feed are checked against its archived stream."""
    entries = list(partition_feed(store.client, store.keys.space, partition))
    events = events or RedisEventStore(store.client, keys=store.keys.space)
    return check_partition_feed(entries, events.read)


class ForgedFeed(RuntimeError):
    """The partition's feed holds entries its tables' streams do not: nothing was rebuilt."""

    def __init__(self, partition: int, findings: list[FeedFinding]) -> None:
        first = findings[0]
        super().__init__(
            f"partition {partition}: {len(findings)} feed entr{'y' if len(findings) == 1 else 'ies'} "
            f"not in the table streams, first {first.feed_id} (table {first.table_id}, version "
            f"{first.version}): {first.problem}; nothing was rebuilt. Remove the forged entries "
            "(XDEL) or restore the streams they contradict, then rebuild")
        self.partition = partition
        self.findings = findings


def check(store: ProjectionStore, partition: int, attempts: int = 20,
          events: RedisEventStore | None = None) -> list[Difference]:
    """Compare the stored documents with a rebuild up to the stored checkpoint."""
    for _ in range(attempts):
        checkpoint = store.checkpoint(partition)
        rebuilt, _ = compute(store, partition, checkpoint, events=events)
        # the documents the rebuild makes, read by name (no SCAN of the keyspace): a
        # stored document of a table the store does not hold is not looked for
        stored = store.docs_named(partition, rebuilt.keys())
        if store.checkpoint(partition) != checkpoint:
            continue  # a worker wrote meanwhile: read again
        if isinstance(events, ArchivedEventStore) and store.keys.kind in TABLE_DOCS_ARCHIVED:
            # a table archived while this ran took its own documents with it
            gone = events.archived_ids(partition)
            _leave_out_archived(store, rebuilt, gone)
            _leave_out_archived(store, stored, gone)
        return [
            Difference(partition, doc, stored.get(doc), rebuilt.get(doc))
            for doc in sorted(stored.keys() | rebuilt.keys(), key=lambda d: (d.name, d.field or ""))
            if not same_document(stored.get(doc), rebuilt.get(doc))  # or a JSON one of an earlier release
        ]
    raise RuntimeError(f"partition {partition} kept moving; stop its workers to check it")


class RebuildInterrupted(RuntimeError):
    """The partition's lease was taken while the rebuild ran: nothing was written."""

    def __init__(self, partition: int) -> None:
        super().__init__(f"partition {partition}: the lease was taken during the rebuild; run it again")


def rebuild(store: ProjectionStore, partition: int, events: RedisEventStore | None = None) -> Checkpoint:
    """Recompute a partition's documents from the table streams and store them with the
    checkpoint of the cut (the feed's end when it starts), clearing the kind's dead
    letters of the partition: the rebuild has folded every event they stood for.

    The rebuild takes the partition's lease from whichever worker holds it (that
    worker's next write is refused, and it starts over from the new checkpoint), renews
    it at every chunk it reads, and writes only if it still holds it (WATCH on the
    lease, then one MULTI), so a rebuild that outlived its lease writes nothing. An
    event the rules cannot read stops the rebuild (nothing is written): fix it first. So
    does a feed entry that is not its table's event (``ForgedFeed``).
    """
    forged = forged_entries(store, partition, events)
    if forged:
        raise ForgedFeed(partition, forged)
    token = f"rebuild-{secrets.token_hex(4)}"
    store.take_over(partition, token, _REBUILD_LEASE_MS)

    def keep_lease() -> None:
        if store.renew([partition], token, _REBUILD_LEASE_MS)[0] is None:
            raise RebuildInterrupted(partition)

    try:
        docs, checkpoint = compute(store, partition, None, every_chunk=keep_lease, events=events)
        _write(store, partition, docs, checkpoint, token)
    finally:
        store.release(partition, token)
    log.info("partition rebuilt", kind=store.keys.kind, partition=partition, docs=len(docs),
             checkpoint=checkpoint.id, entries=checkpoint.count)
    return checkpoint


def _write(store: ProjectionStore, partition: int, docs: dict[DocKey, bytes], checkpoint: Checkpoint,
           token: str) -> None:
    keys = store.keys
    stale = store.docs(partition).keys() - docs.keys()
    pipe = store.client.pipeline(transaction=True)
    pipe.watch(keys.lease(partition))
    if pipe.get(keys.lease(partition)) != token.encode():
        pipe.reset()
        raise RebuildInterrupted(partition)
    pipe.multi()
    for doc in stale:
        if doc.field is None:
            pipe.delete(keys.key_of(partition, doc))
        else:
            pipe.hdel(keys.key_of(partition, doc), doc.field)
    for doc, data in docs.items():
        if doc.field is None:
            pipe.set(keys.key_of(partition, doc), data)
        else:
            pipe.hset(keys.key_of(partition, doc), doc.field, data)
    pipe.hset(keys.checkpoint(partition), mapping={"id": checkpoint.id, "n": checkpoint.count})
    pipe.delete(keys.dead(partition), keys.quarantine(partition))
    for channel in _followed(keys, partition, docs.keys() | stale):
        # an empty message: "read it again" (notify.py). A follower whose view went back
        # with the rebuild (the views are kept off the AOF: a Redis restarted from it
        # has them as of its last rewrite, or none) reads it and is given the view as it
        # is now; one whose view is the same is given nothing.
        pipe.execute_command("SPUBLISH", channel, b"")
    try:
        pipe.execute()
    except redis.WatchError:
        raise RebuildInterrupted(partition) from None
    if not store.ensure_group(partition, checkpoint):
        store.rewind(partition, checkpoint)


def _followed(keys: ProjectionKeys, partition: int, docs: Iterable[DocKey]) -> list[str]:
    """The channels the apply script announces these documents on (store.py ``_op``),
    less the announced hashes' (the turns: their subscribers want the value)."""
    return sorted({keys.key_of(partition, doc) if doc.field is None else f"{keys.key_of(partition, doc)}:{doc.field}"
                   for doc in docs if doc.name not in ANNOUNCED_HASHES})


def reset(store: ProjectionStore, partition: int) -> None:
    """Forget a partition's projection: documents, checkpoint, group and lease. The next
    worker to take the partition folds its feed from the start (the benchmark does this
    to time a worker catching up)."""
    keys = store.keys
    doomed = [keys.key_of(partition, DocKey(doc.name)) for doc in store.docs(partition)]
    store.client.delete(*set(doomed), keys.checkpoint(partition), keys.lease(partition), keys.dead(partition),
                        keys.quarantine(partition))
    with contextlib.suppress(redis.ResponseError):  # no feed yet: nothing to destroy
        store.client.xgroup_destroy(keys.feed(partition), keys.group)
