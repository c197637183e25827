"""Fault drills (marker ``drill``): the service's real processes, started as ``mighty
serve`` starts them (``tests/drills/service.py``), on a private redis-server (and a
private PostgreSQL) of each drill's own, played by clients of the public API
(``tests/drills/players.py``); a part is killed, stopped or cut off, and the drill checks
what the service did. docs/reliability.md says what each drill found.

Each drill has a hard timeout (pytest-timeout) and its own deadlines. What a drill
measures (the time to recover, commands lost) is recorded with the ``figures`` fixture and
printed at the end of the run, one JSON line per drill; no drill asserts on a time.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from services.redis_runtime import PrivateRedis, profile_config, start_private_redis

_FIGURES: list[dict[str, Any]] = []


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.drill)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _FIGURES:
        terminalreporter.section("drill figures")
        for line in _FIGURES:
            terminalreporter.write_line(json.dumps(line))


@pytest.fixture
def figures(request: pytest.FixtureRequest) -> Callable[..., None]:
    """Record what this drill measured (printed at the end of the run)."""

    def record(**found: Any) -> None:
        _FIGURES.append({"drill": request.node.name, **found})

    return record


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[Callable[[str], PrivateRedis]]:
    """Start a redis-server of the drill's own on a durability profile's config
    (deploy/redis.conf or deploy/redis-always.conf); every one is stopped after the drill."""
    if shutil.which("redis-server") is None:
        pytest.fail("redis-server is not on the PATH: install it (make redis-server)")
    started: list[PrivateRedis] = []

    def start(durability: str = "everysec") -> PrivateRedis:
        server = start_private_redis(tmp_path / f"redis-{len(started)}", durability=durability,
                                     config_file=profile_config(durability))
        started.append(server)
        return server

    try:
        yield start
    finally:
        for server in started:
            server.stop()  # continued first if a drill failed while it was stopped
