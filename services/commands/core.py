"""The command path with no I/O: load, decide, append, retry, as a generator of requests.

``CommandCore.handle`` is a generator. It yields what it needs done, a ``Read`` ("the
table's events after version V"), an ``Append`` ("these events, expecting head H"), an
``OutcomeOf``, a ``ReadHead``, a ``Sleep`` (a back-off, its length decided here) or a
``Warn`` (a line for the log), and is sent each answer; a store error is thrown into it
at the ``yield`` that asked. It returns the ``CommandResult`` or raises the refusal.
The shells (``CommandHandler``, sync; ``AsyncCommandHandler``, asyncio) only carry
requests to a store and answers back, so the two cannot drift apart.

The hot path is one request: decide on the cached state, append with the cached version.
The cache may be stale (another process appended): the store then answers
``VersionConflict`` and the core catches up from the stream and decides again. A refusal
decided on a cached state is only believed after a catch-up shows the state was current,
so a stale cache never refuses a legal command.
"""

from __future__ import annotations

import hashlib
import random
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Generator, Sequence
from typing import Any, Final, Generic, Protocol, TypeVar

import msgspec

from domain.errors import MightyError
from services.store.base import EMPTY_HEAD, Appended, Head, StoredEvent, verify_chain
from services.store.errors import (
    ChainMismatch,
    CommandIdReused,
    StoreCorrupt,
    StoreUnavailable,
    VersionConflict,
)
from services.store.keys import check_command_id, check_table_id

S = TypeVar("S")
E = TypeVar("E")
C = TypeVar("C")
C_contra = TypeVar("C_contra", contravariant=True)
R = TypeVar("R")

BACKOFF_STEP_S: Final = 0.001  # attempt n after a conflict waits up to n ms (jittered)
CLOSED_CACHE_SIZE: Final = 256  # closed tables' last states a command handler keeps
CACHE_IDLE_S: Final = 120.0  # a cached table not used this long is dropped (read again when asked for)


class Decider(Protocol[S, C_contra, E]):
    """One game's rules as the handler needs them (docs/architecture.md, "Layers"), plus the event codec."""

    def initial_state(self, table_id: str) -> S: ...

    def decide(self, state: S, command: C_contra) -> Sequence[E]:
        """The events the command causes; raises a ``MightyError`` to refuse it."""
        ...

    def evolve(self, state: S, event: E) -> S: ...

    def is_closed(self, state: S) -> bool:
        """Whether the state is final: its table takes no more commands (closed)."""
        ...

    def encode_event(self, event: E) -> bytes: ...

    def decode_event(self, data: bytes) -> E: ...


class CommandResult(msgspec.Struct, Generic[E], frozen=True):
    """What a command did: the table's version after it and the events it appended.

    ``duplicate`` says the command id had already been handled: the version and events
    are those of that first time, and nothing was written now.
    """

    table_id: str
    version: int
    events: tuple[E, ...]
    duplicate: bool = False


# The requests the core yields. Plain slotted classes: built once or twice per command.


class Read:
    """Answer with ``store.read(table_id, after_version, to_version)``."""

    __slots__ = ("table_id", "after_version", "to_version")

    def __init__(self, table_id: str, after_version: int, to_version: int | None = None) -> None:
        self.table_id = table_id
        self.after_version = after_version
        self.to_version = to_version


class Append:
    """Answer with ``store.append(...)``; a refusal of the store is thrown back in.

    It also carries what the core needs once the answer comes (``CommandCore.finish``):
    the snapshot decided on, the decided events and the command's fingerprint."""

    __slots__ = ("table_id", "events", "expected", "command_id", "outcome",
                 "snapshot", "decided", "mark", "command")

    def __init__(
        self, table_id: str, events: list[bytes], expected: Head, command_id: str, outcome: bytes
    ) -> None:
        self.table_id = table_id
        self.events = events
        self.expected = expected
        self.command_id = command_id
        self.outcome = outcome
        self.snapshot: Snapshot[Any] | None = None
        self.decided: Sequence[Any] = ()
        self.mark = ""
        self.command: Any = None


