"""Drill: ``mighty serve`` itself (a subprocess, on a private redis-server through
``REDIS_URL``) has each of its children SIGKILLed in turn (directory, views, ledger,
bots, timers, then the gateway): each comes back as a new process, the gateway answers
``/healthz`` throughout while a worker is down and again within seconds when it was the one
killed, each restart is logged once, and a table still plays to its end afterwards."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from projections import KINDS
from services.redis_runtime import free_port
from tests.drills.players import Guest, guests, seats_of
from tests.processes import alive

pytestmark = pytest.mark.timeout(240)

WORKERS = (*KINDS, "bots", "timers")  # every worker mighty serve starts (without an archive)
BACK_S = 30.0  # a part killed must be running again within this (the first backoff is 0.5 s)
PLAY_S = 90.0


def children(pid: int) -> dict[str, int]:
    """The parts ``mighty serve`` (``pid``) runs now, by name: ``views`` for
    ``mighty worker views``, ``gateway`` for ``mighty gateway``."""
    found: dict[str, int] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            pids = [int(c) for c in (task / "children").read_text().split()]
        except FileNotFoundError:
            continue
        for child in pids:
            try:
                argv = Path(f"/proc/{child}/cmdline").read_bytes().decode().split("\0")
            except FileNotFoundError:
                continue
            if "worker" in argv:
                found[argv[argv.index("worker") + 1]] = child
            elif "gateway" in argv:
                found["gateway"] = child
    return found


@dataclass
class HealthWatch:
    """Polls the gateway's ``/healthz`` in a thread until stopped; keeps each answer."""

    base: str
    answers: list[tuple[float, bool]] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        with httpx.Client(base_url=self.base, timeout=1.0) as http:
            while not self.done.is_set():
                try:
                    ok = http.get("/healthz").status_code == 200
                except httpx.TransportError:
                    ok = False
                self.answers.append((time.monotonic(), ok))
                self.done.wait(0.05)

    def failures_between(self, start: float, end: float) -> list[float]:
        return [at for at, ok in list(self.answers) if start <= at <= end and not ok]

    def answered_after(self, moment: float) -> bool:
        return any(ok and at > moment for at, ok in list(self.answers))


@pytest.fixture
def serve(tmp_path: Path, private_redis: Any) -> Iterator[tuple[subprocess.Popen[bytes], str, Path]]:
    redis_ = private_redis("everysec")
    port = free_port()
    env = {**os.environ, "REDIS_URL": redis_.url, "MIGHTY_NAMESPACE": "drill", "MIGHTY_LOG_FORMAT": "json",
           "MIGHTY_LOG_LEVEL": "warning", "MIGHTY_RATE_COMMANDS": "100000"}
    log_path = tmp_path / "serve.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen([sys.executable, "-m", "services.cli", "serve", "--port", str(port)],
                                   stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env, cwd=tmp_path)
    try:
        yield process, f"http://127.0.0.1:{port}", log_path
    finally:
        if process.poll() is None:
            left = list(children(process.pid).values())
            process.kill()
            process.wait()
            for pid in left:  # no part outlives a failed drill
                if alive(pid):
                    os.kill(pid, signal.SIGKILL)


def wait_for(condition: Any, timeout_s: float, what: str) -> float:
    """Until ``condition()`` is true; the time it became so."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)
    return time.monotonic()


def restarts_logged(log_path: Path) -> list[dict[str, Any]]:
    lines = []
    for line in log_path.read_text(errors="replace").splitlines():
        if line.startswith("{") and '"part_restarting"' in line:
            lines.append(json.loads(line))
    return lines


def play_one_table(base: str, guest: Guest) -> bool:
    """A table of ``guest`` (seat 0) and four bots, one hand, played by the guest's
    client (players.py) until it closes; whether it did."""
    with httpx.Client(base_url=base, timeout=30) as http:
        made = http.post("/api/v1/tables", json={"game": "mighty-5", "seat": 0, "hands": 1,
                                                 "bots": {str(s): "beginner" for s in range(1, 5)}},
                         headers={"Authorization": f"Bearer {guest.token}"})
        assert made.status_code == 201, made.text
    seats = seats_of(made.json()["table"], [guest], lambda: (base,))
    asyncio.run(seats[0].play(time.monotonic() + PLAY_S))
    return seats[0].journal.finished


def test_serve_restarts_each_child_killed_and_the_gateway_answers_throughout(
    serve: tuple[subprocess.Popen[bytes], str, Path], figures: Any,
) -> None:
    process, base, log_path = serve

    def ready() -> bool:
        assert process.poll() is None, f"mighty serve exited:\n{log_path.read_text()[-3000:]}"
        try:
            return httpx.get(base + "/readyz", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    wait_for(ready, 90, "mighty serve never answered /readyz")
    assert set(children(process.pid)) == {*WORKERS, "gateway"}, children(process.pid)
    watch = HealthWatch(base)
    poller = threading.Thread(target=watch.run, daemon=True)
    poller.start()
    back_s: dict[str, float] = {}
    try:
        for name in (*WORKERS, "gateway"):
            before = children(process.pid)
            gateway = before["gateway"]
            os.kill(before[name], signal.SIGKILL)
            killed = time.monotonic()

            def came_back(name: str = name, old: int = before[name]) -> bool:
                assert process.poll() is None, f"mighty serve exited:\n{log_path.read_text()[-3000:]}"
                now = children(process.pid).get(name)
                return now is not None and now != old and alive(now)

            back = wait_for(came_back, BACK_S, f"{name} was not started again")
            if name == "gateway":
                back = wait_for(lambda k=killed: watch.answered_after(k), BACK_S, "the gateway never answered again")
            else:
                assert children(process.pid)["gateway"] == gateway, "the gateway was restarted for a worker"
                assert not watch.failures_between(killed, time.monotonic()), (
                    f"/healthz failed while {name} was down")
            back_s[name] = round(back - killed, 3)
    finally:
        watch.done.set()
        poller.join(timeout=5)

    assert sorted(children(process.pid)) == sorted({*WORKERS, "gateway"})
    logged = restarts_logged(log_path)
    assert sorted(line["part"] for line in logged) == sorted((*WORKERS, "gateway")), logged  # once each
    assert all(line["code"] == -signal.SIGKILL and line["restarts"] == 1 for line in logged), logged

    wait_for(ready, 60, "the service was not ready again after the restarts")
    (guest,) = guests(base, 1)
    assert play_one_table(base, guest), f"the table did not play to its end:\n{log_path.read_text()[-3000:]}"

    parts = list(children(process.pid).values())
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 0
    assert not [pid for pid in parts if alive(pid)], "a part outlived mighty serve"
    figures(back_s=back_s, gateway_down_s=back_s["gateway"])
