"""Random players: what bots, the demo and the benchmarks send to a table.

``next_submission`` looks at a table's state and returns the next thing that should
happen: the service's deal when a hand is due, else a random legal command from the seat
to act, sent in that seat's player's name. Seeded ``random`` is fine here (services may
use randomness; only the deal must be unpredictable, and it comes from ``dealer``).

Mighty's command is uniform over ``legal_commands``. Mitigati's is a kind of command
first, then one of that kind (``pick_by_kind``, as ``bench/domain.py`` does): its
bargaining lists up to 2 × 129 amounts beside ``pass`` and ``continue``, and a uniform
pick would strike a bargain in nearly every hand.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TypeVar

from domain.mitigati.commands import Bargain
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
    legal = game.legal_commands(hand, seat)
    command = rng.choice(legal) if game.name == "mighty" else pick_by_kind(rng, legal)
    return Submission(command=command, player=state.seats[seat])


def pick_by_kind(rng: random.Random, legal: Sequence[C]) -> C:
    """A kind of command at random, then one of that kind: bargains by their action
    (pass, continue, pay, sell); any other step has one kind. (Picking from the whole
    list would strike a bargain in nearly every Mitigati hand: 2 × 129 amounts are
    listed.) `bench/domain.py` picks its random Mitigati commands with it too."""
    if not isinstance(legal[0], Bargain):
        return legal[int(rng.random() * len(legal))]  # uniform, cheaper than randrange
    kinds: dict[str, list[C]] = {}
    for command in legal:
        assert isinstance(command, Bargain)
        kinds.setdefault(command.action, []).append(command)
    kind = list(kinds.values())[int(rng.random() * len(kinds))]
    return kind[int(rng.random() * len(kind))]


def seating(players: list[str]) -> list[Submission]:
    """Seat ``players`` in order, then start with a random first dealer."""
    joins = [Submission(command=JoinSeat(seat=s), player=p) for s, p in enumerate(players)]
    first = random.SystemRandom().randrange(len(players))
    return [*joins, Submission(command=StartTable(first_dealer=first), player=players[0])]
