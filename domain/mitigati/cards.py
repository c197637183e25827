"""Tarot cards and their notation (docs/rules/mitigati.md, "The cards").

A card is its notation string: rank then suit (``KS``, ``1D``, ``TC`` the ten of cups),
the trumps ``T1`` … ``T21``, the Fool ``FOOL``. Every lookup is a precomputed dict.
"""

from __future__ import annotations

from typing import Final

SUITS: Final = ("D", "C", "B", "S")  # coins, cups (round); batons, swords (long)
SUIT_NAMES: Final = {"D": "coins", "C": "cups", "B": "batons", "S": "swords", "T": "trumps"}
RANKS: Final = "123456789TFNQK"
TRUMP: Final = "T"  # the suit of the trumps, when a trump is led
FOOL: Final = "FOOL"

_LONG_ORDER: Final = "123456789TFNQK"  # low to high (§1: K Q N F T 9 … 1)
_ROUND_ORDER: Final = "T987654321FNQK"  # low to high (§1: K Q N F 1 2 … 10)
_RANK_POINTS: Final = {"K": 5, "Q": 4, "N": 3, "F": 2}

SUIT_CARDS: Final = tuple(r + s for s in SUITS for r in RANKS)
TRUMP_CARDS: Final = tuple(f"T{n}" for n in range(1, 22))
DECK: Final = SUIT_CARDS + TRUMP_CARDS + (FOOL,)
CARDS: Final = frozenset(DECK)
HONOURS: Final = ("KD", "KC", "KB", "KS", "T20", "T1", FOOL)
KINGS: Final = frozenset({"KD", "KC", "KB", "KS"})
MITIGATI: Final = frozenset({"T20", "T1", FOOL})


def _suit(card: str) -> str | None:
    if card == FOOL:
        return None
    return TRUMP if card in TRUMP_CARDS else card[1]


def _strength(card: str) -> int:
    """Higher wins within a suit; trumps: T20 above T21 (§1)."""
    if card == FOOL:
        return -1
    if card in TRUMP_CARDS:
        number = int(card[1:])
        return 22 if number == 20 else number
    order = _LONG_ORDER if card[1] in "BS" else _ROUND_ORDER
    return order.index(card[0])


def _points(card: str) -> int:
    if card in ("T20", "T1"):
        return 5
    if card == FOOL:
        return 4
    if card in TRUMP_CARDS:
        return 1
    return _RANK_POINTS.get(card[0], 1)


SUIT_OF: Final[dict[str, str | None]] = {c: _suit(c) for c in DECK}
STRENGTH: Final[dict[str, int]] = {c: _strength(c) for c in DECK}
POINTS: Final[dict[str, int]] = {c: _points(c) for c in DECK}
TOTAL_POINTS: Final = sum(POINTS.values())  # 129
_ORDER: Final = {c: i for i, c in enumerate(DECK)}


def is_card(value: object) -> bool:
    return isinstance(value, str) and value in CARDS


def is_trump(card: str) -> bool:
    return SUIT_OF[card] == TRUMP


def is_honour(card: str) -> bool:
    return card in HONOURS


def trump_number(card: str) -> int:
    return int(card[1:])


def sorted_cards(cards: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Deck order: coins, cups, batons, swords (1 … K), trumps T1 … T21, the Fool."""
    return tuple(sorted(cards, key=_ORDER.__getitem__))


def describe(card: str) -> str:
    if card == FOOL:
        return "the Fool"
    if is_trump(card):
        return f"trump {card[1:]}"
    return card