class OutcomeOf:
    """Answer with ``store.outcome_of(table_id, command_id)``."""

    __slots__ = ("table_id", "command_id")

    def __init__(self, table_id: str, command_id: str) -> None:
        self.table_id = table_id
        self.command_id = command_id


class ReadHead:
    """Answer with ``store.head(table_id)``."""

    __slots__ = ("table_id",)

    def __init__(self, table_id: str) -> None:
        self.table_id = table_id


class Sleep:
    """Wait ``seconds`` (a back-off after a conflict), then answer None."""

    __slots__ = ("seconds",)

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds


class Warn:
    """Log ``event`` at warning level with ``fields``, then answer None."""

    __slots__ = ("event", "fields")

    def __init__(self, event: str, fields: dict[str, Any]) -> None:
        self.event = event
        self.fields = fields


Request = Read | Append | OutcomeOf | ReadHead | Sleep | Warn
Steps = Generator[Request, Any, R]


class Snapshot(msgspec.Struct, Generic[S], frozen=True):
    state: S
    head: Head


class _Outcome(msgspec.Struct, frozen=True):
    """Stored per command id: which versions its events got, and a fingerprint of the
    command (absent in outcomes stored before it was recorded)."""

    first: int
    last: int
    command: str | None = None


class _PackedOutcome(msgspec.Struct, frozen=True, array_like=True):
    """An outcome as stored since 2026-12-05: a MessagePack array of the first and last
    versions and the fingerprint's bytes (8 since 2026-12-06, 16 before), about 14 bytes
    where the JSON object took 63 (docs/store.md, "Idempotency"); outcomes stored before
    are JSON objects, read as they were."""

    first: int
    last: int
    command: bytes


_decode_outcome = msgspec.json.Decoder(_Outcome).decode
_decode_packed_outcome = msgspec.msgpack.Decoder(_PackedOutcome).decode
_encode_packed_outcome = msgspec.msgpack.Encoder().encode
_encode_command = msgspec.json.Encoder().encode
# copied, not made anew: hashlib.sha256() looks the digest up in OpenSSL 3's method
# store each time, which showed in the async path's profile (cold caches between tasks)
_SHA256: Final = hashlib.sha256()


# A fingerprint's hex digits: 16 (64 bits) since 2026-12-06, 32 before. It tells a command
# id sent again with another command, by mistake: a client that wanted to pass one command
# off as another would need a second preimage of a 64-bit truncated sha256 (2^64 tries).
FINGERPRINT_DIGITS: Final = 16


def fingerprint(command: object) -> str:
    """What one command id must always name: the command with its sender, hashed (the
    first ``FINGERPRINT_DIGITS`` hex digits of its sha256; an older, longer one starts
    with these: ``same_command``)."""
    try:
        data = _encode_command(command)
    except (TypeError, msgspec.EncodeError):
        data = repr(command).encode()
    digest = _SHA256.copy()
    digest.update(data)
    return digest.hexdigest()[:FINGERPRINT_DIGITS]


def same_command(stored: str | None, mark: str) -> bool:
    """Whether an outcome's fingerprint (None: stored before fingerprints were) names the
    command whose fingerprint is ``mark``: a longer one, stored before 2026-12-06, by its
    first digits."""
    return stored is None or stored[:len(mark)] == mark


def inner(command: object) -> object:
    """The command itself when it comes wrapped with its sender (``Submission``)."""
    return getattr(command, "command", command)


def outcome_label(error: BaseException | None, result: CommandResult[Any] | None) -> str:
    """The ``outcome`` field of a command's log line."""
    if error is None:
        return "duplicate" if result is not None and result.duplicate else "ok"
    if isinstance(error, VersionConflict):
        return "conflict"
    if isinstance(error, StoreUnavailable):
        return "unavailable"
    if isinstance(error, MightyError):
        return f"refused:{error.code}"
    return f"error:{type(error).__name__}"


