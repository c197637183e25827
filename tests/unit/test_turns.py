"""The views projection's turns hash: who is to act at each table (projections/turns.py)."""

from __future__ import annotations

from domain.table import (
    CloseTable,
    CreateTable,
    JoinSeat,
    SetAway,
    StartTable,
    Submission,
    decide,
    evolve,
    initial_state,
)
from projections.docs import DocKey
from projections.turns import TURNS_DOC, decode_turn
from projections.views import ViewsProjection
from services.commands.dealer import deal_command


def test_the_turn_names_the_seat_to_act_its_bot_level_the_away_seats_and_the_deal() -> None:
    projection = ViewsProjection()
    state_version = 0
    state = initial_state("t1")

    def send(submission: Submission) -> bytes | None:
        nonlocal state, state_version
        for event in decide(state, submission):
            state_version += 1
            state = evolve(state, event)
            projection.apply("t1", state_version, event)
        return projection.flush().get(DocKey(TURNS_DOC, "t1"))

    assert send(Submission(CreateTable(variant="mighty-5", bots={"1": "expert"}, turn_seconds=20), "p0")) is None
    for seat in range(5):
        send(Submission(JoinSeat(seat=seat), f"p{seat}"))
    started = send(Submission(StartTable(first_dealer=0), "p0"))
    assert started is not None and decode_turn(started).deal  # started: the service deals next
    assert state.rules is not None
    dealt = decode_turn(send(Submission(deal_command(state.rules))) or b"")
    assert state.hand is not None
    to_act = state.game.to_act(state.hand)
    assert (dealt.seat, dealt.player, dealt.deal, dealt.turn_seconds) == (to_act, f"p{to_act}", False, 20)
    assert dealt.level == ("expert" if to_act == 1 else None)
    assert dealt.rules  # the public rule set, for the bot
    assert to_act is not None
    away = decode_turn(send(Submission(SetAway(seat=to_act), f"p{to_act}")) or b"")
    assert away.away and away.level == "beginner" and away.seat == to_act
    # a closed table has nobody to act: its field is deleted
    for event in decide(state, Submission(CloseTable(reason="over"))):
        state_version += 1
        state = evolve(state, event)
        projection.apply("t1", state_version, event)
    docs_after_close = projection.flush()
    assert DocKey(TURNS_DOC, "t1") in docs_after_close and docs_after_close[DocKey(TURNS_DOC, "t1")] is None
