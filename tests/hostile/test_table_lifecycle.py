"""Every table ends (issue "Open to strangers", item 2): a table of bots that asked for no
end, a table nobody watches or acts at, a table its creator gives up before it starts,
a turn that asks to wait for ever. Driven over HTTP and WebSocket against the whole
service (``conftest.py``), with short idle times where a test waits for one."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect

from tests.hostile.conftest import Running

BOTS_ALL = {str(seat): "beginner" for seat in range(5)}
BOTS_BESIDE_ME = {str(seat): "beginner" for seat in range(1, 5)}


def new_player(http: httpx.Client, name: str) -> dict[str, str]:
    made = http.post("/api/v1/players", json={"name": name})
    assert made.status_code == 201, made.text
    body = made.json()
    return {"player": body["player"], "token": body["token"]}


def bearer(player: dict[str, str]) -> dict[str, str]:
    return {"Authorization": f"Bearer {player['token']}"}


def create(http: httpx.Client, player: dict[str, str], **body: Any) -> dict[str, Any]:
    made = http.post("/api/v1/tables", json={"game": "mighty-5", **body}, headers=bearer(player))
    assert made.status_code == 201, made.text
    table: dict[str, Any] = made.json()
    return table


def table_of(http: httpx.Client, table: str) -> dict[str, Any]:
    found = http.get(f"/api/v1/tables/{table}")
    assert found.status_code == 200, found.text
    body: dict[str, Any] = found.json()
    return body


def wait_for(what: Callable[[], Any], timeout_s: float, running: Running, why: str) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = what()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"{why} within {timeout_s} s\n{running.service.logs()}")


def finished(http: httpx.Client, table: str) -> Callable[[], dict[str, Any] | None]:
    def check() -> dict[str, Any] | None:
        found = table_of(http, table)
        return found if found["status"] == "finished" else None
    return check


def verified(running: Running, http: httpx.Client, table: str) -> None:
    answer = http.get(f"/api/v1/tables/{table}/verify")
    assert answer.status_code == 200 and answer.json()["ok"], answer.text
    checked = running.service.mighty("verify", table, *running.service.settings.store_flags())
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_table_of_bots_only_that_asks_for_no_end_plays_a_few_hands_and_closes(
        stranger_service: Callable[..., Running]) -> None:
    running = stranger_service(bot_table_hands=2)
    with httpx.Client(base_url=running.base, timeout=10) as http:
        watcher = new_player(http, "Watcher")
        table = create(http, watcher, seat=None, hands=0, turn_seconds=0, bots=BOTS_ALL)
        assert (table["hands"], table["status"]) == (2, "playing")
        done = wait_for(finished(http, table["table"]), 120, running, "the bots' table never ended")
        assert (done["reason"], done["hands_played"]) == ("match_over", 2)
        verified(running, http, table["table"])


def test_a_started_table_nobody_watches_is_closed_as_idle_with_its_deal_revealed(
        stranger_service: Callable[..., Running]) -> None:
    running = stranger_service(idle_s=2.0)
    with httpx.Client(base_url=running.base, timeout=10) as http:
        ana = new_player(http, "Ana")
        # Ana sits with four bots and never acts: her turn would wait an hour
        made = create(http, ana, seat=0, turn_seconds=3600, bots=BOTS_BESIDE_ME)
        table = made["table"]
        assert made["status"] == "playing"
        done = wait_for(finished(http, table), 30, running, "the idle table was never closed")
        assert done["reason"] == "idle"
        hands = http.get(f"/api/v1/tables/{table}/hands").json()["hands"]
        assert hands and hands[-1]["status"] == "abandoned"  # cut short: its deal revealed
        assert http.get(f"/api/v1/tables/{table}/hands/{hands[-1]['hand']}").status_code == 200
        verified(running, http, table)


def test_an_open_table_nobody_joins_is_closed_as_idle(stranger_service: Callable[..., Running]) -> None:
    running = stranger_service(idle_open_s=2.0)
    with httpx.Client(base_url=running.base, timeout=10) as http:
        ana = new_player(http, "Ana")
        table = create(http, ana, seat=0)["table"]
        done = wait_for(finished(http, table), 30, running, "the open table was never closed")
        assert done["reason"] == "idle"
        assert http.post(f"/api/v1/tables/{table}/join", json={}, headers=bearer(new_player(http, "Bo"))
                         ).json()["code"] == "table_closed"


def test_a_table_a_person_watches_is_not_idle_until_the_stream_closes(
        stranger_service: Callable[..., Running]) -> None:
    running = stranger_service(idle_s=2.0)
    with httpx.Client(base_url=running.base, timeout=10) as http:
        ana = new_player(http, "Ana")
        table = create(http, ana, seat=0, turn_seconds=3600, bots=BOTS_BESIDE_ME)["table"]
        with connect(f"{running.ws}/api/v1/tables/{table}/stream?token={ana['token']}", open_timeout=10) as ws:
            assert '"view"' in str(ws.recv(timeout=10))
            watched_until = time.monotonic() + 3 * 2.0  # three idle times, watched
            while time.monotonic() < watched_until:
                assert table_of(http, table)["status"] != "finished", running.service.logs()
                time.sleep(0.2)
        done = wait_for(finished(http, table), 30, running, "the table was not closed once nobody watched")
        assert done["reason"] == "idle"


def test_the_creator_closes_her_table_before_it_starts_and_nobody_else_can(service: Running) -> None:
    with httpx.Client(base_url=service.base, timeout=10) as http:
        ana, bo = new_player(http, "Ana"), new_player(http, "Bo")
        table = create(http, ana, seat=0)["table"]
        close = f"/api/v1/tables/{table}/close"
        refused = http.post(close, headers=bearer(bo))
        assert (refused.status_code, refused.json()["code"]) == (403, "not_allowed")
        assert http.post(f"/api/v1/tables/{table}/join", json={"seat": 1}, headers=bearer(bo)).status_code == 200
        refused = http.post(close, headers=bearer(bo))
        assert (refused.status_code, refused.json()["code"]) == (403, "not_allowed")
        assert http.post(close).status_code == 401
        assert http.post(close, headers=bearer(ana)).status_code == 204
        done = wait_for(finished(http, table), 30, service, "the lobby never showed the table closed")
        assert done["reason"] == "cancelled"
        again = http.post(close, headers=bearer(ana))
        assert (again.status_code, again.json()["code"]) == (409, "table_closed")
        verified(service, http, table)


def test_nobody_closes_a_started_table_by_hand(service: Running) -> None:
    with httpx.Client(base_url=service.base, timeout=10) as http:
        ana = new_player(http, "Ana")
        table = create(http, ana, seat=0, bots=BOTS_BESIDE_ME)
        assert table["status"] == "playing"
        refused = http.post(f"/api/v1/tables/{table['table']}/close", headers=bearer(ana))
        assert (refused.status_code, refused.json()["code"]) == (409, "table_started")


@pytest.mark.parametrize(("field", "value"), [("turn_seconds", 1), ("turn_seconds", 9), ("hands", 101)])
def test_a_match_outside_the_bounds_is_refused(service: Running, field: str, value: int) -> None:
    with httpx.Client(base_url=service.base, timeout=10) as http:
        ana = new_player(http, "Ana")
        refused = http.post("/api/v1/tables", json={"game": "mighty-5", "seat": 0, field: value}, headers=bearer(ana))
        assert (refused.status_code, refused.json()["code"]) == (422, "invalid_request"), refused.text


def test_no_end_and_no_turn_time_mean_the_longest_match_and_the_default_turn(service: Running) -> None:
    """An absent seat's turn times out (a person who disconnects does not stall the table)."""
    with httpx.Client(base_url=service.base, timeout=10) as http:
        table = create(http, new_player(http, "Ana"), seat=0, hands=0, turn_seconds=0)
        assert (table["hands"], table["turn_seconds"]) == (100, 60)
