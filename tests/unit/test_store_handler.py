"""The command handler with the counter decider: both shells (sync ``CommandHandler``
and ``AsyncCommandHandler``), on the in-memory twins and on fakeredis.

The async shell runs the very same test bodies behind ``SyncHandler``, which runs each
call to completion on the test's event loop (as ``SyncOverAsync`` does for its store).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from typing import Any

import fakeredis
import pytest
import structlog
from structlog.testing import capture_logs

from domain.errors import MalformedCommand, NotYourTurn, TableError
from services.commands.handler import AsyncCommandHandler, CommandHandler, CommandResult
from services.store import (
    AsyncRedisEventStore,
    BadTableId,
    CommandIdReused,
    EventStore,
    Head,
    PayloadTooLarge,
    RedisEventStore,
    StoreUnavailable,
    VersionConflict,
)
from services.store.base import Appended
from tests.counter import (
    Add,
    Added,
    Counter,
    CounterDecider,
    Event,
    Note,
    Noted,
    Open,
    Opened,
    Play,
    Played,
)
from tests.memory_store import AsyncInMemoryEventStore, InMemoryEventStore
from tests.store_contract import SyncOverAsync


class SyncHandler:
    """An ``AsyncCommandHandler`` behind the sync handler's API, for the shared tests."""

    def __init__(self, inner: AsyncCommandHandler[Counter, object, Event], runner: asyncio.Runner) -> None:
        self.inner = inner
        self.runner = runner
        self.core = inner.core

    def handle(self, table_id: str, command: object, *, command_id: str) -> CommandResult[Event]:
        return self.runner.run(self.inner.handle(table_id, command, command_id=command_id))

    def state_of(self, table_id: str) -> tuple[Counter, int]:
        return self.runner.run(self.inner.state_of(table_id))

    @property
    def store(self) -> Any:
        return self.inner.store

    @store.setter
    def store(self, store: Any) -> None:
        self.inner.store = store.inner if isinstance(store, SyncOverAsync) else store


Handler = CommandHandler[Counter, object, Event] | SyncHandler


@pytest.fixture(autouse=True)
def plain_logging() -> None:
    """structlog's defaults: a CLI test run in this process may have pointed the global
    setup at a captured stream that pytest has closed since."""
    structlog.reset_defaults()


@pytest.fixture
def runner() -> Iterator[asyncio.Runner]:
    with asyncio.Runner() as loop:
        yield loop


@pytest.fixture(params=["sync", "async"])
def shell(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=["memory", "fakeredis"])
def store(request: pytest.FixtureRequest, shell: str, runner: asyncio.Runner) -> Iterator[EventStore]:
    if shell == "async" and request.param == "memory":
        yield SyncOverAsync(AsyncInMemoryEventStore(), runner)
    elif shell == "async":
        client = fakeredis.FakeAsyncRedis(server=fakeredis.FakeServer(), protocol=2)
        yield SyncOverAsync(AsyncRedisEventStore(client), runner)
        runner.run(client.aclose())
    elif request.param == "memory":
        yield InMemoryEventStore()
    else:
        yield RedisEventStore(fakeredis.FakeRedis(server=fakeredis.FakeServer(), protocol=2))


def memory_store(shell: str, runner: asyncio.Runner) -> EventStore:
    """A fresh in-memory store for ``shell`` (for tests that make their own)."""
    return SyncOverAsync(AsyncInMemoryEventStore(), runner) if shell == "async" else InMemoryEventStore()


def handler(store: Any, **options: Any) -> Handler:
    """The shell that ``store`` is for: the async one over an async store."""
    if isinstance(store, SyncOverAsync):
        return SyncHandler(AsyncCommandHandler(store.inner, CounterDecider(), **options), store.runner)
    return CommandHandler(store, CounterDecider(), **options)


def opened(store: EventStore, table_id: str = "t1", seats: int = 3) -> Handler:
    h = handler(store)
    h.handle(table_id, Open(seats), command_id="open")
    return h


