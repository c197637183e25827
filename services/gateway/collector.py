"""The gateway's periodic full garbage collection (docs/reliability.md, *Soak*).

The gateway tunes CPython's collector for throughput (``services/cli/gateway.py``,
``tune_gc``: the youngest generation every 10,000 allocations, the oldest after 100
collections of the middle one, and then only once the objects promoted into it since
the last full collection reach a quarter of those living there). A gateway's sockets,
their tasks, frames and exceptions leave reference cycles behind when they end; most
reach the oldest generation before they are found, and there they wait for a full
collection, which these thresholds make rare. Meanwhile the memory they hold is neither reused nor given back,
and the resident set grows. A full collection every ``MIGHTY_GC_EVERY_S`` (60 s; 0:
off) keeps that garbage to a minute's worth. What ``tune_gc`` froze at start is not
walked, so a run takes milliseconds (``mighty_gc_seconds`` on ``/metrics``).
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Callable

import structlog

log = structlog.get_logger("mighty.gateway")

SLOW_S = 0.25  # a collection this long is logged (a warning: the event loop stood still)


class Collector:
    """Runs a full collection every ``every_s`` (``run``); counts what it found and how
    long the collections took, for ``/metrics``."""

    def __init__(self, every_s: float, *, collect: Callable[[], int] = gc.collect,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.every_s = every_s
        self._collect = collect
        self._clock = clock
        self.runs = 0
        self.found = 0  # unreachable objects found, over every run
        self.seconds = 0.0  # spent collecting, over every run

    def collect_once(self) -> int:
        """One full collection now; the unreachable objects it found."""
        started = self._clock()
        found = self._collect()
        took = self._clock() - started
        self.runs += 1
        self.found += found
        self.seconds += took
        if took >= SLOW_S:
            log.warning("gc_slow", seconds=round(took, 3), found=found)
        return found

    async def run(self) -> None:
        """Collect every ``every_s`` until cancelled (returns at once when off: 0)."""
        if self.every_s <= 0:
            return
        while True:
            await asyncio.sleep(self.every_s)
            self.collect_once()
