"""Score ledgers (rules/mighty.md §6): per table, each hand's scores and running totals;
per player, totals, hands played, contracts declared and made.

The scores are facts of the ``HandScored`` event: nothing is recomputed here.

A Mitigati table's ledger is a ``MitigatiTableLedger``: its lines are ``DealLine``s, one per
hand of the match, played (``mitigati_hand_scored``: card points and declarations) or
abandoned (``mitigati_deal_abandoned``: the bargain's payment is the hand's scores).
Players' contributions are the same ``PlayerLedger`` for both games; a Mitigati hand
declares no contract, so it adds to ``total`` and ``hands`` only.

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

from domain.mighty.events import FriendRevealed, HandDealt, HandScored
from domain.mitigati import events as mev
from domain.mitigati.rules import PLAYERS as MITIGATI_PLAYERS
from domain.table import (
    MitigatiTableCreated,
    PlayerJoined,
    PlayerLeft,
    TableClosed,
    TableCreated,
    TableEvent,
    seated,
)
from projections.docs import DocKey, Docs, encode

PLAYERS_DOC = "ledger:players"


class HandLine(msgspec.Struct, frozen=True, kw_only=True):
    hand_no: int
    declarer: int
    friend: int | None
    friends: tuple[int, ...] = ()  # every friend seat, sorted (two with two packs, mighty-large.md)
    contract: int
    trump: str
    made: bool
    declarer_side_points: int
    players: tuple[str | None, ...]  # who sat where for this hand
    scores: tuple[int, ...]
    totals: tuple[int, ...]  # running totals after this hand


class TableLedger(msgspec.Struct, frozen=True, kw_only=True):
    table_id: str
    version: int = 0  # the table version of the ledger's last change
    variant: str | None = None
    score_rule: str | None = None
    seats: tuple[str | None, ...] = ()
    hand_no: int = 0  # the hand being played
    revealed: tuple[int, ...] = ()  # friend seats revealed in it so far (public, §8)
    hands: tuple[HandLine, ...] = ()
    totals: tuple[int, ...] = ()
    closed: bool = False


class Bargain(msgspec.Struct, frozen=True, kw_only=True):
    """An abandoned Mitigati deal: the payer paid the seller ``amount`` in ``session``."""

    session: int
    payer: int
    seller: int
    amount: int


class DealLine(msgspec.Struct, frozen=True, kw_only=True):
    """One Mitigati hand of the match."""

    hand_no: int
    dealer: int
    outcome: str  # "finished" or "abandoned"
    points: tuple[int, ...] | None  # card points (finished only)
    bargain: Bargain | None  # the deal's bargain (abandoned only)
    players: tuple[str | None, ...]
    scores: tuple[int, ...]
    totals: tuple[int, ...]


class MitigatiTableLedger(msgspec.Struct, frozen=True, kw_only=True):
    table_id: str
    version: int = 0
    variant: str = "mitigati"
    seats: tuple[str | None, ...] = ()
    hand_no: int = 0
    dealer: int = 0  # the dealer of the hand being played
    hands: tuple[DealLine, ...] = ()
    totals: tuple[int, ...] = ()
    closed: bool = False


AnyTableLedger = TableLedger | MitigatiTableLedger


class PlayerLedger(msgspec.Struct, frozen=True, kw_only=True):
    player: str
    total: int = 0
    hands: int = 0
    declared: int = 0
    made: int = 0


def table_name(table_id: str) -> str:
    return f"ledger:t:{table_id}"


def fold(ledger: AnyTableLedger, version: int, event: TableEvent) -> AnyTableLedger:
    """The table's ledger after ``event``; the very same object if nothing changed."""
    if isinstance(ledger, MitigatiTableLedger):
        return fold_mitigati(ledger, version, event)
    if isinstance(event, MitigatiTableCreated):
        return MitigatiTableLedger(table_id=ledger.table_id, version=version,
                                   seats=(None,) * MITIGATI_PLAYERS, totals=(0,) * MITIGATI_PLAYERS)
    if isinstance(event, HandScored):
        return _scored(ledger, version, event)
    if isinstance(event, HandDealt):
        return replace(ledger, version=version, hand_no=event.hand_no, revealed=())
    if isinstance(event, FriendRevealed):
        return replace(ledger, version=version, revealed=(*ledger.revealed, event.seat))
    if isinstance(event, PlayerJoined | PlayerLeft):
        return replace(ledger, version=version, seats=seated(ledger.seats, event))
    if isinstance(event, TableCreated):
        n = event.rules.spec.players
        return replace(ledger, version=version, variant=event.rules.variant,
                       score_rule=event.rules.score, seats=(None,) * n, totals=(0,) * n)
    if isinstance(event, TableClosed):
        return replace(ledger, version=version, closed=True)
    return ledger


