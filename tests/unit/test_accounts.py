"""Accounts over fakeredis (docs/accounts.md): sign-up, login, refresh, logout, deletion,
the guest who becomes an account, and what each refuses. The same behaviour against real
gateways on a real Redis: tests/integration/test_accounts.py."""

from __future__ import annotations

import time
from typing import Any

import pytest

from services.gateway import tokens
from services.gateway.accounts import ANONYMOUS, account_name_problem, fold
from services.redaction import redact
from tests.unit.gateway_helpers import gateway, new_player


@pytest.fixture
def client() -> Any:
    with gateway(secret="unit-secret-accounts", rate_commands=1000, session_cache_s=0.0) as client:
        yield client


def as_(who: dict[str, Any]) -> dict[str, str]:
    """The Authorization header of a guest (``new_player``) or an account's session."""
    return {"Authorization": who["Authorization"] if "Authorization" in who else f"Bearer {who['token']}"}


def sign_up(client: Any, name: str = "Ana", password: str = "correct horse", **headers: str) -> dict[str, Any]:
    made = client.post("/api/v1/accounts", json={"name": name, "password": password}, headers=headers)
    assert made.status_code == 201, made.text
    body: dict[str, Any] = made.json()
    return body


def test_a_sign_up_answers_a_player_its_name_a_short_token_and_a_refresh_token(client: Any) -> None:
    ana = sign_up(client)
    assert set(ana) == {"player", "name", "token", "refresh", "expires"} and ana["name"] == "Ana"
    assert tokens.bearer(b"unit-secret-accounts", ana["token"], time.time()).session is not None
    assert client.get(f"/api/v1/players/{ana['player']}").json()["name"] == "Ana"
    assert client.post("/api/v1/tables", json={"game": "mighty-5", "seat": 0}, headers=as_(ana)).status_code == 201


def test_logging_in_opens_a_second_session_with_its_own_tokens(client: Any) -> None:
    ana = sign_up(client)
    again = client.post("/api/v1/sessions", json={"name": "ana", "password": "correct horse"})
    assert again.status_code == 200
    second = again.json()
    assert second["player"] == ana["player"] and second["name"] == "Ana" and second["token"] != ana["token"]
    assert client.delete("/api/v1/sessions", headers=as_(second)).status_code == 204
    assert client.post("/api/v1/tables", json={"game": "mighty-5"}, headers=as_(second)).status_code == 401
    assert client.post("/api/v1/tables", json={"game": "mighty-5"}, headers=as_(ana)).status_code == 201


@pytest.mark.parametrize("taken_as", ["ana", "ANA", "Ａｎａ"])
def test_a_name_is_taken_whatever_its_case_or_width(client: Any, taken_as: str) -> None:
    sign_up(client)
    answer = client.post("/api/v1/accounts", json={"name": taken_as, "password": "another one"})
    assert answer.status_code == 409 and answer.json()["code"] == "name_taken"


def test_an_unknown_name_and_a_wrong_password_get_the_same_answer(client: Any) -> None:
    sign_up(client)
    wrong = client.post("/api/v1/sessions", json={"name": "Ana", "password": "not the one"})
    unknown = client.post("/api/v1/sessions", json={"name": "Nobody", "password": "not the one"})
    assert wrong.status_code == unknown.status_code == 401
    assert wrong.json() == unknown.json() == {"code": "bad_credentials",
                                              "message": "No account has that name and password."}


@pytest.mark.parametrize(("name", "password"), [("Al", "long enough"), ("x" * 25, "long enough"),
                                                (" Ana", "long enough"), ("Ana", "short"),
                                                ("Ana", "é" * 129), ("Ana", "x" * 257)])
def test_a_name_or_password_out_of_bounds_is_refused_and_creates_nothing(client: Any, name: str,
                                                                         password: str) -> None:
    answer = client.post("/api/v1/accounts", json={"name": name, "password": password})
    assert answer.status_code == 422 and answer.json()["code"] == "invalid_request"
    assert password not in answer.text
    assert client.post("/api/v1/sessions", json={"name": "Ana", "password": password}).status_code in (401, 422)


def test_a_refresh_token_gets_a_new_access_token_until_the_session_ends(client: Any) -> None:
    ana = sign_up(client)
    fresh = client.post("/api/v1/sessions/refresh", json={"refresh": ana["refresh"]})
    assert fresh.status_code == 200 and fresh.json()["player"] == ana["player"]
    assert client.post("/api/v1/tables", json={"game": "mighty-5"}, headers=as_(fresh.json())).status_code == 201
    assert client.delete("/api/v1/sessions", headers=as_(fresh.json())).status_code == 204
    again = client.post("/api/v1/sessions/refresh", json={"refresh": ana["refresh"]})
    assert again.status_code == 401 and again.json()["code"] == "unauthorized"


