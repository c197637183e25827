"""Idle tables (services/bots/idle.py, services/gateway/presence.py): the timer worker
closes a table whose idle time has passed, as an event with its deal revealed; a table a
person touched meanwhile stays; the gateway's actions and a person's stream touch it,
a bot's moves do not. Over fakeredis (the scripts read the server's clock)."""

from __future__ import annotations

import time
from typing import Any

import fakeredis
import pytest

from domain.codec import decode_event
from domain.table import CloseTable, CreateTable, DealRevealed, JoinSeat, Submission, TableClosed
from projections.turns import Turn
from services.app.steps import service_steps
from services.bootstrap import Wiring, wire
from services.bots.idle import IDLE, IdleCloser, idle_key
from services.bots.timers import TimerWorker
from services.settings import Settings
from tests.unit.gateway_helpers import auth, gateway, new_player, sync_wiring

BOTS = {str(seat): "beginner" for seat in range(1, 5)}


@pytest.fixture
def wiring() -> Wiring:
    return wire(fakeredis.FakeRedis(server=fakeredis.FakeServer(), protocol=2), Settings(partitions=4))


def playing_table(wiring: Wiring, table: str = "t1") -> None:
    """Ana and four bots, the first hand dealt."""
    handler = wiring.handler
    handler.handle(table, Submission(CreateTable(turn_seconds=3600, bots=BOTS), "ana"), command_id="create")
    for seat in range(5):
        handler.handle(table, Submission(JoinSeat(seat=seat), "ana" if seat == 0 else f"b{seat}"),
                       command_id=f"join-{seat}")
    state, _ = handler.state_of(table)
    assert service_steps(handler, table, state).hand is not None


def events_of(wiring: Wiring, table: str = "t1") -> list[Any]:
    return [decode_event(e.data) for e in wiring.store.read(table)]


def server_ms(client: Any) -> int:
    seconds, micros = client.time()
    return int(seconds) * 1000 + int(micros) // 1000


def due_now(wiring: Wiring, table: str = "t1") -> None:
    """The table's idle time has passed (as if nobody had come for a while)."""
    wiring.client.zadd(idle_key(wiring.space), {table: 0})


def test_a_table_whose_idle_time_passed_is_closed_with_its_deal_revealed(wiring: Wiring) -> None:
    playing_table(wiring)
    closer = IdleCloser(wiring.client, wiring.space, wiring.handler, idle_s=600)
    closer.enrol("t1")
    assert closer.run_once() == 0  # ten minutes to go
    assert not isinstance(events_of(wiring)[-1], TableClosed)
    due_now(wiring)
    assert closer.run_once() == 1
    *_, revealed, closed = events_of(wiring)
    assert isinstance(revealed, DealRevealed) and closed == TableClosed(reason=IDLE)
    assert wiring.client.zcard(idle_key(wiring.space)) == 0
    assert closer.run_once() == 0


def test_a_table_closed_meanwhile_is_forgotten_without_a_command(wiring: Wiring) -> None:
    playing_table(wiring)
    wiring.handler.handle("t1", Submission(CloseTable(reason="match_over")), command_id="end")
    count = len(events_of(wiring))
    due_now(wiring)
    closer = IdleCloser(wiring.client, wiring.space, wiring.handler, idle_s=600)
    assert closer.run_once() == 0
    assert len(events_of(wiring)) == count and wiring.client.zcard(idle_key(wiring.space)) == 0


def test_enrolling_never_moves_the_idle_time_of_a_table_a_person_touched(wiring: Wiring) -> None:
    playing_table(wiring)
    due_now(wiring)
    IdleCloser(wiring.client, wiring.space, wiring.handler, idle_s=600).enrol("t1")
    assert wiring.client.zscore(idle_key(wiring.space), "t1") == 0  # NX: the record's time stands


def test_the_timer_worker_enrols_each_table_it_sees_a_turn_of_and_closes_it_once_idle(wiring: Wiring) -> None:
    playing_table(wiring)
    state, version = wiring.handler.state_of("t1")
    worker = TimerWorker(wiring.client, wiring.space, wiring.handler, idle_s=600)
    worker.handle(Turn(table_id="t1", version=version, hand_no=1, seat=0, player="ana", level=None))
    assert wiring.client.zscore(idle_key(wiring.space), "t1") is not None
    worker.idle()
    assert not isinstance(events_of(wiring)[-1], TableClosed)
    due_now(wiring)
    worker._next_idle = 0.0  # the next pass is due now, not in a second
    worker.idle()
    assert events_of(wiring)[-1] == TableClosed(reason=IDLE) and worker.idle_closer.closed == 1


# ---------------------------------------------------------------- the gateway's side


def test_a_persons_table_is_touched_by_its_creation_and_a_bots_move_is_not_a_touch() -> None:
    with gateway(idle_s=600.0, idle_open_s=1800.0) as client:
        ana = new_player(client)
        made = client.post("/api/v1/tables", json={"seat": 0, "bots": BOTS}, headers=auth(ana))
        assert made.status_code == 201, made.text
        table = made.json()["table"]
        wiring = sync_wiring(client)
        key = idle_key(wiring.space)
        first = wiring.client.zscore(key, table)
        now_ms = server_ms(wiring.client)
        assert first is not None and 590_000 < first - now_ms <= 600_000  # started: ten minutes
        wiring.client.zadd(key, {table: 0})
        state, _ = wiring.handler.state_of(table)
        # what the bot worker does: moves through its own handler, no gateway involved
        service_steps(wiring.handler, table, state)
        assert wiring.client.zscore(key, table) == 0


def test_an_open_table_gets_the_longer_idle_time() -> None:
    with gateway(idle_s=600.0, idle_open_s=1800.0) as client:
        made = client.post("/api/v1/tables", json={"seat": 0}, headers=auth(new_player(client)))
        wiring = sync_wiring(client)
        left = wiring.client.zscore(idle_key(wiring.space), made.json()["table"]) - server_ms(wiring.client)
        assert 1_790_000 < left <= 1_800_000


def test_a_persons_stream_touches_the_table_while_open_and_an_anonymous_one_does_not() -> None:
    # idle after 0.4 s: a person's open stream touches the table every 0.1 s
    with gateway(idle_s=0.4, idle_open_s=0.4) as client:
        ana = new_player(client)
        table = client.post("/api/v1/tables", json={"seat": 0}, headers=auth(ana)).json()["table"]
        wiring = sync_wiring(client)
        key = idle_key(wiring.space)
        wiring.client.zadd(key, {table: 0})

        def pong(ws: Any) -> None:
            ws.send_json({"type": "ping"})
            while ws.receive_json() != {"type": "pong"}:  # a view may come first
                pass

        with client.websocket_connect(f"/api/v1/tables/{table}/stream") as ws:
            for _ in range(5):
                pong(ws)
        assert wiring.client.zscore(key, table) == 0
        token = ana["Authorization"].removeprefix("Bearer ")
        with client.websocket_connect(f"/api/v1/tables/{table}/stream?token={token}") as ws:
            deadline = time.monotonic() + 5
            while wiring.client.zscore(key, table) == 0 and time.monotonic() < deadline:
                pong(ws)
            touched = wiring.client.zscore(key, table)
            assert touched > 0
            while wiring.client.zscore(key, table) == touched and time.monotonic() < deadline:
                pong(ws)  # and again while it stays open
            assert wiring.client.zscore(key, table) > touched
