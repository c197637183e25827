"""The sans-IO command core on its own: what it asks for, in what order, with what
waits; and the asyncio shell with many commands in flight at once."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import fakeredis
import pytest

from services.commands.core import (
    Append,
    CommandCore,
    CommandResult,
    OutcomeOf,
    Read,
    ReadHead,
    Sleep,
    Steps,
)
from services.commands.handler import AsyncCommandHandler
from services.store import EMPTY_HEAD, AsyncRedisEventStore, VersionConflict
from tests.counter import Add, Added, CounterDecider, Open, Opened, Play
from tests.memory_store import AsyncInMemoryEventStore, InMemoryEventStore


def drive(steps: Steps[Any], store: InMemoryEventStore, log: list[str]) -> Any:
    """Perform the core's requests on ``store`` by hand, noting each one."""
    answer: Any = None
    failed: Exception | None = None
    while True:
        try:
            request = steps.send(answer) if failed is None else steps.throw(failed)
        except StopIteration as done:
            return done.value
        failed, answer = None, None
        log.append(type(request).__name__)
        try:
            if isinstance(request, Read):
                answer = store.read(request.table_id, request.after_version, request.to_version)
            elif isinstance(request, Append):
                answer = store.append(
                    request.table_id, request.events, expected=request.expected,
                    command_id=request.command_id, outcome=request.outcome,
                )
            elif isinstance(request, OutcomeOf):
                answer = store.outcome_of(request.table_id, request.command_id)
            elif isinstance(request, ReadHead):
                answer = store.head(request.table_id)
        except Exception as error:  # noqa: BLE001 - thrown into the core as the shells do
            failed = error


def test_a_command_for_a_cached_table_is_one_append_and_nothing_else() -> None:
    store, core = InMemoryEventStore(), CommandCore(CounterDecider())
    first: list[str] = []
    drive(core.handle("t1", Open(2), "c1"), store, first)
    assert first == ["Read", "Append"]  # an unknown table is read first
    hot: list[str] = []
    result = drive(core.handle("t1", Add(0, 3), "c2"), store, hot)
    assert hot == ["Append"]
    assert result == CommandResult("t1", 2, (Added(0, 3, 3),))


def test_a_refusal_on_a_stale_cache_reads_before_it_is_believed() -> None:
    store, core = InMemoryEventStore(), CommandCore(CounterDecider())
    drive(core.handle("t1", Open(2), "c1"), store, [])
    other = CommandCore(CounterDecider())
    drive(other.handle("t1", Play(0), "p0"), store, [])  # turn moves to seat 1
    steps: list[str] = []
    result = drive(core.handle("t1", Play(1), "p1"), store, steps)  # stale: turn 0 cached
    assert steps == ["Read", "Append"]
    assert result.version == 3


def _a_store_that_lost_the_last_write() -> tuple[CommandCore[Any, Any, Any], InMemoryEventStore]:
    """A core that saw ``Open`` and ``Play(0)`` (seat 1 to play), and a store that holds
    only the ``Open``: what a failover to a replica without the last append leaves."""
    seen, core = InMemoryEventStore(), CommandCore(CounterDecider())
    drive(core.handle("t1", Open(2), "c1"), seen, [])
    drive(core.handle("t1", Play(0), "p0"), seen, [])
    kept = InMemoryEventStore()
    drive(CommandCore(CounterDecider()).handle("t1", Open(2), "c1"), kept, [])
    return core, kept


def test_a_refusal_decided_on_writes_the_store_lost_is_decided_again_on_what_it_holds() -> None:
    core, kept = _a_store_that_lost_the_last_write()
    steps: list[str] = []
    result = drive(core.handle("t1", Play(0), "p0-again"), kept, steps)  # "not your turn" on the lost write
    assert steps == ["Read", "ReadHead", "Warn", "Read", "Append"]  # caught up, behind: reloaded
    assert result.version == 2


def test_the_state_of_a_table_the_store_holds_less_of_is_the_stores() -> None:
    core, kept = _a_store_that_lost_the_last_write()
    steps: list[str] = []
    state, version = drive(core.state_of("t1"), kept, steps)
    assert (version, state.turn) == (1, 0)
    assert steps == ["Read", "ReadHead", "Warn", "Read"]
    again: list[str] = []
    assert drive(core.state_of("t1"), kept, again)[1] == 1
    assert again == ["Read", "ReadHead"]  # the same head: the cached state stands


