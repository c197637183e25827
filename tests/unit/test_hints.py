"""Learners' hints (docs/api.md, "Hints"; services/gateway/hints.py): a table option its
creator sets (never on a rated table), and a route that answers what a bot would play at
the caller's turn, from that seat's view only."""

from __future__ import annotations

import random
from typing import Any

import pytest

from domain.registry import game_named
from tests.unit.gateway_helpers import a_legal_command, auth, full_table, gateway, new_player


@pytest.fixture
def client() -> Any:
    with gateway(secret="unit-secret", rate_commands=1000) as client:
        yield client


def _turn(client: Any, table: str, seated: list[dict[str, str]]) -> tuple[int | None, dict[str, Any]]:
    public = client.get(f"/api/v1/tables/{table}/view").json()
    return public["to_act"], public


def test_hints_are_off_by_default_and_refused_on_a_rated_table(client: Any) -> None:
    ana = new_player(client)
    rated = client.post("/api/v1/tables", json={"game": "mighty-5", "hints": True}, headers=auth(ana))
    assert rated.status_code == 422 and rated.json()["code"] == "hints_on_rated_table"
    table, seated = full_table(client)
    to_act, _ = _turn(client, table, seated)
    answer = client.get(f"/api/v1/tables/{table}/hint", headers=auth(seated[to_act]))
    assert answer.status_code == 403 and answer.json()["code"] == "hints_off"
    assert client.get(f"/api/v1/tables/{table}").json()["hints"] is False


def test_a_hint_is_for_the_seat_to_act_only_never_a_spectator(client: Any) -> None:
    table, seated = full_table(client, rated=False, hints=True)
    assert client.get(f"/api/v1/tables/{table}").json()["hints"] is True
    to_act, _ = _turn(client, table, seated)
    other = seated[(to_act + 1) % len(seated)]
    waiting = client.get(f"/api/v1/tables/{table}/hint", headers=auth(other))
    assert waiting.status_code == 422 and waiting.json()["code"] == "not_your_turn"
    watcher = new_player(client, "Watcher")
    watching = client.get(f"/api/v1/tables/{table}/hint", headers=auth(watcher))
    assert watching.status_code == 403 and watching.json()["code"] == "not_your_seat"
    assert client.get(f"/api/v1/tables/{table}/hint").status_code == 401  # no token


@pytest.mark.parametrize(("game", "players"), [("mighty-5", 5), ("mighty-3", 3), ("mitigati", 3)])
def test_every_hint_is_a_legal_command_of_the_seats_view_and_is_accepted(client: Any, game: str,
                                                                          players: int) -> None:
    """Property-style: a whole match played by following the hints (and, one turn in
    three, a random legal command instead), each hint labelled and accepted."""
    table, seated = full_table(client, game=game, players=players, hands=1, rated=False, hints=True)
    rng = random.Random(3)
    hinted = 0
    for n in range(3000):
        to_act, public = _turn(client, table, seated)
        if public["status"] == "closed":
            break
        player = seated[to_act]
        view = client.get(f"/api/v1/tables/{table}/view", headers=auth(player)).json()
        hint = client.get(f"/api/v1/tables/{table}/hint?lang=fi", headers=auth(player))
        assert hint.status_code == 200, hint.text
        body = hint.json()
        assert body["version"] == view["version"] and body["level"] == "beginner" and body["label"]
        command = body["command"]
        if command["type"] == "discard":
            step = next(e for e in view["legal"] if e["type"] == "discard" and e.get("take") == command.get("take"))
            assert len(command["cards"]) == step["count"] and set(command["cards"]) <= set(step["from"])
        else:
            assert command in [{k: v for k, v in e.items() if k != "label"} for e in view["legal"]], command
        again = client.get(f"/api/v1/tables/{table}/hint?lang=fi", headers=auth(player)).json()
        assert again == body  # the same view and seed: the same hint
        sent = command if rng.random() < 2 / 3 else a_legal_command(view, rng)
        answer = client.post(f"/api/v1/tables/{table}/commands", json={"id": f"h{n}", "command": sent},
                             headers=auth(player))
        assert answer.status_code == 200, answer.text
        hinted += 1
    else:
        raise AssertionError("the match did not end")
    assert hinted > 0


def test_the_bot_behind_a_hint_sees_the_seats_view_and_nothing_more(client: Any, monkeypatch: Any) -> None:
    seen: list[Any] = []
    game = game_named("mighty-5")
    real = game.bots()

    def recording(rules: Any, view: Any, seed: int, budget: Any) -> Any:
        seen.append(view)
        return real["beginner"](rules, view, seed, budget)

    monkeypatch.setattr(type(game), "bots", lambda self: {**real, "beginner": recording})
    table, seated = full_table(client, rated=False, hints=True)
    to_act, _ = _turn(client, table, seated)
    mine = client.get(f"/api/v1/tables/{table}/view", headers=auth(seated[to_act])).json()
    assert client.get(f"/api/v1/tables/{table}/hint", headers=auth(seated[to_act])).status_code == 200
    (view,) = seen
    assert view.viewer == to_act and not view.audit
    assert sorted(view.hand) == sorted(mine["hand"])  # its own cards; no other seat's, no kitty
    assert view.kitty is None
