"""bootstrap.check_durability: a Redis that fsyncs less often than the durability
profile asks is logged as such; one that does as asked (or more) is not."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from structlog.testing import capture_logs

from services.bootstrap import check_durability
from services.redis_runtime import PrivateRedis
from services.settings import Settings
from services.store import connect

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(("fsync", "wanted", "warned"), [
    ("everysec", "always", True),
    ("everysec", "everysec", False),
    ("always", "everysec", False),
    ("always", "always", False),
])
def test_a_redis_fsyncing_less_than_the_profile_is_warned_about(
        redis_factory: Callable[..., PrivateRedis], fsync: str, wanted: str, warned: bool) -> None:
    server = redis_factory(appendonly=True, appendfsync=fsync)
    client = connect(server.url)
    with capture_logs() as logs:
        assert check_durability(client, Settings(durability=wanted)) == fsync  # type: ignore[arg-type]
    assert any(e["event"] == "redis durability differs from the profile" for e in logs) is warned
    client.close()


def test_a_redis_without_aof_is_below_either_profile(redis_factory: Callable[..., PrivateRedis]) -> None:
    server = redis_factory(appendonly=False)
    client = connect(server.url)
    with capture_logs() as logs:
        assert check_durability(client, Settings()) == "no-aof"
    assert [e["wanted"] for e in logs] == ["everysec"]
    client.close()
