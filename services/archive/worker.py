"""The archive worker (``mighty worker archive``): moves tables closed at least
``after_s`` ago from Redis into PostgreSQL, leaving an index entry (docs/archive.md).

A pass goes partition by partition:

1. **Discover.** SCAN the partition's table heads (``…:t:<id>:meta``); a table whose last
   event is ``table_closed`` joins the partition's to-do list (``…:archive:closed``, a
   sorted set) scored by when it closed: the server time of its last append (its stream
   entry's, ``redis_store.last_entry``: a record that is not a head has its append's
   head's, and a head storing its time as a delta adds it to the time before it, both
   read from the entries before it, back to the anchor), or, for an entry stored before the time was
   kept, the time the worker first saw it closed (later than the close, so never too early).
2. **Archive** each table on the list closed ``after_s`` ago or more whose feed entries
   every projection kind has applied (none is in the partition's feed after the slowest
   kind's checkpoint: the feed is a queue, so a worker still to fold the close would
   otherwise meet a table that is gone):
   a. take the table's lock (``SET NX PX``): several archive workers may run;
   b. read its stream from Redis and check the hash chain against the stored head;
   c. copy table, hands, events and chat into PostgreSQL in one transaction;
   d. read back what PostgreSQL holds: the same rows, the same chain, every chat
      message, and ``services.audit.verify_events`` finds nothing wrong;
   e. only then, in one MULTI watched on the table's head, its chat and the lock (and
      its chat's last message still the one copied), delete its stream, head, command
      ids, views and chat, write its index entry and drop it from the to-do list. From
      then on the chat's append script refuses a message to the table (it reads the index
      entry), so nothing is said to a table whose chat has left Redis.

Every step before (e) changes nothing in Redis but the to-do list; (e) is atomic. A crash
anywhere leaves either the table whole in Redis (maybe also in PostgreSQL: the next pass
finds the very same stream there, verifies it and deletes) or the table archived. A
PostgreSQL that cannot be reached ends the pass before (e). The table's ledger document
goes in (e) too (the gateway folds an archived table's ledger from its archived events),
and so do the ratings' records of its hands (a re-rating folds them from the archived
events): a table with hands the rater has not applied yet waits for it (``held``), so
none is lost to the live ratings. The players' ledgers stay.
"""

from __future__ import annotations

import secrets
import socket
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final

import redis
import structlog

from domain.codec import decode_event
from domain.table import TableClosed
from projections import KINDS
from projections.directory import CLOSED_DOC
from projections.docs import DocKey
from projections.views import SPECTATOR, audit_name, view_name
from services.archive.errors import ArchiveConflict, ArchiveMismatch, ArchiveUnavailable
from services.archive.keys import IndexEntry, encode_entry
from services.archive.postgres import ChatRow, PostgresArchive
from services.archive.reads import TABLE_DOCS_ARCHIVED, ArchivedEventStore
from services.archive.summary import NotArchivable, summarize
from services.projection.keys import ProjectionKeys
from services.projection.rater import KIND as RATINGS
from services.projection.rater import hands_rated
from services.projection.store import id_key
from services.store.base import EMPTY_HEAD, HASH_EVERY, Head, StoredEvent, verify_chain
from services.store.cluster import CLUSTER_UNAVAILABLE, SyncClient
from services.store.errors import StoreCorrupt, StoreUnavailable, is_transient
from services.store.redis_store import RedisEventStore, last_entry
from services.store.table_index import indexed_tables

log = structlog.get_logger("mighty.archive")

DEFAULT_AFTER_S: Final = 3600.0
_SCAN_CHUNK: Final = 500
_TAIL_LIMIT: Final = 10_000  # a partition with more unapplied feed entries waits for its workers
_CLOSED_MARK: Final = b"table_closed"
_RELEASE: Final = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


@dataclass
class PassReport:
    """What one pass did."""

    discovered: int = 0  # tables newly found closed
    archived: list[str] = field(default_factory=list)
    waiting: int = 0  # closed, not yet ``after_s`` ago
    held: int = 0  # due, but a projection has not applied their events yet, or the rater their hands
    kept: list[str] = field(default_factory=list)  # due, refused (logged): stay in Redis
    locked: int = 0  # another archive worker had them

    def as_dict(self) -> dict[str, Any]:
        return {"discovered": self.discovered, "archived": len(self.archived), "waiting": self.waiting,
                "held": self.held, "kept": self.kept, "locked": self.locked}


