"""Scoring (docs/rules/mitigati.md, "Scoring").

points[s]: the card points of seat s's won cards after the Fool's settlement, plus the
discards for the dealer; 129 in all. scores[s] = points[s] − 43, plus twice what s
declared (each opponent pays it), minus what each opponent declared. Sums to zero.
"""

from __future__ import annotations

from collections.abc import Iterable

from domain.mitigati.cards import POINTS
from domain.mitigati.events import Declaration, HandScored
from domain.mitigati.rules import PAR, PLAYERS


def card_points(cards: Iterable[str]) -> int:
    return sum(POINTS[c] for c in cards)


def hand_points(won: tuple[tuple[str, ...], ...], dealer: int, discards: tuple[str, ...]) -> tuple[int, ...]:
    return tuple(card_points(cards) + (card_points(discards) if seat == dealer else 0)
                 for seat, cards in enumerate(won))


def declaration_payments(declarations: Iterable[Declaration]) -> list[int]:
    """Each opponent pays the declarer each declared value."""
    paid = [0] * PLAYERS
    for d in declarations:
        for seat in range(PLAYERS):
            paid[seat] += d.value * (PLAYERS - 1) if seat == d.seat else -d.value
    return paid


def hand_scored(won: tuple[tuple[str, ...], ...], dealer: int, discards: tuple[str, ...],
                declarations: Iterable[Declaration]) -> HandScored:
    points = hand_points(won, dealer, discards)
    paid = declaration_payments(declarations)
    return HandScored(points=points, scores=tuple(p - PAR + d for p, d in zip(points, paid, strict=True)))
