"""``legal_commands(state, seat)``: the commands the rules allow a seat now.

Bots, views and the property tests read this one list; ``decide`` accepts every command
in it. Bargaining amounts are not bounded by the rules; the list offers those up to
``AMOUNT_CAP`` (the hand's 129 card points), where an ask or an offer does not bound them
first. The dealer's discard is a lazy sequence (about C(25, 3) = 2,300 sets).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import combinations
from math import comb
from typing import overload

from domain.combinations import nth_combination  # the discard step's unranking, as Mighty's
from domain.mitigati.cards import TOTAL_POINTS, is_honour
from domain.mitigati.commands import Bargain, Declare, Discard, MitigatiCommand, Play
from domain.mitigati.declarations import legal_declarations
from domain.mitigati.play import legal_plays
from domain.mitigati.rules import DISCARD_COUNT
from domain.mitigati.state import Bargaining, Declaring, Discarding, MitigatiState, Playing, to_act

AMOUNT_CAP = TOTAL_POINTS


def legal_commands(state: MitigatiState, seat: int) -> Sequence[MitigatiCommand]:
    if seat != to_act(state):
        return []
    if isinstance(state, Playing):
        return [Play(seat=seat, card=c) for c in legal_plays(state.hands[seat], state.trick)]
    if isinstance(state, Bargaining):
        return bargain_commands(state, seat)
    if isinstance(state, Discarding):
        return DiscardChoices(seat, tuple(c for c in state.hands[seat] if not is_honour(c)))
    if isinstance(state, Declaring):
        return [Declare(seat=seat, combinations=names)
                for names in legal_declarations(state.hands[seat])]
    return []


def bargain_commands(state: Bargaining, seat: int) -> list[MitigatiCommand]:
    commands: list[MitigatiCommand] = [Bargain(seat=seat, action="pass"),
                                       Bargain(seat=seat, action="continue")]
    if state.agreed:
        return commands
    if state.seller != seat and state.payer in (None, seat):
        low = 1 if state.offer is None else state.offer + 1
        high = AMOUNT_CAP if state.ask is None else state.ask
        commands.extend(Bargain(seat=seat, action="pay", amount=x) for x in range(low, high + 1))
    if state.payer != seat and state.seller in (None, seat):
        high = AMOUNT_CAP if state.ask is None else state.ask - 1
        low = 1 if state.offer is None else state.offer
        commands.extend(Bargain(seat=seat, action="sell", amount=x) for x in range(low, high + 1))
    return commands


class DiscardChoices(Sequence[MitigatiCommand]):
    """Every set of three of the dealer's cards that are not honours, made when asked."""

    def __init__(self, seat: int, cards: tuple[str, ...]) -> None:
        self.seat = seat
        self.cards = cards
        self._len = comb(len(cards), DISCARD_COUNT)

    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, index: int) -> MitigatiCommand: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[MitigatiCommand]: ...

    def __getitem__(self, index: int | slice) -> MitigatiCommand | Sequence[MitigatiCommand]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._len))]
        if index < 0:
            index += self._len
        if not 0 <= index < self._len:
            raise IndexError(index)
        return Discard(seat=self.seat, cards=nth_combination(self.cards, DISCARD_COUNT, index))

    def __iter__(self) -> Iterator[MitigatiCommand]:
        return (Discard(seat=self.seat, cards=c) for c in combinations(self.cards, DISCARD_COUNT))

    def __contains__(self, value: object) -> bool:
        if not isinstance(value, Discard) or value.seat != self.seat:
            return False
        cards = value.cards
        return (len(cards) == DISCARD_COUNT and len(set(cards)) == DISCARD_COUNT
                and all(c in self.cards for c in cards))
