"""The private redis-server: restart keeps the AOF and the port; SIGKILL is a crash."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from services.redis_runtime import PrivateRedis, redis_url_for_run
from services.store import connect

pytestmark = pytest.mark.integration


@pytest.mark.single_node
def test_restart_keeps_the_data_and_the_port(redis_server: PrivateRedis) -> None:
    client = connect(redis_server.url)
    client.set("k", "v")
    port, pid = redis_server.port, redis_server.pid
    redis_server.restart()
    assert (redis_server.port, redis_server.running()) == (port, True)
    assert redis_server.pid != pid
    assert client.get("k") == b"v"  # the same client reconnects


@pytest.mark.single_node
def test_sigkill_ends_the_process_at_once(redis_server: PrivateRedis) -> None:
    redis_server.kill(signal.SIGKILL)
    assert not redis_server.running()
    redis_server.start()
    assert connect(redis_server.url).ping()


def test_a_run_without_redis_url_gets_a_private_server_removed_afterwards(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("REDIS_URL", raising=False)
    with contextlib.ExitStack() as stack:
        url = redis_url_for_run(stack)
        client = connect(url, retries=0)
        config: Any = client.config_get("*")
        assert config["appendonly"] == "yes"
        workdir = Path(config["dir"])
        assert workdir.exists() and workdir.name.startswith("mighty-redis-")
        assert not url.endswith(":6379/0")
    assert not workdir.exists()
    assert os.environ.get("REDIS_URL") is None
