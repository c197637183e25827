"""The ratings over every partition (docs/ratings.md): the hands the kind ``ratings``
stored per partition, applied in one order, behind a watermark.

A rating depends on the order hands are applied, and hands end in every partition. The
order is data: ``RatedHand.key`` (the hand's end time on the store's clock, the table,
the hand number). A hand is applied only once **every** partition's ``ratings``
checkpoint has passed its time (the watermark), so no hand that sorts before it can still
arrive; a rebuild (``rebuild_ratings``) applies the same hands in the same order from
nothing, and stores the same bytes.

A partition has passed time ``T`` when its checkpoint is at its feed's end as of a read
made after the server's clock read ``T`` (an append after that is stamped later), or
when the entry at its checkpoint was appended after ``T``. A partition the kind has never
run in, with a feed, holds every hand back.

Keys, one slot (hash tag ``{ratings}``), written in one ``MULTI`` under ``WATCH`` of the
lease (a rater that lost it writes nothing):

    mighty:{ratings}:lease           the rater applying hands now (a worker of the kind)
    mighty:{ratings}:cursor          the key of the last hand applied
    mighty:{ratings}:r:<rules>       hash: player -> PlayerRating (JSON)
    mighty:{ratings}:board:<rules>   sorted set: player by ordinal (the leaderboard)
    mighty:{ratings}:reputation      hash: player -> Reputation (JSON)
    mighty:{ratings}:rules           set: the rule sets rated so far

The partitions keep their hands (their record, which a partition's check compares with
the streams) until the table is archived, once rated (docs/ratings.md, "Archived
tables": a re-rating folds those from the archived events); the rater reads the hour
buckets (``ratings:hours`` names them) between its cursor and the watermark.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import redis
import structlog

from domain.codec import decode_event
from projections.docs import DocKey, same_document
from projections.ratings import (
    HOUR_MS,
    HOURS_DOC,
    RatedHand,
    Ratings,
    RatingsDocs,
    decode_cursor,
    decode_hand,
    hand_key_of_field,
    hands_doc,
    rate_all,
    table_hands,
)
from services.archive.keys import ArchiveKeys
from services.projection.keys import ProjectionKeys
from services.projection.store import id_ms
from services.store.base import StoredEvent
from services.store.cluster import CLUSTER_UNAVAILABLE
from services.store.errors import StoreUnavailable
from services.store.keys import KeySpace

log = structlog.get_logger("mighty.workers")
KIND = "ratings"
UNREACHABLE = (StoreUnavailable, *CLUSTER_UNAVAILABLE)


@dataclass(frozen=True, slots=True)
class RatingsKeys:
    space: KeySpace

    def _key(self, name: str) -> str:
        return f"{self.space.namespace}:{{ratings}}:{name}"

    @property
    def lease(self) -> str:
        return self._key("lease")

    @property
    def cursor(self) -> str:
        return self._key("cursor")

    def ratings(self, rules: str) -> str:
        return self._key(f"r:{rules}")

    def board(self, rules: str) -> str:
        return self._key(f"board:{rules}")

    @property
    def reputation(self) -> str:
        return self._key("reputation")

    @property
    def rules(self) -> str:
        return self._key("rules")


def watermark(client: Any, space: KeySpace) -> int:
    """The time (ms, the store's clock) every partition's ``ratings`` checkpoint has
    passed: a hand that ended at or before it can no longer be preceded by one not yet
    stored. -1: some partition holds everything back."""
    now_s, now_us = client.time()  # first: an append after this read is stamped later
    now = int(now_s) * 1000 + int(now_us) // 1000
    keys = ProjectionKeys(space, KIND)
    pipe = client.pipeline(transaction=False)
    for partition in range(space.partitions):
        pipe.hget(keys.checkpoint(partition), "id")
        pipe.xinfo_stream(keys.feed(partition))
    replies = pipe.execute(raise_on_error=False)
    mark = now - 1
    for partition in range(space.partitions):
        stored, info = replies[2 * partition], replies[2 * partition + 1]
        if isinstance(stored, Exception):
            raise stored
        if isinstance(info, redis.ResponseError):  # no feed: nothing was ever appended there
            continue
        if isinstance(info, Exception):
            raise info
        last = info.get("last-generated-id") or b"0-0"
        last = last.decode() if isinstance(last, bytes) else str(last)
        checkpoint = stored.decode() if stored is not None else "0-0"
        if checkpoint == last:
            continue  # at its end: passed ``now``
        if checkpoint == "0-0":
            return -1
        mark = min(mark, id_ms(checkpoint) - 1)
    return mark


class Rater:
    """Applies the partitions' stored hands to the ratings, up to the watermark. Holds
    the lease ``mighty:{ratings}:lease`` while it is the one doing it; the ratings are
    read from Redis at every step (so a rebuild or another rater's work is never
    contradicted); only the hands read are cached, by bucket (a bucket is re-read when
    its length changed)."""

    def __init__(self, client: Any, space: KeySpace, *, token: str | None = None, lease_ms: int = 3000,
                 every_s: float = 0.25, batch: int = 2000) -> None:
        self.client = client
        self.space = space
        self.keys = RatingsKeys(space)
        self.hands = ProjectionKeys(space, KIND)
        self.archive = ArchiveKeys(space)
        self.token = token or f"rater-{secrets.token_hex(6)}"
        self.lease_ms = lease_ms
        self.every_s = every_s
        self.batch = batch
        self._next = 0.0
        # per (partition, hour): the bucket's length and its partition's count of archived
        # tables when last read, and its hands not yet applied (by field); what the cursor
        # passes is dropped, so this holds the backlog only
        self._buckets: dict[tuple[int, int], tuple[tuple[int, int], dict[bytes, RatedHand]]] = {}
        # a re-rating's hands of archived tables, which left the buckets with their tables
        # (``archived_hands``); the live rater has none: the archive waits for it
        self.archived: list[RatedHand] = []
        self.seen: set[tuple[int, str, int]] | None = None  # a re-rating's: the keys it applied
        self.applied = 0

    def tick(self) -> None:
        """At most every ``every_s``: a step if this rater holds (or can take) the lease."""
        now = time.monotonic()
        if now < self._next:
            return
        self._next = now + self.every_s
        if not self.hold():
            return
        try:
            self.step()
        except (redis.RedisError, *UNREACHABLE):
            raise  # the worker's outage path
        except Exception:  # noqa: BLE001 - a hand the fold cannot rate must not stop the partitions' worker
            log.exception("rater step failed", rater=self.token)

    def hold(self) -> bool:
        if self.client.set(self.keys.lease, self.token, nx=True, px=self.lease_ms):
            return True
        holder = self.client.get(self.keys.lease)
        if holder is not None and holder.decode() == self.token:
            self.client.pexpire(self.keys.lease, self.lease_ms)
            return True
        return False

    def release(self) -> None:
        holder = self.client.get(self.keys.lease)
        if holder is not None and holder.decode() == self.token:
            self.client.delete(self.keys.lease)

    def _hours(self, cursor: tuple[int, str, int] | None, upto: int) -> list[tuple[int, int]]:
        """The (partition, hour) buckets that may hold a hand after the cursor and at or
        before ``upto``: the hours each partition says it has hands of (``ratings:hours``)."""
        first = -1 if cursor is None else cursor[0] // HOUR_MS
        last = upto // HOUR_MS
        pipe = self.client.pipeline(transaction=False)
        for partition in range(self.space.partitions):
            pipe.hkeys(self.hands.doc(partition, HOURS_DOC))
        return sorted((partition, hour) for partition, hours in enumerate(pipe.execute())
                      for hour in map(int, hours) if first <= hour <= last)

    def pending(self, upto: int) -> list[RatedHand]:
        """The stored hands after the cursor that ended at or before ``upto``, in key order,
        and a re-rating's hands of archived tables (``archived``) among them.

        A bucket is read again by its fields (``HKEYS``) when its length or its
        partition's count of archived tables changed since it was read, and only the hands
        after the cursor not held yet are fetched and decoded (``HMGET``): an hour's bucket
        is not read whole at every step, and the hands the cursor passed are not kept (the
        worker's memory stays the backlog's, not the hour's). Its length alone does not
        say: the archive deletes an archived table's hands from their bucket (in the
        MULTI that adds the table to its partition's index), and a hand stored after may
        bring the bucket back to the length it was read at (docs/ratings.md)."""
        cursor = decode_cursor(self.client.get(self.keys.cursor))
        buckets = self._hours(cursor, upto)
        partitions = sorted({partition for partition, _ in buckets})
        pipe = self.client.pipeline(transaction=False)
        for partition, hour in buckets:
            pipe.hlen(self.hands.doc(partition, hands_doc(hour)))
        for partition in partitions:
            pipe.hlen(self.archive.index(partition))  # grows in the MULTI that deletes a table's hands
        replies = [int(n) for n in pipe.execute()]
        archived = dict(zip(partitions, replies[len(buckets):], strict=True))
        # what each bucket is read at: its length and its partition's count of archived tables
        read_at = [(n, archived[partition]) for (partition, _), n in zip(buckets, replies[:len(buckets)], strict=True)]
        stale = [b for b, at in zip(buckets, read_at, strict=True)
                 if at[0] and self._buckets.get(b, ((-1, -1), {}))[0] != at]
        pipe = self.client.pipeline(transaction=False)
        for partition, hour in stale:
            pipe.hkeys(self.hands.doc(partition, hands_doc(hour)))
        wanted: list[tuple[tuple[int, int], tuple[int, int], list[bytes]]] = []
        for bucket, fields in zip(stale, pipe.execute(), strict=True):
            held = self._buckets.get(bucket, ((0, 0), {}))[1]
            fresh = [bytes(f) for f in fields if bytes(f) not in held and _after(bytes(f), cursor)]
            wanted.append((bucket, (len(fields), archived[bucket[0]]), fresh))
        pipe = self.client.pipeline(transaction=False)
        for (partition, hour), _, fresh in wanted:
            if fresh:
                pipe.hmget(self.hands.doc(partition, hands_doc(hour)), fresh)
        found = iter(pipe.execute())
        for bucket, seen, fresh in wanted:
            held = self._buckets.get(bucket, ((0, 0), {}))[1]
            if fresh:
                held.update((f, decode_hand(v)) for f, v in zip(fresh, next(found), strict=True) if v is not None)
            self._buckets[bucket] = (seen, held)
        if cursor is not None:
            for old in [b for b in self._buckets if b[1] < cursor[0] // HOUR_MS]:
                del self._buckets[old]  # buckets the cursor has left behind are never read again
            for _, held in self._buckets.values():  # nor the hands it has passed
                for field in [f for f, hand in held.items() if hand.key() <= cursor]:
                    del held[field]
        backlog = [hand for bucket in buckets for hand in self._buckets.get(bucket, ((0, 0), {}))[1].values()]
        ready = {hand.key(): hand for hand in (*self.archived, *backlog)
                 if hand.at_ms <= upto and (cursor is None or hand.key() > cursor)}
        return [ready[key] for key in sorted(ready)][:self.batch]

    def step(self) -> int:
        """Apply what the watermark lets through; answers the hands applied."""
        upto = watermark(self.client, self.space)
        if upto < 0:
            return 0
        ready = self.pending(upto)
        if not ready:
            return 0
        ratings = self._restored(ready)
        for hand in ready:
            ratings.apply(hand)
        if not self._store(ratings.flush()):
            return 0
        self.applied += len(ready)
        if self.seen is not None:
            self.seen.update(hand.key() for hand in ready)
        return len(ready)

    def _restored(self, hands: Sequence[RatedHand]) -> Ratings:
        ratings = Ratings()
        wanted, reputations = ratings.needs(hands)
        ordered = sorted(wanted)
        pipe = self.client.pipeline(transaction=False)
        for rules, player in ordered:
            pipe.hget(self.keys.ratings(rules), player)
        for player in sorted(reputations):
            pipe.hget(self.keys.reputation, player)
        pipe.get(self.keys.cursor)
        replies = pipe.execute()
        for (rules, player), stored in zip(ordered, replies, strict=False):
            ratings.restore_rating(rules, player, stored)
        for player, stored in zip(sorted(reputations), replies[len(ordered):], strict=False):
            ratings.restore_reputation(player, stored)
        ratings.cursor = decode_cursor(replies[-1])
        return ratings

    def _store(self, docs: RatingsDocs) -> bool:
        """Write the changes if the lease is still ours (``WATCH``: all or nothing)."""
        with self.client.pipeline(transaction=True) as pipe:
            try:
                pipe.watch(self.keys.lease)
                holder = pipe.get(self.keys.lease)
                if holder is None or holder.decode() != self.token:
                    pipe.unwatch()
                    log.warning("ratings lease lost: nothing written", rater=self.token)
                    return False
                pipe.multi()
                for (rules, player), data in docs.ratings.items():
                    pipe.hset(self.keys.ratings(rules), player, data)
                    if (rules, player) in docs.ordinals:  # not an edge pseudo-player
                        pipe.zadd(self.keys.board(rules), {player: docs.ordinals[(rules, player)]})
                    pipe.sadd(self.keys.rules, rules)
                for player, data in docs.reputations.items():
                    pipe.hset(self.keys.reputation, player, data)
                if docs.cursor is not None:
                    pipe.set(self.keys.cursor, docs.cursor)
                pipe.execute()
                return True
            except redis.WatchError:
                log.warning("ratings lease moved while writing: nothing written", rater=self.token)
                return False


def _after(field: bytes, cursor: tuple[int, str, int] | None) -> bool:
    """Whether the hand stored under ``field`` (``hand_field``: at_ms:table:hand_no) comes
    after the cursor; a field of another shape is fetched, for the decoder to judge."""
    if cursor is None:
        return True
    try:
        key = hand_key_of_field(field.decode())
    except UnicodeDecodeError:
        return True
    return key is None or key > cursor


def global_keys(client: Any, space: KeySpace) -> list[str]:
    """Every key of the ratings over all partitions but the lease."""
    keys = RatingsKeys(space)
    rules = sorted(r.decode() for r in client.smembers(keys.rules))
    return [keys.cursor, keys.reputation, keys.rules, *(keys.ratings(r) for r in rules),
            *(keys.board(r) for r in rules)]


def dump(client: Any, space: KeySpace) -> dict[str, Any]:
    """The ratings as stored, every key's whole content (to compare, byte for byte)."""
    out: dict[str, Any] = {}
    keys = RatingsKeys(space)
    for key in global_keys(client, space):
        kind = client.type(key).decode()
        if kind == "hash":
            out[key] = dict(sorted(client.hgetall(key).items()))
        elif kind == "zset":
            out[key] = client.zrange(key, 0, -1, withscores=True)
        elif kind == "set":
            out[key] = sorted(client.smembers(key))
        elif kind == "string":
            out[key] = client.get(key)
    del keys
    return out


def hands_rated(client: Any, space: KeySpace, docs: Sequence[DocKey]) -> bool:
    """Whether the rater's cursor is at or past every hand of ``docs`` (a table's records,
    ``hand_docs``): the rater has taken them all, in order (a hand stamped before one it
    had applied, after a clock went back, is passed over: docs/ratings.md, "Order, and the
    worker"). The archive deletes a table's records only then; a record whose key cannot
    be read counts as not passed."""
    keys = [None if doc.field is None else hand_key_of_field(doc.field) for doc in docs]
    if not keys:
        return True
    if None in keys:
        return False
    cursor = decode_cursor(client.get(RatingsKeys(space).cursor))
    return cursor is not None and max(k for k in keys if k is not None) <= cursor


class ArchivedTables(Protocol):
    """What a re-rating reads archived tables by (``ArchivedEventStore``)."""

    def archived_ids(self, partition: int) -> list[str]: ...

    def read(self, table_id: str, after_version: int = 0, to_version: int | None = None) -> list[StoredEvent]: ...


def archived_tables(events: ArchivedTables | None, space: KeySpace) -> frozenset[str]:
    """The archived tables now (their index entries; none without the archive's store)."""
    if events is None:
        return frozenset()
    return frozenset(t for partition in range(space.partitions) for t in events.archived_ids(partition))


def archived_hands(events: ArchivedTables | None, tables: Iterable[str]) -> list[RatedHand]:
    """The hands of archived ``tables``, folded from their archived events as the kind
    folds them (their records left Redis with them: docs/ratings.md, "Archived tables")."""
    if events is None:
        return []
    return [hand for table_id in sorted(tables) for hand in stored_table_hands(table_id, events.read(table_id))]


def stored_table_hands(table_id: str, stored: Iterable[StoredEvent]) -> list[RatedHand]:
    """The hands a table's stored events end, as the kind folds them (``table_hands``)."""
    return table_hands(table_id, ((e.version, decode_event(e.data), e.at_ms) for e in stored))


class RatingsRebuildFailed(RuntimeError):
    """A re-rating that could not apply every hand: the live rater goes on from the
    buckets; run it again (with the archive worker stopped if tables kept moving)."""


def rebuild_ratings(client: Any, space: KeySpace, *, timeout_s: float = 60.0,
                    events: ArchivedTables | None = None, attempts: int = 3) -> int:
    """The ratings recomputed from nothing, after the kind's partitions were rebuilt
    from the streams: take the lease from any live rater, delete the ratings, and apply
    every hand up to the watermark in key order with the very code the live rater runs:
    the partitions' hands and the archived tables' (read through ``events`` first, before
    anything is deleted). Answers the hands applied.

    With the cursor deleted, the archive holds back every table with hands not yet
    applied again (it waits for the rater). A table it archived all the same (it checked
    the cursor before it was deleted, or the re-rating passed its hands), found archived
    at the end with a hand this re-rating did not apply, makes it start over with that
    table's hands read. Raises ``RatingsRebuildFailed`` when the lease was taken, an
    archived hand stayed unapplied (the watermark holds it), or tables kept moving."""
    tables = archived_tables(events, space)
    archived = archived_hands(events, tables)
    for _ in range(attempts):
        rater = Rater(client, space, token=f"rebuild-{secrets.token_hex(6)}", lease_ms=60_000, batch=1 << 30)
        rater.archived = sorted(archived, key=RatedHand.key)
        rater.seen = set()
        client.set(rater.keys.lease, rater.token, px=rater.lease_ms)
        try:
            client.delete(*global_keys(client, space))
            deadline = time.monotonic() + timeout_s
            total = 0
            while True:
                if not rater.hold():
                    raise RatingsRebuildFailed("the ratings lease was taken during the rebuild: run it again")
                applied = rater.step()
                total += applied
                if not applied or time.monotonic() > deadline:
                    break
            if not rater.hold():
                raise RatingsRebuildFailed("the ratings lease was taken during the rebuild: run it again")
        finally:
            rater.release()
        missed = [hand for hand in archived if hand.key() not in rater.seen]
        if missed:
            raise RatingsRebuildFailed(f"{len(missed)} hands of archived tables were not applied (the first "
                                       f"{missed[0].table_id} hand {missed[0].hand_no}): the watermark holds them")
        later = archived_tables(events, space) - tables
        moved = archived_hands(events, later)
        if all(hand.key() in rater.seen for hand in moved):
            return total
        tables, archived = tables | later, archived + moved
    raise RatingsRebuildFailed("tables kept being archived with hands the rebuild had not applied: stop the "
                               "archive worker and rebuild the ratings again")


def stored_hands(client: Any, space: KeySpace) -> list[RatedHand]:
    """Every hand the partitions hold (their ``ratings:hours`` and hour buckets)."""
    keys = ProjectionKeys(space, KIND)
    pipe = client.pipeline(transaction=False)
    for partition in range(space.partitions):
        pipe.hkeys(keys.doc(partition, HOURS_DOC))
    buckets = [(p, int(h)) for p, hours in enumerate(pipe.execute()) for h in hours]
    pipe = client.pipeline(transaction=False)
    for partition, hour in buckets:
        pipe.hvals(keys.doc(partition, hands_doc(hour)))
    return [decode_hand(data) for values in pipe.execute() for data in values]


def check_ratings(client: Any, space: KeySpace, events: ArchivedTables | None = None) -> list[str]:
    """The stored ratings against the partitions' hands and the archived tables' (read
    through ``events``) folded from nothing up to the stored cursor: the keys (``key``
    or ``key field``) whose bytes differ. The buckets are read before the archived
    tables, so a table archived meanwhile is in one or the other (once: by its key)."""
    keys = RatingsKeys(space)
    cursor = decode_cursor(client.get(keys.cursor))
    every = {h.key(): h for h in stored_hands(client, space)}
    every.update((h.key(), h) for h in archived_hands(events, archived_tables(events, space)))
    ratings = rate_all(h for h in every.values() if cursor is not None and h.key() <= cursor)
    docs = ratings.flush()
    expected: dict[str, Any] = {}
    for (rules, player), data in docs.ratings.items():
        expected[f"{keys.ratings(rules)} {player}"] = data
        if (rules, player) in docs.ordinals:
            expected[f"{keys.board(rules)} {player}"] = docs.ordinals[(rules, player)]
    for player, data in docs.reputations.items():
        expected[f"{keys.reputation} {player}"] = data
    stored: dict[str, Any] = {}
    for rules in sorted(r.decode() for r in client.smembers(keys.rules)):
        for player, data in client.hgetall(keys.ratings(rules)).items():
            stored[f"{keys.ratings(rules)} {player.decode()}"] = bytes(data)
        for player, score in client.zrange(keys.board(rules), 0, -1, withscores=True):
            stored[f"{keys.board(rules)} {player.decode()}"] = float(score)
    for player, data in client.hgetall(keys.reputation).items():
        stored[f"{keys.reputation} {player.decode()}"] = bytes(data)
    return sorted(k for k in expected.keys() | stored.keys() if not _same(stored.get(k), expected.get(k)))


def _same(stored: Any, expected: Any) -> bool:
    """A stored document (or board score) is the expected one: the same bytes, or the same
    document stored as JSON by an earlier release (projections/docs.py)."""
    if isinstance(stored, bytes) and isinstance(expected, bytes):
        return same_document(stored, expected)
    return bool(stored == expected)
