"""How a game presents itself to a client that knows nothing of it (docs/api.md, "Games,
labels and languages"): its catalogue (cards, options, phases, suits), a label for every
legal command, the order a hand is shown in, the cards each seat still holds.

Each game package supplies one in its ``presentation.py``, reached through its ``Game``
(``Game.presentation``); nothing outside the package knows a card, a suit or a command.

Everything here is language-neutral: a label is a ``Message``, a key and its arguments
(an argument may itself be a message, or a tuple of them: a list to be joined). The
gateway renders messages into the reader's language when it sends a document
(``services/gateway/labels.py``); stored events and views hold no text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, TypeVar, Union

import msgspec

Arg = Union[str, int, "Message", tuple["Message", ...]]


class Message(msgspec.Struct, frozen=True):
    """A sentence or a name to be rendered: ``key`` names its text in a catalogue,
    ``args`` fill its ``{name}`` fields (a tuple of messages is a list, joined)."""

    key: str
    args: dict[str, Arg] = {}


def msg(key: str, **args: Arg) -> Message:
    return Message(key, args)


class Choice(msgspec.Struct, frozen=True):
    value: Any
    label: Message


class OptionEntry(msgspec.Struct, frozen=True, kw_only=True):
    """A rule option a table may be created with: a name ``CreateTable``'s options take,
    its kind (``choice`` or ``boolean``; ``number`` with ``minimum``/``maximum``), its
    default and the values it takes."""

    name: str
    label: Message
    type: str
    default: Any
    choices: tuple[Choice, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None


class CardEntry(msgspec.Struct, frozen=True, kw_only=True):
    """A card of the deck: its name, how to say it, its suit (None: a joker, the Fool),
    its rank as printed, and ``order``: sorting a hand by it shows it as the rules do.
    ``symbol`` names the picture a client draws on its face (one of ``SYMBOLS``: its
    suit's, or the joker's, the Fool's, a tarot trump's) and ``red`` its colour, so a
    client draws any game's cards without knowing the game. ``face_up``: won in a trick,
    the card is laid face up before its winner for everyone to count (Mighty's point
    cards, rules §5)."""

    card: str
    label: Message
    suit: str | None
    rank: str
    order: int
    symbol: str = ""
    red: bool = False
    face_up: bool = False


class SuitEntry(msgspec.Struct, frozen=True):
    """A suit a command or a view names: ``symbol`` (one of ``SYMBOLS``; empty for no
    trump) and ``red`` say how a client draws it; ``short``: how a suit with no picture
    is marked where its picture would stand (no trump: "NT")."""

    suit: str
    label: Message
    symbol: str = ""
    red: bool = False
    short: Message | None = None


SYMBOLS: tuple[str, ...] = ("spade", "heart", "diamond", "club", "joker", "coin", "cup", "baton",
                            "sword", "trump", "fool")
"""The pictures a client bundles (clients/web/js/symbols.js draws each as SVG)."""


class PhaseEntry(msgspec.Struct, frozen=True):
    phase: str
    label: Message


class TermEntry(msgspec.Struct, frozen=True):
    """A name a view holds besides cards, suits and phases (Mitigati's combinations in
    ``declarations``), with how to say it: a client shows the label, never the name."""

    term: str
    label: Message


class GuideEntry(msgspec.Struct, frozen=True):
    """The players' rules guide of a game: ``name`` its file (``docs/rules/guides/<lang>/<name>.md``,
    served at ``/rules/guides/``), ``title`` how a client names it (games of a family share one)."""

    name: str
    title: Message


class GameEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One game a table can be created for (``CreateTable``'s ``game``)."""

    game: str
    family: str
    name: Message
    seats: int
    options: tuple[OptionEntry, ...]
    cards: tuple[CardEntry, ...]
    suits: tuple[SuitEntry, ...]
    phases: tuple[PhaseEntry, ...]
    terms: tuple[TermEntry, ...] = ()
    guide: GuideEntry | None = None


class DiscardStep(msgspec.Struct, frozen=True, kw_only=True):
    """The discard step of a view's ``legal`` (docs/api.md): pick ``count`` of ``from``,
    keeping ``take`` (cards of the kitty, Mighty-3) where the rules ask for it."""

    count: int
    take: tuple[str, ...] = ()


S = TypeVar("S", contravariant=True)
C = TypeVar("C", contravariant=True)
V = TypeVar("V", contravariant=True)


class Presentation(Protocol[S, C, V]):
    """A game's presentation: over its hand state ``S``, command ``C`` and view ``V``."""

    def catalogue(self) -> Sequence[GameEntry]:
        """Every game name of this family a table can be created for."""
        ...

    def label(self, view: V, entry: C | DiscardStep) -> Message:
        """The sentence a client shows for one of ``view``'s legal entries."""
        ...

    def hand_order(self, view: V) -> tuple[str, ...] | None:
        """The view's hand in the order to show it, where that depends on the hand
        (Mighty: the trump first); None: sort by the cards' ``order``."""
        ...

    def remaining(self, hand: S) -> tuple[tuple[str, ...], ...]:
        """Every seat's cards in hand now (for the audit view), each in ``order``."""
        ...

    def played_by(self, leader: int, place: int, players: int) -> int:
        """The seat that plays a trick's ``place``-th card (0: the lead) when ``leader``
        leads at a table of ``players``: the game's direction of play."""
        ...

    def hidden(self, entry: C) -> DiscardStep | None:
        """What another reader may know of ``entry``, played by someone else, when not all
        of it (a discard's cards: only how many); None when all of it is public."""
        ...

    def facts(self, view: V) -> dict[str, str]:
        """Facts of the rules a client needs beside ``view`` to show its legal entries,
        derived from the view when it is sent, never stored (Mighty's ``mighty``: which
        card is the Mighty, at the friend call); {} when there are none."""
        ...


def ordered(cards: Sequence[str], order: dict[str, int]) -> tuple[str, ...]:
    """``cards`` sorted by a catalogue's ``order``."""
    return tuple(sorted(cards, key=order.__getitem__))