def fold_mitigati(ledger: MitigatiTableLedger, version: int, event: TableEvent) -> MitigatiTableLedger:
    if isinstance(event, mev.HandScored | mev.DealAbandoned):
        totals = tuple(t + s for t, s in zip(ledger.totals, event.scores, strict=True))
        if isinstance(event, mev.HandScored):
            outcome, points, bargain = "finished", event.points, None
        else:
            outcome, points = "abandoned", None
            bargain = Bargain(session=event.session, payer=event.payer, seller=event.seller,
                              amount=event.amount)
        line = DealLine(hand_no=ledger.hand_no, dealer=ledger.dealer, outcome=outcome,
                        points=points, bargain=bargain, players=ledger.seats,
                        scores=event.scores, totals=totals)
        return replace(ledger, version=version, hands=(*ledger.hands, line), totals=totals)
    if isinstance(event, mev.HandDealt):
        return replace(ledger, version=version, hand_no=event.hand_no, dealer=event.dealer)
    if isinstance(event, PlayerJoined | PlayerLeft):
        return replace(ledger, version=version, seats=seated(ledger.seats, event))
    if isinstance(event, TableClosed):
        return replace(ledger, version=version, closed=True)
    return ledger


def _scored(ledger: TableLedger, version: int, event: HandScored) -> TableLedger:
    totals = tuple(t + s for t, s in zip(ledger.totals, event.scores, strict=True))
    friends = {*ledger.revealed, *(() if event.friend is None else (event.friend,))}
    line = HandLine(
        hand_no=ledger.hand_no, declarer=event.declarer, friend=event.friend,
        friends=tuple(sorted(friends)), contract=event.points, trump=event.trump, made=event.made,
        declarer_side_points=event.declarer_side_points, players=ledger.seats,
        scores=event.scores, totals=totals,
    )
    return replace(ledger, version=version, hands=(*ledger.hands, line), totals=totals)


def credit(player: PlayerLedger, line: HandLine | DealLine, seat: int) -> PlayerLedger:
    if isinstance(line, DealLine):  # Mitigati: no contract declared or made
        return replace(player, total=player.total + line.scores[seat], hands=player.hands + 1)
    declared = seat == line.declarer
    return replace(
        player, total=player.total + line.scores[seat], hands=player.hands + 1,
        declared=player.declared + declared, made=player.made + (declared and line.made),
    )


def combine(name: str, parts: Iterable[PlayerLedger]) -> PlayerLedger:
    """A player's ledger over every partition: the sum of the partitions' contributions."""
    total = PlayerLedger(player=name)
    for part in parts:
        total = replace(total, total=total.total + part.total, hands=total.hands + part.hands,
                        declared=total.declared + part.declared, made=total.made + part.made)
    return total


_decode_table = msgspec.json.Decoder(TableLedger).decode
_decode_mitigati = msgspec.json.Decoder(MitigatiTableLedger).decode
_decode_player = msgspec.json.Decoder(PlayerLedger).decode
_MITIGATI_MARK = b'"variant":"mitigati"'  # a key and its value: no player name can hold it unescaped


def decode_table(data: bytes) -> AnyTableLedger:
    """A table's ledger document, of its game's shape (the two shapes share no tag, so
    the variant says which)."""
    if _MITIGATI_MARK in data:
        return _decode_mitigati(data)
    return _decode_table(data)


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
        self.tables[table_id] = TableLedger(table_id=table_id) if stored is None else decode_table(stored)

    def restore_players(self, stored: dict[str, bytes]) -> None:
        self.players = {name: decode_player(data) for name, data in stored.items()}

    def apply(self, table_id: str, version: int, event: TableEvent) -> None:
        before = self.tables.get(table_id) or TableLedger(table_id=table_id)
        after = fold(before, version, event)
        if after is before:
            return
        self.tables[table_id] = after
        self._dirty_tables[table_id] = None
        if isinstance(event, HandScored | mev.HandScored | mev.DealAbandoned):
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
