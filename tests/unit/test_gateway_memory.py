"""The gateway's memory aids (docs/reliability.md, *Soak*): the periodic full collection
(services/gateway/collector.py) frees cyclic garbage CPython's own collections left in
the oldest generation; the tracemalloc report (services/memory_trace.py) names
where memory grew; both are settings, and /metrics shows the collector and the cache."""

from __future__ import annotations

import asyncio
import gc
import sys
import threading
import time
import tracemalloc
import weakref
from collections.abc import Iterator

import pytest

from services.gateway.collector import Collector
from services.memory_trace import MemoryTrace
from services.settings import SettingsError, settings_from
from tests.unit.gateway_helpers import gateway


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


@pytest.fixture
def no_automatic_gc() -> Iterator[None]:
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def test_a_run_of_the_collector_frees_cyclic_garbage_and_counts_it(no_automatic_gc: None) -> None:
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    gone = weakref.ref(a)
    del a, b
    assert gone() is not None  # a cycle: only a collection frees it
    collector = Collector(60)
    assert collector.collect_once() >= 2
    assert gone() is None
    assert collector.runs == 1 and collector.found >= 2 and collector.seconds >= 0


def test_the_collector_runs_every_interval_and_not_at_all_when_off() -> None:
    runs: list[int] = []

    async def for_a_while(collector: Collector) -> None:
        task = asyncio.create_task(collector.run())
        await asyncio.sleep(0.2)
        assert task.done() is (collector.every_s == 0)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    on = Collector(0.02, collect=lambda: runs.append(1) or 0)
    asyncio.run(for_a_while(on))
    assert 3 <= on.runs == len(runs)
    off = Collector(0, collect=lambda: runs.append(1) or 0)
    asyncio.run(for_a_while(off))
    assert off.runs == 0


def test_the_memory_trace_names_the_line_whose_allocations_grew() -> None:
    trace = MemoryTrace(top=3)
    trace.start()
    try:
        assert trace.report() == []  # the first is the baseline
        line = sys._getframe().f_lineno + 1
        kept = [bytearray(1000) for _ in range(2000)]  # ~2 MB from this line
        grown = trace.report()
        assert grown[0]["kb"] > 1500 and grown[0]["count"] >= 2000
        assert grown[0]["where"][0].endswith(f"test_gateway_memory.py:{line}"), grown[0]
        assert len(kept) == 2000
    finally:
        trace.stop()
    assert not tracemalloc.is_tracing()


def test_a_workers_memory_trace_reports_on_its_thread_until_stopped(capsys: pytest.CaptureFixture[str]) -> None:
    stop = threading.Event()
    thread = MemoryTrace(top=3).in_thread(0.05, stop)
    out = ""
    try:
        assert tracemalloc.is_tracing()
        deadline = time.monotonic() + 10  # a report every 0.05 s; a loaded machine is slower
        while out.count("memory_growth") < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
            out += capsys.readouterr().out
    finally:
        stop.set()
        thread.join(5)
    assert not thread.is_alive() and not tracemalloc.is_tracing()
    assert out.count("memory_growth") >= 2


def test_the_memory_settings_take_zero_for_off_and_refuse_the_rest() -> None:
    assert settings_from(None, environ={}).gc_every_s == 60 and settings_from(None, environ={}).debug_tracemalloc_s == 0
    read = settings_from(None, environ={"MIGHTY_GC_EVERY_S": "0", "MIGHTY_DEBUG_TRACEMALLOC_S": "30"})
    assert (read.gc_every_s, read.debug_tracemalloc_s) == (0, 30)
    for variable in ("MIGHTY_GC_EVERY_S", "MIGHTY_DEBUG_TRACEMALLOC_S"):
        for bad in ("-1", "inf", "nan", "soon"):
            with pytest.raises(SettingsError, match=variable):
                settings_from(None, environ={variable: bad})


def test_metrics_show_the_collector_and_the_command_paths_cache() -> None:
    with gateway(gc_every_s=0.05) as client:
        made = client.post("/api/v1/players", json={"name": "Ana"})
        token = made.json()["token"]
        created = client.post("/api/v1/tables", json={"game": "mighty-5", "seat": 0},
                              headers={"Authorization": f"Bearer {token}"})
        assert created.status_code == 201, created.text
        time.sleep(0.2)  # the app runs in the client's own thread: its collector too
        lines = dict(line.rsplit(" ", 1) for line in client.get("/metrics").text.splitlines()
                     if line and not line.startswith("#"))
    assert float(lines["mighty_gc_runs"]) >= 1
    assert float(lines['mighty_cached_tables{kind="in_play"}']) == 1
    assert float(lines['mighty_cached_tables{kind="closed"}']) == 0
