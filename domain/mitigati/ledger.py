"""A Mitigati table's score ledger: its lines are ``DealLine``s, one per hand of the match,
played (``mitigati_hand_scored``: card points and declarations) or abandoned
(``mitigati_deal_abandoned``: the bargain's payment is the hand's scores). A Mitigati
hand declares no contract. ``projections/ledger.py`` folds the table's own events (seats,
close) and asks the game (``domain/mitigati/game.py``) to fold the hand's."""

from __future__ import annotations

from typing import Self

import msgspec
from msgspec.structs import replace

from domain.mitigati.events import DealAbandoned, HandDealt, HandScored, MitigatiEvent
from domain.mitigati.rules import NAME, PLAYERS


class Bargain(msgspec.Struct, frozen=True, kw_only=True):
    """An abandoned deal: the payer paid the seller ``amount`` in ``session``."""

    session: int
    payer: int
    seller: int
    amount: int


class DealLine(msgspec.Struct, frozen=True, kw_only=True):
    """One hand of the match."""

    hand_no: int
    dealer: int
    outcome: str  # "finished" or "abandoned"
    points: tuple[int, ...] | None  # card points (finished only)
    bargain: Bargain | None  # the deal's bargain (abandoned only)
    players: tuple[str | None, ...]
    scores: tuple[int, ...]
    totals: tuple[int, ...]

    def declared_by(self, seat: int) -> bool:
        return False  # no contract is declared in Mitigati

    def made_by(self, seat: int) -> bool:
        return False

    def sides(self) -> tuple[tuple[int, ...], ...]:
        """Every player for themselves; an abandoned deal was not played: nothing to rate."""
        return tuple((seat,) for seat in range(len(self.scores))) if self.outcome == "finished" else ()


class TableLedger(msgspec.Struct, frozen=True, kw_only=True):
    table_id: str
    version: int = 0
    variant: str = NAME
    seats: tuple[str | None, ...] = ()
    hand_no: int = 0
    dealer: int = 0  # the dealer of the hand being played
    hands: tuple[DealLine, ...] = ()
    totals: tuple[int, ...] = ()
    closed: bool = False

    def seated(self, version: int, seats: tuple[str | None, ...]) -> Self:
        return replace(self, version=version, seats=seats)

    def closed_at(self, version: int) -> Self:
        return replace(self, version=version, closed=True)


def new_ledger(table_id: str, version: int) -> TableLedger:
    return TableLedger(table_id=table_id, version=version, seats=(None,) * PLAYERS, totals=(0,) * PLAYERS)


def fold(ledger: TableLedger, version: int, event: MitigatiEvent) -> TableLedger:
    """The ledger after a hand event; the very same object if nothing changed."""
    if isinstance(event, HandScored | DealAbandoned):
        totals = tuple(t + s for t, s in zip(ledger.totals, event.scores, strict=True))
        if isinstance(event, HandScored):
            outcome, points, bargain = "finished", event.points, None
        else:
            outcome, points = "abandoned", None
            bargain = Bargain(session=event.session, payer=event.payer, seller=event.seller,
                              amount=event.amount)
        line = DealLine(hand_no=ledger.hand_no, dealer=ledger.dealer, outcome=outcome,
                        points=points, bargain=bargain, players=ledger.seats,
                        scores=event.scores, totals=totals)
        return replace(ledger, version=version, hands=(*ledger.hands, line), totals=totals)
    if isinstance(event, HandDealt):
        return replace(ledger, version=version, hand_no=event.hand_no, dealer=event.dealer)
    return ledger

