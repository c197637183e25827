"""Redis side of a projection: checkpoints, leases, the consumer group, the apply script.

Everything a worker (and a rebuild) says to Redis goes through here, so the worker loop
reads as the algorithm and this module as the protocol.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Final

import redis

from projections.docs import DocKey, Docs, LastWord
from projections.turns import TURNS_DOC
from services.projection.keys import ProjectionKeys
from services.projection.leases import Leases
from services.store.base import FeedEntry, appended_at, hash_hex
from services.store.cluster import SyncClient, evalsha_many, is_cluster, scan_partition
from services.store.compact import as_read
from services.store.table_index import mark_complete

APPLY_SCRIPT: Final = resources.files("services.projection").joinpath("apply.lua").read_text()
START: Final = "0-0"
# On a cluster a worker's partitions are on several nodes and a blocking XREAD reads
# one slot: it polls instead, each partition's feed without blocking (one pipeline),
# pausing after an empty round from the first figure, doubling up to the second
# (docs/workers.md).
CLUSTER_POLL_S: Final = (0.002, 0.05)

# The feed is a queue: entries every kind's checkpoint has passed are dropped, the
# slowest checkpoint's own entry too (XTRIM MINID just past it), so a feed every kind has
# applied holds no node at all: a listpack node whose entries are only marked deleted
# keeps its memory (2 KB a partition) until its last entry goes. A kind with no
# checkpoint yet holds it all. Nothing reads a checkpoint's entry again: the workers read
# after it (XREAD, ``(id``), and ``trimmed_past`` counts entries (a feed trimmed up to
# and including the checkpoint holds exactly the entries after it).
_TRIM = """
local lowest = nil
for i = 2, #KEYS do
  local id = redis.call('HGET', KEYS[i], 'id')
  if not id then return 0 end
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  ms, seq = tonumber(ms), tonumber(seq)
  if lowest == nil or ms < lowest[1] or (ms == lowest[1] and seq < lowest[2]) then
    lowest = {ms, seq}
  end
end
if lowest == nil or lowest[1] == 0 and lowest[2] == 0 then return 0 end
return redis.call('XTRIM', KEYS[1], 'MINID', string.format('%d-%d', lowest[1], lowest[2] + 1))
"""


def last_given(info: Any) -> str:
    """The id of the last entry a feed was given, from its ``XINFO STREAM`` (an error: no
    feed, ``START``): where a kind that has applied everything stands. Not its last entry:
    a feed every kind has applied is trimmed empty (``_TRIM``)."""
    if isinstance(info, Exception):
        if isinstance(info, redis.ResponseError):
            return START
        raise info
    last = info.get("last-generated-id") or b"0-0"
    return last.decode() if isinstance(last, bytes) else str(last)


@dataclass(frozen=True, slots=True)
class Checkpoint:
    id: str = START  # the last feed entry applied
    count: int = 0  # feed entries passed so far (applied or dead-lettered), from the feed's start


@dataclass(frozen=True, slots=True)
class BadFeedEntry(FeedEntry):
    """A feed entry whose fields cannot even be read (missing, not numbers)."""

    problem: str = ""


@dataclass(frozen=True, slots=True)
class DeadLetter:
    """A feed entry a kind could not decode or fold: passed over, kept for the record."""

    feed_id: str
    table_id: str
    version: int
    kind: str
    reason: str


@dataclass(frozen=True, slots=True)
class Batch:
    """One partition's share of a read, folded: what the apply script is to store."""

    partition: int
    expected: str  # the checkpoint the batch was folded on
    new: str  # the batch's last feed id
    applied: int  # entries past the checkpoint
    first: str  # the batch's first entry past the checkpoint: must follow it in the feed
    read: int  # entries read, past the checkpoint or not
    docs: Docs
    dead: list[DeadLetter] = field(default_factory=list)  # entries passed over, with why


@dataclass(frozen=True, slots=True)
class Applied:
    """What the apply script answered: ``ok``, ``done``, ``stale``, ``gap`` or ``lease``."""

    status: str
    stored: str = ""  # the stored checkpoint (done, stale, gap) or lease holder (lease)
    server_ms: float = 0.0  # the server's clock right after an ``ok`` write


