"""`mighty bench load` runs end to end: tables played by guests in several client
processes through the gateways, one JSON object with the figures and every process's
CPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from services.redis_runtime import PrivateRedis

pytestmark = pytest.mark.integration


def test_the_load_bench_plays_tables_from_two_client_processes_and_prints_its_figures(
    redis_server: PrivateRedis,
) -> None:
    argv = ["--json", "--tables", "3", "--gateways", "2", "--clients", "2", "--seconds", "4"]
    done = subprocess.run(
        [sys.executable, "-m", "bench.load", *argv],
        env={**os.environ, "REDIS_URL": redis_server.url},
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(done.stdout)
    assert figures["errors"] == 0, figures["errors_by"]
    assert figures["commands"] > 0 and figures["commands_per_s"] > 0
    assert figures["clients"] == 2 and figures["tables"] == 3
    assert figures["p50_ms"] <= figures["p99_ms"]
    every = {"views", "directory", "gateway0", "gateway1", "redis", "client", "total"}
    if "+cluster://" in redis_server.url:  # every node's, and the primaries' and replicas' apart
        every |= {"redis_primaries", "redis_replicas"}
        assert figures["cpu_s"]["redis"] == pytest.approx(
            figures["cpu_s"]["redis_primaries"] + figures["cpu_s"]["redis_replicas"], abs=0.05)
    assert set(figures["cpu_s"]) == every
    assert all(seconds > 0 for seconds in figures["cpu_s"].values()), figures["cpu_s"]
    assert figures["cpu_s"]["total"] == pytest.approx(  # each process once
        sum(v for k, v in figures["cpu_s"].items() if k in every - {"total", "redis_primaries", "redis_replicas"}),
        abs=0.05)
    assert set(figures["run_queue_s"]) == every
