"""Command handling: load, decide, append with the expected version, retry on conflict.

The hot path is one round trip: decide on the cached state, append with the cached
version. The cache may be stale (another process appended): the store then answers
``VersionConflict`` and the handler catches up from the stream and decides again. A
refusal decided on a cached state is only believed after a catch-up shows the state was
current, so a stale cache never refuses a legal command.
"""

from __future__ import annotations

import hashlib
import random
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Generic, Protocol, TypeVar

import msgspec
import structlog

from domain.errors import MightyError
from services.store.base import EMPTY_HEAD, EventStore, Head, StoredEvent, verify_chain
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



class Decider(Protocol[S, C_contra, E]):
    """One game's rules as the handler needs them (DESIGN.md §2), plus the event codec."""

    def initial_state(self, table_id: str) -> S: ...

    def decide(self, state: S, command: C_contra) -> Sequence[E]:
        """The events the command causes; raises a ``MightyError`` to refuse it."""
        ...

    def evolve(self, state: S, event: E) -> S: ...

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


class _Snapshot(msgspec.Struct, Generic[S], frozen=True):
    state: S
    head: Head


class _Outcome(msgspec.Struct, frozen=True):
    """Stored per command id: which versions its events got, and a fingerprint of the
    command (absent in outcomes stored before it was recorded)."""

    first: int
    last: int
    command: str | None = None


_decode_outcome = msgspec.json.Decoder(_Outcome).decode
_encode_command = msgspec.json.Encoder().encode


def _fingerprint(command: object) -> str:
    """What one command id must always name: the command with its sender, hashed."""
    try:
        data = _encode_command(command)
    except (TypeError, msgspec.EncodeError):
        data = repr(command).encode()
    return hashlib.sha256(data).hexdigest()[:32]


def _inner(command: object) -> object:
    """The command itself when it comes wrapped with its sender (``Submission``)."""
    return getattr(command, "command", command)


