"""The ratings' routes over fakeredis (docs/api.md, "Players", "Leaderboards";
docs/ratings.md): a played match rated by the ratings worker and its rater, the player's
ratings and reputation, the leaderboard, an unrated table, the reputation a table asks for."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest

from projections.ratings import Reputation
from services.projection.rater import Rater, RatingsKeys
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
    with gateway(secret="unit-secret", rate_commands=1000, ratings_min_hands=1) as client:
        yield client


def _play_match(client: Any, table: str, seated: list[dict[str, str]], seed: int) -> None:
    rng = random.Random(seed)
    for step in range(2000):
        public = client.get(f"/api/v1/tables/{table}/view").json()
        if public["status"] == "closed":
            return
        player = seated[public["to_act"]]
        view = client.get(f"/api/v1/tables/{table}/view", headers=auth(player)).json()
        answer = client.post(f"/api/v1/tables/{table}/commands",
                             json={"id": f"m{step}", "command": a_legal_command(view, rng)}, headers=auth(player))
        assert answer.status_code == 200, answer.text
    raise AssertionError("the match did not end")


def _rate_everything(client: Any) -> int:
    wiring = sync_wiring(client)
    rater = Rater(wiring.client, wiring.space)
    worker = wiring.worker("ratings", linger_ms=0, block_ms=1, after_step=lambda: None)
    for _ in range(50):
        if not worker.step():
            break
    worker.shutdown()
    assert rater.hold()
    return rater.step()


def test_a_played_match_gives_each_player_a_rating_and_a_reputation(client: Any) -> None:
    table, seated = full_table(client, hands=2)
    _play_match(client, table, seated, seed=5)
    assert _rate_everything(client) >= 1
    found = client.get(f"/api/v1/players/{seated[0]['player']}").json()
    rating = found["ratings"]["mighty-5"]
    assert set(rating) == {"mu", "sigma", "ordinal", "hands", "provisional", "history"}
    assert len(rating["history"]) == rating["hands"] and rating["history"][-1][1] == rating["ordinal"]
    assert rating["hands"] >= 1 and rating["provisional"] is True and rating["sigma"] < 25 / 3
    assert rating["ordinal"] == pytest.approx(rating["mu"] - 3 * rating["sigma"], abs=0.01)
    assert found["reputation"] == {"finished": rating["hands"], "abandoned": 0}
    board = client.get("/api/v1/leaderboards/mighty-5?limit=3").json()
    assert board["game"] == "mighty-5" and [row["rank"] for row in board["players"]] == [1, 2, 3]
    ordinals = [row["ordinal"] for row in board["players"]]
    assert ordinals == sorted(ordinals, reverse=True)
    assert all(row["name"].startswith("P") for row in board["players"])


def test_an_unrated_table_changes_no_rating_but_counts_for_reputation(client: Any) -> None:
    table, seated = full_table(client, hands=1, rated=False)
    _play_match(client, table, seated, seed=6)
    _rate_everything(client)
    found = client.get(f"/api/v1/players/{seated[1]['player']}").json()
    assert found["ratings"] == {}
    assert found["reputation"] == {"finished": 1, "abandoned": 0}
    assert client.get("/api/v1/leaderboards/mighty-5").json() == {"game": "mighty-5", "players": []}


def test_a_new_player_has_no_rating_and_an_empty_reputation(client: Any) -> None:
    ana = new_player(client)
    found = client.get(f"/api/v1/players/{ana['player']}").json()
    assert found["ratings"] == {} and found["reputation"] == {"finished": 0, "abandoned": 0}


@pytest.mark.parametrize(("game", "limit", "status", "code"), [
    ("chess", 10, 404, "not_found"), ("x" * 200, 10, 404, "not_found"),
    ("mighty-5", 0, 422, "invalid_request"), ("mighty-5", 101, 422, "invalid_request")])
def test_a_leaderboard_of_an_unknown_game_or_a_bad_limit_is_refused(client: Any, game: str, limit: int,
                                                                    status: int, code: str) -> None:
    answer = client.get(f"/api/v1/leaderboards/{game}?limit={limit}")
    assert answer.status_code == status and answer.json()["code"] == code


def test_a_table_asking_for_a_reputation_refuses_a_player_below_it_with_a_typed_code(client: Any) -> None:
    creator = new_player(client, "Host")
    made = client.post("/api/v1/tables", json={"game": "mighty-5", "seat": 0, "min_reputation": 90},
                       headers=auth(creator))
    assert made.status_code == 201, made.text
    table = made.json()["table"]
    quitter, fresh = new_player(client, "Quits"), new_player(client, "New")
    wiring = sync_wiring(client)
    wiring.client.hset(RatingsKeys(wiring.space).reputation, quitter["player"],
                       msgspec.json.encode(Reputation(player=quitter["player"], finished=5, abandoned=5)))
    refused = client.post(f"/api/v1/tables/{table}/join", json={}, headers=auth(quitter))
    assert refused.status_code == 403 and refused.json()["code"] == "reputation_too_low"
    assert client.get(f"/api/v1/tables/{table}").json()["seats"][1]["player"] is None  # nothing changed
    assert client.post(f"/api/v1/tables/{table}/join", json={}, headers=auth(fresh)).status_code == 200


def test_a_reputation_asked_for_out_of_range_is_refused(client: Any) -> None:
    creator = new_player(client, "Host")
    answer = client.post("/api/v1/tables", json={"game": "mighty-5", "seat": 0, "min_reputation": 101},
                         headers=auth(creator))
    assert answer.status_code == 422 and answer.json()["code"] == "invalid_request"


def test_a_bot_the_service_seated_is_on_no_leaderboard_and_its_levels_row_is(client: Any) -> None:
    from projections.ratings import PlayerRating, bot_player
    from services.gateway.backend import bot_player_id

    wiring = sync_wiring(client)
    keys = RatingsKeys(wiring.space)
    ana = new_player(client, "Ana")["player"]
    gus = bot_player_id("expert", "Gus")
    server_ms = int(wiring.client.time()[0]) * 1000
    for player, mu in ((gus, 40.0), (bot_player("expert"), 35.0), (ana, 30.0)):
        rating = PlayerRating(player=player, mu=mu, sigma=2.0, hands=50, last_ms=server_ms)
        wiring.client.hset(keys.ratings("mighty-5"), player, msgspec.json.encode(rating))
        wiring.client.zadd(keys.board("mighty-5"), {player: rating.ordinal})
    board = client.get("/api/v1/leaderboards/mighty-5").json()["players"]
    assert [row["player"] for row in board] == [bot_player("expert"), ana]
