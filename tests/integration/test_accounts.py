"""Accounts against the service as it runs (docs/accounts.md): two gateways on one Redis
(a local Redis Cluster under ``MIGHTY_TEST_CLUSTER=1``), driven over HTTP as a stranger
would, and every part's log read afterwards for the passwords and tokens it must not hold.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from services.gateway.accounts import ANONYMOUS
from tests.drills.service import Service, drill_settings
from tests.unit.gateway_helpers import a_legal_command

pytestmark = pytest.mark.integration

CACHE_S = 0.5  # MIGHTY_SESSION_CACHE_S here: how long another gateway may trust an ended session
PASSWORDS = ("first-Secret-9481", "second-Secret-7733", "wrong-Secret-0000", "guest-Secret-5150")
ISSUED: list[str] = []  # every token and refresh token the tests were given: in no log line
BOTS = {"1": "beginner", "2": "beginner", "3": "beginner", "4": "beginner"}


@pytest.fixture
def service(redis_server: Any, tmp_path: Path) -> Iterator[Service]:
    """Two gateways (``gateway``, ``gateway-b``) and every worker, logging at debug."""
    settings = drill_settings(redis_server.url, log_level="debug", session_cache_s=CACHE_S, logins_per_name=6)
    running = Service(tmp_path / "parts", settings)
    try:
        running.start_every_part()
        running.start("gateway-b", kind="gateway")
        running.wait_gateway("gateway-b")
        yield running
    finally:
        running.stop()
        _no_secret_in_any_log(running.directory)


def _no_secret_in_any_log(directory: Path) -> None:
    for path in directory.glob("*.log"):
        text = path.read_text(errors="replace")
        for password in PASSWORDS:
            assert password not in text, f"{path.name} holds a password"
        assert "Bearer " not in text, f"{path.name} holds an Authorization header"
        for secret in ISSUED:
            assert secret.rsplit(".", 1)[-1] not in text, f"{path.name} holds a token"


def _client(service: Service, name: str = "gateway") -> httpx.Client:
    return httpx.Client(base_url=service.base(name), timeout=15)


def _bearer(session: dict[str, Any]) -> dict[str, str]:
    ISSUED.extend(s for s in (session["token"], session.get("refresh")) if s)
    return {"Authorization": f"Bearer {session['token']}"}


def _acts(client: httpx.Client, session: dict[str, Any]) -> int:
    """The status of a call that needs a player (a table with no seat, no quota in the way)."""
    return client.post("/api/v1/tables", json={"game": "mighty-5", "seat": None}, headers=_bearer(session)).status_code


def test_an_account_logs_in_on_a_second_gateway_and_its_logout_holds_on_every_gateway(service: Service) -> None:
    a, b = _client(service), _client(service, "gateway-b")
    made = a.post("/api/v1/accounts", json={"name": "Ana", "password": PASSWORDS[0]})
    assert made.status_code == 201, made.text
    first = made.json()
    logged = b.post("/api/v1/sessions", json={"name": "aNA", "password": PASSWORDS[0]})
    assert logged.status_code == 200
    second = logged.json()
    assert second["player"] == first["player"] and second["name"] == "Ana"
    assert [_acts(a, second), _acts(b, second), _acts(a, first), _acts(b, first)] == [201] * 4

    assert b.delete("/api/v1/sessions", headers=_bearer(second)).status_code == 204
    assert _acts(b, second) == 401  # at once where it ended
    time.sleep(CACHE_S + 0.1)  # the documented bound for another gateway
    assert _acts(a, second) == 401
    assert b.post("/api/v1/sessions/refresh", json={"refresh": second["refresh"]}).status_code == 401
    assert [_acts(a, first), _acts(b, first)] == [201, 201]  # the other session goes on

    refreshed = a.post("/api/v1/sessions/refresh", json={"refresh": first["refresh"]})
    assert refreshed.status_code == 200 and _acts(b, refreshed.json()) == 201


def test_names_are_unique_whatever_the_case_and_bad_credentials_look_alike(service: Service) -> None:
    a, b = _client(service), _client(service, "gateway-b")
    assert a.post("/api/v1/accounts", json={"name": "Bora", "password": PASSWORDS[1]}).status_code == 201
    taken = b.post("/api/v1/accounts", json={"name": "BORA", "password": PASSWORDS[0]})
    assert taken.status_code == 409 and taken.json()["code"] == "name_taken"

    def timed(name: str) -> tuple[float, httpx.Response]:
        started = time.perf_counter()
        answer = b.post("/api/v1/sessions", json={"name": name, "password": PASSWORDS[2]})
        return time.perf_counter() - started, answer

    wrong = [timed("Bora") for _ in range(2)]
    unknown = [timed(f"Nobody{n}") for n in range(2)]
    assert {(r.status_code, r.text) for _, r in wrong + unknown} == {
        (401, '{"code":"bad_credentials","message":"No account has that name and password."}')}
    # both verify a password (argon2id, tens of ms): neither answers in a fraction of the other's time
    fast_wrong, fast_unknown = min(t for t, _ in wrong), min(t for t, _ in unknown)
    assert 1 / 3 < fast_wrong / fast_unknown < 3, (wrong, unknown)


def test_logins_to_one_name_past_the_limit_are_429_on_every_gateway(service: Service) -> None:
    a, b = _client(service), _client(service, "gateway-b")
    assert a.post("/api/v1/accounts", json={"name": "Cyan", "password": PASSWORDS[1]}).status_code == 201
    codes = [(a if n % 2 else b).post("/api/v1/sessions", json={"name": "cyan", "password": PASSWORDS[2]}).status_code
             for n in range(5)]  # the sign-up counted one of the six
    assert codes == [401] * 5
    held = a.post("/api/v1/sessions", json={"name": "Cyan", "password": PASSWORDS[1]})
    assert held.status_code == 429 and held.json()["code"] == "too_many_logins"
    assert int(held.headers["retry-after"]) >= 1


def _play_one_hand(client: httpx.Client, headers: dict[str, str]) -> str:
    """A table of four bots and the caller at seat 0, played to its one hand's end."""
    made = client.post("/api/v1/tables", json={"game": "mighty-5", "seat": 0, "hands": 1, "bots": BOTS},
                       headers=headers)
    assert made.status_code == 201, made.text
    table = made.json()["table"]
    rng, sent, deadline = random.Random(7), 0, time.monotonic() + 120
    while client.get(f"/api/v1/tables/{table}").json()["status"] != "finished":
        assert time.monotonic() < deadline, "the hand never ended"
        view = client.get(f"/api/v1/tables/{table}/view", headers=headers).json()
        if view["to_act"] == 0 and view["legal"]:
            sent += 1
            client.post(f"/api/v1/tables/{table}/commands", headers=headers,
                        json={"id": f"c{sent}", "command": a_legal_command(view, rng)})
        else:
            time.sleep(0.05)
    return table


