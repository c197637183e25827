"""Commands a seat sends to a Mitigati hand (docs/hand-files.md, "Mitigati files").

A tagged union on ``type`` with a schema version ``v``, as Mighty's. A command that does
not decode (a type not in §3, an unknown action, an amount that is not an integer, a
combination name not among the four) is ``malformed_command``.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from domain.limits import Card, Cards, Number, Seat, Version

Action = Literal["pass", "pay", "sell", "continue"]
Combination = Literal["tarocchi", "kings", "mitigati", "honours"]
COMBINATIONS: tuple[Combination, ...] = ("tarocchi", "kings", "mitigati", "honours")


class _Command(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    seat: Seat
    v: Version = 1


class Bargain(_Command, frozen=True, tag="bargain"):
    """§4: pass, pay X, sell X or continue; ``amount`` only for pay and sell."""

    action: Action
    amount: Number | None = None


class Discard(_Command, frozen=True, tag="discard"):
    """§5: the dealer's three cards, face down."""

    cards: Cards


class Declare(_Command, frozen=True, tag="declare"):
    """§6: a set of combination names; it may be empty."""

    combinations: Annotated[tuple[Combination, ...], msgspec.Meta(max_length=16)]


class Play(_Command, frozen=True, tag="play"):
    card: Card


MitigatiCommand = Bargain | Discard | Declare | Play