def test_a_forged_refresh_token_is_refused(client: Any) -> None:
    ana = sign_up(client)
    player, session, _ = ana["refresh"].split(".")
    forged = client.post("/api/v1/sessions/refresh", json={"refresh": f"{player}.{session}.{'A' * 43}"})
    assert forged.status_code == 401


def test_a_guest_that_signs_up_keeps_its_id_and_its_guest_token_stops_working(client: Any) -> None:
    guest = new_player(client, "Guesty")
    made = sign_up(client, "Keeper", **as_(guest))
    assert made["player"] == guest["player"] and made["name"] == "Keeper"
    assert client.get(f"/api/v1/players/{guest['player']}").json()["name"] == "Keeper"
    refused = client.post("/api/v1/tables", json={"game": "mighty-5"}, headers=as_(guest))
    assert refused.status_code == 401
    again = client.post("/api/v1/accounts", json={"name": "Other", "password": "long enough"},
                        headers=as_(made))
    assert again.status_code == 409 and again.json()["code"] == "already_an_account"


def test_a_guest_has_no_session_to_end(client: Any) -> None:
    guest = new_player(client)
    answer = client.delete("/api/v1/sessions", headers=as_(guest))
    assert answer.status_code == 403 and answer.json()["code"] == "not_an_account"


def test_a_deleted_account_frees_its_name_and_shows_the_anonymous_label(client: Any) -> None:
    ana = sign_up(client)
    assert client.delete("/api/v1/accounts/me", headers=as_(ana)).status_code == 204
    assert client.get(f"/api/v1/players/{ana['player']}").json()["name"] == ANONYMOUS
    assert client.post("/api/v1/tables", json={"game": "mighty-5"}, headers=as_(ana)).status_code == 401
    assert client.post("/api/v1/sessions/refresh", json={"refresh": ana["refresh"]}).status_code == 401
    assert client.post("/api/v1/sessions", json={"name": "Ana", "password": "correct horse"}).status_code == 401
    newcomer = sign_up(client, "ANA", "another password")
    assert newcomer["player"] != ana["player"]


def test_logins_to_one_name_past_the_limit_are_429_with_retry_after() -> None:
    with gateway(secret="unit-secret-accounts", logins_per_name=3) as client:
        sign_up(client)  # a sign-up counts as one
        codes = [client.post("/api/v1/sessions", json={"name": "ana", "password": "x" * 8}).status_code
                 for _ in range(3)]
        assert codes == [401, 401, 429]
        held = client.post("/api/v1/sessions", json={"name": "Ana", "password": "correct horse"})
        assert held.status_code == 429 and held.json()["code"] == "too_many_logins"
        assert int(held.headers["retry-after"]) >= 1


def test_an_account_record_has_no_ttl_and_a_guest_record_keeps_its_own(client: Any) -> None:
    from tests.unit.gateway_helpers import sync_wiring

    guest = new_player(client, "Guesty")
    ana = sign_up(client)
    redis = sync_wiring(client).client
    assert redis.ttl(f"mighty:player:{guest['player']}") > 0
    assert redis.ttl(f"mighty:player:{ana['player']}") == -1
    client.post("/api/v1/tables", json={"game": "mighty-5"}, headers=as_(ana))  # a use renews guests only
    assert redis.ttl(f"mighty:player:{ana['player']}") == -1


def test_names_fold_by_case_and_width_and_need_three_characters() -> None:
    assert fold("ÄNA") == fold("äna") and fold("Ａｎａ") == "ana"
    assert account_name_problem("Ana") is None and account_name_problem("Al") is not None
    assert account_name_problem("A\u202eB C") is not None


def test_redaction_hides_passwords_and_every_kind_of_token() -> None:
    refresh = "p0123456789abcdef.sessionid." + "s" * 43
    access = tokens.issue_session(b"k" * 16, "p0123456789abcdef", "sessionid", 2_000_000_000)
    line = redact(f'{{"password": "hunter2 hunter2", "refresh": "{refresh}"}} {access} password=zqzq&x=1')
    assert "hunter2" not in line and "s" * 43 not in line and access.split(".")[-1] not in line
    assert "zqzq" not in line and "x=1" in line
