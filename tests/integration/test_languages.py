# ruff: noqa: F811 - the gateway fixture, imported from test_gateway, is each test's argument
"""The reader's language end to end (docs/i18n.md): the gateway over a real redis-server
and the workers renders the same stored view in Korean and in Finnish, a refusal in
Russian keeps its code, the player's setting and a socket's language hold."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.integration.test_gateway import Gateway, _frames, gateway  # noqa: F401 - the fixture

pytestmark = pytest.mark.integration
HANGUL = re.compile(r"[\uac00-\ud7a3]")
CYRILLIC = re.compile(r"[\u0400-\u04ff]")
KANA = re.compile(r"[\u3040-\u30ff]")


def _acting(gateway: Gateway, players: list[dict[str, str]], table: str) -> tuple[int, dict[str, Any]]:
    view = gateway.view(table, players[0], at_least=1)
    while view["to_act"] is None:
        view = gateway.view(table, players[0], at_least=view["version"] + 1)
    return view["to_act"], view


def test_a_view_read_in_korean_and_in_finnish_and_a_refusal_in_russian(gateway: Gateway) -> None:
    players = [gateway.player(n) for n in ("Ari", "Bo", "Cy", "Di", "Ed")]
    table = gateway.table(players, "mighty-5", hands=1)
    seat, _ = _acting(gateway, players, table)
    me = players[seat]
    url = f"/api/v1/tables/{table}/view"

    english = gateway.http.get(url, headers=gateway.headers(me)).json()
    korean = gateway.http.get(url, params={"lang": "ko"}, headers=gateway.headers(me)).json()
    finnish = gateway.http.get(url, headers={**gateway.headers(me), "Accept-Language": "fi-FI,fi;q=0.9"}).json()
    assert english["version"] == korean["version"] == finnish["version"]
    # the same commands, only their labels in the reader's language
    strip = [{k: v for k, v in e.items() if k != "label"} for e in english["legal"]]
    assert strip == [{k: v for k, v in e.items() if k != "label"} for e in korean["legal"]]
    assert "Pass" in [e["label"] for e in english["legal"]]
    assert "패스" in [e["label"] for e in korean["legal"]]
    assert "Passaa" in [e["label"] for e in finnish["legal"]]
    assert any(HANGUL.search(e["label"]) for e in korean["legal"] if e["type"] == "bid")
    assert any("pata" in e["label"] for e in finnish["legal"] if e["type"] == "bid")

    # a command out of turn: refused in Russian with the code English gives
    other = players[(seat + 1) % 5]
    said_en = gateway.command(table, other, {"type": "pass"}, "x1")
    said_ru = gateway.http.post(f"/api/v1/tables/{table}/commands", json={"id": "x2", "command": {"type": "pass"}},
                                headers={**gateway.headers(other), "Accept-Language": "ru"})
    assert said_en.status_code == said_ru.status_code == 422
    assert said_en.json()["code"] == said_ru.json()["code"] == "not_your_turn"
    assert CYRILLIC.search(said_ru.json()["message"]) and not CYRILLIC.search(said_en.json()["message"])


def test_the_players_setting_is_kept_and_read_unless_the_request_names_a_language(gateway: Gateway) -> None:
    players = [gateway.player(n) for n in ("Ari", "Bo", "Cy", "Di", "Ed")]
    table = gateway.table(players, "mighty-5", hands=1)
    seat, _ = _acting(gateway, players, table)
    me = players[seat]
    assert gateway.http.get("/api/v1/players/me", headers=gateway.headers(me)).json()["lang"] is None
    bad = gateway.http.patch("/api/v1/players/me", json={"lang": "xx"}, headers=gateway.headers(me))
    assert bad.status_code == 422 and bad.json()["code"] == "invalid_request"
    set_ = gateway.http.patch("/api/v1/players/me", json={"lang": "ja"}, headers=gateway.headers(me))
    assert set_.status_code == 200 and set_.json()["lang"] == "ja"
    assert gateway.http.get("/api/v1/players/me", headers=gateway.headers(me)).json()["lang"] == "ja"

    url = f"/api/v1/tables/{table}/view"
    japanese = gateway.http.get(url, headers={**gateway.headers(me), "Accept-Language": "fi"}).json()
    assert "パス" in [e["label"] for e in japanese["legal"]]  # the setting beats the header
    italian = gateway.http.get(url, params={"lang": "it"}, headers=gateway.headers(me)).json()
    assert "Passo" in [e["label"] for e in italian["legal"]]  # the query beats the setting
    games = gateway.http.get("/api/v1/games", headers=gateway.headers(me)).json()
    assert games["games"][0]["name"] == "マイティ（5人）"

    # a socket's language: its player's setting; its refusals too
    with gateway.stream(table, me) as ws:
        first = _frames(ws, lambda f: f.get("type") == "view")[-1]
        assert "パス" in [e["label"] for e in first["view"]["legal"]]
        ws.send('{"type": "command", "id": "w1", "command": {"type": "bid", "points": 99, "trump": "S"}}')
        refused = _frames(ws, lambda f: f.get("type") == "refused")[-1]
        assert refused["code"] == "bid_out_of_range" and KANA.search(refused["message"])


def test_the_catalog_route_serves_each_language_with_its_plural_categories(gateway: Gateway) -> None:
    languages = gateway.http.get("/api/v1/i18n").json()["languages"]
    assert [x["lang"] for x in languages] == ["ko", "en", "fi", "ru", "ja", "it"]
    assert languages[0]["name"] == "한국어"
    russian = gateway.http.get("/api/v1/i18n/ru").json()
    assert russian["plural_categories"] == ["few", "many", "one", "other"]
    assert russian["messages"]["mighty.discard_step#few"] == "Сбросить {count} карты"
    missing = gateway.http.get("/api/v1/i18n/xx")
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"
