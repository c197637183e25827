"""Reading the projections: what a gateway, the demo and the tests ask of them."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import AsyncGenerator, Callable
from typing import Any

import msgspec

from projections.directory import DIRECTORY_DOC, DirectoryEntry, decode_entry
from projections.ledger import (
    PLAYERS_DOC,
    AnyTableLedger,
    PlayerLedger,
    combine,
    decode_player,
    decode_table,
    table_name,
)
from projections.views import SPECTATOR, view_name
from services.projection.fanout import FanoutHub
from services.projection.keys import ProjectionKeys
from services.projection.notify import follow_async
from services.projection.store import ProjectionStore, id_key, last_given
from services.projection.worker import behind
from services.store.cluster import AsyncClient, SyncClient
from services.store.keys import KeySpace


def _keys(space: KeySpace, kind: str) -> ProjectionKeys:
    return ProjectionKeys(space, kind)


# Each read is a key (or one key per partition) and a decoding; the sync functions and
# ``AsyncReader`` share both and differ only in how they send the commands.


def _players_docs(space: KeySpace) -> list[str]:
    keys = _keys(space, "ledger")
    return [keys.doc(partition, PLAYERS_DOC) for partition in range(space.partitions)]


def _players(stored_per_partition: list[dict[bytes, bytes]]) -> list[PlayerLedger]:
    parts: dict[str, list[PlayerLedger]] = defaultdict(list)
    for stored in stored_per_partition:
        for name, data in stored.items():
            parts[name.decode()].append(decode_player(data))
    return [combine(name, parts[name]) for name in sorted(parts)]


def _table_ledger_doc(space: KeySpace, table_id: str) -> str:
    return _keys(space, "ledger").doc(space.partition_of(table_id), table_name(table_id))


def _directory_docs(space: KeySpace) -> list[str]:
    keys = _keys(space, "directory")
    return [keys.doc(partition, DIRECTORY_DOC) for partition in range(space.partitions)]


def _lobby(values_per_partition: list[list[bytes]]) -> list[DirectoryEntry]:
    entries = [decode_entry(data) for values in values_per_partition for data in values]
    return sorted(entries, key=lambda e: e.table_id)


def _view_doc(space: KeySpace, table_id: str, reader: str) -> str:
    return _keys(space, "views").doc(space.partition_of(table_id), view_name(table_id, reader))


def player_ledgers(client: SyncClient, space: KeySpace) -> list[PlayerLedger]:
    """Every player's ledger over all tables: the sum of each partition's contribution."""
    pipe = client.pipeline(transaction=False)
    for doc in _players_docs(space):
        pipe.hgetall(doc)
    return _players(pipe.execute())


def table_ledger(client: SyncClient, space: KeySpace, table_id: str) -> AnyTableLedger | None:
    data = client.get(_table_ledger_doc(space, table_id))
    return None if data is None else decode_table(bytes(data))  # type: ignore[arg-type]


def lobby(client: SyncClient, space: KeySpace) -> list[DirectoryEntry]:
    """Every table that is not closed, by table id."""
    pipe = client.pipeline(transaction=False)
    for doc in _directory_docs(space):
        pipe.hvals(doc)
    return _lobby(pipe.execute())


def view(client: SyncClient, space: KeySpace, table_id: str, reader: str) -> bytes | None:
    data = client.get(_view_doc(space, table_id, reader))
    return None if data is None else bytes(data)  # type: ignore[arg-type]


class AsyncReader:
    """The reads a gateway makes, on an asyncio client (``connect_async``): the same keys
    and decodings as the functions above. ``reader`` is a seat number as a string, or
    ``"spectator"`` (``projections.views.SPECTATOR``)."""

    def __init__(self, client: AsyncClient, space: KeySpace, hub: FanoutHub | None = None) -> None:
        self.client = client
        self.space = space
        self._hub = hub

    @property
    def hub(self) -> FanoutHub:
        """The one Pub/Sub connection every ``follow`` of this reader shares (made on
        the first)."""
        if self._hub is None:
            self._hub = FanoutHub.on(self.client)
        return self._hub

    async def aclose(self) -> None:
        """Close the hub's connection (the client is the caller's)."""
        if self._hub is not None:
            await self._hub.aclose()
            self._hub = None

    async def view(self, table_id: str, reader: str) -> bytes | None:
        """The stored view of ``reader`` (MessagePack, or JSON from an earlier release:
        projections/docs.py), with its ``version``, or None."""
        data: Any = await self.client.get(_view_doc(self.space, table_id, reader))
        return None if data is None else bytes(data)

    async def seat_view(self, table_id: str, seat: int) -> bytes | None:
        return await self.view(table_id, str(seat))

    async def spectator_view(self, table_id: str) -> bytes | None:
        return await self.view(table_id, SPECTATOR)

    async def lobby(self) -> list[DirectoryEntry]:
        """Every table that is not closed, by table id (one round trip)."""
        pipe = self.client.pipeline(transaction=False)
        for doc in _directory_docs(self.space):
            pipe.hvals(doc)
        return _lobby(await pipe.execute())

    async def table_ledger(self, table_id: str) -> AnyTableLedger | None:
        data: Any = await self.client.get(_table_ledger_doc(self.space, table_id))
        return None if data is None else decode_table(bytes(data))

    async def player_ledgers(self) -> list[PlayerLedger]:
        """Every player's ledger over all tables (one round trip)."""
        pipe = self.client.pipeline(transaction=False)
        for doc in _players_docs(self.space):
            pipe.hgetall(doc)
        return _players(await pipe.execute())

    def follow(self, table_id: str, reader: str, cursor: int = 0,
               take: Callable[[bytes], bool] | None = None) -> AsyncGenerator[bytes, None]:
        """``reader``'s view each time it is newer than ``cursor`` (see ``notify``; ``take``,
        to be given one at once: ``follow_async``), on the reader's hub."""
        client: Any = self.client  # one node's or a cluster's: the hub routes by node
        return follow_async(client, self.space, table_id, reader, cursor, self.hub, take)


