"""The projection worker loop (docs/workers.md).

A worker of one kind (views, ledger, directory, ratings) owns some partitions, each through a
lease; for each owned partition it is the one reader of the partition's feed for its
kind, from the checkpoint it holds (``XREAD``: the stored checkpoint is the one record of
what was applied; the kind's consumer group only shows operators how far it is), so a
table's events apply in order. Per batch it folds the events into the projection,
renders the changed documents and hands them, with the new checkpoint, to one script
call (``apply.lua``) that writes all of it or nothing. The script compares checkpoints,
so a redelivered entry changes nothing, checks the batch starts right after the
checkpoint, so no entry is skipped, and checks the lease, so a worker that lost its
partition writes nothing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

import msgspec
import redis
import structlog

from domain.codec import decode_event
from projections import KINDS
from services.projection.kinds import AnyProjection, Kind, make_kind
from services.projection.lag_log import SUMMARY_S, Behind, LagLog, Summary
from services.projection.leases import fair_share, new_worker_id, surplus
from services.projection.rebuild import rebuild
from services.projection.store import (
    Applied,
    BadFeedEntry,
    Batch,
    Checkpoint,
    DeadLetter,
    ProjectionStore,
    id_key,
    id_ms,
    last_given,
)
from services.store.base import EventStore, FeedEntry
from services.store.cluster import CLUSTER_UNAVAILABLE
from services.store.errors import StoreUnavailable, is_transient

log = structlog.get_logger("mighty.workers")
# How often a worker sets the consumer groups of its partitions to their checkpoints
# (``Worker._show_read``): what XINFO GROUPS shows trails the workers by this much.
GROUP_EVERY_S: Final = 5.0

# What a Redis that is down, restarting or loading its data raises (BusyLoadingError is
# a ConnectionError) once the client's own retries are spent; StoreUnavailable is the same
# thing said by the event store, which a views worker reads tables' streams through.
UNREACHABLE = (redis.ConnectionError, redis.TimeoutError, StoreUnavailable, *CLUSTER_UNAVAILABLE)
# What stops the loop for a moment rather than dead-lettering an entry: the store's
# trouble, never the entry's.
_NOT_THE_ENTRY = (*UNREACHABLE, redis.RedisError)


@dataclass
class _Outage:
    """Back-off while Redis is unreachable: 50 ms, doubling, at most 2 s."""

    failures: int = 0

    def failed(self) -> int:
        self.failures += 1
        return self.failures

    def delay_s(self) -> float:
        return min(2.0, 0.05 * 2.0 ** min(self.failures - 1, 6))


@dataclass(frozen=True)
class Taken:
    """A partition a worker took: whether its consumer group was created (else it was
    set back to the checkpoint)."""

    partition: int
    group_created: bool


@dataclass
class _Partition:
    projection: AnyProjection
    checkpoint: Checkpoint
    # Tables with a dead letter: their later entries are dead-lettered too (folding past
    # a missing event would store a wrong view or total) until a rebuild after the fix.
    quarantined: set[str] = field(default_factory=set)


@dataclass
class Stats:
    """What a worker reports (``mighty:{workers}:<kind>:stats:<id>``)."""

    worker: str
    kind: str
    events: int = 0  # feed entries applied
    dead_letters: int = 0  # feed entries passed over as dead letters
    batches: int = 0
    busy_s: float = 0.0  # time spent folding, rendering and writing
    cpu_s: float = 0.0  # the process's CPU time
    lag_ms: dict[int, int] = field(default_factory=dict)  # append-to-stored lag histogram
    partitions: list[int] = field(default_factory=list)
    behind: dict[int, tuple[int, int]] = field(default_factory=dict)  # p -> (entries, ms)

    def record_lag(self, entries: Sequence[FeedEntry], stored_ms: float) -> None:
        for entry in entries:
            bucket = max(0, int(stored_ms - id_ms(entry.id)))
            self.lag_ms[bucket] = self.lag_ms.get(bucket, 0) + 1


class Worker:
    """One worker of the kind ``store`` holds (its keys name it). ``events`` is the event
    store a views worker restores a table from; ``services.bootstrap`` builds both."""

    def __init__(
        self,
        store: ProjectionStore,
        events: EventStore,
        *,
        worker_id: str | None = None,
        batch: int = 500,
        block_ms: int = 100,
        lease_ms: int = 3000,
        publish: bool = True,
        linger_ms: int | None = None,
        trim: bool = True,
        summary_s: float = SUMMARY_S,
        group_every_s: float = GROUP_EVERY_S,
        after_step: Callable[[], None] | None = None,
    ) -> None:
        kind = store.keys.kind
        self.keys = store.keys
        self.store = store
        self.kind: Kind = make_kind(kind, store, events)
        self.id = worker_id or new_worker_id(kind)
        self.batch, self.block_ms, self.lease_ms, self.publish = batch, block_ms, lease_ms, publish
        # the kind's own wait for more entries unless told (Kind.linger_ms)
        self.linger_s = (self.kind.linger_ms if linger_ms is None else linger_ms) / 1000
        self.trim = trim
        self.owned: dict[int, _Partition] = {}
        self._fresh_entries: dict[int, list[FeedEntry]] = {}
        self.stats = Stats(self.id, kind)
        self._next_maintain = 0.0
        self._next_group, self.group_every_s = 0.0, group_every_s
        self._shown: dict[int, Checkpoint] = {}  # the checkpoint each partition's group was last set to
        self._next_report = 0.0
        self._lag_log = LagLog()
        self._applied = Summary(summary_s)
        self._encode = msgspec.json.Encoder().encode
        self.log = log.bind(kind=kind, worker=self.id)
        # what runs after every round (the ratings' kind: the rater over every partition,
        # services/projection/rater.py)
        self.after_step = after_step

    # ---------------------------------------------------------------- the loop

    def run(self, stop: threading.Event) -> None:
        """Step until ``stop`` is set. A Redis that cannot be reached (down, restarting,
        still loading its AOF) does not end the worker: it forgets its partitions, waits
        with a growing back-off, and takes its share again once Redis answers."""
        self.log.info("worker started", partitions=self.keys.partitions, lease_ms=self.lease_ms)
        outage = _Outage()
        try:
            while not stop.is_set():
                try:
                    self.step(stop)
                except (*UNREACHABLE, redis.ResponseError) as error:
                    # Unreachable, or refusing (out of memory, a read-only replica after a
                    # failover, a group deleted mid-take): the same ride-out, logged as such.
                    self._lose_everything()
                    if outage.failed() == 1:
                        if isinstance(error, redis.ResponseError):  # MISCONF, OOM, READONLY...: an outage
                            log_refusal = self.log.warning if is_transient(error) else self.log.error
                            log_refusal("redis refused", error=str(error))
                        else:
                            self.log.warning("redis unreachable", error=str(error))
                    stop.wait(outage.delay_s())
                    continue
                if outage.failures:
                    self.log.warning("redis reachable again", failures=outage.failures)
                    outage = _Outage()
        finally:
            try:
                self.shutdown()
            except UNREACHABLE as error:  # the leases and the heartbeat expire by themselves
                self.log.warning("stopped while redis was unreachable", error=str(error))

    def _lose_everything(self) -> None:
        """After an outage nothing held in memory can be trusted: Redis may have come
        back from an AOF that lost its last second, our leases may have expired and been
        taken. Forget every partition; ``maintain`` takes them again from what is stored."""
        self._drop_all("redis unreachable")
        self._fresh_entries.clear()
        self._next_maintain = 0.0

    def step(self, stop: threading.Event | None = None) -> int:
        """One round: keep the leases, read what is new, apply it. Returns entries read."""
        self.maintain()
        if self.after_step is not None:
            self.after_step()
        if not self.owned:
            if stop is not None:
                stop.wait(self.lease_ms / 3000 if self.after_step is None else 0.25)
            return 0
        batches = self.read()
        self.process(batches)
        self.report()
        read = sum(len(entries) for _, entries in batches)
        if 0 < read < self.batch and self.linger_s:
            # A trickle: let a few more entries gather, so a round (a read, a render per
            # table, a script call per partition) serves several events, not one.
            time.sleep(self.linger_s)
        return read

    def read(self) -> list[tuple[int, list[FeedEntry]]]:
        """What is new in the owned partitions' feeds, each read from the checkpoint the
        worker holds: a refused batch or a partition taken again starts over from what is
        stored (docs/workers.md, "Delivery")."""
        positions = {p: self.owned[p].checkpoint.id for p in sorted(self.owned)}
        return self.store.read_new(positions, self.batch, self.block_ms)

    def shutdown(self) -> None:
        released = sorted(self.owned)
        self.owned.clear()
        for partition in released:
            self.store.release(partition, self.id)
        self.store.leave(self.id)
        self.report(force=True)
        self.log.info("worker stopped", events=self.stats.events)

    # ---------------------------------------------------------------- one batch

    def process(self, reads: Sequence[tuple[int, Sequence[FeedEntry]]]) -> None:
        """Fold each partition's entries, then store every partition's batch (one script
        call each, all in one round trip) and act on each answer."""
        started = time.perf_counter()
        batches = [b for partition, entries in reads if (b := self._prepare(partition, entries))]
        if not batches:
            return
        results = self.store.apply(batches, self.id, self.publish, self.kind.kept)
        elapsed = time.perf_counter() - started
        for batch, result in zip(batches, results, strict=True):
            self._settle(batch, result)
            self.log.debug("batch", partition=batch.partition, entries=batch.read, applied=batch.applied,
                          docs=len(batch.docs), outcome=result.status, latency_ms=round(elapsed * 1000, 3))
        self.stats.batches += len(batches)
        self.stats.busy_s += elapsed

    def _prepare(self, partition: int, entries: Sequence[FeedEntry]) -> Batch | None:
        owned = self.owned.get(partition)
        if owned is None or not entries:
            return None
        expected = owned.checkpoint.id
        fresh = [e for e in entries if id_key(e.id) > id_key(expected)]
        if not fresh:  # all applied already: nothing to store
            return None
        dead = self._fold(owned, partition, fresh)
        docs = owned.projection.flush()
        self._fresh_entries[partition] = fresh
        return Batch(partition, expected, fresh[-1].id, len(fresh), fresh[0].id, len(entries), docs, dead)

    def _settle(self, batch: Batch, result: Applied) -> None:
        partition = batch.partition
        fresh = self._fresh_entries.pop(partition, [])
        owned = self.owned.get(partition)
        if owned is None:
            return
        if result.status == "ok":
            owned.checkpoint = Checkpoint(batch.new, owned.checkpoint.count + batch.applied)
            self.stats.events += batch.applied
            self.stats.dead_letters += len(batch.dead)
            self.stats.record_lag(fresh, result.server_ms)
            for dead in batch.dead:
                self.log.error("dead letter", partition=partition, feed_id=dead.feed_id, table=dead.table_id,
                               version=dead.version, reason=dead.reason)
        elif result.status == "lease":
            self._drop(partition, "lease lost", holder=result.stored)
        elif result.status == "gap":
            # The batch does not start right after the checkpoint: the feed lost entries
            # past it (trimmed or deleted by hand after the read began). What was folded
            # is not what is stored: start again from the stored checkpoint.
            self.log.warning("the batch does not follow the checkpoint", partition=partition,
                             stored=result.stored, first=batch.first)
            self.owned[partition] = self._fresh(partition)
        else:  # done or stale: what we folded is not what is stored: start over
            if result.stored and id_key(result.stored) < id_key(batch.expected):
                # The stored checkpoint is behind ours: the store went back (a rollback: Redis
                # restarted on an AOF without its last second, a replica promoted without the
                # last writes) under a connection the client's retries kept. What was
                # folded is gone: take the partition again, from what it holds.
                self.log.warning("store went back", partition=partition, stored=result.stored,
                                 expected=batch.expected)
            else:
                self.log.warning("checkpoint moved under us", partition=partition, status=result.status,
                                 stored=result.stored, expected=batch.expected)
            self._drop(partition, "checkpoint moved")
            self._next_maintain = 0.0

    def _fold(self, owned: _Partition, partition: int, entries: Sequence[FeedEntry]) -> list[DeadLetter]:
        """Fold the entries; answer those that could not be decoded or folded (a stored
        event of a shape this release cannot read, a fold that raised, an entry with a
        field missing). They are passed over with the batch, never retried in a loop:
        one bad entry must not stop a partition."""
        projection, quarantined = owned.projection, owned.quarantined
        unknown = list(dict.fromkeys(e.table_id for e in entries if not isinstance(e, BadFeedEntry)
                                     and e.table_id not in quarantined and not projection.known(e.table_id)))
        failed = self._restore(projection, partition, unknown) if unknown else {}
        dead: list[DeadLetter] = []
        for entry in entries:
            reason = failed.get(entry.table_id) or self._fold_one(projection, entry, quarantined)
            if reason is not None:
                dead.append(DeadLetter(entry.id, entry.table_id, entry.version, self.kind.name, reason))
                if entry.table_id and entry.table_id not in quarantined:
                    quarantined.add(entry.table_id)
                    failed.pop(entry.table_id, None)
        return dead

    def _fold_one(self, projection: AnyProjection, entry: FeedEntry, quarantined: set[str]) -> str | None:
        if isinstance(entry, BadFeedEntry):
            return entry.problem
        if entry.table_id in quarantined:
            return "the table has an earlier dead letter: held back until a rebuild"
        try:
            self.kind.apply(projection, entry.table_id, entry.version, decode_event(entry.data), entry.at_ms)
        except _NOT_THE_ENTRY:
            raise
        except Exception as error:  # noqa: BLE001 - whatever an entry makes a fold raise
            return f"{type(error).__name__}: {error}"
        return None

    def _restore(self, projection: AnyProjection, partition: int, table_ids: list[str]) -> dict[str, str]:
        """Restore the tables' state from what is stored; answer the tables that could not
        be (a stored document or event this release cannot read), with why."""
        try:
            self.kind.restore(projection, partition, table_ids)
            return {}
        except _NOT_THE_ENTRY:
            raise
        except Exception:  # noqa: BLE001 - one of them: find which, one at a time
            pass
        failed: dict[str, str] = {}
        for table_id in table_ids:
            try:
                self.kind.restore(projection, partition, [table_id])
            except _NOT_THE_ENTRY:
                raise
            except Exception as error:  # noqa: BLE001
                failed[table_id] = f"restoring the table failed: {type(error).__name__}: {error}"
        return failed

    # ---------------------------------------------------------------- partitions

    def maintain(self) -> None:
        """Heartbeat, renew the leases, and take or give partitions to keep a fair share."""
        now = time.monotonic()
        if now < self._next_maintain:
            return
        self._next_maintain = now + self.lease_ms / 3000
        live = self.store.heartbeat(self.id, self.lease_ms)
        for partition, stored in zip(list(self.owned), self.store.renew(list(self.owned), self.id, self.lease_ms),
                                     strict=True):
            if stored is None:
                self._drop(partition, "lease lost")
            elif stored != self.owned[partition].checkpoint.id:
                # Only this worker moves a checkpoint it holds the lease of, so the store
                # went back under a connection the client's retries kept (Redis restarted on
                # an AOF without its last second, a replica promoted without the last
                # writes). What was folded since is gone, and the worker would read on
                # past the stored checkpoint, where a quiet partition would leave the
                # entries between for good: take the partition again, from what it holds.
                held = self.owned[partition].checkpoint.id
                went_back = id_key(stored) < id_key(held)
                self.log.warning("store went back" if went_back else "checkpoint moved under us",
                                 partition=partition, stored=stored, expected=held)
                self._drop(partition, "checkpoint moved")
        share = fair_share(self.keys.partitions, live)
        for partition in surplus(self.owned, share):
            self._drop(partition, "rebalance")
            self.store.release(partition, self.id)
        taken = [took for partition in self.store.leases.take_up_to(self.owned, share, self.id, self.lease_ms)
                 if (took := self.take(partition)) is not None]
        if taken:  # one line for every partition taken in this round
            self.log.info("partitions taken", partitions=sorted(t.partition for t in taken), owned=len(self.owned),
                          groups_created=sum(1 for t in taken if t.group_created))
        if self.trim and self.owned:
            self.store.trim(sorted(self.owned), KINDS)
        self._show_read(now)

    def _show_read(self, now: float) -> None:
        """Every ``group_every_s`` (``GROUP_EVERY_S``), each owned partition's consumer group is set to the
        checkpoint when it moved: ``XINFO GROUPS`` (what an operator looks at) trails the
        workers by that much, and Redis logs one ``XGROUP SETID`` a partition then, not
        one a read. A group deleted by hand comes back at the stored checkpoint."""
        if now < self._next_group:
            return
        self._next_group = now + self.group_every_s
        moved = {p: owned.checkpoint for p, owned in self.owned.items() if self._shown.get(p) != owned.checkpoint}
        if not moved:
            return
        lost = self.store.show_read(moved)
        self._shown.update(moved)
        if lost:
            self._recreate_groups(lost)

    def take(self, partition: int) -> Taken | None:
        """Own a partition: read from the stored checkpoint, its group set there (created,
        or set back: what operators see, docs/workers.md, "Delivery")."""
        self.owned[partition] = owned = self._fresh(partition)
        if self.store.trimmed_past(partition, owned.checkpoint):
            self.log.warning("entries past the checkpoint are gone from the feed: rebuilding from the table streams",
                             partition=partition, checkpoint=owned.checkpoint.id)
            rebuild(self.store, partition)  # takes the lease for itself and frees it
            if not self.store.acquire(partition, self.id, self.lease_ms):
                self._drop(partition, "lease taken during the rebuild")
                return None
            self.owned[partition] = owned = self._fresh(partition)
        created = self.store.ensure_group(partition, owned.checkpoint)
        if not created:
            self.store.rewind(partition, owned.checkpoint)
        self.log.debug("partition taken", partition=partition, checkpoint=owned.checkpoint.id,
                       group_created=created)
        self.store.drop_idle_consumers(partition, self.id, idle_ms=self.lease_ms)
        return Taken(partition, created)

    def _fresh(self, partition: int) -> _Partition:
        return _Partition(self.kind.new(self.store, partition), self.store.checkpoint(partition),
                          self.store.quarantined(partition))

    def _drop(self, partition: int, reason: str, **details: object) -> None:
        if self.owned.pop(partition, None) is not None:
            self.log.info("partition dropped", partition=partition, reason=reason, **details)

    def _drop_all(self, reason: str) -> None:
        """Forget every partition, in one line."""
        if self.owned:
            self.log.info("partitions dropped", partitions=sorted(self.owned), reason=reason)
            self.owned.clear()

    def _recreate_groups(self, partitions: Sequence[int]) -> None:
        """A lost group comes back at the stored checkpoint, never at ``$``."""
        for partition in partitions:
            owned = self.owned.get(partition)
            if owned is None:
                continue
            stored = self.store.checkpoint(partition)
            if self.store.ensure_group(partition, stored):
                self.log.warning("consumer group recreated", partition=partition, at=stored.id)
                self.owned[partition] = self._fresh(partition)
            elif stored != owned.checkpoint:
                self.owned[partition] = self._fresh(partition)

    # ---------------------------------------------------------------- reporting

    def lag(self) -> dict[int, tuple[int, int]]:
        """Per owned partition: (entries, milliseconds) the stored projection is behind."""
        return behind(self.store, {p: o.checkpoint for p, o in self.owned.items()})

    def report(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now < self._next_report:
            return
        self._next_report = now + 1.0
        self.stats.partitions = sorted(self.owned)
        self.stats.cpu_s = time.process_time()
        self.stats.behind = self.lag()
        self.store.client.set(self.keys.stats(self.id), self._encode(self.stats), ex=3600)
        if force:  # the last report, as the worker stops: its line is "worker stopped"
            return
        # the lines (lag_log.py): behind (at least 1 s, every 10 s), caught up, applied
        said = self._lag_log.observe(now, self.stats.behind)
        if isinstance(said, Behind):
            self.log.info("lag", partitions=list(said.partitions), entries_behind=said.entries, ms_behind=said.ms,
                          behind_s=said.behind_s)
        elif said is not None:
            self.log.info("caught up", behind_s=said.behind_s)
        applied = self._applied.observe(now, self.stats.events)
        if applied is not None:
            self.log.info("applied", entries=applied, seconds=self._applied.every_s, events=self.stats.events,
                          dead_letters=self.stats.dead_letters, partitions=len(self.stats.partitions))
        self.log.debug("lag measured", partitions=self.stats.partitions, behind=self.stats.behind, events=self.stats.events)


def behind(store: ProjectionStore, checkpoints: dict[int, Checkpoint]) -> dict[int, tuple[int, int]]:
    """How far each partition's stored projection is behind its feed: entries not yet
    applied (the entries the feed was ever given, trimmed or not, less those the
    checkpoint has passed), and how long ago the oldest of them was appended (server
    clock). One round trip for all partitions."""
    pipe = store.client.pipeline(transaction=False)
    for partition, checkpoint in checkpoints.items():
        pipe.xinfo_stream(store.keys.feed(partition))
        start = "-" if checkpoint.id == "0-0" else f"({checkpoint.id}"
        pipe.xrange(store.keys.feed(partition), start, "+", count=1)
    if not store.cluster:
        pipe.time()
    replies = pipe.execute(raise_on_error=False)
    if store.cluster:  # TIME is no pipeline's on a cluster (it has no key): asked after
        replies.append(store.client.time())
    if isinstance(replies[-1], Exception):
        raise replies[-1]
    now_s, now_us = replies[-1]
    now = now_s * 1000 + now_us // 1000
    found = {}
    for i, (partition, checkpoint) in enumerate(checkpoints.items()):
        info, oldest = replies[2 * i], replies[2 * i + 1]
        if isinstance(oldest, Exception):
            raise oldest
        added = 0 if isinstance(info, redis.ResponseError) else int(info.get("entries-added", 0))
        if isinstance(info, Exception) and not isinstance(info, redis.ResponseError):
            raise info
        entries = max(0, added - checkpoint.count)
        # none past the checkpoint left (the feed trimmed past a checkpoint set back): at
        # least as old as the last entry the feed was given
        first = oldest[0][0].decode() if oldest else last_given(info)
        ms = max(0, now - id_ms(first)) if entries else 0
        found[partition] = (entries, ms)
    return found
