"""A tiny decider (a turn-taking counter) that exercises the store without the game rules.

Tests use it; it is also the smallest example of what
``CommandHandler`` needs from a game: initial_state, decide, evolve and an event codec.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import assert_never

import msgspec

from domain.errors import MalformedCommand, NotYourTurn, TableError


class Open(msgspec.Struct, frozen=True, tag="open"):
    seats: int


class Add(msgspec.Struct, frozen=True, tag="add"):
    """Any seated player may add at any time (no turn): good for racing writers."""

    seat: int
    amount: int


class Play(msgspec.Struct, frozen=True, tag="play"):
    """Seats take turns."""

    seat: int


class Note(msgspec.Struct, frozen=True, tag="note"):
    seat: int
    text: str


Command = Open | Add | Play | Note


class Opened(msgspec.Struct, frozen=True, tag="opened"):
    seats: int


class Added(msgspec.Struct, frozen=True, tag="added"):
    seat: int
    amount: int
    total: int


class Played(msgspec.Struct, frozen=True, tag="played"):
    seat: int
    next_seat: int


class Noted(msgspec.Struct, frozen=True, tag="noted"):
    seat: int
    text: str


Event = Opened | Added | Played | Noted


class Counter(msgspec.Struct, frozen=True):
    table_id: str
    seats: int = 0
    total: int = 0
    turn: int = 0


_encode = msgspec.json.Encoder().encode
_decode_event = msgspec.json.Decoder(Event).decode
_decode_command = msgspec.json.Decoder(Command).decode


def decode_command(data: bytes) -> Command:
    try:
        return _decode_command(data)
    except msgspec.DecodeError as error:
        raise MalformedCommand(f"not a counter command: {error}") from error


def encode_command(command: Command) -> bytes:
    return _encode(command)


class CounterDecider:
    def initial_state(self, table_id: str) -> Counter:
        return Counter(table_id)

    def decide(self, state: Counter, command: object) -> Sequence[Event]:
        if isinstance(command, Open):
            return _open(state, command)
        if not isinstance(command, Add | Play | Note):
            raise MalformedCommand(f"not a counter command: {type(command).__name__}")
        _check_seat(state, command.seat)
        if isinstance(command, Add):
            return _add(state, command)
        if isinstance(command, Play):
            return _play(state, command)
        if not isinstance(command.text, str):
            raise MalformedCommand("a note's text is a string")
        return [Noted(command.seat, command.text)]

    def evolve(self, state: Counter, event: Event) -> Counter:
        if isinstance(event, Opened):
            return msgspec.structs.replace(state, seats=event.seats)
        if isinstance(event, Added):
            return msgspec.structs.replace(state, total=event.total)
        if isinstance(event, Played):
            return msgspec.structs.replace(state, turn=event.next_seat)
        if isinstance(event, Noted):
            return state
        assert_never(event)

    def is_closed(self, state: Counter) -> bool:
        return False  # a counter table is never closed

    def encode_event(self, event: Event) -> bytes:
        return _encode(event)

    def decode_event(self, data: bytes) -> Event:
        return _decode_event(data)


def _open(state: Counter, command: Open) -> Sequence[Event]:
    if state.seats:
        raise TableError("table_exists", f"table {state.table_id} is already open")
    if not isinstance(command.seats, int) or not 1 <= command.seats <= 10:
        raise MalformedCommand("a counter table has 1 to 10 seats")
    return [Opened(command.seats)]


def _check_seat(state: Counter, seat: object) -> None:
    if not state.seats:
        raise TableError("unknown_table", f"there is no table {state.table_id}")
    if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < state.seats:
        raise TableError("no_such_seat", f"seat {seat!r} is not a seat at this table")


def _add(state: Counter, command: Add) -> Sequence[Event]:
    amount = command.amount
    if not isinstance(amount, int) or isinstance(amount, bool) or not -1000 <= amount <= 1000:
        raise MalformedCommand(f"an amount is a whole number in -1000..1000, not {amount!r}")
    return [Added(command.seat, amount, state.total + amount)]


def _play(state: Counter, command: Play) -> Sequence[Event]:
    if command.seat != state.turn:
        raise NotYourTurn(f"it is seat {state.turn}'s turn, not seat {command.seat}'s")
    return [Played(command.seat, (command.seat + 1) % state.seats)]
