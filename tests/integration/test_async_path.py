"""The asyncio path a gateway takes, against a real redis-server with the workers running:
commands through ``AsyncCommandHandler`` over ``AsyncRedisEventStore``, reads through
``AsyncReader``, and following a view's changes from a cursor with ``follow_async``."""

from __future__ import annotations

import asyncio
import random
import threading
import time
from typing import Any

import msgspec
import pytest

from domain.table import CreateTable, Submission, TableState, evolve, initial_state
from projections.docs import decode
from projections.views import SPECTATOR
from services.commands.handler import AsyncCommandHandler
from services.commands.tables import TableDecider
from services.players import next_submission, seating
from services.projection.notify import channel_of, follow_async
from services.projection.read import (
    AsyncReader,
    lobby,
    player_ledgers,
    table_ledger,
    view,
    wait_until,
)
from services.store import (
    EMPTY_HEAD,
    AsyncRedisEventStore,
    KeySpace,
    RedisEventStore,
    StoreUnavailable,
    connect_async,
)
from tests.integration.workers.support import workers
from tests.unit.test_projections import assert_reader_may_see, secret_salts

pytestmark = pytest.mark.integration
# follow_async (services/projection/notify.py) listens on one node's Pub/Sub: on the local
# cluster these run on one redis-server until the gateway's shared follow hub replaces it.
SPACE = KeySpace(16)


class AsyncTables:
    """Tables played through the async handler, all in flight at once, each table's state
    folded from its results."""

    def __init__(self, client: Any, seed: int = 0) -> None:
        store = AsyncRedisEventStore(client, keys=SPACE)
        self.handler: AsyncCommandHandler[TableState, Submission, Any] = AsyncCommandHandler(
            store, TableDecider()
        )
        self.rng = random.Random(seed)
        self.states: dict[str, tuple[TableState, int]] = {}

    async def send(self, table_id: str, submission: Submission) -> None:
        state, version = self.states[table_id]
        result = await self.handler.handle(table_id, submission, command_id=f"{table_id}-{version}")
        for event in result.events:
            state = evolve(state, event)
        self.states[table_id] = (state, result.version)

    async def open(self, table_ids: list[str]) -> None:
        async def one(table_id: str) -> None:
            self.states[table_id] = (initial_state(table_id), 0)
            seated = self.rng.sample(["ana", "bo", "cy", "di", "ed", "fay", "gus"], 5)
            await self.send(table_id, Submission(CreateTable(name=table_id), seated[0]))
            for submission in seating(seated):
                await self.send(table_id, submission)

        await asyncio.gather(*(one(t) for t in table_ids))

    async def play(self, hands: int, steps: int | None = None) -> None:
        """Rounds of one command per unfinished table, the tables of a round at once."""
        rounds = 0
        while any(s.hands_scored < hands for s, _ in self.states.values()):
            moves = [
                (table_id, move)
                for table_id, (state, _) in self.states.items()
                if state.hands_scored < hands and (move := next_submission(state, self.rng)) is not None
            ]
            await asyncio.gather(*(self.send(t, m) for t, m in moves))
            rounds += 1
            if steps is not None and rounds >= steps:
                return


def test_tables_played_on_the_async_path_read_back_through_the_async_reader(
    redis_server: Any, redis_client: Any
) -> None:
    table_ids = [f"g{n:03d}" for n in range(6)]

    async def scenario() -> dict[str, Any]:
        client = connect_async(redis_server.url)
        try:
            tables = AsyncTables(client, seed=3)
            await tables.open(table_ids)
            await tables.play(hands=1)
            for kind in ("views", "ledger", "directory"):
                await asyncio.to_thread(wait_until, redis_client, SPACE, kind, None, 60.0)
            reader = AsyncReader(client, SPACE)
            return {
                "states": tables.states,
                "views": {
                    (t, r): await reader.view(t, r)
                    for t in table_ids for r in [*map(str, range(5)), SPECTATOR]
                },
                "seat_2": await reader.seat_view(table_ids[0], 2),
                "spectator": await reader.spectator_view(table_ids[0]),
                "lobby": await reader.lobby(),
                "players": await reader.player_ledgers(),
                "ledgers": {t: await reader.table_ledger(t) for t in table_ids},
            }
        finally:
            await client.aclose()

    with workers(redis_server.url):
        got = asyncio.run(scenario())
    store = RedisEventStore(redis_client, keys=SPACE)
    for table_id, (state, version) in got["states"].items():
        assert store.head(table_id).version == version
        assert state.hands_scored == 1
    for (table_id, reader), doc in got["views"].items():
        assert doc is not None and doc == view(redis_client, SPACE, table_id, reader)
        state = got["states"][table_id][0]
        assert_reader_may_see(doc, state, secret_salts(state))
    assert got["seat_2"] == got["views"][(table_ids[0], "2")]
    assert got["spectator"] == got["views"][(table_ids[0], SPECTATOR)]
    assert got["lobby"] == lobby(redis_client, SPACE)
    assert [e.table_id for e in got["lobby"]] == table_ids
    assert got["players"] == player_ledgers(redis_client, SPACE) and got["players"]
    assert got["ledgers"] == {t: table_ledger(redis_client, SPACE, t) for t in table_ids}


def _published(redis_client: Any, channel: str, stop: threading.Event, into: list[int]) -> None:
    """Every version published on ``channel`` from the confirmed subscription until
    ``stop``: the reference a follower is checked against."""
    pubsub = redis_client.pubsub()
    pubsub.ssubscribe(channel)
    while not stop.is_set():
        message = pubsub.get_sharded_message(timeout=0.05)
        if message is not None and message["type"] == "smessage":
            into.append(decode(message["data"])["version"])
        elif message is not None and message["type"] == "ssubscribe":
            into.append(-1)  # marks: subscribed from here on
    pubsub.close()


