"""Commands a seat sends to a hand (docs/hand-files.md, "Mighty: the input").

A tagged union on the field ``type``; ``v`` is the schema version. Decoding a command
that is not well formed is ``malformed_command`` (see ``domain.codec``).
"""

from __future__ import annotations

import msgspec

from domain.limits import Card, Cards, Number, Seat, Version, Word, Words


class _Command(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    seat: Seat
    v: Version = 1


class Bid(_Command, frozen=True, tag="bid"):
    points: Number
    trump: Word


class Pass(_Command, frozen=True, tag="pass"):
    pass


class ClaimMisdeal(_Command, frozen=True, tag="claim_misdeal"):
    """§3: a hand worth ½ or less may ask for a redeal (option ``misdeal_claim``)."""


class Discard(_Command, frozen=True, tag="discard"):
    cards: Cards
    take: Cards | None = None  # mighty-3 only


class Exchange(_Command, frozen=True, tag="exchange"):
    """mighty-3: each other player takes one kitty card and discards one."""

    take: Card
    discard: Card


class ChangeTrump(_Command, frozen=True, tag="change_trump"):
    trump: Word


class CallFriend(_Command, frozen=True, tag="call_friend"):
    friend: Word | Words
    lead_suit: Word | None = None  # §4.4: advice with a 20 NT contract


class Play(_Command, frozen=True, tag="play"):
    card: Card
    suit: Word | None = None  # the suit named when leading the joker
    joker_call: bool | None = None  # only with option joker_call = declared


HandCommand = Bid | Pass | ClaimMisdeal | Discard | Exchange | ChangeTrump | CallFriend | Play