class CommandHandler(Generic[S, C, E]):
    def __init__(
        self,
        store: EventStore,
        decider: Decider[S, C, E],
        *,
        cache_size: int = 10_000,
        max_attempts: int = 8,
    ) -> None:
        self.store = store
        self.decider = decider
        self.max_attempts = max_attempts
        self._cache: OrderedDict[str, _Snapshot[S]] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self._bound_log: Any = None

    def handle(self, table_id: str, command: C, *, command_id: str) -> CommandResult[E]:
        """Decide and append ``command``; raise the refusal or store error, never write it."""
        started = time.perf_counter()
        outcome = "ok"
        try:
            result = self._handle(table_id, command, command_id)
            outcome = "duplicate" if result.duplicate else "ok"
            return result
        except VersionConflict:
            outcome = "conflict"
            raise
        except StoreUnavailable:
            outcome = "unavailable"
            raise
        except MightyError as error:
            outcome = f"refused:{error.code}"
            raise
        finally:
            inner = _inner(command)
            self._log().info(
                "command",
                table=table_id,
                seat=getattr(inner, "seat", None),
                command=type(inner).__name__,
                outcome=outcome,
                latency_ms=round((time.perf_counter() - started) * 1000, 3),
            )

    def _log(self) -> Any:
        """This handler's logger, bound when it first logs: to the logging setup in force
        then (not to that of an earlier handler), and without the lazy proxy's lookup on
        every command."""
        if self._bound_log is None:
            self._bound_log = structlog.get_logger("mighty.store").bind()
        return self._bound_log

    def state_of(self, table_id: str) -> tuple[S, int]:
        """The table's current state and version, caught up from the store."""
        snapshot = self._catch_up(table_id, self._cached(table_id))
        return snapshot.state, snapshot.head.version

    def cached(self, table_id: str) -> tuple[S, int] | None:
        """The cached state and version, with no I/O (may be behind the store)."""
        snapshot = self._cached_or_none(table_id)
        return None if snapshot is None else (snapshot.state, snapshot.head.version)

    def _handle(self, table_id: str, command: C, command_id: str) -> CommandResult[E]:
        check_table_id(table_id)
        check_command_id(command_id)
        cached = self._cached_or_none(table_id)
        snapshot = cached if cached is not None else self._catch_up(table_id, self._empty(table_id))
        current = cached is None
        for attempt in range(self.max_attempts):
            try:
                events = self.decider.decide(snapshot.state, command)
            except MightyError as refusal:
                if not current:
                    snapshot, current = self._catch_up(table_id, snapshot), True
                    continue
                return self._duplicate_or_raise(table_id, command, command_id, refusal)
            try:
                return self._append(table_id, snapshot, command, events, command_id)
            except ChainMismatch:
                # The table is at the cached version with another head: the store lost
                # what this process saw and took other events since. Start over from it.
                self._forget(table_id)
                if attempt + 1 == self.max_attempts:
                    raise
                snapshot, current = self._reload(table_id, snapshot, "store diverged from cache"), True
            except VersionConflict as conflict:
                if attempt + 1 == self.max_attempts:
                    raise
                time.sleep(random.uniform(0, 0.001 * (attempt + 1)))
                snapshot, current = self._after_conflict(table_id, snapshot, conflict), True
        raise VersionConflict(snapshot.head.version, self.store.head(table_id).version)

    def _after_conflict(
        self, table_id: str, snapshot: _Snapshot[S], conflict: VersionConflict
    ) -> _Snapshot[S]:
        if conflict.actual >= snapshot.head.version:
            return self._catch_up(table_id, snapshot)
        # The store is behind what this process saw: writes were lost (a failover to a
        # replica that lagged, a restore). Start over from what the store holds now.
        return self._reload(table_id, snapshot, "store behind cache", stored=conflict.actual)

    def _reload(self, table_id: str, snapshot: _Snapshot[S], why: str, **details: int) -> _Snapshot[S]:
        self._log().warning(why, table=table_id, cached=snapshot.head.version, **details)
        self._forget(table_id)
        return self._catch_up(table_id, self._empty(table_id))

    def _append(
        self, table_id: str, snapshot: _Snapshot[S], command: C, events: Sequence[E], command_id: str
    ) -> CommandResult[E]:
        if not events:
            return CommandResult(table_id, snapshot.head.version, ())
        version = snapshot.head.version
        fingerprint = _fingerprint(command)
        outcome = b'{"first":%d,"last":%d,"command":"%s"}' % (
            version + 1, version + len(events), fingerprint.encode()
        )
        data = [self.decider.encode_event(event) for event in events]
        appended = self.store.append(
            table_id, data, expected=snapshot.head, command_id=command_id, outcome=outcome
        )
        if appended.duplicate:
            first = self._outcome(appended.outcome)
            if first.command not in (None, fingerprint):
                raise CommandIdReused(
                    f"command id {command_id} was used for another command; send this one with a new id"
                )
            return self._replay(table_id, first)
        state = snapshot.state
        for event in events:
            state = self.decider.evolve(state, event)
        self._remember(table_id, _Snapshot(state, appended.head))
        return CommandResult(table_id, appended.head.version, tuple(events))

    def _duplicate_or_raise(
        self, table_id: str, command: C, command_id: str, refusal: MightyError
    ) -> CommandResult[E]:
        """A refusal on a current state stands, unless this command already appended under
        this id: a retried command is answered with its first outcome, not refused by its
        own effect. An id first used for another command does not answer for this one."""
        stored = self.store.outcome_of(table_id, command_id)
        if stored is None:
            raise refusal
        first = self._outcome(stored)
        if first.command not in (None, _fingerprint(command)):
            raise refusal
        return self._replay(table_id, first)

    @staticmethod
    def _outcome(stored: bytes) -> _Outcome:
        try:
            return _decode_outcome(stored)
        except (msgspec.ValidationError, msgspec.DecodeError) as error:
            raise StoreCorrupt(f"a stored outcome is not readable: {error}") from error

    def _replay(self, table_id: str, outcome: _Outcome) -> CommandResult[E]:
        events = self.store.read(table_id, outcome.first - 1, outcome.last)
        decoded = tuple(self.decider.decode_event(event.data) for event in events)
        return CommandResult(table_id, outcome.last, decoded, duplicate=True)

    def _catch_up(self, table_id: str, snapshot: _Snapshot[S]) -> _Snapshot[S]:
        stored = self.store.read(table_id, snapshot.head.version)
        if not stored:
            return snapshot
        try:
            head = verify_chain(snapshot.head, stored)
        except StoreCorrupt:
            if snapshot.head.version == 0:
                raise  # the stream itself is broken
            # What follows does not continue the cached head: the store lost events this
            # process saw, then took others. Only a chain broken from the start is corrupt.
            return self._reload(table_id, snapshot, "store diverged from cache")
        state = self._fold(snapshot.state, stored)
        caught_up = _Snapshot(state, head)
        self._remember(table_id, caught_up)
        return caught_up

    def _fold(self, state: S, stored: list[StoredEvent]) -> S:
        for event in stored:
            state = self.decider.evolve(state, self.decider.decode_event(event.data))
        return state

    def _empty(self, table_id: str) -> _Snapshot[S]:
        return _Snapshot(self.decider.initial_state(table_id), EMPTY_HEAD)

    def _cached(self, table_id: str) -> _Snapshot[S]:
        cached = self._cached_or_none(check_table_id(table_id))
        return cached if cached is not None else self._empty(table_id)

    def _cached_or_none(self, table_id: str) -> _Snapshot[S] | None:
        with self._lock:
            snapshot = self._cache.get(table_id)
            if snapshot is not None:
                self._cache.move_to_end(table_id)
            return snapshot

    def _forget(self, table_id: str) -> None:
        with self._lock:
            self._cache.pop(table_id, None)

    def _remember(self, table_id: str, snapshot: _Snapshot[S]) -> None:
        with self._lock:
            known = self._cache.get(table_id)
            if known is not None and known.head.version >= snapshot.head.version:
                return
            self._cache[table_id] = snapshot
            self._cache.move_to_end(table_id)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
