"""Quotas and admission against the running service (issue "Open to strangers": endless
tables, no quotas; and the lobby findings of "Smaller"): 1,000 tables and 3,000 players
from one address were all accepted, one player sat at 50 tables, ``GET /tables`` answered
everything at once, player records never expired, a stranger could take a rematch's
seat, concurrent quickplays answered 503 and seated a player twice, retries were counted
against the rate limit and one id under many bodies got a race's codes."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from tests.hostile.conftest import Running

API = "/api/v1"


def _player(client: httpx.Client, name: str = "Ana") -> dict[str, str]:
    made = client.post(f"{API}/players", json={"name": name})
    assert made.status_code == 201, made.text
    body = made.json()
    return {"player": body["player"], "Authorization": f"Bearer {body['token']}"}


def _auth(player: dict[str, str]) -> dict[str, str]:
    return {"Authorization": player["Authorization"]}


def _table(client: httpx.Client, player: dict[str, str], **body: Any) -> httpx.Response:
    return client.post(f"{API}/tables", json={"game": "mighty-5", **body}, headers=_auth(player))


def _until(condition: Callable[[], Any], timeout_s: float = 15.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError("the condition did not hold in time")


def _refused(answer: httpx.Response, status: int, code: str) -> None:
    assert answer.status_code == status, answer.text
    assert answer.json()["code"] == code and answer.json()["message"], answer.text


def _retry_after(answer: httpx.Response) -> int:
    seconds = int(answer.headers["Retry-After"])
    assert seconds >= 1
    return seconds


def test_players_tables_and_quickplays_past_their_quotas_are_429_naming_the_limit(
        stranger_service: Callable[..., Running]) -> None:
    running = stranger_service(players_per_address=4, tables_per_player=2, tables_per_address=3,
                               quickplays_per_player=1, quickplays_per_address=100)
    with httpx.Client(base_url=running.base, timeout=30) as client:
        ana, bo, cy, di = (_player(client, n) for n in ("Ana", "Bo", "Cy", "Di"))
        over = client.post(f"{API}/players", json={"name": "Eve"})
        _refused(over, 429, "too_many_players")
        assert _retry_after(over) <= 3600

        for _ in range(2):
            assert _table(client, ana, seat=None).status_code == 201
        over = _table(client, ana, seat=None)  # the player's quota
        _refused(over, 429, "too_many_tables")
        _retry_after(over)
        assert _table(client, bo, seat=None).status_code == 201
        _refused(_table(client, cy, seat=None), 429, "too_many_tables")  # the address's quota

        first = client.post(f"{API}/quickplay", json={"game": "mighty-3", "wait_seconds": 0}, headers=_auth(di))
        assert first.status_code == 200, first.text
        over = client.post(f"{API}/quickplay", json={"game": "mighty-3", "wait_seconds": 0}, headers=_auth(di))
        _refused(over, 429, "too_many_quickplays")
        _retry_after(over)


def test_a_player_holds_at_most_the_seats_limit_at_open_or_playing_tables(
        stranger_service: Callable[..., Running]) -> None:
    running = stranger_service(seats_per_player=3)
    with httpx.Client(base_url=running.base, timeout=30) as client:
        ana, bo = _player(client, "Ana"), _player(client, "Bo")
        tables = []
        for _ in range(3):
            made = _table(client, ana, seat=0)
            assert made.status_code == 201, made.text
            tables.append(made.json()["table"])
        _refused(_table(client, ana, seat=0), 429, "too_many_seats")
        other = _table(client, bo, seat=0).json()["table"]
        _refused(client.post(f"{API}/tables/{other}/join", json={}, headers=_auth(ana)), 429, "too_many_seats")
        _refused(client.post(f"{API}/quickplay", json={"game": "mighty-3", "wait_seconds": 0}, headers=_auth(ana)),
                 429, "too_many_seats")
        # joining a table where the seat is held already is no new seat
        assert client.post(f"{API}/tables/{tables[0]}/join", json={}, headers=_auth(ana)).json() == {"seat": 0}
        # a seat left (an open table) is a seat free again
        assert client.post(f"{API}/tables/{tables[0]}/leave", headers=_auth(ana)).status_code == 204
        joined = _until(lambda: (lambda a: a if a.status_code == 200 else None)(
            client.post(f"{API}/tables/{other}/join", json={}, headers=_auth(ana))), timeout_s=60)
        assert joined.json()["seat"] == 1
        # a table created without a seat holds none
        assert _table(client, ana, seat=None).status_code == 201


def test_the_lobby_is_answered_in_pages_of_a_bounded_size(stranger_service: Callable[..., Running]) -> None:
    running = stranger_service(tables_per_player=100)
    with httpx.Client(base_url=running.base, timeout=30) as client:
        ana = _player(client)
        made = {_table(client, ana, seat=None).json()["table"] for _ in range(7)}
        _until(lambda: len(client.get(f"{API}/tables", params={"limit": 200}).json()["tables"]) == 7)
        seen: list[str] = []
        cursor = None
        pages = 0
        while True:
            params: dict[str, Any] = {"limit": 3, **({"cursor": cursor} if cursor else {})}
            page = client.get(f"{API}/tables", params=params)
            assert page.status_code == 200, page.text
            body = page.json()
            assert len(body["tables"]) <= 3
            seen += [t["table"] for t in body["tables"]]
            pages += 1
            cursor = body.get("cursor")
            if cursor is None:
                break
        assert pages == 3 and len(seen) == 7 and set(seen) == made
        for bad in ({"limit": 0}, {"limit": 201}, {"limit": "x"}, {"cursor": "not-a-cursor"}):
            _refused(client.get(f"{API}/tables", params=bad), 422, "invalid_request")
        unpaged = client.get(f"{API}/tables").json()
        assert len(unpaged["tables"]) == 7 and "cursor" not in unpaged


def test_an_unused_guest_expires_but_a_player_seated_at_a_live_table_does_not(
        stranger_service: Callable[..., Running]) -> None:
    running = stranger_service(player_ttl_s=3)
    with httpx.Client(base_url=running.base, timeout=30) as client:
        idle, seated = _player(client, "Idle"), _player(client, "Seated")
        made = _table(client, seated, seat=0, bots={str(s): "beginner" for s in range(1, 5)}, hands=100)
        assert made.status_code == 201, made.text
        table = made.json()["table"]
        _until(lambda: client.get(f"{API}/players/{idle['player']}").status_code == 404, timeout_s=20)
        assert client.get(f"{API}/tables/{table}").json()["status"] == "playing"
        # the seated player has not acted since it was created: its live table keeps its record
        found = client.get(f"{API}/players/{seated['player']}")
        assert found.status_code == 200 and found.json()["name"] == "Seated"


def test_only_a_tables_players_may_ask_for_its_rematch_and_each_keeps_their_seat(service: Running) -> None:
    with httpx.Client(base_url=service.base, timeout=30) as client:
        ana, bo, stranger = _player(client, "Ana"), _player(client, "Bo"), _player(client, "Stranger")
        made = _table(client, ana, seat=0, bots={str(s): "beginner" for s in range(2, 5)})
        table = made.json()["table"]
        assert client.post(f"{API}/tables/{table}/join", json={"seat": 1}, headers=_auth(bo)).status_code == 200
        _refused(client.post(f"{API}/tables/{table}/rematch", headers=_auth(stranger)), 403, "not_your_seat")
        again = client.post(f"{API}/tables/{table}/rematch", headers=_auth(ana))
        assert again.status_code == 200, again.text
        rematch = again.json()
        assert rematch["seats"][0]["player"] == ana["player"]
        for body in ({}, {"seat": 1}):
            _refused(client.post(f"{API}/tables/{rematch['table']}/join", json=body, headers=_auth(stranger)),
                     403, "not_your_seat")
        theirs = client.post(f"{API}/tables/{table}/rematch", headers=_auth(bo))
        assert theirs.status_code == 200 and theirs.json()["table"] == rematch["table"]
        assert theirs.json()["seats"][1]["player"] == bo["player"]


def test_concurrent_quickplays_seat_each_caller_exactly_once_without_a_5xx(service: Running) -> None:
    with httpx.Client(base_url=service.base, timeout=60) as client:
        players = [_player(client, f"Q{i}") for i in range(20)]

        def quickplay(player: dict[str, str]) -> httpx.Response:
            with httpx.Client(base_url=service.base, timeout=60) as own:
                return own.post(f"{API}/quickplay", json={"game": "mighty-5", "wait_seconds": 3},
                                headers=_auth(player))

        # each its own player, and one player three times at once
        twice = players[0]
        with ThreadPoolExecutor(max_workers=22) as pool:
            answers = list(pool.map(quickplay, [*players, twice, twice]))
        assert all(a.status_code == 200 for a in answers), [(a.status_code, a.text) for a in answers
                                                            if a.status_code != 200]
        mine = {(a.json()["table"], a.json()["seat"]) for a in (answers[0], answers[-2], answers[-1])}
        assert len(mine) == 1, mine  # the same table and seat for every call of one player
        tables = {a.json()["table"] for a in answers}
        seated = Counter(s["player"] for t in tables for s in client.get(f"{API}/tables/{t}").json()["seats"]
                         if s["player"] is not None and s["bot"] is None)
        assert {p["player"] for p in players} == set(seated) and set(seated.values()) == {1}, seated


def _playing_table(client: httpx.Client) -> tuple[str, dict[str, str]]:
    ana = _player(client)
    made = _table(client, ana, seat=0, bots={str(s): "beginner" for s in range(1, 5)}, hands=100)
    assert made.status_code == 201, made.text
    return made.json()["table"], ana


def test_a_retry_under_the_same_command_id_is_not_counted_against_the_rate_limit(
        stranger_service: Callable[..., Running]) -> None:
    running = stranger_service(rate_commands=3, rate_window_s=60)
    with httpx.Client(base_url=running.base, timeout=30) as client:
        table, ana = _playing_table(client)
        body = {"id": "c-retried", "command": {"type": "shout"}}
        answers = [client.post(f"{API}/tables/{table}/commands", json=body, headers=_auth(ana)) for _ in range(6)]
        assert {(a.status_code, a.json()["code"]) for a in answers} == {(422, "malformed_command")}
        for n in range(2):  # new ids are counted: two more fit the limit of three, then 429
            fresh = client.post(f"{API}/tables/{table}/commands", json={"id": f"c-{n}", "command": {"type": "shout"}},
                                headers=_auth(ana))
            assert fresh.status_code == 422, fresh.text
        over = client.post(f"{API}/tables/{table}/commands", json={"id": "c-over", "command": {"type": "shout"}},
                           headers=_auth(ana))
        _refused(over, 429, "rate_limited")
        _retry_after(over)


def test_one_command_id_under_many_bodies_gets_one_code_for_every_other_body(service: Running) -> None:
    with httpx.Client(base_url=service.base, timeout=30) as client:
        table, ana = _playing_table(client)
        cards = ["AS", "KS", "QS", "JS", "TS", "9S", "8S", "7S", "AH", "KH", "QH", "JH", "TH", "9H", "8H",
                 "AD", "KD", "QD", "JD", "TD"]

        def send(card: str) -> httpx.Response:
            with httpx.Client(base_url=service.base, timeout=30) as own:
                return own.post(f"{API}/tables/{table}/commands",
                                json={"id": "c-one", "command": {"type": "play", "card": card}}, headers=_auth(ana))

        with ThreadPoolExecutor(max_workers=20) as pool:
            answers = list(pool.map(send, cards))
        codes = Counter((a.status_code, a.json().get("code")) for a in answers)
        assert codes[(409, "command_id_reused")] == 19, codes
        later = client.post(f"{API}/tables/{table}/commands", json={"id": "c-one", "command": {"type": "pass"}},
                            headers=_auth(ana))
        _refused(later, 409, "command_id_reused")
