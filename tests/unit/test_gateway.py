"""The gateway's HTTP routes over fakeredis (docs/api.md): players and tokens, the lobby,
views and commands, every refusal's status and code, the limits, OpenAPI, operations."""

from __future__ import annotations

import random
import time
from typing import Any

import pytest

from services.gateway import tokens
from services.store.base import HASH_EVERY, is_anchor
from services.store.compact import pack, unpack
from tests.stream_entries import as_fields, as_stored
from tests.unit.gateway_helpers import (
    a_legal_command,
    auth,
    full_table,
    gateway,
    new_player,
    sync_wiring,
)


@pytest.fixture
def client() -> Any:
    with gateway(secret="unit-secret", rate_commands=1000) as client:
        yield client


def _to_act(client: Any, table: str, seated: list[dict[str, str]]) -> tuple[dict[str, str], dict[str, Any]]:
    public = client.get(f"/api/v1/tables/{table}/view").json()
    player = seated[public["to_act"]]
    return player, client.get(f"/api/v1/tables/{table}/view", headers=auth(player)).json()


# ---------------------------------------------------------------- players and tokens


def test_a_guest_player_gets_an_id_a_name_and_a_token_and_is_found_by_id(client: Any) -> None:
    made = client.post("/api/v1/players", json={"name": "Ana"})
    assert made.status_code == 201
    body = made.json()
    assert body["name"] == "Ana" and body["player"] and body["token"]
    found = client.get(f"/api/v1/players/{body['player']}").json()
    assert found == {"player": body["player"], "name": "Ana", "hands": 0, "total": 0,
                     "contracts": {"made": 0, "failed": 0}, "bot": None, "ratings": {},
                     "reputation": {"finished": 0, "abandoned": 0}}


@pytest.mark.parametrize("name", ["", "x" * 25, "tab\there", "   "])
def test_a_name_that_is_empty_too_long_or_not_printable_is_refused(client: Any, name: str) -> None:
    answer = client.post("/api/v1/players", json={"name": name})
    assert answer.status_code == 422 and answer.json()["code"] == "invalid_request"


def test_an_unknown_player_is_404(client: Any) -> None:
    answer = client.get("/api/v1/players/nobody")
    assert answer.status_code == 404 and answer.json()["code"] == "unknown_player"


def test_a_missing_forged_or_expired_token_is_401_and_creates_nothing(client: Any) -> None:
    ana = new_player(client)
    body = {"game": "mighty-5", "seat": 0}
    forged = tokens.issue(b"another-secret", ana["player"], int(time.time()) + 60)
    expired = tokens.issue(b"unit-secret", ana["player"], int(time.time()) - 1)
    for headers in ({}, {"Authorization": f"Bearer {forged}"}, {"Authorization": f"Bearer {expired}"},
                    {"Authorization": "Basic abc"}, {"Authorization": "Bearer not-a-token"}):
        answer = client.post("/api/v1/tables", json=body, headers=headers)
        assert answer.status_code == 401, headers
        assert answer.json()["code"] == "unauthorized" and answer.json()["message"]
    assert client.get("/api/v1/tables").json() == {"tables": []}


def test_a_token_is_checked_by_its_signature_and_expiry() -> None:
    token = tokens.issue(b"k", "p1", 100)
    assert tokens.check(b"k", token, 99.0) == "p1"
    for bad, now in ((token, 100.0), (token.replace("p1", "p2", 1), 0.0), (token[:-2], 0.0), ("x", 0.0)):
        with pytest.raises(tokens.BadToken):
            tokens.check(b"k", bad, now)


# ---------------------------------------------------------------- lobby


def test_creating_a_table_seats_the_caller_and_the_bots_and_lists_it(client: Any) -> None:
    ana = new_player(client)
    made = client.post("/api/v1/tables", headers=auth(ana), json={
        "game": "mighty-5", "name": "Evening", "hands": 3, "turn_seconds": 30, "seat": 2,
        "bots": {"0": "beginner", "4": "beginner"}})
    assert made.status_code == 201, made.text
    table = made.json()
    assert table["status"] == "open" and table["game"] == "mighty-5" and table["name"] == "Evening"
    assert table["hands"] == 3 and table["turn_seconds"] == 30 and table["hands_played"] == 0
    assert table["created"].endswith("Z")
    seats = {s["seat"]: s for s in table["seats"]}
    assert seats[2]["player"] == ana["player"] and seats[2]["name"] == "Ana" and seats[2]["bot"] is None
    assert seats[0]["bot"] == "beginner" and seats[4]["bot"] == "beginner" and seats[0]["player"]
    assert seats[1]["player"] is None and seats[1]["name"] is None and seats[1]["bot"] is None
    assert client.get(f"/api/v1/tables/{table['table']}").json()["seats"] == table["seats"]


def test_a_table_starts_by_itself_when_every_seat_is_taken_and_deals(client: Any) -> None:
    table, seated = full_table(client)
    got = client.get(f"/api/v1/tables/{table}").json()
    assert got["status"] == "playing"
    view = client.get(f"/api/v1/tables/{table}/view", headers=auth(seated[1])).json()
    assert view["seat"] == 1 and view["phase"] == "bidding" and len(view["hand"]) == 10
    assert view["version"] > 0 and view["to_act"] is not None


