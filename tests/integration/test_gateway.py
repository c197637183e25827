"""The gateway as it runs: ``mighty gateway`` (uvicorn) over a real redis-server with the
three projection workers, driven over HTTP and WebSocket like a client and bots would.

The in-test players pick a random command of the view's ``legal`` list, as bots do.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from services.projection.read import wait_until
from services.redis_runtime import free_port
from services.store.keys import KeySpace
from tests.integration.workers.support import wait_for, wait_ready, workers
from tests.unit.gateway_helpers import a_legal_command

pytestmark = pytest.mark.integration
# The WebSocket stream follows a view through follow_async (services/projection/notify.py),
# which listens on one node's Pub/Sub: on the local cluster these run on one redis-server
# until the gateway's shared follow hub replaces it.
SPACE = KeySpace()  # the workers' and the gateway's default partitions


# many players and tables from one address (127.0.0.1): quotas out of the way
LOOSE_QUOTAS = {"MIGHTY_PLAYERS_PER_ADDRESS": "1000000", "MIGHTY_TABLES_PER_ADDRESS": "1000000",
                "MIGHTY_TABLES_PER_PLAYER": "1000000", "MIGHTY_QUICKPLAYS_PER_ADDRESS": "1000000",
                "MIGHTY_QUICKPLAYS_PER_PLAYER": "1000000", "MIGHTY_SEATS_PER_PLAYER": "1000000"}


class Gateway:
    def __init__(self, port: int) -> None:
        self.port = port
        self.http = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=15)

    def player(self, name: str) -> dict[str, str]:
        made = self.http.post("/api/v1/players", json={"name": name})
        assert made.status_code == 201, made.text
        body = made.json()
        return {"player": body["player"], "token": body["token"]}

    def headers(self, player: dict[str, str] | None) -> dict[str, str]:
        return {} if player is None else {"Authorization": f"Bearer {player['token']}"}

    def view(self, table: str, player: dict[str, str] | None = None, at_least: int = 0) -> dict[str, Any]:
        """The caller's view once it reflects ``at_least`` (the views worker is a step behind)."""
        deadline = time.monotonic() + 15
        while True:
            view: dict[str, Any] = self.http.get(f"/api/v1/tables/{table}/view", headers=self.headers(player)).json()
            if view["version"] >= at_least or time.monotonic() > deadline:
                return view
            time.sleep(0.01)

    def command(self, table: str, player: dict[str, str], command: dict[str, Any], cid: str) -> httpx.Response:
        return self.http.post(f"/api/v1/tables/{table}/commands", json={"id": cid, "command": command},
                              headers=self.headers(player))

    def stream(self, table: str, player: dict[str, str] | None, after: int = 0) -> ClientConnection:
        token = "" if player is None else f"&token={player['token']}"
        return connect(f"ws://127.0.0.1:{self.port}/api/v1/tables/{table}/stream?after={after}{token}",
                       max_size=2**20, open_timeout=10)

    def table(self, players: list[dict[str, str]], game: str, **extra: Any) -> str:
        made = self.http.post("/api/v1/tables", json={"game": game, "seat": 0, **extra},
                              headers=self.headers(players[0]))
        assert made.status_code == 201, made.text
        table: str = made.json()["table"]
        for seat, player in enumerate(players[1:], start=1):
            joined = self.http.post(f"/api/v1/tables/{table}/join", json={"seat": seat}, headers=self.headers(player))
            assert joined.status_code == 200, joined.text
        return table


@pytest.fixture
def gateway(redis_server: Any, redis_client: Any, tmp_path: Any) -> Iterator[Gateway]:
    port = free_port()
    env = {**os.environ, "MIGHTY_LOG_FORMAT": "json", "MIGHTY_LOG_LEVEL": "warning",
           "MIGHTY_RATE_COMMANDS": "100000", "REDIS_URL": redis_server.url, **LOOSE_QUOTAS}
    logs = open(tmp_path / "gateway.log", "ab")  # noqa: SIM115 - handed to the child
    with workers(redis_server.url):
        wait_ready(redis_client, SPACE, ("views", "ledger", "directory"))
        process = subprocess.Popen([sys.executable, "-m", "services.cli", "gateway", "--port", str(port)],
                                   stdin=subprocess.DEVNULL, stdout=logs, stderr=logs, env=env)
        try:
            gateway = Gateway(port)

            def up() -> bool:
                assert process.poll() is None, (tmp_path / "gateway.log").read_text()[-2000:]
                try:
                    return gateway.http.get("/healthz").status_code == 200
                except httpx.TransportError:
                    return False

            wait_for(up, 30, "the gateway to answer")
            yield gateway
        finally:
            process.terminate()
            process.wait(timeout=15)
            logs.close()


