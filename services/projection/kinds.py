"""How each kind of projection is restored from what is stored when a worker meets a
table (or a partition) it has no state for.

- views: the stored spectator view says which table version the views reflect; the
  state is rebuilt by folding the table's own stream up to that version (the views do
  not hold the hidden cards, the stream does);
- ledger, directory, ratings: the stored document *is* the state (and, for the ledger,
  the partition's per-player hash).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import msgspec
import structlog

from domain.codec import decode_event
from domain.table import TableEvent
from projections import new_projection
from projections.directory import DIRECTORY_DOC, DirectoryProjection
from projections.docs import Decoder
from projections.ledger import PLAYERS_DOC, LedgerProjection, table_name
from projections.ratings import HandsProjection, table_doc
from projections.views import SPECTATOR, ViewsProjection, view_name
from services.projection.store import ProjectionStore
from services.store.base import EventStore

log = structlog.get_logger("mighty.workers")

AnyProjection = ViewsProjection | LedgerProjection | DirectoryProjection | HandsProjection


class _Version(msgspec.Struct):
    version: int


_decode_version = Decoder(_Version).decode  # a stored view, in either encoding (projections/docs.py)


class Kind(Protocol):
    name: str
    # written to the AOF with the checkpoint (False: a cache of the streams, written to
    # the replicas only, folded again after a restart; docs/workers.md, "Kept off the AOF")
    kept: bool
    # after a read that did not fill a batch, how long the worker waits for more (ms):
    # short where a reader waits for the documents (a seat's push), longer where none
    # does, so that one script call a partition stores a round of several commands
    linger_ms: int

    def new(self, store: ProjectionStore, partition: int) -> AnyProjection: ...

    def restore(self, projection: AnyProjection, partition: int, table_ids: Sequence[str]) -> None: ...

    def apply(self, projection: AnyProjection, table_id: str, version: int, event: TableEvent,
              at_ms: int | None = None) -> None: ...


class ViewsKind:
    name = "views"
    kept = False  # every seat's view, rewritten by each command: a cache of the streams
    linger_ms = 10  # each change is pushed to its readers

    def __init__(self, store: ProjectionStore, events: EventStore) -> None:
        self.store = store
        self.events = events

    def new(self, store: ProjectionStore, partition: int) -> AnyProjection:
        return ViewsProjection()

    def restore(self, projection: AnyProjection, partition: int, table_ids: Sequence[str]) -> None:
        assert isinstance(projection, ViewsProjection)
        keys = [self.store.keys.doc(partition, view_name(t, SPECTATOR)) for t in table_ids]
        for table_id, stored in zip(table_ids, self.store.client.mget(keys), strict=True):
            version = 0 if stored is None else _decode_version(stored).version
            projection.restore(table_id, self._stream(table_id, 0, version))

    def apply(self, projection: AnyProjection, table_id: str, version: int, event: TableEvent,
              at_ms: int | None = None) -> None:
        assert isinstance(projection, ViewsProjection)
        known = projection.version(table_id)
        if version <= known:
            return  # folded already (the stream, read to fill a gap, held it)
        if version > known + 1:
            log.warning("feed gap filled from the table stream", table=table_id, after=known, to=version)
            for missing, old, at in self._stream(table_id, known, version - 1):
                projection.apply(table_id, missing, old, at)
        projection.apply(table_id, version, event, at_ms)

    def _stream(self, table_id: str, after: int, upto: int) -> list[tuple[int, TableEvent, int | None]]:
        if upto <= after:
            return []
        return [(e.version, decode_event(e.data), e.at_ms) for e in self.events.read(table_id, after, upto)]


class LedgerKind:
    name = "ledger"
    kept = True
    linger_ms = 50  # the scores change once a hand

    def __init__(self, store: ProjectionStore) -> None:
        self.store = store

    def new(self, store: ProjectionStore, partition: int) -> AnyProjection:
        projection = LedgerProjection()
        stored = store.client.hgetall(store.keys.doc(partition, PLAYERS_DOC))
        projection.restore_players({k.decode(): bytes(v) for k, v in stored.items()})
        return projection

    def restore(self, projection: AnyProjection, partition: int, table_ids: Sequence[str]) -> None:
        assert isinstance(projection, LedgerProjection)
        keys = [self.store.keys.doc(partition, table_name(t)) for t in table_ids]
        for table_id, stored in zip(table_ids, self.store.client.mget(keys), strict=True):
            projection.restore(table_id, stored)

    def apply(self, projection: AnyProjection, table_id: str, version: int, event: TableEvent,
              at_ms: int | None = None) -> None:
        projection.apply(table_id, version, event, at_ms)


class DirectoryKind:
    name = "directory"
    kept = False  # the lobby's entries of the tables still in Redis: a cache of their streams
    linger_ms = 50  # an entry changes with a seat, a start, a hand, a close: not a card

    def __init__(self, store: ProjectionStore) -> None:
        self.store = store

    def new(self, store: ProjectionStore, partition: int) -> AnyProjection:
        return DirectoryProjection()

    def restore(self, projection: AnyProjection, partition: int, table_ids: Sequence[str]) -> None:
        assert isinstance(projection, DirectoryProjection)
        stored = self.store.client.hmget(self.store.keys.doc(partition, DIRECTORY_DOC), list(table_ids))
        for table_id, data in zip(table_ids, stored, strict=True):
            projection.restore(table_id, data)

    def apply(self, projection: AnyProjection, table_id: str, version: int, event: TableEvent,
              at_ms: int | None = None) -> None:
        projection.apply(table_id, version, event, at_ms)


class RatingsKind:
    """The hands the ratings read (docs/ratings.md): a table's stored state is its document."""

    name = "ratings"
    kept = True
    linger_ms = 50  # a hand is rated once it has ended

    def __init__(self, store: ProjectionStore) -> None:
        self.store = store

    def new(self, store: ProjectionStore, partition: int) -> AnyProjection:
        return HandsProjection()

    def restore(self, projection: AnyProjection, partition: int, table_ids: Sequence[str]) -> None:
        assert isinstance(projection, HandsProjection)
        keys = [self.store.keys.doc(partition, table_doc(t)) for t in table_ids]
        for table_id, stored in zip(table_ids, self.store.client.mget(keys), strict=True):
            projection.restore(table_id, stored)

    def apply(self, projection: AnyProjection, table_id: str, version: int, event: TableEvent,
              at_ms: int | None = None) -> None:
        projection.apply(table_id, version, event, at_ms)


def make_kind(name: str, store: ProjectionStore, events: EventStore) -> Kind:
    if name == "views":
        return ViewsKind(store, events)
    if name == "ledger":
        return LedgerKind(store)
    if name == "directory":
        return DirectoryKind(store)
    if name == "ratings":
        return RatingsKind(store)
    new_projection(name)  # raises with the list of kinds
    raise AssertionError("unreachable")