def test_join_without_a_seat_takes_the_first_free_one_and_a_taken_seat_is_409(client: Any) -> None:
    ana, bo, cy = (new_player(client, n) for n in ("Ana", "Bo", "Cy"))
    table = client.post("/api/v1/tables", json={"seat": 0}, headers=auth(ana)).json()["table"]
    assert client.post(f"/api/v1/tables/{table}/join", headers=auth(bo)).json() == {"seat": 1}
    taken = client.post(f"/api/v1/tables/{table}/join", json={"seat": 1}, headers=auth(cy))
    assert taken.status_code == 409 and taken.json()["code"] == "seat_taken"


def test_a_full_or_started_table_refuses_a_newcomer_with_409(client: Any) -> None:
    table, _ = full_table(client)
    late = new_player(client, "Late")
    answer = client.post(f"/api/v1/tables/{table}/join", headers=auth(late))
    assert answer.status_code == 409 and answer.json()["code"] == "table_started"


def test_leaving_before_the_start_frees_the_seat(client: Any) -> None:
    ana, bo = new_player(client, "Ana"), new_player(client, "Bo")
    table = client.post("/api/v1/tables", json={"seat": 0}, headers=auth(ana)).json()["table"]
    client.post(f"/api/v1/tables/{table}/join", json={"seat": 3}, headers=auth(bo))
    assert client.post(f"/api/v1/tables/{table}/leave", headers=auth(bo)).status_code == 204
    seats = client.get(f"/api/v1/tables/{table}").json()["seats"]
    assert seats[3]["player"] is None


def test_leaving_after_the_start_marks_the_seat_away_until_the_player_joins_again(client: Any) -> None:
    table, seated = full_table(client)
    assert client.post(f"/api/v1/tables/{table}/leave", headers=auth(seated[2])).status_code == 204
    seats = client.get(f"/api/v1/tables/{table}").json()["seats"]
    assert seats[2]["away"] is True and seats[2]["player"] == seated[2]["player"]
    assert client.post(f"/api/v1/tables/{table}/join", headers=auth(seated[2])).json() == {"seat": 2}
    assert client.get(f"/api/v1/tables/{table}").json()["seats"][2]["away"] is False


def test_the_lobby_refuses_a_status_it_does_not_know(client: Any) -> None:
    # listing itself reads the directory projection: tests/integration/test_gateway.py
    answer = client.get("/api/v1/tables?status=nonsense")
    assert answer.status_code == 422 and answer.json()["code"] == "invalid_request"


def test_an_unknown_table_is_404_on_every_route(client: Any) -> None:
    ana = new_player(client)
    for method, path in (("get", "/api/v1/tables/nope"), ("get", "/api/v1/tables/nope/view"),
                         ("post", "/api/v1/tables/nope/join"), ("post", "/api/v1/tables/nope/leave"),
                         ("get", "/api/v1/tables/nope/hands"), ("get", "/api/v1/tables/nope/verify"),
                         ("get", "/api/v1/tables/nope/ledger"), ("get", "/api/v1/tables/bad%20id")):
        answer = getattr(client, method)(path, headers=auth(ana))
        assert answer.status_code == 404 and answer.json()["code"] == "unknown_table", (path, answer.text)
    command = client.post("/api/v1/tables/nope/commands", json={"id": "c1", "command": {"type": "pass"}},
                          headers=auth(ana))
    assert command.status_code == 404 and command.json()["code"] == "unknown_table"


def test_an_unknown_game_or_bad_bots_are_422(client: Any) -> None:
    ana = new_player(client)
    for body in ({"game": "chess"}, {"bots": {"9": "beginner"}}, {"bots": {"1": "Not A Level!"}},
                 {"hands": -1}, {"options": {"no_such_option": 1}}, {"surprise": 1}):
        answer = client.post("/api/v1/tables", json=body, headers=auth(ana))
        assert answer.status_code == 422, (body, answer.text)
        assert answer.json()["code"] == "invalid_request"


# ---------------------------------------------------------------- commands


def test_a_legal_command_answers_the_new_version_and_the_same_id_again_changes_nothing(client: Any) -> None:
    table, seated = full_table(client)
    player, view = _to_act(client, table, seated)
    command = a_legal_command(view, random.Random(1))
    first = client.post(f"/api/v1/tables/{table}/commands", json={"id": "c-1", "command": command},
                        headers=auth(player))
    assert first.status_code == 200 and first.json()["version"] > view["version"]
    again = client.post(f"/api/v1/tables/{table}/commands", json={"id": "c-1", "command": command},
                        headers=auth(player))
    assert again.json() == first.json()
    after = client.get(f"/api/v1/tables/{table}/view", headers=auth(player)).json()
    assert after["version"] == first.json()["version"]


