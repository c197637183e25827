"""Cards and their notation (docs/rules/mighty.md §1, notation paragraph).

A card is its notation string: rank + suit (``AS``, ``TH``), the joker ``JK``; with two
packs a deck suffix (``AS#1``) and numbered jokers (``JK1``..``JK4``). Strings keep
events, commands and hand files identical to what people read, and every lookup below is
a precomputed dict, so the hot path never parses.
"""

from __future__ import annotations

from typing import Final

SUITS: Final = ("S", "H", "D", "C")
TRUMPS: Final = ("S", "H", "D", "C", "NT")
RANKS: Final = "23456789TJQKA"
POINT_RANKS: Final = frozenset("TJQKA")
SUIT_NAMES: Final = {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs", "NT": "no trump"}

Card = str

_RANK_VALUE: Final = {r: i + 2 for i, r in enumerate(RANKS)}


def _base(card: str) -> str:
    return card.split("#", 1)[0]


def _all_notations() -> list[str]:
    plain = [r + s for s in SUITS for r in RANKS]
    packs = [c + "#" + str(p) for p in (1, 2) for c in plain]
    jokers = ["JK"] + ["JK" + str(i) for i in range(1, 5)]
    return plain + packs + jokers


ALL_CARDS: Final = frozenset(_all_notations())
SUIT_OF: Final[dict[str, str | None]] = {
    c: (None if c.startswith("JK") else _base(c)[1]) for c in ALL_CARDS
}
RANK_OF: Final[dict[str, int]] = {
    c: (0 if c.startswith("JK") else _RANK_VALUE[_base(c)[0]]) for c in ALL_CARDS
}
POINTS_OF: Final[dict[str, int]] = {
    c: (0 if c.startswith("JK") else int(_base(c)[0] in POINT_RANKS)) for c in ALL_CARDS
}


def is_card(text: object) -> bool:
    """True when ``text`` is a card in the notation (whatever the deck)."""
    return isinstance(text, str) and text in ALL_CARDS


JOKERS: Final = frozenset(c for c in ALL_CARDS if c.startswith("JK"))


def is_joker(card: Card) -> bool:
    return card in JOKERS


def suit_of(card: Card) -> str | None:
    return SUIT_OF[card]


def points_of(cards: tuple[Card, ...] | list[Card]) -> int:
    return sum(POINTS_OF[c] for c in cards)


def base_card(card: Card) -> str:
    """The card without its pack suffix: ``AS#2`` -> ``AS``."""
    return _base(card)


def mighty_of(trump: str) -> Card:
    """§1: the Mighty is AS, or AD when spades are trump."""
    return "AD" if trump == "S" else "AS"


def ripper_of(trump: str, rank: str = "3") -> Card:
    """§1: the Ripper is 3C, or 3S when clubs are trump (7C/7S in mighty-3-short)."""
    return rank + ("S" if trump == "C" else "C")


def copies(card: Card, packs: int) -> frozenset[Card]:
    """The card's copies in a game of ``packs`` packs: ``AS`` -> {AS} or {AS#1, AS#2}."""
    return frozenset({card}) if packs == 1 else frozenset(f"{card}#{p}" for p in range(1, packs + 1))


# docs/rules/mighty.md §10.1: with two packs both copies are the Mighty (and the Ripper); a trump
# change moves both. Precomputed per (trump, packs) so the hot path does one dict lookup.
_MIGHTIES: Final = {(t, p): copies(mighty_of(t), p) for t in TRUMPS for p in (1, 2)}


def mighties(trump: str, packs: int = 1) -> frozenset[Card]:
    return _MIGHTIES[trump, packs]


_RIPPERS: Final = {(t, r, p): copies(ripper_of(t, r), p) for t in TRUMPS for r in "37" for p in (1, 2)}


def rippers(trump: str, rank: str = "3", packs: int = 1) -> frozenset[Card]:
    return _RIPPERS[trump, rank, packs]


# The names a command may use: any notation with one pack (a two-pack name there is simply
# not held), only two-pack names with two (docs/hand-files.md, "Six to eight players": `AS`, `JK` are malformed).
TWO_PACK_NAMES: Final = frozenset(c for c in ALL_CARDS if "#" in c or (c.startswith("JK") and c != "JK"))


ONE_PACK_NAMES: Final = ALL_CARDS - TWO_PACK_NAMES


def card_names(packs: int) -> frozenset[Card]:
    """The names that are cards in a game of ``packs`` packs: plain names (``AS``, ``JK``)
    with one pack, pack-numbered names (``AS#1``, ``JK3``) with two (docs/rules/mighty.md §10.1).
    A name of the other kind is "a string that is not a card" (docs/hand-files.md)."""
    return ONE_PACK_NAMES if packs == 1 else TWO_PACK_NAMES


def full_pack() -> tuple[Card, ...]:
    """The French pack plus one joker, in notation order."""
    return tuple(r + s for s in SUITS for r in RANKS) + ("JK",)


def sort_key(card: Card) -> tuple[int, int, str]:
    suit = SUIT_OF[card]
    return (4 if suit is None else SUITS.index(suit), -RANK_OF[card], card)


# Display order (suits S H D C, high to low, jokers last), precomputed for the views.
_ORDER: Final[dict[str, int]] = {c: i for i, c in enumerate(sorted(ALL_CARDS, key=sort_key))}


def sorted_cards(cards: tuple[Card, ...] | list[Card] | frozenset[Card]) -> tuple[Card, ...]:
    return tuple(sorted(cards, key=_ORDER.__getitem__))
