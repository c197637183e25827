"""Play and the Fool (docs/rules/mitigati.md, "Play").

Follow the suit; void, play a trump; void in trumps too, any card. No obligation to
overtrump. The Fool may always be played instead, and never wins. When the Fool is led,
the second card sets the suit to follow.
"""

from __future__ import annotations

from domain.errors import CardNotInHand, MustFollowSuit, MustTrump
from domain.mitigati.cards import FOOL, POINTS, STRENGTH, SUIT_NAMES, SUIT_OF, TRUMP, describe
from domain.mitigati.events import FoolCardGiven, FoolCardOwed, MitigatiEvent, TrickWon
from domain.mitigati.rules import TRICKS
from domain.mitigati.state import FoolRecord, Playing


def suit_to_follow(trick: tuple[str, ...]) -> str | None:
    """The suit of the first card that is not the Fool; None while there is none."""
    for card in trick:
        if card != FOOL:
            return SUIT_OF[card]
    return None


def legal_plays(hand: tuple[str, ...], trick: tuple[str, ...]) -> tuple[str, ...]:
    suit = suit_to_follow(trick)
    if suit is None:
        return hand
    following = tuple(c for c in hand if SUIT_OF[c] == suit)
    if not following:
        following = tuple(c for c in hand if SUIT_OF[c] == TRUMP)
    if not following:
        return hand
    return following + ((FOOL,) if FOOL in hand else ())


def check_play(hand: tuple[str, ...], trick: tuple[str, ...], seat: int, card: str) -> None:
    """§7's checks in their order: card_not_in_hand, must_follow_suit, must_trump."""
    if card not in hand:
        raise CardNotInHand(f"Seat {seat} does not hold {describe(card)}.")
    suit = suit_to_follow(trick)
    if card == FOOL or suit is None or SUIT_OF[card] == suit:
        return
    if any(SUIT_OF[c] == suit for c in hand):
        raise MustFollowSuit(f"Seat {seat} holds {SUIT_NAMES[suit]} and must follow the suit, {SUIT_NAMES[suit]}.")
    if SUIT_OF[card] != TRUMP and any(SUIT_OF[c] == TRUMP for c in hand):
        raise MustTrump(f"Seat {seat} holds no {SUIT_NAMES[suit]} but holds a trump, and must play one.")


def trick_winner(leader: int, cards: tuple[str, ...]) -> int:
    """The highest trump, else the highest card of the suit to follow; never the Fool.
    The k-th card of a trick is played by leader, right(leader), … i.e. (leader - k) % 3."""
    suit = suit_to_follow(cards)
    trumps = [i for i, c in enumerate(cards) if SUIT_OF[c] == TRUMP]
    candidates = trumps or [i for i, c in enumerate(cards) if SUIT_OF[c] == suit]
    best = max(candidates, key=lambda i: STRENGTH[cards[i]])
    return seat_at(leader, best)


def seat_at(leader: int, place: int) -> int:
    return (leader + 2 * place) % 3


def close_trick(state: Playing, cards: tuple[str, ...]) -> list[MitigatiEvent]:
    """The trick's ``TrickWon`` and whatever the Fool's settlement gives at its close."""
    index = len(state.tricks)
    won = TrickWon(trick=index, leader=state.leader, cards=cards,
                   winner=trick_winner(state.leader, cards))
    events: list[MitigatiEvent] = [won]
    won_cards = [list(w) for w in state.won]
    won_cards[won.winner].extend(cards)
    fool = state.fool
    if FOOL in cards:
        player = seat_at(state.leader, cards.index(FOOL))
        won_cards[won.winner].remove(FOOL)
        fool = FoolRecord(seat=player, trick=index, to=won.winner)
        events.append(_settle(fool, won_cards[player], index) or
                      FoolCardOwed(seat=player, trick=index, to=won.winner))
    elif fool is not None and fool.card is None:
        paid = _settle(fool, won_cards[fool.seat], index)
        if paid is not None:
            events.append(paid)
    if index == TRICKS - 1 and _still_owed(events, fool):
        assert fool is not None
        events.append(FoolCardGiven(seat=fool.seat, trick=fool.trick, to=fool.to, card=FOOL,
                                    paid_in=None))
    return events


def _settle(fool: FoolRecord, won: list[str], index: int) -> FoolCardGiven | None:
    """The earliest 1-point card the Fool's player has won, by trick then play order."""
    for card in won:
        if POINTS[card] == 1:
            return FoolCardGiven(seat=fool.seat, trick=fool.trick, to=fool.to, card=card,
                                 paid_in=index)
    return None


def _still_owed(events: list[MitigatiEvent], fool: FoolRecord | None) -> bool:
    if fool is None:
        return False
    paid_now = any(isinstance(e, FoolCardGiven) for e in events)
    return not paid_now and fool.card is None


# ---------------------------------------------------------------- evolve

def apply_trick_won(state: Playing, event: TrickWon) -> Playing:
    won = tuple(w + event.cards if seat == event.winner else w for seat, w in enumerate(state.won))
    return Playing(rules=state.rules, dealer=state.dealer, hand_no=state.hand_no,
                   packets=state.packets, rounds_dealt=state.rounds_dealt, hands=state.hands,
                   discards=state.discards, declarations=state.declarations,
                   tricks=(*state.tricks, event), won=won, fool=state.fool,
                   leader=event.winner, to_act=event.winner)


def move_card(won: tuple[tuple[str, ...], ...], card: str, giver: int,
              taker: int) -> tuple[tuple[str, ...], ...]:
    """``card`` leaves ``giver``'s won cards (its first occurrence) and joins ``taker``'s."""
    out = [list(w) for w in won]
    out[giver].remove(card)
    out[taker].append(card)
    return tuple(tuple(w) for w in out)
