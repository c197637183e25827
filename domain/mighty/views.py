"""What each seat may see (docs/rules/mighty.md §8), as pure functions of the state.

- A seat: its own hand; the public face of the table; the discards if it is the declarer;
  the friend's identity once revealed (or if it is the friend).
- A spectator: the public face only; no unplayed card at all.
- The audit view, after the hand ends: everything.

``all_views`` renders every seat and the spectator at once, computing the public face a
single time: projection workers render six views per event, so this is their hot path.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

import msgspec
from msgspec.structs import replace

from domain.mighty.cards import sorted_cards
from domain.mighty.commands import Discard, HandCommand
from domain.mighty.legal import legal_commands
from domain.mighty.state import (
    Bidding,
    Exchange,
    Finished,
    HandState,
    Playing,
    Redeal,
    phase_name,
    to_act,
)


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
    # docs/rules/mighty.md §10 (two packs): every call, and the friend seats revealed so far
    # (all of them once friend_known); a secret friend sees its own seat in ``friend``.
    # UNSET (left out of the encoded view) in the one-pack variants, whose views stay as
    # they were byte for byte.
    friend_calls: tuple[str, ...] | msgspec.UnsetType = msgspec.UNSET
    friends: tuple[int, ...] | msgspec.UnsetType = msgspec.UNSET
    trick: TrickView | None = None
    led_suit: str | None = None
    # §5 `joker_call = declared`: whether the current trick's lead called the Joker, a
    # choice made aloud (§8). UNSET (left out) under the default, where the lead card
    # alone says it, so those views stay as they were byte for byte.
    joker_call: bool | msgspec.UnsetType = msgspec.UNSET
    # A thrown-in deal: why ("passed_out" or "misdeal") and who claimed the misdeal, both
    # said aloud (§3). UNSET in every other phase.
    redeal: str | msgspec.UnsetType = msgspec.UNSET
    claimed_by: int | None | msgspec.UnsetType = msgspec.UNSET
    tricks: tuple[TrickView, ...] = ()
    # Point cards each seat won in tricks: public, since every played card is (§5, §8).
    face_up_points: tuple[int, ...] = ()
    scores: tuple[int, ...] | None = None
    declarer_side_points: int | None = None
    made: bool | None = None
    # The viewer's legal commands. The discard step is not listed card set by card set
    # (286 of them in mighty-5): ``discard_count`` says how many of the hand to discard.
    legal: tuple[HandCommand, ...] = ()
    discard_count: int | None = None
    # mighty-3's discard step: the sets of kitty cards the declarer may keep (the discard's
    # ``take``), in ``combinations`` order. UNSET (left out) in every other variant and step.
    discard_takes: tuple[tuple[str, ...], ...] | msgspec.UnsetType = msgspec.UNSET
    # mighty-3: the viewer's own kitty exchange (take, discard); the audit view's `exchanges`
    # holds every one as (seat, take, discard).
    own_exchange: tuple[str, str] | None = None
    exchanges: tuple[tuple[int, str, str], ...] | None = None  # audit only
    dealt: tuple[tuple[str, ...], ...] | None = None  # audit only


def seat_view(state: HandState, seat: int) -> HandView:
    return _for_seat(state, _public(state), seat)


def spectator_view(state: HandState) -> HandView:
    return _public(state)


def all_views(state: HandState) -> tuple[list[HandView], HandView]:
    """Every seat's view, in seat order, and the spectator's."""
    public = _public(state)
    return [_for_seat(state, public, seat) for seat in range(len(state.hands))], public


def audit_view(state: HandState, *, cut_short: bool = False) -> HandView:
    """Everything, but only once the hand is over (§8): finished, redealt, or (``cut_short``)
    ended where it stood by its table closing."""
    if not (cut_short or isinstance(state, Finished | Redeal)):
        raise ValueError("The audit view exists only after the hand ends.")
    public = _public(state)
    extra: dict[str, Any] = {"audit": True, "dealt": state.dealt, "kitty": state.kitty, "to_act": None}
    if isinstance(state, Exchange | Playing | Finished):
        extra.update(discards=state.discards, exchanges=state.exchanges)
    if isinstance(state, Playing | Finished):
        extra["friend"] = state.friend
        if state.rules.spec.packs > 1:
            extra["friends"] = state.friends
    return replace(public, **extra)


def _public(state: HandState) -> HandView:
    """The spectator's view: the public face of the table, no unplayed card."""
    base: dict[str, Any] = dict(
        viewer=None, hand_no=state.hand_no, phase=phase_name(state), dealer=state.dealer,
        to_act=to_act(state), rules_fingerprint=state.rules.fingerprint(), hand=None,
        hand_sizes=tuple(len(h) for h in state.hands), auction=state.auction,
    )
    if isinstance(state, Redeal):
        return HandView(**base, redeal=state.reason, claimed_by=state.claimed_by)
    if isinstance(state, Bidding):
        return HandView(**base)
    base.update(declarer=state.declarer, contract=(state.points, state.trump))
    if state.kitty_shown:
        base["kitty"] = state.kitty
    if isinstance(state, Exchange):
        return HandView(**base)
    base.update(
        friend_call=(state.call, state.called_card), lead_suit=state.lead_suit,
        friend=state.friend if state.friend_known else None, friend_known=state.friend_known,
        tricks=tuple(TrickView(t.leader, t.cards, t.winner) for t in state.tricks),
        face_up_points=state.taken,
    )
    if state.rules.spec.packs > 1:
        base.update(friend_calls=state.calls, friends=state.revealed)
    if isinstance(state, Playing):
        base.update(trick=TrickView(state.leader, state.trick) if state.trick else None,
                    led_suit=state.led_suit)
        if state.trick and state.rules.joker_call == "declared":
            base["joker_call"] = state.joker_call_made
        return HandView(**base)
    scored = state.scored
    base.update(scores=scored.scores, declarer_side_points=scored.declarer_side_points,
                made=scored.made)
    return HandView(**base)


def _for_seat(state: HandState, public: HandView, seat: int) -> HandView:
    """The public face plus what this seat alone may see."""
    extra: dict[str, Any] = {"viewer": seat, "hand": sorted_cards(state.hands[seat])}
    if isinstance(state, Exchange) and state.discards is None and seat == to_act(state):
        # the discard step: only the count is shown, so the card sets are not listed
        # (C(23, 6) = 100,947 of them with two packs)
        legal: Sequence[HandCommand] = []
        extra["discard_count"] = state.rules.spec.discard_count
        keep = state.rules.spec.kitty_keep
        if keep is not None:
            extra["discard_takes"] = tuple(combinations(state.kitty_left, keep))
    else:
        legal = legal_commands(state, seat)
    if legal and isinstance(legal[0], Discard):
        extra["discard_count"] = len(legal[0].cards)
    elif legal:
        extra["legal"] = tuple(legal)
    if isinstance(state, Bidding | Redeal):
        return replace(public, **extra)
    if seat == state.declarer:
        extra.update(kitty=state.kitty, discards=state.discards)
    for who, take, discard in state.exchanges:
        if who == seat:
            extra["own_exchange"] = (take, discard)
    if isinstance(state, Playing | Finished) and not state.friend_known and (
            seat == state.friend or seat in state.friends):
        extra["friend"] = seat  # a friend knows it is one (§8)
    return replace(public, **extra)

