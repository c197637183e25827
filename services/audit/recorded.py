"""The command a stored event records: what ``mighty verify`` decides again and ``mighty
export`` writes to a hand file. A hand event's is its game's (``Game.command_of``)."""

from __future__ import annotations

from collections.abc import Sequence

from domain.codec import TableCommand
from domain.games import TableCreatedEvent
from domain.registry import game_of, game_of_event
from domain.table import (
    CloseTable,
    CreateTable,
    DealHand,
    JoinSeat,
    LeaveSeat,
    PlayerJoined,
    PlayerLeft,
    PlayerResigned,
    Resign,
    SeatAway,
    SetAway,
    StartTable,
    TableClosed,
    TableEvent,
    TableStarted,
    TimeOutTurn,
    TurnTimedOut,
)


def command_of(events: Sequence[TableEvent]) -> tuple[TableCommand, str | None] | None:
    """The command (and sender) that appended ``events`` (one command's, in order)
    records, or None for derived events."""
    event = events[0]
    if isinstance(event, TurnTimedOut):  # the service's move for the seat follows, same command
        move = command_of(events[1:]) if len(events) > 1 else None
        return None if move is None else (TimeOutTurn(seat=event.seat, move=move[0], reason=event.reason), None)
    game = game_of_event(event)
    if game is not None and not isinstance(event, TableCreatedEvent):
        if isinstance(event, game.deal_type):
            salt = game.deal_proof(event).salt
            return DealHand(order=game.deal_order(event), salt=salt or ""), None
        command = game.command_of(events)
        return None if command is None else (command, None)
    return _table_command_of(event)


def _table_command_of(event: TableEvent) -> tuple[TableCommand, str | None] | None:
    if isinstance(event, TableCreatedEvent):
        options = game_of(event.rules).table_options(event.rules)
        return CreateTable(variant=event.rules.variant, options=options, name=event.name, hands=event.hands,
                           turn_seconds=event.turn_seconds, bots=event.bots, created=event.created), event.created_by
    if isinstance(event, PlayerJoined):
        return JoinSeat(seat=event.seat), event.player
    if isinstance(event, PlayerLeft):
        return LeaveSeat(seat=event.seat), event.player
    if isinstance(event, TableStarted):
        return StartTable(first_dealer=event.first_dealer), event.started_by
    if isinstance(event, PlayerResigned):
        return Resign(seat=event.seat), None
    if isinstance(event, TableClosed):
        return CloseTable(reason=event.reason), None
    if isinstance(event, SeatAway):
        return SetAway(seat=event.seat, away=event.away), event.player
    return None
