"""The core's hot path without a generator (``start``, ``finish``, ``resume``) decides as
``handle`` does; and the asyncio shell's per-table turn under waiting and cancellation."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from domain.errors import NotYourTurn
from services.commands.core import Append, CommandCore, CommandResult, Sleep
from services.commands.handler import AsyncCommandHandler, _Turn
from services.store import VersionConflict
from tests.counter import Add, Added, CounterDecider, Open, Play
from tests.memory_store import AsyncInMemoryEventStore, InMemoryEventStore
from tests.unit.test_command_core import drive


def opened(store: InMemoryEventStore, core: CommandCore[Any, Any, Any]) -> None:
    drive(core.handle("t1", Open(2), "c1"), store, [])


def test_a_cached_table_gets_its_append_from_start_and_its_result_from_finish() -> None:
    store, core = InMemoryEventStore(), CommandCore(CounterDecider())
    opened(store, core)
    twin_store, twin = InMemoryEventStore(), CommandCore(CounterDecider())
    opened(twin_store, twin)
    request = core.start("t1", Add(0, 3), "c2")
    assert isinstance(request, Append) and request.expected == store.head("t1")
    appended = store.append(request.table_id, request.events, expected=request.expected,
                            command_id=request.command_id, outcome=request.outcome)
    result = core.finish(request, appended)
    # the same result, the same bytes stored and the same state cached as through handle
    assert result == drive(twin.handle("t1", Add(0, 3), "c2"), twin_store, [])
    assert result == CommandResult("t1", 2, (Added(0, 3, 3),))
    assert store.read("t1") == twin_store.read("t1")
    assert core.cached("t1") == twin.cached("t1")


def test_start_leaves_an_unknown_table_and_a_refusal_to_handle() -> None:
    store, core = InMemoryEventStore(), CommandCore(CounterDecider())
    assert core.start("t1", Open(2), "c1") is None  # not cached: handle reads it first
    opened(store, core)
    assert core.start("t1", Play(1), "p1") is None  # refused on a cached state: not believed yet
    with pytest.raises(NotYourTurn):
        drive(core.handle("t1", Play(1), "p1"), store, [])
    assert store.head("t1").version == 1


def test_after_a_conflict_on_the_fast_path_resume_backs_off_catches_up_and_retries() -> None:
    store, core = InMemoryEventStore(), CommandCore(CounterDecider(), jitter=lambda: 0.5)
    opened(store, core)
    drive(CommandCore(CounterDecider()).handle("t1", Add(1, 5), "other"), store, [])
    request = core.start("t1", Add(0, 3), "c2")
    assert isinstance(request, Append) and request.expected.version == 1  # stale
    with pytest.raises(VersionConflict) as refused:
        store.append(request.table_id, request.events, expected=request.expected,
                     command_id=request.command_id, outcome=request.outcome)
    steps = core.resume(request, None, refused.value)
    wait = next(steps)
    assert isinstance(wait, Sleep) and wait.seconds == core.backoff(0)
    asked: list[str] = []
    result = drive_from(steps, store, asked)
    assert asked == ["Read", "Append"]
    assert result == CommandResult("t1", 3, (Added(0, 3, 8),))


def test_a_duplicate_on_the_fast_path_resumes_to_the_first_result() -> None:
    store, core = InMemoryEventStore(), CommandCore(CounterDecider())
    opened(store, core)
    first = drive(core.handle("t1", Add(0, 3), "c2"), store, [])
    stale = CommandCore(CounterDecider())
    opened(InMemoryEventStore(), stale)  # cached at version 1, as if c2 never happened
    request = stale.start("t1", Add(0, 3), "c2")
    assert isinstance(request, Append)
    appended = store.append(request.table_id, request.events, expected=request.expected,
                            command_id=request.command_id, outcome=request.outcome)
    assert appended.duplicate and stale.finish(request, appended) is None
    asked: list[str] = []
    again = drive(stale.resume(request, appended, None), store, asked)
    assert asked == ["Read"]
    assert again == CommandResult("t1", 2, first.events, duplicate=True)


def drive_from(steps: Any, store: InMemoryEventStore, log: list[str]) -> Any:
    """``drive`` for a generator that has just asked for a Sleep: answer it, go on."""

    def after_sleep() -> Any:
        answer: Any = None
        while True:
            try:
                request = steps.send(answer)
            except StopIteration as done:
                return done.value
            try:
                answer = yield request
            except Exception as error:  # noqa: BLE001 - thrown on into the core
                answer = None
                request = steps.throw(error)
                answer = yield request

    return drive(after_sleep(), store, log)


def test_a_turn_goes_to_its_waiters_in_the_order_they_came() -> None:
    async def scenario() -> list[int]:
        turn, order = _Turn(), []
        turn.busy = True

        async def waiter(n: int) -> None:
            await turn.wait()
            order.append(n)
            await asyncio.sleep(0)
            turn.hand_on()

        tasks = [asyncio.create_task(waiter(n)) for n in range(5)]
        await asyncio.sleep(0)
        turn.hand_on()
        await asyncio.gather(*tasks)
        assert not turn.busy and not turn.waiting
        return order

    assert asyncio.run(scenario()) == [0, 1, 2, 3, 4]


def test_a_waiter_cancelled_while_waiting_or_just_after_being_handed_the_turn_blocks_nobody() -> None:
    async def scenario() -> list[str]:
        turn, got = _Turn(), []
        turn.busy = True

        async def waiter(name: str) -> None:
            await turn.wait()
            got.append(name)
            turn.hand_on()

        waiting = asyncio.create_task(waiter("cancelled while waiting"))
        handed = asyncio.create_task(waiter("cancelled once handed the turn"))
        last = asyncio.create_task(waiter("last"))
        await asyncio.sleep(0)
        waiting.cancel()
        await asyncio.sleep(0)
        turn.hand_on()  # to `handed`, which is cancelled before it runs: it passes it on
        handed.cancel()
        await asyncio.wait_for(asyncio.gather(waiting, handed, last, return_exceptions=True), 1)
        assert waiting.cancelled() and handed.cancelled()
        assert not turn.busy and not turn.waiting
        return got

    assert asyncio.run(scenario()) == ["last"]


class GatedStore(AsyncInMemoryEventStore):
    """Appends wait for the gate to open: a command can be held mid-flight."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()

    async def append(self, table_id: str, events: Any, **options: Any) -> Any:
        await self.gate.wait()
        return await super().append(table_id, events, **options)


def test_a_cancelled_command_frees_its_tables_turn_for_the_next() -> None:
    async def scenario() -> tuple[int, int, bool]:
        store = GatedStore()
        store.gate.set()
        handler = AsyncCommandHandler(store, CounterDecider())
        await handler.handle("t1", Open(2), command_id="open")
        store.gate.clear()
        first = asyncio.create_task(handler.handle("t1", Add(0, 1), command_id="a1"))
        second = asyncio.create_task(handler.handle("t1", Add(0, 2), command_id="a2"))
        third = asyncio.create_task(handler.handle("t1", Add(0, 4), command_id="a3"))
        await asyncio.sleep(0)  # first holds the turn (at the gate), the others wait
        second.cancel()
        await asyncio.sleep(0)
        store.gate.set()
        await first
        done = await asyncio.wait_for(third, 1)
        return done.version, (await store.head("t1")).version, second.cancelled()

    assert asyncio.run(scenario()) == (3, 3, True)
