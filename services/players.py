"""Random players: what bots, the demo and the benchmarks send to a table.

``next_submission`` looks at a table's state and returns the next thing that should
happen: the service's deal when a hand is due, else a random legal command from the seat
to act, sent in that seat's player's name. Seeded ``random`` is fine here (services may
use randomness; only the deal must be unpredictable, and it comes from ``dealer``).

The pick is a kind of command first, then one of that kind (``pick_by_kind``, as
``bench/domain.py`` does), the kinds being the game's (``Game.command_kinds``): Mitigati's
bargaining lists up to 2 × 129 amounts beside ``pass`` and ``continue``, and a uniform
pick would strike a bargain in nearly every hand; a Mighty step has one kind.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TypeVar

from domain.table import JoinSeat, StartTable, Submission, TableState
from services.commands.dealer import deal_command

C = TypeVar("C")


def next_submission(state: TableState, rng: random.Random) -> Submission | None:
    """The next command for a started table, or None when it needs nothing."""
    if state.status != "playing":
        return None
    if state.awaiting_deal:
        assert state.rules is not None
        return Submission(command=deal_command(state.rules))
    hand = state.hand
    assert hand is not None
    game = state.game
    seat = game.to_act(hand)
    if seat is None:
        return None
    command = pick_by_kind(rng, game.command_kinds(game.legal_commands(hand, seat)))
    return Submission(command=command, player=state.seats[seat])


def pick_by_kind(rng: random.Random, kinds: Sequence[Sequence[C]]) -> C:
    """A kind of command at random, then one of that kind (``Game.command_kinds``): one
    draw when there is one kind. `bench/domain.py` picks its random commands with it too."""
    kind = kinds[0] if len(kinds) == 1 else kinds[int(rng.random() * len(kinds))]
    return kind[int(rng.random() * len(kind))]  # uniform, cheaper than randrange


def seating(players: list[str]) -> list[Submission]:
    """Seat ``players`` in order, then start with a random first dealer."""
    joins = [Submission(command=JoinSeat(seat=s), player=p) for s, p in enumerate(players)]
    first = random.SystemRandom().randrange(len(players))
    return [*joins, Submission(command=StartTable(first_dealer=first), player=players[0])]