def _frames(ws: ClientConnection, until: Any, timeout_s: float = 15) -> list[dict[str, Any]]:
    got: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            frame = json.loads(ws.recv(timeout=max(0.01, deadline - time.monotonic())))
        except TimeoutError:
            break
        got.append(frame)
        if until(frame):
            return got
    raise AssertionError(f"no such frame within {timeout_s} s; got {got[-3:]}")


def test_a_whole_hand_over_http_and_a_websocket_that_drops_and_resumes_missing_nothing(gateway: Gateway) -> None:
    rng = random.Random(7)
    players = [gateway.player(n) for n in ("Me", "Bo", "Cy", "Di", "Ed")]
    table = gateway.table(players, "mighty-5", hands=1)
    me = players[0]
    versions: list[int] = []  # every view frame's version, over both connections
    floor = 0  # act only on a frame at least as new as the last command's answer
    sent = 0

    def play_others(view: dict[str, Any]) -> None:
        nonlocal floor, sent
        seat = view["to_act"]
        theirs = gateway.view(table, players[seat], at_least=view["version"])
        answer = gateway.command(table, players[seat], a_legal_command(theirs, rng), f"o{sent}")
        sent += 1
        assert answer.status_code == 200, answer.text
        floor = answer.json()["version"]

    def drive(ws: ClientConnection, frames_before_drop: int | None) -> bool:
        """Play until the match is over (True) or ``frames_before_drop`` frames came (False)."""
        nonlocal floor, sent
        seen = 0
        early: list[dict[str, Any]] = []  # views pushed before a command's answer, handled after it
        while True:
            frame = early.pop(0) if early else json.loads(ws.recv(timeout=20))
            if frame["type"] == "ack":
                floor = max(floor, frame["version"])
                continue
            assert frame["type"] == "view", frame
            versions.append(frame["version"])
            view = frame["view"]
            seen += 1
            if view["status"] == "closed":
                return True
            if frames_before_drop is not None and seen >= frames_before_drop:
                return False
            if frame["version"] < floor or view["to_act"] is None:
                continue
            if view["to_act"] == 0:
                ws.send(json.dumps({"type": "command", "id": f"me{sent}", "command": a_legal_command(view, rng)}))
                sent += 1
                answer = json.loads(ws.recv(timeout=20))
                while answer["type"] == "view":  # pushed before the answer: the next to handle
                    early.append(answer)
                    answer = json.loads(ws.recv(timeout=20))
                assert answer["type"] == "ack", answer
                floor = answer["version"]
            else:
                play_others(view)

    with gateway.stream(table, me) as ws:
        assert not drive(ws, frames_before_drop=12)
    # offline: the others play on while it is not my turn
    while True:
        public = gateway.view(table, None, at_least=floor)
        if public["to_act"] in (None, 0) or public["status"] == "closed":
            break
        play_others(public)
    if public["version"] == versions[-1] and public["to_act"] == 0:
        # the last frame seen was my turn: nothing is newer, so a resume from it pushes
        # nothing; play that turn over HTTP, as a client between two sockets would
        mine = gateway.view(table, me, at_least=public["version"])
        answer = gateway.command(table, me, a_legal_command(mine, rng), f"me{sent}")
        sent += 1
        assert answer.status_code == 200, answer.text
        floor = answer.json()["version"]
    with gateway.stream(table, me, after=versions[-1]) as ws:
        assert drive(ws, frames_before_drop=None)
    assert versions == sorted(set(versions)), "a frame came twice or out of order"
    final = gateway.view(table, me)
    assert versions[-1] == final["version"] and final["status"] == "closed"
    assert final["phase"] == "finished"
    hands = gateway.http.get(f"/api/v1/tables/{table}/hands").json()["hands"]
    assert [h["status"] for h in hands] == ["finished"]
    assert gateway.http.get(f"/api/v1/tables/{table}/verify").json()["ok"] is True
    wait_for(lambda: bool(gateway.http.get(f"/api/v1/tables/{table}/ledger").json()["hands"]), 15, "the ledger")
    ledger = gateway.http.get(f"/api/v1/tables/{table}/ledger").json()
    assert ledger["hands"][0]["hand"] == 1 and sum(ledger["totals"]) == 0
    assert ledger["hands"][0]["scores"] == hands[0]["scores"]
    stats = gateway.http.get(f"/api/v1/players/{me['player']}").json()
    assert stats["hands"] == 1 and stats["total"] == ledger["totals"][0]
    # the views came as they were published (no task woken), in order and none missed
    pushed = {how: float(n) for how, n in re.findall(r'mighty_views_pushed_total\{how="(\w+)"\} (\S+)',
                                                     gateway.http.get("/metrics").text)}
    assert pushed.get("at_once", 0) > len(versions) / 2, pushed


