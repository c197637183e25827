"""Table chat (docs/api.md, "Table chat"), against ``mighty gateway`` on a real
redis-server with the projection workers, read on WebSockets as clients read it."""
# ruff: noqa: F811 - ``gateway``, the fixture of test_gateway.py, is every test's argument

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

import pytest
from websockets.sync.client import ClientConnection

from services.store.keys import KeySpace
from tests.integration.test_gateway import Gateway, gateway  # noqa: F401 - the fixture

pytestmark = pytest.mark.integration


def _say(gateway: Gateway, table: str, player: dict[str, str] | None, **body: Any) -> Any:
    return gateway.http.post(f"/api/v1/tables/{table}/chat", json=body, headers=gateway.headers(player))


def _chat_frames(ws: ClientConnection, wanted: int, timeout_s: float = 10) -> list[dict[str, Any]]:
    """The chat frames the socket receives until ``wanted`` of them or the time is out."""
    got: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout_s
    while len(got) < wanted and time.monotonic() < deadline:
        try:
            frame = json.loads(ws.recv(timeout=max(0.01, deadline - time.monotonic())))
        except TimeoutError:
            break
        if frame.get("type") == "chat":
            got.append(frame)
    return got


def _open_table(gateway: Gateway, players: list[dict[str, str]]) -> str:
    """A five-seat table with ``players`` seated and the rest open: it waits, no view changes."""
    return gateway.table(players, "mighty-5")


def _first_view(ws: ClientConnection) -> None:
    """The socket's opening view: the gateway subscribes the socket to the table's chat
    before it sends any view, so once it is read every later message reaches the socket."""
    frame = json.loads(ws.recv(timeout=10))
    assert frame["type"] == "view", frame


def test_a_message_reaches_both_seats_and_a_spectator_once_and_nobody_at_another_table(gateway: Gateway) -> None:
    ana, bo, cy = gateway.player("Ana"), gateway.player("Bo"), gateway.player("Cy")
    table = _open_table(gateway, [ana, bo])
    other = _open_table(gateway, [cy])
    sockets = [gateway.stream(table, ana), gateway.stream(table, bo), gateway.stream(table, None),
               gateway.stream(other, cy)]
    try:
        for ws in sockets:
            _first_view(ws)
        posted = _say(gateway, table, ana, text="good luck <b>all</b>")
        assert posted.status_code == 201, posted.text
        said = posted.json()
        for ws in sockets[:3]:
            frames = _chat_frames(ws, 2, timeout_s=3)
            assert frames == [{"type": "chat", "id": said["id"], "player": ana["player"], "name": "Ana",
                               "text": "good luck <b>all</b>", "at": said["at"], "phrase": None}]
        assert _chat_frames(sockets[3], 1, timeout_s=1) == []  # another table's reader hears nothing
        listed = gateway.http.get(f"/api/v1/tables/{table}/chat").json()["messages"]
        assert [m["id"] for m in listed] == [said["id"]]
        assert gateway.http.get(f"/api/v1/tables/{other}/chat").json()["messages"] == []
    finally:
        for ws in sockets:
            ws.close()


def test_a_spectator_may_chat_and_a_stream_resumed_after_a_message_gets_only_the_later_ones(
        gateway: Gateway) -> None:
    ana, watcher = gateway.player("Ana"), gateway.player("Wat")
    table = _open_table(gateway, [ana])
    first = _say(gateway, table, watcher, text="hi from the rail")
    assert first.status_code == 201, first.text
    second = _say(gateway, table, ana, text="welcome")
    assert second.status_code == 201, second.text
    ws = gateway.stream(table, ana)  # a new socket: the latest messages first
    try:
        assert [f["text"] for f in _chat_frames(ws, 2)] == ["hi from the rail", "welcome"]
    finally:
        ws.close()
    token = f"&token={ana['token']}"
    from websockets.sync.client import connect
    resumed = connect(f"ws://127.0.0.1:{gateway.port}/api/v1/tables/{table}/stream?after=0{token}"
                      f"&chat_after={first.json()['id']}", open_timeout=10)
    try:
        assert [f["text"] for f in _chat_frames(resumed, 2, timeout_s=2)] == ["welcome"]
    finally:
        resumed.close()
    after = gateway.http.get(f"/api/v1/tables/{table}/chat", params={"after": first.json()["id"]}).json()
    assert [m["text"] for m in after["messages"]] == ["welcome"]
    bad = gateway.http.get(f"/api/v1/tables/{table}/chat", params={"after": "yesterday"})
    assert bad.status_code == 422 and bad.json()["code"] == "invalid_request"


