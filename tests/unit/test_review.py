"""The review of an ended hand (docs/api.md, "Audit and replay"; services/gateway/review.py):
every seat's cards open, each played card marked with the trick it went to; and never a
hand opened before it is over."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from tests.unit.gateway_helpers import a_legal_command, auth, full_table, gateway


@pytest.fixture
def client() -> Any:
    with gateway(secret="unit-secret", rate_commands=1000) as client:
        yield client


def _step(client: Any, table: str, seated: list[dict[str, str]], rng: random.Random, n: int) -> bool:
    """One random legal command by whoever is to act; False once the table has closed."""
    public = client.get(f"/api/v1/tables/{table}/view").json()
    if public["status"] == "closed" or public["to_act"] is None:
        return False
    player = seated[public["to_act"]]
    view = client.get(f"/api/v1/tables/{table}/view", headers=auth(player)).json()
    answer = client.post(f"/api/v1/tables/{table}/commands",
                         json={"id": f"c{n}", "command": a_legal_command(view, rng)}, headers=auth(player))
    assert answer.status_code == 200, answer.text
    return True


def _check_marks(steps: list[dict[str, Any]], players: int) -> None:
    last = steps[-1]["view"]
    played = last["played"]
    assert len(played) == players
    for seat in range(players):
        # all the seat ever held: what it holds now and what it parted with
        held = Counter(last["remaining"][seat]) + Counter(m["card"] for m in played[seat])
        dealt = Counter(steps[0]["view"]["remaining"][seat])
        # every card dealt is held or parted with; what else it held came from outside
        # the hands dealt (the kitty, a talon)
        assert dealt <= held, seat
        assert not (held - dealt) & sum((Counter(h) for h in steps[0]["view"]["remaining"]), Counter()), seat
    tricks = list(last.get("tricks") or ())
    if isinstance(last.get("trick"), dict):
        tricks.append(last["trick"])
    went = Counter((m["card"], m["trick"]) for marks in played for m in marks if m["trick"] is not None)
    assert went == Counter((card, n) for n, trick in enumerate(tricks, start=1) for card in trick["cards"])
    for before, after in zip(steps, steps[1:], strict=False):
        # a card that went to a trick at a step was the acting seat's
        for seat in range(players):
            new = after["view"]["played"][seat][len(before["view"]["played"][seat]):]
            if any(m["trick"] is not None for m in new):
                assert seat == after["seat"], (seat, after["seat"], new)
    for before, after in zip(steps, steps[1:], strict=False):  # marks only ever grow
        for seat in range(players):
            assert after["view"]["played"][seat][:len(before["view"]["played"][seat])] == before["view"]["played"][seat]


@pytest.mark.parametrize(("game", "players"), [("mighty-5", 5), ("mighty-3", 3), ("mitigati", 3)])
def test_an_ended_hands_review_marks_every_played_card_with_its_trick_and_seat(client: Any, game: str,
                                                                                players: int) -> None:
    table, seated = full_table(client, game=game, players=players, hands=1)
    rng = random.Random(7)
    n = 0
    while _step(client, table, seated, rng, n):
        n += 1
        assert n < 3000
    hands = client.get(f"/api/v1/tables/{table}/hands").json()["hands"]
    checked = 0
    for hand in hands:
        steps = client.get(f"/api/v1/tables/{table}/hands/{hand['hand']}/replay?as=audit").json()["steps"]
        assert all("played" in step["view"] for step in steps)
        assert steps[0]["view"]["played"] == [[] for _ in range(players)]
        if steps[-1]["view"].get("tricks"):
            _check_marks(steps, players)
            checked += 1
    assert checked >= 1 or all(h["status"] == "abandoned" for h in hands)
    seat_steps = client.get(f"/api/v1/tables/{table}/hands/1/replay?as=0").json()["steps"]
    assert all("played" not in step["view"] and "remaining" not in step["view"] for step in seat_steps)


@pytest.mark.parametrize("seed", range(6))
def test_a_hand_in_progress_is_never_opened_whatever_point_it_stands_at(client: Any, seed: int) -> None:
    """Property-style: a hand stopped after a random number of random legal commands is
    refused (its file, its audit, its review) until it is over."""
    rng = random.Random(seed)
    game, players = rng.choice([("mighty-5", 5), ("mighty-3", 3), ("mitigati", 3)])
    table, seated = full_table(client, game=game, players=players, hands=0)
    for n in range(rng.randrange(0, 60)):
        if not _step(client, table, seated, rng, n):
            break
    for hand in client.get(f"/api/v1/tables/{table}/hands").json()["hands"]:
        for path in ("", "/replay?as=audit", "/replay?as=0", "/replay?as=spectator"):
            answer = client.get(f"/api/v1/tables/{table}/hands/{hand['hand']}{path}", headers=auth(seated[0]))
            if hand["status"] == "playing":
                assert answer.status_code == 403 and answer.json()["code"] == "hand_in_progress", path
                assert "remaining" not in answer.text and "dealt" not in answer.text
            else:
                assert answer.status_code == 200, path