def test_a_refused_command_is_422_with_the_rules_code_and_changes_nothing(client: Any) -> None:
    table, seated = full_table(client)
    acting, view = _to_act(client, table, seated)
    other = next(p for p in seated if p is not acting)
    before = client.get(f"/api/v1/tables/{table}/view").json()
    events = client.get(f"/api/v1/tables/{table}/verify").json()["events"]
    refused = client.post(f"/api/v1/tables/{table}/commands",
                          json={"id": "x1", "command": {"type": "pass"}}, headers=auth(other))
    assert refused.status_code == 422 and refused.json()["code"] == "not_your_turn"
    malformed = client.post(f"/api/v1/tables/{table}/commands",
                            json={"id": "x2", "command": {"type": "teleport"}}, headers=auth(acting))
    assert malformed.status_code == 422 and malformed.json()["code"] == "malformed_command"
    table_cmd = client.post(f"/api/v1/tables/{table}/commands",
                            json={"id": "x3", "command": {"type": "close"}}, headers=auth(acting))
    assert table_cmd.status_code == 422 and table_cmd.json()["code"] == "malformed_command"
    bad_id = client.post(f"/api/v1/tables/{table}/commands",
                         json={"id": "has space", "command": {"type": "pass"}}, headers=auth(acting))
    assert bad_id.status_code == 422 and bad_id.json()["code"] == "invalid_request"
    assert client.get(f"/api/v1/tables/{table}/view").json() == before
    assert client.get(f"/api/v1/tables/{table}/verify").json()["events"] == events


def test_a_command_for_a_seat_not_the_callers_is_403_and_changes_nothing(client: Any) -> None:
    table, seated = full_table(client)
    acting, view = _to_act(client, table, seated)
    before = client.get(f"/api/v1/tables/{table}/view").json()
    command = {**a_legal_command(view, random.Random(2)), "seat": (view["seat"] + 1) % 5}
    answer = client.post(f"/api/v1/tables/{table}/commands", json={"id": "s1", "command": command},
                         headers=auth(acting))
    assert answer.status_code == 403 and answer.json()["code"] == "not_your_seat"
    stranger = new_player(client, "Stranger")
    answer = client.post(f"/api/v1/tables/{table}/commands", json={"id": "s2", "command": {"type": "pass"}},
                         headers=auth(stranger))
    assert answer.status_code == 403 and answer.json()["code"] == "not_your_seat"
    assert client.get(f"/api/v1/tables/{table}/view").json() == before


def test_a_spectator_view_holds_no_hand_and_a_seat_view_only_its_own(client: Any) -> None:
    table, seated = full_table(client)
    spectator = client.get(f"/api/v1/tables/{table}/view").json()
    assert spectator["seat"] is None and spectator["hand"] is None and spectator["legal"] == []
    hands = [client.get(f"/api/v1/tables/{table}/view", headers=auth(p)).json()["hand"] for p in seated]
    assert all(len(h) == 10 for h in hands)
    assert len({c for h in hands for c in h}) == 50  # five different hands, each its own
    text = client.get(f"/api/v1/tables/{table}/view").text
    assert not any(f'"{card}"' in text for hand in hands for card in hand)


def test_more_commands_than_the_limit_are_429_with_retry_after() -> None:
    with gateway(secret="s", rate_commands=3, rate_window_s=60) as client:
        table, seated = full_table(client)
        codes = []
        for i in range(5):
            answer = client.post(f"/api/v1/tables/{table}/commands",
                                 json={"id": f"r{i}", "command": {"type": "pass"}}, headers=auth(seated[0]))
            codes.append(answer.status_code)
            if answer.status_code == 429:
                assert answer.json()["code"] == "rate_limited"
                assert int(answer.headers["retry-after"]) >= 1
        assert codes[3:] == [429, 429] and 429 not in codes[:3]


def test_a_body_over_16_kib_is_413(client: Any) -> None:
    ana = new_player(client)
    answer = client.post("/api/v1/tables", content=b'{"name":"' + b"x" * 17000 + b'"}',
                         headers={**auth(ana), "content-type": "application/json"})
    assert answer.status_code == 413 and answer.json()["code"] == "too_large"


def test_a_hand_in_progress_is_403_and_an_unknown_hand_404(client: Any) -> None:
    table, _ = full_table(client)
    assert client.get(f"/api/v1/tables/{table}/hands").json() == {
        "hands": [{"hand": 1, "status": "playing", "scores": None}]}
    secret = client.get(f"/api/v1/tables/{table}/hands/1")
    assert secret.status_code == 403 and secret.json()["code"] == "hand_in_progress"
    replay = client.get(f"/api/v1/tables/{table}/hands/1/replay?as=audit")
    assert replay.status_code == 403 and replay.json()["code"] == "hand_in_progress"
    missing = client.get(f"/api/v1/tables/{table}/hands/7")
    assert missing.status_code == 404 and missing.json()["code"] == "unknown_hand"
    assert client.get(f"/api/v1/tables/{table}/verify").json()["ok"] is True


