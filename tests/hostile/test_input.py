"""Input from strangers (issue "Open to strangers", item 4), against the whole service:
names, nesting depth, token syntax, file paths, the body's media type, bot levels and
seat keys, and the ``legal`` entries, each checked before any work and refused with a
clear code, never a 500."""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import redis
from websockets.sync.client import connect

from tests.hostile.conftest import Running

DEEP = 1000  # levels of nesting: Python's recursion limit is 1,000


def _player(service: Running, name: str = "Ana") -> tuple[str, str]:
    made = httpx.post(f"{service.base}/api/v1/players", json={"name": name}, timeout=10)
    assert made.status_code == 201, made.text
    return made.json()["player"], made.json()["token"]


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _odd_bearer(token: str) -> dict[str, bytes]:
    """A header as a client may send it: latin-1 bytes where they can say it, else UTF-8."""
    header = f"Bearer {token}"
    try:
        return {"Authorization": header.encode("latin-1")}
    except UnicodeEncodeError:
        return {"Authorization": header.encode()}


def _tables(service: Running) -> list[dict[str, Any]]:
    listed = httpx.get(f"{service.base}/api/v1/tables", timeout=10)
    assert listed.status_code == 200, listed.text
    tables: list[dict[str, Any]] = listed.json()["tables"]
    return tables


def _refused(answer: httpx.Response, status: int, code: str) -> None:
    assert answer.status_code == status, answer.text
    assert answer.json()["code"] == code, answer.text
    assert answer.json()["message"]


# ---------------------------------------------------------------- names


@pytest.mark.parametrize("name", ["a\x00b", "two\nlines", "\u202eevil", "x\u2066y", "zero\u200bwidth",
                                  "   ", "x" * 41])
def test_a_table_name_with_control_bidi_or_format_characters_or_too_long_is_refused(
        service: Running, name: str) -> None:
    _, token = _player(service)
    before = len(_tables(service))
    made = httpx.post(f"{service.base}/api/v1/tables", json={"name": name, "seat": 0}, headers=_bearer(token),
                      timeout=10)
    _refused(made, 422, "invalid_request")
    assert len(_tables(service)) == before


@pytest.mark.parametrize("name", ["\u202eevil", "a\u200fb", "x\u061cy", "soft\u00adhyphen"])
def test_a_player_name_with_bidi_or_format_characters_is_refused(service: Running, name: str) -> None:
    made = httpx.post(f"{service.base}/api/v1/players", json={"name": name}, timeout=10)
    _refused(made, 422, "invalid_request")


def test_markup_in_a_table_name_is_kept_as_text(service: Running) -> None:
    _, token = _player(service, "[/x]<b>")
    for name in ("<script>alert(1)</script>", "[/x]", "[@click=app.quit]x"):
        made = httpx.post(f"{service.base}/api/v1/tables", json={"name": name, "seat": 0}, headers=_bearer(token),
                          timeout=10)
        assert made.status_code == 201, made.text
        assert made.json()["name"] == name
        assert made.json()["seats"][0]["name"] == "[/x]<b>"


# ---------------------------------------------------------------- nesting depth


def test_json_nested_a_thousand_levels_is_invalid_request_not_a_server_error(service: Running) -> None:
    deep = '{"name": ' + "[" * DEEP + "]" * DEEP + "}"
    for path in ("/api/v1/players", "/api/v1/quickplay", "/api/v1/tables"):
        answer = httpx.post(f"{service.base}{path}", content=deep, headers={"Content-Type": "application/json"},
                            timeout=10)
        _refused(answer, 422, "invalid_request")


def test_a_websocket_frame_nested_a_thousand_levels_is_refused_and_the_socket_goes_on(service: Running) -> None:
    _, token = _player(service)
    table = httpx.post(f"{service.base}/api/v1/tables", json={"seat": 0}, headers=_bearer(token),
                       timeout=10).json()["table"]
    with connect(f"{service.ws}/api/v1/tables/{table}/stream?token={token}", open_timeout=10) as socket:
        socket.send('{"type": "command", "id": "c1", "command": ' + "[" * DEEP + "]" * DEEP + "}")
        frame = json.loads(socket.recv(timeout=10))
        while frame["type"] == "view":  # the table's view, pushed when it is stored
            frame = json.loads(socket.recv(timeout=10))
        assert frame["type"] == "refused" and frame["code"] == "invalid_request", frame
        socket.send('{"type": "ping"}')
        frame = json.loads(socket.recv(timeout=10))
        while frame["type"] == "view":
            frame = json.loads(socket.recv(timeout=10))
        assert frame == {"type": "pong"}


