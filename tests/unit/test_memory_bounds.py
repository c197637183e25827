"""What a long-running process keeps per table or player it has seen is bounded
(docs/reliability.md, *Soak*): each structure is filled past its bound and must stay
within it. The command path keeps closed tables apart, so tables that ended neither grow
the process nor push the tables in play out of its cache."""

from __future__ import annotations

import asyncio
from typing import Any

import fakeredis
import pytest

from domain.mighty.game import MIGHTY
from domain.table import CloseTable, CreateTable, Submission
from projections.turns import Turn
from services.app.lifecycle import Lifecycle
from services.bootstrap import wire, wire_gateway
from services.bots.idle import ENROLLED, IdleCloser
from services.bots.worker import REMEMBERED, BotWorker
from services.commands.core import CLOSED_CACHE_SIZE, Snapshot, SnapshotCache
from services.commands.handler import TURNS_KEPT, AsyncCommandHandler, CommandHandler
from services.commands.tables import TableDecider
from services.gateway.backend import PLAYERS_TOUCHED
from services.gateway.presence import REMEMBERED as TOUCHES_REMEMBERED
from services.gateway.presence import Presence
from services.settings import Settings
from services.store.base import Head
from services.store.keys import KEY_CACHE_SIZE, KeySpace
from tests.counter import CounterDecider, Open
from tests.memory_store import AsyncInMemoryEventStore, InMemoryEventStore

PAST = 50  # how far past each bound the tests go


def test_closed_tables_are_kept_apart_bounded_and_never_push_a_table_in_play_out() -> None:
    handler = CommandHandler(InMemoryEventStore(), TableDecider(), cache_size=8)
    handler.handle("live", Submission(CreateTable(name="in play"), "ana"), command_id="create")
    for n in range(CLOSED_CACHE_SIZE + PAST):
        table = f"t{n}"
        handler.handle(table, Submission(CreateTable(name="t"), "ana"), command_id="create")
        handler.handle(table, Submission(CloseTable(reason="over")), command_id="close")
    cache = handler.core.cache
    assert cache.closed == CLOSED_CACHE_SIZE
    assert len(cache) == CLOSED_CACHE_SIZE + 1
    cached = handler.cached("live")  # hundreds of tables closed since: still cached
    assert cached is not None and cached[0].status != "closed"
    last = handler.cached(f"t{CLOSED_CACHE_SIZE + PAST - 1}")
    assert last is not None and last[0].status == "closed"
    assert handler.cached("t0") is None  # the oldest closed ones went first
    # a closed table forgotten by the cache is read again from the store, as before
    assert handler.state_of("t0")[0].status == "closed"


def test_a_table_is_in_one_part_of_the_cache_at_a_time() -> None:
    cache: SnapshotCache[str] = SnapshotCache(4, closed_size=2)
    cache.remember("t", Snapshot("closed", Head(2, "b")), closed=True)
    cache.remember("t", Snapshot("in play again", Head(3, "c")))  # read again after a rollback
    assert (len(cache), cache.closed) == (1, 0)
    snapshot = cache.get("t")
    assert snapshot is not None and snapshot.state == "in play again"
    cache.forget("t")
    assert len(cache) == 0 and cache.get("t") is None


def test_a_table_not_used_for_the_idle_time_is_dropped_in_play_or_closed() -> None:
    now = [0.0]
    cache: SnapshotCache[str] = SnapshotCache(100, closed_size=100, idle_s=120, clock=lambda: now[0])
    cache.remember("moved on elsewhere", Snapshot("in play", Head(5, "e")))
    cache.remember("ended", Snapshot("closed", Head(9, "i")), closed=True)
    cache.remember("used", Snapshot("in play", Head(3, "c")))
    for _ in range(5):
        now[0] += 60
        assert cache.get("used") is not None
    assert cache.get("moved on elsewhere") is None and cache.get("ended") is None
    assert (len(cache), cache.closed) == (1, 0)


def test_the_async_handler_keeps_a_bounded_number_of_idle_turns() -> None:
    handler: AsyncCommandHandler[Any, Any, Any] = AsyncCommandHandler(AsyncInMemoryEventStore(), CounterDecider())

    async def open_many() -> None:
        for n in range(TURNS_KEPT + PAST):
            await handler.handle(f"t{n}", Open(2), command_id="open")

    asyncio.run(open_many())
    assert 0 < len(handler._turns) <= TURNS_KEPT  # noqa: SLF001


def test_key_names_are_kept_for_a_bounded_number_of_tables() -> None:
    space = KeySpace(4, "ns")
    for n in range(KEY_CACHE_SIZE + PAST):
        keys = space.table(f"t{n}")
        assert keys.events.endswith(f":t:t{n}:events")
    assert 0 < len(space._tables) <= KEY_CACHE_SIZE  # noqa: SLF001
    assert space.table("t0") == KeySpace(4, "ns").table("t0")  # made again, the same


class _Coalesced:
    def __init__(self) -> None:
        self.calls = 0

    async def call(self, *commands: tuple[Any, ...], shared: bool = False) -> list[Any]:
        self.calls += 1
        return [0 for _ in commands]


