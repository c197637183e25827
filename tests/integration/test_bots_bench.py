"""`mighty bench bots --tables` runs end to end: tables of bots played by one, then two,
bot worker processes; one JSON object with each run's figures (nothing asserted of the
times: benchmarks are not timed in tests)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from services.redis_runtime import PrivateRedis

pytestmark = pytest.mark.integration


def test_the_bots_bench_plays_every_table_with_one_then_two_workers_and_prints_its_figures(
    redis_server: PrivateRedis,
) -> None:
    argv = ["bench", "bots", "--json", "--tables", "4", "--level", "beginner", "--workers", "1,2"]
    done = subprocess.run([sys.executable, "-m", "services.cli", *argv],
                          env={**os.environ, "REDIS_URL": redis_server.url},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert [run["workers"] for run in report["runs"]] == [1, 2]
    for run in report["runs"]:
        assert run["hands"] == 4 and run["moves"] > 4 * 40  # a hand of mighty-5 is some 60 moves
        assert run["seconds"] > 0 and run["hands_per_s"] > 0
        workers = {f"bots-{n}" for n in range(run["workers"])}
        assert set(run["cpu_s"]) - {"redis"} == {"views", "bench"} | workers  # Redis's unless a cluster
        assert all(run["cpu_s"][w] > 0 for w in workers), run["cpu_s"]  # each worker played its tables
    assert report["ratio"] == pytest.approx(
        report["median_hands_per_s"]["2"] / report["median_hands_per_s"]["1"], abs=0.01)
