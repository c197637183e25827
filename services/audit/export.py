"""``mighty export``: a stored hand as a hand file (docs/hand-files.md,
Mighty's and "Mitigati files") that ``mighty replay`` replays to the same result."""

from __future__ import annotations

from typing import Any

from domain.codec import decode_event
from domain.games import AnyGame
from domain.registry import game_of_event
from domain.table import DealRevealed, TableClosed, TableEvent
from services.store.base import StoredEvent, one_append


class HandInProgress(LookupError):
    """The hand asked for has not ended: its cards are still secret (docs/rules/mighty.md §8)."""


def _deal_game(event: TableEvent) -> AnyGame | None:
    """The game whose deal ``event`` is, or None when it deals no hand."""
    game = game_of_event(event)
    return game if game is not None and isinstance(event, game.deal_type) else None


def hands_dealt(stored: list[StoredEvent]) -> int:
    """How many hands a table has dealt (each game's deal event)."""
    return sum(_deal_game(decode_event(e.data)) is not None for e in stored)


def export_hand(table_id: str, stored: list[StoredEvent], hand_no: int | None,
                *, in_progress: bool = False) -> dict[str, Any]:
    """A hand file for one stored hand: the last one by default.

    A hand file holds every seat's cards, so a hand is exported once it has ended (its
    deal revealed, or its table closed): before that, §8 keeps the hands secret.
    ``in_progress`` is the operator's override."""
    events = [decode_event(e.data) for e in stored]
    starts = [i for i, e in enumerate(events) if _deal_game(e) is not None]
    if not starts:
        raise LookupError(f"table {table_id} has dealt no hand")
    if hand_no is None:
        index = starts[-1]
    else:
        found = [i for i in starts if getattr(events[i], "hand_no", None) == hand_no]
        if not found:
            raise LookupError(f"table {table_id} has no hand {hand_no}")
        index = found[0]
    dealt = events[index]
    game = _deal_game(dealt)
    assert game is not None
    number = game.deal_proof(dealt).hand_no
    over = any(isinstance(e, TableClosed) or (isinstance(e, DealRevealed) and e.hand_no == number)
               for e in events[index + 1:])
    if not over and not in_progress:
        raise HandInProgress(f"hand {number} of table {table_id} has not ended: its cards stay "
                             "secret until it does (--in-progress exports it anyway)")
    commands = []
    for group in _by_command(stored[index + 1:], events[index + 1:]):
        if any(_deal_game(event) is not None for event in group):  # the next hand
            break
        if isinstance(group[0], game.hand_events) and (command := game.command_of(group)) is not None:
            commands.append(command)
    return game.hand_file(dealt, commands)


def _by_command(stored: list[StoredEvent], events: list[TableEvent]) -> list[list[TableEvent]]:
    """The events, in runs appended by one command each (their stored command ids and
    append times: ``one_append``)."""
    groups: list[list[TableEvent]] = []
    first: StoredEvent | None = None
    for entry, event in zip(stored, events, strict=True):
        if groups and first is not None and one_append(first, entry):
            groups[-1].append(event)
        else:
            groups.append([event])
            first = entry
    return groups
