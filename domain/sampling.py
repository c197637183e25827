"""Deals of the unseen cards consistent with what a seat knows (the bots' worlds).

A seat that cannot see the other hands imagines them: every card it has not seen goes
to a holder (another seat, or a pile such as the kitty or the discards) with room for
it, and only to a holder the seat's knowledge allows (a seat that showed a void in a
suit holds none of it; a called card is not the declarer's). Cards with the fewest
allowed holders are placed first; each goes to an allowed holder at random, weighted by
the room left, which keeps the deal close to uniform. A dead end restarts; after a few
restarts the constraints are dropped, so a bot always gets a world to think in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from domain.prng import Rng

Card = str


def sample_holdings(
    cards: Sequence[Card],
    room: Sequence[int],
    allowed: Mapping[Card, frozenset[int]],
    rng: Rng,
    tries: int = 8,
) -> list[list[Card]]:
    """``cards`` dealt to holders ``0 .. len(room)-1``, holder ``h`` getting ``room[h]``
    cards (the rooms sum to ``len(cards)``). ``allowed[c]``: the holders ``c`` may go to;
    a card not in ``allowed`` may go anywhere."""
    everyone = frozenset(range(len(room)))
    for attempt in range(tries + 1):
        strict = attempt < tries
        order = list(cards)
        rng.shuffle(order)
        if strict:
            order.sort(key=lambda c: len(allowed.get(c, everyone)))
        left = list(room)
        holdings: list[list[Card]] = [[] for _ in room]
        for card in order:
            holders = allowed.get(card, everyone) if strict else everyone
            total = sum(left[h] for h in holders)
            if total == 0:
                break
            pick = rng.below(total)
            for h in sorted(holders):
                if pick < left[h]:
                    holdings[h].append(card)
                    left[h] -= 1
                    break
                pick -= left[h]
        else:
            return holdings
    raise ValueError("the rooms do not add up to the cards")  # unreachable when they do
