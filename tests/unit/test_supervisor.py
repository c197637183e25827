"""services/supervisor.py: a part that exits starts again after a backoff that doubles up
to its cap and starts over once the part has run a while; before the service is ready a
part that keeps failing stops it, after that it is retried for ever; one warning a restart."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from typing import cast

import pytest
from structlog.testing import capture_logs

from services.supervisor import Backoff, Part, Supervisor


@dataclass
class FakeProcess:
    pid: int
    code: int | None = None
    signals: list[str] = field(default_factory=list)

    def poll(self) -> int | None:
        return self.code

    def terminate(self) -> None:
        self.signals.append("TERM")
        self.code = -15

    def kill(self) -> None:
        self.signals.append("KILL")
        self.code = -9

    def wait(self, timeout: float | None = None) -> int:
        assert self.code is not None
        return self.code


@dataclass
class World:
    now: float = 0.0
    started: list[tuple[str, FakeProcess]] = field(default_factory=list)

    def spawn(self, argv: list[str]) -> subprocess.Popen[bytes]:
        process = FakeProcess(pid=100 + len(self.started))
        self.started.append((argv[0], process))
        return cast("subprocess.Popen[bytes]", process)

    def clock(self) -> float:
        return self.now

    def latest(self, name: str) -> FakeProcess:
        return [p for n, p in self.started if n == name][-1]

    def starts(self, name: str) -> int:
        return sum(1 for n, _ in self.started if n == name)


def supervised(world: World, *names: str, backoff: Backoff | None = None) -> Supervisor:
    supervisor = Supervisor([Part(n, [n]) for n in names], world.spawn, backoff or Backoff(), clock=world.clock)
    supervisor.start()
    return supervisor


def test_the_backoff_doubles_from_half_a_second_up_to_thirty() -> None:
    assert [Backoff().delay(n) for n in range(1, 10)] == [0.5, 1, 2, 4, 8, 16, 30, 30, 30]


def test_a_part_that_exits_starts_again_after_its_delay_and_the_others_are_left_alone() -> None:
    world = World()
    supervisor = supervised(world, "directory", "gateway")
    supervisor.ready = True
    gateway = world.latest("gateway")
    world.now = 20.0
    world.latest("directory").code = -9
    with capture_logs() as logs:
        assert supervisor.tend() is None
        world.now += 0.4
        supervisor.tend()
        assert world.starts("directory") == 1  # still waiting
        world.now += 0.1
        supervisor.tend()
    assert world.starts("directory") == 2 and world.latest("directory").code is None
    assert world.starts("gateway") == 1 and gateway.signals == []  # never stopped for a worker
    warnings = [line for line in logs if line["log_level"] == "warning"]
    assert warnings == [{"event": "part_restarting", "log_level": "warning", "part": "directory", "code": -9,
                         "restarts": 1, "ran_s": 20.0, "delay_s": 0.5}]
    assert supervisor.restarts() == {"directory": 1}


def test_a_part_failing_at_once_waits_longer_each_time_and_starts_over_after_running_a_while() -> None:
    world = World()
    supervisor = supervised(world, "views")
    supervisor.ready = True
    delays = []
    for _ in range(8):  # fails at once, eight times: never a busy loop
        world.latest("views").code = 1
        supervisor.tend()
        started = world.starts("views")
        exited_at = world.now
        while world.starts("views") == started:
            world.now += 0.25
            assert supervisor.tend() is None  # after ready: never given up
        delays.append(world.now - exited_at)
    assert delays == [0.5, 1, 2, 4, 8, 16, 30, 30]
    world.now += Backoff().stable_s  # this one runs a while, then dies
    world.latest("views").code = -9
    supervisor.tend()
    child = supervisor.children[0]
    assert child.due_at == world.now + 0.5


def test_before_the_service_is_ready_a_part_failing_five_times_in_a_row_stops_it() -> None:
    world = World()
    supervisor = supervised(world, "views", "gateway")
    failed = None
    with capture_logs() as logs:
        while failed is None:
            world.latest("gateway").code = 1  # e.g. its port is taken
            failed = supervisor.tend()
            world.now += 0.25
            assert world.now < 60
    assert failed.part.name == "gateway" and failed.last_code == 1 and failed.failures == 5
    assert world.starts("gateway") == 5 and world.starts("views") == 1
    assert len([line for line in logs if line["event"] == "part_restarting"]) == 4  # the fifth is the caller's


def test_stop_all_terminates_the_gateway_first_and_kills_what_outlives_the_grace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    world = World()
    supervisor = supervised(world, "views", "gateway")
    order: list[str] = []
    stubborn = world.latest("views")

    def ignore_term() -> None:
        order.append("views")

    def wait_views(timeout: float | None = None) -> int:
        if stubborn.code is None:
            raise subprocess.TimeoutExpired("views", timeout or 0)
        return stubborn.code

    gateway = world.latest("gateway")
    gateway_terminate = gateway.terminate

    def gateway_term() -> None:
        order.append("gateway")
        gateway_terminate()

    monkeypatch.setattr(stubborn, "terminate", ignore_term)
    monkeypatch.setattr(stubborn, "wait", wait_views)
    monkeypatch.setattr(gateway, "terminate", gateway_term)
    supervisor.stop_all(grace_s=0.0)
    assert order == ["gateway", "views"]
    assert stubborn.signals == ["KILL"] and gateway.signals == ["TERM"]


def test_stop_all_waits_for_the_gateway_to_end_before_it_stops_any_worker() -> None:
    world = World()
    supervisor = Supervisor([Part("views", ["views"]), Part("bots", ["bots"]), Part("gateway", ["gateway"], wave=0)],
                            world.spawn, Backoff(), clock=world.clock)
    supervisor.start()
    events: list[str] = []
    for name in ("views", "bots", "gateway"):
        process = world.latest(name)

        def terminate(process: FakeProcess = process, name: str = name) -> None:
            events.append(f"TERM {name}")
            process.code = -15

        def wait(timeout: float | None = None, process: FakeProcess = process, name: str = name) -> int:
            events.append(f"ended {name}")
            assert process.code is not None
            return process.code

        process.terminate = terminate  # type: ignore[method-assign]
        process.wait = wait  # type: ignore[method-assign]
    supervisor.stop_all(grace_s=1.0)
    assert events[:2] == ["TERM gateway", "ended gateway"]
    assert sorted(events[2:4]) == ["TERM bots", "TERM views"]  # then the workers, together
    assert sorted(events[4:]) == ["ended bots", "ended views"]
