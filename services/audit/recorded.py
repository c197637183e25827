"""The command a stored event records: what ``mighty verify`` decides again and ``mighty
export`` writes to a hand file. A hand event's is its game's (``Game.command_of``)."""

from __future__ import annotations

from collections.abc import Sequence

from domain.codec import TableCommand
from domain.games import TableCreatedEvent
from domain.registry import game_of, game_of_event
from domain.table import (
    AWAY_GONE,
    CloseTable,
    CreateTable,
    DealHand,
    DealRevealed,
    JoinSeat,
    LeaveSeat,
    PlayerJoined,
    PlayerLeft,
    PlayerResigned,
    Resign,
    SeatAway,
    SendAway,
    SetAway,
    StartTable,
    TableClosed,
    TableEvent,
    TableStarted,
    TimeoutsReset,
    TimeOutTurn,
    TurnTimedOut,
)


def command_of(events: Sequence[TableEvent]) -> tuple[TableCommand, str | None] | None:
    """The command (and sender) that appended ``events`` (one command's, in order)
    records, or None for derived events."""
    event = events[0]
    if isinstance(event, TurnTimedOut):  # the service's move for the seat follows, same command
        move = command_of(events[1:]) if len(events) > 1 else None
        if move is None:
            return None
        # the rule in force, as the event recorded it (a SeatAway closing the append follows from it)
        away_after = event.away_after if isinstance(event.away_after, int) else 0
        return TimeOutTurn(seat=event.seat, move=move[0], reason=event.reason, away_after=away_after), None
    if isinstance(event, TimeoutsReset | SeatAway) and len(events) > 1:
        # a seat's own move, which first ended its run of timeouts or brought it back
        move = command_of(events[1:])
        return None if move is None else (move[0], event.player)
    if isinstance(event, DealRevealed):  # the deal of a hand cut short by the service's close
        closed = len(events) > 1 and isinstance(events[1], TableClosed)
        return command_of(events[1:]) if closed else None
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
    if isinstance(event, TableClosed):  # a player's (before the start), or the service's
        return CloseTable(reason=event.reason), event.closed_by if isinstance(event.closed_by, str) else None
    if isinstance(event, SeatAway):
        if event.reason == AWAY_GONE and isinstance(event.gone_s, int) and isinstance(event.after_s, int):
            # the service's, for want of a connection: the measure and the rule as recorded
            return SendAway(seat=event.seat, gone_s=event.gone_s, after_s=event.after_s), None
        return SetAway(seat=event.seat, away=event.away), event.player
    return None