def test_a_one_hand_match_closes_itself_after_its_hand_and_its_hand_file_replays(client: Any) -> None:
    table, seated = full_table(client, hands=1)
    rng = random.Random(3)
    for step in range(400):
        public = client.get(f"/api/v1/tables/{table}/view").json()
        if public["status"] == "closed":
            break
        player, view = _to_act(client, table, seated)
        answer = client.post(f"/api/v1/tables/{table}/commands",
                             json={"id": f"m{step}", "command": a_legal_command(view, rng)}, headers=auth(player))
        assert answer.status_code == 200, answer.text
    got = client.get(f"/api/v1/tables/{table}").json()
    assert got["status"] == "finished" and got["reason"] == "match_over" and got["hands_played"] == 1
    hands = client.get(f"/api/v1/tables/{table}/hands").json()["hands"]
    assert [h["status"] for h in hands] == ["finished"] and sum(hands[0]["scores"]) == 0
    document = client.get(f"/api/v1/tables/{table}/hands/1").json()
    assert document["format"] == "mighty-hand/1"
    for reader in ("0", "spectator", "audit"):
        steps = client.get(f"/api/v1/tables/{table}/hands/1/replay?as={reader}").json()["steps"]
        assert steps[0]["type"] == "deal" and len(steps) == len(document["commands"]) + 1
    assert client.get(f"/api/v1/tables/{table}/verify").json() == {
        "ok": True, "events": client.get(f"/api/v1/tables/{table}/verify").json()["events"],
        "problem": None, "hands": 1, "version": None}
    closed = client.post(f"/api/v1/tables/{table}/commands", json={"id": "late", "command": {"type": "pass"}},
                         headers=auth(seated[0]))
    assert closed.status_code == 409 and closed.json()["code"] == "table_closed"
    rematch = client.post(f"/api/v1/tables/{table}/rematch", headers=auth(seated[0])).json()
    again = client.post(f"/api/v1/tables/{table}/rematch", headers=auth(seated[1])).json()
    assert rematch["table"] == again["table"] != table and rematch["game"] == "mighty-5"
    assert again["seats"][0]["player"] == seated[0]["player"] and again["seats"][1]["player"] == seated[1]["player"]


def _play_until_closed(client: Any, table: str, seated: list[dict[str, str]], seed: int) -> list[dict[str, Any]]:
    """Random legal commands until the table closes; every public view seen, in order."""
    rng = random.Random(seed)
    seen = []
    for step in range(2000):
        public = client.get(f"/api/v1/tables/{table}/view").json()
        seen.append(public)
        if public["status"] == "closed":
            return seen
        player, view = _to_act(client, table, seated)
        answer = client.post(f"/api/v1/tables/{table}/commands",
                             json={"id": f"p{step}", "command": a_legal_command(view, rng)}, headers=auth(player))
        assert answer.status_code == 200, answer.text
    raise AssertionError("the match did not end")


def test_verify_names_an_edit_after_the_last_stored_hash_by_the_tables_head(client: Any) -> None:
    """Only every 16th entry stores its hash (docs/store.md, "The stored entry"): an edit of
    an entry after the last one that does, which the rules cannot see (the same event in
    other bytes), is caught by the table's head, as ``mighty verify`` catches it."""
    table, seated = full_table(client, hands=1)
    _play_until_closed(client, table, seated, seed=5)
    assert client.get(f"/api/v1/tables/{table}/verify").json()["ok"] is True  # and its checkpoint stored
    wiring = sync_wiring(client)
    key = wiring.space.table(table).events
    entries = as_fields(wiring.client.xrange(key))  # six fields each (tests/stream_entries.py)
    last = len(entries)
    assert not is_anchor(last), "the drill needs entries after the last stored hash"
    edited = {**entries[-1][1], b"e": pack(unpack(entries[-1][1][b"e"])[:-1] + b" }")}
    wiring.client.delete(key)
    for entry_id, fields in as_stored([*entries[:-1], (entries[-1][0], edited)]):
        wiring.client.xadd(key, fields, id=entry_id)
    verified = client.get(f"/api/v1/tables/{table}/verify").json()
    assert verified["ok"] is False and verified["version"] == last, verified
    since = last - last % HASH_EVERY + 1
    assert f"meta head hash is not the stream's last hash: one of events {since}–{last}" in verified["problem"]


def test_verify_names_an_unreadable_record_by_its_version_as_mighty_verify_does(client: Any) -> None:
    """A record with a flag this release does not know (tampered with, or a later
    release's) is a finding at its version, not a failed request."""
    table, seated = full_table(client, hands=1)
    _play_until_closed(client, table, seated, seed=5)
    wiring = sync_wiring(client)
    key = wiring.space.table(table).events
    entries = wiring.client.xrange(key)
    wiring.client.delete(key)
    for entry_id, fields in entries:
        wiring.client.xadd(key, {b"r": b"\x08junk"} if entry_id == b"0-20" else fields, id=entry_id)
    answer = client.get(f"/api/v1/tables/{table}/verify")
    assert answer.status_code == 200, answer.text
    verified = answer.json()
    assert verified["ok"] is False and verified["version"] == 20, verified
    assert "not a record this release reads" in verified["problem"]


def _run_views_worker(client: Any) -> None:
    worker = sync_wiring(client).worker("views", linger_ms=0, block_ms=1)
    while worker.step():
        pass


def test_the_view_holds_the_games_view_at_the_top_level_with_hands_numbered_from_1(client: Any) -> None:
    table, seated = full_table(client)
    mine = client.get(f"/api/v1/tables/{table}/view", headers=auth(seated[0])).json()
    public = client.get(f"/api/v1/tables/{table}/view").json()
    for view in (mine, public):
        assert "state" not in view
        assert view["hand_no"] == 1 and view["phase"] == "bidding"  # the first hand, as a person counts
        assert len(view["hand_sizes"]) == 5 and view["auction"] == []  # the game's own fields
    assert mine["viewer"] == 0 and mine["seat"] == 0 and len(mine["hand"]) == 10
    assert all("seat" not in command for command in mine["legal"])
    assert public["viewer"] is None and public["hand"] is None and public["legal"] == []