def test_a_muted_players_messages_do_not_reach_the_one_who_muted_them_and_do_reach_the_others(
        gateway: Gateway) -> None:
    ana, bo, cy = gateway.player("Ana"), gateway.player("Bo"), gateway.player("Cy")
    table = _open_table(gateway, [ana, bo, cy])
    muted = gateway.http.post("/api/v1/mutes", json={"player": ana["player"]}, headers=gateway.headers(bo))
    assert muted.status_code == 204, muted.text
    assert gateway.http.get("/api/v1/mutes", headers=gateway.headers(bo)).json() == {"players": [ana["player"]]}
    bo_ws, cy_ws = gateway.stream(table, bo), gateway.stream(table, cy)
    try:
        _first_view(bo_ws)
        _first_view(cy_ws)
        assert _say(gateway, table, ana, text="you cannot hear me").status_code == 201
        assert _say(gateway, table, cy, text="I can").status_code == 201
        assert [f["text"] for f in _chat_frames(cy_ws, 2)] == ["you cannot hear me", "I can"]
        assert [f["text"] for f in _chat_frames(bo_ws, 2, timeout_s=2)] == ["I can"]
    finally:
        bo_ws.close()
        cy_ws.close()
    def texts(player: dict[str, str] | None) -> list[str]:
        found = gateway.http.get(f"/api/v1/tables/{table}/chat", headers=gateway.headers(player)).json()
        return [m["text"] for m in found["messages"]]

    assert texts(bo) == ["I can"]
    assert texts(cy) == texts(None) == ["you cannot hear me", "I can"]
    unmuted = gateway.http.delete(f"/api/v1/mutes/{ana['player']}", headers=gateway.headers(bo))
    assert unmuted.status_code == 204
    assert texts(bo) == ["you cannot hear me", "I can"]
    assert gateway.http.post("/api/v1/mutes", json={"player": "p-nobody"},
                             headers=gateway.headers(bo)).json()["code"] == "unknown_player"


def test_the_sixth_message_in_ten_seconds_is_refused_with_retry_after_and_a_quick_phrase_still_goes(
        gateway: Gateway) -> None:
    ana = gateway.player("Ana")
    table = _open_table(gateway, [ana])
    for n in range(5):
        assert _say(gateway, table, ana, text=f"message number {['one', 'two', 'three', 'four', 'five'][n]}").status_code == 201
    refused = _say(gateway, table, ana, text="one too many")
    assert refused.status_code == 429, refused.text
    assert refused.json()["code"] == "rate_limited"
    assert 1 <= int(refused.headers["Retry-After"]) <= 10
    phrase = _say(gateway, table, ana, phrase="good_luck")
    assert phrase.status_code == 201, phrase.text
    last = gateway.http.get(f"/api/v1/tables/{table}/chat").json()["messages"][-1]
    assert (last["phrase"], last["text"]) == ("good_luck", "Good luck!")
    assert len(gateway.http.get(f"/api/v1/tables/{table}/chat").json()["messages"]) == 6  # the refused one is not kept


def test_a_message_repeating_one_of_the_last_is_refused_case_and_punctuation_aside(gateway: Gateway) -> None:
    ana = gateway.player("Ana")
    table = _open_table(gateway, [ana])
    assert _say(gateway, table, ana, text="gg").status_code == 201
    again = _say(gateway, table, ana, text=" GG! ")
    assert again.status_code == 422 and again.json()["code"] == "repeated_message"
    assert _say(gateway, table, ana, text="good game").status_code == 201


@pytest.mark.parametrize("body,code", [
    ({"text": ""}, "bad_message"),
    ({"text": "x" * 281}, "bad_message"),
    ({"text": "   "}, "bad_message"),
    ({"text": "ring\u0007"}, "bad_message"),
    ({"text": "line\nbreak"}, "bad_message"),
    ({"text": "abc\u202edcba"}, "bad_message"),
    ({"text": "zero\u200bwidth"}, "bad_message"),
    ({"phrase": "insult"}, "unknown_phrase"),
    ({"text": "hi", "phrase": "hello"}, "invalid_request"),
    ({}, "invalid_request"),
    ({"text": "hi", "seat": 0}, "invalid_request"),
])
def test_a_message_out_of_bounds_is_refused_with_its_code_and_nothing_is_stored(
        gateway: Gateway, body: dict[str, Any], code: str, redis_client: Any) -> None:
    ana = gateway.player("Ana")
    table = _open_table(gateway, [ana])
    refused = _say(gateway, table, ana, **body)
    assert refused.status_code == 422, refused.text
    assert refused.json()["code"] == code
    assert redis_client.exists(KeySpace().table(table).events.removesuffix(":events") + ":chat") == 0


def test_280_characters_go_and_a_message_needs_a_token_and_a_table(gateway: Gateway) -> None:
    ana = gateway.player("Ana")
    table = _open_table(gateway, [ana])
    assert _say(gateway, table, ana, text="é" * 280).status_code == 201
    assert _say(gateway, table, None, text="anonymous").json()["code"] == "unauthorized"
    assert _say(gateway, table, ana, text="nowhere").status_code == 201
    missing = _say(gateway, "t000000000000", ana, text="hello?")
    assert missing.status_code == 404 and missing.json()["code"] == "unknown_table"


def test_an_operator_mutes_a_player_everywhere_with_the_cli_and_unmutes_them(
        gateway: Gateway, redis_server: Any) -> None:
    ana, bo = gateway.player("Ana"), gateway.player("Bo")
    tables = [_open_table(gateway, [ana]), _open_table(gateway, [bo])]
    env = {**os.environ, "REDIS_URL": redis_server.url}

    def cli(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "services.cli", "chat", *args], env=env,
                              capture_output=True, text=True, timeout=60, check=True)
        return done.stdout

    cli("mute", ana["player"])
    assert cli("muted").split() == [ana["player"]]
    for table in tables:
        refused = _say(gateway, table, ana, text="can anyone hear me")
        assert refused.status_code == 403 and refused.json()["code"] == "chat_muted"
        assert gateway.http.get(f"/api/v1/tables/{table}/chat").json()["messages"] == []
    assert _say(gateway, tables[1], bo, text="others still talk").status_code == 201
    cli("unmute", ana["player"])
    assert _say(gateway, tables[0], ana, text="back again").status_code == 201
