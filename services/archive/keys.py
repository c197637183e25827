"""The archive's keys in Redis, each in its table's partition (the partition's hash tag),
so one MULTI can delete a table's keys and write its index entry on Redis Cluster:

    mighty:{p07}:archived             hash: table id -> {"at": ms, "version": n, "head": hex}
                                      what is left of an archived table (about 100 bytes)
    mighty:{p07}:archive:closed       sorted set: closed tables not archived yet, by the
                                      ms they closed (the worker's to-do list)
    mighty:{p07}:archive:lock:<table> the worker archiving the table (a lease with a TTL)
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec

from services.store.keys import KeySpace


class IndexEntry(msgspec.Struct, frozen=True):
    """An archived table's index entry: when it was archived, its version and head hash."""

    at: int
    version: int
    head: str


encode_entry = msgspec.json.Encoder().encode
decode_entry = msgspec.json.Decoder(IndexEntry).decode


@dataclass(frozen=True, slots=True)
class ArchiveKeys:
    space: KeySpace

    def index(self, partition: int) -> str:
        return self.space.prefix(partition) + "archived"

    def closed(self, partition: int) -> str:
        return self.space.prefix(partition) + "archive:closed"

    def lock(self, table_id: str) -> str:
        return self.space.prefix(self.space.partition_of(table_id)) + f"archive:lock:{table_id}"

    def index_of(self, table_id: str) -> str:
        return self.index(self.space.partition_of(table_id))