def test_a_command_appends_its_events(store: EventStore) -> None:
    h = opened(store)
    result = h.handle("t1", Add(1, 5), command_id="c1")
    assert (result.version, result.events, result.duplicate) == (2, (Added(1, 5, 5),), False)
    assert h.state_of("t1") == (Counter("t1", seats=3, total=5), 2)
    assert [e.command_id for e in store.read("t1")] == ["open", "c1"]


def test_a_refusal_raises_and_writes_nothing(store: EventStore) -> None:
    h = handler(store)
    with pytest.raises(TableError) as caught:
        h.handle("t1", Add(0, 1), command_id="c1")
    assert caught.value.code == "unknown_table"
    assert store.read("t1") == []
    assert store.outcome_of("t1", "c1") is None


def test_a_stale_cache_catches_up_and_decides_again(store: EventStore) -> None:
    first, second = opened(store), handler(store)
    second.handle("t1", Add(0, 1), command_id="b1")  # second caches version 2
    first.handle("t1", Add(1, 10), command_id="a1")  # first was at 1: conflict, retry
    result = second.handle("t1", Add(2, 100), command_id="b2")  # second is stale now
    assert result.events == (Added(2, 100, 111),)
    assert [e.version for e in store.read("t1")] == [1, 2, 3, 4]


def test_a_stale_cache_never_refuses_a_legal_command(store: EventStore) -> None:
    first, second = opened(store), handler(store)
    second.state_of("t1")  # turn 0 in its cache
    first.handle("t1", Play(0), command_id="a1")
    result = second.handle("t1", Play(1), command_id="b1")
    assert result.events == (Played(1, 2),)


def test_a_refusal_on_a_current_state_is_believed(store: EventStore) -> None:
    h = opened(store)
    with pytest.raises(NotYourTurn):
        h.handle("t1", Play(2), command_id="c1")
    assert len(store.read("t1")) == 1


def test_a_repeated_command_id_returns_the_first_result(store: EventStore) -> None:
    h = opened(store)
    first = h.handle("t1", Add(1, 5), command_id="c1")
    again = [h.handle("t1", Add(1, 5), command_id="c1") for _ in range(3)]
    assert all(r.duplicate for r in again)
    assert {(r.version, r.events) for r in again} == {(first.version, first.events)}
    assert len(store.read("t1")) == 2


def test_a_repeat_that_the_rules_would_now_refuse_still_gets_its_first_result(
    store: EventStore,
) -> None:
    h = opened(store)
    first = h.handle("t1", Play(0), command_id="p0")
    again = handler(store).handle("t1", Play(0), command_id="p0")  # turn moved on: refused
    assert again.duplicate
    assert (again.version, again.events) == (first.version, first.events)


@pytest.mark.parametrize(
    ("command", "error"),
    [
        ({"type": "add", "seat": 0, "amount": 1}, MalformedCommand),
        ("add 1", MalformedCommand),
        (Add("0", 1), TableError),  # type: ignore[arg-type]
        (Add(0, "1"), MalformedCommand),  # type: ignore[arg-type]
        (Add(True, 1), TableError),
        (Add(7, 1), TableError),
        (Play(1), NotYourTurn),
        (Note(0, "x" * 70_000), PayloadTooLarge),
    ],
)
def test_hostile_commands_are_refused_with_a_typed_error(
    store: EventStore, command: object, error: type[Exception]
) -> None:
    h = opened(store)
    before = store.read("t1")
    with pytest.raises(error):
        h.handle("t1", command, command_id="c1")
    assert store.read("t1") == before


@pytest.mark.parametrize("table_id", ["", "no spaces", "x" * 65, None, 42])
def test_a_bad_table_id_is_refused(store: EventStore, table_id: Any) -> None:
    with pytest.raises(BadTableId):
        handler(store).handle(table_id, Open(3), command_id="c1")


def test_an_unknown_table_refuses_every_command_but_open(store: EventStore) -> None:
    with pytest.raises(TableError, match="no table"):
        handler(store).handle("ghost", Play(0), command_id="c1")
    assert store.head("ghost") == Head(0, "0" * 64)