def test_the_gateway_remembers_the_last_touch_of_a_bounded_number_of_tables() -> None:
    coalesced = _Coalesced()
    presence = Presence(coalesced, KeySpace(4, "ns"), Lifecycle.of(Settings()))

    async def touch_many() -> None:
        for n in range(TOUCHES_REMEMBERED + PAST):
            await presence.touch(f"t{n}", "playing")

    asyncio.run(touch_many())
    assert coalesced.calls == TOUCHES_REMEMBERED + PAST
    assert 0 < len(presence._last) <= TOUCHES_REMEMBERED  # noqa: SLF001


def test_the_gateway_remembers_renewing_a_bounded_number_of_players() -> None:
    backend = wire_gateway(fakeredis.FakeAsyncRedis(server=fakeredis.FakeServer(), protocol=2),
                           Settings(partitions=4))

    async def touch_many() -> None:
        for start in range(0, PLAYERS_TOUCHED + PAST, 100):
            await backend.touch_players([f"p{n}" for n in range(start, start + 100)])
        for _ in range(PAST):
            await backend.create_player("Ana")
        await backend.close()

    asyncio.run(touch_many())
    assert 0 < len(backend._touched) <= PLAYERS_TOUCHED  # noqa: SLF001


@pytest.fixture
def worker() -> BotWorker:
    wiring = wire(fakeredis.FakeRedis(server=fakeredis.FakeServer(), protocol=2), Settings(partitions=4))
    return BotWorker(wiring.client, wiring.space, wiring.handler)


def test_the_bot_worker_keeps_a_bounded_number_of_tables_and_players(worker: BotWorker) -> None:
    for n in range(REMEMBERED + PAST):
        turn = Turn(table_id=f"t{n}", version=3, hand_no=1, seat=1, player=f"p{n}", level=None)
        worker._remember(turn.table_id, turn.version)  # noqa: SLF001
        worker.rules_of(turn)
        assert worker.level_of(turn) is None  # no such player: a person's seat
    assert 0 < len(worker._done) <= REMEMBERED  # noqa: SLF001
    assert 0 < len(worker._rules) <= REMEMBERED  # noqa: SLF001
    assert 0 < len(worker._levels) <= REMEMBERED  # noqa: SLF001


def test_the_bot_worker_keeps_one_rule_set_for_the_many_tables_that_share_it(worker: BotWorker) -> None:
    five, three = (MIGHTY.directory_fields(MIGHTY.make_rules(v, {})) for v in ("mighty-5", "mighty-3"))
    for n in range(200):
        fields = five if n % 2 else three
        if n % 4 == 1:  # the same fields, read back in another order
            fields = {"rules": dict(reversed(list(five["rules"].items())))}
        rules = worker.rules_of(Turn(table_id=f"t{n}", version=3, hand_no=1, seat=1, player=None, level=None,
                                     rules=fields))
        assert rules == MIGHTY.make_rules("mighty-5" if n % 2 else "mighty-3", {})
    assert len(worker._rules) == 2  # noqa: SLF001


def test_the_idle_closer_remembers_enrolling_a_bounded_number_of_tables() -> None:
    wiring = wire(fakeredis.FakeRedis(server=fakeredis.FakeServer(), protocol=2), Settings(partitions=4))
    closer = IdleCloser(wiring.client, wiring.space, wiring.handler, idle_s=600)
    for n in range(ENROLLED + PAST):
        closer.enrol(f"t{n}")
    assert 0 < len(closer._enrolled) <= ENROLLED  # noqa: SLF001


def test_a_bot_is_one_player_at_every_table_it_sits_at_and_a_guest_a_new_one() -> None:
    """A bot's ledger, rating and record are kept once per level and name, not once more
    for every seat a bot takes (they lasted, one more per bot seat, for ever)."""
    client = fakeredis.FakeAsyncRedis(server=fakeredis.FakeServer(), protocol=2)
    backend = wire_gateway(client, Settings(partitions=4))

    async def seat_many() -> tuple[list[str], list[str], list[str], bytes | str | None]:
        try:
            gus = [(await backend.create_player("Gus", bot="beginner")).player]
            first = await client.hget(f"{backend._ns}:player:{gus[0]}", "created")  # noqa: SLF001
            gus += [(await backend.create_player("Gus", bot="beginner")).player for _ in range(4)]
            other = [(await backend.create_player("Gus", bot="expert")).player,
                     (await backend.create_player("Ida", bot="beginner")).player]
            guests = [(await backend.create_player("Gus")).player for _ in range(3)]
            created = await client.hget(f"{backend._ns}:player:{gus[0]}", "created")  # noqa: SLF001
            assert created == first  # made once
            return gus, other, guests, created
        finally:
            await backend.close()

    gus, other, guests, created = asyncio.run(seat_many())
    assert len(set(gus)) == 1 and gus[0].startswith("b")
    assert len(set(other)) == 2 and not set(other) & set(gus)
    assert len(set(guests)) == 3 and all(g.startswith("p") for g in guests)
    assert created is not None
