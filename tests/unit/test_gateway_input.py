"""The gateway's input rules, one by one (docs/gateway.md, Input): the name rule, the
nesting depth, the token's one spelling, the body's media type, file paths, bot levels
and seat keys. The hostile tier (tests/hostile/test_input.py) drives the same over a
real gateway."""

from __future__ import annotations

import time

import pytest

from services.gateway import tokens
from services.gateway.bodies import MAX_DEPTH, is_json, nesting_depth, too_deep
from services.gateway.names import PLAYER_NAME_MAX, TABLE_NAME_MAX, name_problem
from services.gateway.static import names_a_file
from tests.unit.gateway_helpers import auth, gateway, new_player

SECRET = b"input-secret"

# ---------------------------------------------------------------- names


@pytest.mark.parametrize("name", ["Ana", "김민수", "<script>alert(1)", "[/x]", "[@click=app.quit]x",
                                  "O'Brien & co", "a b", "🂡 ace"])
def test_printable_text_is_a_name_markup_included(name: str) -> None:
    assert name_problem(name, PLAYER_NAME_MAX) is None


@pytest.mark.parametrize("name", ["", " ", "   ", "a\x00b", "a\nb", "tab\there", "\x7f", "a\u202eb", "a\u202ab",
                                  "a\u2066b", "a\u2069b", "a\u200eb", "a\u200fb", "a\u061cb", "a\u200bb", "a\ufeffb",
                                  "a\u00adb", "a\u2028b", "a\ud800b", "a\ue000b", "a\u00a0"])
def test_control_format_and_separator_characters_or_only_spaces_are_no_name(name: str) -> None:
    assert name_problem(name, PLAYER_NAME_MAX) is not None


def test_a_name_is_bounded() -> None:
    assert name_problem("x" * TABLE_NAME_MAX, TABLE_NAME_MAX) is None
    assert name_problem("x" * (TABLE_NAME_MAX + 1), TABLE_NAME_MAX) is not None
    assert name_problem("x" * (PLAYER_NAME_MAX + 1), PLAYER_NAME_MAX) is not None


def test_table_and_player_names_follow_the_same_rule_over_http() -> None:
    with gateway() as client:
        assert client.post("/api/v1/players", json={"name": "a\u202eb"}).status_code == 422
        ana = new_player(client)
        refused = client.post("/api/v1/tables", json={"name": "a\u202eb"}, headers=auth(ana))
        assert refused.status_code == 422 and refused.json()["code"] == "invalid_request"
        default = client.post("/api/v1/tables", json={}, headers=auth(ana))
        assert default.status_code == 201 and default.json()["name"] == default.json()["table"]
        kept = client.post("/api/v1/tables", json={"name": "[/x] <i>"}, headers=auth(ana))
        assert kept.status_code == 201 and kept.json()["name"] == "[/x] <i>"


# ---------------------------------------------------------------- nesting depth


@pytest.mark.parametrize(("data", "depth"), [
    (b"", 0), (b"1", 0), (b"{}", 1), (b"[[]]", 2), (b"[][][]", 1), (b'{"a": [1, {"b": [2]}]}', 4),
    (b'["[[[[", "{{{{"]', 1), (b'["\\"[[[["]', 1), (b'"\\\\"[[', 2), (b'["unterminated [[[[', 1),
])
def test_the_depth_counts_brackets_outside_strings(data: bytes, depth: int) -> None:
    assert nesting_depth(data) == depth


def test_the_depth_stops_counting_past_the_limit() -> None:
    assert nesting_depth(b"[" * 100_000) == MAX_DEPTH + 1
    assert too_deep(b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1))
    assert not too_deep(b"[" * MAX_DEPTH + b"]" * MAX_DEPTH)
    assert not too_deep(b'["' + b"[" * 1000 + b'"]')  # brackets in a string are text


def test_the_depth_scan_reads_a_body_of_quotes_in_one_pass() -> None:
    started = time.perf_counter()
    assert not too_deep(b'"' + b'\\"[' * 5000)  # no closing quote: each byte read once
    assert time.perf_counter() - started < 0.5


def test_deep_json_is_invalid_request_on_every_body() -> None:
    """(A WebSocket frame: tests/hostile/test_input.py, over a real gateway.)"""
    deep = '{"name": ' + "[" * 1000 + "]" * 1000 + "}"
    with gateway() as client:
        ana = new_player(client)
        for path in ("/api/v1/players", "/api/v1/tables", "/api/v1/quickplay", "/api/v1/tables/t1/commands",
                     "/api/v1/tables/t1/join"):
            answer = client.post(path, content=deep, headers={**auth(ana), "Content-Type": "application/json"})
            assert answer.status_code == 422, (path, answer.text)
            assert answer.json()["code"] == "invalid_request"


# ---------------------------------------------------------------- tokens


def test_a_token_is_the_spelling_issue_writes() -> None:
    token = tokens.issue(SECRET, "p0123", 2_000_000_000)
    assert tokens.check(SECRET, token, 1_000_000_000) == "p0123"


def _respelled(token: str) -> list[str]:
    player, expires, signature = token.split(".")
    return [
        f"{player}.0{expires}.{signature}", f"{player}.+{expires}.{signature}", f"{player}.{expires} .{signature}",
        f"{player}.{expires[:-1]}\u0660.{signature}", f"{player}.{expires[:-1]}\u00b2.{signature}",
        f"{player}.{'9' * 5000}.{signature}", f"{player}.{expires}.{signature}=", f"{player}.{expires}.{signature}.",
        f"{player}.{expires}", f"{player}..{signature}", f"p\u00e9.{expires}.{signature}", "x" * 10_000,
        f" {token}", f"{token}\n", f"{player}.{expires}.{signature[:-1]}",
    ]


