"""What each seat may see of a Mitigati hand, as pure functions of the state.

- A seat: its own hand (the packets dealt to it so far), the public face of the table,
  and the discards if it is the dealer (they are face down).
- A spectator: the public face only: the bargaining said aloud, the declarations (with
  the trumps shown for tarocchi), the played cards, the Fool's exchange, the scores.
- The audit view, once the hand is over: everything, the whole deal included.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec.structs import replace

from domain.mitigati.cards import sorted_cards
from domain.mitigati.commands import MitigatiCommand
from domain.mitigati.events import Declaration
from domain.mitigati.legal import DiscardChoices, legal_commands
from domain.mitigati.rules import DISCARD_COUNT
from domain.mitigati.state import (
    Abandoned,
    Bargaining,
    Declaring,
    Finished,
    FoolRecord,
    MitigatiState,
    Packets,
    Playing,
    phase_name,
    to_act,
)


class TrickView(msgspec.Struct, frozen=True):
    leader: int
    cards: tuple[str, ...]
    winner: int | None = None


class BargainView(msgspec.Struct, frozen=True, kw_only=True):
    """The session in progress, all of it said aloud."""

    session: int
    said: tuple[tuple[int, str, int | None], ...]
    payer: int | None
    offer: int | None
    seller: int | None
    ask: int | None


class MitigatiView(msgspec.Struct, frozen=True, kw_only=True):
    viewer: int | None  # the seat, or None for a spectator
    audit: bool = False
    hand_no: int
    phase: str
    dealer: int
    to_act: int | None
    rules_fingerprint: str
    hand: tuple[str, ...] | None  # the viewer's own cards
    hand_sizes: tuple[int, ...]
    bargaining: BargainView | None = None
    discards: tuple[str, ...] | None = None  # the dealer's own, or the audit view's
    declarations: tuple[Declaration, ...] = ()
    trick: TrickView | None = None
    tricks: tuple[TrickView, ...] = ()
    fool: FoolRecord | None = None
    points: tuple[int, ...] | None = None
    scores: tuple[int, ...] | None = None
    abandoned: tuple[int, int, int, int] | None = None  # (session, payer, seller, amount)
    legal: tuple[MitigatiCommand, ...] = ()
    discard_count: int | None = None  # the discard step: how many, not every set
    # The discard step: the cards it may take (not the honours). UNSET (left out) in every
    # other step, so those views stay as they were byte for byte.
    discard_from: tuple[str, ...] | msgspec.UnsetType = msgspec.UNSET
    packets: Packets | None = None  # audit only


def seat_view(state: MitigatiState, seat: int) -> MitigatiView:
    extra: dict[str, Any] = {"viewer": seat, "hand": sorted_cards(state.hands[seat])}
    legal = legal_commands(state, seat)
    if isinstance(legal, DiscardChoices):
        extra["discard_count"] = DISCARD_COUNT
        extra["discard_from"] = sorted_cards(legal.cards)
    elif legal:
        extra["legal"] = tuple(legal)
    if seat == state.dealer and isinstance(state, Declaring | Playing | Finished):
        extra["discards"] = state.discards
    return replace(spectator_view(state), **extra)


def spectator_view(state: MitigatiState) -> MitigatiView:
    """The public face of the table: no card that is not public."""
    base: dict[str, Any] = dict(
        viewer=None, hand_no=state.hand_no, phase=phase_name(state), dealer=state.dealer,
        to_act=to_act(state), rules_fingerprint=state.rules.fingerprint(), hand=None,
        hand_sizes=tuple(len(h) for h in state.hands),
    )
    if isinstance(state, Bargaining):
        base["bargaining"] = BargainView(session=state.session, said=state.history,
                                         payer=state.payer, offer=state.offer,
                                         seller=state.seller, ask=state.ask)
    if isinstance(state, Abandoned):
        base.update(abandoned=(state.session, state.payer, state.seller, state.amount),
                    scores=state.scores)
    if isinstance(state, Declaring | Playing | Finished):
        base["declarations"] = state.declarations
    if isinstance(state, Playing | Finished):
        base.update(tricks=tuple(TrickView(t.leader, t.cards, t.winner) for t in state.tricks),
                    fool=state.fool)
    if isinstance(state, Playing) and state.trick:
        base["trick"] = TrickView(state.leader, state.trick)
    if isinstance(state, Finished):
        base.update(points=state.points, scores=state.scores)
    return MitigatiView(**base)


def audit_view(state: MitigatiState, *, cut_short: bool = False) -> MitigatiView:
    """Everything, but only once the hand is over: finished, abandoned, or (``cut_short``)
    ended where it stood by its table closing."""
    if not (cut_short or isinstance(state, Finished | Abandoned)):
        raise ValueError("The audit view exists only after the hand ends.")
    extra: dict[str, Any] = {"audit": True, "packets": state.packets}
    if isinstance(state, Declaring | Playing | Finished):
        extra["discards"] = state.discards
    if not isinstance(state, Finished | Abandoned):
        extra.update(to_act=None)
    return replace(spectator_view(state), **extra)