# ---------------------------------------------------------------- tokens


def _odd_tokens(token: str) -> list[str]:
    player, expires, signature = token.split(".")
    return [
        f"{player}.{expires[:-1]}\u0663.{signature}",  # an Arabic-Indic digit
        f"{player}.{expires[:-1]}\u00b2.{signature}",  # a superscript two: isdigit, not int
        f"{player}.{'9' * 5000}.{signature}",  # more digits than int() takes
        f"{player}.0{expires}.{signature}",  # the same expiry, spelled with a leading zero
        f"{player}.{expires}.{signature}=",
    ]


def test_a_token_of_any_other_spelling_is_unauthorized(service: Running) -> None:
    _, token = _player(service)
    assert httpx.post(f"{service.base}/api/v1/tables", json={"seat": 0}, headers=_bearer(token),
                      timeout=10).status_code == 201
    for odd in _odd_tokens(token):
        answer = httpx.post(f"{service.base}/api/v1/tables", json={"seat": 0}, headers=_odd_bearer(odd), timeout=10)
        _refused(answer, 401, "unauthorized")


def test_a_websocket_with_an_odd_token_gets_the_error_frame_and_close_1008(service: Running) -> None:
    _, token = _player(service)
    table = httpx.post(f"{service.base}/api/v1/tables", json={"seat": 0}, headers=_bearer(token),
                       timeout=10).json()["table"]
    for odd in _odd_tokens(token):
        with connect(f"{service.ws}/api/v1/tables/{table}/stream?token={quote(odd)}", open_timeout=10) as socket:
            frame = json.loads(socket.recv(timeout=10))
            assert frame["type"] == "error" and frame["code"] == "unauthorized", frame
            with pytest.raises(Exception):  # noqa: B017 - the close ends the socket
                socket.recv(timeout=10)
            assert socket.close_code == 1008


# ---------------------------------------------------------------- file paths


@pytest.mark.parametrize("path", ["/rules/x%00.txt", "/rules/%01mighty.md", "/x%00.js", "/rules/..%2f..%2fpyproject.toml",
                                  "/..%2fpyproject.toml", "/rules/" + "a" * 5000 + ".md"])
def test_a_path_that_cannot_name_a_file_is_not_found(service: Running, path: str) -> None:
    answer = httpx.get(f"{service.base}{path}", timeout=10)
    _refused(answer, 404, "not_found")


def test_the_rules_and_the_web_client_are_still_served(service: Running) -> None:
    assert httpx.get(f"{service.base}/rules/mighty.md", timeout=10).status_code == 200
    assert httpx.get(f"{service.base}/", timeout=10).status_code == 200


# ---------------------------------------------------------------- media type


def test_a_text_plain_body_creates_nothing(service: Running) -> None:
    answer = httpx.post(f"{service.base}/api/v1/players", content='{"name": "Csrf"}',
                        headers={"Content-Type": "text/plain", "Origin": "https://elsewhere.example"}, timeout=10)
    _refused(answer, 415, "unsupported_media_type")
    _, token = _player(service)
    before = len(_tables(service))
    answer = httpx.post(f"{service.base}/api/v1/tables", content='{"seat": 0}',
                        headers={**_bearer(token), "Content-Type": "text/plain"}, timeout=10)
    _refused(answer, 415, "unsupported_media_type")
    assert len(_tables(service)) == before