def _hands_of(client: httpx.Client, player: str, at_least: int) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while True:
        found: dict[str, Any] = client.get(f"/api/v1/players/{player}").json()
        if found.get("hands", 0) >= at_least or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def test_a_guest_keeps_its_ledger_as_an_account_and_a_deleted_account_leaves_an_anonymous_label(
        service: Service) -> None:
    a, b = _client(service), _client(service, "gateway-b")
    guest = a.post("/api/v1/players", json={"name": "Guesty"}).json()
    table = _play_one_hand(a, _bearer(guest))
    before = _hands_of(a, guest["player"], 1)
    assert before["hands"] == 1

    made = b.post("/api/v1/accounts", json={"name": "Dana", "password": PASSWORDS[3]}, headers=_bearer(guest))
    assert made.status_code == 201, made.text
    dana = made.json()
    assert dana["player"] == guest["player"]
    after = a.get(f"/api/v1/players/{dana['player']}").json()
    assert (after["name"], after["hands"], after["total"]) == ("Dana", 1, before["total"])
    assert a.get(f"/api/v1/tables/{table}").json()["seats"][0]["name"] == "Dana"
    time.sleep(CACHE_S + 0.1)
    assert _acts(a, guest) == 401  # the guest's token is the account's no more

    assert a.delete("/api/v1/accounts/me", headers=_bearer(dana)).status_code == 204
    seats = b.get(f"/api/v1/tables/{table}").json()["seats"]
    assert (seats[0]["player"], seats[0]["name"]) == (dana["player"], ANONYMOUS)
    gone = b.get(f"/api/v1/players/{dana['player']}").json()
    assert (gone["name"], gone["hands"]) == (ANONYMOUS, 1)  # its past is kept, under the label
    assert b.get(f"/api/v1/tables/{table}/verify").json()["ok"] is True  # no event was edited
    assert b.post("/api/v1/sessions", json={"name": "Dana", "password": PASSWORDS[3]}).status_code == 401
    again = b.post("/api/v1/accounts", json={"name": "dana", "password": PASSWORDS[1]})
    assert again.status_code == 201 and again.json()["player"] != dana["player"]
