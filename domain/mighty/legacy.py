"""Facts that events stored before version 2 do not hold, derived from the hand as the
readers of version 1 did (``domain/upcasting.py``). ``hand.evolve`` calls these only for
an event whose fact is ``UNSET``; every event ``decide`` writes today carries its facts.

Each derivation is the very rule ``decide`` now applies before writing the fact, so an old
stream folds to the state it always folded to.
"""

from __future__ import annotations

from msgspec.structs import replace

from domain.mighty.events import CardPlayed, FriendCalled, FriendRevealed
from domain.mighty.exchange import holder_of
from domain.mighty.play import joker_call_has_effect
from domain.mighty.state import Exchange, Playing


def friend_called(state: Exchange | Playing, event: FriendCalled) -> FriendCalled:
    """v1 ``friend_called``: the holder is whoever holds the called card now."""
    assert event.card is not None
    return replace(event, holder=holder_of(state.hands, event.card))


def card_played(state: Playing, event: CardPlayed) -> CardPlayed:
    """v1 ``card_played`` of a lead that calls the joker: in effect when another seat
    holds a Joker (the state is the one before the lead)."""
    return replace(event, joker_call_effective=joker_call_has_effect(state, event.seat))


def friend_revealed(state: Playing, event: FriendRevealed) -> FriendRevealed:
    """v1 ``friend_revealed``: the card just played if it is a pending call (it follows
    its ``card_played``), else the first-trick call (it follows ``trick_won``)."""
    played = state.trick[-1] if state.trick else None
    return replace(event, call=played if played in state.pending else "first_trick")
