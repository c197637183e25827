"""Quotas and admission over fakeredis (services/gateway/quotas.py): the refusals' codes
and headers, what is counted and what is not, lobby pages and their cursors."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from services.gateway import pages, quotas
from services.gateway.errors import ApiError
from tests.unit.gateway_helpers import auth, gateway, new_player


def test_the_client_address_is_the_scopes_client_host_else_unknown() -> None:
    assert quotas.client_address(SimpleNamespace(scope={"client": ("10.0.0.7", 5123)})) == "10.0.0.7"
    assert quotas.client_address(SimpleNamespace(scope={"client": None})) == "unknown"
    assert quotas.client_address(SimpleNamespace(scope={})) == "unknown"


def test_a_command_body_has_one_mark_whatever_the_order_of_its_fields() -> None:
    assert quotas.fingerprint({"type": "bid", "points": 14, "trump": "H"}) == \
        quotas.fingerprint({"trump": "H", "points": 14, "type": "bid"})
    assert quotas.fingerprint({"type": "pass"}) != quotas.fingerprint({"type": "play", "card": "AS"})


def test_a_cursor_names_the_table_it_continues_after_and_a_forged_one_is_invalid() -> None:
    assert pages.decode_cursor(pages.encode_cursor("t0123abcd")) == "t0123abcd"
    for bad in ("", "x", "a" * 300, pages.encode_cursor("t1")[:-1] + "!", "YWZ0ZXI6"):
        with pytest.raises(ApiError) as refused:
            pages.decode_cursor(bad)
        assert refused.value.code == "invalid_request"


def test_players_past_the_address_quota_are_429_with_retry_after_and_not_counted() -> None:
    with gateway(secret="unit-secret", players_per_address=2) as client:
        new_player(client), new_player(client)
        for _ in range(2):
            over = client.post("/api/v1/players", json={"name": "Eve"})
            assert over.status_code == 429 and over.json()["code"] == "too_many_players"
            assert 1 <= int(over.headers["Retry-After"]) <= 3600


def test_a_command_retried_is_counted_once_and_its_id_with_another_body_is_refused() -> None:
    with gateway(secret="unit-secret", rate_commands=2, rate_window_s=60) as client:
        ana = new_player(client)
        table = client.post("/api/v1/tables", json={"game": "mighty-5", "seat": 0}, headers=auth(ana)).json()["table"]
        url = f"/api/v1/tables/{table}/commands"
        for _ in range(4):
            answer = client.post(url, json={"id": "a", "command": {"type": "pass"}}, headers=auth(ana))
            assert answer.status_code == 422, answer.text  # the table has not started: refused alike
        reused = client.post(url, json={"id": "a", "command": {"type": "play", "card": "AS"}}, headers=auth(ana))
        assert reused.status_code == 409 and reused.json()["code"] == "command_id_reused"
        assert client.post(url, json={"id": "b", "command": {"type": "pass"}}, headers=auth(ana)).status_code == 422
        over = client.post(url, json={"id": "c", "command": {"type": "pass"}}, headers=auth(ana))
        assert over.status_code == 429 and over.json()["code"] == "rate_limited" and over.headers["Retry-After"]


def test_seats_past_the_limit_are_429_too_many_seats_and_a_left_seat_is_free_again() -> None:
    with gateway(secret="unit-secret", seats_per_player=2) as client:
        ana, bo = new_player(client, "Ana"), new_player(client, "Bo")
        made = [client.post("/api/v1/tables", json={"game": "mighty-5", "seat": 0}, headers=auth(ana)).json()["table"]
                for _ in range(2)]
        over = client.post("/api/v1/tables", json={"game": "mighty-5", "seat": 0}, headers=auth(ana))
        assert over.status_code == 429 and over.json()["code"] == "too_many_seats"
        other = client.post("/api/v1/tables", json={"game": "mighty-5", "seat": 0}, headers=auth(bo)).json()["table"]
        assert client.post(f"/api/v1/tables/{other}/join", json={}, headers=auth(ana)).status_code == 429
        assert client.post(f"/api/v1/tables/{made[0]}/leave", headers=auth(ana)).status_code == 204
        assert client.post(f"/api/v1/tables/{other}/join", json={}, headers=auth(ana)).json() == {"seat": 1}


@pytest.mark.parametrize("query", ["limit=0", "limit=201", "limit=x", "cursor=nope"])
def test_a_bad_lobby_limit_or_cursor_is_422(query: str) -> None:
    with gateway(secret="unit-secret") as client:
        answer = client.get(f"/api/v1/tables?{query}")
        assert answer.status_code == 422 and answer.json()["code"] == "invalid_request"