def test_conflicts_wait_growing_jittered_back_offs_decided_by_the_core() -> None:
    """The waits are data: with a seeded jitter they are known before any I/O."""
    seeded = random.Random(7)
    core = CommandCore(CounterDecider(), max_attempts=4, jitter=seeded.random)
    expected_jitter = random.Random(7)
    steps = core.handle("t1", Open(2), "c1")
    request = next(steps)
    assert isinstance(request, Read)
    request = steps.send([])
    waits: list[float] = []
    for _ in range(3):
        assert isinstance(request, Append)
        request = steps.throw(VersionConflict(0, 1))
        assert isinstance(request, Sleep)
        waits.append(request.seconds)
        request = steps.send(None)
        assert isinstance(request, Read)  # catch up after the conflict
        request = steps.send([])
        # the stream does not reach the version the conflict named: the meta is read on
        # either side of the stream once more (here it agrees, so the core retries)
        for kind, answer in ((ReadHead, EMPTY_HEAD), (Read, []), (ReadHead, EMPTY_HEAD)):
            assert isinstance(request, kind)
            request = steps.send(answer)
    assert isinstance(request, Append)
    with pytest.raises(VersionConflict):
        steps.throw(VersionConflict(0, 1))
    assert waits == [expected_jitter.random() * 0.001 * n for n in (1, 2, 3)]


def test_a_duplicate_refused_by_the_rules_asks_for_its_first_outcome() -> None:
    store, core = InMemoryEventStore(), CommandCore(CounterDecider())
    drive(core.handle("t1", Open(2), "c1"), store, [])
    steps: list[str] = []
    again = drive(CommandCore(CounterDecider()).handle("t1", Open(2), "c1"), store, steps)
    assert steps == ["Read", "OutcomeOf", "Read"]  # load, refused (exists), first outcome
    assert again == CommandResult("t1", 1, (Opened(2),), duplicate=True)


def test_the_core_does_no_io_while_it_is_not_driven() -> None:
    core = CommandCore(CounterDecider())
    steps = core.handle("t1", Open(2), "c1")
    read = next(steps)
    assert isinstance(read, Read) and (read.table_id, read.after_version) == ("t1", 0)
    append = steps.send([])
    assert isinstance(append, Append) and append.expected == EMPTY_HEAD
    steps.close()  # abandoned: nothing was written anywhere, nothing is cached
    assert core.cached("t1") is None


@pytest.mark.parametrize("kind", ["memory", "fakeredis"])
def test_many_tables_in_flight_at_once_each_get_their_own_results(kind: str) -> None:
    async def scenario() -> list[list[int]]:
        store: Any
        if kind == "memory":
            store = AsyncInMemoryEventStore()
        else:
            store = AsyncRedisEventStore(
                fakeredis.FakeAsyncRedis(server=fakeredis.FakeServer(), protocol=2), batch=8
            )
        h = AsyncCommandHandler(store, CounterDecider())

        async def table(n: int) -> list[int]:
            await h.handle(f"t{n}", Open(2), command_id="open")
            totals = []
            for i in range(5):
                result = await h.handle(f"t{n}", Add(i % 2, n), command_id=f"a{i}")
                assert isinstance(result.events[0], Added)
                totals.append(result.events[0].total)
            return totals

        return await asyncio.gather(*(table(n) for n in range(40)))

    totals = asyncio.run(scenario())
    assert totals == [[n * (i + 1) for i in range(5)] for n in range(40)]


@pytest.mark.parametrize("kind", ["memory", "fakeredis"])
def test_commands_for_one_table_sent_at_once_all_land_once_in_order_of_arrival(kind: str) -> None:
    """More commands for one table at once than the handler retries conflicts: the shell
    takes them one at a time per table, so none conflicts with another of this process,
    none is lost or doubled, and they land in the order they came."""

    async def scenario() -> tuple[list[int], list[str]]:
        store: Any = AsyncInMemoryEventStore()
        if kind == "fakeredis":
            store = AsyncRedisEventStore(
                fakeredis.FakeAsyncRedis(server=fakeredis.FakeServer(), protocol=2)
            )
        h = AsyncCommandHandler(store, CounterDecider(), max_attempts=2)
        await h.handle("t1", Open(3), command_id="open")
        results = await asyncio.gather(
            *(h.handle("t1", Add(n % 3, 1), command_id=f"a{n}") for n in range(12))
        )
        return [r.version for r in results], [e.command_id for e in await store.read("t1")]

    versions, command_ids = asyncio.run(scenario())
    assert versions == list(range(2, 14))
    assert command_ids == ["open"] + [f"a{n}" for n in range(12)]
