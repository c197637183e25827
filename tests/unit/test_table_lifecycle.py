"""Who closes a table before it starts (domain/table.py ``CloseTable``): its creator, or
the last person seated there; nobody else, and no player once it has started. The close
records who closed it, and ``mighty verify`` re-decides it as that player."""

from __future__ import annotations

import pytest

from domain.codec import decode_event, encode_event
from domain.table import (
    CANCELLED,
    CloseTable,
    CreateTable,
    DealRevealed,
    JoinSeat,
    LeaveSeat,
    TableClosed,
)
from services.audit.recorded import command_of
from tests.unit.test_table import PLAYERS, Table, deal_standard, started


def created(creator: str = "ann", seat: int | None = 0, bots: dict[str, str] | None = None) -> Table:
    table = Table()
    table.send(CreateTable(name="t", bots=bots or {}), creator)
    if seat is not None:
        table.send(JoinSeat(seat=seat), creator)
    return table


def test_the_creator_closes_a_table_that_has_not_started_and_the_close_names_her() -> None:
    table = created()
    table.send(JoinSeat(seat=1), "bob")
    assert table.send(CloseTable(reason="whatever"), "ann") == [TableClosed(reason=CANCELLED, closed_by="ann")]
    assert table.state.status == "closed"
    table.refuse(CloseTable(), "ann", "table_closed")


def test_the_creator_closes_it_even_after_leaving_her_seat() -> None:
    table = created()
    table.send(JoinSeat(seat=1), "bob")
    table.send(LeaveSeat(seat=0), "ann")
    table.send(CloseTable(), "ann")
    assert table.state.status == "closed"


def test_a_seated_stranger_cannot_close_a_table_others_sit_at() -> None:
    table = created()
    table.send(JoinSeat(seat=1), "bob")
    table.refuse(CloseTable(), "bob", "not_allowed")
    table.refuse(CloseTable(), "zed", "not_allowed")  # seated nowhere


def test_the_last_person_seated_among_bots_closes_it_once_the_creator_left() -> None:
    table = created(bots={"3": "beginner", "4": "beginner"})
    table.send(JoinSeat(seat=3), "bot-3")
    table.send(JoinSeat(seat=4), "bot-4")
    table.send(JoinSeat(seat=1), "bob")
    table.refuse(CloseTable(), "bob", "not_allowed")  # ann is still seated
    table.send(LeaveSeat(seat=0), "ann")
    assert table.send(CloseTable(), "bob") == [TableClosed(reason=CANCELLED, closed_by="bob")]


def test_a_bot_seat_is_not_a_person_but_a_person_seat_of_another_is() -> None:
    table = created(creator="svc", seat=None, bots={"0": "beginner"})
    table.send(JoinSeat(seat=0), "bot-0")
    table.send(JoinSeat(seat=1), "bob")
    table.send(JoinSeat(seat=2), "cy")
    table.refuse(CloseTable(), "bob", "not_allowed")
    table.send(LeaveSeat(seat=2), "cy")
    table.send(CloseTable(), "bob")


def test_no_player_closes_a_started_table_not_even_its_creator() -> None:
    table = started()
    for player in PLAYERS:
        table.refuse(CloseTable(), player, "table_started")
    table.send(CloseTable(reason="idle"))
    assert table.events[-1] == TableClosed(reason="idle")


@pytest.mark.parametrize("closed_by", [None, "ann"])
def test_a_close_round_trips_and_is_recorded_as_the_command_of_who_closed(closed_by: str | None) -> None:
    event = TableClosed(reason="idle") if closed_by is None else TableClosed(reason=CANCELLED, closed_by=closed_by)
    data = encode_event(event)
    assert decode_event(data) == event
    assert (b"closed_by" in data) == (closed_by is not None)  # a service's close: the bytes of before
    command, player = command_of([event]) or (None, None)
    assert isinstance(command, CloseTable) and player == closed_by


def test_a_stored_close_of_before_reads_as_the_services() -> None:
    event = decode_event(b'{"type":"table_closed","v":1,"reason":"match_over"}')
    assert event == TableClosed(reason="match_over")
    assert command_of([event]) == (CloseTable(reason="match_over"), None)


def test_a_close_that_cuts_a_hand_short_is_recorded_as_the_services_close() -> None:
    """Its events start with the hand's revealed deal (verify re-decides the close)."""
    table = started()
    deal_standard(table)
    events = table.send(CloseTable(reason="idle"))
    assert isinstance(events[0], DealRevealed)
    assert command_of(events) == (CloseTable(reason="idle"), None)
    assert command_of(events[:1]) is None  # a revealed deal alone is no command's
