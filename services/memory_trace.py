"""A debugging aid, off by default: a process's allocations that grew most, logged
every ``MIGHTY_DEBUG_TRACEMALLOC_S`` seconds (docs/reliability.md, *Soak*): the gateway's
on its event loop (``run``), a worker's on a thread of its own (``in_thread``).

When on, ``tracemalloc`` traces every allocation with ``FRAMES`` frames of its traceback
(it costs memory, about a third more, and time); the first report is the baseline, and
each report after it logs one ``memory_growth`` line: the ``TOP`` tracebacks whose
allocated size grew most since the baseline (after a full collection, so that garbage
waiting for one does not count), the total traced, and the garbage collector's counts
and collections per generation (the reports' own full collections among them).
"""

from __future__ import annotations

import asyncio
import gc
import linecache
import threading
import tracemalloc
from typing import Any, Final

import structlog

log = structlog.get_logger("mighty.memory")

FRAMES: Final = 8  # frames kept per allocation
TOP: Final = 15  # tracebacks per report
SHOWN_FRAMES: Final = 4  # of each, the innermost shown (innermost first)


class MemoryTrace:
    """Snapshots of the traced allocations; ``report`` compares the latest with the first."""

    def __init__(self, top: int = TOP) -> None:
        self.top = top
        self._baseline: tracemalloc.Snapshot | None = None

    def start(self) -> None:
        if not tracemalloc.is_tracing():
            tracemalloc.start(FRAMES)

    def stop(self) -> None:
        tracemalloc.stop()
        self._baseline = None

    def report(self) -> list[dict[str, Any]]:
        """The tracebacks that grew most since the first report (none at the first)."""
        gc.collect()
        snapshot = _snapshot()
        if self._baseline is None:
            self._baseline = snapshot
            return []
        stats = snapshot.compare_to(self._baseline, "traceback")
        return [{"kb": round(stat.size_diff / 1024, 1), "count": stat.count_diff,
                 "where": [_frame(frame) for frame in reversed(list(stat.traceback)[-SHOWN_FRAMES:])]}
                for stat in stats[:self.top]]

    def log_growth(self) -> None:
        """One ``memory_growth`` line: ``report`` and the totals beside it."""
        grown = self.report()
        traced, peak = tracemalloc.get_traced_memory()
        log.info("memory_growth", traced_mb=round(traced / 2**20, 2), peak_mb=round(peak / 2**20, 2),
                 gc_counts=list(gc.get_count()), gc_objects=len(gc.get_objects()),
                 gc_collections=[generation["collections"] for generation in gc.get_stats()], top=grown)

    async def run(self, every_s: float) -> None:
        """Report every ``every_s`` until cancelled, then stop tracing."""
        self.start()
        try:
            while True:
                self.log_growth()
                await asyncio.sleep(every_s)
        finally:
            self.stop()

    def in_thread(self, every_s: float, stop: threading.Event) -> threading.Thread:
        """Report every ``every_s`` on a daemon thread until ``stop`` is set (a worker's
        loop is not asyncio's: a thread reports beside it, taking the GIL as any would)."""
        self.start()

        def loop() -> None:
            try:
                while not stop.is_set():
                    self.log_growth()
                    stop.wait(every_s)
            finally:
                self.stop()

        thread = threading.Thread(target=loop, name="memory-trace", daemon=True)
        thread.start()
        return thread


def _snapshot() -> tracemalloc.Snapshot:
    return tracemalloc.take_snapshot().filter_traces((
        tracemalloc.Filter(False, tracemalloc.__file__),
        tracemalloc.Filter(False, linecache.__file__),
        tracemalloc.Filter(False, "<frozen importlib._bootstrap>"),
    ))


def _frame(frame: tracemalloc.Frame) -> str:
    return f"{frame.filename.rsplit('site-packages/', 1)[-1]}:{frame.lineno}"
