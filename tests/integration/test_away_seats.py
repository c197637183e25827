"""A player who vanishes mid-hand does not stall the table (issue 21): the whole service
(the gateway and every worker as processes, on a private redis-server) times their turns
out, sends their seat away at the second timed-out turn in a row
(``MIGHTY_AWAY_AFTER_TIMEOUTS``, 2), a bot plays it from then on and the hands go on;
the player opens their stream again and plays their seat again."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect as ws_connect

from domain.codec import decode_event
from domain.table import AWAY_TIMEOUTS, SeatAway, TableClosed, TableEvent, TurnTimedOut
from services.bootstrap import Wiring
from services.redis_runtime import PrivateRedis
from services.store import StoredEvent
from tests.drills.service import Service, drill_settings, running_service, wired_to

TURN_S = 3  # the table's turn_seconds
AWAY_AFTER = 2  # the service's setting under test (its default)


@pytest.fixture
def service(redis_server: PrivateRedis, tmp_path: Path) -> Iterator[Service]:
    settings = drill_settings(redis_server.url, turn_seconds_min=1, away_after_timeouts=AWAY_AFTER)
    with running_service(tmp_path / "service", settings) as running:
        yield running


@pytest.fixture
def wiring(service: Service) -> Iterator[Wiring]:
    with wired_to(service) as wired:
        yield wired


def stored(wiring: Wiring, table: str) -> list[tuple[StoredEvent, TableEvent]]:
    return [(entry, decode_event(entry.data)) for entry in wiring.store.read(table)]


def wait_for(check: Callable[[], bool], service: Service, timeout_s: float, what: str) -> float:
    started = time.monotonic()
    while not check():
        assert not service.exited(), f"a part exited: {service.exited()}\n{service.logs()}"
        assert time.monotonic() - started < timeout_s, f"{what}: not within {timeout_s} s\n{service.logs()}"
        time.sleep(0.1)
    return time.monotonic() - started


def a_person(base: str, name: str) -> tuple[str, str]:
    made = httpx.post(f"{base}/api/v1/players", json={"name": name}).json()
    return made["player"], made["token"]


def a_legal_command(view: dict[str, Any]) -> dict[str, Any]:
    command = dict(view["legal"][0])
    if command["type"] == "discard" and "count" in command:
        return {"type": "discard", "cards": command["from"][:command["count"]]}
    return command


@pytest.mark.timeout(300)
def test_a_player_who_stops_acting_is_away_within_two_turns_a_bot_plays_on_and_they_come_back(
    service: Service, wiring: Wiring,
) -> None:
    base = service.base()
    ana, token = a_person(base, "Ana")
    headers = {"Authorization": f"Bearer {token}"}
    made = httpx.post(f"{base}/api/v1/tables", headers=headers, json={
        "game": "mighty-5", "seat": 0, "hands": 5, "turn_seconds": TURN_S,
        "bots": {str(seat): "beginner" for seat in range(1, 5)}})
    assert made.status_code == 201, made.text
    table = made.json()["table"]

    # Ana never acts and holds no stream: her turns time out, the second in a row sends her away
    def away() -> bool:
        return any(isinstance(e, SeatAway) and e.away for _, e in stored(wiring, table))

    waited = wait_for(away, service, timeout_s=AWAY_AFTER * TURN_S + 60, what="the seat sent away")
    events = stored(wiring, table)
    gone = next(i for i, (_, e) in enumerate(events) if isinstance(e, SeatAway))
    timeouts = [i for i, (_, e) in enumerate(events[:gone]) if isinstance(e, TurnTimedOut)]
    assert len(timeouts) == AWAY_AFTER and all(events[i][1].seat == 0 for i in timeouts)  # type: ignore[attr-defined]
    assert events[gone][1] == SeatAway(seat=0, player=ana, away=True, reason=AWAY_TIMEOUTS)
    # decided by the timer worker, in the append of the second timed-out turn (one command id)
    assert events[gone][0].command_id == events[timeouts[-1]][0].command_id
    assert events[gone][0].command_id.startswith("timeout-")
    assert waited < AWAY_AFTER * TURN_S + 30  # two turns' time and the workers' reaction, not 48 minutes

    # every reader sees the seat away; a bot plays it at once (no third timeout)
    public = httpx.get(f"{base}/api/v1/tables/{table}/view").json()
    assert public["away"] == [0]
    assert httpx.get(f"{base}/api/v1/tables/{table}").json()["seats"][0]["away"] is True

    def first_hand_over() -> bool:
        return wiring.handler.state_of(table)[0].hands_scored >= 1

    wait_for(first_hand_over, service, timeout_s=60, what="the first hand finished")
    assert not any(isinstance(e, TurnTimedOut) for _, e in stored(wiring, table)[gone:])

    # Ana opens her stream: she is back, and plays her seat herself to the match's end
    stream = f"ws://127.0.0.1:{service.ports['gateway']}/api/v1/tables/{table}/stream?after=0&token={token}"
    played = 0
    with ws_connect(stream) as ws:
        wait_for(lambda: wiring.handler.state_of(table)[0].away == (), service, timeout_s=30, what="Ana back")
        ws.send(json.dumps({"type": "ping"}))
        deadline = time.monotonic() + 180
        while wiring.handler.state_of(table)[0].status != "closed":
            assert time.monotonic() < deadline, service.logs()
            view = httpx.get(f"{base}/api/v1/tables/{table}/view", headers=headers).json()
            if view["to_act"] == 0 and view["legal"] and view["status"] == "playing":
                sent = httpx.post(f"{base}/api/v1/tables/{table}/commands", headers=headers,
                                  json={"id": f"v{view['version']}", "command": a_legal_command(view)})
                if sent.status_code == 200:
                    played += 1
            else:
                time.sleep(0.05)
    events = stored(wiring, table)
    back = next(i for i, (_, e) in enumerate(events) if isinstance(e, SeatAway) and not e.away)
    assert events[back][1] == SeatAway(seat=0, player=ana, away=False)  # her own: the stream opened
    assert played > 0
    after_back = events[back + 1:]
    assert not any(isinstance(e, SeatAway | TurnTimedOut) for _, e in after_back)  # she played every turn
    assert sum(entry.command_id.startswith(f"{ana}:") for entry, _ in after_back) >= played
    assert isinstance(events[-1][1], TableClosed) and events[-1][1].reason == "match_over"
    verified = service.mighty("verify", table)
    assert verified.returncode == 0, verified.stdout + verified.stderr
