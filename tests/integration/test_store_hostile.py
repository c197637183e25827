"""Malformed or hostile input on a real redis-server: a typed refusal, nothing written.

The whole Redis keyspace is compared before and after each refusal, so a stray write to
any key (stream, feed, version, command ids) fails the test.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
import redis

from domain.errors import MalformedCommand, MightyError, TableError, WrongPhase
from domain.table import CreateTable, JoinSeat, LeaveSeat, Submission
from services.commands.handler import CommandHandler
from services.commands.tables import TableHandler, submission_from_wire, table_handler
from services.players import next_submission, seating
from services.store import (
    BadCommandId,
    BadTableId,
    PayloadTooLarge,
    RedisEventStore,
)
from tests.counter import Add, CounterDecider, Note, Open

pytestmark = pytest.mark.integration

PLAYERS = ["ana", "bo", "cy", "di", "ed"]


def keyspace(client: redis.Redis) -> dict[bytes, Any]:
    """Every key and its full contents."""
    found: dict[bytes, Any] = {}
    for key in client.scan_iter(count=1000):
        kind = client.type(key)
        if kind == b"stream":
            found[key] = client.xrange(key)
        elif kind == b"hash":
            found[key] = client.hgetall(key)
        else:
            found[key] = (kind, client.dump(key))
    return found


@pytest.fixture
def tables(redis_client: redis.Redis) -> TableHandler:
    """A mighty-5 table 't1' in its first hand, seats 0..4 held by ana..ed."""
    handler = table_handler(RedisEventStore(redis_client))
    subs = [Submission(CreateTable(), "ana"), *seating(PLAYERS)]
    for n, sub in enumerate(subs):
        handler.handle("t1", sub, command_id=f"setup-{n}")
    deal = next_submission(handler.state_of("t1")[0], random.Random(1))
    assert deal is not None
    handler.handle("t1", deal, command_id="deal-1")
    return handler


def refused(client: redis.Redis, call: Any, error: type[MightyError]) -> MightyError:
    before = keyspace(client)
    with pytest.raises(error) as caught:
        call()
    assert keyspace(client) == before
    return caught.value


def test_a_command_to_an_unknown_table_is_refused(
    redis_client: redis.Redis, tables: TableHandler
) -> None:
    sub = Submission(JoinSeat(seat=0), "ana")
    error = refused(redis_client, lambda: tables.handle("ghost", sub, command_id="c1"), TableError)
    assert error.code == "unknown_table"


@pytest.mark.parametrize(
    "wire",
    [
        b"not json",
        b"[1, 2]",
        b'{"type": "join"}',
        b'{"type": "join", "seat": "zero"}',
        b'{"type": "fly", "seat": 0}',
        {"type": "play", "seat": 0, "card": 7},
        {"type": "bid", "seat": 0, "points": 14, "trump": "S", "extra": object()},
        ["join", 0],
        12,
    ],
)
def test_commands_of_the_wrong_shape_are_refused(
    redis_client: redis.Redis, tables: TableHandler, wire: Any
) -> None:
    def send() -> None:
        tables.handle("t1", submission_from_wire(wire, "ana"), command_id="c1")

    refused(redis_client, send, MalformedCommand)


def test_a_command_object_that_is_not_a_table_command_is_refused(
    redis_client: redis.Redis, tables: TableHandler
) -> None:
    for thing in ({"type": "join", "seat": 0}, Submission("join", "ana"), None):  # type: ignore[arg-type]
        refused(
            redis_client, lambda t=thing: tables.handle("t1", t, command_id="c1"), MalformedCommand
        )


def test_a_huge_command_is_refused_before_it_is_decoded(
    redis_client: redis.Redis, tables: TableHandler
) -> None:
    huge = b'{"type": "create_table", "name": "' + b"x" * 1_000_000 + b'"}'
    refused(redis_client, lambda: submission_from_wire(huge, "ana"), PayloadTooLarge)
    as_dict = {"type": "create_table", "options": {str(i): i for i in range(50_000)}}
    refused(redis_client, lambda: submission_from_wire(as_dict, "ana"), PayloadTooLarge)


def test_a_seat_that_is_not_yours_is_refused(
    redis_client: redis.Redis, tables: TableHandler
) -> None:
    state = tables.state_of("t1")[0]
    seat = next(s for s, p in enumerate(state.seats) if p != "ana")
    sub = next_submission(state, random.Random(2))
    assert sub is not None and sub.player is not None
    stolen = Submission(sub.command, next(p for p in PLAYERS if p != sub.player))
    error = refused(redis_client, lambda: tables.handle("t1", stolen, command_id="c1"), TableError)
    assert error.code == "not_your_seat"
    leave = Submission(LeaveSeat(seat=seat), "ana")
    refused(redis_client, lambda: tables.handle("t1", leave, command_id="c2"), WrongPhase)


@pytest.mark.parametrize("table_id", ["", "../etc", "t1}{p00", "x" * 65, "t\u00e9", None, 1])
def test_a_bad_table_id_is_refused(
    redis_client: redis.Redis, tables: TableHandler, table_id: Any
) -> None:
    sub = Submission(JoinSeat(seat=0), "ana")
    refused(redis_client, lambda: tables.handle(table_id, sub, command_id="c1"), BadTableId)


@pytest.mark.parametrize("command_id", ["", "a b", "x" * 129, "c\r\n", None, 5])
def test_a_bad_command_id_is_refused(
    redis_client: redis.Redis, tables: TableHandler, command_id: Any
) -> None:
    sub = Submission(JoinSeat(seat=0), "ana")
    refused(redis_client, lambda: tables.handle("t1", sub, command_id=command_id), BadCommandId)


def test_counter_refusals_write_nothing(redis_client: redis.Redis) -> None:
    handler = CommandHandler(RedisEventStore(redis_client), CounterDecider())
    handler.handle("c1", Open(2), command_id="open")
    refused(redis_client, lambda: handler.handle("c1", Add(5, 1), command_id="x"), TableError)
    refused(
        redis_client, lambda: handler.handle("c1", Add(0, 10**9), command_id="x"), MalformedCommand
    )
    big = Note(0, "x" * 70_000)
    refused(redis_client, lambda: handler.handle("c1", big, command_id="x"), PayloadTooLarge)