def test_a_finished_matchs_seat_view_still_shows_its_last_hand_and_nobody_acts(client: Any) -> None:
    table, seated = full_table(client, hands=1)
    _play_until_closed(client, table, seated, seed=5)
    _run_views_worker(client)  # a closed table's seat views are a last word: not kept
    readers = sync_wiring(client).readers
    assert readers.view(table, "0") is None and readers.view(table, "spectator") is not None
    final = client.get(f"/api/v1/tables/{table}/view", headers=auth(seated[0])).json()
    hands = client.get(f"/api/v1/tables/{table}/hands").json()["hands"]
    assert final["status"] == "closed" and final["phase"] == "finished" and final["hand_no"] == 1
    assert final["scores"] == hands[-1]["scores"] and final["to_act"] is None and final["legal"] == []
    assert final["seat"] == 0 and final["hand"] == []  # every card was played


def test_the_replay_of_an_ended_hand_reveals_its_deal_and_each_readers_steps(client: Any) -> None:
    from domain.table import deal_commitment

    table, seated = full_table(client, hands=1)
    seen = _play_until_closed(client, table, seated, seed=9)
    commitment = next(v["commitment"] for v in seen if v["commitment"])  # public before the bidding
    document = client.get(f"/api/v1/tables/{table}/hands/1").json()
    replay = client.get(f"/api/v1/tables/{table}/hands/1/replay?as=spectator").json()
    deal = replay["deal"]
    assert deal["commitment"] == commitment == deal_commitment(tuple(deal["order"]), deal["salt"])
    dealt = [c for hand in document["hands"] for c in hand] + document["kitty"]
    assert sorted(deal["order"]) == sorted(dealt)
    hands = client.get(f"/api/v1/tables/{table}/hands").json()["hands"]
    steps = {reader: client.get(f"/api/v1/tables/{table}/hands/1/replay?as={reader}").json()["steps"]
             for reader in ("0", "spectator", "audit")}
    assert all(step["view"]["hand"] is None for step in steps["spectator"])
    mine = set(document["hands"][0]) | set(document["kitty"])  # seat 0 may declare and take the kitty
    assert all(set(step["view"]["hand"]) <= mine for step in steps["0"])
    assert steps["audit"][-1]["view"]["dealt"] == document["hands"]
    for reader, of_reader in steps.items():
        assert [s["index"] for s in of_reader] == [None, *range(len(document["commands"]))], reader
        assert of_reader[-1]["view"]["scores"] == hands[0]["scores"], reader


def test_a_mitigati_table_lists_replays_and_exports_its_hands_like_any_game(client: Any) -> None:
    table, seated = full_table(client, game="mitigati", players=3, hands=1)
    _play_until_closed(client, table, seated, seed=2)
    hands = client.get(f"/api/v1/tables/{table}/hands").json()["hands"]
    assert len(hands) == 1 and hands[0]["status"] in ("finished", "abandoned")
    assert len(hands[0]["scores"]) == 3  # a deal bargained away pays too (docs/rules/mitigati.md, "Bargaining")
    document = client.get(f"/api/v1/tables/{table}/hands/1").json()
    assert document["rules"] == "mitigati"
    replay = client.get(f"/api/v1/tables/{table}/hands/1/replay?as=audit").json()
    assert len(replay["steps"]) == len(document["commands"]) + 1 and replay["deal"]["salt"]


# ---------------------------------------------------------------- operations and schema


def test_health_readiness_and_metrics_answer(client: Any) -> None:
    assert client.get("/healthz").status_code == 200
    ready = client.get("/readyz")
    assert ready.status_code == 200 and ready.json()["ok"] is True
    table, seated = full_table(client)
    client.post(f"/api/v1/tables/{table}/commands", json={"id": "z", "command": {"type": "pass"}},
                headers=auth(seated[0]))
    text = client.get("/metrics").text
    for name in ("mighty_commands_total", "mighty_refusals_total", "mighty_command_seconds_bucket",
                 "mighty_projection_lag_seconds", "mighty_open_sockets", "mighty_dead_letters"):
        assert name in text, name


def test_metrics_count_each_kinds_dead_letters_from_the_streams_the_workers_write(client: Any) -> None:
    wiring = sync_wiring(client)
    space = wiring.space
    table, _ = full_table(client)
    # an event of a type no release ever wrote, for a real table, straight into its feed
    wiring.client.xadd(space.feed(space.partition_of(table)),
                       {"t": table, "v": 9999, "e": b'{"type":"no_such_event","v":1}', "h": "0" * 64})
    worker = wiring.worker("ledger", linger_ms=0, block_ms=1)
    while worker.step():
        pass
    assert wiring.projection_store("ledger").dead_count(range(space.partitions))[space.partition_of(table)] == 1
    text = client.get("/metrics").text
    assert 'mighty_dead_letters{kind="ledger"} 1.0' in text
    assert 'mighty_dead_letters{kind="views"} 0.0' in text and 'mighty_dead_letters{kind="directory"} 0.0' in text


