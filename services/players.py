"""Random players: what bots, the demo and the benchmarks send to a table.

``next_submission`` looks at a table's state and returns the next thing that should
happen: the service's deal when a hand is due, else a random legal command from the seat
to act, sent in that seat's player's name. Seeded ``random`` is fine here (services may
use randomness; only the deal must be unpredictable, and it comes from ``dealer``).
"""

from __future__ import annotations

import random

from domain.legal import legal_commands
from domain.state import to_act
from domain.table import JoinSeat, StartTable, Submission, TableState
from services.dealer import deal_command


def next_submission(state: TableState, rng: random.Random) -> Submission | None:
    """The next command for a started table, or None when it needs nothing."""
    if state.status != "playing":
        return None
    if state.awaiting_deal:
        assert state.rules is not None
        return Submission(command=deal_command(state.rules))
    hand = state.hand
    assert hand is not None
    seat = to_act(hand)
    if seat is None:
        return None
    command = rng.choice(legal_commands(hand, seat))
    return Submission(command=command, player=state.seats[seat])


def seating(players: list[str]) -> list[Submission]:
    """Seat ``players`` in order, then start with a random first dealer."""
    joins = [Submission(command=JoinSeat(seat=s), player=p) for s, p in enumerate(players)]
    first = random.SystemRandom().randrange(len(players))
    return [*joins, Submission(command=StartTable(first_dealer=first), player=players[0])]
