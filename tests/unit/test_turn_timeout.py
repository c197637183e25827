"""A turn that times out (TimeOutTurn): the service plays the seat, and the stream says so."""

from __future__ import annotations

import msgspec
import pytest

from domain.bots import Budget
from domain.errors import MightyError
from domain.table import (
    CreateTable,
    DealHand,
    JoinSeat,
    StartTable,
    Submission,
    TableState,
    TimeOutTurn,
    TurnTimedOut,
    decide,
    evolve,
    initial_state,
)
from services.audit.recorded import command_of
from services.commands.dealer import deal_command


def dealt(variant: str, seats: int) -> TableState:
    state = initial_state("t1")
    commands: list[Submission] = [Submission(CreateTable(variant=variant, turn_seconds=30), "p0")]
    commands += [Submission(JoinSeat(seat=s), f"p{s}") for s in range(seats)]
    commands.append(Submission(StartTable(first_dealer=0), "p0"))
    for submission in commands:
        for event in decide(state, submission):
            state = evolve(state, event)
    assert state.rules is not None
    deal: DealHand = deal_command(state.rules)
    for event in decide(state, Submission(deal)):
        state = evolve(state, event)
    return state


def beginner_move(state: TableState) -> tuple[int, object]:
    assert state.hand is not None and state.rules is not None
    game = state.game
    seat = game.to_act(state.hand)
    assert seat is not None
    return seat, game.bots()["beginner"](state.rules, game.seat_view(state.hand, seat), 7, Budget())


@pytest.mark.parametrize(("variant", "seats"), [("mighty-5", 5), ("mitigati", 3)])
def test_a_timed_out_turn_records_who_and_why_then_the_move_the_service_made(variant: str, seats: int) -> None:
    state = dealt(variant, seats)
    seat, move = beginner_move(state)
    events = decide(state, Submission(TimeOutTurn(seat=seat, move=move)))
    assert events[0] == TurnTimedOut(seat=seat, reason="timeout")
    assert events[1:] == decide(state, Submission(move))  # type: ignore[arg-type]
    after = state
    for event in events:
        after = evolve(after, event)
    assert after.hand != state.hand
    # verify and export read the command back from the events
    recorded = command_of(events)
    assert recorded == (TimeOutTurn(seat=seat, move=move), None)


def test_only_the_service_times_a_turn_out() -> None:
    state = dealt("mighty-5", 5)
    seat, move = beginner_move(state)
    with pytest.raises(MightyError) as refused:
        decide(state, Submission(TimeOutTurn(seat=seat, move=move), f"p{seat}"))
    assert refused.value.code == "not_allowed"


def test_a_turn_already_over_is_not_timed_out() -> None:
    state = dealt("mighty-5", 5)
    seat, move = beginner_move(state)
    for event in decide(state, Submission(move)):  # type: ignore[arg-type]
        state = evolve(state, event)
    with pytest.raises(MightyError) as refused:
        decide(state, Submission(TimeOutTurn(seat=seat, move=move)))
    assert refused.value.code == "not_your_turn"


def test_a_view_shows_the_deadline_of_its_own_version_and_seat_to_act_only() -> None:
    from projections.turns import Turn
    from services.bots.timers import Scheduled, deadline_of

    turn = Turn(table_id="t1", version=12, hand_no=1, seat=3, player="p3", level=None, turn_seconds=30)
    stored = msgspec.json.encode(Scheduled(turn=turn, due_ms=1_780_000_000_123))
    assert deadline_of(stored, 12, 3) == "2026-05-28T20:26:40.123Z"
    assert deadline_of(stored, 13, 3) is None  # the view moved on: that turn is over
    assert deadline_of(stored, 12, 2) is None
    assert deadline_of(None, 12, 3) is None