def id_key(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


def id_ms(entry_id: str) -> int:
    return int(entry_id.partition("-")[0])


def feed_entries(raw: Iterable[tuple[bytes, dict[bytes, bytes]]]) -> list[FeedEntry]:
    return [feed_entry(entry_id, fields) for entry_id, fields in raw]


def feed_entry(entry_id: bytes, fields: dict[bytes, bytes]) -> FeedEntry:
    """One feed entry; one the store could not have written (a field missing, a version
    that is not a number) comes back as a ``BadFeedEntry`` instead of stopping the read."""
    try:
        return FeedEntry(entry_id.decode(), fields[b"t"].decode(), int(fields[b"v"]), as_read(bytes(fields[b"e"])),
                         hash_hex(fields[b"h"]), appended_at(fields))
    except (KeyError, ValueError) as error:
        table = fields.get(b"t", b"").decode(errors="replace")
        return BadFeedEntry(entry_id.decode(), table, 0, b"", "",
                            problem=f"malformed feed entry ({type(error).__name__}: {error})")


class ProjectionStore:
    def __init__(self, client: SyncClient, keys: ProjectionKeys) -> None:
        # Any: redis-py's annotations do not know the client decodes nothing (bytes replies).
        self.client: Any = client
        self.keys = keys
        self.cluster = is_cluster(client)
        self._quiet_s = CLUSTER_POLL_S[0]  # the cluster's poll pause (``_poll_new``)
        self._apply = self.client.register_script(APPLY_SCRIPT)
        self.leases = Leases(client, keys)  # who owns each partition (leases.py)
        self._trim = self.client.register_script(_TRIM)

    # ---------------------------------------------------------------- checkpoint

    def checkpoint(self, partition: int) -> Checkpoint:
        found, count = self.client.hmget(self.keys.checkpoint(partition), ["id", "n"])
        if found is None:
            return Checkpoint()
        return Checkpoint(found.decode(), int(count or 0))

    def apply(self, batches: Sequence[Batch], token: str, publish: bool, kept: bool = True) -> list[Applied]:
        """Run the apply script for each batch (each atomic on its own, its keys in one
        slot), all in one round trip (on a cluster: one per node, at once). ``kept``: the
        documents and the checkpoint are written to the AOF too; else to the replicas only
        (docs/workers.md, "Kept off the AOF")."""
        calls = [self._script_call(batch, token, publish, kept) for batch in batches]
        return [_applied(reply) for reply in evalsha_many(self.client, APPLY_SCRIPT, self._apply.sha, calls)]

    def _script_call(self, batch: Batch, token: str, publish: bool, kept: bool = True) -> tuple[list[str], list[Any]]:
        p = batch.partition
        keys = [self.keys.checkpoint(p), self.keys.lease(p), self.keys.feed(p), self.keys.dead(p),
                self.keys.quarantine(p)]
        args: list[Any] = [token, batch.expected, batch.new, batch.applied, batch.first, int(kept), len(batch.dead)]
        for dead in batch.dead:
            args.extend((dead.feed_id, dead.table_id, dead.version, dead.kind, dead.reason[:1000]))
        index: dict[str, int] = {}
        for doc, data in batch.docs.items():
            key = self.keys.key_of(p, doc)
            slot = index.get(key)
            if slot is None:
                keys.append(key)
                slot = index[key] = len(keys)
            args.extend(_op(doc, data, publish))
            args[-3] = slot
        return keys, args

    # ---------------------------------------------------------------- dead letters

    def quarantined(self, partition: int) -> set[str]:
        """The tables this kind holds back in a partition (each has a dead letter)."""
        return {t.decode() for t in self.client.hkeys(self.keys.quarantine(partition))}

    def dead_letters(self, partition: int) -> list[DeadLetter]:
        found = []
        for _, fields in self.client.xrange(self.keys.dead(partition), "-", "+"):
            found.append(DeadLetter(fields[b"id"].decode(), fields[b"t"].decode(), int(fields[b"v"]),
                                    fields[b"kind"].decode(), fields[b"reason"].decode(errors="replace")))
        return found

    def dead_count(self, partitions: Sequence[int]) -> dict[int, int]:
        pipe = self.client.pipeline(transaction=False)
        for partition in partitions:
            pipe.xlen(self.keys.dead(partition))
        return {p: int(n) for p, n in zip(partitions, pipe.execute(), strict=True)}

    # ---------------------------------------------------------------- the feed as a queue

    def trim(self, partitions: Sequence[int], kinds: Sequence[str]) -> list[int]:
        """Drop the feed entries every kind's checkpoint has passed (one round trip);
        answers the entries dropped per partition."""
        calls: list[tuple[list[str], list[Any]]] = [
            ([self.keys.feed(p), *(self.keys.checkpoint_of(p, kind) for kind in kinds)], []) for p in partitions]
        return [int(n) for n in evalsha_many(self.client, _TRIM, self._trim.sha, calls)]

    def feed_position(self, partition: int) -> Checkpoint:
        """The feed's last id and how many entries it was ever given (trimmed or not):
        a checkpoint that has passed everything appended so far."""
        try:
            info = self.client.xinfo_stream(self.keys.feed(partition))
        except redis.ResponseError:  # no feed yet
            return Checkpoint()
        return Checkpoint(last_given(info), int(info.get("entries-added", 0)))

    def trimmed_past(self, partition: int, checkpoint: Checkpoint) -> bool:
        """Whether entries after ``checkpoint`` are gone from the feed (it was trimmed
        while this kind had no checkpoint, or a reset forgot it): the feed then cannot
        bring the projection up to date, the table streams must (a rebuild)."""
        try:
            info = self.client.xinfo_stream(self.keys.feed(partition))
        except redis.ResponseError:
            return False
        return int(info.get("length", 0)) < int(info.get("entries-added", 0)) - checkpoint.count

    # ---------------------------------------------------------------- leases
    # The one lease protocol (services/projection/leases.py), which the bot workers share.

    def acquire(self, partition: int, token: str, ttl_ms: int) -> bool:
        return self.leases.acquire(partition, token, ttl_ms)

    def renew(self, partitions: Sequence[int], token: str, ttl_ms: int) -> list[str | None]:
        return self.leases.renew(partitions, token, ttl_ms)

    def release(self, partition: int, token: str) -> None:
        self.leases.release(partition, token)

    def take_over(self, partition: int, token: str, ttl_ms: int) -> None:
        self.leases.take_over(partition, token, ttl_ms)

    def heartbeat(self, worker_id: str, ttl_ms: int) -> int:
        return self.leases.heartbeat(worker_id, ttl_ms)

    def leave(self, worker_id: str) -> None:
        self.leases.leave(worker_id)

    # ---------------------------------------------------------------- consumer group

    def ensure_group(self, partition: int, at: Checkpoint) -> bool:
        """Create the kind's group on a partition's feed at ``at`` (the stored checkpoint,
        never ``$``; its count is the group's entries read, so ``XINFO GROUPS`` ``lag``
        stays right); False if it existed already."""
        fresh = not self.client.exists(self.keys.feed(partition))
        try:
            self.client.xgroup_create(self.keys.feed(partition), self.keys.group, id=at.id, mkstream=True,
                                      entries_read=at.count)
        except redis.ResponseError as error:
            if "BUSYGROUP" in str(error):
                return False
            raise
        if fresh:  # no table was ever appended here: the table index is complete from now on
            mark_complete(self.client, self.keys.space, partition)
        return True

    def rewind(self, partition: int, at: Checkpoint) -> None:
        """Set the group's last delivered entry to ``at`` (the stored checkpoint), with its
        count as the entries read: what ``XINFO GROUPS`` shows operators. The workers do
        not read through the group (``read_new``); it trails their checkpoints."""
        self.client.xgroup_setid(self.keys.feed(partition), self.keys.group, at.id, entries_read=at.count)

    def show_read(self, positions: dict[int, Checkpoint]) -> list[int]:
        """Set each partition's group to its checkpoint (one round trip; on a cluster one
        per node); answers the partitions that have no group (deleted by hand)."""
        pipe = self.client.pipeline(transaction=False)
        for partition, at in positions.items():
            pipe.xgroup_setid(self.keys.feed(partition), self.keys.group, at.id, entries_read=at.count)
        lost = []
        for partition, reply in zip(positions, pipe.execute(raise_on_error=False), strict=True):
            if isinstance(reply, redis.ResponseError):
                if "NOGROUP" not in str(reply):
                    raise reply
                lost.append(partition)
        return lost

    def read_new(
        self, positions: dict[int, str], count: int, block_ms: int
    ) -> list[tuple[int, list[FeedEntry]]]:
        """What is in the partitions' feeds after each one's position (the worker's
        checkpoint): one XREAD blocking up to ``block_ms`` for them all, which Redis
        writes nowhere (no AOF line, nothing sent to the replicas: docs/workers.md,
        "Delivery"); on a cluster, where one XREAD reads one slot, a poll of each feed
        (``_poll_new``)."""
        if self.cluster:
            return self._poll_new(positions, count, block_ms)
        streams = {self.keys.feed(p): at for p, at in positions.items()}
        reply = self.client.xread(streams, count=count, block=block_ms)
        by_feed = {self.keys.feed(p): p for p in positions}
        return [(by_feed[name.decode()], feed_entries(entries)) for name, entries in reply or []]

    def _poll_new(
        self, positions: dict[int, str], count: int, block_ms: int
    ) -> list[tuple[int, list[FeedEntry]]]:
        """Non-blocking XREADs of every partition in one pipeline (one round trip per
        node); when nothing came, a pause before answering, which doubles while the
        feeds stay quiet (from 2 ms to ``block_ms``, at most 50 ms) and is back at its
        least once entries come: a quiet worker asks each node some 20 times a second, a
        busy one without pausing."""
        pipe = self.client.pipeline(transaction=False)
        for partition, at in positions.items():
            pipe.xread({self.keys.feed(partition): at}, count=count)
        found = [(partition, feed_entries(reply[0][1]))
                 for partition, reply in zip(positions, pipe.execute(), strict=True) if reply and reply[0][1]]
        least, most = CLUSTER_POLL_S
        if found:
            self._quiet_s = least
            return found
        time.sleep(self._quiet_s)
        self._quiet_s = min(self._quiet_s * 2, max(least, min(most, block_ms / 1000)))
        return []

    def drop_idle_consumers(self, partition: int, keep: str, idle_ms: int) -> None:
        """Forget the consumers of workers gone (each worker reads as a consumer of its
        own name). With ``NOACK`` a consumer holds no pending entry; one that does was a
        worker of an earlier release, which acknowledged: the checkpoint says what was
        applied, so its pending list goes with it."""
        for consumer in self.client.xinfo_consumers(self.keys.feed(partition), self.keys.group):
            name = consumer["name"].decode()
            if name != keep and consumer["idle"] > idle_ms:
                self.client.xgroup_delconsumer(self.keys.feed(partition), self.keys.group, name)

    # ---------------------------------------------------------------- reading

    def feed_after(self, partition: int, after: str, count: int) -> list[FeedEntry]:
        start = "-" if after == START else f"({after}"
        return feed_entries(self.client.xrange(self.keys.feed(partition), start, "+", count=count))

    def docs_named(self, partition: int, names: Iterable[DocKey]) -> dict[DocKey, bytes]:
        """The stored documents of a partition among ``names`` (a hash document whole,
        every field it holds), read key by key: no SCAN of the keyspace."""
        hashes = sorted({doc.name for doc in names if doc.field is not None})
        strings = sorted({doc.name for doc in names if doc.field is None} - set(hashes))
        pipe = self.client.pipeline(transaction=False)
        for name in hashes:
            pipe.hgetall(self.keys.doc(partition, name))
        for name in strings:
            pipe.get(self.keys.doc(partition, name))
        replies = pipe.execute()
        found: dict[DocKey, bytes] = {}
        for name, fields in zip(hashes, replies, strict=False):
            for name_of_field, data in fields.items():
                found[DocKey(name, name_of_field.decode())] = bytes(data)
        for name, data in zip(strings, replies[len(hashes):], strict=True):
            if data is not None:
                found[DocKey(name)] = bytes(data)
        return found

    def docs(self, partition: int) -> dict[DocKey, bytes]:
        """Every stored document of this kind in a partition."""
        found: dict[DocKey, bytes] = {}
        prefix = self.keys.prefix(partition)
        for pattern in self.keys.doc_patterns(partition):
            for key in scan_partition(self.client, self.keys.feed(partition), pattern):
                name = key.decode()[len(prefix):]
                if self.client.type(key) == b"hash":
                    for field, data in self.client.hgetall(key).items():
                        found[DocKey(name, field.decode())] = bytes(data)
                else:
                    found[DocKey(name)] = bytes(self.client.get(key))
        return found


def _applied(reply: list[Any]) -> Applied:
    status = reply[0].decode()
    if status == "ok":
        return Applied(status, server_ms=int(reply[1]) * 1000 + int(reply[2]) / 1000)
    return Applied(status, reply[1].decode())


# Hashes whose every change is announced on the one channel of the hash (the key's
# name), not one channel per field: a subscriber learns of fields it could not name.
ANNOUNCED_HASHES: Final = frozenset({TURNS_DOC})


def _op(doc: DocKey, data: bytes | None, publish: bool) -> list[Any]:
    if isinstance(data, LastWord):  # announced, then not kept (projections/docs.py)
        if doc.field is not None:
            raise ValueError(f"a last word is a string document's, not a hash field's: {doc}")
        return ["P", 0, "", data] if publish else ["d", 0, "", b""]
    if doc.field is not None and doc.name in ANNOUNCED_HASHES and data is not None:
        return ["T" if publish else "h", 0, doc.field, data]
    if doc.field is None:
        code = "d" if data is None else ("S" if publish else "s")
        return [code, 0, "", b"" if data is None else data]
    code = "x" if data is None else ("H" if publish else "h")
    return [code, 0, doc.field, b"" if data is None else data]