def test_following_a_view_from_a_cursor_misses_nothing_and_gives_nothing_twice(
    redis_server: Any, redis_client: Any
) -> None:
    table_id = "f000"
    channel = channel_of(SPACE, table_id, "2")
    published: list[int] = []
    stop = threading.Event()

    async def scenario() -> tuple[int, list[int]]:
        client = connect_async(redis_server.url)
        try:
            tables = AsyncTables(client, seed=5)
            await tables.open([table_id])
            await asyncio.to_thread(wait_until, redis_client, SPACE, "views", None, 60.0)
            seen = decode(await AsyncReader(client, SPACE).view(table_id, "2") or b"{}")
            followed: list[int] = []
            stream = follow_async(client, SPACE, table_id, "2", cursor=seen["version"] - 1)

            async def follow() -> None:
                async for doc in stream:
                    followed.append(decode(doc)["version"])

            task = asyncio.create_task(follow())
            while not followed:  # the stored view, newer than the cursor, comes first
                await asyncio.sleep(0.01)
            await tables.play(hands=1, steps=40)
            await asyncio.to_thread(wait_until, redis_client, SPACE, "views", None, 60.0)
            final = decode(view(redis_client, SPACE, table_id, "2") or b"{}")["version"]
            deadline = time.monotonic() + 30
            while followed[-1] < final and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert followed[0] == seen["version"]
            return final, followed
        finally:
            await client.aclose()

    with workers(redis_server.url, ("views",)):
        wait_until(redis_client, SPACE, "views", timeout_s=60)
        reference = threading.Thread(target=_published, args=(redis_client, channel, stop, published))
        reference.start()
        while -1 not in published:
            time.sleep(0.01)
        try:
            final, followed = asyncio.run(scenario())
        finally:
            stop.set()
            reference.join()
    assert followed[-1] == final
    assert followed == sorted(set(followed)), "each version once, in order"
    newer = [v for v in published if v > followed[0]]
    assert newer, "the table moved while followed"
    assert set(newer) <= set(followed), "every version published after the first was given"


class _Spy:
    """An asyncio client noting, when the stored view is read, whether the server (asked
    on another connection) had the channel's subscription in place (all else goes to the
    real client)."""

    def __init__(self, client: Any, server: Any, channel: str) -> None:
        self.client, self.server, self.channel = client, server, channel
        self.subscribed_at_get: bool | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    async def get(self, key: str) -> Any:
        reply = self.server.execute_command("PUBSUB", "SHARDNUMSUB", self.channel)
        self.subscribed_at_get = int(reply[1]) == 1
        return await self.client.get(key)


@pytest.mark.single_node("the spy wraps one node's client and asks that node for its subscriptions")
def test_an_async_follower_reads_the_stored_view_only_once_its_subscription_is_confirmed(
    redis_server: Any, redis_client: Any
) -> None:
    channel = channel_of(SPACE, "s000", "1")

    async def scenario() -> tuple[int, bool | None]:
        client = connect_async(redis_server.url)
        try:
            spy = _Spy(client, redis_client, channel)
            redis_client.set(channel, b'{"version": 3}')
            stream = follow_async(spy, SPACE, "s000", "1", cursor=0)  # type: ignore[arg-type]
            first = msgspec.json.decode(await anext(stream))["version"]
            await stream.aclose()
            return first, spy.subscribed_at_get
        finally:
            await client.aclose()

    assert asyncio.run(scenario()) == (3, True)


def test_an_unreachable_server_fails_every_append_in_flight_with_store_unavailable(
    redis_server: Any,
) -> None:
    """Appends in flight together share a pipeline; when Redis is gone each of them gets
    the typed error (after the client's retries), and so do reads."""
    async def scenario() -> list[BaseException | None]:
        client = connect_async(redis_server.url, retries=1, socket_timeout=0.5)
        store = AsyncRedisEventStore(client, keys=SPACE)
        try:
            await store.append("u0", [b"a"], expected=EMPTY_HEAD, command_id="c0", outcome=b"")
            redis_server.kill()
            results = await asyncio.gather(
                *(store.append(f"u{n}", [b"b"], expected=EMPTY_HEAD, command_id="c1", outcome=b"")
                  for n in range(1, 6)),
                store.read("u0"),
                return_exceptions=True,
            )
            return [r if isinstance(r, BaseException) else None for r in results]
        finally:
            await client.aclose()

    errors = asyncio.run(scenario())
    assert all(isinstance(e, StoreUnavailable) for e in errors), errors
    assert all(isinstance(e, StoreUnavailable) and e.code == "store_unavailable" for e in errors)


def test_the_async_path_carries_on_after_a_server_restart(redis_server: Any, redis_client: Any) -> None:
    """A restarted server has an empty script cache and new connections: the next
    command reconnects, gets NOSCRIPT, loads the script and appends."""

    async def scenario() -> tuple[list[int], list[int]]:
        client = connect_async(redis_server.url)
        try:
            tables = AsyncTables(client, seed=8)
            await tables.open(["r000", "r001"])
            before = [version for _, version in tables.states.values()]
            redis_server.stop()
            redis_server.restart()
            await tables.play(hands=1, steps=5)
            return before, [version for _, version in tables.states.values()]
        finally:
            await client.aclose()

    before, after = asyncio.run(scenario())
    store = RedisEventStore(redis_client, keys=SPACE)
    assert after == [store.head("r000").version, store.head("r001").version]
    assert all(a >= b + 5 for a, b in zip(after, before, strict=True))
