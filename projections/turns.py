"""Whose turn it is at each table: the document that wakes the service's players.

The views projection keeps, per partition, the hash ``turns`` (field: the table id) of
every table where a seat is to act or the service is to deal, at the table's version
(the same atomic write as the views it goes with). Each change of a field is also
announced on the one channel of the hash (``mighty:{pNN}:turns``, see
``services/projection/store.py``), so a bot worker subscribes to one channel per
partition and learns of every turn without knowing the tables beforehand, and without
reading any store in a loop. A table where nobody is to act has no field.

A turn says who is to act and, when the table knows, at which bot level: a seat given
to a bot at the table's creation (``TableCreated.bots``), or a seat whose player left
the started table (``SeatAway``: the service plays it at ``beginner``). Nothing hidden
is here: the seat, its holder, the public rule set.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from domain.table import TableState

TURNS_DOC: Final = "turns"
AWAY_LEVEL: Final = "beginner"  # the level the service plays an away seat at


class Turn(msgspec.Struct, frozen=True, kw_only=True):
    table_id: str
    version: int  # the table's version the turn is at
    hand_no: int  # hands dealt so far
    seat: int | None  # the seat to act; None when the service is to deal
    player: str | None  # the seat's holder
    level: str | None  # a bot's level; None: a person (or a bot the table was not told of)
    away: bool = False  # the seat's player left: the service plays it for them
    deal: bool = False  # the hand is over (or none dealt yet): the service deals next
    rules: dict[str, Any] = {}  # the game's directory fields of the rule set (public)
    turn_seconds: int = 0  # the table's time for a turn (0: none): the timer worker's cue
    # when the turn ends (ms since the epoch; projections/views.py ``turn_deadline``), the
    # same instant the seat's view shows; None when the store did not keep the append time
    deadline_ms: int | None = None


def turn_of(table: TableState, version: int, bots: dict[str, str], turn_seconds: int = 0,
            deadline_ms: int | None = None) -> Turn | None:
    """The table's turn at ``version``, or None when nobody is to act (not started, closed)."""
    if table.status != "playing" or table.rules is None:
        return None
    game = table.game
    rules = game.directory_fields(table.rules)
    if table.awaiting_deal:
        return Turn(table_id=table.table_id, version=version, hand_no=table.hand_no, seat=None, player=None,
                    level=None, deal=True, rules=rules, turn_seconds=turn_seconds)
    assert table.hand is not None
    seat = game.to_act(table.hand)
    if seat is None:
        return None
    away = seat in table.away
    level = AWAY_LEVEL if away else bots.get(str(seat))
    return Turn(table_id=table.table_id, version=version, hand_no=table.hand_no, seat=seat,
                player=table.seats[seat], level=level, away=away, rules=rules, turn_seconds=turn_seconds,
                deadline_ms=deadline_ms)


decode_turn = msgspec.json.Decoder(Turn).decode
