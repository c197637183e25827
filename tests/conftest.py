"""Suite-wide fixtures."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from services.redis_cluster import LocalCluster, start_local_cluster


@pytest.fixture(autouse=True)
def _fresh_structlog() -> Iterator[None]:
    """A test that runs the CLI in-process points structlog at pytest's captured stderr,
    which pytest closes afterwards; start every test from structlog's defaults."""
    structlog.reset_defaults()
    yield
    structlog.reset_defaults()


@pytest.fixture(autouse=True)
def _no_deployment_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's REDIS_URL or MIGHTY_* variables must not point a test (or the CLI
    processes it starts, which inherit the environment) at their store."""
    from services.settings import ENVIRONMENT

    for variable in ENVIRONMENT.values():
        monkeypatch.delenv(variable, raising=False)


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    """A local Redis Cluster of the test's own (services/redis_cluster.py: six nodes in
    its temp dir), stopped after it (a node the test left stopped is continued first)."""
    started = start_local_cluster(tmp_path / "cluster")
    try:
        yield started
    finally:
        started.stop()
