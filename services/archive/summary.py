"""What the archive records beside a table's events: its row (game, name, times, head)
and one row per hand (how it ended, its scores), read from the events with the games'
own members (``domain/games.py``: ``deal_type``, ``ends_hand``), never by naming a game."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from domain.codec import decode_event
from domain.games import TableCreatedEvent
from domain.registry import game_of
from domain.table import TableClosed, TableEvent
from services.archive.postgres import HandRow, TableRow
from services.store.base import StoredEvent

CUT_SHORT = "cut_short"  # the table closed during the hand (its deal is revealed, §2)
REDEALT = "redealt"  # a new deal came before the hand ended


class NotArchivable(ValueError):
    """The stream is not a closed table's: it lacks its creation or its close."""


def _tag(event: msgspec.Struct) -> str:
    return str(type(event).__struct_config__.tag)


def summarize(table_id: str, stored: Sequence[StoredEvent], *, closed_ms: int,
              created_ms: int | None) -> tuple[TableRow, list[HandRow], int]:
    """The table's row, its hands, and how many seats it has (for its views' names)."""
    events: list[TableEvent] = [decode_event(e.data) for e in stored]
    if not events or not isinstance(events[0], TableCreatedEvent):
        raise NotArchivable(f"table {table_id}'s stream does not start with its creation")
    if not isinstance(events[-1], TableClosed):
        raise NotArchivable(f"table {table_id}'s stream does not end with table_closed")
    created = events[0]
    game = game_of(created.rules)
    hands: list[HandRow] = []
    open_hand: int | None = None
    for event in events:
        if isinstance(event, game.deal_type):
            if open_hand is not None:
                hands.append(HandRow(open_hand, REDEALT))
            open_hand = len(hands)
        elif open_hand is not None and isinstance(event, game.ends_hand):
            # both games' scoring events name each seat's score ``scores``; the others end a
            # hand without one (passed out, misdeal, abandoned)
            scores = getattr(event, "scores", None)
            hands.append(HandRow(open_hand, _tag(event), None if scores is None else tuple(scores)))
            open_hand = None
        elif open_hand is not None and isinstance(event, TableClosed):
            hands.append(HandRow(open_hand, CUT_SHORT))
            open_hand = None
    row = TableRow(table_id=table_id, variant=created.rules.variant, name=created.name,
                   closed_ms=closed_ms, created_ms=created_ms, version=stored[-1].version,
                   head=stored[-1].hash)
    return row, hands, game.players(created.rules)
