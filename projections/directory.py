"""The lobby directory: the tables one can join or watch, with seats, rule set and status.

One hash per partition, ``dir``, one field per table that is not closed; a closed table
leaves it for the partition's ``dir:closed`` hash (the finished tables a lobby lists; its
ledger and views stay too). A lobby reads the hash of every partition and merges them
(``services/projection/read.py``).
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec.structs import replace

from domain.games import TableCreatedEvent
from domain.registry import game_of, game_of_event
from domain.table import (
    PlayerJoined,
    PlayerLeft,
    SeatAway,
    TableClosed,
    TableEvent,
    TableStarted,
    seated,
)
from projections.docs import Decoder, DocKey, Docs, encode

DIRECTORY_DOC = "dir"
CLOSED_DOC = "dir:closed"


class DirectoryEntry(msgspec.Struct, frozen=True, kw_only=True):
    table_id: str
    version: int = 0  # the table version of the entry's last change
    name: str = ""
    status: str = "new"  # open: seats free to take; playing; closed
    rules: dict[str, Any] | None = None  # the rule set, for a game whose tables have options (Mighty)
    rules_fingerprint: str | None = None
    seats: tuple[str | None, ...] = ()
    open_seats: int = 0
    hands_played: int = 0  # scored, passed out or thrown in (Mitigati: played or abandoned)
    # The game, for a table whose rule set has no options ("mitigati": ``rules`` stays
    # None). UNSET, left out, for Mighty, whose entries keep their bytes
    # (``Game.directory_fields`` says which).
    variant: str | msgspec.UnsetType = msgspec.UNSET
    # The match, as the table was created (domain.table.CreateTable), and its course.
    hands: int = 0  # scored hands that end the match (0: no end)
    hands_scored: int = 0
    turn_seconds: int = 0
    bots: dict[str, str] = {}  # seat (as text) -> bot level
    created: str = ""
    created_by: str | None = None
    away: tuple[int, ...] = ()  # seats whose players left after the start: a bot plays them
    reason: str = ""  # why a closed table closed (match_over, resigned, ...)
    # A private table (domain/table.py, CreateTable): True, listed to nobody; UNSET, left
    # out, on a public table, whose entry keeps its bytes. The invite's hash is not here.
    private: bool | msgspec.UnsetType = msgspec.UNSET
    # Learners' hints allowed (CreateTable.hints): True; UNSET, left out, on any other table.
    hints: bool | msgspec.UnsetType = msgspec.UNSET


def game_fields(entry: DirectoryEntry) -> dict[str, Any]:
    """What the entry holds of its game's rule set: the ``Game.directory_fields`` the
    fold put there (``registry.rules_of_directory`` makes the rule set again)."""
    fields: dict[str, Any] = {}
    if entry.rules is not None:
        fields["rules"] = entry.rules
    if isinstance(entry.variant, str):
        fields["variant"] = entry.variant
    return fields


def fold(entry: DirectoryEntry, version: int, event: TableEvent) -> DirectoryEntry:
    """The entry after ``event``; the very same object if nothing a lobby shows changed."""
    if isinstance(event, PlayerJoined | PlayerLeft):
        seats = seated(entry.seats, event)
        return replace(entry, version=version, seats=seats, open_seats=seats.count(None))
    if isinstance(event, TableCreatedEvent):
        game = game_of(event.rules)
        n = game.players(event.rules)
        return replace(entry, version=version, name=event.name, status="open",
                       rules_fingerprint=event.rules_fingerprint, seats=(None,) * n, open_seats=n,
                       hands=event.hands, turn_seconds=event.turn_seconds, bots=event.bots,
                       created=event.created, created_by=event.created_by,
                       private=True if event.private is True else msgspec.UNSET,
                       hints=True if event.hints is True else msgspec.UNSET,
                       **game.directory_fields(event.rules))
    hand_game = game_of_event(event)
    if hand_game is not None and isinstance(event, hand_game.ends_hand):
        scored = isinstance(event, hand_game.scores_hand)  # what a match counts
        return replace(entry, version=version, hands_played=entry.hands_played + 1,
                       hands_scored=entry.hands_scored + scored)
    if isinstance(event, SeatAway):
        away = set(entry.away) | {event.seat} if event.away else set(entry.away) - {event.seat}
        return replace(entry, version=version, away=tuple(sorted(away)))
    if isinstance(event, TableStarted):
        return replace(entry, version=version, status="playing")
    if isinstance(event, TableClosed):
        return replace(entry, version=version, status="closed", reason=event.reason)
    return entry


_decode = Decoder(DirectoryEntry).decode


def decode_entry(data: bytes) -> DirectoryEntry:
    return _decode(data)


class DirectoryProjection:
    """The directory entries of one partition's tables."""

    kind = "directory"

    def __init__(self) -> None:
        self.entries: dict[str, DirectoryEntry] = {}
        self._dirty: dict[str, None] = {}

    def known(self, table_id: str) -> bool:
        return table_id in self.entries

    def restore(self, table_id: str, stored: bytes | None) -> None:
        self.entries[table_id] = DirectoryEntry(table_id=table_id) if stored is None else decode_entry(stored)

    def apply(self, table_id: str, version: int, event: TableEvent, at_ms: int | None = None) -> None:
        del at_ms  # when an event was appended changes no score or lobby entry
        before = self.entries.get(table_id) or DirectoryEntry(table_id=table_id)
        after = fold(before, version, event)
        if after is not before:
            self.entries[table_id] = after
            self._dirty[table_id] = None

    def flush(self) -> Docs:
        docs: Docs = {}
        for table_id in self._dirty:
            entry = self.entries[table_id]
            closed = entry.status == "closed"
            docs[DocKey(DIRECTORY_DOC, table_id)] = None if closed else encode(entry)
            if closed:  # nothing follows a close: list it with the finished, free its memory
                docs[DocKey(CLOSED_DOC, table_id)] = encode(entry)
                del self.entries[table_id]
        self._dirty.clear()
        return docs
