"""A calm first run: ``mighty serve`` as ``make run`` starts it (its own redis-server, its
default log level), idle, says nothing; a Ctrl-C stops the gateway, the workers, then
Redis, with no warning; a SIGTERM or a SIGKILL of serve leaves no process behind.

Real processes: serve is started as a shell starts a job (its own process group) and sent
SIGINT as a terminal sends it, to the whole group. Its lines are read from its output.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from projections import KINDS
from services.redis_runtime import free_port
from tests.integration.conftest import CLUSTER
from tests.processes import alive, children_of, command_of

QUIET_WINDOW_S = 60.0  # a full minute (issue 21): twelve summary periods (MIGHTY_SUMMARY_S below) and lag reports
SUMMARY_S = 5.0


@dataclass
class Served:
    process: subprocess.Popen[bytes]
    url: str
    log: Path
    children: list[int] = field(default_factory=list)

    def lines(self) -> list[str]:
        return self.log.read_text(errors="replace").splitlines()

    def records(self) -> list[dict[str, object]]:
        """Every log line as its JSON record (serve's own sentences, ``mighty serve: ...``, left out)."""
        return [json.loads(line) for line in self.lines() if line and not line.startswith("mighty serve: ")]

    def wait_for(self, what: str, done: object, timeout_s: float = 90.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            assert self.process.poll() is None, f"mighty serve exited: {self.lines()[-20:]}"
            if callable(done) and done():
                return
            time.sleep(0.2)
        raise AssertionError(f"{what} did not happen in {timeout_s} s: {self.lines()[-20:]}")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    port = free_port()
    env = {k: v for k, v in os.environ.items()
           if k not in ("REDIS_URL", "MIGHTY_LOG_LEVEL", "MIGHTY_LOG_FORMAT")}  # make run's defaults
    env["MIGHTY_SUMMARY_S"] = str(SUMMARY_S)
    log_path = tmp_path / "serve.log"
    log = open(log_path, "wb")  # noqa: SIM115 - closed below
    cluster = ["--cluster"] if CLUSTER else []
    # its own process group, as a shell starts a job: a terminal's Ctrl-C goes to that group
    process = subprocess.Popen([sys.executable, "-m", "services.cli", "serve", "--port", str(port), *cluster],
                               stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env, cwd=tmp_path,
                               process_group=0)
    served = Served(process, f"http://127.0.0.1:{port}", log_path)
    try:
        yield served
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        for pid in served.children:  # in sessions of their own: a test that failed leaves none
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        log.close()


def started(served: Served) -> list[int]:
    """Wait until the service answers ready (and serve said so) and every worker has taken
    its partitions and subscribed; the pids of serve's children then (the redis-servers among them)."""
    http = httpx.Client(base_url=served.url, timeout=5)

    def ready() -> bool:
        try:
            return http.get("/readyz").status_code == 200
        except httpx.TransportError:
            return False

    served.wait_for("/readyz answering 200", ready)

    def settled() -> bool:
        events = [(r.get("event"), r.get("kind")) for r in served.records()]
        said_ready = any(line.startswith("mighty serve: open ") for line in served.lines())
        return (said_ready and all(("partitions taken", kind) in events for kind in KINDS)
                and sum(1 for event, _ in events if event == "turn_listener_started") == 2)

    served.wait_for("every worker taking its partitions", settled)
    children = served.children = children_of(served.process.pid)
    assert any("redis-server" in command_of(pid) for pid in children), [command_of(p) for p in children]
    assert len(children) >= 7  # redis-server (or six), views, ledger, directory, bots, timers, gateway
    return children


def gone(pids: list[int], timeout_s: float = 20.0) -> list[str]:
    """The commands of those still running after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and any(alive(pid) for pid in pids):
        time.sleep(0.1)
    return [command_of(pid) for pid in pids if alive(pid)]


@pytest.mark.timeout(420)  # the start (up to 3 min on a loaded machine), the idle minute, the stop
def test_an_idle_service_writes_no_line_for_a_minute_and_ctrl_c_stops_it_with_no_warning(served: Served) -> None:
    children = started(served)
    idle_from = len(served.lines())
    time.sleep(QUIET_WINDOW_S)
    assert served.lines()[idle_from:] == []  # no routine line: no lag, no summary of nothing, no request

    os.killpg(served.process.pid, signal.SIGINT)  # what Ctrl-C at the terminal does
    assert served.process.wait(timeout=60) == 0, served.lines()[-20:]
    assert gone(children, timeout_s=5.0) == []  # serve waited for each of them

    lines = served.lines()
    records = served.records()  # every line whole: each one parses (no two interleaved)
    noisy = [r for r in records if r.get("level") in ("warning", "error", "critical")]
    assert noisy == []
    assert not [line for line in lines if "unreachable" in line]
    # every worker said goodbye, on a Redis still there (it releases its leases first)
    stopped = [r.get("kind") for r in records if r.get("event") == "worker stopped"]
    assert sorted(str(kind) for kind in stopped) == sorted(KINDS)
    assert lines[-1] == "mighty serve: stopped"


def test_a_sigterm_to_serve_alone_stops_every_child_and_redis(served: Served) -> None:
    children = started(served)
    served.process.send_signal(signal.SIGTERM)
    assert served.process.wait(timeout=60) == 0, served.lines()[-20:]
    assert gone(children, timeout_s=5.0) == []
    assert not [r for r in served.records() if r.get("level") in ("warning", "error", "critical")]


def test_when_serve_is_killed_its_children_and_redis_get_sigterm_and_end(served: Served) -> None:
    """SIGKILL gives serve no chance to stop anything: each child asked the kernel for a
    SIGTERM when its parent dies (services/sessions.py, Linux), and stops on it."""
    children = started(served)
    served.process.kill()
    served.process.wait()
    assert gone(children, timeout_s=30.0) == []
