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
from projections.docs import DocKey, decode
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


def test_a_timed_turn_ends_turn_seconds_after_the_append_that_began_it_in_the_turn_and_every_view() -> None:
    """``deadline_ms``: the append time of the last event folded plus the table's
    ``turn_seconds``, in the turn announcement and in every reader's view while a seat is
    to act; none before the deal, at an untimed table, or when the store kept no time."""
    def play(turn_seconds: int, clock: list[int | None]) -> tuple[list[dict[str, bytes | None]], int | None]:
        projection = ViewsProjection()
        state = initial_state("t1")
        version = 0
        flushed: list[dict[str, bytes | None]] = []

        def send(submission: Submission) -> None:
            nonlocal state, version
            for event in decide(state, submission):
                version += 1
                state = evolve(state, event)
                projection.apply("t1", version, event, clock[min(version, len(clock)) - 1])
            flushed.append({k.name: v for k, v in projection.flush().items()})

        send(Submission(CreateTable(variant="mighty-5", turn_seconds=turn_seconds), "p0"))
        for seat in range(5):
            send(Submission(JoinSeat(seat=seat), f"p{seat}"))
        send(Submission(StartTable(first_dealer=0), "p0"))
        assert state.rules is not None
        send(Submission(deal_command(state.rules)))
        assert state.hand is not None
        return flushed, state.game.to_act(state.hand)

    appended = [1_000_000 + 10 * n for n in range(1, 40)]
    flushed, to_act = play(20, list(appended))
    *before, dealt = flushed
    for docs in before:  # nobody to act yet: no clock (the service deals: no seat's turn)
        assert all(b"deadline_ms" not in (doc or b"") for name, doc in docs.items() if name != TURNS_DOC)
        assert docs.get(TURNS_DOC) is None or decode_turn(docs[TURNS_DOC] or b"").deadline_ms is None
    assert to_act is not None
    turn = decode_turn(dealt[TURNS_DOC] or b"")
    views = {name: decode(doc or b"\x80") for name, doc in dealt.items() if name.startswith("view:t1:")}
    assert turn.deadline_ms == appended[turn.version - 1] + 20_000
    assert views and all(view["deadline_ms"] == turn.deadline_ms for view in views.values())
    untimed, _ = play(0, list(appended))
    unknown, _ = play(20, [None])
    for docs in (untimed[-1], unknown[-1]):
        assert decode_turn(docs[TURNS_DOC] or b"").deadline_ms is None
        assert all(b"deadline_ms" not in (doc or b"") for name, doc in docs.items() if name != TURNS_DOC)
