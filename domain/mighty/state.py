"""A hand's state as a union of phases (docs/architecture.md, "The domain"), each a frozen Struct.

Fields that cannot exist in a phase do not exist in its class: there is no declarer while
bidding, no trick before play. ``evolve`` moves between phases with ``structs.replace``
or by building the next phase from the last.
"""

from __future__ import annotations

import msgspec

from domain.mighty.events import HandScored, TrickWon
from domain.mighty.rules import RuleSet

# (seat, points, trump); points 0 means a pass.
AuctionEntry = tuple[int, int, str]


class _Hand(msgspec.Struct, frozen=True, kw_only=True):
    rules: RuleSet
    dealer: int
    first_bidder: int
    hand_no: int
    hands: tuple[tuple[str, ...], ...]  # what each seat holds now
    kitty: tuple[str, ...]
    dealt: tuple[tuple[str, ...], ...]  # what each seat was dealt (for the audit view)
    auction: tuple[AuctionEntry, ...] = ()

    @property
    def players(self) -> int:
        return len(self.hands)


class Bidding(_Hand, frozen=True, kw_only=True):
    to_act: int
    round: int = 1
    standing: AuctionEntry | None = None
    passed: tuple[bool, ...]  # passed in this round
    passes_since_bid: int = 0
    acted: tuple[bool, ...]  # bid or passed at all (a misdeal claim comes before)


class _Contracted(_Hand, frozen=True, kw_only=True):
    declarer: int
    points: int  # the contract, raised by any trump change
    trump: str
    bid_points: int
    bid_trump: str
    kitty_shown: bool = True
    kitty_left: tuple[str, ...] = ()  # mighty-3: kitty cards nobody has taken yet
    exchanges: tuple[tuple[int, str, str], ...] = ()  # mighty-3: (seat, take, discard)


class Exchange(_Contracted, frozen=True, kw_only=True):
    discards: tuple[str, ...] | None = None
    trump_changed: bool = False
    exchanger: int | None = None  # mighty-3: whose turn it is to take and discard one


class _Played(_Contracted, frozen=True, kw_only=True):
    discards: tuple[str, ...]
    trump_changed: bool
    call: str  # "card" | "first_trick" | "none"
    called_card: str | None
    lead_suit: str | None
    friend: int | None  # secret until friend_known; None: alone or not yet decided
    friend_known: bool  # every call is revealed: the partnership is public
    # Generalised friend calls (docs/rules/mighty.md §10.4: up to two, each a card or first_trick).
    # One-pack variants fill them too; ``friend`` stays their single friend, and is None
    # in the two-pack variants, which use ``friends``.
    calls: tuple[str, ...] = ()  # called cards and/or "first_trick"; () for none
    pending: tuple[str, ...] = ()  # the calls not revealed yet
    friends: tuple[int, ...] = ()  # sorted distinct friend seats, secret until revealed
    revealed: tuple[int, ...] = ()  # the friend seats revealed so far (public)
    tricks: tuple[TrickWon, ...] = ()
    taken: tuple[int, ...]  # point cards won in tricks, per seat


class Playing(_Played, frozen=True, kw_only=True):
    leader: int
    to_act: int
    trick: tuple[str, ...] = ()  # cards of the current trick, in play order
    led_suit: str | None = None
    joker_called: bool = False  # the current trick's lead called the joker (§5)
    joker_call_made: bool = False  # the lead was a joker call, effective or not


class Finished(_Played, frozen=True, kw_only=True):
    scored: HandScored


class Redeal(_Hand, frozen=True, kw_only=True):
    """The deal was thrown in: passed out twice, or a misdeal claimed (§3)."""

    reason: str
    claimed_by: int | None = None


HandState = Bidding | Exchange | Playing | Finished | Redeal


def phase_name(state: HandState) -> str:
    """The hand-file phase names: bidding, exchange, play, finished, redeal."""
    if isinstance(state, Bidding):
        return "bidding"
    if isinstance(state, Exchange):
        return "exchange"
    if isinstance(state, Playing):
        return "play"
    if isinstance(state, Finished):
        return "finished"
    return "redeal"


def to_act(state: HandState) -> int | None:
    if isinstance(state, Bidding | Playing):
        return state.to_act
    if isinstance(state, Exchange):
        return state.declarer if state.exchanger is None else state.exchanger
    return None
