"""Mitigati as a client is shown it (``domain/presentation.py``): its tarot cards in the
rules' order, its phases, a label for every legal command."""

from __future__ import annotations

from functools import cache
from typing import Final

from domain.mitigati.cards import DECK, FOOL, STRENGTH, SUIT_OF, SUITS, TRUMP
from domain.mitigati.commands import COMBINATIONS, Bargain, Declare, Discard, MitigatiCommand
from domain.mitigati.play import seat_at
from domain.mitigati.rules import NAME, PLAYERS
from domain.mitigati.state import MitigatiState
from domain.mitigati.views import MitigatiView
from domain.presentation import (
    CardEntry,
    DiscardStep,
    GameEntry,
    GuideEntry,
    Message,
    PhaseEntry,
    SuitEntry,
    TermEntry,
    msg,
    ordered,
)

PHASES: Final = ("bargaining", "discard", "declaring", "play", "finished", "abandoned")
RANK_KEYS: Final = {"T": "10", "F": "fante", "N": "cavallo", "Q": "queen", "K": "king"}
# §1: the trumps first, T20 above T21; the Fool; then coins, cups, batons and swords,
# each from its strongest card down (coins and cups run 1 … 10 upwards below the court).
_GROUPS: Final = (TRUMP, None, *SUITS)
ORDER: Final[dict[str, int]] = {
    c: i for i, c in enumerate(sorted(DECK, key=lambda c: (_GROUPS.index(SUIT_OF[c]), -STRENGTH[c])))}


@cache  # one message a card: labels name the same cards again and again
def card_label(card: str) -> Message:
    if card == FOOL:
        return msg("mitigati.fool")
    if SUIT_OF[card] == TRUMP:
        return msg("mitigati.trump", n=int(card[1:]))
    return msg("mitigati.card", rank=msg(f"mitigati.rank.{RANK_KEYS.get(card[0], card[0])}"),
               suit=msg(f"mitigati.card_suit.{card[1]}"))  # a suit inside a card's name (Russian: genitive)


def _rank(card: str) -> str:
    if card == FOOL:
        return FOOL
    if SUIT_OF[card] == TRUMP:
        return card[1:]
    return "10" if card[0] == "T" else card[0]


# how a client draws each suit: coins and cups are the round (red) suits
SYMBOL: Final = {"D": "coin", "C": "cup", "B": "baton", "S": "sword", TRUMP: "trump"}
RED: Final = frozenset({"D", "C"})


def _card(c: str) -> CardEntry:
    suit = SUIT_OF[c]
    return CardEntry(card=c, label=card_label(c), suit=suit, rank=_rank(c), order=ORDER[c],
                     symbol="fool" if suit is None else SYMBOL[suit], red=suit in RED)


CATALOGUE: Final = (GameEntry(
    game=NAME, family=NAME, name=msg("mitigati.name"), seats=PLAYERS, options=(),
    cards=tuple(_card(c) for c in ordered(DECK, ORDER)),
    suits=tuple(SuitEntry(s, msg(f"mitigati.suit.{s}"), SYMBOL[s], s in RED) for s in (*SUITS, TRUMP)),
    phases=tuple(PhaseEntry(p, msg(f"mitigati.phase.{p}")) for p in PHASES),
    terms=tuple(TermEntry(c, msg(f"mitigati.combination.{c}")) for c in COMBINATIONS),
    guide=GuideEntry(NAME, msg("mitigati.guide"))),)


class MitigatiPresentation:
    def catalogue(self) -> tuple[GameEntry, ...]:
        return CATALOGUE

    def label(self, view: MitigatiView, entry: MitigatiCommand | DiscardStep) -> Message:
        if isinstance(entry, DiscardStep):
            return msg("mitigati.discard_step", count=entry.count)
        if isinstance(entry, Bargain):
            if entry.amount is None:
                return msg(f"mitigati.bargain.{entry.action}")
            return msg(f"mitigati.bargain.{entry.action}", amount=entry.amount)
        if isinstance(entry, Discard):
            return msg("mitigati.discard", cards=tuple(card_label(c) for c in entry.cards))
        if isinstance(entry, Declare):
            if not entry.combinations:
                return msg("mitigati.declare_nothing")
            return msg("mitigati.declare",
                       combinations=tuple(msg(f"mitigati.combination.{c}") for c in entry.combinations))
        return msg("mitigati.play", card=card_label(entry.card))

    def hand_order(self, view: MitigatiView) -> tuple[str, ...] | None:
        return None  # no trump to choose: the cards' order is the hand's

    def remaining(self, hand: MitigatiState) -> tuple[tuple[str, ...], ...]:
        return tuple(ordered(cards, ORDER) for cards in hand.hands)

    def played_by(self, leader: int, place: int, players: int) -> int:
        return seat_at(leader, place)  # "Seats and direction": play goes to the right

    def hidden(self, entry: MitigatiCommand) -> DiscardStep | None:
        """The dealer's three cards go face down (§5): others learn how many, not which."""
        return DiscardStep(count=len(entry.cards)) if isinstance(entry, Discard) else None

    def facts(self, view: MitigatiView) -> dict[str, str]:
        return {}  # every entry's label says all a client needs


PRESENTATION: Final = MitigatiPresentation()
