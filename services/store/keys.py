"""Key layout: every key of a table carries its partition's hash tag.

``mighty:{p07}:t:<table_id>:events`` and the table's other keys share the tag ``{p07}``,
so on Redis Cluster they hash to one slot and an append (one script) touches one node.
The partition's feed ``mighty:{p07}:feed`` shares it too, which is what lets the same
script write the table stream and the feed atomically.

The partition count is fixed for the life of a deployment (``MIGHTY_PARTITIONS``,
default 16, read by ``services/settings.py``): it is part of every key name, so changing
it moves every table. See docs/store.md, "Changing the partition count".
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from typing import Final

from services.store.errors import BadCommandId, BadTableId

DEFAULT_PARTITIONS: Final = 16
MAX_PARTITIONS: Final = 999
DEFAULT_NAMESPACE: Final = "mighty"
KEY_CACHE_SIZE: Final = 4096  # tables whose key names a KeySpace keeps (then made again)

_TABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_COMMAND_ID = re.compile(r"[A-Za-z0-9_.:-]{1,128}")
_NAMESPACE = re.compile(r"[A-Za-z0-9_.-]{1,64}")


# How long a command id is remembered (docs/store.md); Settings.idempotency_s overrides it.
DEFAULT_IDEMPOTENCY_S: Final = 86_400.0


def check_table_id(table_id: object) -> str:
    if not isinstance(table_id, str) or not _TABLE_ID.fullmatch(table_id):
        raise BadTableId(f"a table id is 1 to 64 of A-Z a-z 0-9 _ -, not {_show(table_id)}")
    return table_id


def check_command_id(command_id: object) -> str:
    if not isinstance(command_id, str) or not _COMMAND_ID.fullmatch(command_id):
        raise BadCommandId(
            f"a command id is 1 to 128 of A-Z a-z 0-9 _ . : -, not {_show(command_id)}"
        )
    return command_id


def partition_of(table_id: str, partitions: int) -> int:
    """Stable across processes and Python versions (crc32, not ``hash()``)."""
    return zlib.crc32(table_id.encode("ascii")) % partitions


def fence_of(key: str) -> str:
    """The fence counter of the partition whose hash tag ``key`` carries (its first
    ``{...}``: a namespace holds no braces)."""
    end = key.index("}") + 1
    return key[:end] + ":fence"


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


@dataclass(frozen=True, slots=True)
class TableKeys:
    """The keys one append touches, in the order the script takes them."""

    events: str
    meta: str
    commands: str
    feed: str
    previous_commands: str = ""  # the previous generation of command ids (docs/store.md, "Idempotency")
    tables: str = ""  # the partition's table index (a set of table ids, table_index.py)
    audit: str = ""  # the table's audit checkpoint (services/audit/checkpoint.py)
    chat: str = ""  # the table's chat (services/gateway/chat.py), archived with it (docs/archive.md)
    legacy_command_index: str = ""  # ``…:cmdx``, the ids by time of releases before 2026-12-06 (expires)

    def as_list(self) -> list[str]:
        """The four keys of the script's original call (command ids kept for ever)."""
        return [self.events, self.meta, self.commands, self.feed]

    def with_index(self) -> list[str]:
        """The five keys of a call with an idempotency window (command ids expire)."""
        return [self.events, self.meta, self.commands, self.feed, self.previous_commands]

    def with_table_index(self) -> list[str]:
        """The six keys of this release's call: the five, and the partition's table index,
        which a table's first append adds it to (with or without an idempotency window)."""
        return [self.events, self.meta, self.commands, self.feed, self.previous_commands, self.tables]


class KeySpace:
    """Builds key names for one namespace and partition count (a process gets both from
    its ``Settings``; the defaults are the deployment defaults)."""

    def __init__(self, partitions: int | None = None, namespace: str = DEFAULT_NAMESPACE) -> None:
        self.partitions = DEFAULT_PARTITIONS if partitions is None else partitions
        if not 1 <= self.partitions <= MAX_PARTITIONS:
            raise ValueError(f"partitions must be in 1..{MAX_PARTITIONS}")
        if not _NAMESPACE.fullmatch(namespace):
            raise ValueError(f"bad key namespace {namespace!r}")
        self.namespace = namespace
        self._tables: dict[str, TableKeys] = {}  # only valid table ids get in
        # every partition's hash tag and key prefix, made once: the workers name a dozen
        # keys a command (each view, its channel, the checkpoint), the gateway a few
        self._tags = tuple(f"{{p{partition:02d}}}" for partition in range(self.partitions))
        self._prefixes = tuple(f"{namespace}:{tag}:" for tag in self._tags)

    def tag(self, partition: int) -> str:
        return self._tags[self._checked(partition)]

    def prefix(self, partition: int) -> str:
        """``<namespace>:<tag>:``, what every key of the partition starts with."""
        return self._prefixes[self._checked(partition)]

    def _checked(self, partition: int) -> int:
        if not 0 <= partition < self.partitions:
            raise ValueError(f"partition {partition} is not in 0..{self.partitions - 1}")
        return partition

    def partition_of(self, table_id: str) -> int:
        return partition_of(check_table_id(table_id), self.partitions)

    def feed(self, partition: int) -> str:
        return self.prefix(partition) + "feed"

    def tables(self, partition: int) -> str:
        """The partition's table index: the set of its tables' ids, each added by the
        append script with the table's first event (services/store/table_index.py)."""
        return self.prefix(partition) + "tables"

    def fence(self, partition: int) -> str:
        """A counter the ``replicated`` durability profile increments after each append,
        so the WAIT that follows covers the append even when it was a duplicate (which
        writes nothing of its own; docs/reliability.md)."""
        return fence_of(self.feed(partition))

    def table(self, table_id: str) -> TableKeys:
        keys = self._tables.get(table_id) if isinstance(table_id, str) else None
        if keys is None:
            partition = self.partition_of(table_id)
            base = f"{self.namespace}:{self.tag(partition)}:t:{table_id}"
            feed = self.feed(partition)
            keys = TableKeys(f"{base}:events", f"{base}:meta", f"{base}:cmds", feed, f"{base}:cmdp",
                             self.tables(partition), f"{base}:audit", f"{base}:chat", f"{base}:cmdx")
            if len(self._tables) >= KEY_CACHE_SIZE:
                self._tables.clear()
            self._tables[table_id] = keys
        return keys
