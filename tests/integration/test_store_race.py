"""Many writers racing on one table against a real redis-server."""

from __future__ import annotations

from collections import Counter as Tally
from typing import Any

import pytest
import redis

from domain.errors import MightyError
from services.commands.handler import CommandHandler, CommandResult
from services.redis_runtime import PrivateRedis
from services.store import (
    EMPTY_HEAD,
    RedisEventStore,
    VersionConflict,
    connect,
)
from services.store.base import verify_chain
from tests.counter import Add, Added, CounterDecider, Open
from tests.integration.writers import run_writers

pytestmark = pytest.mark.integration

WRITERS = 50
COMMANDS_EACH = 8


def test_fifty_writers_on_one_table_keep_versions_contiguous(
    redis_server: PrivateRedis, redis_client: redis.Redis
) -> None:
    store = RedisEventStore(redis_client)
    CommandHandler(store, CounterDecider()).handle("race", Open(5), command_id="open")

    def writer(i: int) -> list[tuple[str, CommandResult[Any] | MightyError]]:
        client = connect(redis_server.url)  # its own connection and cache, like a process
        handler = CommandHandler(RedisEventStore(client), CounterDecider())
        outcomes: list[tuple[str, CommandResult[Any] | MightyError]] = []
        for n in range(COMMANDS_EACH):
            cid = f"w{i}-{n}"
            try:
                outcomes.append((cid, handler.handle("race", Add(i % 5, i + 1), command_id=cid)))
            except VersionConflict as error:  # clean: retries spent, nothing written
                outcomes.append((cid, error))
        client.close()
        return outcomes

    results = run_writers(WRITERS, writer)
    unexpected = [r for r in results if not isinstance(r, list)]
    assert unexpected == []
    outcomes = [o for r in results for o in r]
    acked = {cid: r for cid, r in outcomes if isinstance(r, CommandResult)}
    conflicted = {cid for cid, r in outcomes if isinstance(r, VersionConflict)}
    assert len(acked) + len(conflicted) == WRITERS * COMMANDS_EACH
    print(f"{len(acked)} acked, {len(conflicted)} conflicts")
    assert len(acked) > WRITERS  # most commands get through

    events = store.read("race")
    assert [e.version for e in events] == list(range(1, len(acked) + 2))
    assert verify_chain(EMPTY_HEAD, events) == store.head("race")
    by_command = Tally(e.command_id for e in events)
    assert by_command == Tally({"open": 1, **{cid: 1 for cid in acked}})  # none lost or doubled
    assert not conflicted & set(by_command)
    assert all(r.version == events[r.version - 1].version for r in acked.values())
    assert all(events[r.version - 1].command_id == cid for cid, r in acked.items())

    decoded = [CounterDecider().decode_event(e.data) for e in events[1:]]
    totals = [0] + [e.total for e in decoded if isinstance(e, Added)]
    steps = [e.amount for e in decoded if isinstance(e, Added)]
    assert all(
        b - a == s for a, b, s in zip(totals[:-1], totals[1:], steps, strict=True)
    )  # no lost update

    feed = store.read_feed(store.partition_of("race"), count=10_000)
    assert [(f.version, f.hash) for f in feed] == [(e.version, e.hash) for e in events]


def test_fifty_raw_appends_at_one_version_let_exactly_one_through(
    redis_server: PrivateRedis, redis_client: redis.Redis
) -> None:
    store = RedisEventStore(redis_client)

    def writer(i: int) -> Any:
        client = connect(redis_server.url)
        try:
            return RedisEventStore(client).append(
                "t1", [f"e{i}".encode()], expected=EMPTY_HEAD, command_id=f"c{i}", outcome=b"o"
            )
        finally:
            client.close()

    results = run_writers(WRITERS, writer)
    winners = [r for r in results if not isinstance(r, BaseException)]
    assert len(winners) == 1
    assert all(
        isinstance(r, VersionConflict) and r.actual == 1 for r in results if r not in winners
    )
    assert len(store.read("t1")) == 1