def feed_positions(client: SyncClient, space: KeySpace) -> dict[int, str]:
    """The id of the last entry every partition's feed was given (kept or trimmed): a
    position to wait for."""
    pipe = client.pipeline(transaction=False)
    for partition in range(space.partitions):
        pipe.xinfo_stream(space.feed(partition))
    return {p: last_given(info) for p, info in enumerate(pipe.execute(raise_on_error=False))}


def caught_up(client: SyncClient, space: KeySpace, kind: str, positions: dict[int, str]) -> bool:
    store = ProjectionStore(client, _keys(space, kind))
    return all(id_key(store.checkpoint(p).id) >= id_key(at) for p, at in positions.items())


def wait_until(
    client: SyncClient,
    space: KeySpace,
    kind: str,
    positions: dict[int, str] | None = None,
    timeout_s: float = 60.0,
    check: Callable[[], None] | None = None,
) -> None:
    """Return once the ``kind`` projection has applied every feed entry up to
    ``positions`` (default: the feeds' ends now); raise TimeoutError after ``timeout_s``.
    ``check`` runs while waiting and may raise (say, when a worker process died)."""
    positions = feed_positions(client, space) if positions is None else positions
    deadline = time.monotonic() + timeout_s
    pause = 0.002
    while not caught_up(client, space, kind, positions):
        if check is not None:
            check()
        if time.monotonic() > deadline:
            raise TimeoutError(f"the {kind} projection did not reach {positions} in {timeout_s} s")
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


class PartitionLag(msgspec.Struct, frozen=True):
    kind: str
    partition: int
    checkpoint: str
    entries: int
    ms: int
    dead_letters: int = 0  # feed entries this kind passed over (mighty projections dead-letters)


def lag(client: SyncClient, space: KeySpace, kind: str) -> list[PartitionLag]:
    """How far each partition's stored projection is behind its feed."""
    store = ProjectionStore(client, _keys(space, kind))
    checkpoints = {p: store.checkpoint(p) for p in range(space.partitions)}
    dead = store.dead_count(list(checkpoints))
    return [PartitionLag(kind, p, checkpoints[p].id, entries, ms, dead[p])
            for p, (entries, ms) in behind(store, checkpoints).items()]


class Readers:
    """The reads above bound to one client and key space: what ``services.bootstrap``
    hands a process that reads the projections (the CLI, the demo, a gateway)."""

    def __init__(self, client: SyncClient, space: KeySpace) -> None:
        self.client, self.space = client, space

    def player_ledgers(self) -> list[PlayerLedger]:
        return player_ledgers(self.client, self.space)

    def table_ledger(self, table_id: str) -> AnyTableLedger | None:
        return table_ledger(self.client, self.space, table_id)

    def lobby(self) -> list[DirectoryEntry]:
        return lobby(self.client, self.space)

    def view(self, table_id: str, reader: str) -> bytes | None:
        return view(self.client, self.space, table_id, reader)

    def feed_positions(self) -> dict[int, str]:
        return feed_positions(self.client, self.space)

    def lag(self, kind: str) -> list[PartitionLag]:
        return lag(self.client, self.space, kind)

    def wait_until(self, kind: str, positions: dict[int, str] | None = None, timeout_s: float = 60.0,
                   check: Callable[[], None] | None = None) -> None:
        wait_until(self.client, self.space, kind, positions, timeout_s, check)
