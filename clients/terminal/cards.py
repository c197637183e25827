"""Cards as the terminal shows them: suit symbols and colours, sorted by suit.

Card names are the hand-file names (docs/hand-files.md): Mighty's ``AS``, ``TD``, ``JK``
(with a pack in the large games: ``KH#2``, ``JK3``); Mitigati's ``1D`` … ``KS`` in coins,
cups, batons and swords, the trumps ``T1`` … ``T21`` and ``FOOL``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rich.text import Text

_MIGHTY = re.compile(r"(?P<rank>[2-9TJQKA])(?P<suit>[SHDC])(?:#(?P<pack>\d))?")
_JOKER = re.compile(r"JK(?P<pack>\d)?")
_MITIGATI = re.compile(r"(?P<rank>[1-9TFNQK])(?P<suit>[DCBS])")
_TRUMP = re.compile(r"T(?P<number>\d{1,2})")

SUIT_SYMBOLS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣", "NT": "NT"}
SUIT_NAMES = {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs", "NT": "no trump"}
# four colours, so that two suits never look alike on a dark terminal
SUIT_STYLES = {"S": "bold bright_white", "H": "bold red", "D": "bold dark_orange", "C": "bold green",
               "NT": "bold cyan"}
_MIGHTY_RANKS = "AKQJT98765432"
_POINT_RANKS = frozenset("AKQJT")  # docs/rules/mighty.md §1: every A, K, Q, J, 10

# Mitigati's Italian suits: coins, cups, batons, swords
MITIGATI_SYMBOLS = {"D": "◉", "C": "∪", "B": "‖", "S": "†"}
MITIGATI_NAMES = {"D": "coins", "C": "cups", "B": "batons", "S": "swords"}
MITIGATI_STYLES = {"D": "bold yellow", "C": "bold red", "B": "bold green", "S": "bold bright_blue"}
# docs/rules/mitigati.md, "The cards": high to low; coins and cups run the other way below the court
_LONG_ORDER = "KQNFT987654321"
_SHORT_ORDER = "KQNF123456789T"
_MITIGATI_SUIT_ORDER = "DCBS"
_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


@dataclass(frozen=True)
class Card:
    name: str
    rank: str  # as shown: "10", "K", "T21", "Jkr", "Fool"
    suit: str | None  # the hand-file suit letter, None for a joker, trump or the Fool
    symbol: str
    style: str
    order: tuple[int, int, int]  # sorts a hand by suit, high to low


def parse(name: str, game: str | None = None) -> Card:
    """The card of a hand-file name, for the table's game (``mitigati`` or a Mighty)."""
    if game == "mitigati":
        return _mitigati(name)
    if joker := _JOKER.fullmatch(name):
        pack = int(joker["pack"] or 1)
        return Card(name, "Jkr" + _pack(joker["pack"]), None, "", "bold magenta", (4, 0, pack))
    if found := _MIGHTY.fullmatch(name):
        rank, suit = found["rank"], found["suit"]
        pack = int(found["pack"] or 1)
        shown = "10" if rank == "T" else rank
        return Card(name, shown, suit, SUIT_SYMBOLS[suit] + _pack(found["pack"]), SUIT_STYLES[suit],
                    ("SHCD".index(suit), _MIGHTY_RANKS.index(rank), pack))
    return Card(name, name, None, "", "bold", (9, 0, 0))


def _pack(pack: str | None) -> str:
    return "" if pack is None else pack.translate(_SUPERSCRIPT)


def _mitigati(name: str) -> Card:
    if name == "FOOL":
        return Card(name, "Fool", None, "", "bold cyan", (1, 0, 0))
    if trump := _TRUMP.fullmatch(name):
        number = int(trump["number"])
        rank_order = 0 if number == 20 else (1 if number == 21 else 22 - number)  # T20 T21 T19 … T1
        return Card(name, f"T{number}", None, "", "bold magenta", (0, rank_order, 0))
    if found := _MITIGATI.fullmatch(name):
        rank, suit = found["rank"], found["suit"]
        order = _SHORT_ORDER if suit in "DC" else _LONG_ORDER
        return Card(name, "10" if rank == "T" else rank, suit, MITIGATI_SYMBOLS[suit], MITIGATI_STYLES[suit],
                    (2 + _MITIGATI_SUIT_ORDER.index(suit), order.index(rank), 0))
    return Card(name, name, None, "", "bold", (9, 0, 0))


def label(name: str, game: str | None = None, *, dim: bool = False) -> Text:
    card = parse(name, game)
    style = "dim" if dim else card.style
    return Text(card.rank + card.symbol, style=style)


def plain(name: str, game: str | None = None) -> str:
    card = parse(name, game)
    return card.rank + card.symbol


def sort_hand(cards: list[str], game: str | None = None, trump: str | None = None) -> list[str]:
    """By suit (the trump first when there is one), high to low inside a suit."""
    def key(name: str) -> tuple[int, int, int, int]:
        card = parse(name, game)
        first = 0 if trump and card.suit == trump and game != "mitigati" else 1
        return (first, *card.order)

    return sorted(cards, key=key)


def is_point_card(name: str, game: str | None = None) -> bool:
    """Mighty's point cards (docs/rules/mighty.md §1); Mitigati lays none face up."""
    found = None if game == "mitigati" else _MIGHTY.fullmatch(name)
    return found is not None and found["rank"] in _POINT_RANKS


def suit_label(suit: str) -> Text:
    return Text(SUIT_SYMBOLS.get(suit, suit), style=SUIT_STYLES.get(suit, "bold"))


def cards_text(names: list[str], game: str | None = None) -> Text:
    return Text(" ").join(label(n, game) for n in names)
