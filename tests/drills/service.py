"""The service's processes for a drill, started the way ``mighty serve`` starts them.

``services.serve.parts(settings)`` gives each part's command line and
``Settings.as_env()`` its environment, as ``run_serve`` uses them; a drill starts the
parts it needs (a second gateway is the same part on another port), kills them with the
signal it likes, and starts them again. Every part writes its log to a file of its own in
the drill's directory, shown when a drill fails.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import msgspec

from projections import KINDS
from services.bootstrap import Wiring, wire
from services.projection.keys import ProjectionKeys
from services.redis_runtime import free_port
from services.serve import Part, parts
from services.settings import Settings
from services.store import connect
from services.store.keys import KeySpace

NAMESPACE = "drill"
# every part ``mighty serve`` starts, the gateway last (services/serve.py, ``parts``)
EVERY_PART = (*KINDS, "bots", "timers", "gateway")


def drill_settings(redis_url: str, **changes: object) -> Settings:
    """The settings every part of a drill runs on: a private Redis, no rate limit in the
    way of a few clients playing fast, a readiness lag loose enough for a busy machine."""
    base = Settings(redis_url=redis_url, namespace=NAMESPACE, namespace_chosen=True, log_format="json",
                    log_level="info", rate_commands=100_000, max_lag_s=30.0,
                    # many players and tables from one address (127.0.0.1): quotas out of the way
                    players_per_address=1_000_000, tables_per_address=1_000_000, tables_per_player=1_000_000,
                    quickplays_per_address=1_000_000, quickplays_per_player=1_000_000,
                    seats_per_player=1_000_000)
    return msgspec.structs.replace(base, **changes)


class Service:
    """Parts of the service, by name (``views``, ``gateway``, ``gateway-b``, ``archive``...)."""

    def __init__(self, directory: Path, settings: Settings) -> None:
        self.directory = directory
        self.settings = settings
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self.ports: dict[str, int] = {}
        directory.mkdir(parents=True, exist_ok=True)

    # ---------------------------------------------------------------- starting and killing

    def part(self, kind: str, port: int | None = None) -> Part:
        settings = self.settings if port is None else msgspec.structs.replace(self.settings, port=port)
        for found in parts(settings):
            if found.name == kind:
                return found
        raise KeyError(f"mighty serve starts no part {kind!r} on these settings")

    def start(self, name: str, *, kind: str | None = None, extra: Iterable[str] = ()) -> subprocess.Popen[bytes]:
        """Start part ``kind`` (default: ``name``) as ``name``; a gateway gets a free port
        (kept across restarts of the same name)."""
        kind = kind or name
        port = None
        if kind == "gateway":
            port = self.ports.setdefault(name, free_port())
        part = self.part(kind, port)
        env = {**os.environ, **msgspec.structs.replace(self.settings, port=port or self.settings.port).as_env()}
        with open(self.directory / f"{name}.log", "ab") as log:
            process = subprocess.Popen([*part.argv, *extra], stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                       env=env)
        self.processes[name] = process
        return process

    def start_every_part(self) -> None:
        """Start every part ``mighty serve`` starts and wait for the gateway to be ready."""
        for name in EVERY_PART:
            self.start(name)
        self.wait_gateway()

    def kill(self, name: str, sig: int = signal.SIGKILL) -> None:
        process = self.processes[name]
        if process.poll() is None:
            process.send_signal(sig)
            process.wait(timeout=15)

    def exited(self) -> dict[str, int]:
        """The parts that are not running any more (and were not killed by the drill)."""
        return {name: code for name, p in self.processes.items() if (code := p.poll()) is not None}

    def stop(self) -> None:
        for process in reversed(list(self.processes.values())):  # the gateways first, as serve does
            if process.poll() is None:
                process.terminate()
        for process in self.processes.values():
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def logs(self, lines: int = 30) -> str:
        out = []
        for path in sorted(self.directory.glob("*.log")):
            tail = path.read_text(errors="replace").splitlines()[-lines:]
            out.append(f"--- {path.name}\n" + "\n".join(tail))
        return "\n".join(out)

    # ---------------------------------------------------------------- waiting

    def base(self, name: str = "gateway") -> str:
        return f"http://127.0.0.1:{self.ports[name]}"

    def wait_gateway(self, name: str = "gateway", timeout_s: float = 60.0) -> None:
        """Until the gateway's ``/readyz`` answers 200 (``run_serve`` waits the same way)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            assert self.processes[name].poll() is None, f"{name} exited:\n{self.logs()}"
            try:
                if httpx.get(self.base(name) + "/readyz", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"{name} never became ready:\n{self.logs()}")

    def wait_leases(self, kinds: Iterable[str], timeout_s: float = 60.0) -> None:
        """Until a worker of each projection kind holds every partition's lease."""
        space = self.space
        leases = [ProjectionKeys(space, k).lease(p) for k in kinds for p in range(space.partitions)]
        client = connect(self.settings.redis_url or "", retries=0)
        try:
            deadline = time.monotonic() + timeout_s
            while client.exists(*leases) != len(leases):
                assert time.monotonic() < deadline, f"the workers never took their partitions:\n{self.logs()}"
                assert not self.exited(), f"a part exited: {self.exited()}\n{self.logs()}"
                time.sleep(0.05)
        finally:
            client.close()

    @property
    def space(self) -> KeySpace:
        return KeySpace(self.settings.partitions, namespace=self.settings.namespace)

    def mighty(self, *argv: str, timeout_s: float = 60.0) -> subprocess.CompletedProcess[str]:
        """A ``mighty`` command on this service's store (``verify``, ``projections check``)."""
        import sys

        env = {**os.environ, **self.settings.as_env()}
        return subprocess.run([sys.executable, "-m", "services.cli", *argv], capture_output=True, text=True,
                              env=env, timeout=timeout_s, stdin=subprocess.DEVNULL)


@contextmanager
def running_service(directory: Path, settings: Settings) -> Iterator[Service]:
    """The whole service on ``settings``, every part started and the gateway ready;
    stopped on the way out."""
    service = Service(directory, settings)
    try:
        service.start_every_part()
        yield service
    finally:
        service.stop()


@contextmanager
def wired_to(service: Service) -> Iterator[Wiring]:
    """The service's store, projections and lobby as one process of its own wires them."""
    wired = wire(connect(service.settings.redis_url or ""), service.settings)
    try:
        yield wired
    finally:
        wired.close()
