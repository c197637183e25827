"""Mighty as a client is shown it (``domain/presentation.py``): every variant's cards,
options and phases, a label for every legal command, the hand in trump-first order."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache, lru_cache
from typing import Final

from domain.mighty.cards import (
    ALL_CARDS,
    POINTS_OF,
    SUIT_OF,
    SUITS,
    TRUMPS,
    base_card,
    is_joker,
    mighty_of,
    sort_key,
)
from domain.mighty.commands import (
    Bid,
    CallFriend,
    ChangeTrump,
    ClaimMisdeal,
    Discard,
    Exchange,
    HandCommand,
    Pass,
    Play,
)
from domain.mighty.exchange import raised_contract
from domain.mighty.play import seat_at
from domain.mighty.rules import OPTIONS, VARIANTS, Variant
from domain.mighty.state import HandState
from domain.mighty.views import HandView
from domain.presentation import (
    CardEntry,
    Choice,
    DiscardStep,
    GameEntry,
    GuideEntry,
    Message,
    OptionEntry,
    PhaseEntry,
    SuitEntry,
    msg,
    ordered,
)

FAMILY: Final = "mighty"
PHASES: Final = ("bidding", "exchange", "play", "finished", "redeal")
RANK_KEYS: Final = {"T": "10", "J": "jack", "Q": "queen", "K": "king", "A": "ace"}


@cache
def suit_label(suit: str) -> Message:
    return msg(f"mighty.suit.{suit}")


@cache  # one message a card: labels name the same cards again and again
def card_label(card: str) -> Message:
    """``AS`` -> "ace of spades"; ``AS#2`` -> "ace of spades (pack 2)"; ``JK3`` -> "Joker 3"."""
    if is_joker(card):
        return msg("mighty.joker") if card == "JK" else msg("mighty.joker_n", n=int(card[2:]))
    plain = base_card(card)
    rank = msg(f"mighty.rank.{RANK_KEYS.get(plain[0], plain[0])}")
    # a suit inside a card's name is its own message: some languages inflect it there
    # (Russian "туз пик", the genitive, against the trump "пики")
    suit = msg(f"mighty.card_suit.{plain[1]}")
    if "#" in card:
        return msg("mighty.card_pack", rank=rank, suit=suit, pack=int(card.split("#")[1]))
    return msg("mighty.card", rank=rank, suit=suit)


def cards_label(cards: Sequence[str]) -> tuple[Message, ...]:
    return tuple(card_label(c) for c in cards)


# The rules' order of a hand (``cards.sorted_cards``): spades, hearts, diamonds, clubs,
# each high to low, the jokers last; the copies of a card of two packs side by side.
ORDER: Final[dict[str, int]] = {c: i for i, c in enumerate(sorted(ALL_CARDS, key=sort_key))}


def _printed(rank: str) -> str:
    return "10" if rank == "T" else rank


SYMBOL: Final = {"S": "spade", "H": "heart", "D": "diamond", "C": "club", "NT": ""}
RED: Final = frozenset({"H", "D"})


def _card(c: str) -> CardEntry:
    if is_joker(c):
        return CardEntry(card=c, label=card_label(c), suit=None, rank="JK", order=ORDER[c], symbol="joker")
    suit = base_card(c)[1]
    return CardEntry(card=c, label=card_label(c), suit=suit, rank=_printed(base_card(c)[0]), order=ORDER[c],
                     symbol=SYMBOL[suit], red=suit in RED, face_up=POINTS_OF[c] > 0)


def _cards(variant: Variant) -> tuple[CardEntry, ...]:
    return tuple(_card(c) for c in ordered(variant.deck, ORDER))


def _option(name: str, variant: Variant) -> OptionEntry:
    values = OPTIONS[name]
    default = variant.default_score if name == "score" else values[0]
    kind = "boolean" if isinstance(default, bool) else "choice"
    choices = tuple(Choice(v, msg(f"mighty.option.{name}.{str(v).lower()}")) for v in values)
    return OptionEntry(name=name, label=msg(f"mighty.option.{name}"), type=kind, default=default,
                       choices=choices)


def _entry(variant: Variant) -> GameEntry:
    return GameEntry(
        game=variant.name, family=FAMILY, name=msg(f"mighty.name.{variant.name}"), seats=variant.players,
        options=tuple(_option(name, variant) for name in OPTIONS), cards=_cards(variant),
        suits=tuple(SuitEntry(s, suit_label(s), SYMBOL[s], s in RED, None if SYMBOL[s] else msg("mighty.suit.nt_short"))
                    for s in TRUMPS),
        phases=tuple(PhaseEntry(p, msg(f"mighty.phase.{p}")) for p in PHASES),
        guide=GuideEntry(FAMILY, msg("mighty.guide")))