def test_json_with_a_charset_and_posts_without_a_body_are_taken(service: Running) -> None:
    made = httpx.post(f"{service.base}/api/v1/players", content='{"name": "Utf"}',
                      headers={"Content-Type": "application/json; charset=utf-8"}, timeout=10)
    assert made.status_code == 201, made.text
    _, owner = _player(service)
    table = httpx.post(f"{service.base}/api/v1/tables", json={"seat": 0}, headers=_bearer(owner),
                       timeout=10).json()["table"]
    _, guest = _player(service)
    joined = httpx.post(f"{service.base}/api/v1/tables/{table}/join", headers=_bearer(guest), timeout=10)
    assert joined.status_code == 200, joined.text
    left = httpx.post(f"{service.base}/api/v1/tables/{table}/leave", headers=_bearer(guest), timeout=10)
    assert left.status_code == 204, left.text


# ---------------------------------------------------------------- bots and seat keys


@pytest.mark.parametrize("bots", [{"1": "godmode"}, {"01": "beginner"}, {"\u0661": "beginner"}, {"1": "beginner", "9": "beginner"},
                                  {"+1": "beginner"}, {" 1": "beginner"}])
def test_a_bot_level_or_seat_key_out_of_the_list_is_refused_and_leaves_no_table(service: Running,
                                                                               bots: dict[str, str]) -> None:
    _, token = _player(service)
    store = redis.Redis.from_url(service.redis.url)
    before = set(store.scan_iter(match="*:t:*:events", count=1000))
    made = httpx.post(f"{service.base}/api/v1/tables", json={"seat": 0, "bots": bots}, headers=_bearer(token),
                      timeout=10)
    _refused(made, 422, "invalid_request")
    assert set(store.scan_iter(match="*:t:*:events", count=1000)) == before  # no table stream begun


# ---------------------------------------------------------------- legal entries


def _view(service: Running, table: str, token: str) -> dict[str, Any]:
    answer = httpx.get(f"{service.base}/api/v1/tables/{table}/view", headers=_bearer(token), timeout=10)
    assert answer.status_code == 200, answer.text
    view: dict[str, Any] = answer.json()
    return view


def _as_written(entry: dict[str, Any]) -> dict[str, Any]:
    """A legal entry as a client sends it: the count form with the first ``count`` of ``from``."""
    if "count" not in entry:
        return entry
    command = {k: v for k, v in entry.items() if k not in ("count", "from")}
    command["cards"] = entry["from"][: entry["count"]]
    return command


def test_the_mighty_3_discard_entry_is_accepted_as_written(service: Running) -> None:
    players = [_player(service, f"P{i}") for i in range(3)]
    made = httpx.post(f"{service.base}/api/v1/tables", json={"game": "mighty-3", "seat": 0, "turn_seconds": 0},
                      headers=_bearer(players[0][1]), timeout=10)
    assert made.status_code == 201, made.text
    table = made.json()["table"]
    for seat, (_, token) in enumerate(players[1:], start=1):
        assert httpx.post(f"{service.base}/api/v1/tables/{table}/join", json={"seat": seat}, headers=_bearer(token),
                          timeout=10).status_code == 200
    bid = False
    deadline = time.monotonic() + 30
    sent = 0
    while time.monotonic() < deadline:
        views = [_view(service, table, token) for _, token in players]
        acting = views[0]["to_act"]
        if views[0]["phase"] == "exchange":
            entries = [e for e in views[acting]["legal"] if e["type"] == "discard"]
            assert entries, views[acting]["legal"]
            for entry in entries:  # each entry is complete: each would be taken as written
                assert "take" in entry, entry
            answer = httpx.post(f"{service.base}/api/v1/tables/{table}/commands",
                                json={"id": "discard", "command": _as_written(entries[0])},
                                headers=_bearer(players[acting][1]), timeout=10)
            assert answer.status_code == 200, (entries[0], answer.text)
            return
        if views[0]["phase"] != "bidding" or acting is None:
            continue  # the deal is on its way
        legal = views[acting]["legal"]
        bids = [e for e in legal if e["type"] == "bid"]
        command = bids[0] if bids and not bid else {"type": "pass"}
        bid = bid or command["type"] == "bid"
        sent += 1
        answer = httpx.post(f"{service.base}/api/v1/tables/{table}/commands",
                            json={"id": f"c{sent}", "command": command}, headers=_bearer(players[acting][1]),
                            timeout=10)
        assert answer.status_code == 200, answer.text
    pytest.fail("the auction did not reach the discard step within 30 s")
