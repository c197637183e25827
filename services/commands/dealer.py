"""The service's side of a deal (docs/rules/mighty.md §2): shuffle with ``secrets``.

The domain never shuffles; it receives the order and a salt as data, records the
commitment before bidding and reveals the salt when the hand ends. Every game deals the
same way: the whole deck in a shuffled order (``Game.deck``, ``domain/games.py``), which the
game cuts into hands and kitty (Mighty) or packets (Mitigati).
"""

from __future__ import annotations

import secrets

from domain.games import Rules
from domain.registry import game_of
from domain.table import DealHand, StartTable


def shuffled_deck(rules: Rules) -> tuple[str, ...]:
    deck = list(game_of(rules).deck(rules))
    for i in range(len(deck) - 1, 0, -1):  # Fisher-Yates with a CSPRNG
        j = secrets.randbelow(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return tuple(deck)


def deal_command(rules: Rules) -> DealHand:
    return DealHand(order=shuffled_deck(rules), salt=secrets.token_hex(16))


def start_command(rules: Rules) -> StartTable:
    """§2: the first dealer is drawn at random; the draw is recorded, so replays agree.
    The gateway sends it once every seat is taken (services/app/tables.py)."""
    return StartTable(first_dealer=secrets.randbelow(game_of(rules).players(rules)))