class SnapshotCache(Generic[S]):
    """The most recently used tables' snapshots, bounded: up to ``size`` tables in play
    and, apart, up to ``closed_size`` closed tables (their last state, for the reads and
    refusals that still come), so that tables that have ended neither crowd the ones in
    play out nor make a long-running process grow by a state for each table it saw end.
    A table not used for ``idle_s`` is dropped too: other processes may have moved it on
    meanwhile (a gateway's table is most often closed by the bot worker's last move, so
    the gateway's own copy would stay "in play" until 10,000 others pushed it out), and
    reading it again costs one read. The lock makes each operation atomic for the
    threaded sync shell; uncontended (asyncio) it costs ~50 ns."""

    def __init__(self, size: int, closed_size: int = CLOSED_CACHE_SIZE, *, idle_s: float = CACHE_IDLE_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.size = size
        self.closed_size = closed_size
        self.idle_s = idle_s
        self._clock = clock
        # table -> its snapshot and when it was last used, least recently used first
        self._items: OrderedDict[str, tuple[Snapshot[S], float]] = OrderedDict()  # tables in play
        self._closed: OrderedDict[str, tuple[Snapshot[S], float]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items) + len(self._closed)

    @property
    def closed(self) -> int:
        """How many of the cached tables are closed."""
        return len(self._closed)

    def get(self, table_id: str) -> Snapshot[S] | None:
        now = self._clock()
        with self._lock:
            self._drop_idle(now)
            for items in (self._items, self._closed):
                found = items.get(table_id)
                if found is not None:
                    items[table_id] = (found[0], now)
                    items.move_to_end(table_id)
                    return found[0]
            return None

    def forget(self, table_id: str) -> None:
        with self._lock:
            self._items.pop(table_id, None)
            self._closed.pop(table_id, None)

    def remember(self, table_id: str, snapshot: Snapshot[S], closed: bool = False) -> None:
        """Keep ``snapshot`` unless a newer one is known (another command got further);
        ``closed``: the table is closed, kept with the closed ones."""
        now = self._clock()
        with self._lock:
            self._drop_idle(now)
            known = self._items.get(table_id) or self._closed.get(table_id)
            if known is not None and known[0].head.version >= snapshot.head.version:
                return
            # a table read again after a rollback may be in play again: in one place only
            (self._items if closed else self._closed).pop(table_id, None)
            items, size = (self._closed, self.closed_size) if closed else (self._items, self.size)
            items[table_id] = (snapshot, now)
            items.move_to_end(table_id)
            while len(items) > size:
                items.popitem(last=False)

    def _drop_idle(self, now: float) -> None:
        """Drop the tables not used for ``idle_s`` (the least recently used come first)."""
        since = now - self.idle_s
        for items in (self._items, self._closed):
            while items:
                _, used = items[next(iter(items))]
                if used >= since:
                    break
                items.popitem(last=False)


class CommandCore(Generic[S, C, E]):
    """Every decision of the command path; the shells perform its requests.

    ``jitter`` is the random source of the back-off (uniform in [0, 1)); tests pass a
    seeded one to pin the waits.
    """

    def __init__(
        self,
        decider: Decider[S, C, E],
        *,
        cache_size: int = 10_000,
        closed_cache_size: int = CLOSED_CACHE_SIZE,
        max_attempts: int = 8,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self.decider = decider
        self.max_attempts = max_attempts
        self.cache: SnapshotCache[S] = SnapshotCache(cache_size, closed_cache_size)
        self._jitter = jitter
        # Tables found holding less than this process saw (a rollback: writes lost to a
        # power cut under everysec, a failover): each counted, and warned of, once, as
        # the cache is read again from the store (docs/reliability.md, "Rollback").
        self.rollbacks = 0

    def cached(self, table_id: str) -> tuple[S, int] | None:
        """The cached state and version, with no I/O (may be behind the store)."""
        snapshot = self.cache.get(check_table_id(table_id))
        return None if snapshot is None else (snapshot.state, snapshot.head.version)

    def state_of(self, table_id: str) -> Steps[tuple[S, int]]:
        """The table's current state and version, caught up from the store. A cached
        state the store has nothing newer for is checked against the store's head: the
        store may hold less than this process saw (``_unless_behind``)."""
        cached = self.cache.get(check_table_id(table_id))
        snapshot = yield from self._catch_up(table_id, cached or self._empty(table_id))
        if cached is not None and snapshot is cached:
            snapshot = yield from self._unless_behind(table_id, snapshot)
        return snapshot.state, snapshot.head.version

    def _unless_behind(self, table_id: str, snapshot: Snapshot[S]) -> Steps[Snapshot[S]]:
        """``snapshot``, unless the store's head is behind it or elsewhere at its version:
        writes this process saw were lost since (a failover to a replica that did not
        have them, a Redis restarted on an AOF without its last second, a primary that
        ran commands after it had been replaced). Then the table is read again from
        the store: a state, a refusal or a view is never given from lost writes."""
        head: Head = yield ReadHead(table_id)
        if head.version > snapshot.head.version or head == snapshot.head:
            return snapshot  # newer (a read will catch up), or the same
        return (yield from self._reload(table_id, snapshot, "store behind cache", stored=head.version))

    def handle(self, table_id: str, command: C, command_id: str) -> Steps[CommandResult[E]]:
        """Decide and append ``command``; raise the refusal or store error, never write it."""
        check_table_id(table_id)
        check_command_id(command_id)
        cached = self.cache.get(table_id)
        if cached is None:
            snapshot = yield from self._catch_up(table_id, self._empty(table_id))
        else:
            snapshot = cached
        return (yield from self._attempts(table_id, command, command_id, snapshot, cached is None, 0))

    # The hot path without a generator: what ``handle`` does for a cached table whose
    # command appends, in two plain calls around the one append, so the shells spend no
    # generator round trips on it. Anything else goes back to the generator.

    def start(self, table_id: str, command: C, command_id: str) -> Append | CommandResult[E] | None:
        """The one request of the hot path (no I/O): the ``Append`` of ``command`` decided
        on the cached state, or the result when it decides no events. None when the table
        is not cached or the rules refuse (a refusal on a cached state is only believed
        after a catch-up): then ``handle`` does it all, deciding again (the rules are pure)."""
        check_table_id(table_id)
        check_command_id(command_id)
        snapshot = self.cache.get(table_id)
        if snapshot is None:
            return None
        try:
            events = self.decider.decide(snapshot.state, command)
        except MightyError:
            return None
        if not events:
            return CommandResult(table_id, snapshot.head.version, ())
        return self._append_request(table_id, snapshot, command, events, command_id)

    def finish(self, request: Append, appended: Appended) -> CommandResult[E] | None:
        """The result of ``start``'s append, or None for a duplicate (then ``resume``)."""
        if appended.duplicate:
            return None
        assert request.snapshot is not None
        return self._appended(request.table_id, request.snapshot, request.decided, appended)

    def resume(
        self, request: Append, appended: Appended | None, error: Exception | None
    ) -> Steps[CommandResult[E]]:
        """``handle`` from the answer to ``start``'s append on: a duplicate (``appended``)
        or the store's refusal (``error``)."""
        assert request.snapshot is not None
        if error is None:
            assert appended is not None
            return (yield from self._first_result(request.table_id, request.command_id,
                                                  request.mark, appended))
        snapshot = yield from self._after_refused(request, error, 0)
        return (yield from self._attempts(
            request.table_id, request.command, request.command_id, snapshot, True, 1
        ))

    def _attempts(
        self, table_id: str, command: C, command_id: str, snapshot: Snapshot[S], current: bool,
        first: int,
    ) -> Steps[CommandResult[E]]:
        """Decide on ``snapshot`` and append, attempts ``first`` and on."""
        for attempt in range(first, self.max_attempts):
            try:
                events = self.decider.decide(snapshot.state, command)
            except MightyError as refusal:
                if not current:  # refused on the cached state: believed only once caught up
                    caught = yield from self._catch_up(table_id, snapshot)
                    if caught is snapshot:  # nothing newer: unless the store holds less than it
                        caught = yield from self._unless_behind(table_id, snapshot)
                    snapshot, current = caught, True
                    continue
                return (yield from self._duplicate_or_raise(table_id, command, command_id, refusal))
            if not events:
                return CommandResult(table_id, snapshot.head.version, ())
            request = self._append_request(table_id, snapshot, command, events, command_id)
            try:
                appended: Appended = yield request
            except (ChainMismatch, VersionConflict) as refused:
                snapshot = yield from self._after_refused(request, refused, attempt)
                current = True
            else:
                if appended.duplicate:
                    return (yield from self._first_result(table_id, command_id, request.mark,
                                                          appended))
                return self._appended(table_id, snapshot, events, appended)
        head: Head = yield ReadHead(table_id)
        raise VersionConflict(snapshot.head.version, head.version)

    def _after_refused(self, request: Append, error: Exception, attempt: int) -> Steps[Snapshot[S]]:
        """The snapshot to decide on again after the store refused attempt ``attempt``'s
        append; raises ``error`` when it is no conflict or the attempts are spent."""
        table_id = request.table_id
        snapshot: Snapshot[S] = request.snapshot  # type: ignore[assignment]
        if isinstance(error, ChainMismatch):
            # The table is at the cached version with another head: the store lost
            # what this process saw and took other events since. Start over from it.
            self.cache.forget(table_id)
            if attempt + 1 == self.max_attempts:
                raise error
            snapshot = yield from self._reload(table_id, snapshot, "store diverged from cache")
            return (yield from self._check_meta(table_id, snapshot))
        if not isinstance(error, VersionConflict) or attempt + 1 == self.max_attempts:
            raise error
        yield Sleep(self.backoff(attempt))
        return (yield from self._after_conflict(table_id, snapshot, error))

    def backoff(self, attempt: int) -> float:
        """How long to wait after the conflict of attempt ``attempt`` (0-based): jittered,
        so racing writers spread out, and growing, so a hot table is not hammered."""
        return self._jitter() * BACKOFF_STEP_S * (attempt + 1)

    def _after_conflict(
        self, table_id: str, snapshot: Snapshot[S], conflict: VersionConflict
    ) -> Steps[Snapshot[S]]:
        if conflict.actual >= snapshot.head.version:
            caught = yield from self._catch_up(table_id, snapshot)
            if caught.head.version < conflict.actual:  # the stream ends before its meta
                caught = yield from self._check_meta(table_id, caught)
            return caught
        # The store is behind what this process saw: writes were lost (a failover to a
        # replica that lagged, a restore). Start over from what the store holds now.
        reloaded = yield from self._reload(
            table_id, snapshot, "store behind cache", stored=conflict.actual
        )
        if reloaded.head.version > conflict.actual:  # the stream goes on past its meta
            reloaded = yield from self._check_meta(table_id, reloaded)
        return reloaded

    def _check_meta(self, table_id: str, snapshot: Snapshot[S]) -> Steps[Snapshot[S]]:
        """An append was refused against the stream's own end: the table's meta (the head
        every append is checked against) and its stream seem to disagree. Read both again,
        the meta on either side of the stream; if the stream still cannot end where the
        meta says, no retry could ever append (each would conflict for ever): the table is
        refused as corrupt, by name. A race cannot look like this (an append writes stream
        and meta in one script), so only a table edited behind the store's back does."""
        before: Head = yield ReadHead(table_id)
        reread = yield from self._catch_up(table_id, self._empty(table_id))
        after: Head = yield ReadHead(table_id)
        end = reread.head
        if end.version < before.version or end.version > after.version or (
            end.version == after.version and end.hash != after.hash
        ):
            self.cache.forget(table_id)
            raise StoreCorrupt(
                f"table {table_id} is corrupt: its meta says version {after.version} (head "
                f"{after.hash[:12]}), its stream ends at version {end.version} ({end.hash[:12]}); "
                f"see mighty verify {table_id}"
            )
        return reread

    def _reload(
        self, table_id: str, snapshot: Snapshot[S], why: str, **details: int
    ) -> Steps[Snapshot[S]]:
        self.rollbacks += 1
        yield Warn(why, {"table": table_id, "cached": snapshot.head.version, **details})
        self.cache.forget(table_id)
        return (yield from self._catch_up(table_id, self._empty(table_id)))

    def _append_request(
        self, table_id: str, snapshot: Snapshot[S], command: C, events: Sequence[E], command_id: str
    ) -> Append:
        """The append of ``events`` on ``snapshot``, with the command's fingerprint (stored
        in the outcome so a reused command id is told apart from a retry)."""
        version = snapshot.head.version
        mark = fingerprint(command)
        outcome = _encode_packed_outcome(_PackedOutcome(version + 1, version + len(events), bytes.fromhex(mark)))
        encode = self.decider.encode_event
        request = Append(table_id, [encode(event) for event in events], snapshot.head,
                         command_id, outcome)
        request.snapshot, request.decided, request.mark, request.command = (
            snapshot, events, mark, command
        )
        return request

    def _appended(
        self, table_id: str, snapshot: Snapshot[S], events: Sequence[E], appended: Appended
    ) -> CommandResult[E]:
        state = snapshot.state
        evolve = self.decider.evolve
        for event in events:
            state = evolve(state, event)
        self.cache.remember(table_id, Snapshot(state, appended.head), self.decider.is_closed(state))
        return CommandResult(table_id, appended.head.version, tuple(events))

    def _first_result(
        self, table_id: str, command_id: str, mark: str, appended: Appended
    ) -> Steps[CommandResult[E]]:
        """The store had this command id: the first result, if it was this command."""
        first = _outcome(appended.outcome)
        if not same_command(first.command, mark):
            raise CommandIdReused(
                f"command id {command_id} was used for another command; send this one with a new id"
            )
        return (yield from self._replay(table_id, first))

    def _duplicate_or_raise(
        self, table_id: str, command: C, command_id: str, refusal: MightyError
    ) -> Steps[CommandResult[E]]:
        """A refusal on a current state stands, unless this command already appended under
        this id: a retried command is answered with its first outcome, not refused by its
        own effect. An id first used for another command is refused ``command_id_reused``,
        as the append refuses it: which of the two looks first is a race."""
        stored: bytes | None = yield OutcomeOf(table_id, command_id)
        if stored is None:
            raise refusal
        first = _outcome(stored)
        if not same_command(first.command, fingerprint(command)):
            # answered as the append would answer it: the same code however the race went
            raise CommandIdReused(
                f"command id {command_id} was used for another command; send this one with a new id"
            ) from refusal
        return (yield from self._replay(table_id, first))

    def _replay(self, table_id: str, outcome: _Outcome) -> Steps[CommandResult[E]]:
        events: list[StoredEvent] = yield Read(table_id, outcome.first - 1, outcome.last)
        decoded = tuple(self.decider.decode_event(event.data) for event in events)
        return CommandResult(table_id, outcome.last, decoded, duplicate=True)

    def _catch_up(self, table_id: str, snapshot: Snapshot[S]) -> Steps[Snapshot[S]]:
        stored: list[StoredEvent] = yield Read(table_id, snapshot.head.version)
        if not stored:
            return snapshot
        try:
            head = verify_chain(snapshot.head, stored)
        except StoreCorrupt as error:
            if snapshot.head.version == 0:  # the stream itself is broken
                raise StoreCorrupt(f"table {table_id} is corrupt: {error}") from error
            # What follows does not continue the cached head: the store lost events this
            # process saw, then took others. Only a chain broken from the start is corrupt.
            return (yield from self._reload(table_id, snapshot, "store diverged from cache"))
        state = snapshot.state
        decode, evolve = self.decider.decode_event, self.decider.evolve
        try:
            for event in stored:
                state = evolve(state, decode(event.data))
        except (msgspec.ValidationError, msgspec.DecodeError) as error:
            raise StoreCorrupt(f"table {table_id} is corrupt: an event does not decode: {error}") from error
        caught_up = Snapshot(state, head)
        self.cache.remember(table_id, caught_up, self.decider.is_closed(state))
        return caught_up

    def _empty(self, table_id: str) -> Snapshot[S]:
        return Snapshot(self.decider.initial_state(table_id), EMPTY_HEAD)


def _outcome(stored: bytes) -> _Outcome:
    try:
        if stored[:1] == b"{":  # stored before outcomes were packed
            return _decode_outcome(stored)
        packed = _decode_packed_outcome(stored)
        return _Outcome(packed.first, packed.last, packed.command.hex())
    except (msgspec.ValidationError, msgspec.DecodeError) as error:
        raise StoreCorrupt(f"a stored outcome is not readable: {error}") from error
