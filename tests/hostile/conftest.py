"""The hostile tier: each finding of the "open to strangers" review reproduced against the
service as it runs (``mighty serve``'s parts on a private redis-server, started the way
the drills start them: ``tests/drills/service.py``) and driven as a stranger would, over
HTTP and WebSocket.

``stranger_service(**settings)`` starts every part on settings changed as a test needs
(a quota, a floor) and waits until the gateway is ready; everything is stopped after the
test. ``service`` is the same with the defaults, one per module.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from services.redis_runtime import PrivateRedis, start_private_redis
from tests.drills.service import Service, drill_settings


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/hostile/" in str(item.path).replace("\\", "/"):
            item.add_marker(pytest.mark.integration)


class Running:
    """A started service: its parts, its Redis and its gateway's base URL."""

    def __init__(self, service: Service, redis: PrivateRedis) -> None:
        self.service = service
        self.redis = redis

    @property
    def base(self) -> str:
        return self.service.base()

    @property
    def ws(self) -> str:
        return self.base.replace("http://", "ws://", 1)


def _start(directory: Path, **changes: object) -> tuple[Running, Callable[[], None]]:
    if shutil.which("redis-server") is None:
        pytest.fail("redis-server is not on the PATH: install it (make redis-server)")
    redis = start_private_redis(directory / "redis", appendfsync="everysec")
    service = Service(directory / "parts", drill_settings(redis.url, **changes))
    try:
        service.start_every_part()
        service.wait_leases(("views", "ledger", "directory"))
    except BaseException:
        service.stop()
        redis.stop()
        raise

    def stop() -> None:
        service.stop()
        redis.stop()

    return Running(service, redis), stop


@pytest.fixture
def stranger_service(tmp_path: Path) -> Iterator[Callable[..., Running]]:
    """Start the whole service on settings changed by keyword (``Settings`` fields)."""
    stops: list[Callable[[], None]] = []

    def start(**changes: object) -> Running:
        running, stop = _start(tmp_path / f"service-{len(stops)}", **changes)
        stops.append(stop)
        return running

    try:
        yield start
    finally:
        for stop in stops:
            stop()


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    """The whole service on the default settings (but the drills' loose rate limit), shared
    by a module's tests."""
    running, stop = _start(tmp_path_factory.mktemp("hostile"))
    try:
        yield running
    finally:
        stop()
