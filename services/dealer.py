"""The service's side of a deal (rules/mighty.md §2): shuffle with ``secrets``.

The domain never shuffles; it receives the order and a salt as data, records the
commitment before bidding and reveals the salt when the hand ends.
"""

from __future__ import annotations

import secrets

from domain.rules import RuleSet
from domain.table import DealHand, StartTable


def shuffled_deck(rules: RuleSet) -> tuple[str, ...]:
    deck = list(rules.spec.deck)
    for i in range(len(deck) - 1, 0, -1):  # Fisher-Yates with a CSPRNG
        j = secrets.randbelow(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return tuple(deck)


def deal_command(rules: RuleSet) -> DealHand:
    return DealHand(order=shuffled_deck(rules), salt=secrets.token_hex(16))


def start_command(rules: RuleSet) -> StartTable:
    """§2: the first dealer is drawn at random; the draw is recorded, so replays agree."""
    return StartTable(first_dealer=secrets.randbelow(rules.spec.players))
