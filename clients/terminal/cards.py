"""Cards as the server's games catalogue names them (``GET /api/v1/games``, docs/api.md,
"Games, labels and languages"): each card's rank as printed, its suit, its place in a
sorted hand (``order``), its name in the reader's language; each suit's name.

The client knows no game: ``register`` takes the catalogue once it is read, and a card of
a game it does not hold is shown by its name (``AS``). What the client adds is typography
only: the glyph drawn for each picture the catalogue names (a suit's ``symbol``, the
pictures the web client draws as SVG): ``♠ ♥ ♦ ♣`` for spade, heart, diamond and club,
``◉ ∪ ‖ †`` for coin, cup, baton and sword, ``T`` before the number of a trump (``T21``);
a suit with no picture (no trump) is drawn with the catalogue's ``short`` (``NT``), a suit
with a picture it has no glyph for with the first letter of its name. Each glyph has its colour, so that two suits never look
alike on a dark terminal; a card of no suit (a joker, a trump of the tarot, the Fool) is
magenta. Two cards of one rank and suit (two packs) are told apart by a small number.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.text import Text

GLYPHS = {"spade": "♠", "heart": "♥", "diamond": "♦", "club": "♣",
          "coin": "◉", "cup": "∪", "baton": "‖", "sword": "†", "trump": "T"}
BEFORE = frozenset({"T"})  # glyphs drawn before the rank: the tarot's trumps, T1 … T21
STYLES = {"♠": "bold bright_white", "♥": "bold red", "♦": "bold dark_orange", "♣": "bold green", "NT": "bold cyan",
          "◉": "bold yellow", "∪": "bold red", "‖": "bold green", "†": "bold bright_blue", "T": "bold magenta"}
NO_SUIT_STYLE = "bold magenta"
_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


@dataclass(frozen=True)
class Card:
    name: str
    rank: str  # as printed: "10", "K", "20", "JK"
    suit: str | None
    label: str  # the card's name in the reader's language: "ace of spades"
    order: int  # a hand sorted by it shows as the rules order it
    mark: str = ""  # "²": the second card of this rank and suit (two packs)


@dataclass(frozen=True)
class Deck:
    """One game of the catalogue, in the reader's words."""

    game: str
    name: str
    seats: int
    cards: dict[str, Card] = field(default_factory=dict)
    suits: dict[str, str] = field(default_factory=dict)  # suit → its name
    glyphs: dict[str, str] = field(default_factory=dict)  # suit → the glyph drawn
    phases: dict[str, str] = field(default_factory=dict)  # phase → its name
    terms: dict[str, str] = field(default_factory=dict)  # another name a view holds → its label

    @classmethod
    def of(cls, game: dict[str, Any]) -> Deck:
        """A ``Game`` of ``GET /games``."""
        seen: dict[tuple[str, str | None], int] = {}
        cards: dict[str, Card] = {}
        for entry in game.get("cards") or ():
            twin = (str(entry.get("rank")), entry.get("suit"))
            seen[twin] = seen.get(twin, 0) + 1
            cards[str(entry["card"])] = Card(str(entry["card"]), str(entry.get("rank")), entry.get("suit"),
                                             str(entry.get("label")), int(entry.get("order") or 0),
                                             str(seen[twin]) if seen[twin] > 1 else "")
        # the first of two twins is marked too, once there is a second
        for name, card in list(cards.items()):
            if not card.mark and seen[(card.rank, card.suit)] > 1:
                cards[name] = Card(card.name, card.rank, card.suit, card.label, card.order, "1")
        suits = {str(s["suit"]): str(s["label"]) for s in game.get("suits") or ()}
        glyphs = {str(s["suit"]): _glyph(str(s.get("symbol") or ""), str(s.get("short") or s["label"] or s["suit"]))
                  for s in game.get("suits") or ()}
        phases = {str(p["phase"]): str(p["label"]) for p in game.get("phases") or ()}
        terms = {str(x["term"]): str(x["label"]) for x in game.get("terms") or ()}
        return cls(str(game["game"]), str(game.get("name") or game["game"]), int(game.get("seats") or 0),
                   cards, suits, glyphs, phases, terms)


def _glyph(symbol: str, short: str) -> str:
    """A suit's glyph: its picture's, else (no picture: no trump) its short name, "NT"."""
    return (GLYPHS.get(symbol) or short[:1].upper()) if symbol else short


_DECKS: dict[str, Deck] = {}


def register(games: list[dict[str, Any]]) -> dict[str, Deck]:
    """The catalogue's games, kept for every screen."""
    _DECKS.clear()
    _DECKS.update({str(g["game"]): Deck.of(g) for g in games})
    return dict(_DECKS)


def deck(game: str | None) -> Deck | None:
    return _DECKS.get(game or "")


def decks() -> dict[str, Deck]:
    return dict(_DECKS)


def _card(name: str, game: str | None) -> Card | None:
    found = deck(game)
    return found.cards.get(name) if found is not None else None


def plain(name: str, game: str | None = None) -> str:
    """A card as drawn, without colour: ``A♠``, ``K♥²``, ``20``; its name when unknown."""
    card = _card(name, game)
    if card is None:
        return name
    glyph = deck(game).glyphs.get(card.suit or "", "") if card.suit else ""  # type: ignore[union-attr]
    drawn = glyph + card.rank if glyph in BEFORE else card.rank + glyph
    return drawn + card.mark.translate(_SUPERSCRIPT)


def label(name: str, game: str | None = None, *, dim: bool = False) -> Text:
    """A card as drawn, in its suit's colour (``dim``: one that cannot be played now)."""
    card = _card(name, game)
    glyph = deck(game).glyphs.get(card.suit or "", "") if card is not None and card.suit else ""  # type: ignore[union-attr]
    style = "dim" if dim else (STYLES.get(glyph, "bold") if glyph else NO_SUIT_STYLE if card else "bold")
    return Text(plain(name, game), style=style)


def spoken(name: str, game: str | None = None) -> str:
    """The card's name in the reader's language (``ace of spades``)."""
    card = _card(name, game)
    return card.label if card is not None else name


def sort_hand(cards: list[str], game: str | None = None) -> list[str]:
    """In the catalogue's ``order`` (the rules' order of a hand); unknown cards last."""
    found = deck(game)
    known = found.cards if found is not None else {}
    return sorted(cards, key=lambda c: (0, known[c].order, c) if c in known else (1, 0, c))


def suit_label(suit: str, game: str | None = None) -> Text:
    """A suit as drawn: its glyph in its colour (``♥``), its name's letter without one."""
    found = deck(game)
    glyph = found.glyphs.get(suit, suit) if found is not None else suit
    return Text(glyph, style=STYLES.get(glyph, "bold"))


def term(name: str, game: str | None = None) -> str:
    """Another name a view holds (a combination declared) as the catalogue says it."""
    found = deck(game)
    return found.terms.get(name, name) if found is not None else name


def suit_name(suit: str, game: str | None = None) -> str:
    found = deck(game)
    return found.suits.get(suit, suit) if found is not None else suit


def cards_text(names: list[str], game: str | None = None) -> Text:
    return Text(" ").join(label(n, game) for n in names)