class AlwaysMoved:
    """A store whose table always moved on: every append conflicts."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.appends = 0

    def append(self, table_id: str, events: Sequence[bytes], **kw: Any) -> Appended:
        self.appends += 1
        raise VersionConflict(kw["expected"].version, kw["expected"].version + 1)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class AsyncAlwaysMoved(AlwaysMoved):
    async def append(self, table_id: str, events: Sequence[bytes], **kw: Any) -> Appended:  # type: ignore[override]
        return super().append(table_id, events, **kw)


class Unreachable(AlwaysMoved):
    def append(self, table_id: str, events: Sequence[bytes], **kw: Any) -> Appended:
        raise StoreUnavailable("Redis is unreachable")


class AsyncUnreachable(Unreachable):
    async def append(self, table_id: str, events: Sequence[bytes], **kw: Any) -> Appended:  # type: ignore[override]
        return super().append(table_id, events, **kw)


def wrapped(shell: str, runner: asyncio.Runner, sync: type[AlwaysMoved], asynchronous: type[AlwaysMoved]) -> tuple[AlwaysMoved, Any]:
    """A failing store for ``shell``, and a handler over it."""
    if shell == "async":
        failing = asynchronous(AsyncInMemoryEventStore())
        return failing, SyncHandler(AsyncCommandHandler(failing, CounterDecider(), max_attempts=4), runner)  # type: ignore[arg-type]
    failing = sync(InMemoryEventStore())
    return failing, CommandHandler(failing, CounterDecider(), max_attempts=4)


def test_conflicts_are_retried_a_bounded_number_of_times(shell: str, runner: asyncio.Runner) -> None:
    store, h = wrapped(shell, runner, AlwaysMoved, AsyncAlwaysMoved)
    with pytest.raises(VersionConflict):
        h.handle("t1", Open(2), command_id="c1")
    assert store.appends == 4


def test_one_log_line_per_command_says_what_happened(store: EventStore) -> None:
    h = handler(store)
    with capture_logs() as logs:
        h.handle("t1", Open(2), command_id="c1")
        h.handle("t1", Open(2), command_id="c1")
        with pytest.raises(NotYourTurn):
            h.handle("t1", Play(1), command_id="c2")
    assert [(e["table"], e["command"], e["seat"], e["outcome"]) for e in logs] == [
        ("t1", "Open", None, "ok"),
        ("t1", "Open", None, "duplicate"),
        ("t1", "Play", 1, "refused:not_your_turn"),
    ]
    assert all(e["event"] == "command" and e["latency_ms"] >= 0 for e in logs)


def test_an_unreachable_store_is_reported_and_logged(shell: str, runner: asyncio.Runner) -> None:
    _, h = wrapped(shell, runner, Unreachable, AsyncUnreachable)
    with capture_logs() as logs, pytest.raises(StoreUnavailable):
        h.handle("t1", Open(2), command_id="c1")
    assert logs[0]["outcome"] == "unavailable"


def test_the_cache_is_bounded_and_stays_correct(store: EventStore) -> None:
    h = handler(store, cache_size=2)
    for t in ("a", "b", "c"):
        h.handle(t, Open(2), command_id="o")
    for t in ("a", "b", "c"):
        assert h.handle(t, Add(0, 1), command_id="x").events == (Added(0, 1, 1),)
    assert len(h.core.cache) == 2


def test_a_replayed_table_equals_the_cached_state(store: EventStore) -> None:
    h = opened(store)
    for i in range(10):
        h.handle("t1", Add(i % 3, i), command_id=f"c{i}")
    assert handler(store).state_of("t1") == h.state_of("t1")
    assert CounterDecider().decode_event(store.read("t1")[0].data) == Opened(3)


def test_a_store_that_lost_writes_is_reloaded_from_scratch(shell: str, runner: asyncio.Runner) -> None:
    h = opened(memory_store(shell, runner))
    h.handle("t1", Add(0, 5), command_id="c1")
    replica = memory_store(shell, runner)  # a failover to a replica that never got the writes
    h.store = replica
    replica.append(
        "t1",
        [CounterDecider().encode_event(Opened(2))],
        expected=Head(0, "0" * 64),
        command_id="open",
        outcome=b"{}",
    )
    result = h.handle("t1", Add(1, 1), command_id="c2")
    assert (result.version, result.events) == (2, (Added(1, 1, 1),))


@pytest.mark.parametrize("moved_on", [1, 2])
def test_a_store_that_lost_writes_then_took_others_is_reloaded_from_scratch(
    moved_on: int, shell: str, runner: asyncio.Runner
) -> None:
    """The store lost this process's last append (a failover, an OS crash under
    ``everysec``), then other processes appended: at the cached version (another head
    hash) or past it (a chain that does not continue the cached head). Neither is
    corruption, and neither may refuse a legal command or stick to the table."""
    h = opened(memory_store(shell, runner))
    h.handle("t1", Add(0, 5), command_id="c1")  # cached at version 2, then lost
    replica = memory_store(shell, runner)
    other = opened(replica)
    for i in range(moved_on):
        other.handle("t1", Add(1, 1), command_id=f"o{i}")
    h.store = replica
    result = h.handle("t1", Add(2, 1), command_id="c2")
    assert (result.version, result.events) == (2 + moved_on, (Added(2, 1, moved_on + 1),))
    assert h.state_of("t1") == other.state_of("t1")


def test_a_command_id_reused_for_another_command_is_not_answered_with_the_first(store: EventStore) -> None:
    """A command id names one command. Sent again with another command (another seat's
    client picking the same id, ids made from the version both saw), it must not be
    answered with the first command's events: that would drop the second command while
    reporting it done, and hand one seat's events (here a private note) to another."""
    h = opened(store)
    h.handle("t1", Note(0, "seat 0's secret"), command_id="c1")
    with pytest.raises(CommandIdReused):
        handler(store).handle("t1", Note(1, "hello"), command_id="c1")
    # refused by the rules too: the same code as an append would give (not c1's events,
    # and not a rules code that depends on which check ran first)
    with pytest.raises(CommandIdReused):
        handler(store).handle("t1", Play(2), command_id="c1")
    again = handler(store).handle("t1", Note(0, "seat 0's secret"), command_id="c1")
    assert again.duplicate and again.events == (Noted(0, "seat 0's secret"),)
    assert [e.command_id for e in store.read("t1")] == ["open", "c1"]