@pytest.mark.parametrize("index", range(15))
def test_any_other_spelling_is_a_bad_token(index: int) -> None:
    token = tokens.issue(SECRET, "p0123", 2_000_000_000)
    with pytest.raises(tokens.BadToken):
        tokens.check(SECRET, _respelled(token)[index], 1_000_000_000)


def test_odd_tokens_are_unauthorized_in_headers_and_query() -> None:
    with gateway() as client:
        ana = new_player(client)
        token = ana["Authorization"].removeprefix("Bearer ")
        table = client.post("/api/v1/tables", json={}, headers=auth(ana)).json()["table"]
        for odd in _respelled(token):
            try:
                header = f"Bearer {odd}".encode("latin-1")
            except UnicodeEncodeError:
                header = f"Bearer {odd}".encode()
            answer = client.get(f"/api/v1/tables/{table}/view", headers={"Authorization": header})  # type: ignore[dict-item]
            if odd.strip() != token:  # spaces around a header's value are not part of it (RFC 9110, 5.5)
                assert answer.status_code == 401 and answer.json()["code"] == "unauthorized", (odd[:40], answer.text)
            with client.websocket_connect(f"/api/v1/tables/{table}/stream", params={"token": odd}) as socket:
                frame = socket.receive_json()
                assert frame["type"] == "error" and frame["code"] == "unauthorized", frame


# ---------------------------------------------------------------- media type


@pytest.mark.parametrize(("content_type", "json"), [
    ("application/json", True), ("Application/JSON; charset=utf-8", True), (" application/json ;x=y", True),
    ("text/plain", False), ("application/x-www-form-urlencoded", False), ("multipart/form-data", False),
    ("", False), ("application/jsonx", False), ("application/json-patch+json", False),
])
def test_only_application_json_is_json(content_type: str, json: bool) -> None:
    assert is_json(content_type) is json


def test_a_body_of_another_media_type_is_415_and_a_post_without_a_body_needs_none() -> None:
    with gateway() as client:
        for kind in ("text/plain", "application/x-www-form-urlencoded", ""):
            answer = client.post("/api/v1/players", content='{"name": "Csrf"}', headers={"Content-Type": kind})
            assert answer.status_code == 415 and answer.json()["code"] == "unsupported_media_type", kind
        ana, bob = new_player(client), new_player(client, "Bob")
        table = client.post("/api/v1/tables", json={}, headers=auth(ana)).json()["table"]
        assert client.post(f"/api/v1/tables/{table}/join", headers=auth(bob)).status_code == 200
        assert client.post(f"/api/v1/tables/{table}/leave", headers=auth(bob)).status_code == 204


def test_a_body_over_the_limit_is_still_too_large() -> None:
    with gateway() as client:
        answer = client.post("/api/v1/players", content=b'{"name": "' + b"x" * 20_000 + b'"}',
                             headers={"Content-Type": "application/json"})
        assert answer.status_code == 413 and answer.json()["code"] == "too_large"


# ---------------------------------------------------------------- file paths


@pytest.mark.parametrize(("path", "ok"), [
    ("/rules/mighty.md", True), ("/index.html", True), ("/js/api.js", True), ("/", True),
    ("/rules/x\x00.txt", False), ("/rules/a\nb.md", False), ("/a\u202eb", False), ("/rules/../secret", False),
    ("/./x", False), ("/a\\b", False), ("/" + "a" * 300, False), ("/a/" * 400, False),
])
def test_a_path_names_a_file_only_if_a_file_system_could(path: str, ok: bool) -> None:
    assert names_a_file(path) is ok


def test_a_path_that_cannot_name_a_file_is_404() -> None:
    with gateway() as client:
        for path in ("/rules/x%00.txt", "/x%00.js", "/rules/" + "a" * 5000 + ".md", "/rules/%e2%80%ae.md"):
            answer = client.get(path)
            assert answer.status_code == 404 and answer.json()["code"] == "not_found", path
            assert len(answer.json()["message"]) < 400
        assert client.get("/rules/mighty.md").status_code == 200


# ---------------------------------------------------------------- bots and seat keys


@pytest.mark.parametrize("bots", [{"1": "godmode"}, {"1": "Beginner"}, {"01": "beginner"}, {"\u0661": "beginner"},
                                  {"1": "beginner", "01": "beginner"}, {"5": "beginner"}, {"-1": "beginner"},
                                  {"1.0": "beginner"}])
def test_a_bot_level_the_game_does_not_know_or_an_odd_seat_key_creates_nothing(bots: dict[str, str]) -> None:
    with gateway() as client:
        ana = new_player(client)
        answer = client.post("/api/v1/tables", json={"bots": bots}, headers=auth(ana))
        assert answer.status_code == 422 and answer.json()["code"] == "invalid_request", answer.text
        assert client.get("/api/v1/tables").json()["tables"] == []


def test_every_level_the_bots_know_is_taken() -> None:
    with gateway() as client:
        ana = new_player(client)
        answer = client.post("/api/v1/tables", json={"bots": {"1": "random", "2": "beginner", "3": "expert"}},
                             headers=auth(ana))
        assert answer.status_code == 201, answer.text
        assert [s["bot"] for s in answer.json()["seats"][1:4]] == ["random", "beginner", "expert"]
