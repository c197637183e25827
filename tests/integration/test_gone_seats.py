"""A player who disconnects mid-hand is switched to away within the bound and the hand
finishes (issue 21): the whole service (the gateway and every worker as processes, on a
private redis-server), a long turn time (so no timeout does it), and
``MIGHTY_AWAY_AFTER_GONE_S`` short. A player who plays over HTTP only, in time, is never
switched; a player slow to act with their stream open is not either. (Coming back is as
before: tests/integration/test_away_seats.py.)"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect as ws_connect

from domain.table import AWAY_GONE, SeatAway, TableClosed, TurnTimedOut
from services.bootstrap import Wiring
from services.redis_runtime import PrivateRedis
from tests.drills.service import Service, drill_settings, running_service, wired_to
from tests.integration.test_away_seats import a_legal_command, a_person, stored, wait_for

pytestmark = pytest.mark.integration

GONE_S = 4  # MIGHTY_AWAY_AFTER_GONE_S under test
TURN_S = 600  # the tables' turn time: far longer than the test, so no turn times out


@pytest.fixture
def service(redis_server: PrivateRedis, tmp_path: Path) -> Iterator[Service]:
    settings = drill_settings(redis_server.url, away_after_gone_s=GONE_S)
    with running_service(tmp_path / "service", settings) as running:
        yield running


@pytest.fixture
def wiring(service: Service) -> Iterator[Wiring]:
    with wired_to(service) as wired:
        yield wired


def a_table_against_bots(base: str, headers: dict[str, str], hands: int) -> str:
    made = httpx.post(f"{base}/api/v1/tables", headers=headers, json={
        "game": "mighty-5", "seat": 0, "hands": hands, "turn_seconds": TURN_S,
        "bots": {str(seat): "beginner" for seat in range(1, 5)}})
    assert made.status_code == 201, made.text
    table: str = made.json()["table"]
    return table


def my_turn(base: str, table: str, headers: dict[str, str], timeout_s: float, service: Service) -> dict[str, Any]:
    """Seat 0's view once it is to act (the bots play the others at once)."""
    found: dict[str, Any] = {}

    def mine() -> bool:
        found.update(httpx.get(f"{base}/api/v1/tables/{table}/view", headers=headers).json())
        return found["status"] == "playing" and found["to_act"] == 0 and bool(found["legal"])

    wait_for(mine, service, timeout_s=timeout_s, what="seat 0 to act")
    return found


def play(base: str, table: str, headers: dict[str, str], view: dict[str, Any]) -> None:
    sent = httpx.post(f"{base}/api/v1/tables/{table}/commands", headers=headers,
                      json={"id": f"v{view['version']}", "command": a_legal_command(view)})
    assert sent.status_code == 200, sent.text


def gone_events(wiring: Wiring, table: str) -> list[tuple[Any, SeatAway]]:
    return [(entry, e) for entry, e in stored(wiring, table) if isinstance(e, SeatAway)]


@pytest.mark.timeout(300)
def test_a_player_who_disconnects_mid_hand_is_away_within_the_bound_and_the_hand_finishes(
    service: Service, wiring: Wiring,
) -> None:
    base = service.base()
    ana, token = a_person(base, "Ana")
    headers = {"Authorization": f"Bearer {token}"}
    table = a_table_against_bots(base, headers, hands=1)
    stream = f"ws://127.0.0.1:{service.ports['gateway']}/api/v1/tables/{table}/stream?after=0&token={token}"

    with ws_connect(stream):
        # slow with her stream open: twice the bound before her first move, and she keeps her seat
        view = my_turn(base, table, headers, 60, service)
        time.sleep(2 * GONE_S)
        play(base, table, headers, view)
        play(base, table, headers, my_turn(base, table, headers, 60, service))
        assert gone_events(wiring, table) == []
        assert wiring.handler.state_of(table)[0].hands_scored == 0  # mid-hand
    # she disconnects (her stream closed, mid-hand)
    waited = wait_for(lambda: bool(gone_events(wiring, table)), service, timeout_s=GONE_S + 30,
                      what="the seat sent away")
    (entry, away), = gone_events(wiring, table)
    assert (away.seat, away.player, away.away, away.reason, away.after_s) == (0, ana, True, AWAY_GONE, GONE_S)
    assert isinstance(away.gone_s, int) and away.gone_s >= GONE_S
    assert entry.command_id.startswith("gone-")  # the timer worker's, as the service
    assert GONE_S - 1 <= waited <= GONE_S + 5  # at the bound (and a worker's pass), not before

    # the bots play her seat: the hand finishes (the match's one), no turn of hers timed out
    wait_for(lambda: wiring.handler.state_of(table)[0].status == "closed", service, timeout_s=60,
             what="the hand finished")
    events = stored(wiring, table)
    assert wiring.handler.state_of(table)[0].hands_scored == 1
    assert isinstance(events[-1][1], TableClosed) and events[-1][1].reason == "match_over"
    assert not any(isinstance(e, TurnTimedOut) for _, e in events)
    verified = service.mighty("verify", table)  # the service's SendAway decided again from its event
    assert verified.returncode == 0, verified.stdout + verified.stderr


@pytest.mark.timeout(300)
def test_a_player_over_http_only_who_acts_in_time_is_never_sent_away(service: Service, wiring: Wiring) -> None:
    base = service.base()
    _, token = a_person(base, "Bo")
    headers = {"Authorization": f"Bearer {token}"}
    table = a_table_against_bots(base, headers, hands=1)
    for _ in range(2):  # longer than the bound before each of his first moves, no stream at all
        view = my_turn(base, table, headers, 60, service)
        time.sleep(GONE_S + 2)
        play(base, table, headers, view)
    deadline = time.monotonic() + 120
    while wiring.handler.state_of(table)[0].status != "closed":
        assert time.monotonic() < deadline, service.logs()
        view = httpx.get(f"{base}/api/v1/tables/{table}/view", headers=headers).json()
        if view["status"] == "playing" and view["to_act"] == 0 and view["legal"]:
            play(base, table, headers, view)
        else:
            time.sleep(0.05)
    assert gone_events(wiring, table) == []
    assert not any(isinstance(e, TurnTimedOut) for _, e in stored(wiring, table))