def test_a_kind_set_back_behind_a_feed_trimmed_empty_shows_its_lag(client: Any) -> None:
    """Every kind applied the whole feed: the trim leaves it empty (no node keeps its
    memory), and the lag is nil. A kind set back behind it (its checkpoint lost with a
    restart: the views are kept off the AOF) is behind by what the feed was last given,
    though the feed holds none of it any more."""
    import re

    from projections import KINDS
    from services.projection.worker import behind

    wiring = sync_wiring(client)
    space = wiring.space
    table, _ = full_table(client)
    partition = space.partition_of(table)
    for kind in KINDS:
        worker = wiring.worker(kind, linger_ms=0, block_ms=1)
        while worker.step():
            pass
    views = wiring.projection_store("views")
    views.trim([partition], KINDS)
    assert wiring.client.xlen(space.feed(partition)) == 0, "every kind passed every entry: none is kept"

    def lag() -> float:
        found = re.search(r'mighty_projection_lag_seconds\{kind="views"\} (\S+)', client.get("/metrics").text)
        assert found is not None
        return float(found.group(1))

    assert lag() == 0.0
    wiring.client.hset(views.keys.checkpoint(partition), mapping={"id": "0-1", "n": 1})  # as it stood then
    time.sleep(0.05)
    assert lag() >= 0.05, "the feed is empty, yet the kind has not applied what it was given"
    entries, ms = behind(views, {partition: views.checkpoint(partition)})[partition]
    assert entries > 0 and ms >= 50, "mighty projections lag says so too"


def test_the_openapi_document_describes_every_route_of_the_api(client: Any) -> None:
    document = client.get("/schema/openapi.json").json()
    assert document["openapi"].startswith("3.1")
    paths = document["paths"]
    for path in ("/api/v1/players", "/api/v1/players/{player}", "/api/v1/tables", "/api/v1/tables/{table}",
                 "/api/v1/tables/{table}/join", "/api/v1/tables/{table}/leave", "/api/v1/quickplay",
                 "/api/v1/tables/{table}/rematch", "/api/v1/tables/{table}/view",
                 "/api/v1/tables/{table}/commands", "/api/v1/tables/{table}/hands",
                 "/api/v1/tables/{table}/hands/{n}", "/api/v1/tables/{table}/hands/{n}/replay",
                 "/api/v1/tables/{table}/verify", "/api/v1/tables/{table}/ledger", "/healthz", "/readyz", "/metrics"):
        assert path in paths, path
    schemas = document["components"]["schemas"]
    assert {"Table", "View", "PlayerCreated", "CommandRequest"} <= {k.rsplit(".", 1)[-1] for k in schemas}
    page = client.get("/schema")
    assert page.status_code == 200 and "/api/v1/tables" in page.text


def test_the_store_unreachable_is_503_unavailable() -> None:
    from litestar.testing import TestClient

    from services.bootstrap import bootstrap_gateway
    from services.gateway.app import create_app
    from services.settings import Settings

    settings = Settings(redis_url="redis://127.0.0.1:1/0", partitions=4, secret="s" * 16)
    backend = bootstrap_gateway(settings)
    backend.aio.connection_pool.connection_kwargs["socket_connect_timeout"] = 0.2
    with TestClient(create_app(settings, backend)) as client:
        answer = client.post("/api/v1/players", json={"name": "Ana"})
        assert answer.status_code == 503 and answer.json()["code"] == "unavailable"
        assert client.get("/readyz").status_code == 503
        assert client.get("/healthz").status_code == 200


def test_each_request_and_each_command_is_one_debug_log_line(client: Any) -> None:
    """Routine lines (a request answered, a command played or refused by the rules) are
    at debug: a line per request at info was most of a busy gateway's log."""
    import structlog

    table, seated = full_table(client)
    with structlog.testing.capture_logs() as logs:
        client.post(f"/api/v1/tables/{table}/commands", json={"id": "l1", "command": {"type": "pass"}},
                    headers=auth(seated[1]))
    commands = [e for e in logs if e["event"] == "player_command"]
    requests = [e for e in logs if e["event"] == "request"]
    assert len(commands) == 1 and len(requests) == 1
    assert commands[0]["table"] == table and commands[0]["seat"] == 1 and commands[0]["command"] == "pass"
    assert commands[0]["outcome"] in ("ok", "refused:not_your_turn") and commands[0]["latency_ms"] >= 0
    assert requests[0]["method"] == "POST" and requests[0]["player"] == seated[1]["player"]
    assert requests[0]["status"] in (200, 422) and "latency_ms" in requests[0]
    assert commands[0]["log_level"] == "debug" and requests[0]["log_level"] == "debug"


def test_a_command_held_back_by_the_rate_limit_is_a_line_at_info() -> None:
    import structlog

    with gateway(rate_commands=1, rate_window_s=60) as limited:
        table, seated = full_table(limited)
        with structlog.testing.capture_logs() as logs:
            for n in range(2):
                limited.post(f"/api/v1/tables/{table}/commands", headers=auth(seated[1]),
                             json={"id": f"r{n}", "command": {"type": "pass"}})
    limited_lines = [e for e in logs if e.get("outcome") == "refused:rate_limited"]
    assert [e["log_level"] for e in limited_lines] == ["info"]
    assert [e["log_level"] for e in logs if e["event"] == "request" and e["status"] == 429] == ["info"]


