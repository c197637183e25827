"""Away seats through the gateway (fakeredis): every reader sees which seats are away,
and a player is back by opening their stream or by moving; bots have names of their own
and their level beside them."""

from __future__ import annotations

import random
from typing import Any

import pytest

from tests.unit.gateway_helpers import (
    a_legal_command,
    auth,
    full_table,
    gateway,
    new_player,
    sync_wiring,
)


@pytest.fixture
def client() -> Any:
    with gateway(secret="unit-secret", rate_commands=1000) as client:
        yield client


def away_of(client: Any, table: str) -> tuple[int, ...]:
    state, _ = sync_wiring(client).handler.state_of(table)
    return state.away


def test_the_bots_of_a_new_table_have_names_of_their_own_and_show_their_level(client: Any) -> None:
    ana = new_player(client)
    made = client.post("/api/v1/tables", json={"game": "mighty-5", "seat": 0, "bots": {
        "1": "beginner", "2": "beginner", "3": "expert", "4": "random"}}, headers=auth(ana))
    assert made.status_code == 201, made.text
    seats = made.json()["seats"]
    assert [s["bot"] for s in seats] == [None, "beginner", "beginner", "expert", "random"]
    names = [s["name"] for s in seats[1:]]
    assert len(set(names)) == 4 and not any("bot" in name for name in names)


def test_a_seat_left_after_the_start_is_away_in_every_view_and_in_the_lobby(client: Any) -> None:
    table, seated = full_table(client)
    assert client.post(f"/api/v1/tables/{table}/leave", headers=auth(seated[2])).status_code == 204
    assert away_of(client, table) == (2,)
    for headers in ({}, auth(seated[0]), auth(seated[2])):
        view = client.get(f"/api/v1/tables/{table}/view", headers=headers).json()
        assert view["away"] == [2], headers
    seats = client.get(f"/api/v1/tables/{table}").json()["seats"]
    assert [s["away"] for s in seats] == [False, False, True, False, False]


def test_a_view_with_no_seat_away_says_so(client: Any) -> None:
    table, seated = full_table(client)
    assert client.get(f"/api/v1/tables/{table}/view", headers=auth(seated[1])).json()["away"] == []


def test_opening_ones_stream_brings_an_away_seat_back(client: Any) -> None:
    table, seated = full_table(client)
    client.post(f"/api/v1/tables/{table}/leave", headers=auth(seated[3]))
    assert away_of(client, table) == (3,)
    token = seated[3]["Authorization"].removeprefix("Bearer ")
    with client.websocket_connect(f"/api/v1/tables/{table}/stream?after=0&token={token}") as ws:
        ws.send_json({"type": "ping"})  # answered once the stream is set up (no views worker runs here)
        assert ws.receive_json() == {"type": "pong"}
    assert away_of(client, table) == ()


def test_a_spectators_stream_brings_nobody_back(client: Any) -> None:
    table, seated = full_table(client)
    client.post(f"/api/v1/tables/{table}/leave", headers=auth(seated[3]))
    watcher = new_player(client, "Wat")
    token = watcher["Authorization"].removeprefix("Bearer ")
    with client.websocket_connect(f"/api/v1/tables/{table}/stream?after=0&token={token}") as ws:
        ws.send_json({"type": "ping"})  # answered once the stream is set up (no views worker runs here)
        assert ws.receive_json() == {"type": "pong"}
    assert away_of(client, table) == (3,)


def test_the_away_players_own_move_brings_them_back(client: Any) -> None:
    table, seated = full_table(client)
    seat = client.get(f"/api/v1/tables/{table}/view").json()["to_act"]
    client.post(f"/api/v1/tables/{table}/leave", headers=auth(seated[seat]))
    assert away_of(client, table) == (seat,)
    view = client.get(f"/api/v1/tables/{table}/view", headers=auth(seated[seat])).json()
    command = a_legal_command(view, random.Random(3))
    sent = client.post(f"/api/v1/tables/{table}/commands", json={"id": "c1", "command": command},
                       headers=auth(seated[seat]))
    assert sent.status_code == 200, sent.text
    assert away_of(client, table) == ()


def _run_views_worker(client: Any) -> None:
    worker = sync_wiring(client).worker("views", linger_ms=0, block_ms=1)
    while worker.step():
        pass


def test_the_bot_worker_leaves_a_turn_to_a_player_back_since_its_notice(client: Any) -> None:
    """The notice said the seat was away, the view it reads says its player is back: the
    bot does not play for them (the new notice names a person's turn)."""
    from projections.turns import turn_of
    from services.bots.worker import BotWorker

    table, seated = full_table(client)
    seat = client.get(f"/api/v1/tables/{table}/view").json()["to_act"]
    client.post(f"/api/v1/tables/{table}/leave", headers=auth(seated[seat]))
    wiring = sync_wiring(client)
    state, version = wiring.handler.state_of(table)
    notice = turn_of(state, version, {})
    assert notice is not None and notice.away and notice.seat == seat
    client.post(f"/api/v1/tables/{table}/join", headers=auth(seated[seat]))  # back
    _run_views_worker(client)
    worker = BotWorker(wiring.client, wiring.space, wiring.handler)
    worker.handle(notice)
    assert worker.played == 0
    assert wiring.handler.state_of(table)[1] == version + 1  # only the SeatAway of the return


def test_the_bot_worker_plays_an_away_seat_in_the_services_name(client: Any) -> None:
    from projections.turns import turn_of
    from services.bots.worker import BotWorker

    table, seated = full_table(client)
    seat = client.get(f"/api/v1/tables/{table}/view").json()["to_act"]
    client.post(f"/api/v1/tables/{table}/leave", headers=auth(seated[seat]))
    _run_views_worker(client)
    wiring = sync_wiring(client)
    state, version = wiring.handler.state_of(table)
    notice = turn_of(state, version, {})
    assert notice is not None
    worker = BotWorker(wiring.client, wiring.space, wiring.handler)
    worker.handle(notice)
    assert worker.played == 1
    after, _ = wiring.handler.state_of(table)
    assert after.away == (seat,)  # the service played it: still away
