"""Mitigati's events: facts in the past tense, never edited once stored (docs/architecture.md, "Events are facts").

Tags are pinned and all start with ``mitigati_``, so they can never clash with Mighty's
in a shared stream decoder. Facts computed in ``decide`` travel in the events: a trick's
winner, the declared values, the Fool's exchange card, the scores.
"""

from __future__ import annotations

import msgspec

from domain.mitigati.rules import RuleSet


class _Event(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    v: int = 1


class HandDealt(_Event, frozen=True, tag="mitigati_hand_dealt"):
    """The whole deal as data: ``packets[r][s]``. Rounds 1 and 2 are in the hands now;
    the others arrive with ``PacketsDealt`` (§4)."""

    rules: RuleSet
    rules_fingerprint: str
    dealer: int
    packets: tuple[tuple[tuple[str, ...], ...], ...]
    hand_no: int = 0
    # At a table (domain/table.py): the deal's commitment, published before bargaining,
    # and its salt, secret until ``DealRevealed``. UNSET (left out of the encoded event)
    # in a hand file's replay, whose output stays as it was byte for byte.
    commitment: str | msgspec.UnsetType = msgspec.UNSET
    salt: str | msgspec.UnsetType = msgspec.UNSET


class Bargained(_Event, frozen=True, tag="mitigati_bargained"):
    seat: int
    action: str  # "pass" | "pay" | "sell" | "continue"
    amount: int | None = None


class SessionEnded(_Event, frozen=True, tag="mitigati_session_ended"):
    """A bargaining session ended without agreement; ``how`` is "continue" (a seat said
    continue), "passes" (three passes in a row) or "refused" (the third player's veto)."""

    session: int
    how: str


class PacketsDealt(_Event, frozen=True, tag="mitigati_packets_dealt"):
    round: int  # 0-based: 2, 3 or 4


class DealAbandoned(_Event, frozen=True, tag="mitigati_deal_abandoned"):
    session: int
    payer: int
    seller: int
    amount: int
    scores: tuple[int, ...]


class CardsDiscarded(_Event, frozen=True, tag="mitigati_cards_discarded"):
    seat: int
    cards: tuple[str, ...]


class Declaration(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    seat: int
    name: str
    value: int
    shown: tuple[str, ...] | None = None  # tarocchi only: shown to all


class Declared(_Event, frozen=True, tag="mitigati_declared"):
    seat: int
    declarations: tuple[Declaration, ...]  # () when the seat declared nothing


class CardPlayed(_Event, frozen=True, tag="mitigati_card_played"):
    seat: int
    card: str


class TrickWon(_Event, frozen=True, tag="mitigati_trick_won"):
    trick: int
    leader: int
    cards: tuple[str, ...]
    winner: int


class FoolCardOwed(_Event, frozen=True, tag="mitigati_fool_card_owed"):
    """§7: the Fool's player had no 1-point card won at the close of the Fool's trick."""

    seat: int
    trick: int
    to: int


class FoolCardGiven(_Event, frozen=True, tag="mitigati_fool_card_given"):
    """§7: the exchange card given to the Fool's trick's winner; ``card`` is "FOOL" and
    ``paid_in`` None when the debt was settled with the Fool itself after the last trick."""

    seat: int
    trick: int
    to: int
    card: str
    paid_in: int | None


class HandScored(_Event, frozen=True, tag="mitigati_hand_scored"):
    points: tuple[int, ...]
    scores: tuple[int, ...]


MitigatiEvent = (
    HandDealt | Bargained | SessionEnded | PacketsDealt | DealAbandoned | CardsDiscarded
    | Declared | CardPlayed | TrickWon | FoolCardOwed | FoolCardGiven | HandScored
)
