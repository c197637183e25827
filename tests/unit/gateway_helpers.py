"""A gateway over fakeredis for the unit tests (no workers: views are rendered by the
gateway's own fallback, the same render the views worker uses)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import fakeredis
from litestar.testing import TestClient

from services.bootstrap import Wiring, wire, wire_gateway
from services.gateway.app import create_app
from services.settings import Settings


@contextmanager
def gateway(**settings: Any) -> Iterator[TestClient[Any]]:
    server = fakeredis.FakeServer()
    given = Settings(partitions=4, **settings)
    backend = wire_gateway(fakeredis.FakeAsyncRedis(server=server, protocol=2), given)
    app = create_app(given, backend)
    with TestClient(app) as client:
        # the same store through the sync parts, for what a test does beside the gateway
        # (a projection worker, a poisoned feed entry)
        client.sync_wiring = wire(fakeredis.FakeRedis(server=server, protocol=2), given)  # type: ignore[attr-defined]
        yield client


def sync_wiring(client: TestClient[Any]) -> Wiring:
    """The sync parts on the store of a ``gateway()`` client."""
    wiring: Wiring = client.sync_wiring  # type: ignore[attr-defined]
    return wiring


def new_player(client: TestClient[Any], name: str = "Ana") -> dict[str, str]:
    answer = client.post("/api/v1/players", json={"name": name})
    assert answer.status_code == 201, answer.text
    body: dict[str, str] = answer.json()
    return {"player": body["player"], "Authorization": f"Bearer {body['token']}"}


def auth(player: dict[str, str]) -> dict[str, str]:
    return {"Authorization": player["Authorization"]}


def full_table(client: TestClient[Any], game: str = "mighty-5", players: int = 5,
               **extra: Any) -> tuple[str, list[dict[str, str]]]:
    """A started table of ``players`` guests, seated in order."""
    seated = [new_player(client, f"P{i}") for i in range(players)]
    made = client.post("/api/v1/tables", json={"game": game, "seat": 0, **extra}, headers=auth(seated[0]))
    assert made.status_code == 201, made.text
    table = made.json()["table"]
    for seat, player in enumerate(seated[1:], start=1):
        joined = client.post(f"/api/v1/tables/{table}/join", json={"seat": seat}, headers=auth(player))
        assert joined.status_code == 200, joined.text
    return table, seated


def a_legal_command(view: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """What a random bot sends: one of the view's legal commands; the discard step as
    ``count`` cards of ``from``."""
    command = dict(rng.choice(view["legal"]))
    if command["type"] == "discard" and "count" in command:
        cards = rng.sample(command.pop("from"), command.pop("count"))
        command["cards"] = cards
    return command
