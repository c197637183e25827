"""The Mitigati beginner: rules of thumb, no search.

- Bargaining (docs/rules/mitigati.md, "Bargaining"): judge the cards held so far (trumps,
  honours, kings) against an average hand of that size. A weak hand offers to pay a
  little to abandon, or pays a seller's modest ask; a strong one says continue; a middling
  one sells to a payer who offers enough, and, as the third player, lets an agreed bargain
  stand (abandoning costs it nothing) unless its hand is good.
- Discard: never an honour (the rules bar them); throw the cards of the shortest suits,
  the counting ones first (discards count for the dealer).
- Declarations: always the combination that scores most (every opponent pays it).
- Play: win a trick cheaply when it can be won, else throw the card worth least; save the
  Bagatto (``T1``, 5 points) from being caught; play the Fool instead of giving a card of 3
  points or more.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, NamedTuple

from domain.bots import Budget
from domain.mitigati.cards import (
    DECK,
    FOOL,
    HONOURS,
    POINTS,
    STRENGTH,
    SUIT_OF,
    TRUMP,
    is_honour,
)
from domain.mitigati.commands import Bargain, Declare, Discard, MitigatiCommand, Play
from domain.mitigati.declarations import legal_declarations
from domain.mitigati.legal import bargain_commands
from domain.mitigati.play import legal_plays, seat_at, trick_winner
from domain.mitigati.rules import DISCARD_COUNT, PLAYERS, TRICKS, RuleSet
from domain.mitigati.state import Bargaining, Declaring, Discarding, MitigatiState, Playing
from domain.mitigati.views import MitigatiView

# ---------------------------------------------------------------- judging a hand

def card_worth(card: str) -> float:
    """What a card is likely to bring home: its points if it wins, and trumps win."""
    if card == FOOL:
        return 4.0
    if SUIT_OF[card] == TRUMP:
        strength = STRENGTH[card]
        return 6.0 if card == "T20" else 3.0 if card == "T1" else 1.0 + strength / 8
    return {"K": 5.0, "Q": 2.5, "N": 1.0}.get(card[0], 0.0)


_AVERAGE: Final = sum(card_worth(c) for c in DECK) / len(DECK)


def hand_outlook(hand: Sequence[str]) -> float:
    """A rough score to expect, scaled from the cards held to a full hand of 25."""
    if not hand:
        return 0.0
    worth = sum(card_worth(c) for c in hand) - _AVERAGE * len(hand)
    honours = sum(1 for c in hand if c in HONOURS)
    return (worth + 3.0 * max(0, honours - 2)) * 25 / len(hand)


def bargain(view_hand: Sequence[str], seat: int, payer: int | None, offer: int | None,
            seller: int | None, ask: int | None, legal: Sequence[MitigatiCommand]) -> MitigatiCommand:
    outlook = hand_outlook(view_hand)
    pass_ = Bargain(seat=seat, action="pass")

    def ok(command: MitigatiCommand) -> MitigatiCommand | None:
        return command if command in legal else None

    if offer is not None and offer == ask:  # the third player answers an agreed bargain
        return pass_ if outlook < 8 else Bargain(seat=seat, action="continue")
    if outlook >= 12:
        return ok(Bargain(seat=seat, action="continue")) or pass_
    if outlook <= -12:
        if ask is not None and payer in (None, seat) and ask <= -outlook / 2:
            return ok(Bargain(seat=seat, action="pay", amount=ask)) or pass_
        if payer is None and seller != seat:
            amount = max(1, int(-outlook / 4))
            if ask is not None:
                amount = min(amount, ask)
            return ok(Bargain(seat=seat, action="pay", amount=amount)) or pass_
        return pass_
    if offer is not None and payer != seat and seller in (None, seat) and offer >= 4 and outlook < offer:
        return ok(Bargain(seat=seat, action="sell", amount=offer)) or pass_
    return pass_


def discard_order(hand: Sequence[str]) -> list[str]:
    """The cards that may be discarded (no honour), the likeliest discards first: the
    shortest suits, counting cards first (the discards count for the dealer), trumps last."""
    lengths: dict[str | None, int] = {}
    for card in hand:
        lengths[SUIT_OF[card]] = lengths.get(SUIT_OF[card], 0) + 1

    def keep(card: str) -> float:
        if SUIT_OF[card] == TRUMP:
            return 100.0 + STRENGTH[card]
        return 3.0 * lengths[SUIT_OF[card]] + STRENGTH[card] - 2.5 * POINTS[card]

    return sorted((c for c in hand if not is_honour(c)), key=lambda c: (keep(c), c))


def discard(seat: int, hand: Sequence[str]) -> Discard:
    gone = set(discard_order(hand)[:DISCARD_COUNT])
    return Discard(seat=seat, cards=tuple(c for c in hand if c in gone))


def declare(seat: int, hand: tuple[str, ...]) -> Declare:
    options = legal_declarations(hand)  # nothing, tarocchi, the honour part, both: best last
    return Declare(seat=seat, combinations=options[-1])


# ---------------------------------------------------------------- play

class Spot(NamedTuple):
    seat: int
    hand: tuple[str, ...]
    options: tuple[str, ...]
    trick: tuple[str, ...]
    leader: int
    trick_no: int
    unseen: frozenset[str]
    won_any: bool  # this seat has won a trick (the Fool's exchange card is ready)


def _higher_out(spot: Spot, card: str) -> bool:
    suit, strength = SUIT_OF[card], STRENGTH[card]
    return any(SUIT_OF[c] == suit and STRENGTH[c] > strength for c in spot.unseen)


def play(spot: Spot) -> str:
    options = spot.options
    if len(options) == 1:
        return options[0]
    if FOOL in options and spot.trick_no >= TRICKS - 2:
        return FOOL
    plain = [c for c in options if c != FOOL] or list(options)
    if not spot.trick:
        return lead(spot, plain)
    trick = spot.trick
    last = len(trick) == PLAYERS - 1
    wins = [c for c in plain
            if trick_winner(spot.leader, (*trick, c)) == seat_at(spot.leader, len(trick))]
    points = sum(POINTS[c] for c in trick)
    if wins:
        wins.sort(key=lambda c: (c == "T1" and not last, STRENGTH[c], c))
        if last or not _higher_out(spot, wins[0]):
            return wins[0]
        safe = [c for c in wins if not _higher_out(spot, c)]
        if safe and (points >= 4 or safe[0] != "T20"):
            return safe[0]
        if points >= 6 and wins[-1] != "T1":
            return wins[-1]
    cheapest = min(plain, key=lambda c: (POINTS[c] + (3 if c == "T1" else 0), STRENGTH[c], c))
    if FOOL in options and spot.won_any and POINTS[cheapest] >= 3:
        return FOOL
    return cheapest


def lead(spot: Spot, plain: list[str]) -> str:
    bosses = [c for c in plain if SUIT_OF[c] != TRUMP and not _higher_out(spot, c)]
    if bosses:
        return max(bosses, key=lambda c: (POINTS[c], c))
    trumps = [c for c in plain if SUIT_OF[c] == TRUMP and c != "T1"]
    out = sum(1 for c in spot.unseen if SUIT_OF[c] == TRUMP)
    if trumps and len(trumps) > out:
        return max(trumps, key=lambda c: (STRENGTH[c], c))
    lengths: dict[str | None, int] = {}
    for c in plain:
        lengths[SUIT_OF[c]] = lengths.get(SUIT_OF[c], 0) + 1
    side = [c for c in plain if SUIT_OF[c] != TRUMP] or [c for c in plain if c != "T1"] or plain
    return min(side, key=lambda c: (POINTS[c], -lengths[SUIT_OF[c]], STRENGTH[c], c))


def spot_from_view(view: MitigatiView) -> Spot:
    assert view.viewer is not None and view.hand is not None
    played = [c for t in view.tricks for c in t.cards]
    trick = view.trick.cards if view.trick is not None else ()
    played.extend(trick)
    gone = set(played) | set(view.hand) | set(view.discards or ())
    return Spot(seat=view.viewer, hand=view.hand,
                options=tuple(c.card for c in view.legal if isinstance(c, Play)), trick=trick,
                leader=view.trick.leader if view.trick is not None else view.viewer,
                trick_no=len(view.tricks), unseen=frozenset(c for c in DECK if c not in gone),
                won_any=any(t.winner == view.viewer for t in view.tricks))


def spot_from_state(state: Playing, seat: int) -> Spot:
    hand = state.hands[seat]
    gone = {c for t in state.tricks for c in t.cards} | set(state.trick) | set(hand)
    if seat == state.dealer:
        gone.update(state.discards)
    return Spot(seat=seat, hand=hand, options=legal_plays(hand, state.trick), trick=state.trick,
                leader=state.leader, trick_no=len(state.tricks),
                unseen=frozenset(c for c in DECK if c not in gone),
                won_any=any(t.winner == seat for t in state.tricks))


# ---------------------------------------------------------------- the policy

def choose(view: MitigatiView) -> MitigatiCommand:
    seat = view.viewer
    assert seat is not None and view.hand is not None
    if view.phase == "bargaining":
        b = view.bargaining
        assert b is not None
        return bargain(view.hand, seat, b.payer, b.offer, b.seller, b.ask, view.legal)
    if view.phase == "discard":
        return discard(seat, view.hand)
    if view.phase == "declaring":
        return declare(seat, view.hand)
    return Play(seat=seat, card=play(spot_from_view(view)))


def beginner_policy(rules: RuleSet, view: MitigatiView, seed: int, budget: Budget) -> MitigatiCommand:
    return choose(view)


def act(state: MitigatiState, seat: int) -> MitigatiCommand:
    """The beginner's command read off a state, looking only at what ``seat`` may see."""
    hand = state.hands[seat]
    if isinstance(state, Playing):
        return Play(seat=seat, card=play(spot_from_state(state, seat)))
    if isinstance(state, Bargaining):
        return bargain(hand, seat, state.payer, state.offer, state.seller, state.ask,
                       bargain_commands(state, seat))
    if isinstance(state, Discarding):
        return discard(seat, hand)
    assert isinstance(state, Declaring)
    return declare(seat, hand)
