"""Integration fixtures: a fresh private redis-server per test, never the shared one.

Each server runs on a free port of 127.0.0.1 in the test's temp dir and is stopped after
the test. A machine without redis-server fails these tests (CI installs it): they must
not silently turn into skips.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
import structlog

from services.redis_runtime import PrivateRedis, start_private_redis
from services.store import connect
from tests.integration.postgres import archive_url, postgres_server  # noqa: F401 (the archive's fixtures)


@pytest.fixture(autouse=True)
def plain_logging() -> None:
    """structlog's defaults: a CLI test run in this process may have pointed the global
    setup at a captured stream that pytest has closed since."""
    structlog.reset_defaults()


def _require_redis_server() -> None:
    if shutil.which("redis-server") is None:
        pytest.fail("redis-server is not on the PATH: install it (make redis-server)")


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[PrivateRedis]:
    _require_redis_server()
    server = start_private_redis(tmp_path / "redis", appendonly=True, appendfsync="everysec")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def redis_client(redis_server: PrivateRedis) -> Iterator[redis.Redis]:
    client = connect(redis_server.url)
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def redis_factory(tmp_path: Path) -> Iterator[Callable[..., PrivateRedis]]:
    """Start private servers with other settings (``appendfsync="always"``); all stopped after."""
    _require_redis_server()
    started: list[PrivateRedis] = []

    def start(**options: object) -> PrivateRedis:
        server = start_private_redis(tmp_path / f"redis-{len(started)}", **options)  # type: ignore[arg-type]
        started.append(server)
        return server

    try:
        yield start
    finally:
        for server in started:
            server.stop()

