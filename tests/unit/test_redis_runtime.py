"""redis_url_for_run: REDIS_URL first, then a private redis-server, then the embedded fake."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
import structlog

from services.redis_runtime import redis_url_for_run
from services.store import EMPTY_HEAD, RedisEventStore, connect


@pytest.fixture(autouse=True)
def plain_logging() -> None:
    """structlog's defaults: a CLI test run in this process may have pointed the global
    setup at a captured stream that pytest has closed since."""
    structlog.reset_defaults()


def test_redis_url_wins_when_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDIS_URL", "redis://example.invalid:1/0")
    with contextlib.ExitStack() as stack:
        assert redis_url_for_run(stack) == "redis://example.invalid:1/0"


def test_without_redis_server_an_embedded_redis_runs_the_store(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no redis-server to be found
    with contextlib.ExitStack() as stack:
        url = redis_url_for_run(stack)
        client = connect(url, retries=0)
        store = RedisEventStore(client)
        appended = store.append("t1", [b"a"], expected=EMPTY_HEAD, command_id="c1", outcome=b"o")
        assert appended.head.version == 1
        assert [e.data for e in store.read("t1")] == [b"a"]
        client.close()
    with pytest.raises(Exception):  # noqa: B017 - closed with the stack: refused, whatever the class
        connect(url, retries=0).ping()