def test_a_command_retried_after_a_gateway_died_before_the_deal_deals_the_next_hand(client: Any) -> None:
    """A gateway that appended a hand's last command and died (or lost Redis) before its
    deal: the client's retry of that command, the same id, is a duplicate, and the deal it
    left undone is taken then; otherwise nothing would ever deal that table."""
    from domain.registry import game_of
    from services.commands.tables import submission_from_wire

    table, seated = full_table(client, hands=2)
    handler = sync_wiring(client).handler
    rng = random.Random(5)
    for step in range(400):
        player, view = _to_act(client, table, seated)
        command = a_legal_command(view, rng)
        state, _ = handler.state_of(table)
        submission = submission_from_wire({**command, "seat": view["seat"]}, player["player"], game_of(state.rules).name)
        # what the gateway appends for the API's id (services/app/commands.py, play); no steps after it
        handler.handle(table, submission, command_id=f"{player['player']}:d{step}")
        if handler.state_of(table)[0].awaiting_deal:
            break
    else:
        raise AssertionError("the hand did not end")
    retried = client.post(f"/api/v1/tables/{table}/commands", json={"id": f"d{step}", "command": command},
                          headers=auth(player))
    assert retried.status_code == 200, retried.text
    after, _ = handler.state_of(table)
    assert not after.awaiting_deal and after.hand_no == 2 and after.hands_scored == 1


def test_a_join_retried_after_a_gateway_died_before_the_start_starts_the_full_table(client: Any) -> None:
    from domain.table import JoinSeat, Submission

    seated = [new_player(client, f"J{i}") for i in range(5)]
    made = client.post("/api/v1/tables", json={"game": "mighty-5", "seat": 0}, headers=auth(seated[0]))
    table = made.json()["table"]
    handler = sync_wiring(client).handler
    for seat, player in enumerate(seated[1:], start=1):  # the joins appended, the start not taken
        handler.handle(table, Submission(JoinSeat(seat=seat), player["player"]), command_id=f"join-{seat}")
    assert handler.state_of(table)[0].status == "open"
    again = client.post(f"/api/v1/tables/{table}/join", json={"seat": 4}, headers=auth(seated[4]))
    assert again.status_code == 200 and again.json() == {"seat": 4}
    state, _ = handler.state_of(table)
    assert state.status == "playing" and state.hand_no == 1 and not state.awaiting_deal  # started and dealt


