"""What the hand files of every game share (docs/hand-files.md,
Mighty's and "Mitigati files"): the ``rules`` field that says whose file it is, the
``rejected`` object, and what ``mighty replay`` needs of a game's reader."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import msgspec

from domain.errors import RuleError, refusal_told_to_another_seat


def rules_named(data: bytes) -> object:
    """The ``rules`` field of a hand file, or None when it cannot be read: ``mighty
    replay`` routes the file to the game it names (``domain.registry``), so a broken file
    keeps the message its game's parser gives it."""
    try:
        document = msgspec.json.decode(data)
    except msgspec.DecodeError:
        return None
    return document.get("rules") if isinstance(document, dict) else None


class Rejection(msgspec.Struct):
    index: int
    seat: int | None
    code: str
    message: str


def rejection(index: int, raw: object, error: RuleError, as_seat: int | None) -> Rejection:
    """The ``rejected`` object for the command at ``index`` (both games). Replayed as a
    seat, another seat's refusal never carries its message, which may name the command's
    cards ("Seat 0 does not hold QH")."""
    seat = raw.get("seat") if isinstance(raw, dict) else None
    seat_no = seat if isinstance(seat, int) and not isinstance(seat, bool) else None
    code, message = error.code, error.message
    if as_seat is not None and seat_no != as_seat:
        # some codes also say what the sender holds (must_play_joker): another seat
        # learns why in a word only when that reveals no card
        code, message = refusal_told_to_another_seat(error, seat_no)
    return Rejection(index, seat_no, code, message)


@dataclass(frozen=True)
class Replayed:
    """A replay as ``mighty replay`` prints it: with ``--as``, one line per step and then
    the refusal; otherwise the whole outcome (``document``, made only when asked)."""

    steps: Sequence[object] | None
    rejected: Rejection | None
    document: Callable[[], object]


class HandFileRun(Protocol):
    """A parsed and checked hand file of one game, ready to replay."""

    @property
    def variant(self) -> str: ...

    @property
    def players(self) -> int: ...

    def replay(self, as_seat: int | None, view: Callable[[Any], Any] | None = None) -> Replayed:
        """Fold the deal and every command once, stopping at the first refusal. Steps are
        made when a reader is given: ``as_seat``'s view after each step, or ``view`` of
        the hand state after each (a spectator's, the audit's); a refusal is told as
        ``as_seat`` may learn it."""
        ...