def test_an_outcome_is_stored_packed_and_ones_stored_by_earlier_releases_still_answer() -> None:
    """A command id's outcome takes at most 16 bytes (the versions and the fingerprint's 8
    bytes, MessagePack), not the 63 of the JSON object earlier releases stored, nor the 22
    of the 16-byte fingerprint stored until 2026-12-06; both still read, by their first
    digits, and still tell another command sent with the id."""
    import hashlib

    import msgspec

    from services.commands.core import fingerprint

    client = fakeredis.FakeRedis(server=fakeredis.FakeServer(), protocol=2)
    store = RedisEventStore(client)
    h = opened(store)
    first = h.handle("t1", Add(1, 5), command_id="c1")
    stored = store.outcome_of("t1", "c1")
    assert stored is not None and len(stored) <= 16
    again = handler(store).handle("t1", Add(1, 5), command_id="c1")
    assert again.duplicate and (again.version, again.events) == (first.version, first.events)
    mark = fingerprint(Add(1, 5))
    longer = hashlib.sha256(msgspec.json.encode(Add(1, 5))).hexdigest()[:32]  # as stored before
    assert len(mark) == 16 and longer.startswith(mark)
    earlier = {
        "json": b'{"first":%d,"last":%d,"command":"%s"}' % (first.version, first.version, longer.encode()),
        "packed, 16 bytes": msgspec.msgpack.encode([first.version, first.version, bytes.fromhex(longer)]),
    }
    for kind, outcome in earlier.items():
        client.hset(store.keys.table("t1").commands, "c1", outcome)
        again = handler(store).handle("t1", Add(1, 5), command_id="c1")
        assert again.duplicate and (again.version, again.events) == (first.version, first.events), kind
        with pytest.raises(CommandIdReused):
            handler(store).handle("t1", Add(2, 7), command_id="c1")
