"""Score ledgers (docs/rules/mighty.md §6): per table, each hand's scores and running totals;
per player, totals, hands played, contracts declared and made.

The scores are facts of the game's result events: nothing is recomputed here. A table's
ledger is of its game's shape (``Game.new_ledger``: Mighty's ``HandLine``s with the
contract, Mitigati's ``DealLine``s, played or abandoned); this module folds the table's
own events (seats, close) into it and hands the game its hand events
(``Game.fold_ledger``). Players' contributions are the same ``PlayerLedger`` for every
game; a game without contracts adds to ``total`` and ``hands`` only.

Documents of a partition:
- ``ledger:t:<table>``: the table's ledger;
- hash ``ledger:players``, one field per player: that player's totals **over the tables
  of this partition**. A player's ledger is the sum of their fields in every partition
  (``combine``). Each partition's contribution is written in the same atomic step as
  that partition's checkpoint, so no cross-slot write is ever needed (docs/workers.md).
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec
from msgspec.structs import replace

from domain.games import AnyGame, LedgerLine, TableCreatedEvent, TableLedger
from domain.registry import DEFAULT, game_named, game_of, game_of_event
from domain.table import PlayerJoined, PlayerLeft, TableClosed, TableEvent, seated
from projections.docs import Decoder, DocKey, Docs, encode

PLAYERS_DOC = "ledger:players"
AnyTableLedger = TableLedger  # a table's ledger, of its game's shape


class PlayerLedger(msgspec.Struct, frozen=True, kw_only=True):
    player: str
    total: int = 0
    hands: int = 0
    declared: int = 0
    made: int = 0


def table_name(table_id: str) -> str:
    return f"ledger:t:{table_id}"


class Uncreated(msgspec.Struct, frozen=True, kw_only=True):
    """The ledger of a table before its ``TableCreated``: no game yet, so no shape."""

    table_id: str
    variant: None = None
    seats: tuple[str | None, ...] = ()
    closed: bool = False
    hands: tuple[LedgerLine, ...] = ()
    totals: tuple[int, ...] = ()

    def seated(self, version: int, seats: tuple[str | None, ...]) -> Uncreated:
        return replace(self, seats=seats)

    def closed_at(self, version: int) -> Uncreated:
        return replace(self, closed=True)


def _game(variant: str | None) -> AnyGame:
    return DEFAULT if variant is None else game_named(variant)


def fold(ledger: AnyTableLedger, version: int, event: TableEvent) -> AnyTableLedger:
    """The table's ledger after ``event``; the very same object if nothing changed."""
    if isinstance(event, PlayerJoined | PlayerLeft):
        return ledger.seated(version, seated(ledger.seats, event))
    if isinstance(event, TableClosed):
        return ledger.closed_at(version)
    if isinstance(event, TableCreatedEvent):
        created: AnyTableLedger = game_of(event.rules).new_ledger(ledger.table_id, version, event.rules)
        return created
    game = game_of_event(event)
    if game is None or isinstance(ledger, Uncreated):
        return ledger  # the table's other events; nothing of a hand before the table exists
    folded: AnyTableLedger = game.fold_ledger(ledger, version, event)
    return folded


def table_ledger_of(table_id: str, events: Iterable[tuple[int, TableEvent]]) -> AnyTableLedger:
    """The table's ledger folded from its (version, event) pairs: the document the
    projection keeps for it while it is in Redis, folded again for an archived table,
    whose document the archive deletes (docs/archive.md)."""
    ledger: AnyTableLedger = Uncreated(table_id=table_id)
    for version, event in events:
        ledger = fold(ledger, version, event)
    return ledger


def credit(player: PlayerLedger, line: LedgerLine, seat: int) -> PlayerLedger:
    declared = line.declared_by(seat)
    return replace(
        player, total=player.total + line.scores[seat], hands=player.hands + 1,
        declared=player.declared + declared, made=player.made + line.made_by(seat),
    )


def combine(name: str, parts: Iterable[PlayerLedger]) -> PlayerLedger:
    """A player's ledger over every partition: the sum of the partitions' contributions."""
    total = PlayerLedger(player=name)
    for part in parts:
        total = replace(total, total=total.total + part.total, hands=total.hands + part.hands,
                        declared=total.declared + part.declared, made=total.made + part.made)
    return total


class _Variant(msgspec.Struct):
    variant: str | None = None


_decode_variant = Decoder(_Variant).decode  # reads that one field, skips the rest
_decode_player = Decoder(PlayerLedger).decode
_table_decoders: dict[str, Decoder[AnyTableLedger]] = {}  # by game


def decode_table(data: bytes) -> AnyTableLedger:
    """A table's ledger document, of its game's shape: its ``variant`` says which."""
    game = _game(_decode_variant(data).variant)
    decoder = _table_decoders.get(game.name)
    if decoder is None:
        decoder = _table_decoders[game.name] = Decoder(game.ledger_type)
    return decoder.decode(data)


def decode_player(data: bytes) -> PlayerLedger:
    return _decode_player(data)


class LedgerProjection:
    """The ledgers of one partition: its tables' and its players' contributions."""

    kind = "ledger"

    def __init__(self) -> None:
        self.tables: dict[str, AnyTableLedger] = {}
        self.players: dict[str, PlayerLedger] = {}
        self._dirty_tables: dict[str, None] = {}
        self._dirty_players: dict[str, None] = {}

    def known(self, table_id: str) -> bool:
        return table_id in self.tables

    def restore(self, table_id: str, stored: bytes | None) -> None:
        self.tables[table_id] = Uncreated(table_id=table_id) if stored is None else decode_table(stored)

    def restore_players(self, stored: dict[str, bytes]) -> None:
        self.players = {name: decode_player(data) for name, data in stored.items()}

    def apply(self, table_id: str, version: int, event: TableEvent, at_ms: int | None = None) -> None:
        del at_ms  # when an event was appended changes no score or lobby entry
        before = self.tables.get(table_id) or Uncreated(table_id=table_id)
        after = fold(before, version, event)
        if after is before:
            return
        self.tables[table_id] = after
        self._dirty_tables[table_id] = None
        if len(after.hands) > len(before.hands):  # a hand's result: its players' ledgers change
            line = after.hands[-1]
            for seat, name in enumerate(line.players):
                if name is not None:
                    self.players[name] = credit(self.players.get(name) or PlayerLedger(player=name), line, seat)
                    self._dirty_players[name] = None

    def flush(self) -> Docs:
        docs: Docs = {DocKey(table_name(t)): encode(self.tables[t]) for t in self._dirty_tables}
        docs.update((DocKey(PLAYERS_DOC, name), encode(self.players[name])) for name in self._dirty_players)
        for table_id in self._dirty_tables:
            if self.tables[table_id].closed:  # nothing follows a close: free its memory
                del self.tables[table_id]
        self._dirty_tables.clear()
        self._dirty_players.clear()
        return docs
