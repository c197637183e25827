"""A seat whose turns keep timing out goes away, and its player's own move brings it back
(domain/table.py: ``TimeOutTurn.away_after``, ``TableState.timeouts``, ``SeatAway``,
``TimeoutsReset``); verify and export read each append back as the command that made it."""

from __future__ import annotations

import random

import msgspec
import pytest

from domain.codec import encode_event
from domain.errors import MalformedCommand
from domain.table import (
    AWAY_ACTED,
    AWAY_TIMEOUTS,
    CreateTable,
    DealHand,
    JoinSeat,
    SeatAway,
    SetAway,
    StartTable,
    Submission,
    TableEvent,
    TableState,
    TimeoutsReset,
    TimeOutTurn,
    TurnTimedOut,
    decide,
    evolve,
)
from services.audit.recorded import command_of
from tests.unit.test_turn_timeout import beginner_move


def deal(state: TableState, rng: random.Random) -> TableState:
    """The next hand, from a seeded shuffle (the same deals every run)."""
    assert state.rules is not None
    deck = state.game.deck(state.rules)
    for event in decide(state, Submission(DealHand(order=tuple(rng.sample(deck, len(deck))), salt="s"))):
        state = evolve(state, event)
    return state


def dealt(variant: str, seats: int, seed: int = 1) -> TableState:
    state = TableState(table_id="t1")
    commands: list[Submission] = [Submission(CreateTable(variant=variant, turn_seconds=30), "p0")]
    commands += [Submission(JoinSeat(seat=s), f"p{s}") for s in range(seats)]
    commands.append(Submission(StartTable(first_dealer=0), "p0"))
    for submission in commands:
        for event in decide(state, submission):
            state = evolve(state, event)
    return deal(state, random.Random(seed))


def step(before: TableState, submission: Submission) -> tuple[TableState, list[TableEvent]]:
    events = decide(before, submission)
    # what verify decides again: the append read back as its command gives the same events
    recorded = command_of(events)
    assert recorded is not None
    assert decide(before, Submission(recorded[0], recorded[1])) == events
    state = before
    for event in events:
        state = evolve(state, event)
    return state, events


def time_out(state: TableState, away_after: int) -> tuple[TableState, list[TableEvent]]:
    seat, move = beginner_move(state)
    return step(state, Submission(TimeOutTurn(seat=seat, move=move, away_after=away_after)))


def own_move(state: TableState) -> tuple[TableState, list[TableEvent]]:
    seat, move = beginner_move(state)
    return step(state, Submission(move, f"p{seat}"))  # type: ignore[arg-type]


def round_to(state: TableState, seat: int) -> TableState:
    """The others play by themselves until ``seat`` is to act again (in this hand or the
    next ones: a hand that ends is followed by the next deal)."""
    rng = random.Random(state.hand_no)
    for _ in range(1000):
        if state.awaiting_deal:
            state = deal(state, rng)
        assert state.hand is not None
        if state.game.to_act(state.hand) == seat:
            return state
        state, _ = own_move(state)
    raise AssertionError(f"seat {seat} never came to act")


def to_act(state: TableState) -> int:
    assert state.hand is not None
    seat = state.game.to_act(state.hand)
    assert seat is not None
    return seat


@pytest.mark.parametrize(("variant", "seats"), [("mighty-5", 5), ("mitigati", 3)])
def test_a_seat_goes_away_at_its_second_timed_out_turn_in_a_row(variant: str, seats: int) -> None:
    state = dealt(variant, seats)
    seat = to_act(state)
    state, first = time_out(state, away_after=2)
    assert first[0] == TurnTimedOut(seat=seat, reason="timeout", away_after=2)
    assert not any(isinstance(e, SeatAway) for e in first)
    assert state.timeouts[seat] == 1 and seat not in state.away
    state = round_to(state, seat)
    assert state.timeouts[seat] == 1  # the others' moves leave its run alone
    state, second = time_out(state, away_after=2)
    assert second[-1] == SeatAway(seat=seat, player=f"p{seat}", away=True, reason=AWAY_TIMEOUTS)
    assert state.away == (seat,) and state.timeouts[seat] == 0


def test_a_move_of_its_own_between_two_timeouts_starts_the_run_again() -> None:
    state = dealt("mighty-5", 5)
    seat = to_act(state)
    state, _ = time_out(state, away_after=2)
    state = round_to(state, seat)
    state, events = own_move(state)
    assert events[0] == TimeoutsReset(seat=seat, player=f"p{seat}")
    assert state.timeouts[seat] == 0
    state = round_to(state, seat)
    state, events = time_out(state, away_after=2)
    assert seat not in state.away and not any(isinstance(e, SeatAway) for e in events)


def test_a_seat_without_a_run_moves_with_no_extra_event() -> None:
    state = dealt("mighty-5", 5)
    seat, move = beginner_move(state)
    assert decide(state, Submission(move, f"p{seat}")) == decide(state, Submission(move))  # type: ignore[arg-type]


def test_without_a_rule_no_timeout_is_counted_and_the_event_is_as_before() -> None:
    state = dealt("mighty-5", 5)
    seat = to_act(state)
    for _ in range(3):
        state, events = time_out(state, away_after=0)
        assert msgspec.json.decode(encode_event(events[0])) == {"type": "turn_timed_out", "v": 1, "seat": seat,
                                                                "reason": "timeout"}
        state = round_to(state, seat)
    assert state.timeouts[seat] == 0 and state.away == ()


def test_away_after_one_sends_the_seat_away_at_its_first_timeout() -> None:
    state = dealt("mighty-5", 5)
    seat = to_act(state)
    state, events = time_out(state, away_after=1)
    assert isinstance(events[-1], SeatAway) and state.away == (seat,)


def test_an_away_seat_that_times_out_again_is_not_sent_away_twice() -> None:
    state = dealt("mighty-5", 5)
    seat = to_act(state)
    state, _ = step(state, Submission(SetAway(seat=seat), f"p{seat}"))
    state, events = time_out(state, away_after=1)
    assert not any(isinstance(e, SeatAway) for e in events) and state.away == (seat,)


def test_the_away_seats_player_moving_is_back_in_the_same_append() -> None:
    state = dealt("mighty-5", 5)
    seat = to_act(state)
    state, _ = step(state, Submission(SetAway(seat=seat), f"p{seat}"))
    state, events = own_move(state)
    assert events[0] == SeatAway(seat=seat, player=f"p{seat}", away=False, reason=AWAY_ACTED)
    assert state.away == ()


def test_the_service_playing_an_away_seat_does_not_bring_it_back() -> None:
    state = dealt("mighty-5", 5)
    seat, move = beginner_move(state)
    state, _ = step(state, Submission(SetAway(seat=seat), f"p{seat}"))
    state, events = step(state, Submission(move))  # type: ignore[arg-type]
    assert not any(isinstance(e, SeatAway) for e in events) and state.away == (seat,)


def test_a_negative_away_after_is_malformed() -> None:
    state = dealt("mighty-5", 5)
    seat, move = beginner_move(state)
    with pytest.raises(MalformedCommand):
        decide(state, Submission(TimeOutTurn(seat=seat, move=move, away_after=-1)))
