"""A Mighty table's score ledger (docs/rules/mighty.md §6): each hand's scores and running
totals. The scores are facts of the ``HandScored`` event: nothing is recomputed here.
``projections/ledger.py`` folds the table's own events (seats, close) and asks the game
(``domain/mighty/game.py``) to fold the hand's."""

from __future__ import annotations

from typing import Self

import msgspec
from msgspec.structs import replace

from domain.mighty.events import FriendRevealed, HandDealt, HandEvent, HandScored
from domain.mighty.rules import RuleSet


class HandLine(msgspec.Struct, frozen=True, kw_only=True):
    hand_no: int
    declarer: int
    friend: int | None
    friends: tuple[int, ...] = ()  # every friend seat, sorted (two with two packs, docs/rules/mighty.md §10)
    contract: int
    trump: str
    made: bool
    declarer_side_points: int
    players: tuple[str | None, ...]  # who sat where for this hand
    scores: tuple[int, ...]
    totals: tuple[int, ...]  # running totals after this hand

    def declared_by(self, seat: int) -> bool:
        return seat == self.declarer

    def made_by(self, seat: int) -> bool:
        return seat == self.declarer and self.made

    def sides(self) -> tuple[tuple[int, ...], ...]:
        """The declarer with every friend against the defenders (a lone declarer: alone)."""
        declaring = {self.declarer, *self.friends, *(() if self.friend is None else (self.friend,))}
        defending = tuple(s for s in range(len(self.scores)) if s not in declaring)
        return (tuple(sorted(declaring)), defending)


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

    def seated(self, version: int, seats: tuple[str | None, ...]) -> Self:
        return replace(self, version=version, seats=seats)

    def closed_at(self, version: int) -> Self:
        return replace(self, version=version, closed=True)


def new_ledger(table_id: str, version: int, rules: RuleSet) -> TableLedger:
    n = rules.spec.players
    return TableLedger(table_id=table_id, version=version, variant=rules.variant,
                       score_rule=rules.score, seats=(None,) * n, totals=(0,) * n)


def fold(ledger: TableLedger, version: int, event: HandEvent) -> TableLedger:
    """The ledger after a hand event; the very same object if nothing changed."""
    if isinstance(event, HandScored):
        return _scored(ledger, version, event)
    if isinstance(event, HandDealt):
        return replace(ledger, version=version, hand_no=event.hand_no, revealed=())
    if isinstance(event, FriendRevealed):
        return replace(ledger, version=version, revealed=(*ledger.revealed, event.seat))
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

