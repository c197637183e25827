"""``mighty serve`` as a process: the gateway and every worker, on a private Redis of its
own (under ``MIGHTY_TEST_CLUSTER=1``: ``mighty serve --cluster``, a local cluster of its
own); a guest plays against bots through the API; SIGINT stops every child."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from services.redis_runtime import free_port
from tests.integration.conftest import CLUSTER
from tests.processes import alive, children_of


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}  # serve starts its own
    env["MIGHTY_LOG_LEVEL"] = "warning"
    log = open(tmp_path / "serve.log", "wb")  # noqa: SIM115 - closed below
    cluster = ["--cluster"] if CLUSTER else []
    process = subprocess.Popen([sys.executable, "-m", "services.cli", "serve", "--port", str(port), *cluster],
                               stdout=log, stderr=log, env=env, cwd=tmp_path)
    try:
        yield process, f"http://127.0.0.1:{port}"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        log.close()


def wait_ready(http: httpx.Client, process: subprocess.Popen[bytes], timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert process.poll() is None, "mighty serve exited"
        try:
            if http.get("/readyz").status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise AssertionError("/readyz never answered 200")


def my_move(view: dict[str, Any]) -> dict[str, Any]:
    """A pass while bidding, else the first legal command (cards picked for a discard step)."""
    legal = view["legal"]
    for command in legal:
        if command["type"] == "pass":
            return {"type": "pass"}
    command = dict(legal[0])
    if command["type"] == "discard" and "count" in command:
        return {"type": "discard", "cards": command["from"][: command["count"]]}
    return command


def test_serve_runs_a_table_where_bots_play_their_turns_and_sigint_stops_every_part(
    served: tuple[subprocess.Popen[bytes], str],
) -> None:
    process, url = served
    http = httpx.Client(base_url=url, timeout=15)
    wait_ready(http, process)
    parts = children_of(process.pid)
    assert len(parts) >= 6  # redis-server, views, ledger, directory, bots, gateway

    guest = http.post("/api/v1/players", json={"name": "Ana"}).json()
    auth = {"Authorization": f"Bearer {guest['token']}"}
    bots = {str(seat): "beginner" for seat in range(1, 5)}
    made = http.post("/api/v1/tables", json={"game": "mighty-5", "seat": 0, "bots": bots}, headers=auth)
    assert made.status_code == 201, made.text
    table = made.json()["table"]

    # The bots bid when it is their turn; the guest passes when it is theirs.
    bot_bids: set[int] = set()
    deadline = time.monotonic() + 60
    sent = 0
    while len(bot_bids) < 4 and time.monotonic() < deadline:
        view = http.get(f"/api/v1/tables/{table}/view", headers=auth).json()
        bot_bids |= {entry[0] for entry in view.get("auction") or () if entry[0] != 0}
        if view["to_act"] == 0 and view["legal"]:
            answer = http.post(f"/api/v1/tables/{table}/commands",
                               json={"id": f"c{view['version']}", "command": my_move(view)}, headers=auth)
            assert answer.status_code in (200, 409), answer.text
            sent += 1
        time.sleep(0.1)
    assert bot_bids == {1, 2, 3, 4}, f"bots that bid: {bot_bids}"

    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=30) == 0
    assert not [pid for pid in parts if alive(pid)], "a part outlived mighty serve"


def test_serve_stops_with_an_error_when_a_part_cannot_start_rather_than_retrying_for_ever(tmp_path: Path) -> None:
    """The gateway's port is taken: it exits at once, is retried with backoff, and after
    five tries in a row before the service was ever ready, serve says so and exits 1."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
        env["MIGHTY_LOG_LEVEL"] = "warning"
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "services.cli", "serve", "--port", str(port)],
                              capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
        took = time.monotonic() - started
    assert done.returncode == 1, done.stderr[-2000:]
    assert "the gateway process exited 5 times in a row as it started" in done.stderr, done.stderr[-2000:]
    assert done.stderr.count("part_restarting") == 4  # one line a restart
    assert took > 0.5 + 1 + 2 + 4  # the backoff between the tries: no busy loop
