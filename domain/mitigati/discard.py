"""The dealer's discard (docs/rules/mitigati.md, "The dealer's discard").

Exactly three different cards the dealer holds, none an honour (a king, T20, T1 or the
Fool). Other trumps may go. Every fault is ``bad_discard``. The discards count for the
dealer at the end.
"""

from __future__ import annotations

from domain.errors import BadDiscard
from domain.mitigati.cards import describe, is_honour
from domain.mitigati.commands import Discard
from domain.mitigati.events import CardsDiscarded
from domain.mitigati.rules import DISCARD_COUNT, first_to_speak
from domain.mitigati.state import Declaring, Discarding


def check_discard(hand: tuple[str, ...], cards: tuple[str, ...]) -> None:
    if len(cards) != DISCARD_COUNT:
        raise BadDiscard(f"The dealer discards exactly {DISCARD_COUNT} cards, not {len(cards)}.")
    if len(set(cards)) != len(cards):
        raise BadDiscard("The discard names a card twice.")
    for card in cards:
        if card not in hand:
            raise BadDiscard(f"The dealer does not hold {describe(card)}.")
        if is_honour(card):
            raise BadDiscard(f"{describe(card)} is an honour and may not be discarded.")


def decide_discard(state: Discarding, cmd: Discard) -> list[CardsDiscarded]:
    check_discard(state.hands[state.dealer], cmd.cards)
    return [CardsDiscarded(seat=cmd.seat, cards=cmd.cards)]


def apply_discarded(state: Discarding, event: CardsDiscarded) -> Declaring:
    gone = set(event.cards)
    hands = tuple(tuple(c for c in hand if c not in gone) if seat == event.seat else hand
                  for seat, hand in enumerate(state.hands))
    return Declaring(rules=state.rules, dealer=state.dealer, hand_no=state.hand_no,
                     packets=state.packets, rounds_dealt=state.rounds_dealt, hands=hands,
                     discards=event.cards, to_act=first_to_speak(state.dealer))
