"""What each seat may see (rules/mighty.md §8), as pure functions of the state.

- A seat: its own hand; the public face of the table; the discards if it is the declarer;
  the friend's identity once revealed (or if it is the friend).
- A spectator: the public face only; no unplayed card at all.
- The audit view, after the hand ends: everything.
"""

from __future__ import annotations

from typing import Any

import msgspec

from domain.cards import POINTS_OF, sorted_cards
from domain.legal import legal_commands
from domain.state import Bidding, Exchange, Finished, HandState, Playing, Redeal, phase_name, to_act


class TrickView(msgspec.Struct, frozen=True):
    leader: int
    cards: tuple[str, ...]
    winner: int | None = None


class HandView(msgspec.Struct, frozen=True, kw_only=True):
    viewer: int | None  # the seat, or None for a spectator
    audit: bool = False
    hand_no: int
    phase: str
    dealer: int
    to_act: int | None
    rules_fingerprint: str
    hand: tuple[str, ...] | None  # the viewer's own cards
    hand_sizes: tuple[int, ...]
    auction: tuple[tuple[int, int, str], ...]
    declarer: int | None = None
    contract: tuple[int, str] | None = None
    kitty: tuple[str, ...] | None = None  # shown to all when kitty_shown, else the declarer's
    discards: tuple[str, ...] | None = None  # the declarer's, or the audit view's
    friend_call: tuple[str, str | None] | None = None  # (call, card)
    lead_suit: str | None = None
    friend: int | None = None  # known to the viewer: revealed, or the viewer is the friend
    friend_known: bool = False  # public: the friend has been revealed (or there is none)
    trick: TrickView | None = None
    led_suit: str | None = None
    tricks: tuple[TrickView, ...] = ()
    face_up_points: tuple[int, ...] = ()  # point cards won in tricks, per seat (public)
    scores: tuple[int, ...] | None = None
    declarer_side_points: int | None = None
    made: bool | None = None
    legal: tuple[dict[str, Any], ...] = ()
    dealt: tuple[tuple[str, ...], ...] | None = None  # audit only


def seat_view(state: HandState, seat: int) -> HandView:
    return _view(state, seat, audit=False)


def spectator_view(state: HandState) -> HandView:
    return _view(state, None, audit=False)


def audit_view(state: HandState) -> HandView:
    """Everything, but only once the hand is over (§8)."""
    if not isinstance(state, Finished | Redeal):
        raise ValueError("The audit view exists only after the hand ends.")
    return _view(state, None, audit=True)


def _view(state: HandState, seat: int | None, *, audit: bool) -> HandView:
    own = sorted_cards(state.hands[seat]) if seat is not None else None
    base: dict[str, Any] = dict(
        viewer=seat, audit=audit, hand_no=state.hand_no, phase=phase_name(state),
        dealer=state.dealer, to_act=to_act(state),
        rules_fingerprint=state.rules.fingerprint(), hand=own,
        hand_sizes=tuple(len(h) for h in state.hands), auction=state.auction,
    )
    if seat is not None:
        base["legal"] = tuple(msgspec.to_builtins(c) for c in legal_commands(state, seat))
    if audit:
        base["dealt"] = state.dealt
        base["kitty"] = state.kitty
    if isinstance(state, Bidding | Redeal):
        return HandView(**base)
    is_declarer = seat == state.declarer
    base.update(declarer=state.declarer, contract=(state.points, state.trump))
    if state.kitty_shown or is_declarer or audit:
        base["kitty"] = state.kitty
    if is_declarer or audit:
        base["discards"] = state.discards
    if isinstance(state, Exchange):
        return HandView(**base)
    friend_visible = state.friend_known or audit or (seat is not None and seat == state.friend)
    base.update(
        friend_call=(state.call, state.called_card), lead_suit=state.lead_suit,
        friend=state.friend if friend_visible else None, friend_known=state.friend_known,
        tricks=tuple(TrickView(t.leader, t.cards, t.winner) for t in state.tricks),
        face_up_points=_face_up_points(state),
    )
    if isinstance(state, Playing):
        base.update(trick=TrickView(state.leader, state.trick) if state.trick else None,
                    led_suit=state.led_suit)
        return HandView(**base)
    scored = state.scored
    base.update(scores=scored.scores, declarer_side_points=scored.declarer_side_points,
                made=scored.made)
    return HandView(**base)


def _face_up_points(state: Playing | Finished) -> tuple[int, ...]:
    """Point cards each seat won in tricks: public, since every played card is (§5, §8)."""
    taken = [0] * state.players
    for trick in state.tricks:
        taken[trick.winner] += sum(POINTS_OF[c] for c in trick.cards)
    return tuple(taken)