class _Stall:
    """Makes the backend's table reads and appends hang, as on a Redis that was stopped
    (SIGSTOP)."""

    def __init__(self, client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        import asyncio

        import services.gateway.deadline as app

        monkeypatch.setattr(app, "STORE_DEADLINE_S", 0.2, raising=False)
        self.on = False
        backend = client.app.state.backend
        real_state, real_submit = backend.state, backend.submit

        async def state(table_id: str) -> Any:
            if self.on:
                await asyncio.Event().wait()  # never answers
            return await real_state(table_id)

        async def submit(*args: Any, **kwargs: Any) -> Any:
            # a command at a playing table needs no read (its seat is in the cached
            # state): its append is what waits on the stalled store
            if self.on:
                await asyncio.Event().wait()
            return await real_submit(*args, **kwargs)

        monkeypatch.setattr(backend, "state", state)
        monkeypatch.setattr(backend, "submit", submit)


@pytest.mark.timeout(60)
def test_a_store_that_never_answers_gets_a_command_and_a_view_503_unavailable_not_a_hang(
    client: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    table, seated = full_table(client)
    player, view = _to_act(client, table, seated)
    _Stall(client, monkeypatch).on = True
    command = client.post(f"/api/v1/tables/{table}/commands",
                          json={"id": "stalled", "command": a_legal_command(view, random.Random(1))},
                          headers=auth(player))
    assert command.status_code == 503 and command.json()["code"] == "unavailable", command.text
    got = client.get(f"/api/v1/tables/{table}/view", headers=auth(player))
    assert got.status_code == 503 and got.json()["code"] == "unavailable", got.text
    metrics = client.get("/metrics").text
    assert 'mighty_refusals_total{code="unavailable"} 1.0' in metrics


@pytest.mark.timeout(60)
def test_a_socket_command_the_store_never_answers_is_refused_unavailable(
    client: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    table, seated = full_table(client)
    player, view = _to_act(client, table, seated)
    token = player["Authorization"].removeprefix("Bearer ")
    stall = _Stall(client, monkeypatch)
    with client.websocket_connect(f"/api/v1/tables/{table}/stream?after={view['version']}&token={token}") as ws:
        stall.on = True
        ws.send_json({"type": "command", "id": "stalled", "command": a_legal_command(view, random.Random(1))})
        answer = ws.receive_json()
    assert answer["type"] == "refused" and answer["id"] == "stalled" and answer["code"] == "unavailable"


@pytest.mark.timeout(60)
def test_a_quickplay_that_waits_longer_than_the_store_deadline_is_not_cut_short(
    client: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    import services.gateway.deadline as app

    monkeypatch.setattr(app, "STORE_DEADLINE_S", 0.2)  # a request's own deadline: 1.2 s
    player = new_player(client)
    seated = client.post("/api/v1/quickplay", json={"game": "mighty-5", "wait_seconds": 2},
                         headers=auth(player))
    assert seated.status_code == 200, seated.text  # nobody came: the free seats got bots
    assert seated.json()["seat"] == 0


@pytest.mark.timeout(60)
def test_a_verify_that_computes_longer_than_the_store_deadline_is_not_cut_short(
    client: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The deadline bounds waiting for the store; replaying a long table is the rules' work."""
    import services.gateway.deadline as app
    from services.gateway import audit

    table, _ = full_table(client)
    monkeypatch.setattr(app, "STORE_DEADLINE_S", 0.2)  # a request's own deadline: 1.2 s
    real = audit.verify

    def slow(*args: Any) -> Any:
        time.sleep(2)
        return real(*args)

    monkeypatch.setattr(audit, "verify", slow)
    answer = client.get(f"/api/v1/tables/{table}/verify")
    assert answer.status_code == 200 and answer.json()["ok"] is True, answer.text


@pytest.mark.timeout(60)
def test_readiness_and_metrics_answer_in_their_own_words_when_the_store_never_answers(
    client: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    import asyncio

    import services.gateway.deadline as app

    monkeypatch.setattr(app, "STORE_DEADLINE_S", 0.2)
    backend = client.app.state.backend

    async def never() -> None:
        await asyncio.Event().wait()

    monkeypatch.setattr(backend, "ping", never)
    monkeypatch.setattr(backend, "lag_seconds", never)
    ready = client.get("/readyz")
    assert ready.status_code == 503 and "did not answer" in ready.json()["problems"][0], ready.text
    metrics = client.get("/metrics")
    assert metrics.status_code == 200 and "mighty_commands_total" in metrics.text


@pytest.mark.timeout(60)
def test_a_stream_opened_while_the_store_is_down_closes_try_again_later(
    client: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from litestar.exceptions import WebSocketDisconnect

    from services.store.errors import StoreUnavailable

    table, seated = full_table(client)
    token = seated[0]["Authorization"].removeprefix("Bearer ")

    async def down(table_id: str) -> Any:
        raise StoreUnavailable("Redis is down")

    monkeypatch.setattr(client.app.state.backend, "state", down)
    with pytest.raises(WebSocketDisconnect) as closed, \
            client.websocket_connect(f"/api/v1/tables/{table}/stream?after=0&token={token}") as ws:
        ws.receive_json()
    assert closed.value.code == 1013 and closed.value.detail == "unavailable"


@pytest.mark.timeout(60)
def test_a_stream_whose_follow_fails_closes_without_waiting_for_the_client(
    client: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from litestar.exceptions import WebSocketDisconnect

    from services.store.errors import StoreUnavailable

    table, seated = full_table(client)
    token = seated[0]["Authorization"].removeprefix("Bearer ")
    backend = client.app.state.backend

    async def follow_then_fail(table_id: str, reader: str, after: int, take: Any = None) -> Any:
        import asyncio

        await asyncio.sleep(0.2)  # following, then Redis goes away for longer than the retries
        raise StoreUnavailable("Redis went away")
        yield b""  # a generator, as the real follow is

    monkeypatch.setattr(backend, "follow", follow_then_fail)
    with client.websocket_connect(f"/api/v1/tables/{table}/stream?after=0&token={token}") as ws, \
            pytest.raises(WebSocketDisconnect) as closed:
        while True:  # the client sends nothing (it may be sent the view first): the gateway closes by itself
            ws.receive_json()
    assert closed.value.code == 1013 and closed.value.detail == "unavailable"



def test_an_expired_request_deadline_is_unavailable_not_rescheduled() -> None:
    """A store read that outlived the request's deadline (its cancellation swallowed on the
    way) is answered 503 ``unavailable``: rescheduling an expiring Timeout raised
    RuntimeError, a 500 (issue 19, "Audit routes on long tables")."""
    import asyncio
    import contextlib
    from types import SimpleNamespace

    from services.gateway.deadline import DEADLINE_KEY as _DEADLINE_KEY
    from services.gateway.deadline import extend as _extend_deadline
    from services.gateway.errors import ApiError

    async def late() -> str:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(0.01) as deadline:
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.sleep(1)  # a library that swallows the cancellation
                try:
                    _extend_deadline(SimpleNamespace(scope={_DEADLINE_KEY: deadline}), None)  # type: ignore[arg-type]
                except ApiError as refused:
                    return refused.code
        return "rescheduled"

    assert asyncio.run(late()) == "unavailable"


@pytest.mark.timeout(60)
def test_a_stream_opened_with_an_acknowledgement_beyond_the_table_is_sent_its_view_marked_rollback(
    client: Any,
) -> None:
    """A power cut between a command's ack (version V+1) and its view: the client resumes
    with ``after=V`` (the last view it saw), which is not beyond the table, and
    ``acked=V+1``, which is; the table as it is now comes first, marked (docs/api.md,
    "acked=")."""
    table, seated = full_table(client)
    player, view = _to_act(client, table, seated)
    _run_views_worker(client)  # the stored views the stream reads
    token = player["Authorization"].removeprefix("Bearer ")
    version = view["version"]
    url = f"/api/v1/tables/{table}/stream?token={token}&after={version}"
    with client.websocket_connect(f"{url}&acked={version + 1}") as ws:
        frame = ws.receive_json()
    assert frame["type"] == "view" and frame["rollback"] is True and frame["version"] == version
    with client.websocket_connect(f"{url}&acked={version}") as ws:  # nothing lost: nothing to send
        ws.send_json({"type": "ping"})
        assert ws.receive_json() == {"type": "pong"}
