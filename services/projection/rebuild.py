"""Rebuild a projection from the streams, or check the stored one against a rebuild.

The rebuild folds a partition's feed from its first entry with the very code the live
workers run (``projections.replay``), so what it writes is byte-identical to what they
stored. ``check`` folds up to the stored checkpoint and compares, byte for byte.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import redis
import structlog

from domain.codec import decode_event
from projections import new_projection, replay
from projections.docs import DocKey
from services.projection.store import START, Checkpoint, ProjectionStore, id_key
from services.store.base import FeedEntry

log = structlog.get_logger("mighty.workers")
_CHUNK = 2000
_REBUILD_LEASE_MS = 60_000


@dataclass(frozen=True, slots=True)
class Difference:
    partition: int
    doc: DocKey
    stored: bytes | None
    rebuilt: bytes | None


def entries_upto(store: ProjectionStore, partition: int, upto: str | None,
                 every_chunk: Callable[[], None] | None = None) -> Iterator[FeedEntry]:
    after = START
    while True:
        if every_chunk is not None:
            every_chunk()
        chunk = store.feed_after(partition, after, _CHUNK)
        for entry in chunk:
            if upto is not None and id_key(entry.id) > id_key(upto):
                return
            yield entry
        if len(chunk) < _CHUNK:
            return
        after = chunk[-1].id


def compute(store: ProjectionStore, partition: int, upto: str | None,
            every_chunk: Callable[[], None] | None = None) -> tuple[dict[DocKey, bytes], Checkpoint]:
    """The documents of a partition folded from its feed's start up to ``upto`` (None: all)."""
    last = Checkpoint()

    def events() -> Iterator[tuple[str, int, object]]:
        nonlocal last
        for entry in entries_upto(store, partition, upto, every_chunk):
            last = Checkpoint(entry.id, last.count + 1)
            yield entry.table_id, entry.version, decode_event(entry.data)

    docs = replay(new_projection(store.keys.kind), events())  # type: ignore[arg-type]
    return docs, last


def check(store: ProjectionStore, partition: int, attempts: int = 20) -> list[Difference]:
    """Compare the stored documents with a rebuild up to the stored checkpoint."""
    for _ in range(attempts):
        checkpoint = store.checkpoint(partition)
        stored = store.docs(partition)
        if store.checkpoint(partition) != checkpoint:
            continue  # a worker wrote meanwhile: read again
        rebuilt, _ = compute(store, partition, checkpoint.id)
        return [
            Difference(partition, doc, stored.get(doc), rebuilt.get(doc))
            for doc in sorted(stored.keys() | rebuilt.keys(), key=lambda d: (d.name, d.field or ""))
            if stored.get(doc) != rebuilt.get(doc)
        ]
    raise RuntimeError(f"partition {partition} kept moving; stop its workers to check it")


class RebuildInterrupted(RuntimeError):
    """The partition's lease was taken while the rebuild ran: nothing was written."""

    def __init__(self, partition: int) -> None:
        super().__init__(f"partition {partition}: the lease was taken during the rebuild; run it again")


def rebuild(store: ProjectionStore, partition: int) -> Checkpoint:
    """Recompute a partition's documents from its feed and store them with the checkpoint.

    The rebuild takes the partition's lease from whichever worker holds it (that
    worker's next write is refused, and it starts over from the new checkpoint), renews
    it at every chunk of the feed it reads, and writes only if it still holds it (WATCH
    on the lease, then one MULTI), so a rebuild that outlived its lease writes nothing.
    """
    token = f"rebuild-{secrets.token_hex(4)}"
    store.take_over(partition, token, _REBUILD_LEASE_MS)

    def keep_lease() -> None:
        if not store.renew([partition], token, _REBUILD_LEASE_MS)[0]:
            raise RebuildInterrupted(partition)

    try:
        docs, checkpoint = compute(store, partition, None, every_chunk=keep_lease)
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
    try:
        pipe.execute()
    except redis.WatchError:
        raise RebuildInterrupted(partition) from None
    if not store.ensure_group(partition, checkpoint.id):
        store.client.xgroup_setid(keys.feed(partition), keys.group, checkpoint.id)


def reset(store: ProjectionStore, partition: int) -> None:
    """Forget a partition's projection: documents, checkpoint, group and lease. The next
    worker to take the partition folds its feed from the start (the benchmark does this
    to time a worker catching up)."""
    keys = store.keys
    doomed = [keys.key_of(partition, DocKey(doc.name)) for doc in store.docs(partition)]
    store.client.delete(*set(doomed), keys.checkpoint(partition), keys.lease(partition))
    with contextlib.suppress(redis.ResponseError):  # no feed yet: nothing to destroy
        store.client.xgroup_destroy(keys.feed(partition), keys.group)