@cache
def _catalogue() -> tuple[GameEntry, ...]:
    return tuple(_entry(v) for v in VARIANTS.values() if v.playable)


class MightyPresentation:
    def catalogue(self) -> tuple[GameEntry, ...]:
        return _catalogue()

    def label(self, view: HandView, entry: HandCommand | DiscardStep) -> Message:
        trump = view.contract[1] if view.contract is not None else None
        if isinstance(entry, DiscardStep):
            if entry.take:
                return msg("mighty.discard_step_take", count=entry.count, take=cards_label(entry.take))
            return msg("mighty.discard_step", count=entry.count)
        if isinstance(entry, Pass):
            return msg("mighty.pass")
        if isinstance(entry, Bid):
            return msg("mighty.bid", points=entry.points, trump=suit_label(entry.trump))
        if isinstance(entry, ClaimMisdeal):
            return msg("mighty.claim_misdeal")
        if isinstance(entry, Discard):
            if entry.take:
                return msg("mighty.discard_take", cards=cards_label(entry.cards), take=cards_label(entry.take))
            return msg("mighty.discard", cards=cards_label(entry.cards))
        if isinstance(entry, Exchange):
            return msg("mighty.exchange", take=card_label(entry.take), discard=card_label(entry.discard))
        if isinstance(entry, ChangeTrump):
            points = raised_contract(view.contract[0], view.contract[1], entry.trump) if view.contract else 0
            return msg("mighty.change_trump", trump=suit_label(entry.trump), points=points)
        if isinstance(entry, CallFriend):
            return _call(entry, trump)
        return _play(entry, trump)

    def hand_order(self, view: HandView) -> tuple[str, ...] | None:
        """The trump suit first (the Mighty and the Jokers stay where the order puts
        them), then the other suits in the cards' order; None with no trump yet or NT."""
        if not view.hand or view.contract is None or view.contract[1] not in SUITS:
            return None
        return _trump_first(view.hand, view.contract[1])

    def remaining(self, hand: HandState) -> tuple[tuple[str, ...], ...]:
        return tuple(ordered(cards, ORDER) for cards in hand.hands)

    def played_by(self, leader: int, place: int, players: int) -> int:
        return seat_at(leader, place, players)

    def hidden(self, entry: HandCommand) -> DiscardStep | None:
        """The declarer's discard and a kitty exchange are face down (§3): others learn how
        many cards went, not which."""
        if isinstance(entry, Discard):
            return DiscardStep(count=len(entry.cards))
        if isinstance(entry, Exchange):
            return DiscardStep(count=1)
        return None

    def facts(self, view: HandView) -> dict[str, str]:
        """At the friend call (the declarer's ``legal`` holds the calls): ``mighty``, the
        card that is the Mighty under the contract's trump (§1), so a picker can name it.
        A rule, not anybody's hand: it reveals nothing."""
        if view.contract is None or not any(isinstance(c, CallFriend) for c in view.legal):
            return {}
        return {"mighty": mighty_of(view.contract[1])}


@lru_cache(maxsize=4096)
def _trump_first(hand: tuple[str, ...], trump: str) -> tuple[str, ...]:
    """``hand_order`` of a hand under a trump, kept: every change of a table is pushed to
    each seat, and a seat's hand changes only when it plays (a sort is ten times a lookup)."""
    return tuple(sorted(hand, key=lambda c: (SUIT_OF[c] != trump, ORDER[c])))


def _friend(call: str, trump: str | None) -> Message:
    if call == "first_trick":
        return msg("mighty.friend.first_trick")
    if call == "none":
        return msg("mighty.friend.none")
    if is_joker(call):
        return msg("mighty.friend.joker") if call == "JK" else msg("mighty.friend.card", card=card_label(call))
    if trump is not None and call == mighty_of(trump):  # one pack: two have two Mighties
        return msg("mighty.friend.mighty")
    return msg("mighty.friend.card", card=card_label(call))


def _call(entry: CallFriend, trump: str | None) -> Message:
    calls = (entry.friend,) if isinstance(entry.friend, str) else tuple(entry.friend)
    if calls == ("none",):
        return msg("mighty.call_alone")
    friends = tuple(_friend(c, trump) for c in calls)
    if entry.lead_suit is not None:
        return msg("mighty.call_friend_advice", friends=friends, suit=suit_label(entry.lead_suit))
    return msg("mighty.call_friend", friends=friends)


def _play(entry: Play, trump: str | None) -> Message:
    card = card_label(entry.card)
    if entry.suit is not None:
        return msg("mighty.play_joker", card=card, suit=suit_label(entry.suit))
    if entry.joker_call is True:
        return msg("mighty.play_joker_call", card=card)
    if entry.joker_call is False:
        return msg("mighty.play_no_joker_call", card=card)
    return msg("mighty.play", card=card)


PRESENTATION: Final = MightyPresentation()
