"""`mighty bench store` runs end to end and leaves nothing behind in the Redis it used."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import redis

from services.redis_runtime import PrivateRedis

pytestmark = pytest.mark.integration


def test_the_store_bench_prints_one_json_object_and_cleans_up(
    redis_server: PrivateRedis, redis_client: redis.Redis
) -> None:
    redis_client.set("someone-elses-key", "keep me")
    argv = ["--json", "--tables", "4", "--commands", "200", "--concurrency", "2", "--rounds", "2"]
    # A process of its own: the bench configures structlog for the whole process.
    done = subprocess.run(
        [sys.executable, "-m", "bench.store", *argv],
        env={**os.environ, "REDIS_URL": redis_server.url},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)
    for name in ("commands_per_s", "raw_append_per_s", "ratio", "p50_ms", "p99_ms"):
        assert figures[name] > 0, name
    assert figures["commands"] == figures["raw_appends"] == 200
    assert figures["ratio"] == pytest.approx(
        figures["commands_per_s"] / figures["raw_append_per_s"], rel=0.01
    )
    assert figures["redis"] == "REDIS_URL"
    assert redis_client.keys("*") == [b"someone-elses-key"]


def test_the_async_store_bench_prints_one_json_object_and_cleans_up(
    redis_server: PrivateRedis, redis_client: redis.Redis
) -> None:
    redis_client.set("someone-elses-key", "keep me")
    argv = ["--json", "--async", "--tables", "20", "--commands", "400", "--rounds", "2"]
    done = subprocess.run(
        [sys.executable, "-m", "bench.store", *argv],
        env={**os.environ, "REDIS_URL": redis_server.url},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)
    for name in ("async_commands_per_s", "raw_append_per_s", "async_ratio", "p50_ms",
                 "client_cpu_us_per_command", "server_cpu_us_per_command"):
        assert figures[name] > 0, name
    assert figures["commands"] == figures["raw_appends"] == 400
    assert figures["tables"] == 20
    assert figures["async_ratio"] == pytest.approx(
        figures["async_commands_per_s"] / figures["raw_append_per_s"], rel=0.01
    )
    assert redis_client.keys("*") == [b"someone-elses-key"]