@pytest.mark.parametrize("game,seats", [("mighty-3", 3), ("mighty-5", 5), ("mighty-7", 7), ("mitigati", 3)])
def test_no_pushed_frame_or_view_holds_another_seats_cards_and_a_spectator_sees_no_hand(
        gateway: Gateway, game: str, seats: int) -> None:
    players = [gateway.player(f"S{i}") for i in range(seats)]
    table = gateway.table(players, game)
    texts: dict[str, str] = {}
    hands: dict[int, list[str]] = {}
    readers: list[tuple[str, dict[str, str] | None]] = [(str(i), p) for i, p in enumerate(players)]
    for reader, player in [*readers, ("spectator", None)]:
        with gateway.stream(table, player) as ws:
            frames = _frames(ws, lambda f: f["type"] == "view" and f["view"]["phase"] != "waiting")
        view = frames[-1]["view"]
        texts[reader] = json.dumps(frames)
        texts[reader + "/http"] = gateway.http.get(f"/api/v1/tables/{table}/view",
                                                   headers=gateway.headers(player)).text
        if player is None:
            assert view["seat"] is None and view["hand"] is None
        else:
            assert view["seat"] == int(reader) and view["hand"]
            hands[int(reader)] = view["hand"]
    assert len({c for h in hands.values() for c in h}) == sum(len(h) for h in hands.values())
    for reader, text in texts.items():
        own = reader.split("/")[0]
        for seat, hand in hands.items():
            if str(seat) == own:
                continue
            leaked = [card for card in hand if f'"{card}"' in text]
            assert not leaked, f"{reader} sees seat {seat}'s {leaked}"


def test_the_stream_answers_pings_refuses_a_bad_command_without_a_change_and_closes_on_big_frames(
        gateway: Gateway) -> None:
    players = [gateway.player(n) for n in ("A", "B", "C", "D", "E")]
    table = gateway.table(players, "mighty-5")
    with gateway.stream(table, players[0]) as ws:
        first = _frames(ws, lambda f: f["type"] == "view" and f["view"]["phase"] == "bidding")[-1]
        ws.send(json.dumps({"type": "ping"}))
        assert json.loads(ws.recv(timeout=10)) == {"type": "pong"}
        acting = first["view"]["to_act"]
        idle = (acting + 1) % 5
    with gateway.stream(table, players[idle]) as ws:
        current = _frames(ws, lambda f: f["type"] == "view")[-1]
        events = gateway.http.get(f"/api/v1/tables/{table}/verify").json()["events"]
        ws.send(json.dumps({"type": "command", "id": "early", "command": {"type": "pass"}}))
        refused = json.loads(ws.recv(timeout=10))
        assert refused["type"] == "refused" and refused["id"] == "early" and refused["code"] == "not_your_turn"
        with pytest.raises(TimeoutError):  # nothing changed, so nothing is pushed
            ws.recv(timeout=0.5)
        assert gateway.view(table, players[idle])["version"] == current["version"]
        assert gateway.http.get(f"/api/v1/tables/{table}/verify").json()["events"] == events
        ws.send("x" * (16 * 1024 + 1))
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=10)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
    bad = {"token": "forged.1.x"}
    with gateway.stream(table, bad) as ws:
        error = json.loads(ws.recv(timeout=10))
        assert error["type"] == "error" and error["code"] == "unauthorized"
        with pytest.raises(ConnectionClosed):
            ws.recv(timeout=10)


