"""Events: facts in the past tense, never edited once stored (docs/architecture.md, "Events are facts").

Each event's tag is pinned by hand so renaming a class cannot break a stored stream; new
fields only ever arrive with defaults, and ``v`` is the schema version for upcasters.
Facts computed in ``decide`` (a trick's winner, the scores, the called card's holder,
whether a joker call has effect, which call a reveal resolves) travel in the events, so
neither ``evolve`` nor a projection re-runs a rule. A fact added by a later version is
``UNSET`` (left out of the encoded event) where it does not apply; in an event stored
before its version it is ``UNSET`` too, and ``hand.evolve`` derives it as that version's
readers did (``domain/upcasting.py``, docs/architecture.md).
"""

from __future__ import annotations

import msgspec
from msgspec import UNSET, UnsetType

from domain.mighty.rules import RuleSet


class _Event(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    v: int = 1


class HandDealt(_Event, frozen=True, tag="hand_dealt"):
    rules: RuleSet
    rules_fingerprint: str
    dealer: int
    first_bidder: int
    hands: tuple[tuple[str, ...], ...]
    kitty: tuple[str, ...]
    hand_no: int = 0
    commitment: str | None = None  # sha256 of the card order and a secret salt (§2)
    salt: str | None = None  # secret until DealRevealed; views never show it


class MisdealClaimed(_Event, frozen=True, tag="misdeal_claimed"):
    seat: int


class BidMade(_Event, frozen=True, tag="bid_made"):
    seat: int
    points: int
    trump: str


class Passed(_Event, frozen=True, tag="passed"):
    seat: int


class BiddingReopened(_Event, frozen=True, tag="bidding_reopened"):
    """§3: everybody passed without a bid; one more round is bid."""

    round: int


class HandPassedOut(_Event, frozen=True, tag="hand_passed_out"):
    """§3: the second round was all passes too; the same dealer deals again."""


class AuctionWon(_Event, frozen=True, tag="auction_won"):
    declarer: int
    points: int
    trump: str


class KittyTaken(_Event, frozen=True, tag="kitty_taken"):
    seat: int
    cards: tuple[str, ...]
    shown: bool
    into_hand: bool = True  # False in mighty-3: the declarer picks from it when discarding


class CardsDiscarded(_Event, frozen=True, tag="cards_discarded"):
    seat: int
    cards: tuple[str, ...]
    taken: tuple[str, ...] | None = None  # mighty-3: the kitty cards the declarer kept


class KittyExchanged(_Event, frozen=True, tag="kitty_exchanged"):
    """mighty-3 (§7): a player other than the declarer takes a kitty card, discards one."""

    seat: int
    take: str
    discard: str


class TrumpChanged(_Event, frozen=True, tag="trump_changed"):
    seat: int
    trump: str
    points: int  # the raised contract


class FriendCalled(_Event, frozen=True, kw_only=True, tag="friend_called"):
    """v2 added ``holder``."""

    v: int = 2
    seat: int
    call: str  # "card" | "first_trick" | "none"
    card: str | None = None
    lead_suit: str | None = None
    # a card call: the seat holding the called card, the friend (secret until the reveal, §8)
    holder: int | UnsetType = UNSET


class CardPlayed(_Event, frozen=True, kw_only=True, tag="card_played"):
    """v2 added ``joker_call_effective``."""

    v: int = 2
    seat: int
    card: str
    suit: str | None = None  # suit named with a joker lead
    joker_call: bool = False  # this lead calls the joker (it has effect or not)
    # a lead that calls the joker: whether the call has effect, that is another seat
    # holds a Joker, which must come out (§5)
    joker_call_effective: bool | UnsetType = UNSET


class FriendRevealed(_Event, frozen=True, kw_only=True, tag="friend_revealed"):
    """v2 added ``call``."""

    v: int = 2
    seat: int
    call: str | UnsetType = UNSET  # the call this reveal resolves: the called card, or "first_trick"


class DeclarerAlone(_Event, frozen=True, tag="declarer_alone"):
    """A first-trick call won by the declarer: the declarer plays alone (§4.3)."""


class TrickWon(_Event, frozen=True, tag="trick_won"):
    trick: int
    leader: int
    cards: tuple[str, ...]
    winner: int
    points: int


class HandScored(_Event, frozen=True, tag="hand_scored"):
    declarer: int
    friend: int | None
    points: int
    trump: str
    declarer_side_points: int
    made: bool
    scores: tuple[int, ...]


HandEvent = (
    HandDealt | MisdealClaimed | BidMade | Passed | BiddingReopened | HandPassedOut
    | AuctionWon | KittyTaken | CardsDiscarded | KittyExchanged | TrumpChanged | FriendCalled | CardPlayed
    | FriendRevealed | DeclarerAlone | TrickWon | HandScored
)
