"""Every ``legal`` entry a view shows is a command the server accepts as written (issue
"Open to strangers", item 4; docs/api.md, "Playing").

Random hands of every playable variant: at each step, every seat's view is rendered as
the views worker stores it and reshaped as the gateway shows it (``views.view_document``);
each of its ``legal`` entries goes through the gateway's wire decoding
(``submission_from_wire``, the command types of the table's game, as ``lobby.play``
checks them) and the table's ``decide``, which must take it. A count-form discard step is
sent as a client sends it: the first ``count`` cards of ``from``, its other fields kept.
The hand goes on by one entry of the seat to act, picked at random.
"""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.mighty.rules import VARIANTS as MIGHTY_VARIANTS
from domain.registry import game_of, variants
from domain.table import (
    CreateTable,
    DealHand,
    JoinSeat,
    StartTable,
    Submission,
    TableState,
    decide,
    evolve,
    initial_state,
)
from projections.views import ViewState, render
from services.commands.tables import submission_from_wire
from services.gateway.views import view_document

PLAYABLE = [v for v in variants() if v not in MIGHTY_VARIANTS or MIGHTY_VARIANTS[v].playable]
MAX_STEPS = 1000


def as_written(entry: dict[str, Any]) -> dict[str, Any]:
    """A legal entry as a client sends it back."""
    if "count" not in entry:
        return dict(entry)
    command = {k: v for k, v in entry.items() if k not in ("count", "from")}
    command["cards"] = list(entry["from"][: entry["count"]])
    return command


class Table:
    """A table of ``variant`` on the domain alone, one player a seat, one hand."""

    def __init__(self, variant: str, rng: random.Random) -> None:
        self.state: TableState = initial_state("t-legal")
        self.version = 0
        self.apply(Submission(CreateTable(variant=variant, options={}, name="legal", hands=1, turn_seconds=0,
                                          bots={}, created="2024-01-01T00:00:00Z"), "p0"))
        for seat in range(len(self.state.seats)):
            self.apply(Submission(JoinSeat(seat=seat), f"p{seat}"))
        self.apply(Submission(StartTable(first_dealer=rng.randrange(len(self.state.seats))), "p0"))
        assert self.state.rules is not None
        deck = list(game_of(self.state.rules).deck(self.state.rules))
        rng.shuffle(deck)
        self.apply(Submission(DealHand(order=tuple(deck), salt="5a" * 16)))

    def apply(self, submission: Submission) -> None:
        for event in decide(self.state, submission):
            self.state = evolve(self.state, event)
            self.version += 1

    def legal(self, seat: int) -> list[dict[str, Any]]:
        """The seat's ``legal`` as the gateway shows it."""
        stored = msgspec.json.encode(render(ViewState(table=self.state, version=self.version, name=""), str(seat)))
        entries: list[dict[str, Any]] = view_document(stored)["legal"]
        return entries

    def submission(self, seat: int, entry: dict[str, Any]) -> Submission:
        """An entry through the gateway's decoding, as ``lobby.play`` takes a command."""
        game = self.state.game
        submission = submission_from_wire({**as_written(entry), "seat": seat}, f"p{seat}", game.name)
        assert isinstance(submission.command, game.command_types), entry
        return submission


@pytest.mark.parametrize("variant", PLAYABLE)
@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck), derandomize=False)
@given(seed=st.integers(0, 2**32 - 1))
def test_every_legal_entry_of_every_seat_is_accepted_as_written(variant: str, seed: int) -> None:
    rng = random.Random(seed)
    table = Table(variant, rng)
    seats = range(len(table.state.seats))
    for _ in range(MAX_STEPS):
        if table.state.status != "playing" or table.state.awaiting_deal:
            return
        entries = {seat: table.legal(seat) for seat in seats}
        for seat, legal in entries.items():
            for entry in legal:
                try:
                    decide(table.state, table.submission(seat, entry))
                except Exception as refused:
                    pytest.fail(f"{variant}: seat {seat}'s legal entry {entry} is refused: {refused!r}")
        hand = table.state.hand
        assert hand is not None
        acting = table.state.game.to_act(hand)
        assert acting is not None and entries[acting], f"{variant}: seat {acting} is to act with nothing legal"
        table.apply(table.submission(acting, rng.choice(entries[acting])))
    pytest.fail(f"{variant}: the hand did not end within {MAX_STEPS} steps")


def test_the_mighty_3_discard_step_names_every_kitty_set_the_declarer_may_keep() -> None:
    rng = random.Random(3)
    for _ in range(50):
        table = Table("mighty-3", rng)
        for _ in range(MAX_STEPS):
            hand = table.state.hand
            assert hand is not None
            acting = table.state.game.to_act(hand)
            assert acting is not None
            legal = table.legal(acting)
            steps = [e for e in legal if e["type"] == "discard"]
            if steps:
                kitty = table.state.hand.kitty  # type: ignore[union-attr]
                assert len(steps) == 10  # C(5, 3): the kitty of five, three kept
                assert {tuple(s["take"]) for s in steps} == {tuple(t) for t in _threes(kitty)}
                assert all(s["count"] == 3 and s["from"][-3:] == s["take"] for s in steps)
                return
            table.apply(table.submission(acting, rng.choice(legal)))
    pytest.fail("no mighty-3 auction of 50 reached the discard step")


def _threes(kitty: tuple[str, ...]) -> list[tuple[str, ...]]:
    from itertools import combinations

    return list(combinations(kitty, 3))