def test_the_lobby_lists_tables_from_the_directory_by_status_and_game(gateway: Gateway, redis_client: Any) -> None:
    host = gateway.player("Host")
    waiting = gateway.http.post("/api/v1/tables", json={"game": "mighty-4", "seat": 0},
                                headers=gateway.headers(host)).json()["table"]
    playing = gateway.table([gateway.player(f"P{i}") for i in range(5)], "mighty-5")
    wait_until(redis_client, SPACE, "directory", timeout_s=15)

    def listed(query: str) -> set[str]:
        return {t["table"] for t in gateway.http.get(f"/api/v1/tables{query}").json()["tables"]}

    assert {waiting, playing} <= listed("")
    assert waiting in listed("?status=open") and playing not in listed("?status=open")
    assert playing in listed("?status=playing&game=mighty-5") and waiting not in listed("?game=mighty-5")
    ready = gateway.http.get("/readyz")
    assert ready.status_code == 200, ready.text
    metrics = gateway.http.get("/metrics").text
    assert 'mighty_projection_lag_seconds{kind="views"}' in metrics


def test_quickplay_seats_waiting_players_together_and_gives_the_rest_bots(gateway: Gateway) -> None:
    import concurrent.futures

    ana, bo = gateway.player("Ana"), gateway.player("Bo")
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(
            lambda p: gateway.http.post("/api/v1/quickplay", json={"game": "mighty-5", "wait_seconds": 1.5},
                                        headers=gateway.headers(p)),
            (ana, bo)))
    assert all(a.status_code == 200 for a in answers), [a.text for a in answers]
    seated = [a.json() for a in answers]
    assert seated[0]["table"] == seated[1]["table"] and seated[0]["seat"] != seated[1]["seat"]
    path = f"/api/v1/tables/{seated[0]['table']}"
    wait_for(lambda: gateway.http.get(path).json()["status"] == "playing", 15, "the directory to show the start")
    table = gateway.http.get(path).json()
    bots = [s for s in table["seats"] if s["bot"]]
    assert len(bots) == 3 and all(s["player"] for s in table["seats"])


def test_the_games_route_describes_every_game_and_every_legal_entry_pushed_or_read_carries_its_label(
        gateway: Gateway) -> None:
    """docs/api.md, "Games, labels and languages": ``GET /api/v1/games`` names every game
    with its cards and options; the views a seat reads and is pushed label every legal
    entry; an entry sent back as written, ``label`` and all, is the command (a retry of its
    id without the label is the same command, not a reused id)."""
    games = gateway.http.get("/api/v1/games")
    assert games.status_code == 200
    catalogue = {g["game"]: g for g in games.json()["games"]}
    assert {"mighty-5", "mighty-3", "mighty-8", "mitigati"} <= set(catalogue)
    assert catalogue["mighty-5"]["seats"] == 5 and len(catalogue["mighty-5"]["cards"]) == 53
    assert {o["name"]: o["default"] for o in catalogue["mighty-5"]["options"]}["score"] == "fixed"
    assert {c["card"]: c["label"] for c in catalogue["mitigati"]["cards"]}["FOOL"] == "the Fool"
    rng = random.Random(3)
    for game, seats in (("mighty-5", 5), ("mitigati", 3)):
        players = [gateway.player(f"L{i}") for i in range(seats)]
        table = gateway.table(players, game, hands=1)
        with gateway.stream(table, players[0]) as ws:
            frames = _frames(ws, lambda f: f["type"] == "view" and f["view"]["phase"] != "waiting")
        first = frames[-1]["view"]
        version = first["version"]
        acting = first["to_act"]
        if acting == 0:
            assert first["legal"] and all(e["label"] and e["label"][0].isupper() for e in first["legal"])
        for step in range(12):  # the first steps of the hand over HTTP, each as written
            view = gateway.view(table, players[acting], at_least=version)
            assert view["legal"], view
            for entry in view["legal"]:
                assert isinstance(entry["label"], str) and entry["label"][0].isupper(), entry
            command = a_legal_command(view, rng)
            assert "label" in command
            answer = gateway.command(table, players[acting], command, f"l{step}")
            assert answer.status_code == 200, answer.text
            if step == 0:  # the same id, the label left out: the same command
                bare = {k: v for k, v in command.items() if k != "label"}
                again = gateway.command(table, players[acting], bare, f"l{step}")
                assert again.status_code == 200 and again.json() == answer.json(), again.text
            version = answer.json()["version"]
            acting = gateway.view(table, None, at_least=version)["to_act"]
            if acting is None:
                break
        if game == "mighty-5":
            with gateway.stream(table, players[acting]) as ws:
                pushed = _frames(ws, lambda f: f["type"] == "view" and bool(f["view"]["legal"]))
            assert all(e["label"] for e in pushed[-1]["view"]["legal"])
