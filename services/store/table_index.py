"""The table index: each partition's set of table ids, ``mighty:{pNN}:tables``.

The append script adds a table's id with the table's first event, in the same script
(the index carries the partition's hash tag: one slot, one node, atomic with the append),
so ``mighty verify --all``, ``projections check`` and the archive worker list a
partition's tables with SSCAN of one set instead of a SCAN of the whole keyspace (1.5
million keys took over 6 minutes). Archiving a table removes its id (its keys go).

A partition's index is *complete* once it holds the member ``*`` (no table id has one):
set by the projection workers when they create the partition's feed (a fresh partition:
no table was ever appended there, so every table it will hold is indexed by its first
append), or by ``reindex``, which SCANs once for the table heads (``…:t:<id>:meta``) that
releases before the index left unindexed. A partition whose index is not complete is read
by ``reindex`` first: the one SCAN is done once, by whoever lists tables first, and never
again (``mighty store reindex`` does it on purpose, docs/operations.md).
"""

from __future__ import annotations

from typing import Any, Final

from services.store.cluster import scan_partition, scan_partition_async
from services.store.errors import BadTableId
from services.store.keys import KeySpace, check_table_id

COMPLETE: Final = "*"  # the member saying the index holds every table of its partition
_CHUNK: Final = 1000


def _tables_of(space: KeySpace, partition: int, members: Any) -> list[str]:
    found = []
    for member in members:
        name = member.decode() if isinstance(member, bytes) else str(member)
        try:
            check_table_id(name)
        except BadTableId:
            continue  # the COMPLETE mark
        if space.partition_of(name) == partition:
            found.append(name)
    return found


def _meta_prefix(space: KeySpace, partition: int) -> str:
    return space.prefix(partition) + "t:"


def _scanned(space: KeySpace, partition: int, keys: list[bytes]) -> list[str]:
    prefix = _meta_prefix(space, partition)
    return _tables_of(space, partition, (key.decode()[len(prefix):-len(":meta")].encode() for key in keys))


def reindex(client: Any, space: KeySpace, partition: int) -> int:
    """SCAN the partition's table heads once, add them to its index and mark it complete;
    how many tables it holds. Safe at any time: a table created meanwhile is added by its
    own first append."""
    prefix = _meta_prefix(space, partition)
    keys = list(scan_partition(client, space.feed(partition), prefix + "*:meta"))
    tables = _scanned(space, partition, keys)
    index = space.tables(partition)
    for start in range(0, len(tables), _CHUNK):
        client.sadd(index, *tables[start:start + _CHUNK])
    client.sadd(index, COMPLETE)
    return int(client.scard(index)) - 1


def mark_complete(client: Any, space: KeySpace, partition: int) -> None:
    """A fresh partition (its feed was just created): its index is complete from the start."""
    client.sadd(space.tables(partition), COMPLETE)


def indexed_tables(client: Any, space: KeySpace, partition: int) -> list[str]:
    """Every table of the partition, from its index (SSCAN, no keyspace SCAN), sorted; an
    index not complete yet is completed first (``reindex``: one SCAN, once)."""
    index = space.tables(partition)
    if not client.sismember(index, COMPLETE):
        reindex(client, space, partition)
    return sorted(_tables_of(space, partition, client.sscan_iter(index, count=_CHUNK)))


async def indexed_tables_async(client: Any, space: KeySpace, partition: int) -> list[str]:
    """``indexed_tables`` on an asyncio client."""
    index = space.tables(partition)
    if not await client.sismember(index, COMPLETE):
        prefix = _meta_prefix(space, partition)
        keys = [key async for key in scan_partition_async(client, space.feed(partition), prefix + "*:meta")]
        tables = _scanned(space, partition, keys)
        for start in range(0, len(tables), _CHUNK):
            await client.sadd(index, *tables[start:start + _CHUNK])
        await client.sadd(index, COMPLETE)
    members = [member async for member in client.sscan_iter(index, count=_CHUNK)]
    return sorted(_tables_of(space, partition, members))
