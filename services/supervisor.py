"""Supervision: the parts of ``mighty serve`` kept running, each its own process.

A part that exits while the service runs is started again after a backoff (``Backoff``:
0.5 s, doubling up to 30 s; a part that had run ``stable_s`` before it died starts again
after the first delay), with one warning line each time (``part_restarting``: the part,
its exit code, the restart count and the delay). The gateway is never stopped for a
worker, nor a worker for the gateway: one part's death concerns that part only.

One exception, so that a mistake is said rather than retried for ever: while the service
has not yet become ready, a part that exits ``give_up_after`` times in a row without ever
running ``stable_s`` (a bad setting, a port in use) stops ``mighty serve`` with the part's
name and exit code. Once the service has been ready, a part is retried for ever at the
capped delay, as systemd's ``Restart=always`` does: a worker that cannot reach Redis for
an hour comes back by itself when Redis does, and costs one start every 30 s meanwhile.

Only SIGINT, SIGTERM or SIGHUP stop the service (``stop_all``), in waves: the gateway
first (``Part.wave`` 0: no command is taken once the workers stop), waited for, then every
worker at once; a part still running after the grace period is killed. The caller stops
the Redis they use after that (``services/serve.py``).
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

import structlog

log = structlog.get_logger("mighty.serve")

STOP_S: Final = 10.0  # the grace period of a part sent SIGTERM


@dataclass(frozen=True)
class Part:
    """A process of the service: its name, command line, and the wave it stops in (the
    lower first: the gateway 0, before the workers that serve it)."""

    name: str
    argv: list[str]
    wave: int = 1


@dataclass(frozen=True)
class Backoff:
    """How long a part that exited waits before it starts again."""

    first_s: float = 0.5
    max_s: float = 30.0
    stable_s: float = 10.0  # a part that ran this long before it exited starts from first_s again
    give_up_after: int = 5  # exits in a row, none after stable_s, before the service was ready

    def delay(self, failures: int) -> float:
        """The wait after the ``failures``-th exit in a row (1, 2, ...)."""
        return min(self.first_s * 2.0 ** max(failures - 1, 0), self.max_s)


Spawn = Callable[[list[str]], "subprocess.Popen[bytes]"]


@dataclass
class Child:
    """One part and its current process (None while it waits to start again)."""

    part: Part
    process: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    restarts: int = 0  # how often it was started again
    failures: int = 0  # exits in a row, none after running ``stable_s``
    last_code: int | None = None
    due_at: float | None = None  # when it starts again, while it waits

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None


@dataclass
class Supervisor:
    """Starts ``parts`` with ``spawn``, and ``tend`` (called often) starts again each one
    that exited. ``clock``: monotonic seconds (a test gives its own)."""

    parts: Sequence[Part]
    spawn: Spawn
    backoff: Backoff = field(default_factory=Backoff)
    clock: Callable[[], float] = time.monotonic
    children: list[Child] = field(default_factory=list)
    ready: bool = False  # set once the service answered ready: from then on, never give up

    def start(self) -> None:
        for part in self.parts:
            child = Child(part)
            self._launch(child)
            self.children.append(child)

    def tend(self) -> Child | None:
        """Notice every part that exited and start again every part whose delay is over.
        Returns a part that failed to start ``give_up_after`` times in a row before the
        service was ready (the caller stops the service), else None."""
        now = self.clock()
        for child in self.children:
            if child.process is not None and (code := child.process.poll()) is not None:
                self._exited(child, code, now)
                if not self.ready and child.failures >= self.backoff.give_up_after:
                    return child
            if child.process is None and child.due_at is not None and now >= child.due_at:
                child.restarts += 1
                self._launch(child)
        return None

    def restarts(self) -> Mapping[str, int]:
        return {child.part.name: child.restarts for child in self.children if child.restarts}

    def stop_all(self, grace_s: float = STOP_S) -> None:
        """Wave by wave (``Part.wave``, the lowest first: the gateway), SIGTERM to every
        running part of the wave, the last started first, then SIGKILL to any still
        running after ``grace_s``; the next wave once every part of this one has ended."""
        running = [(child.part, child.process) for child in self.children if child.process is not None]
        for wave in sorted({part.wave for part, _ in running}):
            self._stop([(part, process) for part, process in running if part.wave == wave], grace_s)

    def _stop(self, running: list[tuple[Part, subprocess.Popen[bytes]]], grace_s: float) -> None:
        for _, process in reversed(running):
            if process.poll() is None:
                process.terminate()
        deadline = time.monotonic() + grace_s
        for part, process in running:
            try:
                process.wait(timeout=max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                log.warning("part_killed", part=part.name, pid=process.pid)
                process.kill()
                process.wait()

    def _launch(self, child: Child) -> None:
        child.process = self.spawn(child.part.argv)
        child.started_at = self.clock()
        child.due_at = None
        log.info("part_started", part=child.part.name, pid=child.process.pid, restarts=child.restarts)

    def _exited(self, child: Child, code: int, now: float) -> None:
        ran_s = now - child.started_at
        child.failures = 1 if ran_s >= self.backoff.stable_s else child.failures + 1
        child.last_code = code
        child.process = None
        delay = self.backoff.delay(child.failures)
        child.due_at = now + delay
        if not self.ready and child.failures >= self.backoff.give_up_after:
            return  # the caller says why it stops
        log.warning("part_restarting", part=child.part.name, code=code, restarts=child.restarts + 1,
                    ran_s=round(ran_s, 3), delay_s=delay)