class ArchiveWorker:
    def __init__(self, store: ArchivedEventStore, archive: PostgresArchive, *, after_s: float = DEFAULT_AFTER_S,
                 lock_ms: int = 60_000, worker_id: str | None = None, kinds: Iterable[str] = KINDS,
                 after_copy: Callable[[str], None] | None = None) -> None:
        self.store = store
        self.client: SyncClient = store.client
        self.archive = archive
        self.keys = store.archive_keys
        self.space = store.keys
        self.after_ms = round(after_s * 1000)
        self.lock_ms = lock_ms
        self.id = worker_id or f"{socket.gethostname()}-{secrets.token_hex(3)}"
        self.kinds = tuple(kinds)
        self.after_copy = after_copy  # tests: a crash between the copy and the delete
        self._release = self.client.register_script(_RELEASE)
        self.log = log.bind(worker=self.id)

    # ------------------------------------------------------------ the loop

    def run(self, stop: threading.Event, interval_s: float = 30.0) -> None:
        """Passes every ``interval_s`` until ``stop``; an unreachable Redis or PostgreSQL
        ends a pass (nothing is deleted that is not archived) and the next one retries.
        The migrations go first, and wait for PostgreSQL the same way: a worker started
        while it is down does not exit (``mighty serve`` would stop every part with it)."""
        self.log.info("archive worker started", after_s=self.after_ms / 1000, interval_s=interval_s)
        migrated = False
        while not stop.is_set():
            try:
                if not migrated:
                    self.archive.migrate()
                    migrated = True
                report = self.run_once()
                if report.archived or report.kept:
                    self.log.info("archive pass", **report.as_dict())
            except (ArchiveUnavailable, StoreUnavailable, redis.ConnectionError, redis.TimeoutError,
                    *CLUSTER_UNAVAILABLE) as error:
                self.log.warning("archive pass stopped", error=str(error))
            except redis.RedisError as error:  # LOADING, MISCONF, OOM...: the next pass retries
                if not is_transient(error):
                    raise
                self.log.warning("archive pass stopped", error=str(error))
            stop.wait(interval_s)

    def run_once(self) -> PassReport:
        report = PassReport()
        for partition in range(self.space.partitions):
            self.discover(partition, report)
            self.archive_due(partition, report)
        return report

    def now_ms(self) -> int:
        """The Redis server's clock: the one the command-id index's times are on."""
        seconds, micros = self.client.time()
        return int(seconds) * 1000 + int(micros) // 1000

    # ------------------------------------------------------------ discover

    def _table_ids(self, partition: int) -> list[str]:
        """The partition's tables, from its table index (no SCAN of the keyspace)."""
        return indexed_tables(self.client, self.space, partition)

    def discover(self, partition: int, report: PassReport) -> None:
        """Put the partition's newly closed tables on its to-do list."""
        todo = self.keys.closed(partition)
        members: Any = self.client.zrange(todo, 0, -1)
        known = {m.decode() for m in members}
        fresh = [t for t in self._table_ids(partition) if t not in known]
        now = self.now_ms()
        for start in range(0, len(fresh), _SCAN_CHUNK):
            chunk = fresh[start:start + _SCAN_CHUNK]
            pipe = self.client.pipeline(transaction=False)
            for table_id in chunk:
                keys = self.space.table(table_id)
                pipe.xrevrange(keys.events, count=1)
            replies = pipe.execute()
            closed: dict[str, int] = {}
            for table_id, last in zip(chunk, replies, strict=True):
                if not last:
                    continue
                try:
                    newest = last_entry(last)
                    if newest is None or _CLOSED_MARK not in newest.data:
                        continue  # the cheap test first; decoding settles it
                    if not isinstance(decode_event(newest.data), TableClosed):
                        continue
                    at_ms = newest.at_ms
                    if newest.at_ms is None:  # not a head, or its time a delta: read from the anchor before
                        at_ms = _time_of_last(self.client, self.space.table(table_id).events)
                except StoreCorrupt as error:  # verify names it; the table is not archived
                    self.log.error("table's last entries unreadable", table=table_id, error=str(error))
                    continue
                closed[table_id] = at_ms or now
            if closed:
                self.client.zadd(todo, closed, nx=True)
                report.discovered += len(closed)

    # ------------------------------------------------------------ archive

    def _unapplied_tables(self, partition: int) -> set[str] | None:
        """The tables with feed entries some projection kind has not applied yet (None:
        too many to list; the partition waits for its workers)."""
        pipe = self.client.pipeline(transaction=False)
        for kind in self.kinds:
            pipe.hget(ProjectionKeys(self.space, kind).checkpoint(partition), "id")
        ids = [(found or b"0-0").decode() for found in pipe.execute()]
        slowest = min(ids, key=id_key, default="0-0")
        start = "-" if slowest == "0-0" else f"({slowest}"
        entries: Any = self.client.xrange(self.space.feed(partition), start, "+", count=_TAIL_LIMIT + 1)
        if len(entries) > _TAIL_LIMIT:
            return None
        return {fields[b"t"].decode() for _, fields in entries if b"t" in fields}

    def archive_due(self, partition: int, report: PassReport) -> None:
        todo = self.keys.closed(partition)
        now = self.now_ms()
        found: Any = self.client.zrangebyscore(todo, "-inf", now - self.after_ms, withscores=True)
        due = [(m.decode(), int(score)) for m, score in found]
        report.waiting += int(self.client.zcard(todo)) - len(due)
        if not due:
            return
        unapplied = self._unapplied_tables(partition)
        for table_id, closed_ms in due:
            if unapplied is None or table_id in unapplied:
                report.held += 1
                continue
            outcome = self.archive_table(table_id, closed_ms)
            if outcome == "archived":
                report.archived.append(table_id)
            elif outcome == "locked":
                report.locked += 1
            elif outcome == "held":
                report.held += 1
            elif outcome == "kept":
                report.kept.append(table_id)

    def archive_table(self, table_id: str, closed_ms: int) -> str:
        """``archived``, ``locked`` (another worker has it), ``gone`` (not in Redis any
        more), ``held`` (the rater has not applied its hands yet: retried next pass),
        ``kept`` (refused and logged; retried after another ``after_s``)."""
        lock = self.keys.lock(table_id)
        token = f"{self.id}-{secrets.token_hex(4)}"
        if not self.client.set(lock, token, nx=True, px=self.lock_ms):
            return "locked"
        try:
            return self._archive_locked(table_id, closed_ms, token)
        except (ArchiveConflict, ArchiveMismatch, StoreCorrupt, NotArchivable) as error:
            self.log.error("table kept in redis", table=table_id, error=str(error))
            self.client.zadd(self.keys.closed(self.space.partition_of(table_id)), {table_id: self.now_ms()}, xx=True)
            return "kept"
        finally:
            self._release(keys=[lock], args=[token])

    def _archive_locked(self, table_id: str, closed_ms: int, token: str) -> str:
        stored = RedisEventStore.read(self.store, table_id)  # Redis only, never the fall-through
        if not stored:
            self.client.zrem(self.keys.closed(self.space.partition_of(table_id)), table_id)
            return "gone"
        head = verify_chain(EMPTY_HEAD, stored)
        # its own documents of the kinds this worker waits for (it deletes no other's)
        own = {kind: docs.of_table(table_id, stored) for kind, docs in TABLE_DOCS_ARCHIVED.items()
               if kind in self.kinds}
        if RATINGS in own and not hands_rated(self.client, self.space, own[RATINGS]):
            return "held"  # its hands' records go with it, once the rater has applied them
        row, hands, seats = summarize(table_id, stored, closed_ms=closed_ms, created_ms=stored[0].at_ms)
        chat = self._chat(table_id)
        self.archive.write(row, stored, hands, chat)
        if self.after_copy is not None:
            self.after_copy(table_id)
        self._check_archived(table_id, stored, head, chat)
        return self._delete(table_id, head, token, seats, len(hands), chat[-1].message_id if chat else None, own)

    def _chat(self, table_id: str) -> list[ChatRow]:
        """The table's chat in Redis (services/gateway/chat.py: capped, so a bounded read)."""
        found: Any = self.client.xrange(self.space.table(table_id).chat, "-", "+")
        return [ChatRow(entry_id.decode(), bytes(fields.get(b"m", b"{}"))) for entry_id, fields in found]

    def _check_archived(self, table_id: str, stored: list[StoredEvent], head: Head, chat: list[ChatRow]) -> None:
        from services.audit import verify_events

        back = self.archive.read(table_id)
        if back != stored:
            raise ArchiveMismatch(f"PostgreSQL holds {len(back)} events of table {table_id} that differ "
                                  f"from the {len(stored)} in Redis")
        # every message of Redis's chat, the same bytes (PostgreSQL may hold more: messages
        # a first copy took that Redis's cap has trimmed since)
        archived = dict(self.archive.chat(table_id))
        missing = [row.message_id for row in chat if archived.get(row.message_id) != row.data]
        if missing:
            raise ArchiveMismatch(f"PostgreSQL lacks (or differs in) {len(missing)} chat messages of table "
                                  f"{table_id}, the first {missing[0]}")
        if verify_chain(EMPTY_HEAD, back) != head:
            raise ArchiveMismatch(f"table {table_id}'s archived chain does not end at its head")
        verdict = verify_events(table_id, back)
        if not verdict.ok:
            problem = verdict.finding.problem if verdict.finding else "?"
            raise ArchiveMismatch(f"table {table_id} as archived does not verify: {problem}")

    def _view_keys(self, table_id: str, seats: int, hands: int) -> list[str]:
        views = ProjectionKeys(self.space, "views")
        partition = self.space.partition_of(table_id)
        names = [view_name(table_id, str(seat)) for seat in range(seats)] + [view_name(table_id, SPECTATOR)]
        names += [audit_name(table_id, hand_no) for hand_no in range(hands)]  # releases before 2026-12-05
        return [views.doc(partition, name) for name in names]

    def _delete(self, table_id: str, head: Head, token: str, seats: int, hands: int,
                last_chat: str | None, own: dict[str, list[DocKey]]) -> str:
        keys = self.space.table(table_id)
        partition = self.space.partition_of(table_id)
        lock = self.keys.lock(table_id)
        entry = encode_entry(IndexEntry(at=self.now_ms(), version=head.version, head=head.hash))
        pipe: Any
        with self.client.pipeline(transaction=True) as pipe:
            try:
                pipe.watch(keys.meta, lock, keys.chat)
                version, digest = pipe.hmget(keys.meta, ["v", "h"])
                newest = pipe.xrevrange(keys.chat, "+", "-", count=1)
                said = newest[0][0].decode() if newest else None
                if (version, digest) != (str(head.version).encode(), head.hash.encode()) \
                        or pipe.get(lock) != token.encode():
                    self.log.warning("table moved while archived; retried next pass", table=table_id)
                    return "locked"
                if said != last_chat:  # a message came after the copy: copied with it next pass
                    self.log.debug("chat moved while archived; retried next pass", table=table_id)
                    return "locked"
                pipe.multi()
                pipe.delete(keys.events, keys.meta, keys.commands, keys.previous_commands,
                            keys.legacy_command_index, keys.audit, keys.chat,
                            *self._view_keys(table_id, seats, hands))
                # its own documents of the kinds kept archived: its ledger (folded from the
                # archived events when asked), the ratings' records of its hands (rated)
                for kind, docs in own.items():
                    names = ProjectionKeys(self.space, kind)
                    for doc in docs:
                        if doc.field is None:
                            pipe.delete(names.doc(partition, doc.name))
                        else:
                            pipe.hdel(names.doc(partition, doc.name), doc.field)
                pipe.srem(keys.tables, table_id)  # its keys are gone: out of the live index
                # its lobby entry among the finished tables (the directory's dir:closed)
                # goes too: the lobby lists a finished table until it is archived
                pipe.hdel(ProjectionKeys(self.space, "directory").doc(partition, CLOSED_DOC), table_id)
                pipe.hset(self.keys.index(partition), table_id, entry)
                pipe.zrem(self.keys.closed(partition), table_id)
                pipe.execute()
            except redis.WatchError:
                self.log.warning("table moved while archived; retried next pass", table=table_id)
                return "locked"
        self.log.debug("table archived", table=table_id, version=head.version)
        return "archived"


def _time_of_last(client: Any, key: str) -> int | None:
    """The append time of a stream's newest entry when that entry holds none of its own (a
    record that is not a head: its append's first event, or the anchor before, holds it)
    or holds it as a delta (added to the time before it, from the anchor before on)."""
    found = last_entry(client.xrevrange(key, count=HASH_EVERY))
    return None if found is None else found.at_ms
